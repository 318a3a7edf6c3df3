"""The house's structure (issue 29.3): no import cycle in the core, imports one way (pages → ui → core, the core
never the app's), and a command line that answers ``--help`` without the numerical libraries (issue 31.8).

The import graph is read from the source (``ast``): the imports a module runs when it is imported, not those
inside a function. Importing ``a.b.c`` runs the packages ``a`` and ``a.b`` first, except the importer's own
packages, which are already running; a ``from package import name`` that names no submodule needs the
package's ``__init__``. Run this file with Python to print the graph's cycles and each module's imports.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def modules(package: str) -> dict[str, tuple[Path, bool]]:
    """Dotted name → (file, is a package) for every module of ``package``."""
    out = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return out


def _run_on_import(tree: ast.Module):
    """The import statements a module runs when it is imported (none inside a def or under TYPE_CHECKING)."""
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        todo.extend(ast.iter_child_nodes(node))


def imported(name: str, path: Path, is_package: bool, mods: dict) -> set[str]:
    """What ``name``'s module imports when it is imported: dotted module names, of any package. A ``from m import
    x`` is ``m.x`` where that is a module of ``mods``, else ``m`` (x is defined by m's ``__init__``)."""
    here = name.split(".") if is_package else name.split(".")[:-1]
    out = set()
    for node in _run_on_import(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
            continue
        base = here[:len(here) - node.level + 1] if node.level else []
        module = ".".join(base + ([node.module] if node.module else []))
        for alias in node.names:
            out.add(f"{module}.{alias.name}" if f"{module}.{alias.name}" in mods else module)
    return out


def graph(package: str = "dpsynth_core") -> dict[str, set[str]]:
    """Module → the modules of ``package`` that importing it runs (module docstring)."""
    mods = modules(package)
    out = {}
    for name, (path, is_package) in mods.items():
        own = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}  # its packages, running
        deps = set()
        for target in imported(name, path, is_package, mods) & set(mods):
            parts = target.split(".")
            deps.update(a for a in (".".join(parts[:i]) for i in range(1, len(parts) + 1))
                        if a == target or a not in own)
        deps.discard(name)
        out[name] = deps
    return out


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(g[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return found


def test_a_cycle_is_found_where_there_is_one(tmp_path, monkeypatch):
    # The checker itself, on a made-up package: p.a imports p.b's package and p.b imports p.a.
    pkg = tmp_path / "p"
    (pkg / "b").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b.c import f\n")
    (pkg / "b" / "__init__.py").write_text("from . import c\n")
    (pkg / "b" / "c.py").write_text("def f():\n    from ..a import g\n")  # inside a def: no edge
    (pkg / "b" / "d.py").write_text("from .. import a\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    g = graph("p")
    assert g["p.a"] == {"p.b", "p.b.c"} and g["p.b"] == {"p.b.c"} and g["p.b.c"] == set() and g["p.b.d"] == {"p.a"}
    assert cycles(g) == []
    (pkg / "b" / "__init__.py").write_text("from . import c, d\n")  # now p.b runs p.b.d, which runs p.a
    assert cycles(graph("p")) == [["p.a", "p.b", "p.b.d"]]


def test_the_core_has_no_import_cycle():
    assert cycles(graph()) == []


def test_imports_run_one_way():
    """The core never imports the app (streamlit, ui, pages); ui never imports a page."""
    for package, banned in (("dpsynth_core", ("streamlit", "ui", "pages", "app")), ("ui", ("pages", "app"))):
        for name, (path, is_package) in modules(package).items():
            wrong = {n for n in imported(name, path, is_package, {}) if n.split(".")[0] in banned}
            assert not wrong, f"{name} imports {sorted(wrong)}"


@pytest.mark.integration  # a Python process a command
@pytest.mark.parametrize("command", [[], ["schema"], ["synthesize"], ["sweep"], ["release"], ["ledger"], ["cap"],
                                     ["methods"], ["audit"]])
def test_the_command_lines_help_loads_no_numerical_library(command):
    # `dpsynth --help` took 3.4 s (issue 31.8): the package imported numpy, pandas, scipy, scikit-learn and plotly
    # before the parser existed; each command's help took 1.5 s more while it listed the methods from the registry
    # (`dpsynth methods` lists them now). What it imports is listed by -X importtime (one line a module, on stderr).
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "dpsynth_core", *command, "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "usage: dpsynth" in proc.stdout
    loaded = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "dpsynth_core.cli" in loaded  # the listing is read right
    heavy = {"numpy", "pandas", "scipy", "sklearn", "plotly", "joblib"}
    assert not heavy & {m.split(".")[0] for m in loaded}



@pytest.mark.integration  # a fresh Python process
def test_the_apps_modules_find_the_whole_core_whichever_page_runs_first():
    # A fresh server runs the page a link names before app.py: pages/synthesize.py imported ui.audit first, whose
    # `core.privacy.audit` was no attribute yet of the lazily loaded package (an AttributeError on the page).
    proc = subprocess.run([sys.executable, "-c", "import ui.audit, dpsynth_core as c; print(c.privacy.audit.__name__)"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert (proc.returncode, proc.stdout) == (0, "dpsynth_core.privacy.audit\n"), proc.stderr


if __name__ == "__main__":
    g = graph()
    for component in cycles(g):
        print("cycle:", " ".join(component))
    for name in sorted(g):
        print(f"{name}: {len(g[name])} ({', '.join(sorted(g[name]))})")
