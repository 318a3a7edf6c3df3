"""Uniform draws from the declared public domain: the DP baseline that reads nothing of the data.

Each column is drawn on its own, uniformly over its public domain (a numeric
column uniformly between its declared bounds, whole numbers rounded; a nullable
column gets "missing" as one more value). Nothing of the data is read, so
with a declared row count the output is a function of the public schema and
the randomness alone: ε = 0, and DP holds trivially, whatever the seed.

Without a declared n the row count is a statistic of the data, so it is
released with noise (two-sided geometric, sensitivity 1) and spends the whole
ε asked for: the ledger then shows that ε, and a fixed seed makes the run
exploration, as for every other method. It keeps nothing of the data: it is
the bottom-left anchor of the risk-utility map, as bootstrap is the top-right.
"""

from __future__ import annotations

from ..privacy import NONE, Budget, Public
from ..privacy.audit import Audit, Broken, three_columns
from .base import Synthesizer, register
from .encoding import column_domain, decode_column
from .forecasting import Forecast


@register
class Uniform(Synthesizer):
    name = "uniform"
    label = "Uniform over the public domain"
    is_dp = True
    spends = Budget(NONE, per_target="nothing: no column reads the data")
    description = ("Every column drawn uniformly over its declared categories or bounds, reading nothing of "
                   "the data: ε = 0 with a declared row count (otherwise ε pays for a noisy count). Keeps "
                   "nothing: the floor any DP method should beat.")
    partitioned = True  # reads no data at all
    rank = 100  # the floor: after every DP method that keeps something
    audits = (Audit(three_columns(3, "ab"), n=30, epsilon=0.0, runs=500, quick_runs=50,
                    broken=Broken(method="bootstrap", text="rows drawn from the data (bootstrap) in its place"),
                    note="It claims ε = 0: the law of its output is the same on D and D′. Drawing the data's own "
                         "rows instead never gives (a2, b2) on D and often does on D′."),)

    def forecast(self, schema, epsilon, n=None, **params):
        return Forecast("Keeps nothing of the data: every column is uniform over its declared domain, with no "
                        "association between columns.", "poor")

    def measure(self, df, schema, columns):
        return [(c, column_domain(schema[c], 1)) for c in columns]  # the public domains, not the data

    def generate(self, measured, *, epsilon, n, rng, noise=None):  # reads no data: no privacy noise to draw
        values, steps = {}, []
        for c, domain in measured:
            draw = Public(size=domain.size)
            values[c] = decode_column(draw.sample(rng, n), domain, rng)
            steps.append(draw.step(f"{c} ({domain.size} value(s) or interval(s))",
                                   detail="reads no data: sensitivity 0"))
        return values, steps
