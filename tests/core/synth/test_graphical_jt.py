"""The junction-tree inference AIM stands on (synth/graphical.py), against brute force.

Every check builds the full joint table of a small model p(x) ∝ exp(Σ_r θ_r(x_r)) by hand (an
outer sum over all cells) and compares: clique marginals after calibration, marginals over columns
no clique holds, the fitted model's marginals, and the frequencies of i.i.d. draws.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpsynth_core.synth.graphical import (aggregate, calibrate, conditionals, expand, fit_potentials, junction_tree,
                                          model_cells, model_marginal, sample_tree, spread, sum_to,
                                          triangulate)

SIZES = (2, 3, 2, 4, 3, 2)
# a cycle 0–1–2–3–0 (needs a fill-in edge), a triple hanging off 3, and column 5 alone
SETS = [(0, 1), (1, 2), (2, 3), (0, 3), (3, 4), (1, 3, 4), (5,)]


def _joint(sets, theta, sizes) -> np.ndarray:
    """The normalised full table of exp(Σ_r θ_r), by broadcasting each θ_r over every column."""
    all_columns = tuple(range(len(sizes)))
    log = np.zeros(sizes)
    for r in sets:
        log = log + spread(theta[r], r, all_columns, sizes)
    p = np.exp(log - log.max())
    return p / p.sum()


def _model(seed: int):
    rng = np.random.default_rng(seed)
    theta = {r: rng.normal(0, 1.5, [SIZES[v] for v in r]) for r in SETS}
    tree = junction_tree(SETS, SIZES)
    potentials = [np.zeros([SIZES[v] for v in c]) for c in tree.cliques]
    for r in SETS:
        h = tree.home(r)
        potentials[h] = potentials[h] + spread(theta[r], r, tree.cliques[h], SIZES)
    return tree, theta, calibrate(tree, potentials)


def test_triangulation_holds_every_set_and_is_chordal():
    cliques = triangulate(SETS, SIZES)
    assert all(any(set(r) <= set(c) for c in cliques) for r in SETS)
    # the 4-cycle 0-1-2-3 gets a chord, so some clique holds three of its columns
    assert any(len(set(c) & {0, 1, 2, 3}) >= 3 for c in cliques)
    assert model_cells(SETS, SIZES) == sum(int(np.prod([SIZES[v] for v in c])) for c in cliques)


def test_junction_tree_has_the_running_intersection_property():
    tree = junction_tree(SETS, SIZES)
    for v in range(len(SIZES)):
        holding = [c for c, cols in enumerate(tree.cliques) if v in cols]
        # the cliques holding v are connected: exactly one of them has its parent outside the set
        tops = [c for c in holding if tree.parent[c] not in holding]
        assert len(tops) == 1, (v, holding, tree.parent)
    assert sorted(tree.order) == list(range(len(tree.cliques)))
    assert all(tree.order.index(tree.parent[c]) < tree.order.index(c) for c in tree.order if tree.parent[c] >= 0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_calibrated_clique_marginals_equal_brute_force(seed):
    tree, theta, beliefs = _model(seed)
    joint = _joint(SETS, theta, SIZES)
    for cols, b in zip(tree.cliques, beliefs):
        np.testing.assert_allclose(b, sum_to(joint, range(len(SIZES)), cols), atol=1e-12)


@pytest.mark.parametrize("columns", [(0, 2), (0, 4), (2, 4, 5), (0, 1, 2, 3), (4, 5)])
def test_marginal_over_columns_no_clique_holds_equals_brute_force(columns):
    tree, theta, beliefs = _model(3)
    got = model_marginal(tree, beliefs, conditionals(tree, beliefs), columns)
    np.testing.assert_allclose(got, sum_to(_joint(SETS, theta, SIZES), range(len(SIZES)), columns), atol=1e-12)


def test_draws_follow_the_joint():
    # 200,000 i.i.d. records against the exact joint: Pearson's χ² over the cells expected to hold at
    # least 5 records (the others pooled into one), rejected at p < 0.001 (seeded, so the test is fixed;
    # a wrong conditional gives p far below 1e-100)
    tree, theta, beliefs = _model(4)
    expected = _joint(SETS, theta, SIZES).ravel() * 200_000
    codes = sample_tree(tree, beliefs, 200_000, np.random.default_rng(5))
    seen = np.bincount(np.ravel_multi_index(tuple(codes.T), SIZES), minlength=expected.size)
    big = expected >= 5
    observed = np.append(seen[big], seen[~big].sum())
    wanted = np.append(expected[big], expected[~big].sum())
    assert big.sum() > 100 and stats.chisquare(observed, wanted).pvalue > 1e-3


def test_fit_recovers_consistent_marginals():
    # targets are the exact marginals (× N) of a model in the family: the fitted model reproduces them
    tree, theta, _ = _model(6)
    joint = _joint(SETS, theta, SIZES)
    total = 10_000.0
    targets = {r: (total * sum_to(joint, range(len(SIZES)), r), 25.0) for r in SETS}
    _, beliefs, _ = fit_potentials(tree, targets, total, {}, 500)
    conds = conditionals(tree, beliefs)
    for r, (y, _) in targets.items():
        np.testing.assert_allclose(total * model_marginal(tree, beliefs, conds, r), y, atol=0.5)


def test_fit_minimises_the_weighted_squared_error():
    # a 2-way table (variance 1 a cell) and a conflicting 1-way one of its first column (variance 2 a
    # cell), worked out by hand below
    sizes = (2, 2)
    y2 = np.array([[300.0, 100.0], [400.0, 200.0]])  # first column's margin (400, 600)
    y1 = np.array([550.0, 450.0])
    total = 1000.0
    tree = junction_tree([(0, 1), (0,)], sizes)
    _, beliefs, _ = fit_potentials(tree, {(0, 1): (y2, 1.0), (0,): (y1, 2.0)}, total, {}, 2000)
    fitted = total * beliefs[0]
    # for row sums m, the best 2-way rows shift each cell of row i by (m_i − Y_i)/2 (Y = (400, 600) the
    # rows of y2), a loss of ½·(m_i − Y_i)²/2 per row; the 1-way adds ½·(m_i − y1_i)²/2. Equal weights:
    # m = (Y + y1)/2 = (475, 525), which sums to N as it must; the rows keep y2's differences
    np.testing.assert_allclose(fitted.sum(axis=1), [475.0, 525.0], atol=0.5)
    np.testing.assert_allclose(fitted[0, 0] - fitted[0, 1], 200.0, atol=0.5)


def test_aggregate_and_expand_by_hand():
    t = np.arange(24).reshape(2, 3, 4)
    maps = [None, np.array([1, 0, 1]), np.array([0, 0, 1, 2])]
    want = np.zeros((2, 2, 3), dtype=np.int64)  # the plain loop over every cell
    for i, j, k in np.ndindex(t.shape):
        want[i, maps[1][j], maps[2][k]] += t[i, j, k]
    got = aggregate(t, maps)
    assert got.dtype == np.int64 and got.tolist() == want.tolist()
    wide = expand(got, maps)  # each cell takes its view cell's value
    assert wide.shape == t.shape and all(wide[i, j, k] == got[i, maps[1][j], maps[2][k]]
                                         for i, j, k in np.ndindex(t.shape))


def test_fit_to_a_coarse_view_recovers_it():
    # column 0 has 4 values; the 2-way target sees them merged 2 at a time (a view), the 1-way target sees
    # them all. Targets are the exact (consistent) counts of a joint table: the fitted model reproduces both,
    # and inside each merged pair its split follows the 1-way table, the only one that sees it.
    rng = np.random.default_rng(4)
    joint = rng.dirichlet(np.ones(12)).reshape(4, 3)
    total, view = 10_000.0, np.array([0, 0, 1, 1])
    targets = {"pair": (total * aggregate(joint, [view, None]), 25.0), "one": (total * joint.sum(axis=1), 25.0)}
    tree = junction_tree([(0, 1), (0,)], (4, 3))
    scopes = {"pair": ((0, 1), [view, None]), "one": ((0,), None)}
    _, beliefs, _ = fit_potentials(tree, targets, total, {}, 1000, views=scopes)
    conds = conditionals(tree, beliefs)
    fitted = total * model_marginal(tree, beliefs, conds, (0, 1))
    np.testing.assert_allclose(aggregate(fitted, [view, None]), targets["pair"][0], atol=0.5)
    np.testing.assert_allclose(fitted.sum(axis=1), targets["one"][0], atol=0.5)


def test_spread_then_sum_gives_the_table_times_the_other_sizes():
    t = np.arange(6.0).reshape(2, 3)
    wide = np.broadcast_to(spread(t, (1, 3), (0, 1, 2, 3), (4, 2, 5, 3)), (4, 2, 5, 3))
    np.testing.assert_allclose(sum_to(wide, (0, 1, 2, 3), (1, 3)), t * 20)
