"""Pieces shared by the marginal-based synthesizers (MST, PrivBayes).

Count tables over discretised columns, the post-processing that turns a
noisy table into a non-negative one, exact L1 distances for selection scores, and
ancestral sampling from a directed model (a tree or a Bayesian network):
every record is drawn i.i.d. from the fitted model, column by column, each
from its conditional given its parents' drawn values.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .. import constraints
from ..schema import Schema
from .encoding import OUTSIDE, column_domain


def count_table(codes: np.ndarray, sizes: list[int]) -> np.ndarray:
    """Counts of the rows of ``codes`` (n × k integer codes) over the grid ``sizes``.

    Rows with a code outside the domain (``OUTSIDE``) are not counted, so
    adding or removing one record changes one cell by 1 (L1 and L2
    sensitivity 1).
    """
    keep = np.all(codes != OUTSIDE, axis=1)
    flat = np.ravel_multi_index(tuple(codes[keep].T), sizes) if codes.shape[1] else np.zeros(keep.sum(), np.int64)
    return np.bincount(flat, minlength=int(np.prod(sizes))).reshape(sizes)


def project_simplex(y: np.ndarray, total: float) -> np.ndarray:
    """The point nearest ``y`` (in L2) among non-negative arrays summing to ``total``.

    x = max(y − τ, 0) with τ chosen so the sum is ``total`` (Duchi et al.
    2008). Unlike clipping negatives to 0, it does not add mass to the many
    empty cells that noise pushed above 0. Post-processing: free.
    """
    flat = np.asarray(y, dtype=float).ravel()
    if total <= 0:
        return np.zeros_like(np.asarray(y, dtype=float))
    u = np.sort(flat)[::-1]
    css = np.cumsum(u) - total
    ks = np.arange(1, flat.size + 1)
    k = ks[u - css / ks > 0][-1]
    tau = css[k - 1] / k
    return np.maximum(np.asarray(y, dtype=float) - tau, 0.0)


def resolved_cells(noisy: np.ndarray, cells: list[np.ndarray], threshold: float, loss: float) -> tuple[int, np.ndarray]:
    """The resolution a noisy histogram supports, and its rare values (post-processing of the counts).

    ``cells`` are coarsenings of the histogram, finest first: each value's cell. Each is judged by the
    mass of its cells whose summed noisy count reaches ``threshold``; the finest that holds at least
    1 − ``loss`` of the most any holds is chosen. Returns its index and which values are rare: in a cell
    under the threshold, when some but not all of its cells reach it (none or all: nothing is rare).
    A small table's fine values may all stay under the threshold while their merged cells pass.

    >>> i, rare = resolved_cells(np.array([9.0, 9.0, 9.0, 9.0, 1.0, 0.0]),
    ...                          [np.arange(6), np.array([0, 0, 1, 1, 2, 2])], 10.0, 0.2)
    >>> i, rare.tolist()  # alone no value reaches 10; merged in pairs two cells do, the last does not
    (1, [False, False, False, False, True, True])
    """
    options, best = [], 0.0
    for cell in cells:
        counts = np.bincount(cell, weights=noisy)
        keep = counts >= threshold
        rare = ~keep[cell] if keep.any() and not keep.all() else np.zeros(cell.size, bool)
        options.append((float(counts[keep].sum()), rare))
        best = max(best, options[-1][0])
    return next((i, rare) for i, (mass, rare) in enumerate(options) if mass >= (1 - loss) * best)


def merged_codes(cells: np.ndarray, rare: np.ndarray) -> np.ndarray:
    """Each value's model code when values are modelled by ``cells`` (each value's cell) and the ``rare``
    ones are merged: ``rare`` is a mask (the rare values share one last code) or each value's rare group
    (0: not rare; each group one code, after the other cells, in group order). The other cells keep their
    order; codes 0 … k − 1.

    >>> merged_codes(np.array([0, 0, 1, 1, 2, 2]), np.array([False, False, True, True, False, False])).tolist()
    [0, 0, 2, 2, 1, 1]
    >>> merged_codes(np.array([0, 1, 2, 3]), np.array([2, 0, 0, 1])).tolist()  # two groups
    [3, 0, 1, 2]
    """
    codes = np.where(rare > 0, cells.max() + rare.astype(np.int64), cells)
    return np.unique(codes, return_inverse=True)[1].astype(np.int64)


def exact_l1(a: np.ndarray, b: np.ndarray) -> int:
    """Σ |a − b| of two int64 arrays as an exact integer (in Python integers when int64 could overflow).

    The selection scores of MST and PrivBayes are computed this way, so that the sensitivity their
    exact sampling assumes holds for the numbers actually compared (no floating-point rounding).
    """
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    if not a.size:
        return 0
    if int(np.abs(a).max()) + int(np.abs(b).max()) < 2 ** 62 // a.size:
        return int(np.abs(a - b).sum())
    return sum(abs(int(x) - int(y)) for x, y in zip(a.ravel().tolist(), b.ravel().tolist()))


def sample_rows(cond: np.ndarray, parent_index: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One draw per record from the row ``cond[parent_index[r]]`` of a conditional table.

    ``cond`` has one probability vector per parent configuration (rows sum
    to 1). Each record gets its own uniform number, so records are
    independent given their parents: no rounding of counts, which would
    couple the columns drawn from the same parent.
    """
    cdf = np.cumsum(cond, axis=1)
    cdf /= cdf[:, -1:]
    k = cond.shape[1]
    # row r's cdf shifted into [r, r + 1]: one sorted array, so one search finds every record's value
    # (the first whose cdf passes its uniform number) without a records × categories array
    flat = (cdf + np.arange(len(cdf))[:, None]).ravel()
    found = np.searchsorted(flat, parent_index + rng.random(len(parent_index)), side="right")
    return np.minimum(found - parent_index * k, k - 1)


def conditional(joint: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """P(child | parents) from a non-negative table whose last axis is the child.

    Parent configurations with no mass get ``fallback`` (a distribution of
    the child), flattened to one row per configuration.
    """
    k = joint.shape[-1]
    rows = joint.reshape(-1, k).astype(float)
    mass = rows.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(mass > 0, rows / np.where(mass > 0, mass, 1), fallback[None, :])
    return out


def table_cells_refusal(schema: Schema, columns: list[str], bins, way: int, method: str) -> str | None:
    """One sentence if the ``way``-way tables of every set of columns would hold too many cells, else None.

    ``measure`` keeps them all (generate chooses among them), so their
    total size bounds its memory and time.
    """
    sizes = [column_domain(schema[c], bins).size for c in columns]
    cells = sum(math.prod(t) for t in itertools.combinations(sizes, way))
    if cells <= constraints.MARGINAL_MAX_CELLS:
        return None
    return (f"{method} keeps every {way}-way table of these {len(columns)} columns, {cells:,} cells in all, over "
            f"the cap of {constraints.MARGINAL_MAX_CELLS:,}; synthesize fewer columns, merge categories or "
            "use fewer bins.")


# -- junction trees: exact inference on a model of any cliques (AIM) ----------------------------------
#
# A model p(x) ∝ exp(Σ_r θ_r(x_r)) over sets r of columns (integer codes; each θ_r an array whose axes
# are r's columns in increasing order). Its graph (columns joined when they share a set) is made chordal
# by eliminating columns one by one; the maximal cliques of that graph, joined by a maximum spanning
# tree on their shared columns, are a junction tree, on which two passes of sum-product give every
# clique's exact marginal (Koller & Friedman 2009, ch. 10). A marginal over columns that no clique
# holds is read off the joint of the subtree joining them (:func:`model_marginal`).


def _cells(columns, sizes) -> int:
    return math.prod(sizes[v] for v in columns)


def triangulate(sets, sizes) -> list[tuple[int, ...]]:
    """Maximal cliques of a chordal graph holding every set in ``sets`` (each a tuple of columns).

    Greedy elimination: each step removes the column whose neighbourhood (with itself) has the
    fewest cells, joining its neighbours; the cliques so formed, less those inside another, are the
    maximal cliques. Ties go to the lower column, so the result is a function of ``sets`` alone.
    """
    adjacent: dict[int, set[int]] = {}
    for s in sets:
        for v in s:
            adjacent.setdefault(v, set()).update(u for u in s if u != v)
    formed = []
    while adjacent:
        v = min(adjacent, key=lambda u: (_cells(adjacent[u] | {u}, sizes), u))
        near = adjacent.pop(v)
        formed.append(frozenset(near | {v}))
        for u in near:
            adjacent[u] |= near - {u}
            adjacent[u].discard(v)
    maximal = {c for c in formed if not any(c < o for o in formed)}
    return sorted(tuple(sorted(c)) for c in maximal)


def model_cells(sets, sizes) -> int:
    """Cells of the junction tree of ``sets``: the memory and time one inference pass takes."""
    return sum(_cells(c, sizes) for c in triangulate(sets, sizes))


@dataclass(frozen=True)
class JunctionTree:
    """Maximal cliques of a triangulated model graph, as a forest (one tree per connected part).

    ``parent[c]`` is clique c's parent (−1 for a root); ``order`` lists every parent before its
    children; ``separator[c]`` is what c shares with its parent (empty for a root).
    """

    cliques: tuple[tuple[int, ...], ...]
    parent: tuple[int, ...]
    order: tuple[int, ...]
    sizes: tuple[int, ...]

    @cached_property
    def separator(self) -> list[tuple[int, ...]]:
        return [tuple(v for v in c if p >= 0 and v in self.cliques[p]) for c, p in zip(self.cliques, self.parent)]

    @cached_property
    def depth(self) -> dict[int, int]:
        out = {}
        for c in self.order:
            out[c] = 0 if self.parent[c] < 0 else out[self.parent[c]] + 1
        return out

    @cached_property
    def root_of(self) -> dict[int, int]:
        out = {}
        for c in self.order:
            out[c] = c if self.parent[c] < 0 else out[self.parent[c]]
        return out

    def home(self, columns) -> int:
        """The smallest clique holding every one of ``columns`` (−1: none does)."""
        holding = [k for k, c in enumerate(self.cliques) if set(columns) <= set(c)]
        return min(holding, key=lambda k: _cells(self.cliques[k], self.sizes)) if holding else -1


def junction_tree(sets, sizes) -> JunctionTree:
    """The junction tree of the model over ``sets``: the cliques of :func:`triangulate` joined by a
    maximum spanning tree on the number of shared columns (Kruskal's order; cliques sharing none
    stay apart), each part rooted at its first clique."""
    cliques = triangulate(sets, sizes)
    pairs = sorted(((len(set(a) & set(b)), i, j) for i, a in enumerate(cliques) for j, b in enumerate(cliques)
                    if i < j and set(a) & set(b)), key=lambda t: (-t[0], t[1], t[2]))
    part, adjacent = list(range(len(cliques))), {i: [] for i in range(len(cliques))}
    for _, i, j in pairs:
        if part[i] != part[j]:
            old = part[j]
            part = [part[i] if p == old else p for p in part]
            adjacent[i].append(j)
            adjacent[j].append(i)
    parent, order = [-2] * len(cliques), []
    for root in range(len(cliques)):
        if parent[root] != -2:
            continue
        parent[root], at = -1, len(order)
        order.append(root)
        while at < len(order):  # breadth first
            for k in adjacent[order[at]]:
                if parent[k] == -2:
                    parent[k] = order[at]
                    order.append(k)
            at += 1
    return JunctionTree(tuple(cliques), tuple(parent), tuple(order), tuple(sizes))


def aggregate(table: np.ndarray, maps) -> np.ndarray:
    """``table`` with the cells of each axis summed by that axis's view codes: ``maps`` holds one array per
    axis (a code for each of its cells, 0 … k − 1) or None for an axis kept as it is. An integer table stays
    an integer table (its sums are exact below 2**53).

    >>> aggregate(np.arange(6).reshape(2, 3), [None, np.array([0, 1, 0])]).tolist()
    [[2, 1], [8, 4]]
    """
    shape = [int(m.max()) + 1 if m is not None else table.shape[k] for k, m in enumerate(maps)]
    flat = np.zeros([1] * table.ndim, dtype=np.int64)
    for k, m in enumerate(maps):
        codes = np.arange(table.shape[k]) if m is None else np.asarray(m, dtype=np.int64)
        flat = flat * shape[k] + codes.reshape([-1 if a == k else 1 for a in range(table.ndim)])
    out = np.bincount(np.broadcast_to(flat, table.shape).ravel(), weights=table.ravel(),
                      minlength=math.prod(shape)).reshape(shape)
    return np.rint(out).astype(np.int64) if np.issubdtype(table.dtype, np.integer) else out


def expand(table: np.ndarray, maps) -> np.ndarray:
    """A table over views spread back over the cells they merge (the inverse broadcast of :func:`aggregate`):
    each cell takes its view cell's value."""
    return table[np.ix_(*[np.arange(table.shape[k]) if m is None else m for k, m in enumerate(maps)])]


def sum_to(table: np.ndarray, columns, keep) -> np.ndarray:
    """``table`` (axes: ``columns``, increasing) summed over every column not in ``keep``."""
    return table.sum(axis=tuple(i for i, v in enumerate(columns) if v not in keep))


def spread(table: np.ndarray, columns, onto, sizes) -> np.ndarray:
    """``table`` over ``columns`` shaped to broadcast over the clique ``onto`` (both increasing)."""
    return table.reshape([sizes[v] if v in columns else 1 for v in onto])


def calibrate(tree: JunctionTree, log_potentials: list[np.ndarray]) -> list[np.ndarray]:
    """Each clique's marginal under p(x) ∝ exp(Σ_c log_potentials[c]), by sum-product on the tree.

    In probability space, each potential scaled by its largest entry and each message normalised,
    so nothing overflows; a clique whose mass all underflows gives NaN (the caller rejects that).
    Messages down divide the parent's marginal by the child's message up (0 where that is 0: the
    parent's mass there is 0 too).
    """
    seps, sizes = tree.separator, tree.sizes
    inner = [np.exp(t - t.max()) for t in log_potentials]
    up = {}
    for c in reversed(tree.order):
        p = tree.parent[c]
        if p >= 0:
            m = sum_to(inner[c], tree.cliques[c], seps[c])
            up[c] = m / m.sum()
            inner[p] = inner[p] * spread(up[c], seps[c], tree.cliques[p], sizes)
    beliefs = [None] * len(inner)
    for c in tree.order:
        p, b = tree.parent[c], inner[c]
        if p >= 0:
            with np.errstate(invalid="ignore", divide="ignore"):
                down = np.where(up[c] > 0, sum_to(beliefs[p], tree.cliques[p], seps[c]) / up[c], 0.0)
            b = b * spread(down, seps[c], tree.cliques[c], sizes)
        beliefs[c] = b / b.sum()
    return beliefs


def conditionals(tree: JunctionTree, beliefs: list[np.ndarray]) -> list[np.ndarray]:
    """P(clique | separator) of each clique (its own marginal at a root); 0 where the separator's is."""
    out = []
    for c, (cols, sep) in enumerate(zip(tree.cliques, tree.separator)):
        below = spread(sum_to(beliefs[c], cols, sep), sep, cols, tree.sizes)
        with np.errstate(invalid="ignore", divide="ignore"):
            out.append(np.where(below > 0, beliefs[c] / below, 0.0))
    return out


def _joining(tree: JunctionTree, ends: set[int]) -> list[int]:
    """The cliques of the smallest subtree joining ``ends`` (in one part of the forest), its top first."""
    depth = tree.depth
    nodes, front = set(ends), set(ends)
    while len(front) > 1:
        deepest = max(front, key=lambda c: (depth[c], c))
        front.discard(deepest)
        front.add(tree.parent[deepest])
        nodes.add(tree.parent[deepest])
    top = front.pop()
    return [top] + sorted(nodes - {top})


def model_marginal(tree: JunctionTree, beliefs, conds, columns) -> np.ndarray:
    """The model's marginal over ``columns`` (increasing), from calibrated ``beliefs`` and ``conds``.

    Inside one clique, a sum of its marginal. Otherwise, in each part of the forest, the subtree
    joining cliques that hold the columns has joint P(top) · Π P(clique | separator) over its other
    cliques (a junction tree's subtree is one of its marginal); parts are independent. One einsum
    sums that product down to ``columns``.
    """
    home = tree.home(columns)
    if home >= 0:
        return sum_to(beliefs[home], tree.cliques[home], columns)
    root_of = tree.root_of
    ends: dict[int, set[int]] = {}
    for v in columns:
        c = next(k for k in tree.order if v in tree.cliques[k])
        ends.setdefault(root_of[c], set()).add(c)
    label = {v: i for i, v in enumerate(sorted({v for c in tree.cliques for v in c}))}
    operands = []
    for part in ends.values():
        top, *rest = _joining(tree, part)
        operands += [beliefs[top], [label[v] for v in tree.cliques[top]]]
        for c in rest:
            operands += [conds[c], [label[v] for v in tree.cliques[c]]]
    return np.einsum(*operands, [label[v] for v in columns], optimize="greedy")


def sample_tree(tree: JunctionTree, beliefs, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` records drawn i.i.d. from the model: each root clique from its marginal, then each
    clique's new columns from P(new | separator) given the drawn separator (:func:`sample_rows`)."""
    codes = np.zeros((n, len(tree.sizes)), dtype=np.int64)
    for c in tree.order:
        cols, sep = tree.cliques[c], tree.separator[c]
        new = [v for v in cols if v not in sep]
        joint = np.transpose(beliefs[c], [cols.index(v) for v in (*sep, *new)])
        rows = joint.reshape(_cells(sep, tree.sizes), _cells(new, tree.sizes))
        index = np.ravel_multi_index(tuple(codes[:, sep].T), [tree.sizes[v] for v in sep]) if sep \
            else np.zeros(n, np.int64)
        fallback = rows.sum(axis=0) / max(rows.sum(), 1e-300)
        drawn = sample_rows(conditional(rows, fallback), index, rng)
        codes[:, new] = np.column_stack(np.unravel_index(drawn, [tree.sizes[v] for v in new]))
    return codes


#: Halvings of a step before the line search gives up on its direction, and the relative fall of the
#: loss below which a fit stops (the model's counts then move by far less than the noise).
MD_HALVINGS = 25
FIT_TOLERANCE = 1e-6


def fit_potentials(tree: JunctionTree, targets: dict, total: float, theta: dict, iterations: int,
                   step: float | None = None, views: dict | None = None) -> tuple[dict, list[np.ndarray], float]:
    """Log-potentials of the model on ``tree`` fitted to noisy marginals (post-processing of them).

    ``targets`` maps a key to noisy counts y and their variance v (per cell: one number, or an array of y's
    shape). A key is a set of columns r (increasing), or, with ``views``, anything that ``views`` maps to
    (r, maps): y is then the table over r with each column's cells merged by its view codes (``maps``, as
    :func:`aggregate` takes them). The loss is ½ Σ ‖c − y‖² / v with c = N·μ the model's counts on that
    table (N = ``total``), Private-PGM's estimator (McKenna et al. 2019). A view's potential is constant
    over the cells it merges, so the model stays in the family exp(Σ θ) over the model's own cells. Two
    kinds of step, each with a line search (halve until the loss falls, then try twice the size):

    1. scaled steps θ ← θ − η (c − y)/max(c, √v), η ≤ 1: at η = 1 a cell's log-count
       moves by its relative error, as iterative proportional fitting does, so large and small cells
       converge together; it may stop lowering the loss near the optimum, and then
    2. mirror descent, θ ← θ − α N(c − y)/v (the gradient in μ), which always can.

    ``theta`` (key → array) is the start (keys missing from it start at 0) and ``step`` the last
    mirror-descent α. Returns the fitted θ, the calibrated clique marginals and α.
    """
    scope = {key: (views[key] if views is not None else (key, None)) for key in targets}
    home = {key: tree.home(r) for key, (r, _) in scope.items()}
    theta = {key: theta[key] if key in theta else np.zeros(np.shape(y)) for key, (y, _) in targets.items()}
    scaled = True

    def lift(by_key: dict) -> list[np.ndarray]:
        out = [np.zeros([tree.sizes[v] for v in c]) for c in tree.cliques]
        for key, t in by_key.items():
            r, maps = scope[key]
            t = t if maps is None else expand(t, maps)
            out[home[key]] = out[home[key]] + spread(t, r, tree.cliques[home[key]], tree.sizes)
        return out

    def loss_direction(beliefs) -> tuple[float, dict]:
        loss, direction = 0.0, {}
        for key, (y, v) in targets.items():
            r, maps = scope[key]
            mu = sum_to(beliefs[home[key]], tree.cliques[home[key]], r)
            c = total * (mu if maps is None else aggregate(mu, maps))
            loss += 0.5 * float(np.sum((c - y) ** 2 / v))
            direction[key] = (c - y) / np.maximum(c, np.sqrt(v)) if scaled else total * (c - y) / v
        return loss, direction

    potentials = lift(theta)
    beliefs = calibrate(tree, potentials)
    loss, direction = loss_direction(beliefs)
    eta, alpha = 1.0, step if step is not None else min(np.min(v) for _, v in targets.values()) / total ** 2
    for _ in range(iterations):
        size = eta if scaled else alpha
        move = lift(direction)
        for _ in range(MD_HALVINGS):
            trial = [p - size * m for p, m in zip(potentials, move)]
            with np.errstate(invalid="ignore", divide="ignore", under="ignore", over="ignore"):
                new_beliefs = calibrate(tree, trial)
            new_loss, new_direction = loss_direction(new_beliefs)
            if new_loss < loss:
                break
            size *= 0.5
        else:
            if not scaled:
                break
            scaled = False  # the scaled direction no longer lowers the loss: mirror descent from here
            loss, direction = loss_direction(beliefs)
            continue
        theta = {r: theta[r] - size * direction[r] for r in theta}
        converged = loss - new_loss <= FIT_TOLERANCE * loss
        potentials, beliefs, loss, direction = trial, new_beliefs, new_loss, new_direction
        if converged:
            break
        if scaled:
            eta = min(2 * size, 1.0)
        else:
            alpha = 2 * size
    return theta, beliefs, alpha
