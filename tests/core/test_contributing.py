"""CONTRIBUTING.md's worked examples, run as written: the synthesizer and the metric it shows are
registered from the page's code blocks and reach the registries, the ledger and the metric's
common checks, so the page cannot drift from the code."""

from __future__ import annotations

import math
import re
import types

import pandas as pd
import pytest

import dpsynth_core as core
from dpsynth_core.metric_info import METRICS, MetricContext, unregister
from dpsynth_core.privacy.audit import declared_audits, run_audit
from dpsynth_core.rumap import dp_methods
from dpsynth_core.synth import SYNTHESIZERS, synthesize
from tests.conftest import ROOT

BLOCKS = dict(re.findall(r"```python\n# (\S+)\n(.*?)```", (ROOT / "CONTRIBUTING.md").read_text(), re.S))


def _load(path: str) -> types.ModuleType:
    """Run the block headed ``# path`` as that module of the package (its relative imports resolve)."""
    name = path.removesuffix(".py").replace("/", ".")
    module = types.ModuleType(name)
    module.__package__ = name.rpartition(".")[0]
    exec(compile(BLOCKS[path], path, "exec"), module.__dict__)
    return module


@pytest.fixture
def laplace_marginals():
    _load("dpsynth_core/synth/laplace_marginals.py")
    try:
        yield SYNTHESIZERS["laplace_marginals"]
    finally:
        SYNTHESIZERS.pop("laplace_marginals")


@pytest.fixture
def mean_gap():
    module = _load("dpsynth_core/utility/means.py")
    try:
        yield module
    finally:
        unregister("mean_gap")


def test_the_worked_synthesizer_is_registered_listed_and_ledgered(laplace_marginals):
    df, schema = core.load_bundled("penguins")
    order = list(SYNTHESIZERS)
    assert order.index("laplace_marginals") < order.index("cart")  # the picker lists DP methods first
    sweep = core.ru_map(df, ["laplace_marginals"], [1.0], seed=1, schema=schema, references=False,
                        metrics=["ks_mean"], n_jobs=1)
    assert dp_methods(sweep) == ["laplace_marginals"] and sweep["ks_mean"].between(0, 1).all()
    assert [o.name for o in laplace_marginals.options] == ["bins", "floor"]
    result = synthesize(df, "laplace_marginals", epsilon=1.0, schema=schema, n=500, seed=3)
    used = schema.used
    assert list(result.data.columns) == list(df.columns) and len(result.data) == 500
    # one Laplace step per modelled column at ε/M each; they sum to the total asked for
    steps = result.ledger["steps"]
    assert [s["mechanism"] for s in steps] == ["Laplace"] * len(used)
    assert all(math.isclose(s["epsilon"], 1.0 / len(used)) for s in steps)
    assert math.isclose(result.ledger["epsilon_total"], 1.0)
    for c in used:  # values stay in the declared domain
        col = schema[c]
        values = result.data[c].dropna()
        if col.kind == "categorical":
            assert set(values.astype(str)) <= set(map(str, col.categories))
        else:
            assert values.between(*col.bounds).all()
    with pytest.raises(ValueError, match="floor"):
        synthesize(df, "laplace_marginals", epsilon=1.0, schema=schema, n=10, floor=-1.0)


def test_the_worked_synthesizers_declared_audit_passes_the_common_contract(laplace_marginals):
    # What test_audit_common.py checks of every registered DP method, for the page's example. In this
    # process only (n_jobs=1): the example is registered here, not in the workers a module import would reach.
    design = declared_audits("laplace_marginals")[0]
    result = run_audit("laplace_marginals", runs=design.quick_runs, seed=20261, n_jobs=1)
    assert result.holds and result.has_power, result.verdict()


def test_the_worked_metric_computes_its_formula_and_reaches_the_registry(mean_gap):
    real = pd.DataFrame({"a": [1.0, 2.0, 3.0, 6.0], "b": [0, 0, 10, 10], "c": list("xyxy")})
    synth = pd.DataFrame({"a": [2.0, 2.0, 2.0, 2.0], "b": [1, 1, 1, 1], "c": list("xxxx")})
    # by hand: |3 − 2| = 1 for a, |5 − 1| = 4 for b, the text column ignored: (1 + 4) / 2
    assert METRICS["mean_gap"].value(MetricContext(real, synth)) == pytest.approx(2.5)
    assert METRICS["mean_gap"].value(MetricContext(real, real)) == METRICS["mean_gap"].best == 0.0
    assert math.isnan(mean_gap.mean_gap(real[["c"]], synth[["c"]]))
    assert "mean_gap" in [m.name for m in core.metric_info.metrics("utility", "marginals")]
