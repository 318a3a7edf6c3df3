"""Exact sampling on integers: coins of probability exp(−x/y), the discrete Gaussian, the exponential mechanism.

A privacy proof speaks of exact distributions; floating-point samplers only approximate them, and
the gaps can leak (Mironov 2012). Here every random decision compares uniform *integers* (drawn
from whole random words by rejection, never a float scaled up) with integers computed exactly,
following Canonne, Kamath and Steinke (2020, "The discrete Gaussian for differential
privacy", Algorithms 1–3):

* :func:`exp_coins` — Bernoulli(exp(−x/y)) for integers x ≥ 0, y > 0. For γ = x/y ≤ 1: draw
  A_k ~ Bernoulli(γ/k) for k = 1, 2, … until one fails; K, the index of the failure, is odd with
  probability Σ_j (−γ)^j/j! = exp(−γ). For γ > 1: ⌊γ⌋ coins of exp(−1), then one of exp(−(γ − ⌊γ⌋)),
  all of which must succeed. Bernoulli(x/(y·k)) is a uniform integer below y·k compared with x
  (or, where y·k could overflow, one below y compared with x AND one below k equal to 0).
* :func:`discrete_gaussian` — P(Z = z) ∝ exp(−z²/(2σ²)) on the integers, for σ² = a/b rational:
  Y is drawn from the discrete Laplace law P(y) ∝ exp(−|y|/t), t = ⌊σ⌋ + 1 (as U + t·V with U
  uniform below t kept with probability exp(−U/t), V geometric from coins of exp(−1), and a sign),
  and kept with probability exp(−(|Y| − σ²/t)²/(2σ²)) = exp(−(b·t·|Y| − a)²/(2·a·b·t²)); the
  product of the two laws is ∝ exp(−y²/(2σ²)) (CKS Algorithm 3, valid for any t > 0).
* :func:`exponential_choice` — index r with probability ∝ exp(ε·q_r/(2Δ)) for exact (rational)
  scores: propose r uniformly and keep it with probability exp(−ε(q* − q_r)/(2Δ)), q* the best
  score (rejection sampling: the kept r has exactly the mechanism's law; the best is always kept
  when proposed, so at most m proposals are expected for m candidates).

Vectorised: the loops run over numpy arrays of the draws still undecided, in int64 where every
integer provably fits (checked), and element by element in Python integers otherwise (rare
tails, huge σ): the same algorithm, so the law is the same.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Sequence

import numpy as np

#: Integers the vectorised paths compute stay below this (int64 holds 2⁶³ − 1): x·1 ≤ 2⁶², y ≤ 2⁶².
_INT_LIMIT = 2 ** 62
#: The discrete Gaussian's σ² = a/b is σ² rounded *up* to a dyadic a/2^e with a < 2³¹ (see :func:`dyadic_sigma2`).
_W_LIMIT = 2 ** 31


# -- scalar: Python integers of any size ---------------------------------------------------------------

class _Words:
    """Uniform integers below any m ≥ 1 for the scalar paths, from 64-bit words of ``noise`` fetched in
    batches (a numpy call per integer would cost ten times more than the rest of the work). Exact:
    m ≤ 2⁶⁴ takes w mod m of a word w below the largest multiple of m under 2⁶⁴, else a fresh word;
    a larger m takes as many words as its bits need, again with rejection. Unused words are dropped."""

    BATCH = 256

    def __init__(self, noise: np.random.Generator):
        self.noise = noise
        self.words: list[int] = []

    def word(self) -> int:
        if not self.words:
            self.words = self.noise.integers(0, 2 ** 64, size=self.BATCH, dtype=np.uint64).tolist()
        return self.words.pop()

    def below(self, m: int) -> int:
        if m <= 2 ** 64:
            limit = 2 ** 64 - 2 ** 64 % m
            while True:
                w = self.word()
                if w < limit:
                    return w % m
        bits = m.bit_length()
        while True:
            v = 0
            for _ in range((bits + 63) // 64):
                v = (v << 64) | self.word()
            v >>= -bits % 64
            if v < m:
                return v


def exp_coin(gamma: Fraction, words: _Words) -> bool:
    """One Bernoulli(exp(−γ)) coin for a rational γ ≥ 0 of any size (module docstring)."""
    if gamma < 0:
        raise ValueError(f"exp_coin needs γ ≥ 0, got {gamma}")
    whole, rest = divmod(gamma.numerator, gamma.denominator)
    for _ in range(whole):  # ⌊γ⌋ coins of exp(−1): the first failure ends it (so this loop is short)
        if not _coin_below_one(1, 1, words):
            return False
    return _coin_below_one(rest, gamma.denominator, words)


def _coin_below_one(x: int, y: int, words: _Words) -> bool:
    """Bernoulli(exp(−x/y)) for integers 0 ≤ x ≤ y (CKS Algorithm 1)."""
    k = 1
    while words.below(y) < x and words.below(k) == 0:
        k += 1
    return k % 2 == 1


# -- vectorised: int64 arrays ---------------------------------------------------------------------------

def exp_coins(x, y, noise: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(−x/y)) coins, one per element, for int64 arrays (or ints) 0 ≤ x ≤ 2⁶², 0 < y ≤ 2⁶²."""
    x, y = np.broadcast_arrays(np.asarray(x, dtype=np.int64), np.asarray(y, dtype=np.int64))
    shape = x.shape
    x, y = x.ravel(), y.ravel()
    if len(x) and not ((x >= 0).all() and (y > 0).all()):
        raise ValueError("exp_coins needs x ≥ 0 and y > 0")
    whole, rest = np.divmod(x, y)
    out = np.ones(len(x), dtype=bool)
    # ⌊x/y⌋ coins of exp(−1) each, all of which must succeed; each round decides one for every
    # element still going, and about 63 % of them fail there, so few rounds are needed
    todo = np.flatnonzero(whole > 0)
    left = whole[todo]
    while len(todo):
        ok = _coins_below_one(np.ones(len(todo), np.int64), np.ones(len(todo), np.int64), noise)
        out[todo[~ok]] = False
        left = left - 1
        keep = ok & (left > 0)
        todo, left = todo[keep], left[keep]
    last = np.flatnonzero(out & (rest > 0))
    out[last] = _coins_below_one(rest[last], y[last], noise)
    return out.reshape(shape)


def _uniform_below(m: np.ndarray, noise: np.random.Generator) -> np.ndarray:
    """One uniform integer in [0, m_i) for each entry of an int64 array 1 ≤ m ≤ 2⁶²: a word u uniform in
    [0, 2⁶²) gives u mod m when u is below the largest multiple of m that fits, else is drawn again
    (exact; numpy's bounded draw with an array of bounds does the same, at several times the cost)."""
    u = noise.integers(0, _INT_LIMIT, size=len(m), dtype=np.int64)
    limit = (_INT_LIMIT // m) * m
    bad = np.flatnonzero(u >= limit)
    while len(bad):
        u[bad] = noise.integers(0, _INT_LIMIT, size=len(bad), dtype=np.int64)
        bad = bad[u[bad] >= limit[bad]]
    return u % m


def _coins_below_one(x: np.ndarray, y: np.ndarray, noise: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(−x/y)) for int64 arrays with 0 ≤ x ≤ y ≤ 2⁶² (CKS Algorithm 1, every element at once).

    Bernoulli(x/(y·k)) is one uniform below y·k compared with x while y·k fits, else a uniform below y
    compared with x AND one below k equal to 0.
    """
    k = np.ones(len(x), dtype=np.int64)
    going = np.arange(len(x))
    while len(going):
        xg, yg, kg = x[going], y[going], k[going]
        if int(yg.max()) * int(kg.max()) <= _INT_LIMIT:
            a = _uniform_below(yg * kg, noise) < xg
        else:
            a = (_uniform_below(yg, noise) < xg) & (_uniform_below(kg, noise) == 0)
        going = going[a]
        k[going] += 1
    return k % 2 == 1


def geometric_exp1(size: int, noise: np.random.Generator) -> np.ndarray:
    """V with P(V = v) = (1 − e⁻¹)·e^(−v), v = 0, 1, …: the successes of exp(−1) coins before the first failure."""
    v = np.zeros(size, dtype=np.int64)
    going = np.arange(size)
    while len(going):
        ok = _coins_below_one(np.ones(len(going), np.int64), np.ones(len(going), np.int64), noise)
        going = going[ok]
        v[going] += 1
    return v


# -- the discrete Laplace (two-sided geometric) law -----------------------------------------------------

#: The rate λ = ε/Δ of :func:`discrete_laplace` is rounded *down* to a/2^k with 2^k ≤ this.
_RATE_DENOMINATOR = 2 ** 40


def dyadic_rate(rate: float | Fraction) -> tuple[int, int]:
    """(a, b), b = 2^k ≤ 2⁴⁰, a < 2⁶²: the rate λ rounded *down* to a/b (by less than 2⁻⁴⁰ in absolute
    terms, so by less than 10⁻⁹ of λ for every λ ≥ 10⁻³). Rounding down only adds noise: the guarantee at
    the λ asked for holds."""
    exact = Fraction(rate)
    if exact <= 0:
        raise ValueError(f"the rate must be positive, got {rate!r}")
    b = _RATE_DENOMINATOR
    while b > 1 and math.floor(exact * b) >= _INT_LIMIT:
        b //= 2
    a = math.floor(exact * b)
    if a == 0 or a >= _INT_LIMIT:
        raise ValueError(f"the rate {float(exact):g} is outside what integer noise can take (2⁻⁴⁰ to 2⁶²)")
    return a, b


def discrete_laplace(size, a: int, b: int, noise: np.random.Generator) -> np.ndarray:
    """Integers with P(z) ∝ exp(−|z|·a/b), int64 of ``size`` (CKS Algorithm 2).

    X = U + b·V, with U uniform below b kept with probability exp(−U/b) and V geometric from coins of
    exp(−1), has P(X = x) ∝ exp(−x/b); so Y = ⌊X/a⌋ has P(Y ≥ y) = exp(−y·a/b). A fair sign, with
    (negative, 0) drawn again so that zero is not counted twice, makes it two-sided.
    """
    size = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    if not (0 < a < _INT_LIMIT and 0 < b <= _RATE_DENOMINATOR):
        raise ValueError(f"discrete_laplace needs 0 < a < 2⁶² and 0 < b ≤ 2⁴⁰, got {a}, {b}")
    need = int(np.prod(size))
    out = np.empty(need, dtype=np.int64)
    filled = 0
    while filled < need:
        m = need - filled + 8  # about 63 % are kept (exp(−U/b) averages 1 − e⁻¹), and half of the zeros
        u = _uniform_below(np.full(m, b, dtype=np.int64), noise)
        u = u[exp_coins(u, np.int64(b), noise)]
        v = geometric_exp1(len(u), noise)
        if len(v) and int(v.max()) >= _INT_LIMIT // b - 1:  # b·(V + 1) past int64: P < e^(−2²²), exact anyway
            x = np.array([int(ui) + b * int(vi) for ui, vi in zip(u, v)], dtype=object)
            y = np.array([xi // a for xi in x], dtype=object).astype(np.int64)
        else:
            y = (u + b * v) // a
        negative = noise.integers(0, 2, len(y)).astype(bool)
        z = np.where(negative, -y, y)[~(negative & (y == 0))][: need - filled]
        out[filled:filled + len(z)] = z
        filled += len(z)
    return out.reshape(size)


# -- the discrete Gaussian ------------------------------------------------------------------------------

def dyadic_sigma2(sigma2: float | Fraction) -> tuple[int, int]:
    """(a, b), b = 2^e: σ² rounded *up* to a/b, as finely as the sampler's int64 arithmetic allows.

    e is the largest with 64·b·t² + a < 2³¹ (t = ⌊√(a/b)⌋ + 1), so that for every |Y| ≤ 64·t the
    acceptance test's w = b·t·|Y| − a is below 2³¹ and w² below 2⁶² (larger |Y|, probability below
    e⁻⁶⁴, go the Python-integer way). That keeps a ≥ 2²⁰ for every σ ≥ 0.25 (σ² grows by less than
    10⁻⁶ of itself) and a ≥ 2²² from σ = 1 until e reaches 0 near σ² = 2²⁵, where a = ⌈σ²⌉. Rounding
    up only adds noise: the guarantee at the σ asked for holds.
    """
    try:
        exact = Fraction(sigma2)
    except (OverflowError, ValueError):  # inf, nan
        exact = Fraction(0)
    if exact <= 0:
        raise ValueError(f"σ² must be a positive finite number, got {sigma2!r}")
    for e in range(60, -1, -1):
        b = 2 ** e
        a = math.ceil(exact * b)
        t = math.isqrt(a * b) // b + 1
        if 64 * b * t * t + a < _W_LIMIT or e == 0:
            return a, b
    raise AssertionError("unreachable")


def discrete_gaussian(size, a: int, b: int, noise: np.random.Generator) -> np.ndarray:
    """Integers with P(z) ∝ exp(−z²/(2σ²)), σ² = a/b (CKS Algorithm 3; module docstring), int64 of ``size``."""
    size = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    return discrete_gaussians([(a, b)], [int(np.prod(size))], noise)[0].reshape(size)


def discrete_gaussians(sigma2s: Sequence[tuple[int, int]], counts: Sequence[int],
                       noise: np.random.Generator) -> list[np.ndarray]:
    """``counts[i]`` discrete Gaussian draws at σ² = a_i/b_i for each pair of ``sigma2s``, all in one pass
    (several tables of different σ cost one run of the vectorised loops, not one each)."""
    params = []
    for a, b in sigma2s:
        if not (a > 0 and b > 0):
            raise ValueError(f"σ² = a/b needs a, b > 0, got {a}/{b}")
        t = math.isqrt(a * b) // b + 1  # ⌊σ⌋ + 1
        den = 2 * a * b * t * t
        y_max = (_W_LIMIT - 1 - a) // (b * t) if den <= _INT_LIMIT else -1  # the |Y| the int64 test handles
        params.append((a, b, t, den if den <= _INT_LIMIT else 1, y_max))
    params = np.array(params, dtype=np.int64).reshape(-1, 5)
    need = np.array(counts, dtype=np.int64)
    got: list[list[np.ndarray]] = [[] for _ in counts]
    rate = 0.5  # the share of proposals kept so far (a guess to start)
    while need.sum() > 0:
        # proposals for each table's missing draws and some spare, so that one or two rounds usually
        # suffice; a table takes its first kept proposals in order, the spare ones are dropped whatever
        # their value (kept proposals are i.i.d. draws of the law, so any rule by position is fair)
        k = np.where(need > 0, (need / rate * 1.1).astype(np.int64) + 8, 0)
        y, kept = _proposals(np.repeat(params, k, axis=0), noise)
        rate = max(float(kept.mean()), 0.01)
        for g, (yg, kg) in enumerate(zip(np.split(y, np.cumsum(k)[:-1]), np.split(kept, np.cumsum(k)[:-1]))):
            take = yg[kg][: need[g]]
            got[g].append(take)
            need[g] -= len(take)
    return [np.concatenate(parts) if parts else np.empty(0, np.int64) for parts in got]


def _proposals(p: np.ndarray, noise: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One round of CKS Algorithm 3 for each row (a, b, t, 2abt², |Y| limit) of ``p``: (Y, kept)."""
    a, b, t, den, y_max = p.T
    u = _uniform_below(t, noise)
    kept = exp_coins(u, t, noise)  # U with probability ∝ exp(−U/t)
    v = np.zeros(len(u), dtype=np.int64)
    v[kept] = geometric_exp1(int(kept.sum()), noise)
    sign = noise.integers(0, 2, len(u))
    kept &= ~((sign == 1) & (u == 0) & (v == 0))  # +0 and −0 would count zero twice
    y = (1 - 2 * sign) * (u + t * v)
    small = np.flatnonzero(kept & (np.abs(y) <= y_max))
    w = b[small] * t[small] * np.abs(y[small]) - a[small]
    kept[small] = exp_coins(w * w, den[small], noise)
    far = np.flatnonzero(kept & (np.abs(y) > y_max))  # Python integers: the rare far tail, or a huge σ
    words = _Words(noise) if len(far) else None
    for i in far:
        ai, bi, ti = int(a[i]), int(b[i]), int(t[i])
        kept[i] = exp_coin(Fraction((bi * ti * abs(int(y[i])) - ai) ** 2, 2 * ai * bi * ti * ti), words)
    return y, kept


def discrete_gaussian_pmf(z, sigma2: float) -> np.ndarray:
    """P(Z = z) of the discrete Gaussian with variance parameter σ² (normalised over |z| ≤ 40σ + 40, beyond
    which the terms are below e⁻⁸⁰⁰ of the largest)."""
    reach = int(40 * math.sqrt(sigma2) + 40)
    grid = np.arange(-reach, reach + 1)
    norm = np.exp(-grid.astype(float) ** 2 / (2 * sigma2)).sum()
    z = np.asarray(z, dtype=float)
    return np.exp(-z ** 2 / (2 * sigma2)) / norm


# -- the exponential mechanism --------------------------------------------------------------------------

def exponential_choice(scores: Sequence, epsilon: float | Fraction, sensitivity: float | Fraction,
                       noise: np.random.Generator) -> int:
    """The index r drawn with probability exactly ∝ exp(ε·q_r/(2Δ)) (module docstring).

    ``scores`` must be exact: ints, Fractions, or floats standing for their exact binary values; the
    caller's sensitivity Δ must hold for the scores as computed (so compute them in integers or
    fractions: a floating-point sum's rounding is not covered by a real-arithmetic proof).
    """
    q = [Fraction(s) for s in scores]
    if not q:
        raise ValueError("the exponential mechanism needs at least one candidate")
    factor = Fraction(epsilon) / (2 * Fraction(sensitivity))
    if factor <= 0:
        raise ValueError("the exponential mechanism needs ε > 0 and Δ > 0")
    best = max(q)
    gamma = [factor * (best - s) for s in q]
    words = _Words(noise)
    while True:
        r = words.below(len(q))
        if exp_coin(gamma[r], words):
            return r
