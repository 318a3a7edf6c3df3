"""Mechanisms that estimate a column's public domain from the data (issue 27), as objects with their
ledger steps, like :mod:`.mechanisms`.

Neighbouring datasets differ by one record (added or removed); each mechanism reads one column of
its own histogram, where that record adds 1 to one cell (L1 sensitivity 1). Noise is the two-sided
geometric law of :func:`.mechanisms.geometric_noise`, P(k) ∝ α^|k| with α = e^−ε, whose tail is
P(Z ≥ t) = α^t / (1 + α) for whole t ≥ 1 (:func:`geometric_tail`).

* :class:`ThresholdedHistogram` — the values observed (categories, or a numeric column's exact
  values for its special values) with noisy counts, each kept only when its noisy count reaches a
  threshold T. A value present in both neighbours has its count moved by 1: ε. A value only one of
  them holds has count 1 there and 0 (never listed) in the other: it is published with probability
  P(1 + Z ≥ T) = α^(T−1)/(1 + α), and T is the least whole number that makes this at most δ. So the
  list is (ε, δ)-DP (Korolova et al. 2009; Wilson et al. 2020, the "δ of thresholding").
* :class:`RangeHistogram` — a numeric column's bounds: noisy counts over public buckets (by default
  log-spaced over the whole representable range, :data:`LOG_EDGES`; or equal-width over a coarse
  range the steward gives), and the outermost buckets whose noisy count reaches a threshold. The
  buckets are fixed in advance, so the histogram is ε-DP and both bounds come from one release; the
  threshold only decides how sure the bounds are (an empty bucket passes it with probability at
  most β, over all buckets at once: :func:`clear_threshold`). A tail spread thinly over several
  buckets, none of which passes (diamonds' prices above $8,000 at ε = 0.005), is then taken in by
  post-processing the same noisy counts: beyond each outermost bucket, the bound moves out to the
  farthest bucket of the next :data:`WINDOW` from which the noisy counts out to the window's end
  sum to a clear threshold for that many buckets (:func:`sum_threshold`). The bounds are bucket
  edges, so they are rounded outward to three significant figures (the R10 series 1, 1.25, 1.6,
  2, 2.5, 3.15, 4, 5, 6.3, 8 of each power of ten).

Why not the exponential mechanism over quantiles: over a grid spanning ±1e100, every grid point
above the data's maximum scores within (1 − q)·n of the best, and there are hundreds of them, so
unless ε·(1 − q)·n is well above 2·ln(grid size) the mechanism picks an absurd bound; the
histogram needs about as many records beyond a bound (T ≈ ln(buckets/β)/ε) and gets both bounds
for one ε.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from scipy import stats

from .. import constraints
from .mechanisms import Geometric, check_epsilon, geometric_alpha, geometric_noise, geometric_rate

#: Mantissas of the default buckets' edges (the R10 preferred numbers) and the powers of ten they span:
#: magnitudes from 1e−8 to 1e100 (constraints.MAX_ABS_VALUE).
R10 = (1.0, 1.25, 1.6, 2.0, 2.5, 3.15, 4.0, 5.0, 6.3, 8.0)
MIN_EXPONENT, MAX_EXPONENT = -8, 100
LOG_EDGES = np.array([m * 10.0 ** e for e in range(MIN_EXPONENT, MAX_EXPONENT) for m in R10] + [10.0 ** MAX_EXPONENT])
assert LOG_EDGES[-1] == constraints.MAX_ABS_VALUE


def geometric_tail(epsilon: float, t: int) -> float:
    """P(Z ≥ t) of two-sided geometric noise at ε (sensitivity 1), for whole t ≥ 1: α^t / (1 + α).

    >>> round(geometric_tail(math.log(2), 1), 12)  # α = 1/2: (1/2) / (3/2)
    0.333333333333
    """
    a = geometric_alpha(epsilon)
    return math.exp(-check_epsilon(epsilon) * t) / (1 + a)


def clear_threshold(epsilon: float, cells: int, beta: float) -> int:
    """The least whole T ≥ 1 with cells · P(Z ≥ T) ≤ β: ``cells`` counts of 0 all stay below T with
    probability at least 1 − β. (A choice on public numbers: no privacy cost.)"""
    a = geometric_alpha(epsilon)
    return max(1, math.ceil(math.log(cells / (beta * (1 + a))) / epsilon))


def sum_tail(epsilon: float, terms: int, t: int) -> float:
    """P(Z_1 + … + Z_terms ≥ t), exactly, for independent two-sided geometric noise at ε.

    Each Z is G − G′ with G, G′ geometric, P(G ≥ j) = α^j (α = e^−ε), so the sum is A − B with A, B
    negative binomial (``terms`` successes, success probability 1 − α), and P(A − B ≥ t) =
    Σ_j P(B = j) P(A ≥ t + j), summed over j up to B's 1 − 10^−16 quantile.
    """
    a = geometric_alpha(epsilon)
    b = stats.nbinom(terms, 1 - a)
    j = np.arange(0, int(b.ppf(1 - 1e-16)) + 1)
    return float(min(1.0, np.sum(b.pmf(j) * b.sf(t + j - 1))))


@functools.lru_cache(maxsize=256)
def sum_threshold(epsilon: float, terms: int, beta: float) -> int:
    """The least whole T ≥ 1 with P(Z_1 + … + Z_terms ≥ T) ≤ β (:func:`sum_tail`): a sum of ``terms`` noisy
    counts of 0 reaches it with probability at most β. For one term it is :func:`clear_threshold`."""
    low, high = 1, max(2, clear_threshold(epsilon, 1, beta))
    while sum_tail(epsilon, terms, high) > beta:
        low, high = high, 2 * high
    while low < high:  # the tail falls as t grows: the least t with tail ≤ β
        mid = (low + high) // 2
        if sum_tail(epsilon, terms, mid) <= beta:
            high = mid
        else:
            low = mid + 1
    return high


#: Buckets beyond an outermost passing bucket that a thin tail may extend a bound over.
WINDOW = 10


def _noisy(counts: np.ndarray, epsilon: float, rng: np.random.Generator, runs: int | None) -> np.ndarray:
    """``counts`` plus geometric noise at ε, one row per run (``runs`` None: one release, no run axis)."""
    shape = np.shape(counts) if runs is None else (runs, *np.shape(counts))
    return np.asarray(counts, dtype=np.int64) + geometric_noise(shape, epsilon, rng)


@dataclass(frozen=True)
class ThresholdedHistogram(Geometric):
    """Noisy counts of the values observed, each value published only when its noisy count reaches
    :attr:`threshold`: (ε, δ)-DP (module docstring). ``delta`` must lie in (0, 1)."""

    name: ClassVar[str] = "thresholded histogram (two-sided geometric)"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 < self.delta < 1:
            raise ValueError(f"a thresholded histogram needs 0 < δ < 1, got {self.delta!r}")

    @property
    def threshold(self) -> int:
        """The least whole T with P(1 + Z ≥ T) = α^(T−1)/(1 + α) ≤ δ, for the rate the sampler draws at
        (:func:`.mechanisms.geometric_rate`): its slightly heavier tail, not ε's."""
        num, den = geometric_rate(self.epsilon)
        rate = num / den
        a = math.exp(-rate)
        return 1 + max(0, math.ceil(math.log(1 / (self.delta * (1 + a))) / rate))

    def release(self, counts, rng: np.random.Generator, runs: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(noisy counts, kept) for the observed values' exact ``counts`` (each ≥ 1); with ``runs``, one row
        of each per independent release (the audit draws hundreds at once)."""
        noisy = _noisy(counts, self.epsilon, rng, runs)
        return noisy, noisy >= self.threshold


@dataclass(frozen=True)
class Buckets:
    """Public buckets over the real line: the default log-spaced ones (``coarse`` None), or ``cells``
    equal-width ones over a coarse range ``(low, high)`` the steward gives (values outside it are
    counted in its end buckets)."""

    coarse: tuple[float, float] | None = None
    cells: int = 100

    @functools.cached_property
    def _edges(self) -> np.ndarray:
        """Equal-width edges over the coarse range (bucket j is [edges[j], edges[j + 1]])."""
        low, high = self.coarse
        return np.linspace(low, high, self.cells + 1)

    @property
    def size(self) -> int:
        """Coarse range: ``cells``. Log-spaced: a bucket [edge_k, edge_k+1] of each sign for each pair of
        :data:`LOG_EDGES`, and {0} (values below 1e−8 in size join the smallest magnitude's bucket)."""
        return self.cells if self.coarse is not None else 2 * len(LOG_EDGES) - 1

    def index(self, x: np.ndarray) -> np.ndarray:
        """The bucket of each finite value of ``x``."""
        x = np.asarray(x, dtype=float)
        if self.coarse is not None:
            return np.clip(np.searchsorted(self._edges, x, side="right") - 1, 0, self.cells - 1)
        m = len(LOG_EDGES)
        mag = np.clip(np.searchsorted(LOG_EDGES, np.abs(x), side="right") - 1, 0, m - 2)  # [edge_k, edge_k+1)
        # Buckets in order: negatives from −1e100 (index 0) to −1e−8 (m − 2), then {0} (m − 1), then positives.
        return np.where(x > 0, m + mag, np.where(x < 0, m - 2 - mag, m - 1))

    def interval(self, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The (lower, upper) edges of buckets ``j``."""
        j = np.asarray(j)
        if self.coarse is not None:
            return self._edges[j], self._edges[j + 1]
        m = len(LOG_EDGES)
        neg = m - 2 - np.minimum(j, m - 2)
        pos = np.maximum(j - m, 0)
        low = np.where(j < m - 1, -LOG_EDGES[np.minimum(neg + 1, m - 1)], np.where(j == m - 1, 0.0, LOG_EDGES[pos]))
        high = np.where(j < m - 1, -LOG_EDGES[neg], np.where(j == m - 1, 0.0, LOG_EDGES[np.minimum(pos + 1, m - 1)]))
        return low, high

    def counts(self, values: np.ndarray) -> np.ndarray:
        """Exact counts of ``values`` (finite numbers) per bucket."""
        return np.bincount(self.index(values), minlength=self.size)


def round_outward(low: float, high: float, digits: int = 3) -> tuple[float, float]:
    """``(low, high)`` widened to ``digits`` significant figures: low rounded down, high up.

    >>> round_outward(0.1234, 987.65)
    (0.123, 988.0)
    """
    def rounded(v: float, up: bool) -> float:
        if v == 0 or not math.isfinite(v):
            return v
        step = 10.0 ** (math.floor(math.log10(abs(v))) - digits + 1)
        r = (math.ceil if up else math.floor)(v / step) * step
        return float(f"{r:.{digits + 2}g}")  # the float nearest the decimal figures
    return rounded(low, False), rounded(high, True)


@dataclass(frozen=True)
class RangeHistogram(Geometric):
    """A numeric column's bounds: noisy counts over public :class:`Buckets`, the outermost buckets whose
    noisy count reaches the threshold (module docstring). ε-DP; ``beta`` is the chance that some empty
    bucket passes the threshold (a utility setting, public)."""

    buckets: Buckets = field(default_factory=Buckets)
    beta: float = 0.01
    name: ClassVar[str] = "noisy bucket histogram (two-sided geometric)"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 < self.beta < 1:
            raise ValueError(f"beta must lie in (0, 1), got {self.beta!r}")

    @property
    def threshold(self) -> int:
        return clear_threshold(self.epsilon, self.buckets.size, self.beta)

    def release(self, counts: np.ndarray, rng: np.random.Generator, runs: int | None = None):
        """(lower, upper, found) from the buckets' exact ``counts``: :meth:`bounds` of one noisy release (one
        entry per run with ``runs``)."""
        return self.bounds(_noisy(counts, self.epsilon, rng, runs), one=runs is None)

    def bounds(self, noisy: np.ndarray, *, one: bool = True):
        """(lower, upper, found) from noisy counts (a row per run, or one release when ``one``).

        ``found`` is False where no bucket reached the threshold: the data are too few for this ε, and
        lower and upper are then NaN.
        """
        noisy = np.atleast_2d(noisy)
        passed = noisy >= self.threshold
        found = passed.any(axis=1)
        first = np.argmax(passed, axis=1)
        last = passed.shape[1] - 1 - np.argmax(passed[:, ::-1], axis=1)
        last = last + self._tail(noisy, last, +1)
        first = first - self._tail(noisy, first, -1)
        low, _ = self.buckets.interval(first)
        _, high = self.buckets.interval(last)
        low, high = np.where(found, low, np.nan), np.where(found, high, np.nan)
        if self.buckets.coarse is not None:  # equal-width edges: rounded outward to three figures
            pairs = [round_outward(a, b) if f else (a, b) for a, b, f in zip(low, high, found)]
            low, high = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
        if one:
            return low[0], high[0], found[0]
        return low, high, found

    def _tail(self, noisy: np.ndarray, edge: np.ndarray, step: int) -> np.ndarray:
        """How many buckets beyond ``edge`` (one per run) the bound moves out, in direction ``step``: the
        farthest k ≤ :data:`WINDOW` whose noisy counts from k out to the window's end reach
        :func:`sum_threshold` for that many buckets (β/2 over the 2·WINDOW sums of both sides)."""
        size = noisy.shape[1]
        offsets = np.arange(1, WINDOW + 1)
        idx = edge[:, None] + step * offsets[None, :]
        inside = (idx >= 0) & (idx < size)
        window = np.where(inside, noisy[np.arange(len(noisy))[:, None], np.clip(idx, 0, size - 1)], 0)
        outer = np.cumsum(window[:, ::-1], axis=1)[:, ::-1]  # outer[:, k-1]: buckets k … WINDOW
        limits = np.array([sum_threshold(self.epsilon, WINDOW - k + 1, self.beta / (4 * WINDOW)) for k in offsets])
        ok = (outer >= limits[None, :]) & inside
        return np.where(ok.any(axis=1), WINDOW - np.argmax(ok[:, ::-1], axis=1), 0)
