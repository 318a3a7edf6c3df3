"""Tuning ε on one screen (issue 20.1, 20.6): the readout on Synthesize, the shared controls on Compare and Risk,
and a typed ε out of range refused in words."""


import numpy as np
import pandas as pd
import pytest

import dpsynth_core as core
from tests.conftest import eps_input, eps_slider
from tests.conftest import no_errors as _no_errors

pytestmark = pytest.mark.integration  # the page tier: run by scripts/test.sh and CI, not a plain pytest




def _rebuilt(at):
    """The rows the synthesizer saw and the synthesis at the session's settings, from the core."""
    ds, cfg = at.session_state["dataset"], at.session_state["synth_config"]
    # The session keeps its holdout mask (fresh coins per record, issue 15), never a seed.
    mask = at.session_state["holdout_masks"][(ds.fingerprint, cfg.holdout)] if cfg.holdout else None
    train, _ = core.holdout.split_holdout(ds.df, cfg.holdout, mask=mask)
    result = core.synthesize(train, cfg.method, epsilon=cfg.epsilon, schema=ds.schema, seed=cfg.seed)
    return ds, cfg, train, result


def test_synthesize_shows_the_headline_readout_and_it_follows_epsilon(at):
    at.switch_page("pages/synthesize.py").run()
    _no_errors(at)
    for eps in (1.0, 0.1):
        if eps != 1.0:
            eps_slider(at).set_value(eps).run()
            _no_errors(at)
        ds, cfg, train, result = _rebuilt(at)
        assert cfg.epsilon == eps
        h = core.readout.headline(train, result.data, ds.schema, cfg.seed)
        shown = {m.label: m.value for m in at.metric}
        for name, label, value in h.figures():
            assert shown[label] == f"{value:.3g}", (label, eps)
        bars = next(d.value for d in at.dataframe if list(d.value.columns) == ["column", "distance"])
        assert dict(zip(bars["column"], bars["distance"])) == pytest.approx(h.columns.to_dict())
        assert list(bars["distance"]) == sorted(bars["distance"], reverse=True)  # largest first
    assert any("stacked rows" in c.value for c in at.caption)  # the readout says which rows it used


def test_headline_figures_by_hand_on_a_small_table():
    # Two columns, four rows each; small enough that no subsample is drawn.
    real = pd.DataFrame({"x": [0.5, 1.5, 2.5, 3.5], "g": ["a", "a", "b", "b"]})
    synth = pd.DataFrame({"x": [0.5, 1.5, 3.0, 4.0], "g": ["a", "b", "b", "b"]})
    schema = core.Schema.from_dict({"x": {"kind": "numeric", "bounds": [0, 5]},
                                    "g": {"kind": "categorical", "categories": ["a", "b"]}})
    h = core.readout.headline(real, synth, schema, 0)
    # KS: the ECDFs differ by 1/4 at most (3/4 vs 2/4 at x = 2.5); TV: shares (½, ½) vs (¼, ¾), ½(¼ + ¼) = ¼.
    assert h.ks_mean == pytest.approx(0.25) and h.tv_mean == pytest.approx(0.25)
    assert h.columns.to_dict() == pytest.approx({"x": 0.25, "g": 0.25})
    # Exact copies: (0.5, a) is in both; (1.5, a), (2.5, b), (3.5, b) are not: 1 of 4 real records.
    assert h.exact_copy_share == pytest.approx(0.25)
    # Gower distance, range 5, two columns, by hand: (0.5, a) → itself 0; (1.5, a) → (0.5, a) ½(1/5 + 0) = 0.1
    # or (1.5, b) ½(0 + 1) = 0.5, so 0.1; (2.5, b) → (3.0, b) ½(0.5/5) = 0.05; (3.5, b) → (3.0, b) or (4.0, b)
    # 0.05. Median of (0, 0.1, 0.05, 0.05) = 0.05.
    assert h.dcr_median == pytest.approx(0.05)
    assert (h.n_propensity, h.n_dcr, h.n_real, h.n_synth) == (8, 4, 4, 4)


def test_readout_bars_are_the_column_distances_largest_first():
    # Three columns with distances set by hand, one with none (no distance applies): the bars leave it out
    # and put the largest first; the tie between "b" and "d" keeps the columns' order.
    h = core.readout.Headline(values={}, columns=pd.Series({"a": 0.1, "b": 0.4, "c": np.nan, "d": 0.4}),
                              n_propensity=0, n_dcr=0, n_real=0, n_synth=0)
    bars = h.by_column()
    assert list(bars["column"]) == ["b", "d", "a"] and list(bars["distance"]) == [0.4, 0.4, 0.1]


def test_compare_and_risk_have_the_method_and_epsilon_of_synthesize(at):
    at.switch_page("pages/compare.py").run()
    _no_errors(at)
    eps_slider(at).set_value(5.01).run()
    _no_errors(at)
    assert at.session_state["synth_config"].epsilon == 5.01
    at.switch_page("pages/risk.py").run()
    assert eps_slider(at).value == 5.01  # the same state, drawn again
    at.selectbox(key="method").set_value("dirichlet").run()
    _no_errors(at)
    at.switch_page("pages/synthesize.py").run()
    _no_errors(at)
    assert at.selectbox(key="method").value == "dirichlet" and eps_slider(at).value == 5.01
    assert at.session_state["synth_config"].method == "dirichlet"


@pytest.mark.parametrize("typed, words", [(500.0, "above the largest ε this app allows, 100"),
                                          (0.001, "below the smallest ε this app allows, 0.01"),
                                          (0.0, "ε = 0 would be the strongest guarantee"),
                                          (0.0, "ε must be at least 0.01"),
                                          (-1.0, "ε is never negative")])
def test_a_typed_epsilon_out_of_range_is_refused_in_words(at, typed, words):
    at.switch_page("pages/synthesize.py").run()
    eps_input(at).set_value(typed).run()
    assert not at.exception
    shown = at.error[0].value.replace("\\", "")  # drop the Markdown escapes of show_error
    assert len(at.error) == 1 and words in shown and "keep ε = 1." in shown
    assert at.session_state["synth_config"].epsilon == 1.0  # the settings keep their earlier ε
    eps_input(at).set_value(2.0).run()  # a valid value clears the sentence
    _no_errors(at)
    assert at.session_state["synth_config"].epsilon == 2.0
