"""MST: noisy 1-way marginals, a privately chosen spanning tree of 2-way marginals.

McKenna, Miklau & Sheldon (2021), winner of the NIST 2018 challenge (docs/methods.md#mst), with our
own budget split, in zero-concentrated DP (Bun & Steinke 2016):

1. ρ is the largest whose (ε, δ) bound is ≤ ε (privacy/accounting.py: Canonne, Kamath and
   Steinke 2020). It is split (``MST.rho_shares``)
   20% to the 1-way marginals, 5% to choosing the tree and 75% to the tree's
   2-way marginals, which carry the associations (the paper splits in thirds;
   this split gives a lower mean 2-way total variation on diamonds at every ε
   in bench/bench_dp_utility.py, and the selection still finds the strong pairs).
2. Every 1-way marginal gets discrete Gaussian noise, σ² = d/(2ρ₁) (a record adds 1 to
   one cell of each of the d tables: L2 sensitivity 1 per table, ρ₁/d each), over the
   column's coarse bins (``bins`` per numeric column).
   Post-processing of these noisy counts alone: values below 3σ are merged
   into one "rare" value (as in the authors' code: fewer cells to measure),
   and a numeric column that keeps at most a fifth of its bins (diamonds'
   depth, table, y, z: their declared bounds are wide) is modelled at
   half-width bins inside the bins it keeps.
3. d − 1 pairs forming a spanning tree, chosen in Kruskal's order: each step
   picks among the pairs joining two components by the exponential
   mechanism on ‖M_ij(D) − M_ij(p̂)‖₁ (p̂ the independent model of step 2), at
   ε₀ = √(8ρ_s/(d − 1)) (ρ = ε₀²/8 per step). The score is computed exactly,
   in integers: the model's table N·p̂_i p̂_jᵀ is rounded to multiples of
   2⁻²⁰ (a function of step 2's noisy counts alone), so the score is an integer
   count of 2⁻²⁰ units, and one record, moving one cell of M_ij(D) by 1, moves
   it by at most 2²⁰ units: sensitivity exactly 1. The choice is sampled
   exactly (:class:`~dpsynth_core.privacy.mechanisms.ExponentialMechanism`).
4. The chosen 2-way marginals (on the domains of step 2) get discrete Gaussian noise;
   table e gets ρ_e ∝ cells_e^(2/3) of ρ₂ (:func:`allocate_rho`), σ_e² = 1/(2ρ_e).
5. Estimation (post-processing): each column's distribution combines its
   noisy 2-way margins (and its noisy 1-way, when modelled on its bins)
   with inverse-variance weights, projected onto the simplex; each tree
   edge's table is projected onto non-negative tables and fitted to its two
   column distributions by iterative proportional fitting. From that tree
   model, mirror descent on the squared error of every noisy marginal
   (Private-PGM's estimator, McKenna et al. 2019; exact belief propagation on
   the tree) refines the potentials.
6. Records are drawn i.i.d. from the tree model, ancestrally: the root, then
   each child from P(child | parent) with its own random number — never by
   rounding counts, which couples columns drawn from the same parent.

Numeric columns are binned over their declared public bounds and drawn
uniformly inside the bin. Every choice that depends on the data (merged
values, half-width bins, each table's ρ_e) is made from the noisy
counts only: the measure step holds the exact counts, and a new ε or seed
re-runs only steps 1–6. Neighbouring datasets: add or remove one record.

Every noise draw and choice of steps 2–4 is exact (integers only: :mod:`..privacy.exact`) and comes
from the synthesis's secret noise stream; step 6 samples records from the records' stream. The
ledger lists each step's ρ (and σ) and converts their sum once into (ε, δ).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from .. import constraints
from ..privacy import TOTAL, Budget, DiscreteGaussian, ExponentialMechanism, Step
from ..privacy.accounting import zcdp_rho
from ..privacy.audit import Audit, Broken, three_columns
from . import options as opt
from .base import Synthesizer, register
from .encoding import Domain, column_domain, decode_column, encode
from .forecasting import Forecast, domain_sizes, mean_pair_cells, noise_against_cells, spendable
from .graphical import (conditional, count_table, exact_l1, merged_codes, project_simplex, resolved_cells,
                        sample_rows, table_cells_refusal)

RARE_SIGMAS = 3.0  # a value whose noisy count is below this many σ is merged into "rare"
REFINE_SHARE = 0.2  # a numeric column keeping at most this share of its bins is modelled at half-width bins
# A numeric column is modelled on its bins merged in pairs when its own bins counted at least 3σ hold
# less than 1 − this share of the mass its merged pairs counted at least 3σ hold (a small table).
RESOLVED_LOSS = 0.2
IPF_ITERATIONS = 30
MD_ITERATIONS = 100  # from the IPF start, TV2 on diamonds stops improving by about 100
SCORE_BITS = 20  # the tree's scores are counted in units of 2^−20 (step 3)


def split_rho(rho: float, d: int) -> tuple[float, float, float]:
    """ρ of the 1-way measurement, the tree selection and the 2-way measurement; they sum to ``rho``.

    One column has no pair to choose or measure: it all goes to its 1-way marginal.

    >>> split_rho(1.0, 10)
    (0.2, 0.05, 0.75)
    """
    if d < 2:
        return rho, 0.0, 0.0
    one, select = rho * MST.rho_shares[0], rho * MST.rho_shares[1]
    return one, select, rho - one - select


def allocate_rho(rho: float, cells) -> np.ndarray:
    """ρ of each noisy table: ρ_e = ρ·c_e^(2/3) / Σ c^(2/3), for tables of c_e cells.

    Why 2/3: a table measured at ρ_e gets σ_e = 1/√(2ρ_e) per cell, so its
    expected L1 error (what total variation sees) is c_e·σ_e·√(2/π). The
    total Σ c_e (2ρ_e)^(−1/2) is convex in the ρ_e; with a multiplier λ for
    Σ ρ_e = ρ, the optimum has ½·c_e·(2ρ_e)^(−1/2)/ρ_e = λ for every e, i.e.
    ρ_e^(3/2) ∝ c_e. (Minimising the total squared error Σ c_e/(2ρ_e) instead
    would give ρ_e ∝ √c_e.) Equal shares would spend as much on a 4-cell
    table as on a 400-cell one, whose error is then the largest.

    >>> allocate_rho(1.0, [1, 8]).round(12).tolist()
    [0.2, 0.8]
    """
    w = np.asarray(cells, dtype=float) ** (2 / 3)
    return rho * w / w.sum()


def measure_marginals(df, schema, columns, bins):
    """Every 1-way and 2-way count table at half-width bins (the only data read).

    Generating sums pairs of half-width bins into the ``bins`` bins it
    measures, and keeps them apart only where step 2 chose to refine.
    """
    codes, domains = encode(df, schema, columns, 2 * bins)
    sizes = [d.size for d in domains]
    one = [count_table(codes[:, [j]], [sizes[j]]) for j in range(len(columns))]
    two = {(i, j): count_table(codes[:, [i, j]], [sizes[i], sizes[j]])
           for i, j in itertools.combinations(range(len(columns)), 2)}
    coarse = [_coarse_of(schema[c], dom, bins) for c, dom in zip(columns, domains)]
    return {"columns": list(columns), "domains": domains, "coarse": coarse, "one": one, "two": two}


def _coarse_of(col, fine: Domain, bins: int) -> np.ndarray:
    """The bin (of ``bins`` per numeric column) holding each half-width bin: pairs of them; a special
    value's cell and the missing cell are their own.

    Categories, and whole-number columns with one bin per value at ``bins``,
    are the same at both widths.
    """
    if col.kind != "numeric" or column_domain(col, bins).size == fine.size:
        return np.arange(fine.size)
    out = np.arange(fine.n_bins) // 2
    return np.append(out, out[-1] + 1 + np.arange(fine.size - fine.n_bins))


def _pairs(half: Domain, size: int) -> np.ndarray:
    """The cell of each of a numeric column's ``size`` measured values (its bins, then its special values
    and missing cell) when adjacent bins are merged two at a time; the others keep cells of their own."""
    bins = half.n_bins // 2
    merged = np.arange(bins) // 2
    return np.concatenate([merged, merged[-1] + 1 + np.arange(size - bins)])


def _model_codes(coarse: np.ndarray, groups: np.ndarray, refine: bool) -> tuple[np.ndarray, np.ndarray]:
    """Model code of each half-width bin, and the 1-way group of each model code.

    Unrefined, the model codes are the 1-way groups. Refined, each half-width
    bin inside a kept bin is a code of its own, and the rare bins still share
    the last one.
    """
    grp = groups[coarse]
    if not refine:
        return grp, np.arange(groups.max() + 1)
    rare = grp == groups.max()
    model = np.where(rare, (~rare).sum(), np.cumsum(~rare) - 1)
    to_one = np.zeros(model.max() + 1, dtype=np.int64)
    to_one[model] = grp
    return model, to_one


def _onehot(codes: np.ndarray) -> np.ndarray:
    """Matrix summing a table's cells by ``codes`` along one axis: T → Gᵀ T G."""
    out = np.zeros((codes.size, codes.max() + 1))
    out[np.arange(codes.size), codes] = 1.0
    return out


def _ipf(table: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Scale ``table`` until its margins are ``rows`` and ``cols`` (same totals)."""
    t = table + 1e-9 * np.outer(rows, cols) / max(rows.sum(), 1e-12)  # every cell reachable
    for _ in range(IPF_ITERATIONS):
        t *= (rows / np.maximum(t.sum(axis=1), 1e-300))[:, None]
        t *= (cols / np.maximum(t.sum(axis=0), 1e-300))[None, :]
    return t


#: Why the method suggestion may name a marginal-based method (issue 18 measured MST 1.3–6.7× better than
#: ``independent`` on mean 2-way TV at every ε on diamonds; on penguins, where the noise per cell outweighs the
#: few rows in it, it was worse at every ε, so each method names the forecast levels it may be suggested at).
MARGINAL_FAMILY = (", a marginal-based method (the family that wins the NIST benchmarks; it keeps the 2-way "
                   "associations that independent noisy marginals lose).")


def marginal_forecast(schema, epsilon: float, n: int | None, *, bins: int, label: str,
                      delta: float = constraints.DEFAULT_DELTA) -> Forecast:
    """Gaussian noise per 2-way cell, measured as MST splits its budget, against n/cells.

    MST's 2-way share of ρ (three quarters) over the d − 1 pairs of a tree; each table's part grows with
    its cells, so a table of the average size gets about σ² = (d − 1)/(2·0.75ρ). Level by σ / (n/cells)
    for the average pair: good < 0.2, fair < 1, poor beyond (the fitted model smooths the noise, hence
    looser thresholds than for a raw histogram). Another marginal-based method that splits its budget
    its own way may declare this one as its order of magnitude: the sentence names its ``label``.
    """
    sizes = list(domain_sizes(schema, bins).values())
    d = len(sizes)
    rho = zcdp_rho(spendable(epsilon, n), delta)
    pairs = max(d - 1, 1)
    share = MST.rho_shares[2]
    sigma = math.sqrt(pairs / (2 * share * rho))
    cells = mean_pair_cells(sizes)
    head = (f"At ε = {epsilon:g} (δ = {delta:g}: ρ = {rho:.3g} zCDP), 2-way marginals measured as MST measures "
            f"them ({share:.0%} of ρ over {pairs} pairs of a tree, Gaussian) get noise of standard deviation about "
            f"{sigma:,.1f} per cell; {label} splits its budget its own way, so read this as an order of magnitude")
    return noise_against_cells(head, sigma, n, cells, per="per cell", in_cell="an average cell",
                               detail=f"{cells:,.0f} cells")


@register
class MST(Synthesizer):
    name = "mst"
    label = "MST (spanning tree of noisy 2-way marginals)"
    is_dp = True
    spends = Budget(TOTAL, needs_delta=True, zcdp=True,
                    per_target="ρ over the 1-way marginals, the tree's selection and its 2-way marginals")
    description = ("Noisy 1-way marginals, a maximum spanning tree of 2-way marginals chosen privately, "
                   "noisy 2-way marginals on the tree, and records drawn i.i.d. from the tree model "
                   "(McKenna et al. 2021; zCDP, reported as (ε, δ)-DP). Keeps every marginal and the "
                   "strongest pairwise associations.")
    # Bins per numeric column: chosen by bench/bench_dp_utility.py for the best mean 2-way total variation on
    # diamonds at ε = 1.
    options = (opt.bins(20),)
    rank = 10
    suggest_priority = 0
    #: Shares of ρ: 1-way marginals, choosing the tree, the tree's 2-way marginals (which carry the
    #: associations; module docstring).
    rho_shares = (0.20, 0.05, 0.75)
    audits = (Audit(three_columns(3, "ab"), epsilon=1.0, delta=1e-6, n=2000, runs=600, quick_runs=60,
                    broken=Broken(zcdp=True),
                    note="Two columns, so the tree is their one pair and its table gets 75 % of ρ: the planted "
                         "record adds 1 to the cell (a2, b2), which D leaves empty, under Gaussian noise of "
                         "σ = 1/√(2ρ₂). The zCDP-to-(ε, δ) conversion is loose, so the honest bound lands "
                         "far below the claim; with a tenth of the noise (σ ≈ 0.5) the cell is seen."),)

    def forecast(self, schema, epsilon, n=None, *, bins, **params):
        # Its own split, measured at the default δ: the forecast is asked before δ is chosen.
        return marginal_forecast(schema, epsilon, n, bins=bins, label=self.label)

    def suggestion(self, schema, epsilon, n, forecast):
        """Unless its forecast is poor: on penguins (poor at ε = 0.3, 1 and 3) its median TV2 over 7 runs was
        0.59 / 0.43 / 0.32 against independent marginals' 0.47 / 0.34 / 0.29 (bench/bench_dp_utility.py)."""
        return None if forecast is not None and forecast.level == "poor" else MARGINAL_FAMILY

    def refuse(self, schema, columns, n, *, bins, **params):
        # the measure step keeps the 2-way tables at half-width bins
        return table_cells_refusal(schema, columns, 2 * bins, 2, "MST")

    def measure(self, df, schema, columns, *, bins):
        return measure_marginals(df, schema, columns, bins)

    def generate(self, measured, *, epsilon, n, rng, bins, delta=constraints.DEFAULT_DELTA, noise=None):
        noise = rng if noise is None else noise
        d = len(measured["columns"])
        rho = zcdp_rho(epsilon, delta)
        rho1, rho_s, rho2 = split_rho(rho, d)
        one = _measure_one_way(measured, rho1, noise)
        edges, tree, steps = [], {}, [one["step"]]
        if d > 1:
            edges, selection = _select_tree(measured, one, rho_s, noise)
            tree = _measure_tree(measured, one, edges, rho2, noise)
            steps += [selection] + tree["steps"]
        order, parent = _rooted(d, edges)
        root_p, cond = _estimate(order, parent, one, tree)
        values = _sample(measured, one, order, parent, root_p, cond, n, rng)
        return values, steps


def _measure_one_way(measured, rho1: float, noise) -> dict:
    """Step 2: noisy counts of each column's bins, and the model domains read off them (post-processing)."""
    columns = measured["columns"]
    d = len(columns)
    mechanism = DiscreteGaussian(rho1 / d)  # one table per column, each of L2 sensitivity 1
    sigma, variance = mechanism.sigma, mechanism.variance
    exact = [np.rint(np.bincount(coarse, weights=counts)).astype(np.int64)
             for coarse, counts in zip(measured["coarse"], measured["one"])]
    drawn = np.split(mechanism.sample(noise, sum(len(e) for e in exact)), np.cumsum([len(e) for e in exact])[:-1])
    out = {"sigma": sigma, "noisy": [], "model": [], "to_one": [], "y": [], "v": [], "refined": [], "paired": []}
    for coarse, counts, z, domain in zip(measured["coarse"], exact, drawn, measured["domains"]):
        noisy = (counts + z).astype(float)
        halves = coarse.size > coarse.max() + 1  # only numeric columns have half-width bins (coarse pairs them)
        cells = [np.arange(noisy.size)] + ([_pairs(domain, noisy.size)] if halves else [])
        level, rare = resolved_cells(noisy, cells, RARE_SIGMAS * sigma, RESOLVED_LOSS)
        groups, merged = merged_codes(cells[level], rare), level == 1  # rare values (or pairs) share the last code
        kept = int((noisy >= RARE_SIGMAS * sigma).sum())
        # refining needs a rare group, and a 2-way table to measure the halves (one column has none)
        refine = d > 1 and halves and not merged and 0 < kept <= REFINE_SHARE * noisy.size
        model, to_one = _model_codes(coarse, groups, refine)
        out["noisy"].append(noisy)
        out["model"].append(model)
        out["to_one"].append(to_one)
        out["y"].append(np.bincount(groups, weights=noisy))
        out["v"].append(np.bincount(groups) * variance)  # variance of each group's sum
        out["refined"].append(refine)
        out["paired"].append(merged)
    refined = [c for c, r in zip(columns, out["refined"]) if r]
    paired = [c for c, m in zip(columns, out["paired"]) if m]
    out["step"] = mechanism.step(
        f"1-way marginal of each of the {d} columns", repeats=d,
        detail=f"{sum(len(e) for e in exact)} cells in all; ρ₁ = {rho1:.4g} shared equally over the {d} tables; "
               f"values below {RARE_SIGMAS:g}σ merged" + (f"; {', '.join(refined)} keep at most "
                                                      f"{REFINE_SHARE:.0%} of their bins: modelled at half-width "
                                                      "bins inside them" if refined else "")
               + (f"; {', '.join(paired)}: too few counts stand out of the noise in their own bins, modelled "
                  "on pairs of bins" if paired else "")
               + " (both post-processing of these noisy counts)")
    return out


def _select_tree(measured, one: dict, rho_s: float, noise) -> tuple[list[tuple[int, int]], Step]:
    """Step 3: d − 1 pairs in Kruskal's order, each by the exponential mechanism at ε₀ = √(8ρ_s/(d − 1)).

    Scored on the exact 2-way tables over the 1-way groups against the independent model of the
    noisy 1-way counts, in integer units of 2^−20 (module docstring: sensitivity exactly 1).
    """
    d = len(measured["columns"])
    n1 = max(_weighted([(y.sum(), v.sum()) for y, v in zip(one["y"], one["v"])]), 1.0)
    p1 = [project_simplex(y, n1) for y in one["y"]]
    p1 = [p / p.sum() if p.sum() > 0 else np.full(p.size, 1 / p.size) for p in p1]
    group_of = [_onehot(to_one[model]) for model, to_one in zip(one["model"], one["to_one"])]
    unit = 2 ** SCORE_BITS
    score = {(i, j): Fraction(exact_l1(np.rint(group_of[i].T @ t @ group_of[j]).astype(np.int64) * unit,
                                        np.rint(n1 * unit * np.outer(p1[i], p1[j])).astype(np.int64)), unit)
             for (i, j), t in measured["two"].items()}
    mechanism = ExponentialMechanism(math.sqrt(8 * rho_s / (d - 1)), 1.0)
    component, edges = list(range(d)), []
    for _ in range(d - 1):
        candidates = [e for e in score if component[e[0]] != component[e[1]]]
        e = candidates[mechanism.select([score[c] for c in candidates], noise)]
        edges.append(e)
        old, new = component[e[1]], component[e[0]]
        component = [new if c == old else c for c in component]
    columns = measured["columns"]
    chosen = ", ".join(f"{columns[i]}–{columns[j]}" for i, j in edges)
    return edges, mechanism.zcdp_step(
        f"spanning tree: {d - 1} pairs of columns", repeats=d - 1,
        detail=f"ρ_s = {rho_s:.4g} over {d - 1} Kruskal steps, each ε₀ = {mechanism.epsilon:.4g}-DP "
               f"(ρ = ε₀²/8, bounded range); score ‖M_ij(D) − M_ij(p̂)‖₁ in units of 2^−{SCORE_BITS}, "
               f"sampled exactly; chosen: {chosen}")


def _measure_tree(measured, one: dict, edges, rho2: float, noise) -> dict:
    """Step 4: each tree pair's table over the model codes, with discrete Gaussian noise at its ρ_e."""
    exact = {}
    for i, j in edges:
        gi, gj = _onehot(one["model"][i]), _onehot(one["model"][j])
        exact[(i, j)] = np.rint(gi.T @ measured["two"][(i, j)] @ gj).astype(np.int64)
    rhos = allocate_rho(rho2, [t.size for t in exact.values()])
    mechanisms = {e: DiscreteGaussian(float(r)) for e, r in zip(exact, rhos)}
    drawn = DiscreteGaussian.noisy_many(list(mechanisms.values()), list(exact.values()), noise)
    noisy = {e: t.astype(float) for e, t in zip(exact, drawn)}
    columns = measured["columns"]
    steps = [m.step(f"2-way marginal {columns[i]}–{columns[j]} ({exact[(i, j)].size} cells)",
                    detail=f"tree table; ρ₂ = {rho2:.4g} over the {len(edges)} tables, each ρ_e ∝ cells^(2/3) "
                           "(cells after step 1's merging and refining)")
             for (i, j), m in mechanisms.items()]
    return {"noisy": noisy, "var": {e: m.variance for e, m in mechanisms.items()}, "steps": steps}


def _estimate(order, parent, one: dict, tree: dict) -> tuple[np.ndarray, dict[int, np.ndarray]]:
    """Step 5: the root's distribution and each child's conditional given its parent (post-processing)."""
    noisy, var = tree.get("noisy", {}), tree.get("var", {})
    totals = [(y.sum(), v.sum()) for y, v in zip(one["y"], one["v"])]
    totals += [(t.sum(), t.size * var[e]) for e, t in noisy.items()]
    total = max(_weighted(totals), 1.0)
    marg = []
    for i, refined in enumerate(one["refined"]):
        size = one["to_one"][i].size
        est, weight = np.zeros(size), np.zeros(size)
        if not refined:  # refined columns' 1-way counts are over pairs of their model codes
            est, weight = one["y"][i] / one["v"][i], 1 / one["v"][i]
        for (a, b), t in noisy.items():
            if i in (a, b):
                other = t.shape[1] if i == a else t.shape[0]
                est = est + t.sum(axis=1 if i == a else 0) / (other * var[(a, b)])
                weight = weight + 1 / (other * var[(a, b)])
        marg.append(project_simplex(est / weight, total))
    tables = {(a, b): _ipf(project_simplex(t, total), marg[a], marg[b]) for (a, b), t in noisy.items()}

    def oriented(store, c):
        return store[(parent[c], c)] if (parent[c], c) in store else store[(c, parent[c])].T

    start = {c: oriented(tables, c) for c in order[1:]}
    y2 = {c: oriented(noisy, c) for c in order[1:]}
    v2 = {c: var[(parent[c], c)] if (parent[c], c) in var else var[(c, parent[c])] for c in order[1:]}
    return _mirror_descent(order, parent, marg[order[0]], start, one, y2, v2, total)


def _sample(measured, one: dict, order, parent, root_p, cond, n: int, rng) -> dict[str, np.ndarray]:
    """Step 6: each record's half-width bins drawn ancestrally, then a value inside each bin.

    A column's half-width bin is drawn straight from P(bin | parent's model code) = P(code | parent) ·
    P(bin | code): its model code is a function of the bin, so its children then read that code.
    """
    codes = np.empty((n, len(order)), dtype=np.int64)
    values = {}
    for c in order:
        names = measured["columns"][c], measured["domains"][c]
        given = _fine_given_model(one["model"][c], measured["coarse"][c], one["noisy"][c])
        rows, index = (root_p[None, :], np.zeros(n, np.int64)) if c == order[0] else (cond[c], codes[:, parent[c]])
        fine = sample_rows(rows @ given, index, rng)
        codes[:, c] = one["model"][c][fine]
        values[names[0]] = decode_column(fine, names[1], rng)
    return {name: values[name] for name in measured["columns"]}


def _fine_given_model(model: np.ndarray, coarse: np.ndarray, noisy: np.ndarray) -> np.ndarray:
    """P(half-width bin | model code): the rare values in proportion to their noisy counts (≥ 0), the two
    halves of a bin equally (uniform inside it); a code with no positive count spreads evenly."""
    halves = np.bincount(coarse)
    w = np.zeros((model.max() + 1, model.size))
    w[model, np.arange(model.size)] = np.clip(noisy[coarse], 0, None) / halves[coarse]
    empty = w.sum(axis=1) <= 0
    w[empty] = (model[None, :] == np.flatnonzero(empty)[:, None])
    return w / w.sum(axis=1, keepdims=True)


def _rooted(d: int, edges: list[tuple[int, int]]) -> tuple[list[int], dict[int, int]]:
    """Breadth-first order of the tree from column 0, and each column's parent."""
    order, parent = [0], {0: -1}
    adjacent = {i: [] for i in range(d)}
    for i, j in edges:
        adjacent[i].append(j)
        adjacent[j].append(i)
    for node in order:  # grows while iterating
        for nb in adjacent[node]:
            if nb not in parent:
                parent[nb] = node
                order.append(nb)
    return order, parent


def _beliefs(order, parent, children, phi, psi):
    """Exact node and edge marginals of p(x) ∝ exp(Σ φ_i(x_i) + Σ ψ_c(x_parent(c), x_c)) on the tree.

    Two passes of sum-product in probability space, each potential scaled by
    its largest entry and each message normalised (so nothing overflows); a
    step whose potentials underflow gives NaN and mirror descent rejects it.
    """
    pot = {i: np.exp(phi[i] - phi[i].max()) for i in order}
    edge = {c: np.exp(psi[c] - psi[c].max()) for c in order[1:]}
    inner, up = {}, {}
    for c in reversed(order):
        x = pot[c]
        for k in children[c]:
            x = x * up[k]
        inner[c] = x / x.sum()
        if c != order[0]:
            u = edge[c] @ inner[c]
            up[c] = u / u.sum()
    nodes, pairs = {order[0]: inner[order[0]]}, {}
    for c in order[1:]:
        # what the rest of the tree says of the parent: its marginal without c's message (where that
        # message is 0 so is every joint cell of that parent value)
        with np.errstate(over="ignore", invalid="ignore"):  # a message that underflowed: NaN, rejected (above)
            rest = nodes[parent[c]] / np.where(up[c] > 0, up[c], 1.0)
            joint = rest[:, None] * edge[c] * inner[c][None, :]
            pairs[c] = joint / joint.sum()
        nodes[c] = pairs[c].sum(axis=0)
    return nodes, pairs


def _mirror_descent(order, parent, root, tables, one: dict, y2, v2, total):
    """Root distribution and conditionals of the tree model fitted to every noisy marginal.

    Minimises ½Σ‖N·A_i b_i − y_i‖²/v_i + ½Σ‖N·b_e − y_e‖²/σ_e² over the tree's distributions (A_i sums
    a refined column's half-width bins into the bins its 1-way counts are over) by mirror descent on the
    log-potentials (McKenna et al. 2019; the step halves until the loss falls), started from the fitted
    tables (a good model already). Post-processing of the noisy marginals.
    """
    children = {i: [c for c in order[1:] if parent[c] == i] for i in order}
    to_one, y1, v1 = one["to_one"], one["y"], one["v"]
    with np.errstate(divide="ignore"):
        phi = {i: np.zeros(to_one[i].size) for i in order}
        phi[order[0]] = np.log(root / root.sum()) if root.sum() > 0 else np.zeros(root.size)
        psi = {c: np.log(_rows(t)) for c, t in tables.items()}
    phi = {i: np.maximum(v, -50.0) for i, v in phi.items()}
    psi = {c: np.maximum(v, -50.0) for c, v in psi.items()}

    def loss_grad(nodes, pairs):
        loss, g_node, g_pair = 0.0, {}, {}
        for i in order:
            r = total * np.bincount(to_one[i], weights=nodes[i], minlength=y1[i].size) - y1[i]
            loss += 0.5 * float(np.dot(r, r / v1[i]))
            g_node[i] = total * (r / v1[i])[to_one[i]]
        for c in order[1:]:
            r = total * pairs[c] - y2[c]
            loss += 0.5 * float(np.vdot(r, r)) / v2[c]
            g_pair[c] = total * r / v2[c]
        return loss, g_node, g_pair

    nodes, pairs = _beliefs(order, parent, children, phi, psi)
    loss, g_node, g_pair = loss_grad(nodes, pairs)
    alpha, grow = 1.0 / total ** 2, 2.0
    for _ in range(MD_ITERATIONS):
        alpha *= grow
        grow = 2.0
        for _ in range(25):
            phi2 = {i: phi[i] - alpha * g_node[i] for i in order}
            psi2 = {c: psi[c] - alpha * g_pair[c] for c in order[1:]}
            with np.errstate(invalid="ignore", divide="ignore", under="ignore"):
                nodes2, pairs2 = _beliefs(order, parent, children, phi2, psi2)
            loss2, gn2, gp2 = loss_grad(nodes2, pairs2)
            if loss2 < loss:
                break
            alpha *= 0.5
            grow = 1.0  # the step that fell short is not tried again next time
        else:
            break
        phi, psi, nodes, pairs, loss, g_node, g_pair = phi2, psi2, nodes2, pairs2, loss2, gn2, gp2
    cond = {c: _rows(pairs[c]) for c in order[1:]}
    return nodes[order[0]], cond


def _rows(table: np.ndarray) -> np.ndarray:
    """Rows of a non-negative table normalised to sum to 1 (uniform where a row is empty)."""
    return conditional(table, np.full(table.shape[1], 1.0 / table.shape[1]))


def _weighted(pairs: list[tuple[float, float]]) -> float:
    """Inverse-variance weighted mean of (estimate, variance) pairs."""
    w = np.array([1 / v for _, v in pairs])
    return float(np.dot(w, [e for e, _ in pairs]) / w.sum())
