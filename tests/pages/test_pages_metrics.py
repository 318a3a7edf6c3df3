"""Pages driven by the metric registry, with AppTest: a metric registered in one place reaches the Compare
page's section, the Risk page's section and the R-U map's axis choices; and the Risk page's proposed holdout."""

import math

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import dpsynth_core as core
from dpsynth_core.metric_info import Metric, register, unregister
from tests.conftest import APP, no_errors
from tests.pages.test_pages_risk import _expected_inputs as _inputs

pytestmark = pytest.mark.integration  # the page tier: run by scripts/test.sh and CI, not a plain pytest


@pytest.fixture
def at():
    return AppTest.from_file(APP, default_timeout=120).run()


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _mean_gap(ctx) -> float:
    numeric = [c for c in ctx.real.columns if ctx.schema[c].kind == "numeric"]
    return float(np.mean([abs(ctx.real[c].mean() - ctx.synth[c].mean()) for c in numeric]))


def _first_value_share(ctx) -> float:
    return float(ctx.real.iloc[:, 0].isin(ctx.synth.iloc[:, 0]).mean())


@pytest.fixture
def throwaway():
    """One utility and one risk metric, each one object registered here and removed after the test."""
    register(Metric(name="_mean_gap", label="Mean gap of column means (test)", kind="utility", section="marginals",
                    goal="minimize", lower=0.0, upper=math.inf, best=0.0, reading="test only", compute=_mean_gap))
    register(Metric(name="_first_value_share", label="First values reproduced (test)", kind="risk",
                    section="distance", goal="minimize", lower=0.0, upper=1.0, best=0.0, reading="test only",
                    compute=_first_value_share))
    try:
        yield
    finally:
        unregister("_mean_gap")
        unregister("_first_value_share")


def test_a_registered_metric_appears_on_compare_risk_and_the_ru_map(at, throwaway):
    at.switch_page("pages/compare.py").run()
    no_errors(at)
    ds, cfg, train, _, synth = _inputs(at)
    ctx = core.MetricContext(train, synth, schema=ds.schema)
    # Its tile in the Column-by-column section, with the value its compute function gives.
    assert _metrics(at)["Mean gap of column means (test)"] == f"{_mean_gap(ctx):.4g}"
    at.switch_page("pages/risk.py").run()
    no_errors(at)
    assert _metrics(at)["First values reproduced (test)"] == f"{_first_value_share(ctx):.3f}"
    at.switch_page("pages/ru_map.py").run()
    no_errors(at)
    # The axis choices, as the page shows them (labels).
    assert "Mean gap of column means (test)" in at.selectbox(key="ru_y").options
    assert "First values reproduced (test)" in at.selectbox(key="ru_x").options


def test_risk_page_proposes_a_holdout_on_a_large_enough_table_and_never_sets_it_unasked(at, monkeypatch):
    # The rule (constraints.default_holdout): tables of at least RISK_HOLDOUT_MIN_ROWS rows are proposed a
    # holdout of RISK_HOLDOUT_DEFAULT. The penguins have 344 rows: a threshold of 300 makes them large enough
    # here, which keeps the test fast.
    monkeypatch.setattr(core.constraints, "RISK_HOLDOUT_MIN_ROWS", 300)
    at.switch_page("pages/risk.py").run()
    no_errors(at)
    # Issue 26: opening Risk set a 20% holdout for every later synthesis, the release included, unseen.
    assert at.session_state["synth_config"].holdout == 0.0
    assert any("holding out 20% of the rows would let them compare" in i.value for i in at.info)
    at.button(key="risk_propose_holdout").click().run()
    no_errors(at)
    assert at.session_state["synth_config"].holdout == core.constraints.RISK_HOLDOUT_DEFAULT == 0.2
    assert any("20% of the rows are held out (set on Synthesize)" in c.value for c in at.caption)
    ds, cfg, train, held, synth = _inputs(at)
    assert held is not None and len(held) + len(train) == 344
    # The verdicts compare against the held-out records: membership inference runs, and the key-match
    # measure carries its held-out reference.
    dr = core.risk.distance_risk(train, synth, holdout=held, schema=ds.schema, seed=cfg.seed)
    assert _metrics(at)["Membership inference AUC"] == f"{dr.membership.auc:.3f}"
    keys, sensitive = list(ds.schema.keys), ds.schema.sensitive
    stol = core.risk.default_sensitive_tolerance(sensitive, [train, synth], ds.schema)
    km = core.risk.key_match_disclosure(train, synth, keys, sensitive, schema=ds.schema, sensitive_tolerance=stol,
                                        holdout=held)
    assert km.estimate.holdout is not None and km.estimate.finding != "undetermined"
    summary = next(b.value for b in [*at.success, *at.info, *at.warning] if b.value.startswith("Verdicts on"))
    assert "undecided without held-out records" not in summary
    # The one setting is on Synthesize, where the proposal shows, and where it is taken back.
    at.switch_page("pages/synthesize.py").run()
    assert at.selectbox(key="holdout").value == 0.2
    assert any("Rows held out from the synthesizer: 20%" in c.value for c in at.caption)  # in the ledger too
    at.selectbox(key="holdout").set_value(0.0).run()
    no_errors(at)
    assert at.session_state["synth_config"].holdout == 0.0
    at.switch_page("pages/risk.py").run()
    assert at.session_state["synth_config"].holdout == 0.0
    assert any(i.value.startswith("Every row is used") for i in at.info)


def test_risk_page_holds_nothing_out_on_a_small_table_and_says_why(at):
    at.switch_page("pages/risk.py").run()
    no_errors(at)
    assert core.constraints.default_holdout(344) == 0.0
    assert at.session_state["synth_config"].holdout == 0.0
    assert any("with 344 rows (fewer than 1,000) the held-out records' shares would be imprecise" in i.value
               for i in at.info)
    # Without held-out records the verdicts beyond the baselines stay open, and the first line says why.
    summary = next(b.value for b in at.info if b.value.startswith("Verdicts on"))
    assert "Without held-out rows" in summary
