"""Independent noisy marginals: the DP baseline (McClure & Reiter 2012 style).

One histogram per column over its public domain, each released with
two-sided geometric noise at ε/M (a record adds 1 to one cell of each
histogram: L1 sensitivity 1), negatives set to 0, normalised, and sampled
column by column. Associations between columns are not kept, by design.

The method suggestion's fallback: it is named when no method that keeps
associations may be (the marginals survive at any ε, the associations never).
"""

from __future__ import annotations

import math

import numpy as np

from .. import constraints
from ..privacy import TOTAL, Budget, Geometric
from ..privacy.audit import Audit, three_columns
from ..privacy.mechanisms import geometric_variance
from . import options as opt
from .base import Synthesizer, register
from .forecasting import Forecast, domain_sizes, level_of, n_text, spendable
from .counting import marginals
from .encoding import column_domain, decode_column


def noisy_distribution(counts: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """Geometric noise on a count vector, negatives to 0, normalised (uniform if all vanish)."""
    noisy = np.clip(counts + Geometric(epsilon).sample(rng, counts.shape), 0, None).astype(float)
    total = noisy.sum()
    return noisy / total if total > 0 else np.full(len(counts), 1.0 / len(counts))


@register
class Independent(Synthesizer):
    name = "independent"
    label = "Independent noisy marginals"
    is_dp = True
    description = ("Each column drawn on its own from a noisy histogram (geometric noise, ε split "
                   "equally over columns). Keeps every marginal; loses all associations.")
    options = (opt.bins(constraints.DEFAULT_BINS),)
    spends = Budget(TOTAL, per_target="equal shares over the columns (one histogram each)")
    partitioned = True
    rank = 40
    suggest_priority = 2  # after every method that keeps associations
    audits = (Audit(three_columns(3, "ab"), epsilon=1.0, n=2000, runs=1000, quick_runs=50,
                    note="D never uses a2 or b2; the clipped noisy counts of a2 and b2 are max(0, Z) on D and "
                         "max(0, 1 + Z) on D′, a ratio of e^(ε/2) each for every value ≥ 1, and the cell (a2, b2) "
                         "gets synthetic rows only when both are ≥ 1: 'at least k rows in (a2, b2)' has a log "
                         "ratio of ε, the worst case."),)

    def forecast(self, schema, epsilon, n=None, *, bins, **params):
        return histogram_forecast(schema, epsilon, n, bins=bins)

    def suggestion(self, schema, epsilon, n, forecast):
        """Always: the fallback, named when no method that keeps associations may be."""
        why = "n is not declared, so no regression forecast" if n is None else \
            "at this ε and n the regressions' noise is too large to gain on it"
        return (f": it keeps every column's marginal and no association ({why}). Dirichlet, PeGS and PMI give "
                "near-uniform output at a total ε.")

    def measure(self, df, schema, columns, *, bins):
        # pandas or, partition by partition, Dask (see .counting)
        domains = [column_domain(schema[c], bins) for c in columns]
        return columns, domains, marginals(df, schema, columns, bins)

    def generate(self, measured, *, epsilon, n, rng, bins, noise=None):
        noise = rng if noise is None else noise
        columns, domains, counts = measured
        eps_j = epsilon / len(columns)
        values, steps = {}, []
        for c, d, x in zip(columns, domains, counts):
            p = noisy_distribution(x, eps_j, noise)
            values[c] = decode_column(rng.choice(d.size, size=n, p=p), d, rng)
            steps.append(Geometric(eps_j).step(f"histogram of {c} ({d.size} cells)",
                                               detail=f"P(k) ∝ exp(−{eps_j:.4g}·|k|)"))
        return values, steps


def histogram_forecast(schema, epsilon: float, n: int | None, *, bins: int) -> Forecast:
    """Independent marginals' forecast (also PrivBayes's where it has no network): geometric noise per
    histogram cell at ε/d against the rows in an average cell of the widest column.

    Noise std √(2a)/(1 − a), a = e^(−ε/d). Level by std / (n / C_max): good < 0.05 (noise a
    twentieth of a typical count), fair < 0.5, poor beyond (the noise is the size of the counts).
    """
    sizes = domain_sizes(schema, bins)
    d = len(sizes)
    eps_c = spendable(epsilon, n) / d
    std = math.sqrt(geometric_variance(eps_c))
    widest = max(sizes, key=sizes.get)
    head = (f"At ε = {epsilon:g} each of the {d} column histograms gets ε = {eps_c:.3g}: geometric noise of "
            f"standard deviation {std:,.1f} per cell")
    if n is None:
        return Forecast(f"{head}. n is not declared, so the rows per cell are unknown; the noise matters "
                        f"until a cell holds well over {10 * std:,.0f} rows. Associations are not kept.",
                        "unknown")
    per_cell = n / sizes[widest]
    level = level_of(std / per_cell, 0.05, 0.5)
    words = {"good": "each column's marginal should come through", "fair": "the marginals will be visibly noisy",
             "poor": "expect near-uniform marginals"}[level]
    return Forecast(f"{head}, against about {per_cell:,.0f} rows in an average cell of the widest column "
                    f"({widest}, {sizes[widest]} cells; {n_text(n)}): {words}. Associations are not kept.", level)
