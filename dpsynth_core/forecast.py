"""Before any run: what each DP method is likely to keep, and which to try first (issue 18).

Both read public facts only: the schema (its domains), the TOTAL ε (less what a private
estimate of the schema spent), n if declared (None: not declared), and the method's options.
Neither sees the data.
Each method declares its own forecast and whether the suggestion may name it,
on its class (:class:`~dpsynth_core.synth.Synthesizer`); nothing here names a method.
"""

from __future__ import annotations

from dataclasses import dataclass

from .schema import Schema
from .synth import SYNTHESIZERS
from .synth.forecasting import Forecast, no_forecast


def forecast(method: str, schema: Schema, epsilon: float, n: int | None = None, **params) -> Forecast | None:
    """The utility forecast of ``method`` at total ``epsilon`` with its options ``params`` (the rest at
    their defaults); None for a method that is not DP or a schema that models no column.

    A DP method that declares no forecast gets one saying so ("No forecast", level "unknown"), never
    another method's.
    """
    if method not in SYNTHESIZERS:
        raise ValueError(f"unknown method {method!r}; choose one of {sorted(SYNTHESIZERS)}")
    synth = SYNTHESIZERS[method]
    if not synth.is_dp or not schema.used:  # nothing to forecast: not DP, or no modelled column
        return None
    left = float(epsilon) - schema.estimate_epsilon  # a private estimate of the schema is paid first
    if left <= 0:
        return Forecast(f"Nothing left for {synth.label}: the schema's private estimate spent ε = "
                        f"{schema.estimate_epsilon:.4g} of this total; choose a larger ε.", "poor")
    own = synth.forecast(schema, left, n, **synth.resolve(params))
    return own if own is not None else no_forecast(synth.label)


@dataclass(frozen=True)
class Suggestion:
    method: str
    sentence: str


def suggest_method(schema: Schema, epsilon: float, n: int | None = None) -> Suggestion | None:
    """The DP method likely to keep the most at total ``epsilon``, by the rules the methods declare.

    Every registered DP method with a ``suggest_priority`` is asked, lowest priority first (equal
    priorities in picker order), whether it may be suggested on these public facts (its ``suggestion``,
    given its own forecast at its default options); the first that gives a reason is named. None when
    no registered method may be suggested here.

    The shipped rule, from bench/bench_dp_utility.py and bench/bench_seed_methods.py (figures in the
    README): AIM where its forecast is good or fair; MST unless its forecast is poor; PrivBayes where that
    forecast is good or unknown (on penguins every marginal-based method was behind independent marginals
    at ε = 0.3, 1 and 3); else DP sequential regression when its forecast is "good"; else independent noisy
    marginals. Dirichlet, PeGS, block PeGS, PMI and uniform are never suggested: at a total ε their prior or
    per-record budget leaves near-uniform output (TV1 0.56 on diamonds at ε = 0.3, 1 and 3), and uniform
    keeps nothing.
    """
    order = list(SYNTHESIZERS)
    candidates = sorted((s for s in SYNTHESIZERS.values() if s.is_dp and s.suggest_priority is not None),
                        key=lambda s: (s.suggest_priority, order.index(s.name)))
    for synth in candidates:
        reason = synth.suggestion(schema, epsilon, n, forecast(synth.name, schema, epsilon, n))
        if reason is not None:
            return Suggestion(synth.name, f"Suggested at ε = {epsilon:g}: {synth.label}{reason}")
    return None
