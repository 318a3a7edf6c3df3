"""Independent noisy marginals: the DP baseline (McClure & Reiter 2012 style).

One histogram per column over its public domain, each released with
two-sided geometric noise at ε/M (a record adds 1 to one cell of each
histogram: L1 sensitivity 1), negatives set to 0, normalised, and sampled
column by column. Associations between columns are not kept, by design.
"""

from __future__ import annotations

import numpy as np

from .. import constraints
from ..privacy import TOTAL, Budget, Geometric
from ..privacy.audit import Audit, three_columns
from . import forecasting
from . import options as opt
from .base import Synthesizer, register
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
    audits = (Audit(three_columns(3, "ab"), epsilon=1.0, n=2000, runs=1000, quick_runs=100,
                    note="D never uses a2 or b2; the clipped noisy counts of a2 and b2 are max(0, Z) on D and "
                         "max(0, 1 + Z) on D′, a ratio of e^(ε/2) each for every value ≥ 1, and the cell (a2, b2) "
                         "gets synthetic rows only when both are ≥ 1: 'at least k rows in (a2, b2)' has a log "
                         "ratio of ε, the worst case."),)

    def forecast(self, schema, epsilon, n=None, *, bins=constraints.DEFAULT_BINS, **params):
        return forecasting.independent(schema, epsilon, n, bins=bins)

    def measure(self, df, schema, columns, *, bins):
        # pandas or, partition by partition, Dask (see .counting)
        domains = [column_domain(schema[c], bins) for c in columns]
        return columns, domains, marginals(df, schema, columns, bins)

    def generate(self, measured, *, epsilon, n, rng, bins):
        columns, domains, counts = measured
        eps_j = epsilon / len(columns)
        values, steps = {}, []
        for c, d, x in zip(columns, domains, counts):
            p = noisy_distribution(x, eps_j, rng)
            values[c] = decode_column(rng.choice(d.size, size=n, p=p), d, rng)
            steps.append(Geometric(eps_j).step(f"histogram of {c} ({d.size} cells)",
                                               detail=f"P(k) ∝ exp(−{eps_j:.4g}·|k|)"))
        return values, steps
