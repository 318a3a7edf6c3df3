"""The Compare page's measures on large tables (issues 16.7 and 19.4), each against an independent computation.

The regression's R-only QR against statsmodels' OLS (coefficients and standard errors); its row budget
against the exact coefficients of a noiseless model and the full fit's standard errors; the KS distance
against scipy; the summary (each column hashed once) against its measures computed one by one.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

from dpsynth_core.utility import (association_fit, column_distances, compare_columns, correlation_fit, ks_statistic,
                                  pegs_distances, regression_ci_overlap, utility_summary)
from dpsynth_core.utility.design import bin_edges
from dpsynth_core.utility.marginals import MOMENT_PERCENTILES
from dpsynth_core.utility.pegs_distance import _bin_codes
from dpsynth_core.utility.regression import _standardise

PREDICTORS = ["grams", "mm", "near", "region"]
TERMS = 1 + 3 + 7  # intercept, three numbers, eight regions less the reference


def _table(n: int, seed: int, noise: float = 1.0) -> pd.DataFrame:
    """Columns on very different scales, an 8-level category and a nearly collinear pair."""
    rng = np.random.default_rng(seed)
    grams = rng.normal(5e6, 1e6, n)
    mm = rng.normal(0.003, 0.001, n)
    near = grams / 1e6 + rng.normal(0, 1e-3, n)  # correlation with grams ≈ 1 − 5e-7
    region = rng.choice([f"r{i}" for i in range(8)], n)
    y = 2.0 + 3e-6 * grams - 400.0 * mm + 0.5 * near + (region == "r3") * 1.5 + rng.normal(0, noise, n)
    return pd.DataFrame({"y": y, "grams": grams, "mm": mm, "near": near, "region": region})


def _statsmodels(frame: pd.DataFrame):
    X = sm.add_constant(pd.get_dummies(frame[PREDICTORS], drop_first=True, dtype=float), has_constant="add")
    return sm.OLS(frame["y"], X).fit()


@pytest.mark.slow  # stress: 350,000 rows
def test_linear_regression_matches_statsmodels_on_a_large_ill_scaled_design():
    real, synth = _table(200_000, 1), _table(150_000, 2)
    res = regression_ci_overlap(real, synth, "y", PREDICTORS)
    for side, frame in (("real", real), ("synth", synth)):
        fit = _statsmodels(frame)
        # statsmodels solves by a pseudo-inverse (SVD): agreement to 1e-8 shows the R-only QR loses nothing.
        np.testing.assert_allclose(res.table[f"est_{side}"], fit.params, rtol=1e-8)
        se = (res.table[f"hi_{side}"] - res.table[f"est_{side}"]) / stats.t.ppf(0.975, fit.df_resid)
        np.testing.assert_allclose(se, fit.bse, rtol=1e-8)
    assert (res.n_real, res.n_synth) == (200_000, 150_000)
    assert not any("subsample" in n for n in res.notes)


def test_a_design_beyond_the_cell_budget_is_fitted_on_a_stated_subsample():
    # Noiseless: every subsample of rows gives the model's own coefficients, whichever rows it drew.
    real, synth = _table(30_000, 3, noise=0.0), _table(20_000, 4, noise=0.0)
    cap = 10_000
    res = regression_ci_overlap(real, synth, "y", PREDICTORS, max_cells=cap * TERMS, seed=0)
    truth = [2.0, 3e-6, -400.0, 0.5, 0, 0, 1.5, 0, 0, 0, 0]
    np.testing.assert_allclose(res.table["est_real"], truth, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(res.table["est_synth"], truth, rtol=1e-6, atol=1e-7)
    assert (res.n_real, res.n_synth) == (cap, cap)
    assert any(f"random subsample of {cap:,} rows of each dataset" in n and "30,000 real, 20,000 synth" in n
               for n in res.notes), res.notes


def test_a_subsample_widens_the_intervals_as_its_size_says():
    # Standard errors scale as 1/√n: a fit on 1/4 of the rows has intervals twice as wide, up to sampling
    # noise (seeded; 5% covers it at 12,500 rows).
    real, synth = _table(50_000, 5), _table(50_000, 6)
    full = regression_ci_overlap(real, synth, "y", PREDICTORS)
    part = regression_ci_overlap(real, synth, "y", PREDICTORS, max_cells=12_500 * TERMS, seed=1)
    width = lambda r: (r.table["hi_real"] - r.table["lo_real"]).to_numpy()  # noqa: E731
    np.testing.assert_allclose(width(part) / width(full), 2.0, rtol=0.05)
    # Same seed, same subsample: the page's cached figure is reproducible.
    again = regression_ci_overlap(real, synth, "y", PREDICTORS, max_cells=12_500 * TERMS, seed=1)
    pd.testing.assert_frame_equal(part.table, again.table)


@pytest.mark.parametrize("max_cells", [9 * 1_000, 10**9])
def test_logistic_regression_with_a_budget_still_fits(max_cells):
    # The budget applies to the logistic family too: its fit on the subsample matches statsmodels' Logit on
    # the same rows when every row is kept, and keeps its size otherwise.
    rng = np.random.default_rng(7)
    real = _table(5_000, 7)
    real["y"] = (rng.random(5_000) < 1 / (1 + np.exp(-(real["mm"] - 0.003) * 1e3))).astype(float)
    predictors = ["mm", "region"]  # 1 + 1 + 7 coefficients
    res = regression_ci_overlap(real, real, "y", predictors, family="logistic", max_cells=max_cells, seed=2)
    n = min(5_000, max_cells // 9)
    assert res.n_real == n
    if n == 5_000:
        X = sm.add_constant(pd.get_dummies(real[predictors], drop_first=True, dtype=float), has_constant="add")
        fit = sm.Logit(real["y"], X).fit(disp=0, method="newton", tol=1e-12)
        np.testing.assert_allclose(res.table["est_real"], fit.params, rtol=1e-5)


def test_the_standardised_design_is_the_plain_one_bit_for_bit():
    # _standardise takes each column's sd from the deviations it has written into Z rather than from a
    # second array of them (np.std's): the same squares summed in the same order, so the same Z and map A.
    rng = np.random.default_rng(11)
    X = np.asfortranarray(np.column_stack([rng.normal(5e6, 1e6, 50_000), rng.normal(0.003, 0.001, 50_000),
                                           rng.integers(0, 2, 50_000), np.full(50_000, 4.0)]))
    y = rng.normal(size=50_000)
    Z, A = _standardise(X, y)
    mean, sd = X.mean(axis=0), X.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)  # the constant column is centred, not scaled
    np.testing.assert_array_equal(Z, np.column_stack([np.ones(50_000), (X - mean) / sd, y]))
    assert Z.flags.f_contiguous
    np.testing.assert_array_equal(A[0, 1:], -mean / sd)
    np.testing.assert_array_equal(np.diag(A)[1:], 1.0 / sd)


@pytest.mark.parametrize("lo, hi", [(0.0, 1.0), (-3.7, 12.1), (1e15, 1e15 + 3), (5.0, 5.0), (-1e308, 1e308)])
def test_pegs_bins_are_those_a_search_of_the_edges_gives(lo, hi):
    # The bins are estimated from each value's offset and checked against the edges: on every edge, one
    # float either side of it and random values between, each must be the bin a search of the edges gives
    # ([left, right), the last closed), and the counts numpy's histogram's. A range a few floats wide
    # (1e15 + 3: edges that round onto each other) and one past the largest float are the hard cases.
    edges = bin_edges(np.array([lo, hi]), 20)
    rng = np.random.default_rng(14)
    x = np.concatenate([edges, np.nextafter(edges, np.inf), np.nextafter(edges, -np.inf),
                        lo + (hi / 2 - lo / 2) * 2 * rng.random(10_000), [np.nan, np.inf]])
    ok = np.isfinite(x) & (x >= edges[0]) & (x <= edges[-1])
    codes = _bin_codes(x, ok, edges)
    expected = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, 19)
    np.testing.assert_array_equal(codes[ok], expected[ok])
    assert (codes[~ok] == 20).all()
    np.testing.assert_array_equal(np.bincount(codes[ok], minlength=20), np.histogram(x[ok], bins=edges)[0])


@pytest.mark.parametrize("decimals", [None, 1])
def test_ks_matches_scipy_with_and_without_ties(decimals):
    # The merge of the two sorted samples must find the sup at the last of each run of equal values; heavy
    # ties (one decimal: ~80 values over 200,000 rows) and -0.0 beside 0.0 test that.
    rng = np.random.default_rng(8)
    a, b = rng.normal(0, 2, 200_000), rng.normal(0.01, 2, 150_000)
    if decimals is not None:
        a, b = np.round(a, decimals), np.round(b, decimals)
        a[:100], b[:100] = 0.0, -0.0
    expected = stats.ks_2samp(a, b, method="asymp").statistic
    assert ks_statistic(a, b) == pytest.approx(expected, abs=1e-15)


def test_utility_summary_is_its_measures_computed_one_by_one():
    # The summary hashes each categorical column once for all its measures: its values must be exactly those
    # of each measure called on its own, which hashes the column afresh.
    rng = np.random.default_rng(9)
    n = 20_000
    real = pd.DataFrame({"x": rng.normal(size=n), "g": rng.choice(list("abcd"), n), "h": rng.choice(["u", "v"], n),
                         "k": rng.integers(0, 4, n)})
    synth = real.sample(frac=1, random_state=1).reset_index(drop=True)
    synth["g"] = rng.choice(list("abce"), n)
    real["g"] = real["g"].astype("str")  # an Arrow-backed string column, as the app's loader makes them
    summary = utility_summary(real, synth, categorical=["k"])
    pd.testing.assert_frame_equal(summary.columns.distances[["ks", "tv", "hellinger"]],
                                  column_distances(real, synth, categorical=["k"]), check_exact=True)
    alone = association_fit(real, synth, categorical=["k"])
    pd.testing.assert_frame_equal(summary.association.difference, alone.difference, check_exact=True)
    pegs = pegs_distances(real, synth, categorical=["k"])
    pd.testing.assert_frame_equal(summary.pegs.conditional, pegs.conditional, check_exact=True)
    pd.testing.assert_series_equal(summary.pegs.marginal, pegs.marginal, check_exact=True)
    # And by hand: TV of g from the level shares (a, b, c, d in real; a, b, c, e in synth).
    p = real["g"].value_counts(normalize=True).reindex(list("abcde"), fill_value=0)
    q = synth["g"].value_counts(normalize=True).reindex(list("abcde"), fill_value=0)
    assert summary.columns.distances.loc["g", "tv"] == pytest.approx(0.5 * (p - q).abs().sum(), abs=1e-15)


def test_the_summary_hashes_each_categorical_column_once(monkeypatch):
    # Numpy columns (k, integer codes declared categorical) are wrapped anew at each access, so the memo knows
    # them by their memory: each of the four categorical columns is hashed once per dataset, eight in all,
    # though TV, Hellinger, PeGS and Cramér's V each ask for them. Their values are checked above.
    from dpsynth_core.utility import design

    calls = []
    factorize = pd.factorize
    monkeypatch.setattr(design.pd, "factorize", lambda *a, **kw: calls.append(1) or factorize(*a, **kw))
    rng = np.random.default_rng(13)
    real = pd.DataFrame({"x": rng.normal(size=500), "g": rng.choice(list("abc"), 500),
                         "h": rng.choice(["u", None], 500), "k": rng.integers(0, 4, 500),
                         "m": pd.array(rng.integers(0, 3, 500), dtype="Int64")})
    utility_summary(real, real.sample(frac=1, random_state=3).reset_index(drop=True), categorical=["k", "m"])
    assert len(calls) == 8


def test_columns_sorted_once_give_the_plain_calls_values():
    # compare_columns reads and sorts each numeric column once for its KS distance, percentiles and notes:
    # each value must be the one computed on the column's own finite values in row order, bit for bit
    # (percentiles are order statistics, found alike in any arrangement; the moments' sums keep row order).
    rng = np.random.default_rng(10)
    n = 5_000
    real = pd.DataFrame({"x": rng.normal(size=n), "r": np.round(rng.exponential(size=n), 1), "c": 2.5})
    real.loc[rng.random(n) < 0.05, "x"] = np.nan
    real.loc[:3, "r"] = [np.inf, -np.inf, 0.0, -0.0]
    synth = pd.DataFrame({"x": rng.normal(0.1, 1, 4_000), "r": rng.integers(0, 4, 4_000), "c": 2.5})
    synth["r"] = synth["r"].astype("Int64")  # a nullable column with a missing value, as syntheses hold
    synth.loc[7, "r"] = pd.NA
    cmp = compare_columns(real, synth)
    pct = [f"p{q:g}" for q in MOMENT_PERCENTILES]
    for col in real.columns:
        finite = {}
        for who, frame in (("real", real), ("synthetic", synth)):
            x = frame[col].to_numpy(dtype=float, na_value=np.nan)
            x = finite[who] = x[np.isfinite(x)]
            row = cmp.moments.loc[(col, who)]
            assert row[pct].tolist() == np.percentile(x, MOMENT_PERCENTILES).tolist()
            assert (row["n"], row["mean"], row["zero_share"]) == (x.size, x.mean(), np.mean(x == 0))
            # np.std sums the same squares in the same order; 1e-15 covers a last-bit difference in its division.
            assert row["sd"] == pytest.approx(np.std(x, ddof=1), rel=1e-15)
            if col != "c":  # scipy's moments sum the powers its own way: 1e-12 covers the rounding
                assert row["skewness"] == pytest.approx(stats.skew(x), rel=1e-12)
                assert row["kurtosis"] == pytest.approx(stats.kurtosis(x), rel=1e-12)
        ks = cmp.distances.loc[col, "ks"]
        assert ks == ks_statistic(finite["real"], finite["synthetic"])  # which sorts them itself
        assert ks == pytest.approx(stats.ks_2samp(finite["real"], finite["synthetic"]).statistic, abs=1e-15)
    assert cmp.notes["column"].tolist() == ["c", "c"]  # constant in both: skewness and kurtosis undefined
    assert cmp.notes["reason"].str.startswith("constant in the").all()


def test_the_correlation_fit_is_pandas_corr_of_the_finite_values():
    # The fit copies a column only when it holds an inf: its matrices must be pandas' own pairwise-complete
    # correlations of the columns with ±inf made NaN, exactly; a column left with one value is named.
    rng = np.random.default_rng(12)
    n = 4_000
    real = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "c": rng.integers(0, 9, n)})
    real.loc[:9, "a"] = np.inf
    real.loc[10:19, "b"] = np.nan
    synth = real.sample(frac=1, random_state=2).reset_index(drop=True)
    synth["c"] = pd.array([3] * (n - 1) + [None], dtype="Int64")  # one value and a missing one
    fit = correlation_fit(real, synth)
    for frame, matrix in ((real, fit.real), (synth, fit.synth)):
        plain = frame.astype(float).replace([np.inf, -np.inf], np.nan).corr()
        pd.testing.assert_frame_equal(matrix, plain, check_exact=True)
    assert any(note.startswith("c: constant or empty in the synthetic data") for note in fit.notes), fit.notes
    assert not any("real data" in note for note in fit.notes)


def test_a_categorical_column_of_one_level_is_named_in_the_cramers_v_notes():
    # g takes one value in the synthetic data (missing values aside): its Cramér's V there is undefined.
    real = pd.DataFrame({"g": list("abab"), "h": list("uvvu"), "k": list("xxyy")})
    synth = pd.DataFrame({"g": ["a", "a", None, "a"], "h": list("uvvu"), "k": list("xyxy")})
    notes = association_fit(real, synth).notes
    assert any(n.startswith("g: a single level in the synthetic data") for n in notes), notes
    assert not any("real data" in n for n in notes)
