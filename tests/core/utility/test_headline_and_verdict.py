"""One "pMSE ratio" on every page (issue 31.1), the Compare page's verdict, and its interval plot's scale."""

import numpy as np
import pandas as pd
import pytest

import dpsynth_core as core
from dpsynth_core import constraints, readout, rumap
from dpsynth_core.utility import headline_propensity, propensity_metrics, run_discriminator, utility_summary
from dpsynth_core.utility.verdict import pmse_ratio_level, utility_verdict


@pytest.fixture(scope="module")
def diamonds_mst():
    df, schema = core.load_bundled("diamonds")
    real = df.sample(6000, random_state=1).reset_index(drop=True)
    synth = core.synthesize(real, "mst", epsilon=1.0, delta=1e-6, schema=schema, seed=4, n=4000).data
    return real[schema.used], synth[schema.used], schema


def test_the_same_synthesis_has_one_pmse_ratio_on_synthesize_compare_and_the_ru_map(diamonds_mst):
    real, synth, schema = diamonds_mst
    cats = [c for c in schema.used if schema[c].kind == "categorical"]
    shown = {
        "synthesize": readout.headline(real, synth, schema, 11).pmse_ratio,
        "compare": run_discriminator(real, synth, "logit_interactions", seed=11, categorical=cats).pmse_ratio,
        "ru_map": rumap.score(real, synth, schema=schema, seed=11, metrics=["pmse_ratio"],
                              options=rumap.SWEEP_OPTIONS)["pmse_ratio"],
    }
    # The rule written out here: 1,000 rows of each table drawn in turn from the seed, then the logit with
    # pairwise interactions on the 2,000 stacked rows, the schema's categorical columns as such.
    rng = np.random.default_rng(11)
    rs = real.iloc[np.sort(rng.choice(len(real), constraints.PMSE_RATIO_ROWS, replace=False))]
    ss = synth.iloc[np.sort(rng.choice(len(synth), constraints.PMSE_RATIO_ROWS, replace=False))]
    by_rule = propensity_metrics(rs, ss, interactions=True, seed=rng, categorical=cats, max_rows=len(rs) + len(ss))
    assert set(shown.values()) == {by_rule.pmse_ratio}, shown
    assert by_rule.n_used == 2 * constraints.PMSE_RATIO_ROWS


def test_pmse_ratio_levels_follow_the_stated_thresholds():
    assert constraints.PMSE_RATIO_GOOD == 3 and constraints.PMSE_RATIO_ACCEPTABLE == 10
    assert [pmse_ratio_level(r) for r in (1.0, 2.99, 3.0, 9.9, 10.0, np.inf, np.nan)] == \
        ["good", "good", "fair", "fair", "poor", "poor", "unknown"]


def test_verdict_names_the_worst_column_and_pair_by_hand():
    # Real: x uniform on 0..99, y = x (correlation 1), g balanced a/b. Synthetic: x kept, y shuffled
    # (correlation ~0), g all "a" (TV 0.5). The worst column is g (TV 0.5 > KS of y, which keeps its marginal).
    rng = np.random.default_rng(0)
    x = np.arange(400) % 100 * 1.0
    real = pd.DataFrame({"x": x, "y": x.copy(), "g": np.where(np.arange(400) % 2 == 0, "a", "b")})
    synth = pd.DataFrame({"x": x, "y": rng.permutation(x), "g": ["a"] * 400})
    prop = headline_propensity(real, synth, seed=0, categorical=["g"])
    summary = utility_summary(real, synth, categorical=["g"])
    v = utility_verdict(prop, summary)
    assert v.level == pmse_ratio_level(prop.pmse_ratio) == "poor"
    assert v.lines[0].startswith(f"pMSE ratio {prop.pmse_ratio:.3g} on 800 stacked rows: poor")
    assert "furthest from the real data: g (TV 0.500)" in v.lines[1]
    real_corr = 1.0
    synth_corr = np.corrcoef(x, synth["y"])[0, 1]
    assert f"the correlation of y and x moved most ({real_corr:.2f} → {synth_corr:.2f})" in v.lines[2]


def test_interval_plot_scales_each_coefficient_by_its_real_interval():
    # Real interval [8, 12] (estimate 10, half-width 2): real at −1…1; synthetic 13 in [11, 15] sits at
    # (13 − 10)/2 = 1.5 in [0.5, 2.5]; β = 0 falls at (0 − 10)/2 = −5. A term without a real interval is left out.
    table = pd.DataFrame({"term": ["(Intercept)", "x", "z"], "est_real": [10.0, 1.0, 2.0],
                          "lo_real": [8.0, 0.5, np.nan], "hi_real": [12.0, 1.5, np.nan],
                          "est_synth": [13.0, 1.0, 2.0], "lo_synth": [11.0, 0.0, 1.0], "hi_synth": [15.0, 2.0, 3.0]})
    fig = core.plots.ci_forest_figure(table)
    real, synth, zero = fig.data
    assert list(fig.layout.yaxis.ticktext) == ["x", "(Intercept)"]  # bottom to top: the intercept on top
    # x: real 1 in [0.5, 1.5] → 0 in −1…1; synthetic 1 in [0, 2] → 0 in [−2, 2]; β = 0 → (0 − 1)/0.5 = −2.
    assert list(real.x) == [0.0, 0.0] and list(real.error_x.array) == [1.0, 1.0]
    assert list(synth.x) == [0.0, 1.5]
    assert list(synth.error_x.arrayminus) == [2.0, 1.0] and list(synth.error_x.array) == [2.0, 1.0]
    assert list(zero.x) == [-2.0, -5.0]


def test_the_pmse_ratio_ceiling_by_hand_and_on_a_separable_synthesis():
    # 300 real rows and 6 synthetic ones far from them: the logit separates them, pMSE ≈ c(1 − c), and the ratio
    # sits at its ceiling N/((k − 1)(1 − c)), k the fit's parameters (main effects and pairwise interactions of
    # a number and two categories of 10 and 5 levels: dozens), so the ceiling is under 10.
    rng = np.random.default_rng(3)
    real = pd.DataFrame({"x": rng.normal(0, 1, 300), "g": rng.choice(list("abcdefghij"), 300),
                         "h": rng.choice(list("vwxyz"), 300)})
    synth = pd.DataFrame({"x": np.full(6, 50.0), "g": list("abcdef"), "h": list("vwxyzv")})
    prop = propensity_metrics(real, synth, interactions=True, seed=0)
    c = 6 / 306
    assert prop.ratio_ceiling == pytest.approx(306 / ((prop.n_params - 1) * (1 - c)), rel=1e-12)
    assert prop.pmse_ratio <= prop.ratio_ceiling * (1 + 1e-9)
    assert prop.pmse_ratio == pytest.approx(prop.ratio_ceiling, rel=0.05)  # separable: at the ceiling
    assert prop.capped and any("cannot exceed" in n for n in prop.notes)
    # The verdict does not read such a ratio as acceptable.
    summary = utility_summary(real, synth)
    v = utility_verdict(prop, summary)
    assert v.level == "unknown" and "cannot tell fair from poor" in v.lines[0]
