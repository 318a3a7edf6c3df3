"""Validation of the utility metrics added for issue 4, each against an independent computation.

Expected values come from arithmetic written out in the comments, from
scipy (moments, KS, chi-square, t quantiles), numpy (correlations) or
statsmodels (regressions fitted again here), never from the code under test.
"""

from __future__ import annotations

import doctest
import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats
from sklearn.metrics import roc_auc_score

import dpsynth_core as core
from dpsynth_core.metric_info import METRICS
from dpsynth_core.rumap import score
from dpsynth_core.utility import (
    COMBINING_CAVEAT,
    DISCRIMINATORS,
    association_fit,
    combine_implicates,
    compare_columns,
    correlation_fit,
    cramers_v,
    hellinger_distance,
    matrix_fit,
    metric_tile,
    missing_shares,
    moments_table,
    pegs_distances,
    propensity_metrics,
    propensity_tiles,
    regression_ci_overlap,
    run_discriminator,
    tv_distance,
    utility_summary,
)
from dpsynth_core.utility import bivariate, combining, marginals, pegs_distance, report


@pytest.fixture(scope="module")
def penguins():
    return core.load_bundled("penguins")


# ------------------------------------------------------- TV and Hellinger


def test_tv_and_hellinger_by_hand():
    # p = (x .25, y .75, z 0), q = (x 0, y .5, z .5).
    a, b = ["x", "y", "y", "y"], ["y", "z"]
    # TV = ½(|.25 − 0| + |.75 − .5| + |0 − .5|) = ½(.25 + .25 + .5) = .5
    assert tv_distance(a, b) == pytest.approx(0.5)
    # H² = ½[(√.25 − 0)² + (√.75 − √.5)² + (0 − √.5)²]
    #    = ½[.25 + (0.8660254 − 0.7071068)² + .5] = ½(.25 + .0252551 + .5) = .3876276
    assert hellinger_distance(a, b) == pytest.approx(math.sqrt(0.3876276), abs=1e-7)
    assert tv_distance(a, a) == 0.0 and hellinger_distance(a, a) == 0.0
    # Disjoint supports: both reach their maximum, 1.
    assert tv_distance(["u", "v"], ["w"]) == 1.0
    assert hellinger_distance(["u", "v"], ["w"]) == pytest.approx(1.0)


def test_missing_is_a_level_and_integral_floats_are_one_level():
    # Real: 1, 2, missing (1/3 each); synthetic: 1.0, 1.0, 2.0 (the same labels 1 and 2).
    real = pd.Series([1, 2, None], dtype="object")
    synth = pd.Series([1.0, 1.0, 2.0])
    # TV = ½(|1/3 − 2/3| + |1/3 − 1/3| + |1/3 − 0|) = ½(1/3 + 0 + 1/3) = 1/3
    assert tv_distance(real, synth) == pytest.approx(1 / 3)


def test_column_distances_contract(penguins):
    df, schema = penguins
    synth = core.synthesize(df, "independent", epsilon=1.0, schema=schema, seed=1).data
    cats = [c for c in schema.used if schema[c].kind == "categorical"]
    real, fake = df[schema.used], synth[schema.used]
    out = core.column_distances(real, fake, categorical=cats)
    assert list(out.columns) == ["ks", "tv", "hellinger"]
    assert list(out.index) == schema.used
    for col in schema.used:
        if col in cats:
            assert np.isnan(out.loc[col, "ks"])
            shares_r = real[col].astype(str).value_counts(normalize=True, dropna=False)
            shares_s = fake[col].astype(str).value_counts(normalize=True, dropna=False)
            p, q = shares_r.align(shares_s, fill_value=0.0)
            assert out.loc[col, "tv"] == pytest.approx(0.5 * np.abs(p - q).sum())
            assert out.loc[col, "hellinger"] == pytest.approx(np.sqrt(0.5 * ((np.sqrt(p) - np.sqrt(q)) ** 2).sum()))
        else:
            assert np.isnan(out.loc[col, "tv"]) and np.isnan(out.loc[col, "hellinger"])
            expected = stats.ks_2samp(real[col].dropna(), fake[col].dropna()).statistic
            assert out.loc[col, "ks"] == pytest.approx(expected, abs=1e-12)


# -------------------------------------------------------------- moments


def test_moments_match_scipy():
    rng = np.random.default_rng(0)
    real = pd.DataFrame({"x": rng.gamma(2.0, 3.0, 500), "z": rng.poisson(0.7, 500).astype(float)})
    synth = pd.DataFrame({"x": rng.gamma(3.0, 2.0, 400), "z": rng.poisson(1.5, 400).astype(float)})
    synth.loc[:9, "x"] = np.nan
    table = moments_table(real, synth, percentiles=(5, 50, 95))
    for col in ("x", "z"):
        for who, frame in (("real", real), ("synthetic", synth)):
            x = frame[col].dropna().to_numpy()
            row = table.loc[(col, who)]
            assert row["n"] == x.size
            assert row["mean"] == pytest.approx(np.mean(x))
            assert row["sd"] == pytest.approx(stats.tstd(x))
            assert row["skewness"] == pytest.approx(stats.skew(x))
            assert row["kurtosis"] == pytest.approx(stats.kurtosis(x))  # excess, Fisher
            assert row["zero_share"] == pytest.approx(np.count_nonzero(x == 0) / x.size)
            for q in (5, 50, 95):
                assert row[f"p{q}"] == pytest.approx(stats.scoreatpercentile(x, q))


def test_constant_and_empty_columns_get_notes_not_silent_gaps():
    real = pd.DataFrame({"c": [2.5] * 6, "e": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "g": list("aabbcc")})
    synth = pd.DataFrame({"c": [2.5] * 6, "e": [np.nan] * 6, "g": list("aaaaaa")})
    comp = compare_columns(real, synth)
    t = comp.moments
    assert np.isnan(t.loc[("c", "real"), "skewness"]) and t.loc[("c", "real"), "sd"] == 0.0
    assert np.isnan(t.loc[("e", "synthetic"), "mean"])
    assert np.isnan(comp.distances.loc["e", "ks"])
    notes = comp.notes
    assert set(notes["column"]) == {"c", "e"}
    assert any("constant" in r for r in notes.loc[notes["column"] == "c", "reason"])
    assert any("all missing" in r for r in notes.loc[notes["column"] == "e", "reason"])
    # And the summary tiles say why instead of showing a bare NaN.
    summary = utility_summary(real, synth)
    assert any("e: KS, moments" in n for n in summary.column_notes())


def test_missing_shares_by_hand():
    real = pd.DataFrame({"a": [1.0, np.nan, 3.0, np.inf], "b": ["x", None, None, "y"]})
    synth = pd.DataFrame({"a": [1.0, 2.0], "b": ["x", None]})
    out = missing_shares(real, synth)
    # a: NaN and inf are missing → 2/4 real, 0/2 synthetic; b: 2/4 and 1/2.
    assert out.loc["a"].tolist() == [0.5, 0.0, -0.5]
    assert out.loc["b"].tolist() == [0.5, 0.5, 0.0]


# ---------------------------------------------------------- correlation fit


def test_correlation_fit_course_example():
    # Course example: lower-triangle differences 0.15, 0.65, −0.1.
    labels = list("abc")
    real = pd.DataFrame([[1, .5, .2], [.5, 1, .1], [.2, .1, 1]], index=labels, columns=labels)
    diff = pd.DataFrame([[0, .15, .65], [.15, 0, -.1], [.65, -.1, 0]], index=labels, columns=labels)
    fit = matrix_fit(real, real + diff)
    # MAE = (.15 + .65 + .1)/3 = .3; RMSE = √((.0225 + .4225 + .01)/3) = √.151667 = .389444
    assert fit.mae == pytest.approx(0.3)
    assert fit.rmse == pytest.approx(math.sqrt(0.455 / 3))
    assert sorted(fit.pairs["difference"].round(10)) == [-0.1, 0.15, 0.65]


def test_correlation_fit_hand_worked_3x3_data():
    # Real: y = 2x (r = 1); z = (1, 0, 0, 1) is orthogonal to the centred x
    # (−1.5, −.5, .5, 1.5)·(.5, −.5, −.5, .5) = −.75 + .25 − .25 + .75 = 0, so r(x, z) = r(y, z) = 0.
    real = pd.DataFrame({"x": [1.0, 2, 3, 4], "y": [2.0, 4, 6, 8], "z": [1.0, 0, 0, 1]})
    # Synthetic: y reversed (r = −1); z = (0, 0, 1, 1): centred (−.5, −.5, .5, .5),
    # x·z = .75 + .25 + .25 + .75 = 2, |x|² = 5, |z|² = 1, r(x, z) = 2/√5; r(y, z) = −2/√5.
    synth = pd.DataFrame({"x": [1.0, 2, 3, 4], "y": [4.0, 3, 2, 1], "z": [0.0, 0, 1, 1]})
    fit = correlation_fit(real, synth)
    r = 2 / math.sqrt(5)
    # Differences synth − real: (y, x) −1 − 1 = −2; (z, x) r − 0; (z, y) −r − 0.
    assert fit.difference.loc["y", "x"] == pytest.approx(-2.0)
    assert fit.difference.loc["z", "x"] == pytest.approx(r)
    assert fit.difference.loc["x", "z"] == pytest.approx(r)  # symmetric
    assert fit.mae == pytest.approx((2 + 2 * r) / 3)
    assert fit.rmse == pytest.approx(math.sqrt((4 + 2 * r * r) / 3))
    np.testing.assert_allclose(fit.real.to_numpy(), np.corrcoef(real.to_numpy().T), atol=1e-12)


def test_correlation_fit_explains_constant_columns_and_skips_categorical():
    real = pd.DataFrame({"x": [1.0, 2, 3, 4], "y": [1.0, 3, 2, 4], "k": [5.0] * 4, "g": list("abab")})
    fit = correlation_fit(real, real)
    assert list(fit.difference.columns) == ["x", "y", "k"]
    assert fit.mae == 0.0  # the defined pair only
    assert any("k" in n and "constant" in n for n in fit.notes)
    assert np.isnan(correlation_fit(real[["x", "g"]], real[["x", "g"]]).mae)


# ---------------------------------------------------------------- Cramér's V


def test_cramers_v_by_hand_and_against_scipy_chi_square():
    # 2×2 table [[20, 10], [10, 20]]: φ = (20·20 − 10·10)/√(30·30·30·30) = 300/900 = 1/3.
    x = ["a"] * 30 + ["b"] * 30
    y = ["u"] * 20 + ["v"] * 10 + ["u"] * 10 + ["v"] * 20
    assert cramers_v(x, y) == pytest.approx(1 / 3)
    rng = np.random.default_rng(3)
    a = rng.choice(list("pqr"), 400)
    b = np.where(rng.random(400) < 0.4, a, rng.choice(list("wxyz"), 400))
    table = pd.crosstab(a, b).to_numpy()
    chi2 = stats.chi2_contingency(table, correction=False)[0]
    expected = math.sqrt(chi2 / (table.sum() * (min(table.shape) - 1)))
    assert cramers_v(a, b) == pytest.approx(expected)
    # Missing values are dropped pairwise; a single level leaves V undefined.
    assert cramers_v(pd.Series(list(a) + [None]), pd.Series(list(b) + ["w"])) == pytest.approx(expected)
    assert np.isnan(cramers_v(["a", "a"], ["u", "v"]))


def test_association_fit_uses_cramers_v(penguins):
    df, schema = penguins
    cats = [c for c in schema.used if schema[c].kind == "categorical"]
    synth = core.synthesize(df, "independent", epsilon=1.0, schema=schema, seed=2).data
    fit = association_fit(df[schema.used], synth[schema.used], categorical=cats)
    assert list(fit.difference.columns) == cats
    for a, b in [("species", "island"), ("sex", "year")]:
        assert fit.real.loc[a, b] == pytest.approx(cramers_v(df[a], df[b]))
        assert fit.difference.loc[a, b] == pytest.approx(cramers_v(synth[a], synth[b]) - cramers_v(df[a], df[b]))
    # Independent marginals destroy the species-island association.
    assert fit.difference.loc["species", "island"] < -0.3


# ------------------------------------------------------- combining rules


def test_combining_rules_hand_worked():
    # Three implicates of two quantities.
    q = [[1.0, 10.0], [2.0, 12.0], [3.0, 14.0]]
    v = [[0.4, 1.0], [0.5, 1.0], [0.6, 1.0]]
    # q̄ = (2, 12); b = var(1, 2, 3) = 1 and var(10, 12, 14) = 4; v̄ = (.5, 1).
    full = combine_implicates(q, v)
    np.testing.assert_allclose(full.estimate, [2.0, 12.0])
    np.testing.assert_allclose(full.between, [1.0, 4.0])
    np.testing.assert_allclose(full.within, [0.5, 1.0])
    # T_f = (1 + 1/3) b − v̄ = (4/3 − .5, 16/3 − 1) = (.833333, 4.333333)
    np.testing.assert_allclose(full.raw_variance, [4 / 3 - 0.5, 16 / 3 - 1])
    np.testing.assert_allclose(full.variance, full.raw_variance)
    # ν_f = (m − 1)(1 − v̄/((1 + 1/m) b))² = 2(1 − .375)² = .78125 and 2(1 − .1875)² = 1.3203125
    np.testing.assert_allclose(full.df, [0.78125, 1.3203125])
    half = stats.t.ppf(0.975, [0.78125, 1.3203125]) * np.sqrt([4 / 3 - 0.5, 16 / 3 - 1])
    np.testing.assert_allclose(full.lo, [2 - half[0], 12 - half[1]])
    np.testing.assert_allclose(full.hi, [2 + half[0], 12 + half[1]])
    # Partially synthetic: T_p = b/m + v̄ = (1/3 + .5, 4/3 + 1); ν_p = 2(1 + 3v̄/b)² = 12.5, 6.125.
    part = combine_implicates(q, v, partially_synthetic=True)
    np.testing.assert_allclose(part.variance, [1 / 3 + 0.5, 4 / 3 + 1])
    np.testing.assert_allclose(part.df, [12.5, 6.125])
    half = stats.t.ppf(0.95, [12.5, 6.125]) * np.sqrt([1 / 3 + 0.5, 4 / 3 + 1])
    np.testing.assert_allclose(combine_implicates(q, v, partially_synthetic=True, level=0.9).hi,
                               [2 + half[0], 12 + half[1]])


def test_negative_t_f_is_adjusted():
    # q = (1, 1.1, .9): b = .01, v̄ = 1, T_f = (4/3)(.01) − 1 = −.98667 < 0
    # → T_f* = 0 + (n_s/n) v̄ = (500/1000)·1 = .5, normal reference.
    c = combine_implicates([1.0, 1.1, 0.9], [1.0, 1.0, 1.0], n_real=1000, n_synth=500)
    assert c.raw_variance[0] == pytest.approx(4 / 3 * 0.01 - 1)
    assert c.variance[0] == pytest.approx(0.5) and bool(c.adjusted[0]) and np.isinf(c.df[0])
    assert c.hi[0] == pytest.approx(1.0 + stats.norm.ppf(0.975) * math.sqrt(0.5))
    with pytest.raises(ValueError, match="n_real and n_synth"):
        combine_implicates([1.0, 1.1, 0.9], [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="at least 2"):
        combine_implicates([1.0], [1.0])


@pytest.mark.parametrize("partial", [False, True])
def test_regression_with_implicates_uses_the_rules(penguins, partial):
    df, schema = penguins
    real = df.dropna().reset_index(drop=True)
    res = core.synthesize(real, "bootstrap", schema=schema, seed=5, implicates=3)
    predictors = ["flipper_length_mm", "species"]
    out = regression_ci_overlap(real, list(res.implicates), "body_mass_g", predictors,
                                partially_synthetic=partial)
    fits = [sm.OLS(d["body_mass_g"].astype(float),
                   sm.add_constant(pd.get_dummies(d[predictors], drop_first=True, dtype=float))).fit()
            for d in res.implicates]
    q = np.array([f.params.to_numpy() for f in fits])
    v = np.array([f.bse.to_numpy() ** 2 for f in fits])
    qbar, b, vbar = q.mean(axis=0), q.var(axis=0, ddof=1), v.mean(axis=0)
    np.testing.assert_allclose(out.table["est_synth"], qbar, rtol=1e-8)
    if partial:
        T, nu = b / 3 + vbar, 2 * (1 + 3 * vbar / b) ** 2
    else:
        T = (1 + 1 / 3) * b - vbar
        nu = 2 * (1 - vbar / ((1 + 1 / 3) * b)) ** 2
        # Bootstrap implicates vary little, so T_f < 0 is likely: the adjustment then applies.
        neg = T < 0
        T = np.where(neg, len(res.data) / len(real) * vbar, T)
        nu = np.where(neg, np.inf, nu)
    half = np.where(np.isinf(nu), stats.norm.ppf(0.975), stats.t.ppf(0.975, np.where(np.isinf(nu), 1, nu)))
    np.testing.assert_allclose(out.table["hi_synth"], qbar + half * np.sqrt(T), rtol=1e-7)
    assert out.m == 3 and out.rule == ("partially" if partial else "fully")
    assert any(COMBINING_CAVEAT in n for n in out.notes)
    assert list(out.combining.index) == list(out.table["term"])


# ---------------------------------------------------------- PeGS distances


def test_pegs_marginal_and_conditional_by_hand():
    real = pd.DataFrame({"g": list("aabb"), "h": list("uuvv")})
    synth = pd.DataFrame({"g": list("abbb"), "h": list("uuvv")})
    d = pegs_distances(real, synth)
    # Marginal of g: p = (.5, .5), q = (.25, .75): (.25)² + (.25)² = .125; h has the same shares: 0.
    assert d.marginal.tolist() == pytest.approx([0.125, 0.0])
    # Synthetic pairs: (a,u) (b,u) (b,v) (b,v).
    # h given g: g = a: real P(u|a) = 1, synth 1 → 0; g = b: real (u 0, v 1),
    # synth (u 1/3, v 2/3) → (1/3)² + (1/3)² = 2/9.
    assert d.conditional.loc["h", "g"] == pytest.approx(2 / 9)
    # g given h: h = u: real (a 1, b 0), synth (.5, .5) → .25 + .25 = .5; h = v: both (0, 1) → 0.
    assert d.conditional.loc["g", "h"] == pytest.approx(0.5)
    assert np.isnan(d.conditional.loc["g", "g"])
    assert d.conditional_mean == pytest.approx((2 / 9 + 0.5) / 2)


def test_pegs_skips_conditioning_levels_seen_in_one_dataset():
    real = pd.DataFrame({"g": list("aabc"), "h": list("uvuv")})
    synth = pd.DataFrame({"g": list("aabb"), "h": list("uvvu")})
    d = pegs_distances(real, synth)
    # Level c of g is absent from synth: left out of "h given g", and said so.
    assert d.skipped.loc["h", "g"] == 1
    # g = a: real (u .5, v .5) vs synth (.5, .5) → 0; g = b: real (u 1, v 0) vs synth (.5, .5) → .5.
    assert d.conditional.loc["h", "g"] == pytest.approx(0.5)
    assert any("h given g (1)" in n for n in d.notes)


def test_pegs_numeric_columns_use_shared_bins():
    rng = np.random.default_rng(4)
    real = pd.DataFrame({"x": rng.normal(size=300)})
    synth = pd.DataFrame({"x": rng.normal(0.5, size=200)})
    edges = np.histogram_bin_edges(np.r_[real["x"], synth["x"]], bins=8)
    p = np.histogram(real["x"], edges)[0] / 300
    q = np.histogram(synth["x"], edges)[0] / 200
    assert pegs_distances(real, synth, bins=8).marginal["x"] == pytest.approx(np.sum((p - q) ** 2))


def test_pegs_conditionals_with_hundreds_of_levels_by_crosstab():
    """Codes are kept in the smallest integers that hold them (one byte for b, two for a's 300 levels); the
    conditional distances are pandas' crosstabs' all the same (the joint codes of b given a pass 255)."""
    rng = np.random.default_rng(12)
    real = pd.DataFrame({"a": rng.integers(0, 300, 4000).astype(str), "b": rng.integers(0, 40, 4000).astype(str)})
    synth = pd.DataFrame({"a": rng.integers(0, 300, 3000).astype(str), "b": rng.integers(0, 40, 3000).astype(str)})
    d = pegs_distances(real, synth)

    def conditional(x, y):  # levels of y seen in both; Σ (P_s(x | y) - P_r(x | y))² over those and every x
        tr = pd.crosstab(real[x], real[y], normalize="columns")
        ts = pd.crosstab(synth[x], synth[y], normalize="columns")
        levels, both = tr.index.union(ts.index), tr.columns.intersection(ts.columns)
        tr, ts = (t.reindex(index=levels, columns=both, fill_value=0.0) for t in (tr, ts))
        return float(((ts - tr) ** 2).to_numpy().sum())

    assert d.conditional.loc["a", "b"] == pytest.approx(conditional("a", "b"), rel=1e-12)
    assert d.conditional.loc["b", "a"] == pytest.approx(conditional("b", "a"), rel=1e-12)
    assert [pegs_distance.shared_codes(real[c], synth[c], numeric=False, bins=20)[0].dtype for c in "ab"] == \
        [np.uint16, np.uint8]


def test_pegs_regression_distance_by_hand():
    x = np.arange(10.0)
    real = pd.DataFrame({"x": x, "y": 1 + 2 * x + 0.01 * np.sin(x)})
    synth = pd.DataFrame({"x": x, "y": 2 + 3 * x + 0.01 * np.cos(x)})
    out = regression_ci_overlap(real, synth, "y", ["x"])
    br = sm.OLS(real["y"], sm.add_constant(real["x"])).fit().params.to_numpy()
    bs = sm.OLS(synth["y"], sm.add_constant(synth["x"])).fit().params.to_numpy()
    # ≈ |2 − 1|/1 + |3 − 2|/2 = 1.5; exactly Σ |(β_s − β_o)/β_o| of the fitted values.
    assert out.coef_distance == pytest.approx(np.sum(np.abs((bs - br) / br)), rel=1e-9)
    assert out.coef_distance == pytest.approx(1.5, abs=0.02)


# -------------------------------------------------------------- propensity


def test_held_out_scores_match_a_statsmodels_fit_on_the_training_rows():
    rng = np.random.default_rng(5)
    n = 600
    real = pd.DataFrame({"x": rng.normal(size=n), "g": rng.choice(["a", "b"], n)})
    synth = pd.DataFrame({"x": rng.normal(0.4, size=n), "g": rng.choice(["a", "b"], n, p=[0.3, 0.7])})
    res = propensity_metrics(real, synth, seed=1, holdout=0.25)
    stacked = pd.concat([real, synth], ignore_index=True)
    t = np.r_[np.zeros(n), np.ones(n)]
    X = sm.add_constant(pd.get_dummies(stacked, columns=["g"], drop_first=True, dtype=float))
    held = res.score_rows
    assert len(held) == len(res.scores) == 300 and res.n_fit == 900
    assert (t[held] == 1).sum() == 150  # a quarter of each group
    train = np.setdiff1d(np.arange(2 * n), held)
    fit = sm.Logit(t[train], X.iloc[train]).fit(disp=0, method="newton", tol=1e-12)
    p = fit.predict(X.iloc[held]).to_numpy()
    np.testing.assert_allclose(res.scores, p, rtol=1e-5, atol=1e-8)
    c = 450 / 900  # share of synthetic rows among those fitted
    assert res.pmse == pytest.approx(np.mean((p - c) ** 2), rel=1e-5)
    assert res.pmse_null == pytest.approx((3 - 1) * (1 - c) ** 2 * c / 900)
    assert res.auc == pytest.approx(roc_auc_score(t[held], p), abs=1e-6)
    assert res.specks == pytest.approx(stats.ks_2samp(p[t[held] == 0], p[t[held] == 1]).statistic, abs=1e-6)


def test_held_out_null_and_memorisation():
    # Same distribution: over seeds the held-out logit ratio averages like the
    # in-sample one (about 1/(1 − c) = 2 for independent draws, see
    # PropensityResult.pmse_null); stated slack ±0.5 over 20 seeds.
    ins, outs = [], []
    for s in range(20):
        rng = np.random.default_rng(100 + s)
        real = pd.DataFrame({"x": rng.normal(size=500), "y": rng.normal(size=500)})
        synth = pd.DataFrame({"x": rng.normal(size=500), "y": rng.normal(size=500)})
        ins.append(propensity_metrics(real, synth, seed=s).pmse_ratio)
        outs.append(propensity_metrics(real, synth, seed=s, holdout=0.3).pmse_ratio)
    assert np.mean(outs) == pytest.approx(2.0, abs=0.5) and np.mean(ins) == pytest.approx(2.0, abs=0.5)
    # A tree that memorises noise looks better than chance in sample but not held out.
    rng = np.random.default_rng(7)
    real = pd.DataFrame({"x": rng.normal(size=400), "y": rng.normal(size=400)})
    synth = pd.DataFrame({"x": rng.normal(size=400), "y": rng.normal(size=400)})
    inside = propensity_metrics(real, synth, model="cart", seed=0, permutations=2)
    held = propensity_metrics(real, synth, model="cart", seed=0, permutations=2, holdout=0.5)
    assert inside.auc > 0.6 and abs(held.auc - 0.5) < 0.08
    with pytest.raises(ValueError, match="holdout"):
        propensity_metrics(real, synth, holdout=0.95)


def test_cart_null_of_zero_is_explained_not_shown_as_inf():
    rng = np.random.default_rng(8)
    n = 20_000
    real = pd.DataFrame({"x": rng.normal(size=n), "y": rng.normal(size=n)})
    synth = pd.DataFrame({"x": rng.normal(0.3, size=n), "y": rng.normal(size=n)})
    res = propensity_metrics(real, synth, model="cart", seed=0, permutations=2)
    assert res.pmse_null == 0.0 and math.isinf(res.pmse_ratio) and res.pmse > 0
    assert "not defined" in res.ratio_note and res.ratio_note in res.notes
    # The floor cp·c(1 − c) = .001·.25: any tree that splits reaches at least that (pMSE = half the Gini gain).
    assert f"{res.pmse / 0.00025:,.0f} times" in res.ratio_note
    tiles = {t.name: t for t in propensity_tiles(res)}
    assert tiles["pmse_ratio"].text == "not defined" and tiles["pmse_ratio"].note == res.ratio_note
    assert all("inf" not in t.text for t in tiles.values())


def test_discriminator_choices():
    assert list(DISCRIMINATORS)[0] == "logit_interactions"  # the headline sees lost associations
    assert "blind" in DISCRIMINATORS["logit_main"].label
    rng = np.random.default_rng(9)
    # An independent-marginals copy: same marginals, association lost.
    x = rng.normal(size=2000)
    real = pd.DataFrame({"x": x, "y": x + 0.3 * rng.normal(size=2000)})
    synth = pd.DataFrame({"x": rng.permutation(real["x"]), "y": rng.permutation(real["y"])})
    main = run_discriminator(real, synth, "logit_main", seed=0)
    inter = run_discriminator(real, synth, "logit_interactions", seed=0)
    assert main.auc < 0.56 and inter.auc > 0.7
    # A greedy tree needs a first split with some gain: with marginals matched
    # exactly (a permutation) there is none, so it sees nothing either; the
    # description on the page says so.
    cart = run_discriminator(real, synth, "cart", seed=0, permutations=2)
    assert cart.auc == 0.5 and "greedy" in DISCRIMINATORS["cart"].description
    with pytest.raises(ValueError, match="discriminator"):
        run_discriminator(real, synth, "forest")


# --------------------------------------------------- registry and R-U map


# Direction and range of these metrics, derived by hand from their formulas (a Hellinger or TV distance is
# in [0, 1], a difference of correlations in [0, 2], a sum of two squared share gaps in [0, 2], ...).
DECLARED_BY_HAND = {
    "tv_mean": ("minimize", 0.0, 1.0), "hellinger_mean": ("minimize", 0.0, 1.0),
    "corr_mae": ("minimize", 0.0, 2.0), "corr_rmse": ("minimize", 0.0, 2.0),
    "cramers_v_mae": ("minimize", 0.0, 1.0), "pegs_marginal": ("minimize", 0.0, 2.0),
    "pegs_conditional": ("minimize", 0.0, math.inf), "coef_distance": ("minimize", 0.0, math.inf),
    "sso": ("maximize", 0.0, 1.0),
}


@pytest.mark.parametrize("name", sorted(n for n, m in METRICS.items() if m.kind == "utility"))
def test_utility_metrics_declare_direction_and_range(name):
    info = METRICS[name]
    assert info.kind == "utility" and info.reading and info.section
    assert info.lower <= info.best <= info.upper


@pytest.mark.parametrize("name", sorted(DECLARED_BY_HAND))
def test_declared_direction_and_range_match_the_formulas(name):
    info = METRICS[name]
    assert (info.goal, info.lower, info.upper) == DECLARED_BY_HAND[name]


def test_pmse_ratio_reading_gives_the_thresholds():
    assert "1 means indistinguishable; under 3 is good, under 10 acceptable" in METRICS["pmse_ratio"].reading


def test_new_scorers_on_the_ru_map(penguins):
    df, schema = penguins
    synth = core.synthesize(df, "independent", epsilon=1.0, schema=schema, seed=3).data
    names = ["corr_mae", "cramers_v_mae", "tv_mean", "hellinger_mean", "pegs_marginal", "pegs_conditional"]
    assert all(METRICS[n].on_map for n in names)
    out = score(df, synth, schema=schema, seed=0, metrics=names)
    cats = [c for c in schema.used if schema[c].kind == "categorical"]
    s = utility_summary(df[schema.used], synth[schema.used], categorical=cats)
    assert out["corr_mae"] == pytest.approx(s.correlation.mae)
    assert out["tv_mean"] == pytest.approx(s.columns.tv_mean)
    assert out["pegs_conditional"] == pytest.approx(s.pegs.conditional_mean)
    # The original data scores perfectly on each.
    assert all(v == pytest.approx(0.0) for v in score(df, df, schema=schema, seed=0, metrics=names).values())


def test_contract_names_are_exported():
    for name in ("column_distances", "correlation_fit", "regression_ci_overlap", "propensity_metrics"):
        assert name in core.__all__ and callable(getattr(core, name))
    fit = core.correlation_fit(pd.DataFrame({"a": [1.0, 2, 3], "b": [1.0, 3, 2]}),
                               pd.DataFrame({"a": [1.0, 2, 3], "b": [1.0, 2, 3]}))
    assert {"mae", "rmse", "difference"} <= set(dir(fit)) and isinstance(fit.difference, pd.DataFrame)


def test_tile_text_never_shows_inf_or_nan():
    assert metric_tile("corr_mae", float("nan")).text == "not computed"
    assert metric_tile("corr_mae", float("nan")).note
    assert metric_tile("pmse_ratio", float("inf"), "why").text == "not defined"
    assert metric_tile("auc", 0.61234).text == "0.6123"


# ------------------------------------------------------------------- plots


def test_figures_escape_user_text():
    tag = "<img src=x onerror=alert(1)>"
    real = pd.DataFrame({tag: [1.0, 2, 3, 4, 5], "n": [2.0, 1, 4, 3, 5], "g": ["a", tag, "a", "b", "b"]})
    synth = real.sample(frac=1.0, random_state=0).reset_index(drop=True)
    s = utility_summary(real, synth)
    prop = propensity_metrics(real, synth, seed=0)
    figs = [
        core.plots.correlation_difference_figure(s.correlation),
        core.plots.missing_figure(s.columns.missing),
        core.plots.importance_figure(prop.importance),
        core.plots.histogram_grid_figure({c: core.histogram_data(real, synth, c) for c in real.columns}),
        core.plots.propensity_scores_figure(prop),
        core.plots.propensity_roc_figure(prop),
    ]
    for i, fig in enumerate(figs):
        text = fig.to_json()
        assert "<img" not in text and "\\u003cimg" not in text
        if i < 4:  # the figures that label columns, levels or design terms
            assert "&lt;img src=x onerror=alert(1)&gt;" in text
    grid = figs[3]
    assert len([t for t in grid.data if t.name == "real"]) == 3


@pytest.mark.parametrize("module", [marginals, bivariate, combining, pegs_distance, report])
def test_docstring_examples(module):
    failures, _ = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert failures == 0
