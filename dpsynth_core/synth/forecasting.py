"""What a utility forecast is, and the pieces every method's forecast is written with (issue 18).

A forecast says, before any run and from public facts only (the schema, the TOTAL ε, n if declared, the
options), how much noise a DP method adds against how much signal the data can carry, as one sentence and a
level. Each method writes its own in its module (``forecast`` on its class; the formulas are the method's,
docs/methods.md#forecasts, with thresholds stated beside them and checked against bench/bench_seed_methods.py).
A DP method that declares none says so in words (:func:`no_forecast`): it never borrows another method's.

ε is the total budget: when n is not declared a DP run first spends
``ROW_COUNT_EPSILON_SHARE`` of it on a noisy row count, so the forecasts use
the rest (:func:`spendable`).

This module imports no synthesizer, so any of them can import it.
"""

from __future__ import annotations

import itertools

from dataclasses import dataclass

from .. import constraints
from .encoding import column_domain

#: Forecast levels, best first; "unknown": a fact the forecast needs (such as n) is not declared, or the
#: method declares no forecast.
LEVELS = ("good", "fair", "poor", "unknown")

VERDICT = {
    "good": "expect the method's structure to come through",
    "fair": "expect visibly noisy output",
    "poor": "expect near-uniform output",
}


@dataclass(frozen=True)
class Forecast:
    """What a DP method is likely to keep, said before any run from public facts only.

    ``level``: "good", "fair", "poor" (expect near-uniform or noise-dominated
    output) or "unknown" (a fact it needs, such as n, is not declared, or the
    method has no forecast).
    """

    sentence: str
    level: str


def no_forecast(label: str) -> Forecast:
    """The forecast of a DP method that declares none: it says so, and guesses nothing."""
    return Forecast(f"No forecast: {label} declares none, so nothing is said before a run about how much it "
                    "will keep.", "unknown")


def spendable(epsilon: float, n: int | None) -> float:
    """The ε left for the method after a noisy row count (spent only when n is not declared)."""
    return epsilon if n is not None else epsilon * (1 - constraints.ROW_COUNT_EPSILON_SHARE)


def level_of(ratio: float, good: float, fair: float) -> str:
    """"good" below ``good``, "fair" below ``fair``, else "poor" (ratio: noise over signal)."""
    return "good" if ratio < good else "fair" if ratio < fair else "poor"


def share_text(w: float) -> str:
    """A share as a percentage, or as "1 part in N" when it would print as 0.00%."""
    return f"{w:.2%}" if w >= 0.0001 else f"1 part in {1 / w:,.0f}" if w > 0 else "nothing"


def ratio_text(r: float) -> str:
    """A ratio with no decimals from 10 on, two significant digits below."""
    return f"{r:,.0f}" if r >= 10 else f"{r:.2g}"


def n_text(n: int | None) -> str:
    return f"n = {n:,}" if n is not None else "n not declared"


def domain_sizes(schema, bins: int) -> dict[str, int]:
    """Cells of each modelled column's public domain at ``bins`` bins per numeric column."""
    return {c: column_domain(schema[c], bins).size for c in schema.used}


def mean_pair_cells(sizes: list[int]) -> float:
    """Cells of an average 2-way table of columns with these domain sizes."""
    d = len(sizes)
    return sum(a * b for a, b in itertools.combinations(sizes, 2)) / max(d * (d - 1) / 2, 1)


def noise_against_cells(head: str, sigma: float, n: int | None, cells: float, *, per: str, in_cell: str,
                        detail: str, fair: float = 1.0) -> Forecast:
    """The forecast of a method measuring marginals with Gaussian noise of standard deviation ``sigma`` per cell:
    against the n / ``cells`` rows of a cell, good below 0.2, fair below ``fair`` (1 unless the method says
    why), poor beyond (a fitted model smooths the noise, hence looser thresholds than for a raw histogram).
    ``head`` says how σ arises; ``per`` and ``in_cell`` name the cell (the rows ``per`` it, the rows in
    ``in_cell``), ``detail`` what ``cells`` counts."""
    if n is None:
        return Forecast(f"{head}; n is not declared, so the rows {per} (about n/{cells:,.0f}) are unknown.",
                        "unknown")
    level = level_of(sigma / (n / cells), 0.2, fair)
    return Forecast(f"{head}, against about {n / cells:,.0f} rows in {in_cell} ({detail}; {n_text(n)}): "
                    f"{VERDICT[level]}.", level)
