"""Utility forecasts from public facts only (issue 18): the schema, the TOTAL ε, n if declared, options.

Each says, before any run, how much noise the method adds against how much
signal the data can carry, as one sentence and a level ("good", "fair",
"poor": expect near-uniform or noise-dominated output, "unknown": n is not
declared). None of them reads the data. The formulas are each method's own
(docs/methods.md#forecasts); the thresholds are rules of thumb stated next to each, checked
against the benchmark in bench/bench_seed_methods.py.

ε is the total budget: when n is not declared a DP run first spends
``ROW_COUNT_EPSILON_SHARE`` of it on a noisy row count, so the forecasts use
the rest. Per-record methods then get ε per record = the rest / n_s.
"""

from __future__ import annotations

import math

from .. import constraints
from ..privacy.accounting import zcdp_rho
from ..privacy.mechanisms import geometric_variance
from .base import Forecast
from .encoding import column_domain

VERDICT = {
    "good": "expect the method's structure to come through",
    "fair": "expect visibly noisy output",
    "poor": "expect near-uniform output",
}


def spendable(epsilon: float, n: int | None) -> float:
    """The ε left for the method after a noisy row count (spent only when n is not declared)."""
    return epsilon if n is not None else epsilon * (1 - constraints.ROW_COUNT_EPSILON_SHARE)


def _level(ratio: float, good: float, fair: float) -> str:
    """"good" below ``good``, "fair" below ``fair``, else "poor" (ratio: noise over signal)."""
    return "good" if ratio < good else "fair" if ratio < fair else "poor"


def _share(w: float) -> str:
    """A share as a percentage, or as "1 part in N" when it would print as 0.00%."""
    return f"{w:.2%}" if w >= 0.0001 else f"1 part in {1 / w:,.0f}" if w > 0 else "nothing"


def _ratio(r: float) -> str:
    return f"{r:,.0f}" if r >= 10 else f"{r:.2g}"


def _n_text(n: int | None) -> str:
    return f"n = {n:,}" if n is not None else "n not declared"


def _sizes(schema, bins: int) -> dict[str, int]:
    return {c: column_domain(schema[c], bins).size for c in schema.used}


def independent(schema, epsilon: float, n: int | None, *, bins: int) -> Forecast:
    """Geometric noise per histogram cell at ε/d against the rows in an average cell of the widest column.

    Noise std √(2a)/(1 − a), a = e^(−ε/d). Level by std / (n / C_max): good < 0.05 (noise a
    twentieth of a typical count), fair < 0.5, poor beyond (the noise is the size of the counts).
    """
    sizes = _sizes(schema, bins)
    d = len(sizes)
    eps_c = spendable(epsilon, n) / d
    std = math.sqrt(geometric_variance(eps_c))
    widest = max(sizes, key=sizes.get)
    head = (f"At ε = {epsilon:g} each of the {d} column histograms gets ε = {eps_c:.3g}: geometric noise of "
            f"standard deviation {std:,.1f} per cell")
    if n is None:
        return Forecast(f"{head}. n is not declared, so the rows per cell are unknown; the noise matters "
                        f"until a cell holds well over {10 * std:,.0f} rows. Associations are not kept.", "unknown")
    per_cell = n / sizes[widest]
    level = _level(std / per_cell, 0.05, 0.5)
    words = {"good": "each column's marginal should come through", "fair": "the marginals will be visibly noisy",
             "poor": "expect near-uniform marginals"}[level]
    return Forecast(f"{head}, against about {per_cell:,.0f} rows in an average cell of the widest column "
                    f"({widest}, {sizes[widest]} cells; {_n_text(n)}): {words}. Associations are not kept.", level)


def dirichlet(schema, epsilon: float, n: int | None, *, bins: int) -> Forecast:
    """Prior α = n_s/(e^ε − 1) in each of p cells against n/p rows per cell: ratio p/(e^ε − 1) when n_s = n.

    Level by that ratio: good < 0.1, fair < 1, poor from 1 (the prior outweighs the data).
    """
    cells = math.prod(_sizes(schema, bins).values())
    eps = spendable(epsilon, n)
    ratio = cells / math.expm1(eps) if eps < 700 else 0.0
    alpha = _ratio(n / math.expm1(eps)) if n is not None and eps < 700 else "n_s/(e^ε − 1)"
    level = _level(ratio, 0.1, 1.0)
    return Forecast(f"At ε = {epsilon:g} the Dirichlet prior puts α = {alpha} pseudo-records in each of the "
                    f"{cells:,} cells of the full table, so it outweighs the data about {_ratio(ratio)} : 1 per cell "
                    f"(with as many synthetic rows as real ones): {VERDICT[level]}.", level)


def _public_keys(sizes: list[int], top: int) -> list[int]:
    """Keys of each feature's PeGS conditional: the top nearest features' sizes × 2 for the hash bit."""
    m = len(sizes)
    out = []
    for i in range(m):
        near = sorted((j for j in range(m) if j != i), key=lambda j: (abs(i - j), j))
        out.append(math.prod(sizes[j] for j in near[:top]) * (2 if m - 1 > top else 1))
    return out


def per_record(schema, epsilon: float, n: int | None, *, bins: int, method: str, top: int = 1,
               block: int = 1) -> Forecast:
    """ε per record (or block) = ε / units; α = 1/(e^(ε_r/M) − 1); the data's weight in a conditional.

    PeGS: N_h/(N_h + Cα) with N_h = n/keys; PMI: 1/(1 + Cα) (its probabilities are g̃ = (g + α)/(1 + Cα)).
    The best feature's weight sets the level: good ≥ 0.5, fair ≥ 0.1, poor below (near-uniform).
    """
    sizes = list(_sizes(schema, bins).values())
    m = len(sizes)
    unit = "synthetic record" if block == 1 else f"block of {block} records"
    def alpha_at(rows: int) -> tuple[int, float, float]:
        units = -(-rows // block)
        eps_r = spendable(epsilon, n) / units
        x = eps_r / m
        return units, eps_r, math.exp(-x) / -math.expm1(-x)

    if n is None:
        count = "synthetic rows n_s" if block == 1 else f"blocks, n_s/{block}"
        return Forecast(f"ε per {unit} is the total divided by the number of {count}, not declared (about the "
                        f"data's rows); even 1,000 rows at ε = {epsilon:g} would give α = 1/(e^(ε/M) − 1) ≈ "
                        f"{_ratio(alpha_at(1000)[2])} pseudo-counts per value (M = {m}). Declare n for a forecast.",
                        "unknown")
    units, eps_r, alpha = alpha_at(n)
    if method == "pmi":
        weights = [1 / (1 + c * alpha) for c in sizes]
        carried = f"the data's probabilities carry at most {_share(max(weights))} of each draw"
    else:
        keys = _public_keys(sizes, top)
        weights = [(n / k) / (n / k + c * alpha) for k, c in zip(keys, sizes)]
        carried = (f"against about {n / min(keys):,.0f} real rows per key at best, the data carry at most "
                   f"{_share(max(weights))} of each conditional")
    level = "good" if max(weights) >= 0.5 else "fair" if max(weights) >= 0.1 else "poor"
    return Forecast(f"ε per {unit} is 1/{units:,} of the total: {eps_r:.3g} at ε = {epsilon:g}, so α = "
                    f"1/(e^(ε/M) − 1) ≈ {_ratio(alpha)} pseudo-counts per value (M = {m}); {carried}: "
                    f"{VERDICT[level]}.", level)


def seqreg(schema, epsilon: float, n: int | None, *, chain: list[str], bins: int, cat_bins: int,
           max_cells: int, max_predictors: int | None, numeric_weight: float) -> Forecast:
    """Laplace scale Δ/ε_j on the largest regression's moments against n (the intercept entry of U′U).

    Relative noise √2·b/n: good < 0.005, fair < 0.05 (diamonds: 0.004 at ε = 1, where dp_seqreg beat
    independent on TV2; 0.013 at ε = 0.3, where it did not), poor beyond.
    """
    from .dp_seqreg import moment_sensitivities, regression_predictors, split_epsilon, table_predictors

    parts = []  # per variable: ("lin", sensitivity of Z′Z) or ("tab", cells of its count table)
    for i, c in enumerate(chain):
        col, previous = schema[c], chain[:i]
        if i > 0 and col.kind == "numeric":
            parts.append(("lin", moment_sensitivities(len(regression_predictors(previous, max_predictors)))["Z'Z"]))
        else:
            size = column_domain(col, bins).size
            preds = table_predictors(schema, previous, size, cat_bins, max_cells) if i > 0 else []
            parts.append(("tab", size * math.prod(column_domain(schema[p], cat_bins).size for p in preds)))
    weights = [numeric_weight if kind == "lin" else 1.0 for kind, _ in parts]
    shares = split_epsilon(spendable(epsilon, n), len(chain), weights)
    head = f"At ε = {epsilon:g} each of the {len(chain)} variables gets about ε = {min(shares):.3g}"
    lin = [(delta, e) for (kind, delta), e in zip(parts, shares) if kind == "lin"]
    if not lin:
        std = math.sqrt(geometric_variance(min(shares)))
        worst = max(size for _, size in parts)
        if n is None:
            return Forecast(f"{head}: geometric noise of standard deviation {std:,.1f} per cell of its count "
                            f"tables (largest {worst:,} cells); n is not declared.", "unknown")
        level = _level(std / (n / worst), 0.05, 0.5)
        return Forecast(f"{head}: geometric noise of standard deviation {std:,.1f} per cell, against about "
                        f"{n / worst:,.0f} rows per cell of its largest table ({worst:,} cells): {VERDICT[level]}.",
                        level)
    delta, eps_j = max(lin, key=lambda t: t[0] / t[1])
    b = delta / eps_j
    head += (f"; its largest regression (sensitivity {delta:g}) gets Laplace noise of scale {b:,.0f} on each "
             f"entry of its moment matrix (values scaled to [−1, 1])")
    if n is None:
        return Forecast(f"{head}. n is not declared: the noise is small once n is well over {200 * b:,.0f} rows.",
                        "unknown")
    rel = math.sqrt(2) * b / n
    level = _level(rel, 0.005, 0.05)
    return Forecast(f"{head}, against n = {n:,} rows: noise about {rel:.2%} of the row count; "
                    f"{VERDICT[level]}.", level)


def marginals(schema, epsilon: float, n: int | None, *, bins: int, delta: float, label: str) -> Forecast:
    """Generic forecast for marginal-based methods (MST's split): Gaussian noise per 2-way cell vs n/cells.

    MST's 2-way share of ρ (three quarters) over the d − 1 pairs of a tree; each table's part grows with
    its cells, so a table of the average size gets about σ² = (d − 1)/(2·0.75ρ). Level by σ / (n/cells)
    for the average pair: good < 0.2, fair < 1, poor beyond (the fitted model smooths the noise, hence
    looser thresholds than for a raw histogram).
    """
    sizes = list(_sizes(schema, bins).values())
    d = len(sizes)
    rho = zcdp_rho(spendable(epsilon, n), delta)
    pairs = max(d - 1, 1)
    share = constraints.MST_RHO_SHARES[2]
    sigma = math.sqrt(pairs / (2 * share * rho))
    cells = sum(a * b for i, a in enumerate(sizes) for b in sizes[i + 1:]) / max(d * (d - 1) / 2, 1)
    head = (f"At ε = {epsilon:g} (δ = {delta:g}: ρ = {rho:.3g} zCDP), 2-way marginals measured as MST measures "
            f"them ({share:.0%} of ρ over {pairs} pairs of a tree, Gaussian) get noise of standard deviation about "
            f"{sigma:,.1f} per cell; {label} splits its budget its own way, so read this as an order of magnitude")
    if n is None:
        return Forecast(f"{head}; n is not declared, so the rows per cell (about n/{cells:,.0f}) are unknown.",
                        "unknown")
    level = _level(sigma / (n / cells), 0.2, 1.0)
    return Forecast(f"{head}, against about {n / cells:,.0f} rows in an average cell ({cells:,.0f} cells; "
                    f"{_n_text(n)}): {VERDICT[level]}.", level)
