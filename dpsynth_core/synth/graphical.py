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
