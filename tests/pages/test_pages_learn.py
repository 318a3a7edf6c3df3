"""The Learn page in AppTest: every demo runs with nothing uploaded, and its numbers follow the sliders."""

import json
import math

import pytest
from scipy import stats
from streamlit.testing.v1 import AppTest

import dpsynth_core as core
from tests.conftest import APP, entries
from tests.conftest import no_errors as _no_errors
from ui.text import plain

pytestmark = pytest.mark.integration  # the page tier: run by scripts/test.sh and CI, not a plain pytest

DEMOS = ["e^ε", "Noise on a count", "Composition", "Randomized response", "Exponential mechanism",
         "Beta–binomial synthesizer", "Sequential synthesis"]
TABS = [*DEMOS, "Privacy audit"]  # the audit runs on a click (test_the_audit_runs_from_its_tab)


@pytest.fixture
def at():
    at = AppTest.from_file(APP, default_timeout=60).run()
    return at.switch_page("pages/learn.py").run()


def _open(at, tab):
    at.session_state["learn_tab"] = tab
    return at.run()


def _metrics(at):
    return {m.label: m.value for m in at.metric}


def test_tabs_are_the_eight_demos(at):
    _no_errors(at)
    assert [t.label for t in at.tabs] == TABS
    assert at.session_state["dataset"].source == "bundled"  # nothing uploaded


@pytest.mark.parametrize("tab", DEMOS)
def test_every_demo_runs_with_no_upload(at, tab):
    _open(at, tab)
    _no_errors(at)
    assert at.get("plotly_chart"), tab
    assert at.markdown, tab  # the explanation


def test_ratio_follows_epsilon(at):
    label = "e^ε, the bound on the probability ratio"
    assert _metrics(at)[label] == "2.72"
    at.select_slider(key="learn_ratio_eps").set_value(10.0).run()
    _no_errors(at)
    assert _metrics(at)[label] == "22,026.47"  # e^10
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert spec["data"][1]["x"] == [10.0]


def test_ratio_table_shows_small_percentages(at):
    # Percent of a 1% outcome's probability: bounds 1%·e^∓ε, three significant figures, never rounded to 0%.
    table = at.dataframe[0].value
    row = table[table["ε"] == 10.0].iloc[0]
    assert row["1% outcome: at least"] == pytest.approx(100 * 0.01 * math.exp(-10))  # 0.0000454%
    assert row["1% outcome: at most"] == pytest.approx(100.0)  # capped: a probability is at most 1
    formats = json.loads(at.dataframe[0].proto.columns)
    assert formats["1% outcome: at least"]["type_config"]["format"] == "%.3g%%"


def test_noise_scales_follow_epsilon_and_delta(at):
    _open(at, "Noise on a count")
    at.select_slider(key="learn_noise_eps").set_value(0.2).run()
    at.select_slider(key="learn_noise_delta").set_value(1e-6).run()
    _no_errors(at)
    m = _metrics(at)
    assert m["Laplace scale b = 1/ε"] == "5"
    assert m["Gaussian σ = √(2 ln(1.25/δ))/ε"] == f"{math.sqrt(2 * math.log(1.25e6)) / 0.2:.4g}"
    a = math.exp(-0.2)
    assert m["Geometric sd"] == f"{math.sqrt(2 * a) / (1 - a):.4g}"
    assert not at.warning  # ε < 1: the Gaussian bound holds
    at.select_slider(key="learn_noise_eps").set_value(2.0).run()
    assert any("ε < 1" in w.value for w in at.warning)


def test_composition_follows_bins(at):
    _open(at, "Composition")
    at.slider(key="learn_comp_bins").set_value(20).run()
    at.radio(key="learn_comp_mech").set_value("laplace").run()
    _no_errors(at)
    m = _metrics(at)
    assert m["sequential: ε per bin"] == "0.05"  # ε = 1 over 20 bins
    assert m["sequential: RMSE per bin"] == f"{math.sqrt(2) * 20:.4g}"  # √(2b²), b = 20
    assert m["parallel: RMSE per bin"] == f"{math.sqrt(2):.4g}"


def test_randomized_response_follows_p(at):
    _open(at, "Randomized response")
    at.slider(key="learn_rr_p").set_value(0.9).run()
    at.slider(key="learn_rr_n").set_value(1000).run()
    _no_errors(at)
    m = _metrics(at)
    assert m["ε = ln(p/(1 − p))"] == f"{math.log(9):.3g}"
    assert m["sd, formula √(p(1 − p)/n)/(2p − 1)"] == f"{math.sqrt(0.09 / 1000) / 0.8:.4f}"


def test_exponential_follows_n_and_x(at):
    _open(at, "Exponential mechanism")
    at.slider(key="learn_em_n").set_value(30).run()
    at.slider(key="learn_em_x").set_value(21).run()
    _no_errors(at)
    table = at.dataframe[0].value.set_index("score")
    # −|x − r| with uniform weights ∝ exp(−|21 − r|/2): its mode is x, its mean by direct sum.
    w = [math.exp(-abs(21 - r) / 2) for r in range(31)]
    assert table.loc["−|x − r|", "most probable r"] == 21
    assert table.loc["−|x − r|", "expected r"] == pytest.approx(sum(r * v for r, v in zip(range(31), w)) / sum(w))
    post = stats.betabinom.pmf(range(31), 30, 22, 10)
    wp = [math.exp(p / 2) for p in post]
    assert table.loc["posterior predictive probability of r", "expected P(r | x)"] == pytest.approx(
        sum(p * v for p, v in zip(post, wp)) / sum(wp))
    # Lowering n below x clamps x instead of failing.
    at.slider(key="learn_em_n").set_value(10).run()
    _no_errors(at)
    assert at.slider(key="learn_em_x").value == 10


def test_beta_binomial_follows_epsilon_and_m(at):
    _open(at, "Beta–binomial synthesizer")
    at.select_slider(key="learn_bb_eps").set_value(5.0).run()
    at.slider(key="learn_bb_m").set_value(1).run()
    _no_errors(at)
    m = _metrics(at)
    alpha = 500 / (math.exp(5.0) - 1)
    assert m["α per implicate"] == f"{alpha:.4g}"
    assert m["Bias of the synthetic share"] == f"{alpha * 0.4 / (500 + 2 * alpha):+.4f}"
    assert m["Coverage, full rule"] == "needs m ≥ 2"
    at.slider(key="learn_bb_m").set_value(5).run()
    assert _metrics(at)["α per implicate"] == f"{500 / math.expm1(5.0 / 5):.4g}"  # ε/m each


def test_sequential_synthesis_steps(at):
    _open(at, "Sequential synthesis")
    penguins, _ = core.load_bundled("penguins")
    real_sd = penguins.dropna(subset=["sex", "bill_length_mm", "flipper_length_mm"])["bill_length_mm"].std()
    assert _metrics(at)["sd of bill length, real"] == f"{real_sd:.3g}"
    at.select_slider(key="learn_seq_step").set_value(2).run()
    _no_errors(at)
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert [t["name"] for t in spec["data"]] == ["real", "bare predictions"]
    before = _metrics(at)["…with residual noise"]
    at.number_input(key="learn_seq_seed").set_value(5).run()
    assert _metrics(at)["…with residual noise"] != before


def test_slider_values_survive_a_tab_switch(at):
    at.select_slider(key="learn_ratio_eps").set_value(5.0).run()
    _open(at, "Composition")
    _open(at, "e^ε")
    assert _metrics(at)["e^ε, the bound on the probability ratio"] == f"{math.exp(5):,.2f}"


def test_a_link_opens_the_same_demo_at_the_same_settings_without_the_data_sidebar():
    # A teacher's link: the exponential mechanism at n = 50, x = 30, ε = 0.5 (issue 20.7).
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"learn_demo": "exponential", "learn_em_n": "50", "learn_em_x": "30",
                            "learn_em_eps": "0.5", "learn_em_actual": "false"})
    at.switch_page("pages/learn.py").run()
    _no_errors(at)
    assert at.session_state["learn_tab"] == "Exponential mechanism"
    assert (at.slider(key="learn_em_n").value, at.slider(key="learn_em_x").value) == (50, 30)
    table = at.dataframe[0].value.set_index("score")
    expected, _ = core.teaching.exponential_binary_table(50, 30, 0.5)
    # The table's new column: each score's probability of its most likely r (0.1248, 0.0199, 0.0430 here,
    # checked by hand in test_teaching), beside its expected distance and posterior.
    assert table["P(most probable r)"].round(4).tolist() == [0.1248, 0.0199, 0.0430]
    assert table["P(most probable r)"].tolist() == expected["mode_probability"].tolist()
    assert {"expected |r − x|", "expected P(r | x)"} <= set(table.columns)
    # The address bar keeps the demo and every control of it; nothing of the session's data or settings.
    params = dict(at.query_params)
    assert params["learn_demo"] == "exponential" and params["learn_em_n"] == "50"
    assert params["learn_em_actual"] == "false" and "data" not in params and "eps" not in params
    assert len(at.sidebar) == 0  # no dataset, mode or settings beside a demo that never reads them
    # A changed slider is written back, so the link follows the demo.
    at.slider(key="learn_em_n").set_value(60).run()
    assert dict(at.query_params)["learn_em_n"] == "60"


def test_a_link_with_bad_values_keeps_the_defaults():
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"learn_demo": "randomized_response", "learn_rr_n": "999999", "learn_rr_p": "abc"})
    at.switch_page("pages/learn.py").run()
    _no_errors(at)
    assert at.session_state["learn_tab"] == "Randomized response"
    assert (at.slider(key="learn_rr_n").value, at.slider(key="learn_rr_p").value) == (200, 0.75)


def test_beta_binomial_curves_mark_the_current_epsilon_and_m(at):
    at = _open(at, "Beta–binomial synthesizer")
    at.select_slider(key="learn_bb_eps").set_value(2.0).run()
    _no_errors(at)
    by_eps, by_m = (json.loads(c.proto.spec) for c in at.get("plotly_chart"))
    assert [s["x0"] for s in by_eps["layout"]["shapes"] if s.get("line", {}).get("dash") == "dot"] == [2.0, 2.0]
    assert [s["x0"] for s in by_m["layout"]["shapes"] if s.get("line", {}).get("dash") == "dot"] == [3, 3]
    # The label sits at the line: on the log ε axis an annotation's x is log10(ε).
    labels = {a["text"]: a["x"] for a in by_eps["layout"]["annotations"]}
    assert labels["ε = 2"] == pytest.approx(math.log10(2.0)) and "new text" not in labels
    assert {a["text"]: a["x"] for a in by_m["layout"]["annotations"]}["m = 3"] == 3


def test_the_audit_runs_from_its_tab(at, ledger_store):
    # The uniform baseline's design, at its smallest run count: the claim 0 beside the two bounds, the
    # core's verdict, the table and the figure. It runs on the design's public tables, so nothing is logged.
    _open(at, "Privacy audit")
    _no_errors(at)
    assert any("Run the audit" in i.value for i in at.info)
    at.selectbox(key="learn_audit_method").set_value("uniform").run()
    runs = at.select_slider(key="learn_audit_runs_uniform")
    runs.set_value(50).run()  # the smallest choice: half the design's short run
    at.button(key="learn_audit_run").click().run()
    _no_errors(at)
    result = at.session_state["audit_results"]["learn_audit"][1]
    assert result.method == "uniform" and result.runs == 50
    metrics = _metrics(at)
    assert metrics["Claimed ε (per release)"] == "0"
    assert metrics["Lower bound on ε, 95 %"] == core.privacy.audit.bound_text(result.honest.bound)
    assert metrics["Broken variant's bound"] == core.privacy.audit.bound_text(result.broken.bound)
    assert plain(result.verdict()) in [s.value for s in [*at.success, *at.warning]]
    assert at.get("plotly_chart") and entries(ledger_store) == []
