"""The Learn page's computations, each checked against a direct computation, a hand-worked case or scipy."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import dpsynth_core as core
from dpsynth_core import teaching as T
from dpsynth_core.privacy import mechanisms


# --------------------------------------------------------------------------- exponential mechanism

def _direct_exponential(n, x, eps, score, factor, sensitivity, gamma):
    """The mechanism written out: a loop over r with math.exp and scipy's Beta-binomial."""
    a, b = gamma[0] + x, gamma[1] + n - x
    post = [stats.betabinom.pmf(r, n, a, b) for r in range(n + 1)]
    q = {"abs": [-abs(x - r) for r in range(n + 1)], "post": post, "logpost": [math.log(p) for p in post]}[score]
    w = [math.exp(eps * q[r] / (factor * sensitivity)) for r in range(n + 1)]
    total = sum(w)
    prob = [v / total for v in w]
    return {
        "probabilities": prob,
        "mode": max(range(n + 1), key=lambda r: (prob[r], -r)),
        "expected": sum(r * prob[r] for r in range(n + 1)),
        "expected_distance": sum(abs(r - x) * prob[r] for r in range(n + 1)),
        "expected_posterior": sum(prob[r] * post[r] for r in range(n + 1)),
    }


CASES = [  # (n, x, ε, score, factor, sensitivity, gamma)
    (10, 3, 1.0, "abs", 2.0, 1.0, (1.0, 1.0)),
    (10, 3, 1.0, "post", 2.0, 1.0, (1.0, 1.0)),
    (10, 3, 1.0, "logpost", 2.0, 1.0, (1.0, 1.0)),
    (25, 0, 0.3, "abs", 1.0, 1.0, (2.0, 5.0)),
    (25, 25, 5.0, "post", 1.0, 0.5, (0.5, 0.5)),
    (40, 17, 2.5, "logpost", 1.0, 2.0, (3.0, 1.5)),
    (1, 1, 0.1, "logpost", 2.0, 1.0, (1.0, 1.0)),
    (60, 45, 8.0, "abs", 2.0, 1.0, (1.0, 1.0)),
]


@pytest.mark.parametrize("n, x, eps, score, factor, sens, gamma", CASES)
def test_exponential_binary_matches_direct_computation(n, x, eps, score, factor, sens, gamma):
    got = T.exponential_binary(n, x, eps, score, gamma=gamma, sensitivity=sens, factor=factor)
    want = _direct_exponential(n, x, eps, score, factor, sens, gamma)
    assert isinstance(got["probabilities"], np.ndarray) and got["probabilities"].shape == (n + 1,)
    assert got["probabilities"].sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(got["probabilities"], want["probabilities"], rtol=1e-9, atol=1e-15)
    assert got["mode"] == want["mode"]
    for key in ("expected", "expected_distance", "expected_posterior"):
        assert got[key] == pytest.approx(want[key], rel=1e-9, abs=1e-14), key


def test_exponential_binary_hand_worked():
    # n = 2, x = 1, score −|x − r|, ε = ln 4, factor 1: weights 1/4, 1, 1/4.
    out = T.exponential_binary(2, 1, math.log(4), "abs", factor=1.0)
    np.testing.assert_allclose(out["probabilities"], [1 / 6, 2 / 3, 1 / 6])
    assert out["mode"] == 1 and out["expected"] == pytest.approx(1.0)
    assert out["expected_distance"] == pytest.approx(1 / 3)
    # Uniform prior, n = 2, x = 1: posterior Beta(2, 2), predictive P(r) = (3/10, 4/10, 3/10).
    np.testing.assert_allclose(out["posterior_predictive"], [0.3, 0.4, 0.3])
    assert out["expected_posterior"] == pytest.approx(0.3 / 6 + 0.4 * 2 / 3 + 0.3 / 6)


def test_exponential_binary_default_factor_is_two():
    a = T.exponential_binary(10, 4, 2.0, "abs")
    b = T.exponential_binary(10, 4, 1.0, "abs", factor=1.0)
    np.testing.assert_allclose(a["probabilities"], b["probabilities"])


def test_exponential_binary_is_stable_where_direct_exp_overflows():
    # exp(ε·q) with ε·|q| ≈ 2,000 would underflow to 0 for every r in a naive computation.
    out = T.exponential_binary(2000, 700, 400.0, "logpost", factor=1.0)
    p = out["probabilities"]
    assert np.all(np.isfinite(p)) and p.sum() == pytest.approx(1.0)
    assert out["mode"] == int(np.argmax(stats.betabinom.logpmf(np.arange(2001), 2000, 701, 1301)))


def test_posterior_predictive_is_scipy_betabinom():
    lp = T.log_posterior_predictive(30, 12, gamma=(2.0, 0.5))
    np.testing.assert_allclose(np.exp(lp), stats.betabinom.pmf(np.arange(31), 30, 14.0, 18.5), rtol=1e-10)


def test_score_sensitivity():
    assert T.score_sensitivity(10, "abs") == 1.0
    # By hand from scipy: the largest change of log P(r | x) over neighbouring x, for n = 5.
    n = 5
    lp = np.array([stats.betabinom.logpmf(np.arange(n + 1), n, 1 + x, 1 + n - x) for x in range(n + 1)])
    assert T.score_sensitivity(n, "logpost") == pytest.approx(np.abs(np.diff(lp, axis=0)).max())
    assert T.score_sensitivity(n, "post") <= 1.0


@pytest.mark.parametrize("kwargs, error", [
    (dict(n=5, x=6, epsilon=1.0, score="abs"), ValueError),
    (dict(n=5, x=2, epsilon=0.0, score="abs"), ValueError),
    (dict(n=5, x=2, epsilon=1.0, score="l1"), ValueError),
    (dict(n=5.0, x=2, epsilon=1.0, score="abs"), TypeError),
])
def test_exponential_binary_rejects_bad_input(kwargs, error):
    with pytest.raises(error):
        T.exponential_binary(**kwargs)


def test_exponential_table_rows_match_function():
    summary, dists = T.exponential_binary_table(12, 5, 1.5, gamma=(2.0, 3.0))
    for score in T.SCORES:
        direct = _direct_exponential(12, 5, 1.5, score, 2.0, 1.0, (2.0, 3.0))
        row = summary.set_index("score").loc[score]
        assert row["expected"] == pytest.approx(direct["expected"])
        np.testing.assert_allclose(dists[dists["score"] == score]["probability"], direct["probabilities"])


# --------------------------------------------------------------------------- e^ε

def test_probability_ratio_table():
    t = T.probability_ratio_table([0.1, 1.0, 10.0], base_probability=0.01)
    np.testing.assert_allclose(t["exp_epsilon"], [math.exp(0.1), math.exp(1), math.exp(10)])
    # METHODS §4: ε = 1 → 2.72, ε = 10 → 22,026.
    assert f"{t['exp_epsilon'][1]:.2f}" == "2.72" and f"{t['exp_epsilon'][2]:,.0f}" == "22,026"
    assert t["highest_probability"][1] == pytest.approx(0.01 * math.e)
    assert t["lowest_probability"][1] == pytest.approx(0.01 / math.e)
    assert t["highest_probability"][2] == 1.0  # capped: a probability


# --------------------------------------------------------------------------- noise on a count

def test_count_noise_scales():
    r = T.count_noise(40, 0.5, delta=1e-6)
    assert r["laplace_scale"] == pytest.approx(2.0)
    assert r["laplace_sd"] == pytest.approx(2 * math.sqrt(2))
    assert r["gaussian_sigma"] == pytest.approx(math.sqrt(2 * math.log(1.25e6)) / 0.5)
    assert r["gaussian_valid"] and not T.count_noise(40, 1.0)["gaussian_valid"]
    # Densities are the textbook formulas.
    g = r["grid"]
    np.testing.assert_allclose(g["laplace_pdf"], np.exp(-np.abs(g["x"] - 40) / 2.0) / 4.0)
    s = r["gaussian_sigma"]
    np.testing.assert_allclose(g["gaussian_pdf"], np.exp(-((g["x"] - 40) / s) ** 2 / 2) / (s * math.sqrt(2 * math.pi)))


def test_geometric_pmf_hand_worked_and_normalised():
    eps = math.log(3)  # α = 1/3, P(k) = (1/2)·3^−|k|
    np.testing.assert_allclose(T.geometric_pmf([0, 1, -1, 2], eps), [0.5, 1 / 6, 1 / 6, 1 / 18])
    k = np.arange(-200, 201)
    p = T.geometric_pmf(k, 0.7)
    assert p.sum() == pytest.approx(1.0)
    # Its variance is the one mechanisms.py states, and the sd count_noise shows.
    assert (p * k ** 2).sum() == pytest.approx(mechanisms.geometric_variance(0.7))
    assert T.count_noise(10, 0.7)["geometric_sd"] == pytest.approx(math.sqrt((p * k ** 2).sum()))


def test_geometric_pmf_is_the_law_of_the_app_noise():
    draws = mechanisms.geometric_noise(200_000, 1.0, np.random.default_rng(7))
    for k in (0, 1, -2):
        freq = np.mean(draws == k)
        p = T.geometric_pmf(k, 1.0)
        assert abs(freq - p) < 4 * math.sqrt(p * (1 - p) / 200_000), k


# --------------------------------------------------------------------------- composition

def test_composition_counts_by_hand():
    r = T.composition_demo([0.1, 0.5, 0.5, 2.0, np.nan, 7.0], lower=0.0, upper=2.0, bins=2, epsilon=1.0)
    # 7.0 is clipped to the public upper bound; NaN is dropped.
    assert list(r["bins"]["count"]) == [3, 2]


@pytest.mark.parametrize("mechanism", ["laplace", "geometric"])
def test_composition_errors(mechanism):
    df, schema = core.load_bundled("diamonds")
    lo, hi = schema.columns["carat"].bounds
    eps, bins = 1.0, 10
    r = T.composition_demo(df["carat"], lower=lo, upper=hi, bins=bins, epsilon=eps, mechanism=mechanism, seed=3)
    assert r["bins"]["count"].sum() == len(df)
    s = r["summary"].set_index("way")
    assert s.loc["parallel", "epsilon_per_bin"] == eps and s.loc["sequential", "epsilon_per_bin"] == eps / bins
    for way, e in (("parallel", eps), ("sequential", eps / bins)):
        if mechanism == "laplace":
            b = 1 / e  # Var = 2b², E|X| = b
            rmse, mae = math.sqrt(2 * b * b), b
        else:
            k = np.arange(-5000, 5001)
            p = T.geometric_pmf(k, e)
            rmse, mae = math.sqrt((p * k ** 2).sum()), (p * np.abs(k)).sum()
        assert s.loc[way, "rmse_analytic"] == pytest.approx(rmse, rel=1e-9)
        assert s.loc[way, "mae_analytic"] == pytest.approx(mae, rel=1e-9)
        # 20,000 simulated bin errors: a few percent of sampling error.
        assert s.loc[way, "rmse_simulated"] == pytest.approx(rmse, rel=0.05)
        assert s.loc[way, "mae_simulated"] == pytest.approx(mae, rel=0.05)
    # Same total ε, sequential accounting: sd × bins (exact for Laplace).
    if mechanism == "laplace":
        assert s.loc["sequential", "rmse_analytic"] == pytest.approx(bins * s.loc["parallel", "rmse_analytic"])


def test_composition_is_seeded():
    kw = dict(lower=0.0, upper=1.0, bins=4, epsilon=0.5)
    v = np.linspace(0, 1, 50)
    a, b = T.composition_demo(v, seed=1, **kw), T.composition_demo(v, seed=1, **kw)
    pd.testing.assert_frame_equal(a["bins"], b["bins"])


# --------------------------------------------------------------------------- randomized response

def test_randomized_response_hand_worked():
    assert T.randomized_response_estimate([1, 1, 1, 0, 0], 0.75) == pytest.approx(0.7)
    assert T.randomized_response_epsilon(0.75) == pytest.approx(math.log(3))
    assert T.randomized_response_epsilon(1.0) == math.inf
    assert T.randomized_response_variance(100, 0.75) == pytest.approx(0.75 * 0.25 / (100 * 0.25))


def test_randomized_response_unbiased_with_formula_variance():
    n, share, p, reps = 300, 0.2, 0.7, 40_000
    r = T.randomized_response_demo(n, share, p, reps=reps, seed=11)
    sd = math.sqrt(p * (1 - p) / (n * (2 * p - 1) ** 2))
    assert r["sd_analytic"] == pytest.approx(sd)
    # Unbiased: the mean of 40,000 estimates within 4 standard errors of the truth.
    assert abs(r["mean_estimate"] - 0.2) < 4 * sd / math.sqrt(reps)
    # Variance: the sample sd of 40,000 draws is within ~2% (4 se) of the formula.
    assert r["sd_simulated"] == pytest.approx(sd, rel=0.02)


def test_randomized_response_population_variance_is_warners():
    # Drawing the group from a population with share π adds π(1 − π)/n: Warner's λ(1 − λ)/(n(2p − 1)²).
    n, pi, p, reps = 200, 0.4, 0.8, 40_000
    rng = np.random.default_rng(5)
    ones = rng.binomial(n, pi, reps)
    yes = rng.binomial(ones, p) + rng.binomial(n - ones, 1 - p)
    est = (yes / n - (1 - p)) / (2 * p - 1)
    lam = p * pi + (1 - p) * (1 - pi)
    assert T.randomized_response_variance(n, p, pi=pi) == pytest.approx(lam * (1 - lam) / (n * (2 * p - 1) ** 2))
    assert est.var(ddof=1) == pytest.approx(T.randomized_response_variance(n, p, pi=pi), rel=0.04)


# --------------------------------------------------------------------------- Beta–binomial synthesizer

def test_beta_binomial_alpha_is_the_dirichlet_synthesizers():
    # One formula for the Learn page's Beta–binomial and the Dirichlet synthesizer (issue 17).
    alpha = mechanisms.dirichlet_alpha
    assert alpha(100, math.log(2)) == pytest.approx(100.0)
    assert alpha(100, 1.0) == pytest.approx(100 / (math.e - 1))
    assert alpha(50, 1e-6) == pytest.approx(50 / 1e-6, rel=1e-5)  # ≈ ñ/ε for small ε
    assert alpha(100, 1e6) == 0.0  # no overflow at a huge ε (1/expm1 would raise)


def test_beta_binomial_bias_and_sweep():
    # By hand: θ = 0.3, n = 100, α = 100: α(1 − 2θ)/(n + 2α) = 100·0.4/300.
    assert T.beta_binomial_bias(0.3, 100, 100.0) == pytest.approx(0.4 / 3)
    sweep = T.beta_binomial_sweep(0.3, 100, [math.log(2), 100.0], [1, 10], reps=20_000, seed=2)
    row = sweep[(sweep["epsilon"] == math.log(2)) & (sweep["m"] == 1)].iloc[0]
    assert row["alpha"] == pytest.approx(100.0) and row["bias_analytic"] == pytest.approx(0.4 / 3)
    # Simulated mean share: sd of one q ≈ 0.05, so 20,000 reps give se ≈ 0.0004.
    assert row["bias_simulated"] == pytest.approx(0.4 / 3, abs=0.003)
    assert np.isnan(row["coverage_full"]) and np.isnan(row["coverage_partial"])  # need m ≥ 2
    # Strong prior: the intervals miss θ far more often than 5%.
    small = sweep[sweep["epsilon"] == math.log(2)]
    assert (small[["coverage_naive"]].to_numpy() < 0.5).all()
    # Almost no prior (ε = 100) and 10 implicates: Reiter's partial rule is close to nominal.
    big = sweep[(sweep["epsilon"] == 100.0) & (sweep["m"] == 10)].iloc[0]
    assert abs(big["bias_simulated"]) < 0.003
    assert 0.93 <= big["coverage_partial"] <= 0.97


# --------------------------------------------------------------------------- sequential synthesis

def test_sequential_synthesis_noise_keeps_the_spread():
    penguins, _ = core.load_bundled("penguins")
    real = penguins[["sex", "bill_length_mm", "flipper_length_mm"]].dropna()
    r = T.sequential_synthesis_demo(penguins, n_synth=40_000, seed=4)
    bill_sd, flip_sd = real["bill_length_mm"].std(), real["flipper_length_mm"].std()
    # With residual noise the synthetic sd is the real one within 3% (n = 40,000 synthetic rows).
    assert r["noisy"]["bill_length_mm"].std() == pytest.approx(bill_sd, rel=0.03)
    assert r["noisy"]["flipper_length_mm"].std() == pytest.approx(flip_sd, rel=0.03)
    # Bare predictions of bill length take two values, the sex means: sd = |difference|·√(p(1 − p)).
    means = real.groupby("sex")["bill_length_mm"].mean()
    p = (real["sex"] == "male").mean()
    bare_sd = r["bare"]["bill_length_mm"].std()
    assert bare_sd == pytest.approx(abs(means["male"] - means["female"]) * math.sqrt(p * (1 - p)), rel=0.03)
    assert bare_sd < 0.5 * bill_sd
    # ...and the next column inherits a perfect correlation.
    assert abs(np.corrcoef(r["bare"]["bill_length_mm"], r["bare"]["flipper_length_mm"])[0, 1]) == pytest.approx(1.0)
    # The fitted slope on sex is the difference of the group means (one dummy, least squares).
    coef = r["models"].set_index(["target", "term"])["coefficient"]
    assert coef[("bill_length_mm", "sex=male")] == pytest.approx(means["male"] - means["female"])


def test_sequential_synthesis_is_seeded():
    penguins, _ = core.load_bundled("penguins")
    a = T.sequential_synthesis_demo(penguins, seed=9)
    b = T.sequential_synthesis_demo(penguins, seed=9)
    pd.testing.assert_frame_equal(a["noisy"], b["noisy"])


# --------------------------------------------------------------------------- figures

def test_figures_build_and_escape():
    F = core.plots.teaching
    penguins, _ = core.load_bundled("penguins")
    df = penguins.rename(columns={"bill_length_mm": "<b>bill</b>"})
    r = T.sequential_synthesis_demo(df, first="<b>bill</b>", seed=0)
    for step in (1, 2, 3, 4):
        fig = F.sequential_synthesis_figure(r, step)
        assert "<b>bill</b>" not in str(fig.layout.title.text)
    assert F.exp_epsilon_figure(T.exp_epsilon_curve(), 1.0).data
    assert F.count_noise_figure(T.count_noise(5, 0.5)).data
    assert len(F.exponential_figure(T.exponential_binary_table(5, 2, 1.0)[1], 2).data) == 4
    assert F.randomized_response_figure(T.randomized_response_demo(50, 0.5, 0.8)).data
    sweep = T.beta_binomial_sweep(0.3, 50, [0.5, 1.0], [2], reps=50)
    assert F.beta_binomial_figure(sweep).data


def test_exp_epsilon_axes_tick_powers_of_ten():
    F = core.plots.teaching
    # ε from 0.01 to 10 spans 3 decades, e^ε from e^0.01 to e^10 = 22,026 spans 4.3: a tick at each power.
    fig = F.exp_epsilon_figure(T.exp_epsilon_curve(0.01, 10.0), 1.0)
    assert (fig.layout.xaxis.type, fig.layout.xaxis.dtick, fig.layout.yaxis.dtick) == ("log", 1, 1)
    # Up to ε = 100: e^100 spans log10(e^100) − log10(e^0.01) = 43.4 decades, so every ⌈43.4/8⌉ = 6th power.
    fig = F.exp_epsilon_figure(T.exp_epsilon_curve(0.01, 100.0), 1.0)
    assert (fig.layout.xaxis.dtick, fig.layout.yaxis.dtick) == (1, 6)


def test_exponential_table_probability_of_the_most_likely_outcome_by_hand():
    # n = 50, x = 30, ε = 0.5, Beta(1, 1), Δq = 1, factor 2: P(r) ∝ exp(0.25 q(r)).
    n, x = 50, 30
    # −|x − r|: the most likely r is x, with probability 1 / Σ_r e^{−|30 − r|/4}.
    p_abs = 1 / sum(math.exp(-abs(x - r) / 4) for r in range(n + 1))
    # P(r | x) by hand: C(n, r) B(r + 1 + x, n − r + 1 + n − x) / B(1 + x, 1 + n − x), with lgamma.
    def log_beta(a, b):
        return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    pp = [math.comb(n, r) * math.exp(log_beta(r + 1 + x, n - r + 1 + n - x) - log_beta(1 + x, 1 + n - x))
          for r in range(n + 1)]
    w_post = [math.exp(0.25 * v) for v in pp]               # q = P(r | x)
    w_log = [v ** 0.25 for v in pp]                          # q = log P(r | x): exp(0.25 log p) = p^0.25
    p_post, p_log = max(w_post) / sum(w_post), max(w_log) / sum(w_log)
    assert (round(p_abs, 4), round(p_post, 4), round(p_log, 4)) == (0.1248, 0.0199, 0.0430)  # the figures
    summary, _ = T.exponential_binary_table(n, x, 0.5)
    got = summary.set_index("score")["mode_probability"]
    assert got["abs"] == pytest.approx(p_abs, rel=1e-12)
    assert got["post"] == pytest.approx(p_post, rel=1e-12)
    assert got["logpost"] == pytest.approx(p_log, rel=1e-12)
    # Its expected distance to x, from the same hand weights.
    dist = sum(math.exp(-abs(x - r) / 4) * abs(x - r) for r in range(n + 1)) * p_abs
    assert summary.set_index("score").loc["abs", "expected_distance"] == pytest.approx(dist, rel=1e-12)


@pytest.mark.parametrize("text, default, kw, expected", [
    ("0.5", 1.0, dict(options=[0.1, 0.5, 1.0]), 0.5),
    ("0.50000000001", 1.0, dict(options=[0.1, 0.5, 1.0]), 0.5),   # a float written with noise still matches
    ("0.4", 1.0, dict(options=[0.1, 0.5, 1.0]), None),            # not a slider step
    ("7", 3, dict(low=0, high=5), None), ("5", 3, dict(low=0, high=5), 5),
    ("2.5", 3, dict(low=0, high=5), None),                        # an int control given a float
    ("nan", 0.3, dict(low=0.0, high=1.0), None), ("inf", 0.3, {}, None),
    ("true", False, {}, True), ("yes", False, {}, None),
    ("laplace", "geometric", dict(options=["geometric", "laplace"]), "laplace"),
    ("<script>", "geometric", dict(options=["geometric", "laplace"]), None),
])
def test_link_value_keeps_only_valid_control_values(text, default, kw, expected):
    assert T.link_value(text, default, **kw) == expected


def test_legends_sit_above_the_plots_clear_of_the_axis_titles():
    # Issue 20.7: a legend under the plot (y = -0.2) ran into the x axis title and slanted tick labels.
    F = core.plots.teaching
    sweep = T.beta_binomial_sweep(0.3, 50, [0.5, 1.0], [2], reps=50)
    figures = [F.count_noise_figure(T.count_noise(5, 0.5)),
               F.exponential_figure(T.exponential_binary_table(5, 2, 1.0)[1], 2),
               F.beta_binomial_figure(sweep, current=1.0),
               F.sequential_synthesis_figure(T.sequential_synthesis_demo(core.load_bundled("penguins")[0], seed=0), 3)]
    for fig in figures:
        legend = fig.layout.legend
        assert legend.yanchor == "bottom" and legend.y >= 1, fig.layout.title.text
        # Subplot titles are annotations just above each panel (y = 1 in paper units): the legend clears them.
        titles = [a for a in fig.layout.annotations if a.yref == "paper" and a.y is not None and a.y >= 1]
        assert all(legend.y > a.y for a in titles), fig.layout.title.text
