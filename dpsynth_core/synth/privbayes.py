"""PrivBayes of degree 2: a Bayesian network chosen privately, noisy conditional tables.

Zhang, Cormode, Procopiuc, Srivastava & Xiao (2017), with every column
discretised (numeric columns binned over their declared public bounds):

1. Network (a share β = 0.3 of ε). The first column is drawn uniformly at
   random (no data read). The second gets the first as its parent; every
   later one, a pair of the columns already placed. Each step picks the
   (column, parents) pair by the exponential mechanism on the R score
   n·R(X, Π) = ½ ‖N(X, Π) − N(X)N(Π)/n‖₁ (counts), the distance of the joint
   counts from independence. Adding or removing one record moves N(X, Π) by
   1 in L1 and the product table by (3n + 1)/(n + 1) < 3, so the score has
   sensitivity 2 under add/remove neighbours. Steps with a single candidate
   choose without spending anything.
2. Tables (the rest of ε, split equally). For each column from the third on,
   the count table over (its two parents, itself) gets two-sided geometric
   noise (L1 sensitivity 1). The first two columns' joint is the parents'
   margin of the third column's table, so it costs nothing more.
3. Post-processing: each noisy table is projected onto the non-negative
   tables with the estimated total; conditionals P(X | Π) are its rows,
   normalised. Records are drawn i.i.d. ancestrally, each column from its
   conditional given the drawn parents.

Pure ε-DP; neighbouring datasets: add or remove one record. The network and the noisy tables
come from the synthesis's secret noise stream, the records from the records' stream.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np

from ..privacy import TOTAL, Budget, ExponentialMechanism, Geometric
from ..privacy.audit import Audit, CellCounts, three_columns
from . import options as opt
from .base import Synthesizer, register
from .encoding import decode_column, encode
from .graphical import conditional, count_table, exact_l1, project_simplex, sample_rows, table_cells_refusal
from .mst import MARGINAL_FAMILY, marginal_forecast

SELECTION_SHARE = 0.3  # β of the paper: share of ε spent choosing the network
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
    description = ("A Bayesian network where each column has up to two parents, chosen privately "
                   "(exponential mechanism on the R score), noisy conditional tables (geometric noise), "
                   "and records drawn i.i.d. from the network (Zhang et al. 2017). Keeps triples of columns.")
    options = (opt.bins(10),)
    audits = (Audit(three_columns(3, "abc"), CellCounts(((0, 1), (0, 1, 2))), epsilon=1.0, n=2000,
                    runs=500, quick_runs=80,
                    note="D never uses a2, b2 or c2. The one noisy table costs 0.7ε (0.3ε chooses the "
                         "network), and sampling dilutes its ratio: the honest bound lands near 0.4."),)
    spends = Budget(TOTAL, per_target=f"{SELECTION_SHARE:.0%} on choosing the network, the rest in equal shares "
                                      "over its conditional tables")
    rank = 20
    suggest_priority = 0  # a marginal-based method, after MST in picker order
    #: It scores every (column, pair of parents) at each step: Σ (d − k)·C(k, 2) ≈ d⁴/24 choices; more
    #: columns than this are refused.
    max_columns = 40

    def forecast(self, schema, epsilon, n=None, *, bins, **params):
        # MST's marginal noise at these bins, as an order of magnitude (the sentence says so): PrivBayes has
        # no forecast of its own split yet.
        return marginal_forecast(schema, epsilon, n, bins=bins, label=self.label)

    def suggestion(self, schema, epsilon, n, forecast):
        """Where MST's marginal forecast (its order of magnitude) is good or not known: on penguins its median
        TV2 over 15 runs was 0.76 / 0.53 / 0.34 at ε = 0.3, 1, 3 against independent marginals' 0.46 / 0.34 /
        0.30, also at ε = 3 where that forecast is only fair (bench/bench_dp_utility.py)."""
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
        return {"columns": list(columns), "domains": domains, "sizes": sizes, "one": count_table(codes[:, :1], sizes[:1]),
                "two": two, "three": three, "scores": {**score2, **score3}}

    def generate(self, measured, *, epsilon, n, rng, bins, noise=None):
        noise = rng if noise is None else noise
        columns, domains, sizes = measured["columns"], measured["domains"], measured["sizes"]
        d = len(columns)
        steps = []
        if d == 1:
            return self._single(measured, epsilon, n, rng, noise)

        # 1. the network
        first = int(noise.integers(d))
        placed, parents = [first], {first: ()}
        candidates_per_step = [d - 1] + [(d - i) * (i * (i - 1) // 2) for i in range(2, d)]
        em_steps = sum(c > 1 for c in candidates_per_step)
        eps_sel = SELECTION_SHARE * epsilon if em_steps and d > 2 else 0.0
        eps_step = eps_sel / em_steps if em_steps and d > 2 else 0.0
        while len(placed) < d:
            rest = [x for x in range(d) if x not in placed]
            pas = [(p,) for p in placed] if len(placed) == 1 else list(itertools.combinations(sorted(placed), 2))
            cands = [(x, pa) for x in rest for pa in pas]
            if len(cands) == 1:
                x, pa = cands[0]
            else:
                em = ExponentialMechanism(eps_step, R_SENSITIVITY)
                x, pa = cands[em.select([measured["scores"][c] for c in cands], noise)]
                steps.append(em.step(f"parents of {columns[x]} (among {len(cands)} choices)",
                                     detail=f"score n·R = ½‖N(X,Π) − N(X)N(Π)/n‖₁, computed exactly; chose "
                                            f"{', '.join(columns[p] for p in pa)}; P ∝ exp(ε·score/(2·"
                                            f"{R_SENSITIVITY:g})), sampled exactly"))
            placed.append(x)
            parents[x] = pa

        # 2. noisy tables: (parents, child) for every column from the third on (or the one pair when d = 2)
        eps_tables = epsilon - eps_sel
        owners = placed[2:] if d > 2 else [placed[1]]
        eps_t = eps_tables / len(owners)
        noisy = {}
        for x in owners:
            axes = (*parents[x], x)
            raw = _table(measured, axes)
            mechanism = Geometric(eps_t)
            noisy[x] = mechanism.noisy(raw, noise)
            steps.append(mechanism.step(f"table of {columns[x]} given {', '.join(columns[p] for p in parents[x])} "
                                        f"({raw.size:,} cells)", detail=f"P(k) ∝ exp(−{eps_t:.4g}·|k|)"))
        total = max(float(np.mean([t.sum() for t in noisy.values()])), 1.0)
        fitted = {x: project_simplex(t, total) for x, t in noisy.items()}

        # 3. i.i.d. ancestral sampling
        codes = np.empty((n, d), dtype=np.int64)
        head = fitted[owners[0]]
        pair = head if d == 2 else head.sum(axis=2)  # joint of the first two columns
        a, b = (placed[0], placed[1]) if d == 2 else parents[owners[0]]
        codes[:, a] = rng.choice(sizes[a], size=n, p=_normalised(pair.sum(axis=1)))
        codes[:, b] = sample_rows(conditional(pair, _normalised(pair.sum(axis=0))), codes[:, a], rng)
        for x in owners if d > 2 else []:
            a, b = parents[x]
            t = fitted[x]
            idx = codes[:, a] * sizes[b] + codes[:, b]
            codes[:, x] = sample_rows(conditional(t, _normalised(t.sum(axis=(0, 1)))), idx, rng)
        values = {c: decode_column(codes[:, j], dom, rng) for j, (c, dom) in enumerate(zip(columns, domains))}
        return values, steps

    def _single(self, measured, epsilon, n, rng, noise):
        x = measured["one"]
        mechanism = Geometric(epsilon)
        noisy = mechanism.noisy(x, noise)
        p = _normalised(project_simplex(noisy, max(float(noisy.sum()), 1.0)))
        c, dom = measured["columns"][0], measured["domains"][0]
        return ({c: decode_column(rng.choice(dom.size, size=n, p=p), dom, rng)},
                [mechanism.step(f"histogram of {c} ({dom.size} cells)", detail=f"P(k) ∝ exp(−{epsilon:.4g}·|k|)")])


def _arrange(table: np.ndarray, axes: tuple, order: tuple) -> np.ndarray:
    """``table`` over ``axes`` with its axes reordered to ``order``."""
    return np.transpose(table, [axes.index(k) for k in order])


def _table(measured, axes: tuple) -> np.ndarray:
    """The measured count table over ``axes`` (in that order)."""
    if len(axes) == 2:
        return measured["two"][axes]
    key = tuple(sorted(axes))
    return _arrange(measured["three"][key], key, axes)


def _normalised(x: np.ndarray) -> np.ndarray:
    s = x.sum()
    return x / s if s > 0 else np.full(x.size, 1.0 / x.size)
