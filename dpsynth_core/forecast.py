"""Before any run: what each DP method is likely to keep, and which to try first (issue 18).

Both read public facts only: the schema (its domains), the TOTAL ε, n if
declared (None: not declared), and the method's options. Neither sees the data.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import constraints
from .schema import Schema
from .synth import SYNTHESIZERS
from .synth import forecasting
from .synth.base import Forecast

#: Methods :func:`suggest_method` may name, best first where registered: the marginal-based methods
#: (issue 18 measured MST 1.3–6.7× better than ``independent`` on mean 2-way TV at every ε).
MARGINAL_METHODS = ("mst", "privbayes", "aim")


def forecast(method: str, schema: Schema, epsilon: float, n: int | None = None, **params) -> Forecast | None:
    """The utility forecast of ``method`` at total ``epsilon``; None for a method that is not DP.

    A DP method without a forecast of its own (a marginal-based one such as
    MST or PrivBayes) gets the generic marginal-noise forecast: Gaussian
    noise per cell of a 2-way marginal, measured as MST splits its budget,
    against n / cells (:func:`forecasting.marginals`).
    """
    if method not in SYNTHESIZERS:
        raise ValueError(f"unknown method {method!r}; choose one of {sorted(SYNTHESIZERS)}")
    synth = SYNTHESIZERS[method]
    if not synth.is_dp or not schema.used:  # nothing to forecast: not DP, or no modelled column
        return None
    params = synth.resolve(params)
    own = synth.forecast(schema, float(epsilon), n, **params)
    if own is not None:
        return own
    return forecasting.marginals(schema, float(epsilon), n, bins=params.get("bins") or constraints.DEFAULT_BINS,
                                 delta=params.get("delta") or constraints.DEFAULT_DELTA, label=synth.label)


@dataclass(frozen=True)
class Suggestion:
    method: str
    sentence: str


def suggest_method(schema: Schema, epsilon: float, n: int | None = None) -> Suggestion:
    """The DP method likely to keep the most at total ``epsilon``, by a rule from the benchmark.

    Rule (bench/bench_seed_methods.py on diamonds, figures in the README):

    1. a marginal-based method (``mst``, then ``privbayes``, ``aim``) when registered;
    2. else ``dp_seqreg`` when its forecast is "good" (the noise on its largest regression's moments
       under 0.5% of n: on diamonds from ε = 1, where its mean 2-way TV was 0.12 against 0.16 for
       ``independent``; at ε = 0.3 it was worse, 0.21);
    3. else ``independent``: the marginals survive at any ε, the associations never.

    ``dirichlet``, ``pegs``, ``pegs_rs`` and ``pmi`` are never suggested: at a total ε their prior or
    per-record budget leaves near-uniform output (TV1 0.56 on diamonds at ε = 0.3, 1 and 3).
    """
    for m in MARGINAL_METHODS:
        if m in SYNTHESIZERS:
            return Suggestion(m, f"Suggested at ε = {epsilon:g}: {SYNTHESIZERS[m].label}, a marginal-based method "
                                 "(the family that wins the NIST benchmarks; it keeps the 2-way associations "
                                 "that independent noisy marginals lose).")
    if "dp_seqreg" in SYNTHESIZERS:
        fc = forecast("dp_seqreg", schema, epsilon, n)
        if fc is not None and fc.level == "good":
            return Suggestion("dp_seqreg", f"Suggested at ε = {epsilon:g}: {SYNTHESIZERS['dp_seqreg'].label}; "
                                           "its noise is small against n here, so it keeps main associations "
                                           "that independent noisy marginals lose.")
    why = "n is not declared, so no regression forecast" if n is None else \
        "at this ε and n the regressions' noise is too large to gain on it"
    return Suggestion("independent", f"Suggested at ε = {epsilon:g}: {SYNTHESIZERS['independent'].label}: it keeps "
                                     f"every column's marginal and no association ({why}). Dirichlet, PeGS and PMI "
                                     "give near-uniform output at a total ε.")
