"""AIM: marginals of a workload chosen adaptively, a graphical model fitted to them.

McKenna, Mullins, Sheldon & Miklau (2022, "AIM: an adaptive and iterative mechanism for
differentially private synthetic data"), in zero-concentrated DP, with every column discretised
(numeric columns in ``bins`` bins over their declared public bounds):

* Numeric resolution: a numeric column's ``bins`` fine bins also have coarser views, the bins merged
  ``VIEW_MERGES`` at a time (public: the domain alone decides). The model keeps the fine grid; a round
  may measure a set of columns on any of its views, so where noise makes the fine table useless the
  coarse one is measured, and the model splits a coarse cell by what the other measurements say.
* Workload W: every pair of columns and every triple of at most ``AIM.triple_max_cells``
  cells on the coarsest views (public: the domains alone decide). The candidates are W's sets and
  their subsets, each on each of its views; a candidate r weighs w_r = Σ_{s ∈ W} |r ∩ s| (how much of
  the workload it informs), whatever its view.
* ρ is the largest whose (ε, δ) bound (Canonne, Kamath, Steinke 2020) is ≤ ε. With T = 4·d
  (``ROUNDS_PER_COLUMN``; the paper has 16·d) and a share α = 0.9 (``MEASURE_SHARE``) of each round on measuring,
  σ = √(T / (2αρ)) and ε₀ = √(8(1 − α)ρ / T) to start.
* Round 0: every 1-way marginal on the fine grid, discrete Gaussian noise σ (a record adds 1 to one
  cell of each: ρ = d/(2σ²)). Post-processing of these counts: a numeric column is modelled on its
  bins merged 3 at a time when its fine bins counted at least 3σ hold under 80 % of the mass its
  merged cells counted at least 3σ hold (a small table: few fine bins stand out of the noise,
  :func:`_resolution`); the values (or merged cells) counted below 3σ are merged into one, in every
  view.
  A single column has nothing more to choose: its histogram gets all of ρ.
* Each round t = 1, 2, …: the model p̂ is fitted to every noisy marginal so far; one candidate r
  is chosen by the exponential mechanism at ε₀ (ρ = ε₀²/8) on the score
  w_r (‖M_r(D) − N̂·M_r(p̂)‖₁ − √(2/π)·σ·cells_r), both tables on r's view: the error of the model
  on r, less the error its measurement would itself carry (sensitivity max_r w_r: one record moves
  ‖M_r(D) − x‖₁ by at most 1 for any x fixed by the earlier rounds). Only candidates that keep the model's junction tree
  within (ρ spent / ρ)·``max_cells`` cells compete (public facts and earlier outputs). r's marginal
  is measured with discrete Gaussian noise σ (ρ = 1/(2σ²)) and p̂ is fitted again.
* Annealing: when the fitted model moved r's marginal by at most √(2/π)·σ·cells_r (what the
  measurement's own noise would explain), σ halves and ε₀ doubles: each later round costs 4×.
* The last round takes what is left when less than two rounds' ρ remains, split α : 1 − α, so the
  rounds spend exactly ρ. Their number depends on the data only through earlier outputs, so the
  rounds compose adaptively to ρ-zCDP (the paper's Theorem 1).
* Estimation (post-processing): a model p(x) ∝ exp(Σ_r θ_r(x_r)) over the measured sets, fitted by
  mirror descent on Σ_r ‖N̂·μ_r − y_r‖²/σ_r² with exact inference on its junction tree
  (:func:`.graphical.fit_potentials`), N̂ the inverse-variance weighted total of the noisy tables.
* Records are drawn i.i.d. from the fitted model (:func:`.graphical.sample_tree`), numeric values
  uniformly inside their bin.

Every noise draw and selection is exact (integers only: :mod:`..privacy.exact`; scores in units of
2^−20, :func:`_choose`) and comes from the synthesis's secret noise stream; the records are drawn from the
records' stream. The ledger lists round 0 and then one step per round, each in ρ; the run's ρ is
converted once into (ε, δ) (:func:`..privacy.accounting.compose`).

The measure step holds every exact candidate table; a new ε or seed re-runs only the rounds.
Neighbouring datasets: add or remove one record.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from .. import constraints
from ..privacy import TOTAL, Budget, DiscreteGaussian, ExponentialMechanism, Step
from ..privacy.accounting import zcdp_rho
from ..privacy.audit import Audit, Broken, CellCounts, three_columns
from . import options as opt
from .base import Synthesizer, register
from .encoding import column_domain, decode_column, encode, view_codes
from .forecasting import Forecast, mean_pair_cells, noise_against_cells, spendable
from .graphical import (JunctionTree, aggregate, conditionals, count_table, exact_l1, fit_potentials, junction_tree,
                        merged_codes, model_cells, model_marginal, resolved_cells, sample_tree)

# T = 4·d rounds set the starting σ and ε₀. The paper's 16·d spends its first rounds at 2× the noise; on the
# 80 % training rows of diamonds (5 runs each, bins 20) median TV2 was 0.0281 / 0.0155 / 0.0124 at ε = 0.3 / 1 / 3
# with 4·d against 0.0291 / 0.0171 / 0.0130 with 16·d, and on penguins 0.62 / 0.39 / 0.30 against 0.64 / 0.42 / 0.31.
ROUNDS_PER_COLUMN = 4
MEASURE_SHARE = 0.9      # α: share of each round's ρ on the measurement, the rest on the selection
ROUND_ITERATIONS = 30    # mirror-descent steps after each round (warm-started from the last fit)
FINAL_ITERATIONS = 300   # mirror-descent steps of the last fit, the one sampled from
#: A value (or merged cell) whose round-0 noisy count is below this many σ is rare (merged: :func:`rare_groups`).
RARE_SIGMAS = 3.0
BIAS = math.sqrt(2 / math.pi)  # E|Z| for Z ~ N(0, 1): the L1 error per cell a measurement carries, over σ
#: The views of a numeric column a round may measure: its fine bins (``bins``) merged 1 or 3 at a time (30 bins
#: by default: 30 or 10 cells).
VIEW_MERGES = (1, 3)
#: Round 0 keeps a coarser view as a column's model values only when the finer one resolves (counts at
#: least 3σ) less than 1 − this share of the mass the coarser one resolves.
RESOLVED_LOSS = 0.2
#: AIM's forecast is fair while σ₀ is under this many times the rows in a cell (forecast_aim).
FORECAST_FAIR = 2.0


SCORE_BITS = 20  # the model's counts in a score are rounded to multiples of 2^−20 (as MST's): exact scores


def select(scores: list, epsilon: float, sensitivity: float, noise: np.random.Generator) -> int:
    """The candidate a round measures: the exponential mechanism, P ∝ exp(ε·score/(2Δ)), sampled exactly
    from the noise stream (ρ = ε²/8, bounded range)."""
    return ExponentialMechanism(epsilon, sensitivity).select(scores, noise)


def noisy(table: np.ndarray, sigma: float, noise: np.random.Generator) -> tuple[np.ndarray, float]:
    """An integer ``table`` plus discrete Gaussian noise at ρ = 1/(2σ²) (L2 sensitivity 1), and the noise's
    variance (its σ is ``sigma`` rounded up to a dyadic fraction: :class:`..privacy.DiscreteGaussian`)."""
    mechanism = DiscreteGaussian(1 / (2 * sigma ** 2))
    return mechanism.noisy(table, noise).astype(float), mechanism.variance


def workload(sizes: list[int], triple_cells: int) -> list[tuple[int, ...]]:
    """Every pair of columns, and every triple of at most ``triple_cells`` cells."""
    d = len(sizes)
    pairs = list(itertools.combinations(range(d), 2))
    triples = [t for t in itertools.combinations(range(d), 3) if math.prod(sizes[v] for v in t) <= triple_cells]
    return pairs + triples


def candidate_weights(work: list[tuple[int, ...]], d: int) -> dict[tuple[int, ...], float]:
    """w_r = Σ_{s ∈ W} |r ∩ s| for every r in W's downward closure (the 1-way sets included).

    >>> candidate_weights([(0, 1)], 2)
    {(0,): 1, (1,): 1, (0, 1): 2}
    """
    closure = sorted({sub for s in work for k in range(1, len(s) + 1) for sub in itertools.combinations(s, k)}
                     | {(v,) for v in range(d)}, key=lambda r: (len(r), r))
    return {r: sum(len(set(r) & set(s)) for s in work) for r in closure}


def total_cells(sizes: list[int], coarse: list[int], triple_cells: int) -> int:
    """Cells of every exact table the measure step keeps (the candidates, on the fine grid ``sizes``; the
    workload's triples are capped on their coarsest view, ``coarse``)."""
    return sum(math.prod(sizes[v] for v in r) for r in candidate_weights(workload(coarse, triple_cells), len(sizes)))


def coarsest(domain) -> int:
    """Cells of a column's coarsest view (:data:`VIEW_MERGES`)."""
    return int(view_codes(domain, VIEW_MERGES[-1]).max()) + 1


def forecast_aim(schema, epsilon: float, n: int | None, *, bins: int, delta: float = constraints.DEFAULT_DELTA) -> Forecast:
    """The noise of AIM's first measurements, σ₀ = √(T/(2αρ)) per cell, against the rows in a cell of an
    average 2-way table (n / cells) on the coarsest view of each numeric column (bins merged
    ``VIEW_MERGES[-1]`` at a time), the table a round measures when the noise makes finer ones useless:
    later rounds measure with less noise once σ halves, so this is the most a measured marginal gets.

    Level by σ₀ / (n / cells), as MST's: good < 0.2, fair < 1, poor beyond. On the benchmark's tables
    (bench/bench_dp_utility.py, 30 bins) diamonds is good at ε = 0.3, 1 and 3 (0.14, 0.045, 0.016), where
    AIM's TV2 was at most a fifth of independent marginals'; randhie is fair at ε = 0.3 (0.24) and good from
    ε = 1. Fair reaches to 2 for AIM (:data:`FORECAST_FAIR`): σ₀ overstates its later measurements, and since
    round 0 models a small table's numeric columns on merged bins, penguins at ε = 3 (1.3) kept TV2 0.23
    against independent marginals' 0.29, while at ε = 1 (3.7) and 0.3 (11) it stays poor (0.36 against 0.31,
    0.52 against 0.45).
    """
    sizes = [coarsest(column_domain(schema[c], bins)) for c in schema.used]
    d = len(sizes)
    rho = zcdp_rho(spendable(epsilon, n), delta)
    sigma = math.sqrt(ROUNDS_PER_COLUMN * d / (2 * MEASURE_SHARE * rho))
    cells = mean_pair_cells(sizes)
    head = (f"At ε = {epsilon:g} (δ = {delta:g}: ρ = {rho:.3g} zCDP), AIM measures its first marginals with "
            f"discrete Gaussian noise of standard deviation {sigma:,.1f} per cell, and later ones with less")
    return noise_against_cells(head, sigma, n, cells, fair=FORECAST_FAIR, per="per cell of an average pair of columns",
                               in_cell="a cell of an average pair of columns",
                               detail=f"{cells:,.0f} cells with numeric columns at their coarsest, {bins} bins "
                                      f"merged {VIEW_MERGES[-1]} at a time")


@register
class AIM(Synthesizer):
    name = "aim"
    label = "AIM (adaptive marginals, graphical model)"
    is_dp = True
    spends = Budget(TOTAL, needs_delta=True, zcdp=True,
                    per_target="ρ: the 1-way marginals, then rounds of one selection and one measurement "
                               "each, until ρ is spent")
    description = ("Noisy 1-way marginals, then rounds that each choose privately the 2- or 3-way marginal "
                   "the model gets most wrong, measure it with discrete Gaussian noise and refit a graphical model "
                   "to every noisy marginal; records drawn i.i.d. from the model (McKenna et al. 2022; "
                   "zCDP, reported as (ε, δ)-DP). Keeps marginals, pairs and triples.")
    # Bins per numeric column, the fine grid (rounds may measure it merged 3 at a time, VIEW_MERGES): 30, by
    # bench/bench_dp_utility.py at ε = 1 (docs/aim.md, "Numeric resolution"): against 20 bins without views the
    # pMSE ratio (5,000 rows each) on randhie fell from 6.3 to 4.4 and diamonds' TV2 stayed under 0.0176; at 40
    # diamonds' TV2 rose to 0.019. The model-size cap bounds the memory and the time of each inference pass.
    options = (opt.bins(30),
               opt.Option("max_cells", "int", 200_000,
                          "Most cells the model's junction tree may hold (its memory and time).", low=1000))
    rank = 30
    #: Asked before MST (priority 0): where its forecast is not poor, the benchmark measured it closest to the
    #: data (module docstring of bench/bench_dp_utility.py; figures in bench/README.md).
    suggest_priority = -1
    #: Most columns: each round scores every pair and triple of them.
    max_columns = 40
    #: Most cells of a triple in the workload (larger triples are left out of it).
    triple_max_cells = 10_000
    audits = (Audit(three_columns(3, "ab"), CellCounts(((0,), (0, 1))), epsilon=1.0, delta=1e-6, n=2000, runs=600,
                    quick_runs=200, broken=Broken(zcdp=True),
                    note="Two columns. Round 0 measures each column's histogram, where the planted record adds 1 "
                         "to the value a2 that D never holds, then each round measures a, b or their pair again; "
                         "the statistics are the synthetic rows with a = a2 and in (a2, b2). The zCDP-to-(ε, δ) "
                         "conversion is loose, so the honest bound lands far below the claim; with a tenth of "
                         "the noise the planted value is seen."),)

    def forecast(self, schema, epsilon, n=None, *, bins, **params):
        return forecast_aim(schema, epsilon, n, bins=bins)

    def suggestion(self, schema, epsilon, n, forecast):
        """Where its forecast is good or fair: on diamonds and randhie AIM's TV2 was the lowest of our methods
        (level with MST on diamonds at ε = 0.3) and at most half of independent marginals' at ε = 0.3, 1 and 3
        (bench/README.md); on penguins it is fair at ε = 3 (TV2 0.23 against 0.29) and poor at ε = 0.3 and 1,
        where independent marginals were closer."""
        if forecast is None or forecast.level not in ("good", "fair"):
            return None
        return (": its noise is small against the rows per cell here, and on the benchmark it kept the 2- and "
                "3-way associations best of every method (each round measures the pair or triple of columns "
                "its model gets most wrong).")

    def refuse(self, schema, columns, n, *, bins, **params):
        if len(columns) > self.max_columns:
            return (f"AIM scores every pair and triple of columns each round, too many for {len(columns)} "
                    f"columns (at most {self.max_columns}); synthesize fewer columns or use MST.")
        domains = [column_domain(schema[c], bins) for c in columns]
        cells = total_cells([d.size for d in domains], [coarsest(d) for d in domains], self.triple_max_cells)
        if cells > constraints.MARGINAL_MAX_CELLS:
            return (f"AIM keeps every 1-, 2- and 3-way table of these {len(columns)} columns it may measure, "
                    f"{cells:,} cells in all, over the cap of {constraints.MARGINAL_MAX_CELLS:,}; synthesize "
                    "fewer columns, merge categories or use fewer bins.")
        return None

    def measure(self, df, schema, columns, *, bins, max_cells):
        codes, domains = encode(df, schema, columns, bins)
        sizes = [d.size for d in domains]
        weights = candidate_weights(workload([coarsest(d) for d in domains], self.triple_max_cells), len(columns))
        exact = {r: count_table(codes[:, list(r)], [sizes[v] for v in r]) for r in weights}
        return {"columns": list(columns), "domains": domains, "sizes": sizes, "weights": weights, "exact": exact}

    def generate(self, measured, *, epsilon, n, rng, bins, max_cells, delta=constraints.DEFAULT_DELTA, noise=None):
        noise = rng if noise is None else noise  # (a test driving generate by hand gives one generator)
        rho = zcdp_rho(epsilon, delta)
        d = len(measured["columns"])
        # one column has no pair to choose: its histogram takes all of ρ
        sigma = math.sqrt(ROUNDS_PER_COLUMN * d / (2 * MEASURE_SHARE * rho)) if d > 1 else math.sqrt(1 / (2 * rho))
        first = _first_round(measured, sigma, noise)
        rounds, model = _rounds(measured, first, rho, max_cells, noise)
        codes = sample_tree(model["tree"], model["beliefs"], n, rng)
        values = {c: decode_column(_bins_of(codes[:, j], first["views"][j][0], first["noisy"][j], rng), dom, rng)
                  for j, (c, dom) in enumerate(zip(measured["columns"], measured["domains"]))}
        return values, _ledger_steps(measured, first, rounds, rho)


def _first_round(measured, sigma: float, noise) -> dict:
    """Round 0: every column's noisy histogram on its fine grid (σ each); the values counted below 3σ merged
    into rare cells (post-processing, :func:`rare_groups`), the model's values; every candidate's exact
    table on each of its views (what later rounds measure)."""
    drawn = [noisy(measured["exact"][(v,)], sigma, noise) for v in range(len(measured["columns"]))]
    noisy1, var = [y for y, _ in drawn], drawn[0][1]
    floors, rare = zip(*(_resolution(dom, y, sigma) for dom, y in zip(measured["domains"], noisy1)))
    views = [[_view(dom, max(merge, floor), r) for merge in VIEW_MERGES]
             for dom, floor, r in zip(measured["domains"], floors, rare)]
    candidates = {}
    for r in measured["weights"]:
        for level in range(len(VIEW_MERGES)):
            if level and all(np.array_equal(views[v][level], views[v][level - 1]) for v in r):
                continue  # the same table as the finer view
            maps = [views[v][level] for v in r]
            model_maps = [_coarser(views[v][0], m) for v, m in zip(r, maps)]
            candidates[(r, level)] = (None if all(m is None for m in model_maps) else model_maps,
                                      aggregate(measured["exact"][r], maps))
    seen = {((v,), 0): [(np.bincount(views[v][0], weights=y), np.bincount(views[v][0]) * var)]
            for v, y in enumerate(noisy1)}
    return {"sigma": sigma, "views": views, "seen": seen, "noisy": noisy1, "candidates": candidates,
            "rho": 1 / (2 * sigma ** 2), "repeats": len(noisy1), "rare": rare}


def _resolution(domain, noisy1: np.ndarray, sigma: float) -> tuple[int, np.ndarray]:
    """The model's resolution of a column, read off its round-0 noisy counts (post-processing): the finest
    view (bins merged ``merge`` at a time, :data:`VIEW_MERGES`) whose cells counted at least 3σ hold at
    least ``1 − RESOLVED_LOSS`` of the most any view's do; and which fine bins are rare (in a cell under
    that count, merged into one cell when some but not all cells pass). A merged cell's noise is σ√merge,
    so an empty one passes 3σ more often (4 % for 3 bins, against 0.1 %): an extra model value, no more.

    On a large table every bin passes and the fine grid is kept. On a small one (344 rows over 30 bins,
    σ ≈ 8 at ε = 3) few bins reach 3σ and the column would be one rare cell, cut off from every other
    column; its coarse view's cells do reach their count, so the model keeps them."""
    i, rare = resolved_cells(noisy1, [view_codes(domain, merge) for merge in VIEW_MERGES], RARE_SIGMAS * sigma,
                             RESOLVED_LOSS)
    return VIEW_MERGES[i], rare


def _view(domain, merge: int, rare: np.ndarray) -> np.ndarray:
    """The view code of each fine bin (or category) of a column: its bins merged ``merge`` at a time
    (:func:`.encoding.view_codes`), the rare ones merged by :func:`rare_groups`; codes 0 … k − 1 in order.
    Each view is a coarsening of the finer ones: its cells are unions of theirs."""
    return merged_codes(view_codes(domain, merge), rare_groups(domain, rare))


def rare_groups(domain, rare: np.ndarray) -> np.ndarray:
    """Each code's rare group (0: not rare): a numeric column's rare bins by runs of adjacent ones (a run
    of the lower tail, one of the upper tail, a dip between two modes), so a merged cell keeps the
    column's order; its other rare codes (special values, missing) and a categorical column's rare
    categories one group. On penguins, one cell for both tails of body mass ties the lightest birds to
    the heaviest, a different species.

    >>> from dpsynth_core.schema import ColumnSchema
    >>> col = ColumnSchema(name="x", kind="numeric", bounds=(0.0, 6.0), nullable=True)
    >>> rare_groups(column_domain(col, 6), np.array([1, 1, 0, 1, 0, 1, 1], bool)).tolist()  # 6 bins, missing
    [1, 1, 0, 2, 0, 3, 4]
    """
    groups = np.zeros(rare.size, dtype=np.int64)
    bins = domain.n_bins if domain.column.kind == "numeric" else 0
    starts = rare[:bins] & ~np.concatenate([[False], rare[:bins][:-1]])
    groups[:bins] = np.where(rare[:bins], np.cumsum(starts), 0)
    groups[bins:][rare[bins:]] = groups.max() + 1
    return groups


def _coarser(model_of: np.ndarray, view_of: np.ndarray) -> np.ndarray | None:
    """The view cell of each model value (the view is as coarse as the model or coarser); None when the
    view is the model's own values."""
    out = np.zeros(model_of.max() + 1, dtype=np.int64)
    out[model_of] = view_of
    return None if np.array_equal(out, np.arange(out.size)) else out


def _bins_of(codes: np.ndarray, fine: np.ndarray, noisy1: np.ndarray, rng) -> np.ndarray:
    """Each model code's bin (or category): its own, or for a rare cell one of the values it merges,
    drawn in proportion to their round-0 noisy counts (≥ 0; evenly when none is positive)."""
    out = np.zeros(codes.size, dtype=np.int64)
    for code in range(int(fine.max()) + 1):
        members = np.flatnonzero(fine == code)
        rows = codes == code
        w = np.clip(noisy1[members], 0, None)
        w = w / w.sum() if w.sum() > 0 else np.full(members.size, 1 / members.size)
        out[rows] = members[rng.choice(members.size, size=int(rows.sum()), p=w)] if members.size > 1 else members[0]
    return out


def _rounds(measured, first: dict, rho: float, max_cells: int, noise) -> tuple[list[dict], dict]:
    """The adaptive rounds after round 0, until ρ is spent; what each did and the last fitted model."""
    weights, candidates, seen = measured["weights"], first["candidates"], dict(first["seen"])
    sigma, rho_used = first["sigma"], first["rho"] * first["repeats"]
    eps0 = math.sqrt(8 * (1 - MEASURE_SHARE) * rho / (ROUNDS_PER_COLUMN * len(first["views"])))
    sizes = [int(view[0].max()) + 1 for view in first["views"]]
    model = _fit(seen, candidates, sizes, None, ROUND_ITERATIONS)
    rounds = []
    while rho - rho_used > 1e-12 * rho:
        last = rho - rho_used < 2 * (1 / (2 * sigma ** 2) + eps0 ** 2 / 8)
        if last:  # what is left, split α : 1 − α
            left = rho - rho_used
            sigma, eps0 = math.sqrt(1 / (2 * MEASURE_SHARE * left)), math.sqrt(8 * (1 - MEASURE_SHARE) * left)
        spent = 1 / (2 * sigma ** 2) + eps0 ** 2 / 8
        rho_used = rho if last else rho_used + spent
        key, before, pool = _choose(model, candidates, weights, sigma, eps0, rho_used / rho * max_cells, noise)
        seen[key] = seen.get(key, []) + [noisy(candidates[key][1], sigma, noise)]
        model = _fit(seen, candidates, sizes, model, FINAL_ITERATIONS if last else ROUND_ITERATIONS)
        moved = np.abs(model["total"] * _marginal(model, key, candidates) - before).sum()
        annealed = not last and moved <= BIAS * sigma * candidates[key][1].size
        rounds.append({"set": key[0], "level": key[1], "cells": candidates[key][1].size, "sigma": sigma,
                       "eps0": eps0, "rho": spent, "candidates": pool, "annealed": annealed})
        if annealed:  # the measurement told the model little: measure more precisely from now on
            sigma, eps0 = sigma / 2, eps0 * 2
    return rounds, model


def _choose(model: dict, candidates: dict, weights: dict, sigma: float, eps0: float, limit: float, noise):
    """One round's choice by the exponential mechanism among the candidates (a set of columns on one of its
    views) that keep the model within ``limit`` cells; returns the candidate, the model's counts on it
    before measuring, and the pool's size.

    Scores are exact: the model's counts (a function of earlier outputs) are rounded to multiples of
    2^−20 and the L1 distance to the integer table computed in integers, so one record moves it by at
    most 1 and a score by at most w_r, as the sensitivity max_r w_r assumes (every view of r weighs w_r).
    """
    pool = [key for key in candidates if _fits(model, key[0], limit)]
    fitted = [model["total"] * _marginal(model, key, candidates) for key in pool]
    unit = 2 ** SCORE_BITS
    scores = []
    for key, f in zip(pool, fitted):
        table = candidates[key][1]
        scores.append(weights[key[0]] * (Fraction(exact_l1(table * unit, np.rint(f * unit).astype(np.int64)), unit)
                                         - Fraction(BIAS * sigma * table.size)))
    k = select(scores, eps0, max(weights.values()), noise)
    return pool[k], fitted[k], len(pool)


def _fits(model: dict, r: tuple[int, ...], limit: float) -> bool:
    """Whether measuring ``r`` (on any view: the model keeps the fine grid) keeps the model's junction tree
    within ``limit`` cells."""
    if r not in model["fits"]:
        tree: JunctionTree = model["tree"]
        model["fits"][r] = tree.home(r) >= 0 or model_cells(list(model["sets"]) + [r], tree.sizes) <= limit
    return model["fits"][r]


def _marginal(model: dict, key, candidates: dict) -> np.ndarray:
    """The fitted model's distribution over a candidate's columns, summed to its view (each set's marginal
    is computed once per fit)."""
    r = key[0]
    if model.get("conds") is None:
        model["conds"], model["marginals"] = conditionals(model["tree"], model["beliefs"]), {}
    if r not in model["marginals"]:
        model["marginals"][r] = model_marginal(model["tree"], model["beliefs"], model["conds"], r)
    maps = candidates[key][0]
    return model["marginals"][r] if maps is None else aggregate(model["marginals"][r], maps)


def _fit(seen: dict, candidates: dict, sizes: list[int], previous: dict | None, iterations: int) -> dict:
    """The model fitted to every noisy marginal so far, warm-started from ``previous`` (post-processing).

    The model is over every column's fine grid (its rare values merged); a table measured on a coarser
    view is a sum of the model's cells. Repeated measurements of one candidate combine into their
    inverse-variance weighted mean (cell by cell); the total N̂ weighs each table's sum by the inverse of
    its variance (the sum of its cells').
    """
    targets = {}
    for key, got in seen.items():
        w = [1 / np.asarray(v, dtype=float) for _, v in got]
        targets[key] = (sum(wi * y for wi, (y, _) in zip(w, got)) / sum(w), 1 / sum(w))
    scopes = {key: (key[0], candidates[key][0]) for key in targets}
    sums = np.array([y.sum() for y, _ in targets.values()])
    var = np.array([np.sum(np.broadcast_to(v, y.shape)) for y, v in targets.values()])
    total = max(float(np.sum(sums / var) / np.sum(1 / var)), 1.0)
    sets = sorted({r for r, _ in targets}, key=lambda r: (len(r), r))
    tree = junction_tree(sets, sizes)
    theta = previous["theta"] if previous is not None else {}
    step = previous["step"] if previous is not None else None
    theta, beliefs, step = fit_potentials(tree, targets, total, theta, iterations, step, views=scopes)
    return {"tree": tree, "sets": sets, "theta": theta, "beliefs": beliefs, "step": step, "total": total,
            "conds": None, "fits": {}}


def _ledger_steps(measured, first: dict, rounds: list[dict], rho: float) -> list[Step]:
    """Round 0 as d discrete Gaussian tables, then one zCDP step per round (its selection and its
    measurement): the run's ρ is their sum, converted once into (ε, δ) by the ledger."""
    columns = measured["columns"]
    merged = [f"{c} {rare.size} → {int(view[0].max()) + 1}"
              for c, rare, view in zip(columns, first["rare"], first["views"]) if view[0].max() + 1 < rare.size]
    one = DiscreteGaussian(first["rho"])
    steps = [one.step(f"round 0: 1-way marginals of {len(columns)} columns", repeats=first["repeats"],
                      detail=f"ρ = {rho:.4g} in all; T = {ROUNDS_PER_COLUMN}·d, α = {MEASURE_SHARE:g}: "
                             f"σ = √(T/(2αρ)) = {first['sigma']:.4g} per cell; a numeric column modelled on "
                             f"its bins merged {VIEW_MERGES[-1]} at a time where its own resolve less, and the "
                             f"values counted below {RARE_SIGMAS:g}σ merged into one (post-processing)"
                             + (f": {', '.join(merged)} values" if merged else ": none"))]
    for k, rd in enumerate(rounds, 1):
        names = ", ".join(columns[v] for v in rd["set"])
        merge = VIEW_MERGES[rd["level"]]
        view = f", numeric bins merged {merge} at a time" if merge > 1 else ""
        steps.append(Step("exponential mechanism (exact) + discrete Gaussian", f"round {k}: marginal of {names} "
                          f"({rd['cells']:,} cells{view})", None, rho=rd["rho"], sigma=rd["sigma"],
                          detail=f"chosen among {rd['candidates']} candidates at ε₀ = {rd['eps0']:.4g} "
                                 f"(ρ = ε₀²/8; score sensitivity {max(measured['weights'].values())}), measured "
                                 f"with σ = {rd['sigma']:.4g} (ρ = 1/(2σ²), L2 sensitivity 1)"
                                 + ("; the model barely moved: σ halved and ε₀ doubled after this round"
                                    if rd["annealed"] else "")))
    return steps
