"""Exact noise from a secret stream (issue 28, points 1 and 2): the integer samplers against their exact
laws, the ChaCha20 stream against the RFC's test vectors, and the two streams of a synthesis kept apart.

Every statistical test fixes its generator's key, so it is deterministic; each states the tolerance a
correct sampler meets for all but a small share of keys, and shows on the same draws that a sampler
off by a few percent would fail it.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from randomgen import ChaCha
from scipy import stats

import dpsynth_core as core
from dpsynth_core.privacy import DiscreteGaussian, ExponentialMechanism
from dpsynth_core.privacy import exact, mechanisms
from dpsynth_core.privacy.randomness import noise_generator, noise_key, streams
from dpsynth_core.synth import SYNTHESIZERS, base, synthesize


def _chi_square_p(counts: np.ndarray, probs: np.ndarray) -> float:
    """p-value of Pearson's chi-square of ``counts`` against ``probs``, cells with expected count < 5 pooled."""
    n = counts.sum()
    expected = probs * n
    big = expected >= 5
    obs = np.append(counts[big], counts[~big].sum())
    exp_ = np.append(expected[big], expected[~big].sum())
    if exp_[-1] < 5:  # the pooled rest, when it is too small, goes into the smallest kept cell
        i = np.argmin(exp_[:-1])
        obs[i], exp_[i] = obs[i] + obs[-1], exp_[i] + exp_[-1]
        obs, exp_ = obs[:-1], exp_[:-1]
    return float(stats.chisquare(obs, exp_ * obs.sum() / exp_.sum()).pvalue)


def _pmf(sigma2: float, reach: int) -> tuple[np.ndarray, np.ndarray]:
    """The discrete Gaussian's exact law on −reach … reach (its mass beyond is below e⁻⁸⁰⁰ for the σ used)."""
    z = np.arange(-reach, reach + 1)
    return z, exact.discrete_gaussian_pmf(z, sigma2)


# -- the secret stream -----------------------------------------------------------------------------

def test_the_noise_stream_is_chacha20_by_the_rfc_8439_test_vectors():
    # RFC 8439, appendix A.1: the ChaCha20 block function's output for test vectors 1, 2 (key 0, block
    # counters 0 and 1) and 4 (key 00 ff 00 … 00, block counter 2), all with nonce 0.
    vectors = {(0, 0): "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
                       "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586",
               (0, 1): "9f07e7be5551387a98ba977c732d080dcb0f29a048e3656912c6533e32ee7aed"
                       "29b721769ce64e43d57133b074d839d531ed1f28510afb45ace10a1f4b794d6f",
               (0xff00, 2): "72d54dfbf12ec44b362692df94137f328fea8da73990265ec1bbbea1ae9af0ca"
                            "13b25aa26cb4a648cb9b9d1be65b2c0924a66c54d545ec1b7374f4872e99f096"}
    for (key, block), want in vectors.items():
        words = np.random.Generator(ChaCha(key=key, counter=0, rounds=20)).bit_generator.random_raw(8 * (block + 1))
        got = b"".join(int(w).to_bytes(8, "little") for w in words[8 * block:])
        assert got.hex() == want, (key, block)
    # the synthesis's noise generator is that cipher with 20 rounds, keyed as randomness.noise_key says
    g = noise_generator(5)
    assert type(g.bit_generator) is ChaCha and g.bit_generator.state["state"]["rounds"] == 20
    assert noise_generator(5).integers(0, 2 ** 62, 4).tolist() == \
        np.random.Generator(ChaCha(key=noise_key(5), counter=0, rounds=20)).integers(0, 2 ** 62, 4).tolist()


def test_fresh_keys_are_fresh_and_a_seed_reproduces_both_streams():
    a, b = noise_generator(None), noise_generator(None)
    assert a.integers(0, 2 ** 62, 4).tolist() != b.integers(0, 2 ** 62, 4).tolist()
    (r1, n1), (r2, n2) = streams(11), streams(11)
    assert r1.random(3).tolist() == r2.random(3).tolist() and n1.random(3).tolist() == n2.random(3).tolist()
    # the records' stream is numpy's PCG64 from the seed, as before
    assert np.random.default_rng(11).random(3).tolist() == streams(11)[0].random(3).tolist()
    with pytest.raises(ValueError, match="seed must be"):
        streams(-1)


DP_METHODS = [m for m, s in SYNTHESIZERS.items() if s.is_dp and s.spends.kind != "none"]
# the methods whose sampling of records is the mechanism itself: every draw of a code comes from the noise
# stream, and with categorical columns only the records' stream is not read at all (dirichlet's order of
# rows is, hence its rows are compared as a multiset)
CODES_FROM_NOISE = {"dirichlet", "pegs", "pegs_rs", "pmi"}
# sampling records whose number of draws is fixed by n and the schema alone (dp_seqreg's posterior draws
# are not: a chi-square draw by rejection takes a number of uniforms that depends on its argument)
FIXED_RECORD_DRAWS = {"mst", "privbayes", "independent", "dirichlet", "pegs", "pegs_rs", "pmi"}


@pytest.mark.parametrize("method", DP_METHODS)
def test_the_records_generator_says_nothing_about_the_noise(method, monkeypatch):
    df, schema = core.load_bundled("penguins")
    cols = ["species", "island", "sex", "year"]  # categorical, small enough for every method's tables
    df, schema = df[cols].head(150), {c: schema.to_dict()[c] for c in cols}
    made, drawn = [], []

    def spy(module, name):  # keep every value a privacy primitive returns
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, **k: drawn.append(real(*a, **k)) or drawn[-1])

    spy(exact, "discrete_gaussians")
    spy(exact, "exponential_choice")
    spy(mechanisms, "geometric_noise")

    def run(records_seed, key):
        drawn.clear()
        monkeypatch.setattr(base, "streams", lambda seed: made.append(
            (np.random.default_rng(records_seed), np.random.Generator(ChaCha(key=key, rounds=20)))) or made[-1])
        # per-record methods at 5 per record, so that their draws depend on the chains' states
        epsilon = 300.0 if SYNTHESIZERS[method].spends.kind == "per record" else 2.0
        result = synthesize(df, method, epsilon=epsilon, schema=schema, n=60, seed=None)
        states = [json.dumps(g.bit_generator.state, sort_keys=True, default=lambda a: np.asarray(a).tolist())
                  for g in made[-1]]
        return result, repr(drawn), *states

    one, noise_one, r_one, n_one = run(1, 123)
    two, noise_two, r_two, n_two = run(2, 123)
    # Another records generator, the same noise key: every value the mechanisms drew is the same, the noise
    # stream was read exactly as far, and every outcome the ledger reports (chosen tree or parents) is too.
    assert r_one != r_two
    assert noise_one == noise_two and n_one == n_two and one.ledger["steps"] == two.ledger["steps"]
    if method in CODES_FROM_NOISE:
        rows = [sorted(tuple(map(str, row)) for row in r.data.to_numpy()) for r in (one, two)]
        assert rows[0] == rows[1]
    else:
        assert len(noise_one) > 2  # the spies saw the noise (a draw per noisy table or choice)
    if method in FIXED_RECORD_DRAWS:
        # The same records generator, another noise key: the records' stream is read exactly as far,
        # so no mechanism drew from it.
        three, noise_three, r_three, n_three = run(1, 456)
        assert r_three == r_one and n_three != n_one
        assert method in CODES_FROM_NOISE or noise_three != noise_one


def test_a_seeded_exploration_reproduces_exactly():
    df, schema = core.load_bundled("penguins")
    for method in ("mst", "privbayes", "pegs"):
        a = synthesize(df, method, epsilon=1.0, schema=schema, seed=9, n=100)
        b = synthesize(df, method, epsilon=1.0, schema=schema, seed=9, n=100)
        pd.testing.assert_frame_equal(a.data, b.data)
        assert a.ledger["steps"] == b.ledger["steps"] and not a.ledger["is_dp"]


# -- exact coins ------------------------------------------------------------------------------------

@pytest.mark.parametrize("x, y", [(0, 1), (1, 3), (1, 1), (5, 2), (7, 1), (123456789, 2 ** 40)])
def test_vectorised_coins_have_probability_exp_minus_x_over_y(x, y):
    n = 200_000
    hits = int(exact.exp_coins(np.full(n, x), np.full(n, y), noise_generator(x * 7 + y)).sum())
    p = math.exp(-x / y)
    if x == 0:
        assert hits == n
        return
    # two-sided exact binomial test at level 1e-4 (six cases: a correct sampler fails one of them for
    # fewer than 1 key in 1,600)
    assert stats.binomtest(hits, n, p).pvalue > 1e-4, (hits / n, p)


@pytest.mark.parametrize("gamma", [Fraction(3, 7), Fraction(5, 2), Fraction(10 ** 40 + 1, 10 ** 40)])
def test_scalar_coins_with_python_integers_of_any_size(gamma):
    words = exact._Words(noise_generator(int(gamma * 1000)))
    n = 30_000
    hits = sum(exact.exp_coin(gamma, words) for _ in range(n))
    assert stats.binomtest(hits, n, math.exp(-float(gamma))).pvalue > 1e-4


def test_uniform_integers_below_a_bound_are_uniform():
    # a bound that does not divide 2^62 nor 2^64 (rejection needed), in the vector and the word paths
    m = 3 * 2 ** 40 + 1
    rng = noise_generator(1)
    v = exact._uniform_below(np.full(60_000, m, dtype=np.int64), rng)
    w = np.array([exact._Words(rng).below(m) for _ in range(2_000)] + [exact._Words(rng).below(2 ** 70 + 3)])
    assert v.min() >= 0 and v.max() < m and w[:-1].max() < m and 0 <= w[-1] < 2 ** 70 + 3
    counts = np.bincount((v * 10 // m).astype(int), minlength=10)
    assert stats.chisquare(counts).pvalue > 1e-3


# -- the discrete Gaussian -----------------------------------------------------------------------------

@pytest.mark.parametrize("sigma2", [0.3, 2.5, 40.0, 1025.6])
def test_discrete_gaussian_against_its_exact_probabilities(sigma2):
    a, b = exact.dyadic_sigma2(sigma2)
    z = exact.discrete_gaussian(200_000, a, b, noise_generator(int(sigma2 * 10)))
    reach = int(12 * math.sqrt(sigma2)) + 3
    assert np.abs(z).max() <= reach
    grid, p = _pmf(a / b, reach)
    counts = np.bincount(z + reach, minlength=len(grid))
    # Pearson's chi-square over the integers (expected counts below 5 pooled), level 1e-3; the same draws
    # against the law at 1.05 σ² (5 % more variance) fail it, so the test can tell.
    assert _chi_square_p(counts, p) > 1e-3
    assert _chi_square_p(counts, _pmf(1.05 * a / b, reach)[1]) < 1e-3


@pytest.mark.slow  # 20,000 draws on Python integers
def test_discrete_gaussian_with_python_integers_for_a_huge_sigma():
    # σ² = 2^33: 2·a·b·t² overflows int64, so every acceptance test runs on Python integers. Checked on
    # 20 bins of equal probability under the exact law (summed over ±40σ).
    sigma2 = 2.0 ** 33
    a, b = exact.dyadic_sigma2(sigma2)
    assert (a, b) == (2 ** 33, 1)
    z = exact.discrete_gaussian(20_000, a, b, noise_generator(33))
    sigma = math.sqrt(sigma2)
    grid = np.arange(-int(40 * sigma), int(40 * sigma) + 1)
    cdf = np.cumsum(exact.discrete_gaussian_pmf(grid, sigma2))
    edges = grid[np.searchsorted(cdf, np.arange(1, 20) / 20)]
    counts = np.bincount(np.searchsorted(edges, z, side="right"), minlength=20)
    probs = np.diff(np.concatenate([[0.0], cdf[np.searchsorted(grid, edges)], [1.0]]))
    assert stats.chisquare(counts, probs * len(z)).pvalue > 1e-3


def test_the_far_tail_takes_the_python_integer_path_with_the_same_law(monkeypatch):
    # Shrink the int64 path's limit so that every |Y| ≥ 4 goes through exact Fractions: the law is unchanged.
    a, b = exact.dyadic_sigma2(4.0)
    t = math.isqrt(a * b) // b + 1
    monkeypatch.setattr(exact, "_W_LIMIT", a + 3 * b * t + 1)
    z = exact.discrete_gaussian(50_000, a, b, noise_generator(4))
    grid, p = _pmf(a / b, 40)
    assert _chi_square_p(np.bincount(z + 40, minlength=len(grid)), p) > 1e-3


def test_sigma_is_rounded_up_and_finely():
    for s2 in [0.0625, 0.3, 1.0, 2.5, 1025.6, 3.3e6, 1.4e7, 2.0 ** 40]:
        a, b = exact.dyadic_sigma2(s2)
        assert Fraction(a, b) >= Fraction(s2) and (Fraction(a, b) - Fraction(s2)) / Fraction(s2) < 1e-6
        t = math.isqrt(a * b) // b + 1
        assert t == math.floor(math.sqrt(a / b)) + 1
        assert b == 1 or 64 * b * t * t + a < 2 ** 31
    with pytest.raises(ValueError):
        exact.dyadic_sigma2(0.0)


def test_the_mechanism_object_rho_and_sensitivity_in_integer_noise_out():
    m = DiscreteGaussian(rho=0.02, sensitivity=2.0)  # σ² = Δ²/(2ρ) = 4/0.04 = 100
    assert m.sigma == pytest.approx(10.0, rel=1e-7) and m.variance == pytest.approx(100.0, rel=1e-7)
    noise = m.sample(noise_generator(0), (3, 4))
    assert noise.shape == (3, 4) and noise.dtype == np.int64
    step = m.step("a table", repeats=3).to_dict()
    assert step["rho"] == 0.02 and step["rho_total"] == pytest.approx(0.06) and step["sigma"] == m.sigma
    assert "epsilon" not in step and "delta" not in step
    # a small σ: the variance is the exact sum over the integers, not σ²
    small = DiscreteGaussian(rho=2.0)  # σ² = 1/4
    w = np.exp(-np.arange(1, 60) ** 2 / 0.5)
    assert small.variance == pytest.approx(2 * (np.arange(1, 60) ** 2 * w).sum() / (1 + 2 * w.sum()), rel=1e-12)
    # several tables in one pass: each with its own σ
    tables = DiscreteGaussian.noisy_many([DiscreteGaussian(0.5), DiscreteGaussian(1e-4)],
                                         [np.zeros(20_000, np.int64), np.zeros(20_000, np.int64)], noise_generator(1))
    assert tables[0].std() == pytest.approx(1.0, rel=0.03) and tables[1].std() == pytest.approx(math.sqrt(5000), rel=0.03)


# -- the exponential mechanism --------------------------------------------------------------------------

def test_exponential_mechanism_against_its_exact_probabilities():
    scores = [0, 1, 2, Fraction(7, 2), 8]
    em = ExponentialMechanism(1.0, 1.0)
    rng = noise_generator(8)
    # 5,000 draws: against ε = 1.2 the chi-square's noncentrality is 5,000 × 0.047 ≈ 236, far past the 18.5 of
    # its 1e-3 level on 4 degrees of freedom, so the second check has power with a wide margin.
    picks = np.bincount([em.select(scores, rng) for _ in range(5_000)], minlength=5)
    w = np.exp(np.array([float(s) for s in scores]) / 2)
    assert stats.chisquare(picks, w / w.sum() * picks.sum()).pvalue > 1e-3
    # the same draws against ε = 1.2 (scores weighed 20 % harder) fail
    w2 = np.exp(1.2 * np.array([float(s) for s in scores]) / 2)
    assert stats.chisquare(picks, w2 / w2.sum() * picks.sum()).pvalue < 1e-3
    assert em.rho == pytest.approx(1 / 8) and em.zcdp_step("x", repeats=2).total_rho == pytest.approx(0.25)


def test_the_geometric_rate_is_rounded_down_to_a_dyadic_fraction():
    # 0.3 = 5404319552844595 / 2⁵⁴ exactly (the float); at 2⁻⁴⁰ it rounds down to ⌊0.3·2⁴⁰⌋ / 2⁴⁰.
    a, b = exact.dyadic_rate(0.3)
    assert b == 2 ** 40 and a == (Fraction(0.3) * 2 ** 40).__floor__() and Fraction(a, b) <= Fraction(0.3)
    assert 0.3 - a / b < 2 ** -40
    assert exact.dyadic_rate(1.0) == (2 ** 40, 2 ** 40)  # a dyadic rate is kept exactly
    assert exact.dyadic_rate(2.0 ** 30) == (2 ** 61, 2 ** 31)  # a huge rate: the denominator shrinks to fit
    with pytest.raises(ValueError):
        exact.dyadic_rate(2.0 ** -50)


@pytest.mark.parametrize("a, b", [(1, 3), (7, 2), (2 ** 40, 2 ** 40)])
def test_discrete_laplace_against_its_exact_probabilities(a, b):
    # P(z) = (1 − r)/(1 + r)·r^|z|, r = exp(−a/b); Pearson's chi-square at level 1e-3 (cells below 5 pooled),
    # and the same draws rejected against the law of a 5 % larger rate (the test has the power to see it).
    z = exact.discrete_laplace(200_000, a, b, np.random.default_rng(11))
    reach = int(math.ceil(30 * b / a))
    grid = np.arange(-reach, reach + 1)
    counts = np.bincount(np.clip(z, -reach, reach) + reach, minlength=len(grid))

    def law(rate):
        rr = math.exp(-rate)
        return (1 - rr) / (1 + rr) * rr ** np.abs(grid)

    assert _chi_square_p(counts, law(a / b)) > 1e-3
    assert _chi_square_p(counts, law(1.05 * a / b)) < 1e-3
