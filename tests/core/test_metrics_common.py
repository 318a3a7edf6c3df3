"""Common tests over the metric registry: every registered metric, none named by hand.

Like scikit-learn's common estimator tests, these run over whatever
:data:`dpsynth_core.METRICS` holds, so a new metric is covered the moment it
is registered: its value lies in its declared range, a utility metric is at
its best (or at its declared ``on_copy`` value) when the synthetic data are a
copy of the real data, its declared needs are honoured, and its direction
agrees with :meth:`Metric.better`. The last test registers a throw-away
metric and checks it reaches the R-U map, the report and the page section
lists without any other edit.

Each check is a function of one metric; :func:`check_metric` runs them all, for a metric registered
by a test (the worked example of CONTRIBUTING.md, tests/core/utility/test_contributing_metric.py).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpsynth_core as core
from dpsynth_core.metric_info import (METRICS, NEEDS, Metric, MetricContext, metrics, register, section_title,
                                      sections, unregister)
from dpsynth_core.risk import RiskEstimate
from dpsynth_core.risk.distance import DCR_RECORDS_SEED
from dpsynth_core.holdout import split_holdout
from dpsynth_core.rumap import metric_options, score
from dpsynth_core.utility import section_tiles
from tests.core.risk.test_risk import _brute_force_gower

COMPUTED = sorted(n for n, m in METRICS.items() if m.on_map)
UTILITY = sorted(n for n in COMPUTED if METRICS[n].kind == "utility")
ON_COPY = sorted(n for n in COMPUTED if METRICS[n].kind == "utility" or METRICS[n].on_copy is not None)
WITH_NEEDS = sorted((n, need) for n in COMPUTED for need in METRICS[n].needs)


@pytest.fixture(scope="module")
def data():
    return penguins_split()


def penguins_split():
    """Penguins split 3:1 (a fixed draw), an independent-marginals synthesis of the training rows, and two
    role sets: the bundled one (numeric sensitive body_mass_g) and one with a categorical sensitive column,
    so both attribute-inference measures get a value."""
    df, schema = core.load_bundled("penguins")
    used = schema.used
    train, hold = split_holdout(df[used], 0.25, rng=np.random.default_rng(0))
    synth = core.synthesize(train, "independent", epsilon=1.0, schema=schema, seed=3).data[used]
    roles = [schema, schema.with_roles(keys=["island", "sex"], sensitive="species")]
    return train, hold, synth, roles


def _values(train, hold, synth, roles, names=COMPUTED) -> dict[str, float]:
    """Each computable metric's (of ``names``) first non-NaN value over the role sets."""
    out: dict[str, float] = {}
    for schema in roles:
        ctx = MetricContext(train, synth, schema=schema, seed=0, holdout=hold)
        for name in names:
            v = METRICS[name].value(ctx)
            if not math.isnan(v):
                out.setdefault(name, v)
    return out


@pytest.fixture(scope="module")
def on_synth(data):
    train, hold, synth, roles = data
    return _values(train, hold, synth, roles)


@pytest.fixture(scope="module")
def on_copy(data):
    train, hold, _, roles = data
    return _values(train, hold, train.copy(), roles)


def check_metric(name: str, data) -> None:
    """Every common check on the registered metric ``name``: what a new metric's test calls."""
    m = METRICS[name]
    check_declaration_is_complete(m)
    if not m.on_map:
        return
    train, hold, synth, roles = data
    value = _values(train, hold, synth, roles, [name]).get(name)
    copy = _values(train, hold, train.copy(), roles, [name]).get(name)
    check_value_lies_in_the_declared_range(m, value)
    if m.kind == "utility" or m.on_copy is not None:
        check_on_a_copy(m, copy)
    check_better_agrees_with_the_goal(m, value, copy)
    for need in sorted(m.needs):
        check_without_what_it_needs(m, need, data)


def test_the_registry_is_not_empty_and_labels_are_unique():
    assert len(UTILITY) >= 10 and len(COMPUTED) - len(UTILITY) >= 5
    labels = [m.label for m in METRICS.values()]
    assert len(labels) == len(set(labels))


@pytest.mark.parametrize("name", sorted(METRICS))
def test_declaration_is_complete_and_direction_agrees_with_range(name):
    check_declaration_is_complete(METRICS[name])


def check_declaration_is_complete(m: Metric) -> None:
    assert m.label and m.reading and m.section and m.kind in ("utility", "risk")
    assert m.lower <= m.best <= m.upper and set(m.needs) <= set(NEEDS)
    # The best value is the end of the range the goal points to (or inside it, for a target).
    if m.goal == "maximize":
        assert m.best == m.upper
    elif m.goal == "minimize":
        assert m.best == m.lower
    else:
        assert m.lower < m.best < m.upper
    assert m.section in sections(m.kind) and section_title(m.section)


@pytest.mark.parametrize("name", COMPUTED)
def test_value_lies_in_the_declared_range(name, on_synth):
    check_value_lies_in_the_declared_range(METRICS[name], on_synth.get(name))


def check_value_lies_in_the_declared_range(m: Metric, value: float | None) -> None:
    # Every computable metric gets a value on these data under one of the two role sets.
    assert value is not None, f"{m.name} was NaN under every role set"
    assert m.lower <= value <= m.upper


@pytest.mark.parametrize("name", ON_COPY)
def test_on_a_copy_a_metric_takes_its_declared_value(name, on_copy):
    check_on_a_copy(METRICS[name], on_copy.get(name))


def check_on_a_copy(m: Metric, value: float | None) -> None:
    # Exact identities on a copy (0 distances, AUC 0.5 from constant propensities, identical fits):
    # the tolerance only absorbs float rounding.
    expected = m.best if m.on_copy is None else m.on_copy
    assert value == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("name", COMPUTED)
def test_better_agrees_with_the_goal(name, on_synth, on_copy):
    check_better_agrees_with_the_goal(METRICS[name], on_synth[name], on_copy.get(name))


def check_better_agrees_with_the_goal(m: Metric, v: float, copy: float | None) -> None:
    if v != m.best:
        assert m.better(m.best, v) and not m.better(v, m.best)
    assert not m.better(m.best, m.best)
    if m.kind == "utility" and m.on_copy is None and v != m.best:
        assert m.better(copy, v)  # the copy keeps everything the synthesis lost


@pytest.mark.parametrize("name, need", WITH_NEEDS)
def test_a_metric_without_what_it_needs_is_nan_and_says_why(name, need, data):
    check_without_what_it_needs(METRICS[name], need, data)


def check_without_what_it_needs(m: Metric, need: str, data) -> None:
    train, hold, synth, roles = data
    schema = roles[1] if m.name == "attribute_accuracy" else roles[0]
    full = MetricContext(train, synth, schema=schema, seed=0, holdout=hold)
    assert not math.isnan(m.value(full))
    without = {"holdout": dict(holdout=None), "keys": dict(keys=(), sensitive=schema.sensitive),
               "sensitive": dict(keys=schema.keys, sensitive=None)}[need]
    ctx = MetricContext(train, synth, schema=schema, seed=0, **{"holdout": hold, **without})
    assert math.isnan(m.value(ctx))
    assert NEEDS[need] in m.explain(ctx, math.nan)


def test_the_ru_map_offers_every_computable_metric_and_scores_through_the_registry(data):
    train, hold, synth, roles = data
    assert set(metric_options("utility")) | set(metric_options("risk")) == set(COMPUTED)
    got = score(train, synth, schema=roles[0], seed=0, holdout=hold, metrics=COMPUTED)
    ctx = MetricContext(train, synth, schema=roles[0], seed=0, holdout=hold)
    assert got == pytest.approx({n: METRICS[n].value(ctx) for n in COMPUTED}, nan_ok=True)


def test_metrics_of_one_call_share_one_propensity_fit(data, monkeypatch):
    train, _, synth, roles = data
    import dpsynth_core.utility.propensity as propensity
    calls = []
    real_fit = propensity.propensity_metrics
    monkeypatch.setattr(propensity, "propensity_metrics", lambda *a, **k: calls.append(1) or real_fit(*a, **k))
    score(train, synth, schema=roles[0], seed=0, metrics=["pmse", "pmse_ratio", "specks", "auc"])
    assert len(calls) == 1


# -- adding a metric is one object in one place ---------------------------------------------------------


def _mean_abs_mean_difference(ctx) -> float:
    numeric = [c for c in ctx.real.columns if ctx.schema[c].kind == "numeric"]
    return float(np.mean([abs(ctx.real[c].mean() - ctx.synth[c].mean()) for c in numeric]))


@pytest.fixture
def throwaway():
    """A utility metric (mean absolute difference of column means) and a risk metric with an estimate,
    registered for one test and removed after it."""
    utility = register(Metric(
        name="_mean_gap", label="Mean gap of column means (test)", kind="utility", section="marginals",
        goal="minimize", lower=0.0, upper=math.inf, best=0.0,
        reading="Average over numeric columns of |mean(real) − mean(synthetic)|.", compute=_mean_abs_mean_difference))

    def share(ctx):
        return float(ctx.real.iloc[:, 0].isin(ctx.synth.iloc[:, 0]).mean())

    risky = register(Metric(
        name="_first_value_share", label="First-column values reproduced (test)", kind="risk", section="distance",
        goal="minimize", lower=0.0, upper=1.0, best=0.0, reading="Share of records whose first value reappears.",
        compute=share,
        estimate=lambda ctx: RiskEstimate(
            metric="_first_value_share", value=share(ctx), lower=0.0, upper=1.0, interval="none", baseline=0.0,
            baseline_lower=0.0, baseline_upper=0.0, baseline_label="nothing", original=1.0, n=len(ctx.real))))
    try:
        yield utility, risky
    finally:
        unregister("_mean_gap")
        unregister("_first_value_share")
    assert "_mean_gap" not in METRICS and "_first_value_share" not in METRICS


def test_a_registered_metric_reaches_the_map_the_report_and_the_sections(throwaway, data):
    utility, risky = throwaway
    train, hold, synth, roles = data
    expected = np.mean([abs(train[c].mean() - synth[c].mean())
                        for c in train.columns if roles[0][c].kind == "numeric"])
    # The R-U map: an axis choice, and a column of the sweep's table.
    assert "_mean_gap" in metric_options("utility") and "_first_value_share" in metric_options("risk")
    got = score(train, synth, schema=roles[0], seed=0, metrics=["_mean_gap", "_first_value_share"])
    assert got["_mean_gap"] == pytest.approx(expected)
    # The Compare page's section tiles and the Risk page's section list.
    tiles = section_tiles("marginals", MetricContext(train, synth, schema=roles[0]))
    assert tiles[-1].label == utility.label and tiles[-1].value == pytest.approx(expected)
    assert risky in metrics("risk", "distance")
    # The internal report: the section's table, and the risk measures against their references.
    result = core.synthesize(train, "independent", epsilon=1.0, schema=roles[0], seed=3)
    section = core.report.utility_section(train, result, seed=0)
    table = dict(section.tables)[section_title("marginals")]
    row = table[table["measure"] == utility.label]
    assert float(row["value"].iloc[0]) == pytest.approx(expected)
    risk_section = core.report.risk_section(train, result, holdout=hold, seed=0)
    measures = dict(risk_section.tables)["Disclosure measures, each against its references"]
    assert risky.label in set(measures["measure"])
    # A risk metric with a value but no estimate is listed with its value alone.
    plain = register(Metric(name="_plain", label="Plain risk value (test)", kind="risk", section="distance",
                            goal="minimize", lower=0.0, upper=1.0, best=0.0, reading="test only",
                            compute=lambda ctx: 0.25))
    try:
        measures = dict(core.report.risk_section(train, result, seed=0).tables)[
            "Disclosure measures, each against its references"]
    finally:
        unregister(plain.name)
    assert measures.loc[measures["measure"] == plain.label, "value"].tolist() == [0.25]


def test_register_refuses_a_second_metric_of_one_name_and_unknown_needs():
    with pytest.raises(ValueError, match="already registered"):
        register(METRICS["pmse"])
    with pytest.raises(ValueError, match="needs"):
        Metric(name="_x", label="x", kind="utility", goal="minimize", lower=0, upper=1, best=0, reading="x",
               section="marginals", needs={"ledger"})


def test_throwaway_metrics_left_no_trace():
    assert not [n for n in METRICS if n.startswith("_")]


def test_options_set_the_shared_fits_row_cap(data):
    # A caller may ask for a cheaper propensity fit: the cap (rows of each table) reaches the one fit the four
    # metrics share; by default it is the headline's PMSE_RATIO_ROWS of each table.
    train, _, synth, roles = data
    ctx = MetricContext(train, synth, schema=roles[0], seed=0, options={"propensity_rows_each": 100})
    METRICS["pmse_ratio"].value(ctx)
    assert ctx.shared["propensity"].n_used == 200 < len(train) + len(synth)
    full = MetricContext(train, synth, schema=roles[0], seed=0)
    METRICS["pmse_ratio"].value(full)
    cap = core.constraints.PMSE_RATIO_ROWS
    assert full.shared["propensity"].n_used == min(len(train), cap) + min(len(synth), cap)


def test_options_set_the_records_the_median_dcr_measures(data):
    # The sweep's cap: the median DCR over 60 records drawn uniformly from the public seed, each distance
    # Gower's by brute force over every synthetic row (no schema: ranges off the two frames compared).
    train, _, synth, _ = data
    ctx = MetricContext(train, synth, seed=0, options={"dcr_rows": 60})
    chosen = np.sort(np.random.default_rng(DCR_RECORDS_SEED).choice(len(train), size=60, replace=False))
    want = float(np.median(_brute_force_gower(train.iloc[chosen], synth)))
    assert METRICS["dcr_median"].value(ctx) == pytest.approx(want, abs=1e-12)
    assert len(ctx.shared["dcr"]) == 60 < len(train)
