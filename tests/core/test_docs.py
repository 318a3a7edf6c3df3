"""The documentation inside the repository: every link it or the code makes resolves, and nothing points outside.

Anchors are computed as GitHub renders Markdown headings: lower case, every character but letters, digits,
spaces, hyphens and underscores dropped, spaces turned into hyphens.
"""

import re
import subprocess

import pytest

from tests.conftest import ROOT

TRACKED = [ROOT / p for p in subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                                            check=True).stdout.split()]
TEXT = [p for p in TRACKED if p.suffix in {".py", ".md", ".sh", ".ini", ".toml", ".txt"} and p.is_file()]


def anchors(markdown: str) -> set[str]:
    """The anchors of a Markdown file's headings (outside fenced code)."""
    found, fenced = set(), False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#{1,6} (.+)", line)):
            found.add(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-"))
    return found


def test_anchor_rule_matches_githubs_on_known_headings():
    assert anchors("## Risk-utility map\n### pegs, pegs_rs\n### Match rates (row-linked releases)\n"
                   "```\n# not a heading\n```\n") == {"risk-utility-map", "pegs-pegs_rs",
                                                      "match-rates-row-linked-releases"}


def test_every_reference_to_a_doc_section_names_a_heading_of_it():
    cited = {}
    for path in TEXT:
        for doc, anchor in re.findall(r"(docs/[\w./-]+\.md)#([\w-]+)", path.read_text(encoding="utf-8")):
            cited.setdefault(doc, set()).add((anchor, path.relative_to(ROOT).as_posix()))
    assert cited.get("docs/methods.md"), "the code cites docs/methods.md by section"
    for doc, refs in cited.items():
        headings = anchors((ROOT / doc).read_text(encoding="utf-8"))
        missing = sorted((a, where) for a, where in refs if a not in headings)
        assert not missing, f"{doc} has no heading for {missing}"


@pytest.mark.parametrize("doc", ["README.md", "docs/methods.md", "docs/guide.md", "bench/README.md"])
def test_relative_links_and_images_of_a_doc_exist(doc):
    path = ROOT / doc
    text = path.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        linked = (path.parent / file).resolve() if file else path
        assert linked.exists(), f"{doc} links to {target}, which does not exist"
        if anchor and linked.suffix == ".md":
            assert anchor in anchors(linked.read_text(encoding="utf-8")), f"{doc} links to {target}: no such heading"


def test_nothing_in_the_repository_points_outside_it():
    # The methods reference the project started from lived outside the repository; docs/methods.md replaces it.
    outside = re.compile(r"METHODS\.md|\.\./shared|/work/shared")
    hits = [p.relative_to(ROOT).as_posix() for p in TEXT if p.name != "test_docs.py"
            and outside.search(p.read_text(encoding="utf-8"))]
    assert not hits


def test_the_readme_is_short_and_starts_with_the_two_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(readme) <= 150
    head = "\n".join(readme[:12])
    assert "bash scripts/run.sh" in head and "bash scripts/test.sh" in head
