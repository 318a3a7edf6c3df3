"""Noise-adding mechanisms, with their scales computed in one place.

Counts get integer (two-sided geometric) noise rather than floating-point
Laplace noise, whose low-order bits leak the true value (Mironov 2012). The
zCDP methods' counts get discrete Gaussian noise and their selections the
exponential mechanism, both sampled exactly in integers (:mod:`.exact`).
Mechanisms draw from the generator they are given: a synthesis gives them its
secret noise stream (:mod:`.randomness`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, ClassVar, Sequence

import numpy as np

from . import exact
from .ledger import Step


def check_epsilon(epsilon: float) -> float:
    """Return ``epsilon`` as a float, or raise for a value no mechanism accepts."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.floating, np.integer)):
        raise TypeError(f"epsilon must be a number, got {type(epsilon).__name__}")
    epsilon = float(epsilon)
    if not (epsilon > 0 and math.isfinite(epsilon)):
        raise ValueError(f"epsilon must be a positive finite number, got {epsilon!r}")
    return epsilon


def geometric_alpha(epsilon: float, sensitivity: float = 1.0) -> float:
    """Ratio of neighbouring probabilities of the geometric mechanism, exp(−ε/Δ₁)."""
    return math.exp(-check_epsilon(epsilon) / sensitivity)


#: Largest −log p of one factor in :func:`bernoulli_exp`: p ≥ e^−20 ≈ 2e−9 is far above a
#: uniform's 2^−53 step.
_PIECE = 20.0


def bernoulli_exp(t, rng: np.random.Generator, size=None) -> np.ndarray:
    """Coins that come up True with probability exp(−t), exactly even when exp(−t) underflows.

    exp(−t) is the product of k = ⌈t/20⌉ factors exp(−t/k) ≥ e^−20, so the coin is
    the AND of k independent coins each drawn from one uniform: every factor is
    far above the uniform's resolution (2^−53), and no positive probability is
    rounded to zero. The loop stops as soon as every coin has failed (after one
    factor, almost always).

    Parameters
    ----------
    t : float or array of float
        −log of each coin's probability, ≥ 0 (``inf`` gives False).
    rng : numpy.random.Generator
    size : int or tuple, optional
        Shape of the result when ``t`` is a scalar.
    """
    t = np.asarray(t, dtype=float)
    if size is not None:
        t = np.broadcast_to(t, size)
    t = t.ravel()
    if not (t >= 0).all():  # NaN too
        raise ValueError("bernoulli_exp needs t ≥ 0")
    shape = np.shape(t) if size is None else size
    if len(t) and t.max() <= _PIECE:
        # One factor for every coin (the usual case): the loop below would draw exactly these uniforms.
        return (rng.random(len(t)) < np.exp(-t)).reshape(shape)
    finite = np.isfinite(t)
    k = np.where(finite, np.maximum(1, np.ceil(t / _PIECE)), 1).astype(np.int64)
    step = np.exp(-np.where(finite, t, 0.0) / k)
    alive = finite.copy()
    piece = 0
    while True:
        active = np.flatnonzero(alive & (k > piece))
        if not len(active):
            break
        alive[active] = rng.random(len(active)) < step[active]
        piece += 1
    return alive.reshape(shape)


def geometric_noise(size, epsilon: float, rng: np.random.Generator, *, sensitivity: float = 1.0) -> np.ndarray:
    """Two-sided geometric noise, P(k) ∝ exp(−ε|k|/Δ₁), k ∈ ℤ, sampled exactly.

    Every random decision compares uniform integers with integers
    (:func:`.exact.discrete_laplace`, Canonne, Kamath and Steinke 2020, Algorithm 2): no probability is
    lost to floating point at any ε. The rate ε/Δ₁ is rounded down to a multiple of 2⁻⁴⁰, which only
    adds noise.

    Parameters
    ----------
    size : int or tuple of int
        Shape of the noise array.
    epsilon : float
        Privacy parameter of this release. Must be > 0.
    rng : numpy.random.Generator
        The privacy noise stream (:func:`.noise.streams`) in every DP method.
    sensitivity : float, default 1
        L1 sensitivity of the integer query.
    """
    lam = check_epsilon(epsilon) / sensitivity
    if lam < 1e-9:
        raise ValueError(f"ε/Δ = {lam:g} is too small for integer noise; use a larger ε or a smaller sensitivity")
    return exact.discrete_laplace(size, *geometric_rate(epsilon, sensitivity), rng)


def geometric_rate(epsilon: float, sensitivity: float = 1.0) -> tuple[int, int]:
    """(a, b): the rate a/b that :func:`geometric_noise` draws at, ε/Δ₁ rounded down to a multiple of 2⁻⁴⁰
    (:func:`.exact.dyadic_rate`). A computation on the noise's law that must hold for the code as it runs (a
    tail bound behind a δ) uses this rate, whose tail is a hair heavier than ε's."""
    return exact.dyadic_rate(Fraction(check_epsilon(epsilon)) / Fraction(sensitivity))


def log_perturbation_alpha(x: float) -> float:
    """log α for α = 1/(e^x − 1), the pseudo-count that makes a perturbed conditional x-DP.

    Computed as −x − log(1 − e^−x), finite for every x > 0, where α itself underflows
    to 0 beyond x ≈ 745.

    >>> round(math.exp(log_perturbation_alpha(math.log(2))), 12)
    1.0
    """
    return -x - math.log(-math.expm1(-x))


def uniform_part_t(totals: np.ndarray, categories: int, log_alpha: float) -> np.ndarray:
    """−log of the α part's share Cα/(W + Cα) of (w_j + α)/(W + Cα), for weights summing to ``totals`` (≥ 0)."""
    log_mass = math.log(categories) + log_alpha  # log(Cα)
    with np.errstate(divide="ignore"):
        t = np.logaddexp(np.log(totals.astype(float)), log_mass) - log_mass
    return np.maximum(t, 0.0)


def perturbed_plan(totals: np.ndarray, categories: int, log_alpha: float, rng: np.random.Generator,
                   uniform: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The randomness of :func:`perturbed_draw` for rows whose weights sum to ``totals``.

    Returns (rows drawn uniformly, their uniform category, the position u in [0, W)
    that picks the category of the other rows in :func:`perturbed_pick`). Drawn for
    all rows at once, so picking in chunks of rows gives the same result.
    """
    n = len(totals)
    use_uniform = bernoulli_exp(uniform_part_t(totals, categories, log_alpha), rng)
    if uniform is not None:
        use_uniform |= uniform
    cats = rng.integers(0, categories, n)
    u = np.zeros(n, dtype=totals.dtype)
    counted = ~use_uniform
    if np.issubdtype(totals.dtype, np.integer):
        u[counted] = rng.integers(0, totals[counted])  # exact: P(j) = w_j / W for counts
    else:
        u[counted] = rng.random(int(counted.sum())) * totals[counted]
    return use_uniform, cats, u


def perturbed_pick(weights: np.ndarray, use_uniform: np.ndarray, cats: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Categories from a :func:`perturbed_plan`: the uniform one, or the one whose cumulative weight passes u."""
    out = cats.copy()
    idx = np.flatnonzero(~use_uniform)
    if len(idx):
        cum = np.cumsum(weights[idx], axis=1)
        out[idx] = np.minimum((cum <= u[idx, None]).sum(axis=1), weights.shape[1] - 1)
    return out


def perturbed_draw(weights: np.ndarray, log_alpha: float, rng: np.random.Generator,
                   uniform: np.ndarray | None = None) -> np.ndarray:
    """One category per row from (w_j + α)/(W + Cα), with no category's probability rounded to zero.

    The law is a mixture: with probability Cα/(W + Cα) a uniform category (the
    α part), else one drawn ∝ the row's weights w (W their sum). The mixing coin
    is drawn in log space (:func:`bernoulli_exp`), so a rare category keeps its
    tiny probability at any ε, where adding α to the weights would round it
    away. Integer weights (counts) are drawn exactly by an integer uniform.

    Parameters
    ----------
    weights : array (rows, C)
        Non-negative weights per row (counts, or probabilities summing to 1).
    log_alpha : float
        log α (:func:`log_perturbation_alpha`).
    rng : numpy.random.Generator
    uniform : array of bool, optional
        Rows drawn uniformly whatever their weights.
    """
    plan = perturbed_plan(weights.sum(axis=1), weights.shape[1], log_alpha, rng, uniform)
    return perturbed_pick(weights, *plan)


#: How far above 1 a row of normalised probabilities may sum after rounding (C terms, each off by at most
#: 2^−53 of itself: 2^−30 allows millions of categories), and the margin a shortcut keeps below a coin's
#: probability against the last bits of exp and log (2^−40: thousands of units in the last place).
_SUM_SLACK, _COIN_MARGIN = 2.0 ** -30, 2.0 ** -40


def perturbed_draw_probabilities(probabilities: Callable[[np.ndarray], np.ndarray], n: int, categories: int,
                                 log_alpha: float, rng: np.random.Generator) -> np.ndarray:
    """:func:`perturbed_draw` for ``n`` rows of probabilities, computing only the rows the α part leaves
    to them: the same law, and from the same generator state the same categories.

    ``probabilities(rows)`` gives those rows' weights (each row summing to 1 up to rounding). A row's coin
    is U < exp(−t(W)), t rising with the row's sum W ≤ 1 + 2^−30, so a U below exp(−t(1 + 2^−30)) (less a
    margin for rounding) makes the row uniform whatever its probabilities. A per-record method's ε per draw
    is tiny, so nearly every row is such (PMI on diamonds at a total ε of 10: all but a few in a
    million): a Gibbs sweep then skips almost all of its model evaluations.
    """
    surely_uniform = _surely_uniform_below(categories, log_alpha)
    if surely_uniform is None:  # coins of several factors (large ε): the rows' probabilities are needed
        return perturbed_draw(probabilities(np.arange(n)), log_alpha, rng)
    coin = rng.random(n)  # bernoulli_exp's one uniform per coin: every row's t is at most a sum 1 + 2^−30's
    undecided = np.flatnonzero(coin >= surely_uniform)
    if not len(undecided):
        return rng.integers(0, categories, n)
    weights = probabilities(undecided)
    totals = weights.sum(axis=1)
    weighted = coin[undecided] >= np.exp(-uniform_part_t(totals, categories, log_alpha))
    out = rng.integers(0, categories, n)
    u = rng.random(int(weighted.sum())) * totals[weighted]
    cum = np.cumsum(weights[weighted], axis=1)
    out[undecided[weighted]] = np.minimum((cum <= u[:, None]).sum(axis=1), categories - 1)
    return out


@functools.lru_cache(maxsize=64)
def _surely_uniform_below(categories: int, log_alpha: float) -> float | None:
    """A coin's uniform below this makes a row of probabilities uniform (:func:`perturbed_draw_probabilities`);
    None when the coin takes several factors."""
    t_high = uniform_part_t(np.array([1.0 + _SUM_SLACK]), categories, log_alpha)
    return float(np.exp(-t_high)[0] * (1.0 - _COIN_MARGIN)) if t_high[0] <= _PIECE else None


class PerturbedCounts:
    """:func:`perturbed_draw` from the rows of one fixed count table, set up once per α.

    A Gibbs sampler draws from the same conditional table thousands of times on a
    few hundred rows (PeGS: one draw per chain, feature and sweep), where the
    per-row work of :func:`perturbed_draw` (sums, logs, a cumulative sum over the
    categories) dominated. Here each table row's total and α-part coin are
    computed once, and the category of a counted draw is found by one binary
    search in the cumulative counts of the whole table. The law and the
    randomness drawn are those of ``perturbed_draw(counts[rows], log_alpha, rng,
    uniform)``, so the draws are the same.
    """

    def __init__(self, counts: np.ndarray, log_alpha: float):
        self.categories = counts.shape[1]
        self.totals = counts.sum(axis=1)
        self.t = uniform_part_t(self.totals, self.categories, log_alpha)
        # Every coin one factor of bernoulli_exp (the usual case): its probability, computed once.
        self.coin = np.exp(-self.t) if len(self.t) and self.t.max() <= _PIECE else None
        self.least_coin = None if self.coin is None else self.coin.min()
        self.cumulative = np.cumsum(counts.ravel())  # row r's counts end at cumulative[(r + 1)·C − 1]
        self.starts = np.concatenate([[0], self.cumulative])[::self.categories][:len(counts)]

    def draw(self, rows: np.ndarray, rng: np.random.Generator, uniform: np.ndarray | None = None) -> np.ndarray:
        """One category for each entry of ``rows`` (row numbers of the table); ``uniform``: drawn uniformly."""
        n = len(rows)
        use_uniform = rng.random(n) < self.coin[rows] if self.coin is not None else bernoulli_exp(self.t[rows], rng)
        if uniform is not None:
            use_uniform |= uniform
        counted = np.flatnonzero(~use_uniform)
        return self._pick(rng.integers(0, self.categories, n), counted, rows[counted], rng)

    def draw_rows_of(self, n: int, rows_of: Callable[[np.ndarray], np.ndarray], rng: np.random.Generator) -> np.ndarray:
        """``draw(rows_of(all n entries), rng)``, calling ``rows_of`` only for the entries whose coin the
        table's smallest coin probability leaves open: the same draws.

        A uniform below every row's coin probability makes an entry uniform whatever its row; at a
        per-record method's small ε that is nearly every entry, and finding rows (PeGS: hashing keys)
        is most of the work.
        """
        if self.coin is None:
            return self.draw(rows_of(np.arange(n)), rng)
        coin = rng.random(n)
        undecided = np.flatnonzero(coin >= self.least_coin)
        if not len(undecided):
            return rng.integers(0, self.categories, n)  # (drawing no entries takes no randomness)
        rows = rows_of(undecided)
        weighted = coin[undecided] >= self.coin[rows]
        return self._pick(rng.integers(0, self.categories, n), undecided[weighted], rows[weighted], rng)

    def _pick(self, out: np.ndarray, counted: np.ndarray, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``out`` with the entries ``counted`` (table rows ``rows``) drawn ∝ their counts."""
        u = rng.integers(0, self.totals[rows])  # exact: P(j) = n_j / N
        # The counts ≤ u within the row: every entry of the rows before it, then the row's own.
        out[counted] = np.searchsorted(self.cumulative, self.starts[rows] + u, side="right") - rows * self.categories
        return out


def dirichlet_alpha(n_synth: int, epsilon: float) -> float:
    """The prior per cell, α = n_s / (e^ε − 1): the smallest that makes a Dirichlet–multinomial
    (Beta–binomial for two cells) synthesizer releasing n_s records ε-DP (Machanavajjhala et al. 2008).

    Written as n_s·e^−ε / (1 − e^−ε) so that a huge ε gives 0 instead of an
    overflow.

    Examples
    --------
    >>> round(dirichlet_alpha(100, math.log(2)), 12)
    100.0
    """
    return n_synth * math.exp(-epsilon) / -math.expm1(-epsilon)


def geometric_variance(epsilon: float, sensitivity: float = 1.0) -> float:
    """Variance of :func:`geometric_noise`: 2α/(1 − α)² with α = exp(−ε/Δ₁)."""
    a = geometric_alpha(epsilon, sensitivity)
    return 2 * a / (1 - a) ** 2


def laplace_scale(epsilon: float, sensitivity: float = 1.0) -> float:
    """Scale b = Δ₁/ε of the Laplace mechanism."""
    return sensitivity / check_epsilon(epsilon)


def gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """σ = Δ₂ √(2 ln(1.25/δ)) / ε of the classical Gaussian mechanism (valid for ε < 1)."""
    epsilon = check_epsilon(epsilon)
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    return sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon


# -- mechanisms as objects ---------------------------------------------------------------------

@dataclass(frozen=True)
class Mechanism:
    """One mechanism run: its privacy cost (ε, δ, sensitivity), the variance of its noise, its noise,
    and its line in the ledger, from the formulas above."""

    epsilon: float
    sensitivity: float = 1.0
    delta: float = 0.0
    name: ClassVar[str] = ""

    @property
    def variance(self) -> float:
        raise NotImplementedError

    def sample(self, rng: np.random.Generator, size) -> np.ndarray:
        """Noise of this mechanism, ``size`` draws."""
        raise NotImplementedError

    def noisy(self, values, rng: np.random.Generator) -> np.ndarray:
        """``values`` (the exact answers) plus this mechanism's noise, one draw each."""
        return values + self.sample(rng, np.shape(values))

    def step(self, target: str, *, detail: str = "", repeats: int = 1) -> Step:
        """This run as a ledger step on ``target``."""
        return Step(self.name, target, self.epsilon, delta=self.delta, sensitivity=self.sensitivity,
                    detail=detail, repeats=repeats)


@dataclass(frozen=True)
class Geometric(Mechanism):
    """Two-sided geometric (discrete Laplace) noise on integer queries: ε-DP, exact at every ε."""

    name: ClassVar[str] = "two-sided geometric"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)

    @property
    def variance(self) -> float:
        return geometric_variance(self.epsilon, self.sensitivity)

    def sample(self, rng, size) -> np.ndarray:
        return geometric_noise(size, self.epsilon, rng, sensitivity=self.sensitivity)


@dataclass(frozen=True)
class Laplace(Mechanism):
    """Laplace noise of scale Δ₁/ε on real-valued queries (floating point: see the module docstring)."""

    name: ClassVar[str] = "Laplace"

    @property
    def scale(self) -> float:
        return laplace_scale(self.epsilon, self.sensitivity)

    @property
    def variance(self) -> float:
        return 2 * self.scale ** 2

    def sample(self, rng, size) -> np.ndarray:
        return rng.laplace(0.0, self.scale, size=size)


@dataclass(frozen=True)
class Gaussian(Mechanism):
    """The classical Gaussian mechanism, σ = Δ₂ √(2 ln(1.25/δ)) / ε: (ε, δ)-DP for ε < 1."""

    name: ClassVar[str] = "Gaussian"

    @property
    def sigma(self) -> float:
        return gaussian_sigma(self.epsilon, self.delta, self.sensitivity)

    @property
    def variance(self) -> float:
        return self.sigma ** 2

    def sample(self, rng, size) -> np.ndarray:
        return rng.normal(0.0, self.sigma, size=size)


@dataclass(frozen=True)
class Public(Mechanism):
    """A uniform draw over a declared public domain of ``size`` values: it reads no data, so ε = 0.

    ``variance`` is that of the drawn code (uniform on 0 … size − 1), (size² − 1)/12.
    """

    epsilon: float = 0.0
    sensitivity: float = 0.0
    size: int = 1
    name: ClassVar[str] = "uniform draw from the public domain"

    @property
    def variance(self) -> float:
        return (self.size ** 2 - 1) / 12

    def sample(self, rng, size) -> np.ndarray:
        return rng.integers(0, self.size, size=size)


@dataclass(frozen=True)
class DiscreteGaussian:
    """Discrete Gaussian noise on integer queries (Canonne, Kamath & Steinke 2020): ρ and the L2
    sensitivity Δ₂ in, integer noise out.

    P(k) ∝ exp(−k²/(2σ²)) on the integers with σ² = Δ₂²/(2ρ), which makes a query of L2 sensitivity
    Δ₂ ρ-zCDP (CKS Theorem 14), as the continuous Gaussian would, with no floating point in the
    noise. Sampled exactly (:func:`.exact.discrete_gaussian`) at σ² rounded up to a dyadic fraction
    (:func:`.exact.dyadic_sigma2`; less than 10⁻⁶ of σ² added for every σ ≥ 0.25): the step costs at
    most ρ, which is what the ledger charges. ``sigma`` is the σ used.
    """

    rho: float
    sensitivity: float = 1.0
    name: ClassVar[str] = "discrete Gaussian"

    def __post_init__(self) -> None:
        if isinstance(self.rho, bool) or not (self.rho > 0 and math.isfinite(self.rho)):
            raise ValueError(f"rho must be a positive finite number, got {self.rho!r}")
        if not (self.sensitivity > 0 and math.isfinite(self.sensitivity)):
            raise ValueError(f"sensitivity must be a positive finite number, got {self.sensitivity!r}")

    @functools.cached_property
    def _sigma2(self) -> tuple[int, int]:
        return exact.dyadic_sigma2(Fraction(self.sensitivity) ** 2 / (2 * Fraction(self.rho)))

    @property
    def sigma(self) -> float:
        a, b = self._sigma2
        return math.sqrt(a / b)

    @property
    def variance(self) -> float:
        """The noise's variance: σ² up to a relative e^(−2π²σ²) (below 10⁻⁸⁰ from σ = 3 on), summed exactly
        over the integers below that."""
        a, b = self._sigma2
        sigma2 = a / b
        if sigma2 >= 9:
            return sigma2
        k = np.arange(1, 200)
        w = np.exp(-k.astype(float) ** 2 / (2 * sigma2))
        return float(2 * (k ** 2 * w).sum() / (1 + 2 * w.sum()))

    def sample(self, noise: np.random.Generator, size) -> np.ndarray:
        """Integer noise, ``size`` draws (int64)."""
        return exact.discrete_gaussian(size, *self._sigma2, noise)

    def noisy(self, values, noise: np.random.Generator) -> np.ndarray:
        """``values`` (exact integer answers) plus this mechanism's noise, one draw each."""
        return values + self.sample(noise, np.shape(values))

    @staticmethod
    def noisy_many(mechanisms: Sequence["DiscreteGaussian"], tables: Sequence[np.ndarray],
                   noise: np.random.Generator) -> list[np.ndarray]:
        """Each table plus the noise of its mechanism, all drawn in one pass (:func:`.exact.discrete_gaussians`):
        the same law as ``m.noisy(t, noise)`` for each, at a fraction of the cost for many small tables."""
        draws = exact.discrete_gaussians([m._sigma2 for m in mechanisms], [np.size(t) for t in tables], noise)
        return [t + z.reshape(np.shape(t)) for t, z in zip(tables, draws)]

    def step(self, target: str, *, detail: str = "", repeats: int = 1) -> Step:
        """This run as a zCDP ledger step on ``target``: its ρ, σ and sensitivity."""
        return Step(self.name, target, None, sensitivity=self.sensitivity, detail=detail, repeats=repeats,
                    rho=self.rho, sigma=self.sigma)


@dataclass(frozen=True)
class ExponentialMechanism:
    """The exponential mechanism (McSherry & Talwar 2007), sampled exactly: candidate r with probability
    ∝ exp(ε·q_r/(2Δ)) for scores q of sensitivity Δ (:func:`.exact.exponential_choice`).

    ε-DP; as zCDP it costs ρ = ε²/8, not ε²/2, because it is ε-bounded-range (Cesar & Rogers 2021).
    The scores must be exact (ints or Fractions, or floats as their exact values) and Δ must bound
    their change as computed: a caller computes them in integers.
    """

    epsilon: float
    sensitivity: float = 1.0
    name: ClassVar[str] = "exponential mechanism (exact)"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)

    @property
    def rho(self) -> float:
        return self.epsilon ** 2 / 8

    def select(self, scores: Sequence, noise: np.random.Generator) -> int:
        """The index of the chosen candidate."""
        return exact.exponential_choice(scores, self.epsilon, self.sensitivity, noise)

    def step(self, target: str, *, detail: str = "", repeats: int = 1) -> Step:
        """This run as a pure ε-DP ledger step."""
        return Step(self.name, target, self.epsilon, sensitivity=self.sensitivity, detail=detail, repeats=repeats)

    def zcdp_step(self, target: str, *, detail: str = "", repeats: int = 1) -> Step:
        """This run as a zCDP ledger step, ρ = ε²/8."""
        return Step(self.name, target, None, sensitivity=self.sensitivity, detail=detail, repeats=repeats,
                    rho=self.rho)
