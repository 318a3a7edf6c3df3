"""CONTRIBUTING.md's worked synthesizer, copied under a new name as a contributor would copy it: one file
and its import line (tests/contributing.py) make a method that passes the common checks and that the
picker, the forecast, the suggestion, the R-U map, the release and the CLI all know, with no other edit
(issue 29). The example's own arithmetic (one Laplace step per column at ε/M) is checked too, so the
page cannot drift from the code."""

from __future__ import annotations

import json
import math
import re
import zipfile

import pandas as pd
import pytest

import dpsynth_core as core
from dpsynth_core import cli
from dpsynth_core.frontier import dp_methods
from dpsynth_core.synth import SYNTHESIZERS, synthesize
from tests.conftest import DATA, ROOT
from tests.contributing import example_module
from tests.core.synth.test_synth_common import check_synthesizer, penguins_sample

NAME, LABEL = "noisy_histograms", "Noisy histograms (a copy)"
RENAMES = {"laplace_marginals": NAME, "LaplaceMarginals": "NoisyHistograms",
           '"Independent Laplace histograms"': f'"{LABEL}"'}
PENGUINS_CSV, PENGUINS_SCHEMA = str(DATA / "penguins.csv"), str(DATA / "penguins.schema.json")


@pytest.fixture(scope="module")
def copied():
    """The copy, registered for this module's tests and removed after them."""
    with example_module("dpsynth_core/synth/laplace_marginals.py", RENAMES):
        try:
            yield SYNTHESIZERS[NAME]
        finally:
            SYNTHESIZERS.pop(NAME)
    assert NAME not in SYNTHESIZERS


@pytest.fixture(scope="module")
def penguins():
    return penguins_sample()


def test_the_copy_passes_every_common_check(copied, penguins):
    check_synthesizer(NAME, penguins)


def test_the_picker_and_the_map_list_place_it_by_its_declared_rank(copied):
    # The example declares rank 45: after independent (40), before dp_seqreg (50). The picker
    # (ui/widgets.py) and the R-U map's method list (pages/ru_map.py) both show list(SYNTHESIZERS).
    names = list(SYNTHESIZERS)
    assert copied.rank == 45 and copied.label == LABEL
    assert names[names.index("independent") + 1:names.index("dp_seqreg")] == [NAME]


def test_the_ranks_contributing_lists_are_the_classes_ranks():
    # CONTRIBUTING.md lists the shipped ranks so a contributor can place a method: they must be the declared ones.
    text = " ".join((ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8").split())
    listed = re.search(r"then by rank \(([^)]*)\)", text).group(1)
    ranks = {name: int(rank) for name, rank in re.findall(r"(\w+) (\d+)", listed)}
    assert ranks == {name: synth.rank for name, synth in SYNTHESIZERS.items() if name != NAME}


def test_its_forecast_says_it_has_none(copied):
    df, schema = core.load_bundled("penguins")
    for n in (None, len(df)):
        fc = core.forecast(NAME, schema, 1.0, n)
        assert fc.level == "unknown" and fc.sentence.startswith(f"No forecast: {LABEL} declares none")
        assert fc.sentence != core.forecast("mst", schema, 1.0, n).sentence  # not MST's, as once


def test_the_suggestion_asks_it_by_its_declared_rule(copied):
    df, schema = core.load_bundled("penguins")
    # As written it declares no priority: never named, even when it is the only method registered.
    saved = dict(SYNTHESIZERS)
    try:
        SYNTHESIZERS.clear()
        SYNTHESIZERS[NAME] = copied
        assert all(core.suggest_method(schema, eps, n) is None for eps in (0.1, 1.0, 10.0) for n in (None, 344))
        # A copy that declares a rule (priority below MST's, named when n is declared) is asked first.
        suggested = type("Suggested", (type(copied),), {
            "name": f"{NAME}_suggested", "suggest_priority": -1,
            "suggestion": lambda self, schema, epsilon, n, forecast: None if n is None else " (n is declared)."})
        SYNTHESIZERS.update(saved)
        core.synth.base.register(suggested)
        named = core.suggest_method(schema, 1.0, 344)
        assert (named.method, named.sentence) == (f"{NAME}_suggested", f"Suggested at ε = 1: {LABEL} (n is declared).")
        assert core.suggest_method(schema, 1.0, None).method == "mst"
    finally:
        SYNTHESIZERS.clear()
        SYNTHESIZERS.update(saved)


def test_the_example_spends_epsilon_as_its_docstring_says(copied):
    df, schema = core.load_bundled("penguins")
    sweep = core.ru_map(df, [NAME], [1.0], seed=1, schema=schema, references=False, metrics=["ks_mean"], n_jobs=1)
    assert dp_methods(sweep) == [NAME] and sweep["ks_mean"].between(0, 1).all()
    assert [o.name for o in copied.options] == ["bins", "floor"]
    result = synthesize(df, NAME, epsilon=1.0, schema=schema, n=500, seed=3)
    used = schema.used
    assert list(result.data.columns) == list(df.columns) and len(result.data) == 500
    # one Laplace step per modelled column at ε/M each; they sum to the total asked for
    steps = result.ledger["steps"]
    assert [s["mechanism"] for s in steps] == ["Laplace"] * len(used)
    assert all(math.isclose(s["epsilon"], 1.0 / len(used)) for s in steps)
    assert math.isclose(result.ledger["epsilon_total"], 1.0)
    with pytest.raises(ValueError, match="floor"):
        synthesize(df, NAME, epsilon=1.0, schema=schema, n=10, floor=-1.0)


def test_the_cli_offers_it_synthesizes_and_releases_with_it(copied, tmp_path, capsys):
    assert cli.main(["methods"]) == 0
    assert NAME in capsys.readouterr().out.split()  # `dpsynth methods` lists what --method takes
    out = tmp_path / "s.csv"
    assert cli.main(["synthesize", PENGUINS_CSV, "--schema", PENGUINS_SCHEMA, "--method", NAME, "--epsilon", "1",
                     "--n", "50", "--seed", "2", "-o", str(out)]) == 0
    assert len(pd.read_csv(out)) == 50
    ledger = json.loads(out.with_suffix(".ledger.json").read_text(encoding="utf-8"))
    assert ledger["method"] == NAME and math.isclose(ledger["epsilon_total"], 1.0)
    package = tmp_path / "r.zip"
    assert cli.main(["release", PENGUINS_CSV, "--schema", PENGUINS_SCHEMA, "--method", NAME, "--epsilon", "1",
                     "--n", "50", "-o", str(package)]) == 0
    with zipfile.ZipFile(package) as z:
        [ledger_name] = [f for f in z.namelist() if f.endswith(".ledger.json")]
        released = json.loads(z.read(ledger_name))
    assert released["method"] == NAME and released["is_dp"]
