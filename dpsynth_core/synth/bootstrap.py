"""Bootstrap: rows resampled with replacement. No protection at all.

It is the top-right anchor of the risk-utility map: as useful as the data
and as risky, since most released rows are real records.
"""

from __future__ import annotations

from .base import Synthesizer, register
from .encoding import keep_in_domain


@register
class Bootstrap(Synthesizer):
    name = "bootstrap"
    label = "Bootstrap"
    is_dp = False
    description = "Real rows drawn with replacement: the reference with no protection."
    rank = 130  # the top-right anchor: last

    def measure(self, df, schema, columns):
        # A declared bound is a promise about every released value: numbers outside it are clipped.
        return {c: keep_in_domain(df[c].to_numpy(), schema[c]) for c in columns}

    def generate(self, measured, *, epsilon, n, rng):
        rows = rng.integers(0, len(next(iter(measured.values()))), size=n)
        return {c: v[rows] for c, v in measured.items()}, []
