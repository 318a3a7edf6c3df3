"""PrivBayes of degree at most 2: a Bayesian network chosen privately, noisy conditional tables.

Zhang, Cormode, Procopiuc, Srivastava & Xiao (2017), with every column
discretised (numeric columns binned over their declared public bounds):

0. Size (2 % of ε): a noisy count of the records N̂ (two-sided geometric) sets
   the largest useful table. A table of C cells measured at ε_t is useful when
   N̂·ε_t / C ≥ θ (θ-usefulness, the paper's §4): records per cell against noise
   of scale 1/ε_t. When no pair of columns is useful, the network has no edge
   and every column gets its own histogram (independent marginals).
1. Network (a share β = 0.3 of the rest). The first column is drawn uniformly
   at random (no data read). At each later step every column not placed offers
   its largest useful parent sets among the columns placed (two, else one,
   else none), and the exponential mechanism picks a (column, parents) pair on
   the R score n·R(X, Π) = ½ ‖N(X, Π) − N(X)N(Π)/n‖₁ (counts; 0 without
   parents), the distance of the joint counts from independence. Adding or
   removing one record moves N(X, Π) by 1 in L1 and the product table by
   (3n + 1)/(n + 1) < 3, so the score has sensitivity 2 under add/remove
   neighbours. The d − 1 steps share β equally; a step left with one choice
   reads nothing and its share is recorded as reserved.
2. Tables (the rest, split equally): each column's count table over (its
   parents, itself) gets two-sided geometric noise (L1 sensitivity 1).
3. Post-processing: each noisy table is projected onto the non-negative
   tables with the estimated total; conditionals P(X | Π) are its rows,
   normalised. Records are drawn i.i.d. ancestrally, each column from its
   conditional given the drawn parents.

Pure ε-DP; neighbouring datasets: add or remove one record. The count, the network and the noisy tables
come from the synthesis's secret noise stream, the records from the records' stream.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from ..privacy import TOTAL, Budget, ExponentialMechanism, Geometric
from ..privacy.ledger import Step
from ..privacy.audit import Audit, CellCounts, Neighbours, three_columns
from . import options as opt
from .base import Synthesizer, register
from .encoding import decode_column, encode
from .graphical import conditional, count_table, exact_l1, project_simplex, sample_rows, table_cells_refusal
from .independent import histogram_forecast
from .forecasting import Forecast, domain_sizes, spendable
from .mst import MARGINAL_FAMILY, marginal_forecast

SELECTION_SHARE = 0.3  # β of the paper: share of ε spent choosing the network
COUNT_SHARE = 0.02     # share of ε on the number of records, which sets the largest useful table
THETA = 3.0            # θ-usefulness: a useful table has θ records per cell per unit of noise (docs/methods.md)
DEGREE = 2             # at most this many parents
R_SENSITIVITY = 2.0


def r_score(table: np.ndarray) -> Fraction:
    """n·R of a 2-D count table (parents × child): half the L1 distance from its independence table,
    exactly: Σ|n·N − rows·colsᵀ| / (2n) in integers."""
    table = np.asarray(table, dtype=np.int64)
    n = int(table.sum())
    if n == 0:
        return Fraction(0)
    return Fraction(exact_l1(n * table, np.outer(table.sum(axis=1), table.sum(axis=0))), 2 * n)


@register
class PrivBayes(Synthesizer):
    name = "privbayes"
    label = "PrivBayes (Bayesian network of degree 2)"
    is_dp = True
    description = ("A Bayesian network where each column has up to two parents, as many as the number of "
                   "records and ε make a useful table, chosen privately (exponential mechanism on the R "
                   "score), noisy conditional tables (geometric noise), "
                   "and records drawn i.i.d. from the network (Zhang et al. 2017). Keeps triples of columns.")
    options = (opt.bins(10),)
    audits = (Audit(three_columns(3, "abc"), CellCounts(((0, 1), (0, 1, 2))), epsilon=1.0, n=2000,
                    runs=500, quick_runs=80,
                    note="D has 30 rows: too few for any pair of columns to be a useful table (at most 2.3 "
                         "cells), so every column is its own histogram at 0.98ε/3; sampling dilutes the ratio."),
              Audit(three_columns(3, "abc"), CellCounts(((0, 1), (0, 1, 2))), pair=Neighbours(rows=400),
                    epsilon=1.0, n=2000, runs=500, quick_runs=80,
                    note="D has 400 rows: pairs and triples of columns are useful tables (up to 30.5 cells), so "
                         "the network is chosen and the planted record reaches a table of its parents."),)
    spends = Budget(TOTAL, per_target=f"{COUNT_SHARE:.0%} on the number of records; of the rest "
                                      f"{SELECTION_SHARE:.0%} on choosing the network (none when no pair of columns is "
                                      "a useful table), the rest in equal shares over the columns' tables")
    rank = 20
    suggest_priority = 0  # a marginal-based method, after MST in picker order
    #: It scores every (column, pair of parents) at each step: Σ (d − k)·C(k, 2) ≈ d⁴/24 choices; more
    #: columns than this are refused.
    max_columns = 40

    def forecast(self, schema, epsilon, n=None, *, bins, **params):
        """Where n·ε leave no pair of columns a useful table, PrivBayes is independent marginals: their
        forecast, said so. Otherwise MST's marginal noise at these bins, as an order of magnitude (the
        sentence says so): PrivBayes has no forecast of its own split of a network yet."""
        if n is not None:
            sizes = list(domain_sizes(schema, bins).values())
            left = spendable(epsilon, n) * (1 - COUNT_SHARE)
            if not _split(left, n, sizes)[0]:
                cap = n * left * (1 - SELECTION_SHARE) / len(sizes) / THETA
                alone = histogram_forecast(schema, left, n, bins=bins)
                pair = min(a * b for a, b in itertools.combinations(sizes, 2)) if len(sizes) > 1 else 0
                return Forecast(f"At ε = {epsilon:g} with {n:,} rows no pair of columns is a useful table (a useful "
                                f"table has at most {cap:.1f} cells here, the smallest pair {pair}): {self.label} "
                                f"counts the records with {COUNT_SHARE:.0%} of ε and draws every column from its own "
                                f"noisy histogram, as independent marginals do with the rest. {alone.sentence}",
                                alone.level)
        return marginal_forecast(schema, epsilon, n, bins=bins, label=self.label)

    def suggestion(self, schema, epsilon, n, forecast):
        """Where MST's marginal forecast (its order of magnitude) is good or not known: on penguins its median
        TV2 over 15 runs was 0.76 / 0.53 / 0.34 at ε = 0.3, 1, 3 against independent marginals' 0.46 / 0.34 /
        0.30, also at ε = 3 where that forecast is only fair (bench/bench_dp_utility.py; measured before the
        network's size followed θ-usefulness, which made it independent marginals where no pair is useful)."""
        return None if forecast is not None and forecast.level in ("fair", "poor") else MARGINAL_FAMILY

    def refuse(self, schema, columns, n, *, bins, **params):
        if len(columns) > self.max_columns:
            return (f"PrivBayes compares every column with every pair of earlier ones, too many choices for "
                    f"{len(columns)} columns (at most {self.max_columns}); synthesize fewer "
                    "columns or use MST.")
        return table_cells_refusal(schema, columns, bins, 3, "PrivBayes")

    def measure(self, df, schema, columns, *, bins):
        codes, domains = encode(df, schema, columns, bins)
        sizes = [d.size for d in domains]
        d = len(columns)
        two = {(i, j): count_table(codes[:, [i, j]], [sizes[i], sizes[j]]) for i, j in itertools.permutations(range(d), 2)}
        three = {t: count_table(codes[:, list(t)], [sizes[k] for k in t]) for t in itertools.combinations(range(d), 3)}
        # score of child x given parents (a, b): the triple's table as (a·b) × x
        score2 = {(x, (a,)): r_score(t) for (a, x), t in two.items()}
        score3 = {}
        for t, table in three.items():
            for x in t:
                a, b = (k for k in t if k != x)
                score3[(x, (a, b))] = r_score(_arrange(table, t, (a, b, x)).reshape(-1, sizes[x]))
        return {"columns": list(columns), "domains": domains, "sizes": sizes, "records": len(codes),
                "one": [count_table(codes[:, [j]], [sizes[j]]) for j in range(d)],
                "two": two, "three": three, "scores": {**score2, **score3}}

    def generate(self, measured, *, epsilon, n, rng, bins, noise=None):
        noise = rng if noise is None else noise
        columns, domains, sizes = measured["columns"], measured["domains"], measured["sizes"]
        d = len(columns)

        # 0. the number of records, which sets how large a useful table may be
        count = Geometric(COUNT_SHARE * epsilon)
        records = max(float(measured["records"] + count.sample(noise, 1)[0]), 1.0)
        steps = [count.step("number of records", detail=f"{COUNT_SHARE:.0%} of ε; sets the largest useful table "
                                                        f"(records · ε of a table / {THETA:g})")]
        eps_sel, eps_t, cap = _split(epsilon * (1 - COUNT_SHARE), records, sizes)

        # 1. the network
        first = int(noise.integers(d))
        placed, parents = [first], {first: ()}
        eps_step = eps_sel / (d - 1) if eps_sel else 0.0
        while len(placed) < d:
            cands = _candidates([x for x in range(d) if x not in placed], placed, sizes, cap)
            if len(cands) > 1 and eps_step:
                em = ExponentialMechanism(eps_step, R_SENSITIVITY)
                x, pa = cands[em.select([measured["scores"].get(c, Fraction(0)) for c in cands], noise)]
                steps.append(em.step(f"parents of {columns[x]} (among {len(cands)} choices)",
                                     detail=f"score n·R = ½‖N(X,Π) − N(X)N(Π)/n‖₁, computed exactly; chose "
                                            f"{', '.join(columns[p] for p in pa) or 'none'}; P ∝ exp(ε·score/(2·"
                                            f"{R_SENSITIVITY:g})), sampled exactly"))
            else:  # one choice, or a network with no edges (any order is the same model)
                x, pa = cands[0]
                if eps_step:  # chosen without reading the data: its share is kept unspent, the guarantee as if spent
                    steps.append(Step("reserved", f"parents of {columns[x]} (one choice)", eps_step,
                                      detail="a single candidate is chosen without reading the data"))
            placed.append(x)
            parents[x] = pa

        # 2. one noisy table per column: its parents and itself
        noisy = {}
        for x in placed:
            axes = (*parents[x], x)
            raw = _table(measured, axes)
            mechanism = Geometric(eps_t)
            noisy[x] = mechanism.noisy(raw, noise)
            given = f" given {', '.join(columns[p] for p in parents[x])}" if parents[x] else ""
            steps.append(mechanism.step(f"table of {columns[x]}{given} ({raw.size:,} cells)",
                                        detail=f"P(k) ∝ exp(−{eps_t:.4g}·|k|)"))
        total = max(float(np.mean([t.sum() for t in noisy.values()])), 1.0)
        fitted = {x: project_simplex(t, total) for x, t in noisy.items()}

        # 3. i.i.d. ancestral sampling
        codes = np.empty((n, d), dtype=np.int64)
        for x in placed:
            t = fitted[x]
            margin = _normalised(t.reshape(-1, sizes[x]).sum(axis=0))
            if not parents[x]:
                codes[:, x] = rng.choice(sizes[x], size=n, p=margin)
                continue
            idx = np.zeros(n, dtype=np.int64)
            for p in parents[x]:
                idx = idx * sizes[p] + codes[:, p]
            codes[:, x] = sample_rows(conditional(t, margin), idx, rng)
        values = {c: decode_column(codes[:, j], dom, rng) for j, (c, dom) in enumerate(zip(columns, domains))}
        return values, steps


def _split(epsilon: float, records: float, sizes: list[int]) -> tuple[float, float, float]:
    """(ε of the network, ε of each table, the largest useful table) for ``epsilon`` after the count.

    A table of ``cells`` cells is useful when records · ε_table / cells ≥ θ (θ-usefulness, Zhang et al.
    2017, §4): noise of scale 1/ε_table per cell against records / cells per cell. When no pair of
    columns fits, the network has no edge to choose and every table is a column's own histogram: the
    whole ε goes to them, as independent marginals."""
    d = len(sizes)
    eps_t = epsilon * (1 - SELECTION_SHARE) / d
    cap = records * eps_t / THETA
    pairs = d > 1 and min(a * b for a, b in itertools.combinations(sizes, 2)) <= cap
    if not pairs:
        return 0.0, epsilon / d, 0.0
    return epsilon * SELECTION_SHARE, eps_t, cap


def _candidates(rest: list[int], placed: list[int], sizes: list[int], cap: float) -> list[tuple[int, tuple]]:
    """Every (column, parents) a step may choose: for each column not placed, its largest parent sets
    (at most DEGREE columns already placed) whose table fits within ``cap`` cells, or no parent."""
    out = []
    for x in rest:
        for k in range(min(DEGREE, len(placed)), -1, -1):
            sets = [pa for pa in itertools.combinations(sorted(placed), k)
                    if not k or sizes[x] * math.prod(sizes[p] for p in pa) <= cap]
            if sets:
                out += [(x, pa) for pa in sets]
                break
    return out


def _arrange(table: np.ndarray, axes: tuple, order: tuple) -> np.ndarray:
    """``table`` over ``axes`` with its axes reordered to ``order``."""
    return np.transpose(table, [axes.index(k) for k in order])


def _table(measured, axes: tuple) -> np.ndarray:
    """The measured count table over ``axes`` (in that order)."""
    if len(axes) == 1:
        return measured["one"][axes[0]]
    if len(axes) == 2:
        return measured["two"][axes]
    key = tuple(sorted(axes))
    return _arrange(measured["three"][key], key, axes)


def _normalised(x: np.ndarray) -> np.ndarray:
    s = x.sum()
    return x / s if s > 0 else np.full(x.size, 1.0 / x.size)
