"""Compare what the method picker, the forecasts and the method suggestion say under this tree and under a git ref.

Run: .venv/bin/python scripts/compare_facts.py [--ref main]. Exports the ref's ``dpsynth_core`` with
``git archive`` into a temporary directory, runs the same questions under both packages in two fresh
interpreters, and prints every answer that differs (exit code 1) or "same answers" (exit code 0).

The questions: the order of the registry (the picker and the R-U map's list); ``core.suggest_method`` and
``core.forecast`` of every DP method registered under both, on the bundled diamonds and penguins schemas,
at ε in RU_EPSILONS' values (0.1, 0.3, 1, 3, 10), with n not declared, declared as the table's rows and
declared as 1,000, each forecast at its default options and at bins = 5 where the method has that option.
Only public facts are asked for; no synthesis runs. A refactoring that moves a method's facts must leave
every answer as it was.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EPSILONS = (0.1, 0.3, 1.0, 3.0, 10.0)


def answers() -> dict:
    """Every answer of the package importable as ``dpsynth_core`` (run in a fresh interpreter)."""
    import dpsynth_core as core

    out = {"order": list(core.SYNTHESIZERS)}
    for name in ("diamonds", "penguins"):
        df, schema = core.load_bundled(name)
        for eps in EPSILONS:
            for n in (None, len(df), 1000):
                s = core.suggest_method(schema, eps, n)
                out[f"{name} ε={eps:g} n={n} suggestion"] = None if s is None else [s.method, s.sentence]
                for method, synth in core.SYNTHESIZERS.items():
                    variants = [{}] + ([{"bins": 5}] if "bins" in synth.defaults else [])
                    for params in variants:
                        fc = core.forecast(method, schema, eps, n, **params)
                        out[f"{name} ε={eps:g} n={n} {method} {params}"] = None if fc is None else [fc.sentence,
                                                                                                   fc.level]
    return out


def _run(package_root: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(package_root)}
    code = f"import json, sys; sys.path.insert(0, {str(ROOT / 'scripts')!r}); import compare_facts; " \
           "print(json.dumps(compare_facts.answers()))"
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=package_root, capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ref", default="main", help="git ref to compare with (default main)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.ref, "dpsynth_core"], capture_output=True,
                                 check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
        (tmp / "data").symlink_to(ROOT / "data")  # the same bundled schemas for both
        before, after = _run(tmp), _run(ROOT)
    if before["order"] != after["order"]:
        print(f"order: {args.ref} {before['order']}\n       here {after['order']}")
    # a method registered on one side only (a new one, or one removed) has no answer to compare
    both = set(before["order"]) & set(after["order"])
    keys = [k for k in before if k != "order" and (k.endswith("suggestion") or k.split(" ")[3] in both)]
    differ = [k for k in keys if before[k] != after.get(k)]
    for k in differ:
        print(f"{k}\n  {args.ref}: {before[k]}\n  here: {after.get(k)}")
    same = not differ and before["order"] == after["order"]
    print(f"{'same answers' if same else f'{len(differ)} answers differ'} ({len(keys)} compared)")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
