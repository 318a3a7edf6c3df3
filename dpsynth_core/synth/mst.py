"""MST: noisy 1-way marginals, a privately chosen spanning tree of 2-way marginals.

McKenna, Miklau & Sheldon (2021), winner of the NIST 2018 challenge, as
METHODS.md §2 states it, in zero-concentrated DP (Bun & Steinke 2016):

1. ρ is the largest with ρ + 2√(ρ ln(1/δ)) ≤ ε; each third of it buys one step.
2. Every 1-way marginal gets Gaussian noise, σ² = 3d/(2ρ) (a record adds 1 to
   one cell of each of the d tables: L2 sensitivity 1 per table).
   Values whose noisy count is below 3σ are merged into one "rare" value
   (post-processing, as in the authors' code): fewer cells to measure later.
3. d − 1 pairs forming a spanning tree, chosen in Kruskal's order: each step
   picks among the pairs joining two components by the exponential
   mechanism on ‖M_ij(D) − M_ij(p̂)‖₁ (sensitivity 1; p̂ the independent model
   of step 2), at ε₀ = √(8ρ/(3(d − 1))) (ρ = ε₀²/8 per step).
4. The chosen 2-way marginals get Gaussian noise, σ² = 3(d − 1)/(2ρ).
5. Estimation (post-processing): each column's distribution combines its
   noisy 1-way with the margins of its noisy 2-way tables (inverse-variance
   weights), projected onto the simplex; each tree edge's table is projected
   onto non-negative tables and fitted to its two column distributions by
   iterative proportional fitting. From that tree model, mirror descent on
   the squared error of every noisy marginal (Private-PGM's estimator,
   McKenna et al. 2019; exact belief propagation on the tree) refines the
   root distribution and each child's conditional given its parent.
6. Records are drawn i.i.d. from the tree model, ancestrally: the root, then
   each child from P(child | parent) with its own random number — never by
   rounding counts, which couples columns drawn from the same parent.

Numeric columns are binned over their declared public bounds and drawn
uniformly inside the bin. Neighbouring datasets: add or remove one record.
"""

from __future__ import annotations

import itertools

import numpy as np

from .. import constraints
from ..privacy import TOTAL, Budget, Step
from ..privacy.mechanisms import zcdp_epsilon, zcdp_rho
from . import options as opt
from .base import Synthesizer, register
from .encoding import decode_column, encode
from .graphical import (conditional, count_table, exponential_mechanism, project_simplex, sample_rows,
                        table_cells_refusal)

RARE_SIGMAS = 3.0  # a value whose noisy count is below this many σ is merged into "rare"
IPF_ITERATIONS = 30
MD_ITERATIONS = 100  # from the IPF start, TV2 on diamonds stops improving by about 100


def measure_marginals(df, schema, columns, bins):
    """Every 1-way and 2-way count table over the discretised domains (the only data read)."""
    codes, domains = encode(df, schema, columns, bins)
    sizes = [d.size for d in domains]
    one = [count_table(codes[:, [j]], [sizes[j]]) for j in range(len(columns))]
    two = {(i, j): count_table(codes[:, [i, j]], [sizes[i], sizes[j]])
           for i, j in itertools.combinations(range(len(columns)), 2)}
    return {"columns": list(columns), "domains": domains, "one": one, "two": two}


def _groups(noisy: np.ndarray, sigma: float) -> np.ndarray:
    """Compressed code of each value: kept values keep their order, the rare ones share the last code."""
    keep = noisy >= RARE_SIGMAS * sigma
    if keep.all() or keep.sum() == 0:
        return np.arange(noisy.size)
    return np.where(keep, np.cumsum(keep) - 1, keep.sum())


def _compress(table: np.ndarray, gi: np.ndarray, gj: np.ndarray) -> np.ndarray:
    out = np.zeros((gi.max() + 1, gj.max() + 1))
    np.add.at(out, (gi[:, None], gj[None, :]), table)
    return out


def _ipf(table: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Scale ``table`` until its margins are ``rows`` and ``cols`` (same totals)."""
    t = table + 1e-9 * np.outer(rows, cols) / max(rows.sum(), 1e-12)  # every cell reachable
    for _ in range(IPF_ITERATIONS):
        t *= (rows / np.maximum(t.sum(axis=1), 1e-300))[:, None]
        t *= (cols / np.maximum(t.sum(axis=0), 1e-300))[None, :]
    return t


@register
class MST(Synthesizer):
    name = "mst"
    label = "MST (spanning tree of noisy 2-way marginals)"
    is_dp = True
    spends = Budget(TOTAL, needs_delta=True,
                    per_target="ρ over the 1-way marginals, the tree's selection and its 2-way marginals")
    description = ("Noisy 1-way marginals, a maximum spanning tree of 2-way marginals chosen privately, "
                   "noisy 2-way marginals on the tree, and records drawn i.i.d. from the tree model "
                   "(McKenna et al. 2021; zCDP, reported as (ε, δ)-DP). Keeps every marginal and the "
                   "strongest pairwise associations.")
    options = (opt.bins(constraints.MST_DEFAULT_BINS),)

    def refuse(self, schema, columns, n, *, bins, **params):
        return table_cells_refusal(schema, columns, bins, 2, "MST")

    def measure(self, df, schema, columns, *, bins):
        return measure_marginals(df, schema, columns, bins)

    def generate(self, measured, *, epsilon, n, rng, bins, delta=constraints.DEFAULT_DELTA):
        columns, domains = measured["columns"], measured["domains"]
        d = len(columns)
        rho = zcdp_rho(epsilon, delta)
        steps_rho = (rho / 3, rho / 3, rho / 3) if d > 1 else (rho, 0.0, 0.0)
        conversion = (f"zCDP: ρ = {rho:.4g} is the largest with ρ + 2√(ρ ln(1/δ)) ≤ ε "
                      f"(= {zcdp_epsilon(rho, delta):.4g}, δ = {delta:g}); each step's ε and δ are its share "
                      "of ρ times the total")

        # 1. noisy 1-way marginals
        sigma1 = np.sqrt(d / (2 * steps_rho[0]))
        noisy1 = [x + rng.normal(0, sigma1, x.shape) for x in measured["one"]]
        groups = [_groups(y, sigma1) for y in noisy1]
        ks = [g.max() + 1 for g in groups]
        y1 = [np.bincount(g, weights=y, minlength=k) for g, y, k in zip(groups, noisy1, ks)]
        v1 = [np.bincount(g, minlength=k) * sigma1 ** 2 for g, k in zip(groups, ks)]  # variance per cell
        totals = [(y.sum(), v.sum()) for y, v in zip(y1, v1)]

        # 2. the spanning tree, chosen privately
        edges: list[tuple[int, int]] = []
        if d > 1:
            n1 = _weighted(totals)
            model1 = [project_simplex(y, 1.0 * max(n1, 1.0)) for y in y1]
            model1 = [m / m.sum() if m.sum() > 0 else np.full(m.size, 1 / m.size) for m in model1]
            compressed = {e: _compress(t, groups[e[0]], groups[e[1]]) for e, t in measured["two"].items()}
            score = {e: np.abs(t - max(n1, 0.0) * np.outer(model1[e[0]], model1[e[1]])).sum()
                     for e, t in compressed.items()}
            eps0 = np.sqrt(8 * steps_rho[1] / (d - 1))
            component = list(range(d))
            for _ in range(d - 1):
                candidates = [e for e in score if component[e[0]] != component[e[1]]]
                e = candidates[exponential_mechanism(np.array([score[c] for c in candidates]), eps0, 1.0, rng)]
                edges.append(e)
                old, new = component[e[1]], component[e[0]]
                component = [new if c == old else c for c in component]

            # 3. noisy 2-way marginals on the tree
            sigma2 = np.sqrt((d - 1) / (2 * steps_rho[2]))
            noisy2 = {e: compressed[e] + rng.normal(0, sigma2, compressed[e].shape) for e in edges}
            totals += [(t.sum(), t.size * sigma2 ** 2) for t in noisy2.values()]

        # 4. estimation: column distributions, then each edge's table fitted to them
        total = max(_weighted(totals), 1.0)
        est, weight = [y / v for y, v in zip(y1, v1)], [1 / v for v in v1]
        for (i, j), t in (noisy2.items() if d > 1 else ()):
            for a, axis, other in ((i, 1, ks[j]), (j, 0, ks[i])):
                var = other * sigma2 ** 2
                est[a] = est[a] + t.sum(axis=axis) / var
                weight[a] = weight[a] + 1 / var
        marg = [project_simplex(e / w, total) for e, w in zip(est, weight)]
        tables = {e: _ipf(project_simplex(t, total), marg[e[0]], marg[e[1]]) for e, t in (noisy2.items() if d > 1 else ())}

        # 5. the tree rooted at column 0, refined by mirror descent on the squared error of every
        #    measurement (Private-PGM's estimator, exact on a tree), then i.i.d. ancestral sampling
        order, parent = _rooted(d, edges)
        oriented = {c: (tables[(parent[c], c)] if (parent[c], c) in tables else tables[(c, parent[c])].T)
                    for c in order[1:]}
        noisy_oriented = {c: (noisy2[(parent[c], c)] if (parent[c], c) in noisy2 else noisy2[(c, parent[c])].T)
                          for c in order[1:]}
        root_p, cond = _mirror_descent(order, parent, marg[0], oriented, y1, v1, noisy_oriented,
                                       sigma2 if d > 1 else 1.0, total)
        codes = np.empty((n, d), dtype=np.int64)
        codes[:, 0] = rng.choice(ks[0], size=n, p=root_p)
        for c in order[1:]:
            codes[:, c] = sample_rows(cond[c], codes[:, parent[c]], rng)

        values = {}
        for j, (c, dom) in enumerate(zip(columns, domains)):
            values[c] = decode_column(_expand(codes[:, j], groups[j], noisy1[j], rng), dom, rng)

        share = epsilon / 3 if d > 1 else epsilon
        steps = [Step("Gaussian (zCDP)", f"1-way marginals of {d} columns", share, delta=delta * share / epsilon,
                      sensitivity=1.0, detail=f"ρ = {steps_rho[0]:.4g} over {d} tables, σ = {sigma1:.4g} per cell; "
                                              f"values below {RARE_SIGMAS:g}σ merged; " + conversion)]
        if d > 1:
            chosen = ", ".join(f"{columns[i]}–{columns[j]}" for i, j in edges)
            steps.append(Step("exponential mechanism (zCDP)", f"spanning tree: {d - 1} pairs of columns", share,
                              delta=delta * share / epsilon, sensitivity=1.0,
                              detail=f"ρ = {steps_rho[1]:.4g} over {d - 1} Kruskal steps, ε₀ = {eps0:.4g} each "
                                     f"(ρ = ε₀²/8); score ‖M_ij(D) − M_ij(p̂)‖₁; chosen: {chosen}"))
            steps.append(Step("Gaussian (zCDP)", f"2-way marginals on the tree ({d - 1} tables)", share,
                              delta=delta * share / epsilon, sensitivity=1.0,
                              detail=f"ρ = {steps_rho[2]:.4g} over {d - 1} tables, σ = {sigma2:.4g} per cell"))
        return values, steps


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


def _logsumexp(x: np.ndarray, axis: int) -> np.ndarray:
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    return np.squeeze(m, axis=axis) + np.log(np.sum(np.exp(x - m), axis=axis))


def _beliefs(order, parent, phi, psi):
    """Exact node and edge marginals of p(x) ∝ exp(Σ φ_i(x_i) + Σ ψ_c(x_parent(c), x_c)) on the tree."""
    children = {i: [] for i in order}
    for c in order[1:]:
        children[parent[c]].append(c)
    up, inner = {}, {}
    for c in reversed(order):
        inner[c] = phi[c] + sum((up[k] for k in children[c]), np.zeros_like(phi[c]))
        if c != order[0]:
            up[c] = _logsumexp(psi[c] + inner[c][None, :], axis=1)
    full = {order[0]: inner[order[0]]}
    for c in order[1:]:
        p = parent[c]
        full[c] = inner[c] + _logsumexp(psi[c] + (full[p] - up[c])[:, None], axis=0)
    nodes = {i: np.exp(f - _logsumexp(f, axis=0)) for i, f in full.items()}
    pairs = {}
    for c in order[1:]:
        p = parent[c]
        lp = psi[c] + (full[p] - up[c])[:, None] + inner[c][None, :]
        pairs[c] = np.exp(lp - _logsumexp(lp.ravel(), axis=0))
    return nodes, pairs


def _mirror_descent(order, parent, root, tables, y1, v1, y2, sigma2, total, iters=MD_ITERATIONS):
    """Root distribution and conditionals of the tree model fitted to every noisy marginal.

    Minimises ½Σ‖N·b_i − y_i‖²/v_i + ½Σ‖N·b_e − y_e‖²/σ₂² over the tree's distributions by
    mirror descent on the log-potentials (McKenna et al. 2019; the step halves until the loss falls),
    started from the fitted tables (a good model already). Post-processing of the noisy marginals.
    """
    with np.errstate(divide="ignore"):
        phi = {i: np.zeros(len(y1[i])) for i in order}
        phi[order[0]] = np.log(root / root.sum()) if root.sum() > 0 else np.zeros(root.size)
        psi = {c: np.log(_rows(t)) for c, t in tables.items()}
    phi = {i: np.maximum(v, -50.0) for i, v in phi.items()}
    psi = {c: np.maximum(v, -50.0) for c, v in psi.items()}

    def loss_grad(nodes, pairs):
        loss, g_node, g_pair = 0.0, {}, {}
        for i in order:
            r = total * nodes[i] - y1[i]
            loss += 0.5 * float(np.sum(r * r / v1[i]))
            g_node[i] = total * r / v1[i]
        for c in order[1:]:
            r = total * pairs[c] - y2[c]
            loss += 0.5 * float(np.sum(r * r)) / sigma2 ** 2
            g_pair[c] = total * r / sigma2 ** 2
        return loss, g_node, g_pair

    nodes, pairs = _beliefs(order, parent, phi, psi)
    loss, g_node, g_pair = loss_grad(nodes, pairs)
    alpha = 1.0 / total ** 2
    for _ in range(iters):
        alpha *= 2
        for _ in range(25):
            phi2 = {i: phi[i] - alpha * g_node[i] for i in order}
            psi2 = {c: psi[c] - alpha * g_pair[c] for c in order[1:]}
            nodes2, pairs2 = _beliefs(order, parent, phi2, psi2)
            loss2, gn2, gp2 = loss_grad(nodes2, pairs2)
            if loss2 < loss:
                break
            alpha *= 0.5
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


def _expand(codes: np.ndarray, groups: np.ndarray, noisy: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Original codes from compressed ones: a rare value drawn in proportion to its noisy count (≥ 0)."""
    if np.array_equal(groups, np.arange(groups.size)):
        return codes
    out = codes.copy()
    rare = np.flatnonzero(groups == groups.max())
    hit = codes == groups.max()
    w = np.clip(noisy[rare], 0, None)
    p = w / w.sum() if w.sum() > 0 else np.full(rare.size, 1 / rare.size)
    out[hit] = rng.choice(rare, size=int(hit.sum()), p=p)
    kept = np.flatnonzero(groups != groups.max())
    out[~hit] = kept[codes[~hit]]
    return out
