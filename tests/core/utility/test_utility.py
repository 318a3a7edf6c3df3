"""Tests of dpsynth_core.utility against independent computations.

Every expected value comes from somewhere else than the code under test:
scipy's ks_2samp, sklearn's roc_auc_score, statsmodels' unpenalised Logit and
OLS fitted on design matrices built here with pandas, or arithmetic written
out in the comment.
"""

from __future__ import annotations

import doctest

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats
from sklearn.metrics import roc_auc_score
from sklearn.tree import DecisionTreeClassifier

from dpsynth_core.metric_info import METRICS
from dpsynth_core.utility import (
    EcdfData,
    PropensityResult,
    ci_overlap,
    ecdf_data,
    histogram_data,
    ks_mean,
    ks_statistic,
    propensity_metrics,
    regression_ci_overlap,
)
from dpsynth_core.utility import design as design_module
from dpsynth_core.utility import propensity as propensity_module
from dpsynth_core.utility import regression as regression_module
from dpsynth_core.utility import univariate as univariate_module
from tests.conftest import DATA



@pytest.fixture(scope="module")
def penguins() -> pd.DataFrame:
    return pd.read_csv(DATA / "penguins.csv")


def _bootstrap(frame: pd.DataFrame, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return frame.iloc[rng.integers(0, len(frame), len(frame))].reset_index(drop=True)


def _mixed(n: int, rng: np.random.Generator, *, shift: float = 0.0) -> pd.DataFrame:
    """Two numeric columns and one three-level text column."""
    x1 = rng.normal(shift, 1.0, n)
    return pd.DataFrame(
        {
            "x1": x1,
            "x2": 0.5 * x1 + rng.normal(0.0, 1.0, n) * (1 + shift),
            "g": rng.choice(["a", "b", "c"], size=n, p=[0.5 - shift / 4, 0.3, 0.2 + shift / 4]),
        }
    )


# --------------------------------------------------------------------- KS


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ks_statistic_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    # Integers give ties, the case where a hand-rolled KS most often slips.
    a = rng.integers(0, 20, 300).astype(float)
    b = rng.integers(2, 25, 200).astype(float)
    a[rng.choice(300, 15, replace=False)] = np.nan
    expected = stats.ks_2samp(a[~np.isnan(a)], b).statistic
    assert ks_statistic(a, b) == pytest.approx(expected, abs=1e-12)
    assert ks_statistic(pd.Series(a), pd.Series(b)) == pytest.approx(expected, abs=1e-12)


def test_ks_statistic_extremes():
    x = np.arange(10.0)
    assert ks_statistic(x, x) == 0.0
    assert ks_statistic(x, x + 100) == 1.0
    assert np.isnan(ks_statistic([np.nan], x))
    # Nullable integers carry pd.NA, which numpy cannot cast by itself.
    nullable = pd.Series([1, 2, None, 4], dtype="Int64")
    assert ks_statistic(nullable, [1, 2, 4]) == 0.0


def test_ecdf_data_locates_ks_distance():
    rng = np.random.default_rng(3)
    real = pd.DataFrame({"v": np.r_[rng.normal(0, 1, 400), [np.nan] * 5]})
    synth = pd.DataFrame({"v": rng.normal(0.3, 1.2, 250)})
    out = ecdf_data(real, synth, "v")
    assert isinstance(out, EcdfData)
    a, b = real["v"].dropna().to_numpy(), synth["v"].to_numpy()
    assert out.ks == pytest.approx(stats.ks_2samp(a, b).statistic, abs=1e-12)
    # Heights recomputed by counting, not by searchsorted.
    assert out.real_at_max == pytest.approx(np.mean(a <= out.x_at_max))
    assert out.synth_at_max == pytest.approx(np.mean(b <= out.x_at_max))
    assert abs(out.real_at_max - out.synth_at_max) == pytest.approx(out.ks)
    assert len(out.table) == len(np.unique(np.r_[a, b]))
    assert out.table["real"].iloc[-1] == 1.0 and out.table["synth"].iloc[-1] == 1.0


def test_ks_mean_skips_categorical_columns():
    real = pd.DataFrame({"x": [1.0, 2, 3, 4], "y": [1, 2, 3, 4], "g": ["a"] * 4})
    synth = pd.DataFrame({"x": [1.0, 2, 3, 4], "y": [3, 4, 5, 6], "g": ["b"] * 4})
    # x: KS 0; y: F_real(2) = 0.5, F_synth(2) = 0 -> KS 0.5; mean 0.25.
    assert ks_mean(real, synth) == pytest.approx(0.25)
    # With y declared categorical only x is left.
    assert ks_mean(real, synth, categorical=["y"]) == 0.0


# -------------------------------------------------------------- histograms


def test_histogram_numeric_shares_use_common_edges():
    rng = np.random.default_rng(4)
    real = pd.DataFrame({"v": rng.normal(0, 1, 500)})
    synth = pd.DataFrame({"v": np.r_[rng.normal(1, 1, 300), [np.nan] * 20]})
    out = histogram_data(real, synth, "v", bins=12)
    finite = np.r_[real["v"], synth["v"].dropna()]
    edges = np.linspace(finite.min(), finite.max(), 13)
    bins = out[out["bin"] != "(missing)"]
    np.testing.assert_allclose(bins["left"], edges[:-1])
    np.testing.assert_allclose(bins["right"], edges[1:])
    np.testing.assert_array_equal(bins["real_count"], np.histogram(real["v"], edges)[0])
    missing = out[out["bin"] == "(missing)"]
    assert missing["synth_count"].tolist() == [20] and missing["real_count"].tolist() == [0]
    # Shares are over all rows, missing included.
    assert out["real_share"].sum() == pytest.approx(1.0)
    assert out["synth_share"].sum() == pytest.approx(1.0)
    assert missing["synth_share"].iloc[0] == pytest.approx(20 / 320)


def test_histogram_categorical_union_of_levels(penguins):
    synth = penguins.copy()
    synth.loc[synth["island"] == "Dream", "island"] = "Elsewhere"
    out = histogram_data(penguins, synth, "island").set_index("bin")
    assert list(out.index) == ["Biscoe", "Dream", "Elsewhere", "Torgersen"]
    assert out.loc["Elsewhere", "real_count"] == 0
    assert out.loc["Dream", "synth_count"] == 0
    assert out.loc["Dream", "real_share"] == pytest.approx(np.mean(penguins["island"] == "Dream"))
    sex = histogram_data(penguins, penguins, "sex").set_index("bin")
    assert sex.loc["(missing)", "real_count"] == penguins["sex"].isna().sum()
    # Integer codes counted as levels when asked to.
    year = histogram_data(penguins, penguins, "year", categorical=True)
    assert list(year["bin"]) == ["2007", "2008", "2009"]


# ----------------------------------------------------- propensity: logit


def _statsmodels_propensity(real, synth, design_columns):
    """p̂ and k from statsmodels' unpenalised Logit on a design built here."""
    stacked = pd.concat([real, synth], ignore_index=True)
    t = np.r_[np.zeros(len(real)), np.ones(len(synth))]
    X = sm.add_constant(design_columns(stacked).astype(float), has_constant="add")
    fit = sm.Logit(t, X).fit(disp=0, method="newton", maxiter=100, tol=1e-12)
    return fit.predict(X), X.shape[1], t


def _main_effect_dummies(stacked: pd.DataFrame) -> pd.DataFrame:
    return pd.get_dummies(stacked, columns=["g"], drop_first=True, dtype=float)


def test_logit_pmse_matches_statsmodels():
    rng = np.random.default_rng(5)
    real, synth = _mixed(400, rng), _mixed(300, rng, shift=0.3)
    res = propensity_metrics(real, synth, seed=0)
    assert isinstance(res, PropensityResult)
    p_hat, k, t = _statsmodels_propensity(real, synth, _main_effect_dummies)
    np.testing.assert_allclose(res.scores, p_hat, atol=1e-5)
    np.testing.assert_array_equal(res.labels, t)
    assert res.n_params == k == 5  # intercept, x1, x2, g[b], g[c]
    N, c = 700, 300 / 700
    assert res.n_used == N
    assert res.pmse == pytest.approx(np.mean((p_hat - c) ** 2), rel=1e-4)
    assert res.pmse_null == pytest.approx((k - 1) * (1 - c) ** 2 * c / N, rel=1e-12)
    assert res.pmse_ratio == pytest.approx(res.pmse / res.pmse_null)


def test_logit_interactions_match_statsmodels():
    rng = np.random.default_rng(6)
    real, synth = _mixed(500, rng), _mixed(500, rng, shift=0.2)

    def with_products(stacked):
        main = _main_effect_dummies(stacked)
        # Pairs from different variables only: g[b]*g[c] is identically 0.
        for a, b in [("x1", "x2"), ("x1", "g_b"), ("x1", "g_c"), ("x2", "g_b"), ("x2", "g_c")]:
            main[f"{a}:{b}"] = main[a] * main[b]
        return main

    res = propensity_metrics(real, synth, interactions=True, seed=0)
    p_hat, k, _ = _statsmodels_propensity(real, synth, with_products)
    assert res.n_params == k == 10
    np.testing.assert_allclose(res.scores, p_hat, atol=1e-5)


def test_logit_drops_dependent_and_constant_columns():
    rng = np.random.default_rng(7)
    real, synth = _mixed(300, rng), _mixed(300, rng, shift=0.3)
    for frame in (real, synth):
        frame["x1_again"] = 3.0 * frame["x1"] - 2.0  # collinear with x1
        frame["one"] = 1.0  # constant
    res = propensity_metrics(real, synth, seed=0)
    p_hat, k, _ = _statsmodels_propensity(
        real.drop(columns=["x1_again", "one"]),
        synth.drop(columns=["x1_again", "one"]),
        _main_effect_dummies,
    )
    assert res.n_params == k == 5
    np.testing.assert_allclose(res.scores, p_hat, atol=1e-5)


def test_logit_under_complete_separation_gives_the_limit_scores():
    # x < 0 in every real row and x > 0 in every synthetic one: the likelihood tends to 1 as the slope
    # grows, so the fitted probabilities tend to the labels and pMSE to mean((t − c)²) = c(1 − c).
    rng = np.random.default_rng(10)
    real = pd.DataFrame({"x": -rng.uniform(0.1, 2.0, 300), "y": rng.normal(size=300)})
    synth = pd.DataFrame({"x": rng.uniform(0.1, 2.0, 200), "y": rng.normal(size=200)})
    res = propensity_metrics(real, synth, interactions=True, seed=0)
    c = 200 / 500
    np.testing.assert_array_equal(res.scores, np.r_[np.zeros(300), np.ones(200)])
    assert res.pmse == pytest.approx(c * (1 - c), rel=1e-12)
    assert res.auc == 1.0 and res.specks == 1.0 and res.converged


def test_independent_columns_is_the_greedy_scan_by_rank():
    # Reference: scan the columns in order and keep one when it raises the rank of [1, kept columns]
    # (numpy's SVD rank). Designs with planted linear dependences, constants and sparse dummies.
    rng = np.random.default_rng(9)
    for _ in range(60):
        n, p = int(rng.integers(8, 120)), int(rng.integers(1, 25))
        X = rng.normal(size=(n, p)) if rng.random() < 0.6 else (rng.random((n, p)) < 0.15).astype(float)
        for _ in range(int(rng.integers(0, 4))):
            j, (a, b) = rng.integers(p), rng.integers(p, size=2)
            X[:, j] = 2.0 * X[:, a] - X[:, b] + 1.0
        if rng.random() < 0.3:
            X[:, rng.integers(p)] = 3.0
        kept: list[int] = []
        for j in range(p):
            before = np.linalg.matrix_rank(np.column_stack([np.ones(n), X[:, kept]]))
            if np.linalg.matrix_rank(np.column_stack([np.ones(n), X[:, kept + [j]]])) > before:
                kept.append(j)
        np.testing.assert_array_equal(design_module.independent_columns(X), kept)


def test_logit_under_quasi_separation_matches_the_fit_without_the_separated_rows():
    # A level only the synthetic rows have (g = "d") separates them: its coefficient has no finite MLE and
    # those rows' p̂ tends to 1. The other coefficients' MLE is then the MLE on the remaining rows without
    # that dummy, which statsmodels fits with no separation at all: an independent value for every score.
    rng = np.random.default_rng(8)
    real, synth = _mixed(400, rng), _mixed(300, rng, shift=0.3)
    synth.loc[:19, "g"] = "d"
    res = propensity_metrics(real, synth, seed=0)
    assert res.converged
    separated = np.r_[np.zeros(len(real), bool), (synth["g"] == "d").to_numpy()]
    # The fit stops when each gradient component of the mean log-loss is ≤ 1e-8. For the "d" dummy,
    # standardised to (x − m)/sd, that bounds (20/700)·mean(1 − p̂ over its rows) by 1e-8·(sd + m) < 1e-8.
    assert np.mean(1 - res.scores[separated]) < 1e-8 * 700 / 20
    p_hat, _, _ = _statsmodels_propensity(real, synth[synth["g"] != "d"], _main_effect_dummies)
    np.testing.assert_allclose(res.scores[~separated], p_hat, atol=1e-5)


def test_auc_and_specks_match_references():
    rng = np.random.default_rng(8)
    real, synth = _mixed(400, rng), _mixed(350, rng, shift=0.4)
    for model in ("logit", "cart"):
        res = propensity_metrics(real, synth, model=model, seed=1)
        assert res.auc == pytest.approx(roc_auc_score(res.labels, res.scores), abs=1e-12)
        real_scores, synth_scores = res.scores[res.labels == 0], res.scores[res.labels == 1]
        expected = stats.ks_2samp(real_scores, synth_scores).statistic
        assert res.specks == pytest.approx(expected, abs=1e-12)


def _null_draw(rng: np.random.Generator, n: int = 500) -> pd.DataFrame:
    """Four numeric and two four-level columns: k - 1 = 4 + 2 * 3 = 10."""
    return pd.DataFrame(
        {
            **{f"x{i}": rng.normal(size=n) for i in range(4)},
            "g": rng.choice(list("abcd"), size=n),
            "h": rng.choice(list("pqrs"), size=n, p=[0.4, 0.3, 0.2, 0.1]),
        }
    )


def test_null_pmse_formula_for_synthesis_from_the_real_data():
    # (k - 1)(1 - c)^2 c / N is the expected pMSE when the synthetic rows are
    # drawn from a distribution fitted to the real data (Snoke et al. 2018):
    # the synthetic sufficient statistics then differ from the real ones by
    # synthetic sampling noise only. A bootstrap of the real rows is such a
    # synthesis. N pMSE / ((1 - c)^2 c) is then about chi^2 with k - 1 = 10
    # degrees of freedom, so the ratio has mean 1 and sd sqrt(2/10) ≈ 0.45
    # per draw, ≈ 0.10 for the mean of 20 draws: ±0.3 is a 3-sd band.
    ratios, aucs = [], []
    for seed in range(20):
        rng = np.random.default_rng(100 + seed)
        real = _null_draw(rng)
        synth = _bootstrap(real, 200 + seed)
        res = propensity_metrics(real, synth, seed=seed)
        assert res.n_params == 11
        ratios.append(res.pmse_ratio)
        aucs.append(res.auc)
    assert np.mean(ratios) == pytest.approx(1.0, abs=0.3)
    # The AUC is measured on the rows the model was fitted to, so it sits a
    # little above 0.5. The fitted score separates the group means by a
    # Mahalanobis distance D with N c (1 - c) D^2 ≈ chi^2_{k-1} (Hotelling)
    # for independent samples, half that here (the (1 - c) factor again), and
    # AUC ≈ Φ(D / √2) = Φ(sqrt(5 / 250) / √2) = 0.540. Per-draw sd ≈ 0.02, so
    # ±0.015 around the mean of 20 draws is 3 sd.
    assert np.mean(aucs) == pytest.approx(0.540, abs=0.015)


def test_null_pmse_for_independent_draws_is_larger_by_one_over_one_minus_c():
    # Two independent samples of one distribution differ by the sampling
    # noise of both, so E[pMSE] = (k - 1) c (1 - c) / N and the ratio to the
    # formula above is 1 / (1 - c): 2 for equal sizes (docs/methods.md#propensity's
    # formula, kept as written; see PropensityResult.pmse_null). sd of the
    # mean of 20 draws ≈ 2 * 0.10 = 0.2: ±0.5 is a 2.5-sd band, and still
    # excludes 1 by far. The AUC is near 0.5 all the same: by the argument in
    # the test above, Φ(sqrt(10 / 250) / √2) = 0.556.
    ratios, aucs = [], []
    for seed in range(20):
        rng = np.random.default_rng(100 + seed)
        res = propensity_metrics(_null_draw(rng), _null_draw(rng), seed=seed)
        ratios.append(res.pmse_ratio)
        aucs.append(res.auc)
    assert np.mean(ratios) == pytest.approx(2.0, abs=0.5)
    assert np.mean(aucs) == pytest.approx(0.556, abs=0.015)


@pytest.mark.parametrize("model", ["logit", "cart"])
def test_disjoint_data_are_perfectly_separated(model):
    rng = np.random.default_rng(9)
    real = pd.DataFrame({"x": rng.uniform(0, 1, 200), "g": rng.choice(["a", "b"], 200)})
    synth = pd.DataFrame({"x": rng.uniform(2, 3, 150), "g": rng.choice(["a", "b"], 150)})
    res = propensity_metrics(real, synth, model=model, seed=0)
    assert res.auc == 1.0
    assert res.specks == 1.0


def test_cart_is_regularised_and_reproducible():
    rng = np.random.default_rng(10)
    real, synth = _mixed(400, rng), _mixed(400, rng, shift=0.5)
    res = propensity_metrics(real, synth, model="cart", seed=3, permutations=5)
    again = propensity_metrics(real, synth, model="cart", seed=3, permutations=5)
    np.testing.assert_array_equal(res.scores, again.scores)
    assert res.pmse_null == again.pmse_null
    # cp pruning must leave fewer leaves than the same tree grown without it
    # (built here on pandas dummies; trees ignore the standardisation).
    stacked = pd.get_dummies(pd.concat([real, synth]), columns=["g"], dtype=float)
    unpruned = DecisionTreeClassifier(min_samples_leaf=5, random_state=0)
    unpruned.fit(stacked, np.r_[np.zeros(400), np.ones(400)])
    assert 1 < res.n_params < unpruned.get_n_leaves()
    assert len(np.unique(res.scores)) <= res.n_params
    assert res.pmse > res.pmse_null > 0
    assert res.pmse_ratio == pytest.approx(res.pmse / res.pmse_null)


def test_subsample_is_proportional_and_reported():
    rng = np.random.default_rng(11)
    real, synth = _mixed(600, rng), _mixed(400, rng, shift=0.3)
    res = propensity_metrics(real, synth, seed=0, max_rows=500)
    assert res.n_used == 500 == len(res.scores)
    assert (res.n_real, res.n_synth) == (300, 200)
    c = 200 / 500
    assert res.pmse_null == pytest.approx((res.n_params - 1) * (1 - c) ** 2 * c / 500)
    again = propensity_metrics(real, synth, seed=0, max_rows=500)
    np.testing.assert_array_equal(res.scores, again.scores)


def test_propensity_declared_categorical_and_bad_input(penguins):
    res = propensity_metrics(penguins, penguins, categorical=["year"], seed=0)
    assert "year[T.2008]" in res.terms and "year" not in res.terms
    with pytest.raises(ValueError, match="model"):
        propensity_metrics(penguins, penguins, model="forest")
    with pytest.raises(ValueError, match="same columns"):
        propensity_metrics(penguins, penguins.drop(columns="sex"))
    with pytest.raises(TypeError, match="DataFrame"):
        propensity_metrics(penguins.to_numpy(), penguins)


@pytest.mark.parametrize(
    "options", [{}, {"interactions": True}, {"model": "cart", "permutations": 3}]
)
def test_missing_values_do_not_crash(penguins, options):
    # penguins has NaN in numeric columns and in the str column "sex".
    synth = _bootstrap(penguins, 12)
    synth.loc[:20, "body_mass_g"] = np.nan
    res = propensity_metrics(penguins, synth, seed=0, **options)
    assert np.isfinite([res.pmse, res.pmse_null, res.specks, res.auc]).all()
    assert np.all((res.scores >= 0) & (res.scores <= 1))
    if options.get("model") != "cart":
        assert "sex[T.male]" in res.terms and "body_mass_g[missing]" in res.terms
    assert len(histogram_data(penguins, synth, "body_mass_g")) == 31
    assert np.isfinite(ecdf_data(penguins, synth, "bill_length_mm").ks)
    assert np.isfinite(ks_mean(penguins, synth))
    reg = regression_ci_overlap(
        penguins, synth, "body_mass_g", ["flipper_length_mm", "species", "sex"]
    )
    assert reg.n_real == len(penguins.dropna(subset=["body_mass_g", "flipper_length_mm", "sex"]))
    assert np.isfinite(reg.mean_overlap)


# ------------------------------------------------------------- CI overlap


def test_ci_overlap_reference_cases():
    assert ci_overlap(1.0, 3.0, 1.0, 3.0) == 1.0
    assert ci_overlap(0.0, 1.0, 1.0, 2.0) == 0.0
    # Gap of 1 between (0, 1) and (2, 4): L = 2, U = 1, U - L = -1,
    # J = ½(-1/1 + -1/2) = -0.75.
    assert ci_overlap(0.0, 1.0, 2.0, 4.0) == pytest.approx(-0.75)
    # Hand-worked: (0, 2) and (1, 5): L = max(0, 1) = 1, U = min(2, 5) = 2,
    # J = ½[(2 - 1)/(2 - 0) + (2 - 1)/(5 - 1)] = ½(0.5 + 0.25) = 0.375.
    assert ci_overlap(0.0, 2.0, 1.0, 5.0) == pytest.approx(0.375)
    assert isinstance(ci_overlap(0, 2, 1, 5), float)
    vec = ci_overlap([1.0, 0.0, 0.0], [3.0, 1.0, 2.0], [1.0, 1.0, 1.0], [3.0, 2.0, 5.0])
    np.testing.assert_allclose(vec, [1.0, 0.0, 0.375])
    with pytest.raises(ValueError, match="lo <= hi"):
        ci_overlap(2.0, 1.0, 0.0, 1.0)


# ------------------------------------------------ regression CI overlap


def _penguin_pair(penguins):
    real = penguins.dropna().reset_index(drop=True)
    return real, _bootstrap(real, 13)


def _expected_table(fit_real, fit_synth, level):
    ci_r, ci_s = fit_real.conf_int(alpha=1 - level), fit_synth.conf_int(alpha=1 - level)
    lo_r, hi_r = ci_r.iloc[:, 0].to_numpy(), ci_r.iloc[:, 1].to_numpy()
    lo_s, hi_s = ci_s.iloc[:, 0].to_numpy(), ci_s.iloc[:, 1].to_numpy()
    # Karr et al. written out again, not via ci_overlap.
    L, U = np.maximum(lo_r, lo_s), np.minimum(hi_r, hi_s)
    overlap = 0.5 * ((U - L) / (hi_r - lo_r) + (U - L) / (hi_s - lo_s))
    return lo_r, hi_r, lo_s, hi_s, overlap


def _penguin_design(frame, predictors):
    X = pd.get_dummies(frame[predictors], drop_first=True, dtype=float)
    return sm.add_constant(X, has_constant="add")


def test_linear_regression_matches_statsmodels_ols(penguins):
    real, synth = _penguin_pair(penguins)
    predictors = ["flipper_length_mm", "bill_length_mm", "species", "sex"]
    res = regression_ci_overlap(real, synth, "body_mass_g", predictors, level=0.9)
    fits = [
        sm.OLS(f["body_mass_g"].astype(float), _penguin_design(f, predictors)).fit()
        for f in (real, synth)
    ]
    lo_r, hi_r, lo_s, hi_s, overlap = _expected_table(*fits, level=0.9)
    table = res.table
    assert list(table["term"]) == [
        "(Intercept)", "flipper_length_mm", "bill_length_mm",
        "species[T.Chinstrap]", "species[T.Gentoo]", "sex[T.male]",
    ]
    np.testing.assert_allclose(table["est_real"], fits[0].params, rtol=1e-8)
    np.testing.assert_allclose(table["est_synth"], fits[1].params, rtol=1e-8)
    np.testing.assert_allclose(table["lo_real"], lo_r, rtol=1e-8)
    np.testing.assert_allclose(table["hi_synth"], hi_s, rtol=1e-8)
    np.testing.assert_allclose(table["overlap"], overlap, rtol=1e-7)
    assert res.mean_overlap == pytest.approx(np.mean(overlap))
    sig_r, sig_s = fits[0].pvalues < 0.1, fits[1].pvalues < 0.1
    same = (np.sign(fits[0].params) == np.sign(fits[1].params)) & (sig_r == sig_s) & (overlap > 0)
    assert res.sso == pytest.approx(np.mean(same))
    assert (res.n_real, res.n_synth) == (len(real), len(synth))


def test_logistic_regression_matches_statsmodels_logit(penguins):
    real, synth = _penguin_pair(penguins)
    predictors = ["body_mass_g", "bill_depth_mm", "species"]
    res = regression_ci_overlap(real, synth, "sex", predictors, family="logistic")
    # "male" is the second level in sorted order, so it is coded 1.
    fits = [
        sm.Logit(
            (f["sex"] == "male").astype(float), _penguin_design(f, predictors)
        ).fit(disp=0, method="newton", tol=1e-12)
        for f in (real, synth)
    ]
    lo_r, hi_r, lo_s, hi_s, overlap = _expected_table(*fits, level=0.95)
    table = res.table
    np.testing.assert_allclose(table["est_real"], fits[0].params, rtol=1e-5)
    np.testing.assert_allclose(table["lo_real"], lo_r, rtol=1e-5)
    np.testing.assert_allclose(table["hi_real"], hi_r, rtol=1e-5)
    np.testing.assert_allclose(table["lo_synth"], lo_s, rtol=1e-5)
    np.testing.assert_allclose(table["hi_synth"], hi_s, rtol=1e-5)
    np.testing.assert_allclose(table["overlap"], overlap, rtol=1e-4)


def test_regression_level_missing_in_synth_gives_nan_row(penguins):
    real = penguins.dropna().reset_index(drop=True)
    synth = real[real["species"] != "Gentoo"].reset_index(drop=True)
    res = regression_ci_overlap(real, synth, "body_mass_g", ["flipper_length_mm", "species"])
    row = res.table.set_index("term").loc["species[T.Gentoo]"]
    assert np.isnan(row["est_synth"]) and np.isnan(row["overlap"])
    assert pd.isna(row["sign_match"])
    assert np.isfinite(res.table["overlap"].drop(index=3)).all()
    # The NaN row counts as a failure in SSO and is left out of the mean.
    assert res.sso <= 3 / 4
    assert res.mean_overlap == pytest.approx(res.table["overlap"].dropna().mean())
    assert any("Gentoo" in note for note in res.notes)


def test_regression_rejects_bad_outcomes(penguins):
    with pytest.raises(ValueError, match="numeric outcome"):
        regression_ci_overlap(penguins, penguins, "species", ["body_mass_g"])
    with pytest.raises(ValueError, match="two levels"):
        regression_ci_overlap(penguins, penguins, "species", ["body_mass_g"], family="logistic")
    with pytest.raises(ValueError, match="level"):
        regression_ci_overlap(penguins, penguins, "body_mass_g", ["year"], level=95)


# ---------------------------------------------------------------- misc


def test_headline_metrics_are_registered():
    expected = {
        "pmse": ("minimize", 0.0),
        "pmse_ratio": ("target", 1.0),
        "specks": ("minimize", 0.0),
        "auc": ("target", 0.5),
        "ks_mean": ("minimize", 0.0),
        "ci_overlap_mean": ("maximize", 1.0),
    }
    for name, (goal, best) in expected.items():
        info = METRICS[name]
        assert (info.kind, info.goal, info.best) == ("utility", goal, best)
    assert METRICS["ci_overlap_mean"].lower == -np.inf


@pytest.mark.parametrize(
    "module", [design_module, propensity_module, regression_module, univariate_module]
)
def test_docstring_examples(module):
    failures, _ = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert failures == 0
