"""The utility distances of the PeGS paper: marginal and conditional.

Park & Ghosh score a synthesis on categorical data by squared differences of
estimated probabilities:

- marginal distance of feature i: Σ_x (P̂_s(x) − P̂_o(x))² over the levels x
  of x_i;
- conditional distance of feature i given feature j:
  Σ_{x_j} Σ_{x_i} (P̂_s(x_i | x_j) − P̂_o(x_i | x_j))².

(Their third, the regression-coefficient distance Σ |(β_s − β_o)/β_o|, is
``coef_distance`` of :func:`~dpsynth_core.utility.regression.regression_ci_overlap`.)

Numeric columns are binned first, in ``bins`` equal-width bins over the union
range of both datasets (as PeGS itself bins them); missing values are a level
of their own. The conditional distance sums over the levels of x_j, so it
grows with their number: compare values computed with the same bins.

References
----------
Park, Y. and Ghosh, J. (2014). PeGS: Perturbed Gibbs Samplers that generate
privacy-compliant synthetic data. Transactions on Data Privacy 7(3), 253-282.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import constraints
from ..metric_info import Metric, register
from .design import bin_edges, check_pair, column_kinds, factorize_labels

__all__ = ["PegsDistances", "pegs_distances", "shared_codes"]

register(
    Metric(
        name="pegs_marginal",
        label="Marginal distance (PeGS)",
        kind="utility",
        goal="minimize",
        lower=0.0,
        upper=2.0,
        best=0.0,
        reading="Average over columns of the summed squared gaps between real and synthetic "
        "level shares (numeric columns binned); 0 same marginals.",
        section="marginals",
        compute=lambda ctx: pegs_of(ctx).marginal_mean,
    )
)
register(
    Metric(
        name="pegs_conditional",
        label="Conditional distance (PeGS)",
        kind="utility",
        goal="minimize",
        lower=0.0,
        upper=float("inf"),
        best=0.0,
        reading="Average over ordered pairs of columns of the summed squared gaps between real "
        "and synthetic conditional shares P(x_i | x_j); 0 same conditionals.",
        section="bivariate",
        compute=lambda ctx: pegs_of(ctx).conditional_mean,
        note="Needs two columns with levels seen in both datasets.",
    )
)


def shared_codes(a: pd.Series, b: pd.Series, *, numeric: bool, bins: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Codes of two samples of one column on a shared set of levels (bins for numbers).

    Returns ``(codes_a, codes_b, n_levels)``; missing (and infinite) values
    get a level of their own, the last one. The codes are of the smallest
    unsigned integer type that holds ``n_levels`` (one byte for up to 256
    levels): a summary holds two of them per column at once, 124 MiB as
    machine integers for a 675,000 × 12 table and its synthesis, 15.5 MiB
    as bytes (bench/bench_memory.py measures the Compare page).
    """
    if not numeric:
        # Each sample coded on its own (a code another measure of the same summary may already hold),
        # then mapped onto the sorted union of levels: the codes of the pooled sample.
        (ca, la), (cb, lb) = factorize_labels(a), factorize_labels(b)
        position = {level: i for i, level in enumerate(sorted(set(la) | set(lb)))}
        small = np.min_scalar_type(max(len(position) - 1, 0))
        return (np.array([position[v] for v in la], dtype=small)[ca],
                np.array([position[v] for v in lb], dtype=small)[cb], len(position))
    xa = a.to_numpy(dtype=float, na_value=np.nan)
    xb = b.to_numpy(dtype=float, na_value=np.nan)
    finite = [np.isfinite(xa), np.isfinite(xb)]
    if any(f.any() for f in finite):
        # Equal-width edges depend on the range alone: the smallest and largest finite value of either
        # sample, found without pooling copies of both.
        lo = min(np.min(x, where=f, initial=np.inf) for x, f in zip((xa, xb), finite))
        hi = max(np.max(x, where=f, initial=-np.inf) for x, f in zip((xa, xb), finite))
        edges = bin_edges(np.array([lo, hi]), bins)
    else:
        edges = np.array([0.0, 1.0])
    small = np.min_scalar_type(len(edges) - 1)  # codes 0 to len(edges) - 1, the last for missing values
    return (_bin_codes(xa, finite[0], edges).astype(small), _bin_codes(xb, finite[1], edges).astype(small),
            len(edges))


def _bin_codes(x: np.ndarray, ok: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """The bin of each value of ``x`` among equal-width ``edges``, or ``len(edges) - 1`` where ``ok`` is False.

    Bins are [left, right), the last one closed, as numpy's histogram. Each bin is first estimated from the
    value's offset over the bin width, then checked against its two edges; the few values rounding put
    in a neighbouring bin are placed by a search of the edges, the rule a search of every value applies
    (which cost 25-40 ms a million values, the estimate and its check about half of that).
    """
    k = len(edges) - 1
    z = np.where(ok, x, edges[0])
    with np.errstate(over="ignore"):
        span = edges[-1] - edges[0]
    if np.isfinite(span):
        offset = z - edges[0]
        offset *= k / span
        c = offset.astype(np.intp)
        np.clip(c, 0, k - 1, out=c)
        off = z < edges[c]
        off |= (z >= edges[c + 1]) & (c < k - 1)
    else:  # a range past the largest float: no width to divide by, every value searched
        c = np.zeros(z.size, dtype=np.intp)
        off = np.ones(z.size, dtype=bool)
    c[off] = np.clip(np.searchsorted(edges, z[off], side="right") - 1, 0, k - 1)
    c[~ok] = k
    return c


@dataclass(frozen=True)
class PegsDistances:
    """Marginal and conditional distances of Park & Ghosh.

    Attributes
    ----------
    marginal : Series
        Per column, Σ_x (P̂_s(x) − P̂_o(x))²; in [0, 2].
    conditional : DataFrame
        Row i, column j: distance of x_i given x_j; NaN on the diagonal.
    marginal_mean : float
        Mean of ``marginal``.
    conditional_mean : float
        Mean of ``conditional`` over the ordered pairs i ≠ j.
    skipped : DataFrame
        Row i, column j: number of levels of x_j left out of the sum because
        they occur in only one dataset (the conditional is undefined in the
        other).
    notes : tuple of str
        Sentences for the user about skipped levels.
    bins : int
        Bins per numeric column.
    """

    marginal: pd.Series
    conditional: pd.DataFrame
    marginal_mean: float
    conditional_mean: float
    skipped: pd.DataFrame
    notes: tuple[str, ...]
    bins: int


def pegs_distances(
    real: pd.DataFrame,
    synth: pd.DataFrame,
    *,
    categorical: Iterable[str] | None = None,
    bins: int = constraints.DEFAULT_BINS,
) -> PegsDistances:
    """Marginal and conditional distances between real and synthetic data (Park & Ghosh).

    Parameters
    ----------
    real, synth : DataFrame
        Confidential and synthetic data; the real data's columns are used.
    categorical : iterable of str, optional
        Numeric columns to treat as categorical.
    bins : int, default constraints.DEFAULT_BINS
        Equal-width bins per numeric column. Must be at least 1.

    Returns
    -------
    PegsDistances

    Examples
    --------
    >>> import pandas as pd
    >>> real = pd.DataFrame({"g": list("aabb"), "h": list("uuvv")})
    >>> synth = pd.DataFrame({"g": list("aabb"), "h": list("uvuv")})
    >>> d = pegs_distances(real, synth)
    >>> d.marginal.tolist(), float(d.conditional.loc["h", "g"])
    ([0.0, 0.0], 1.0)
    """
    columns = check_pair(real, synth)
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise ValueError(f"bins must be an integer of at least 1, got {bins!r}")
    kinds = column_kinds([real, synth], columns, categorical=categorical)
    n_r, n_s = len(real), len(synth)
    codes = {c: shared_codes(real[c], synth[c], numeric=kinds[c] == "numeric", bins=int(bins)) for c in columns}

    marginal = {}
    for c, (cr, cs, k) in codes.items():
        p = np.bincount(cr, minlength=k) / n_r if n_r else np.full(k, np.nan)
        q = np.bincount(cs, minlength=k) / n_s if n_s else np.full(k, np.nan)
        marginal[c] = float(np.sum((q - p) ** 2))

    m = len(columns)
    cond = np.full((m, m), np.nan)
    skipped = np.zeros((m, m), dtype=np.int64)
    buffer = np.empty(max(n_r, n_s), dtype=np.intp)  # each pair's joint codes, written over the last pair's
    for i in range(m):
        cri, csi, ki = codes[columns[i]]
        for j in range(i):
            crj, csj, kj = codes[columns[j]]
            jr, js = _joint_counts(cri, crj, ki, kj, buffer), _joint_counts(csi, csj, ki, kj, buffer)
            # i given j: columns of the joint table; j given i: its rows.
            for (a, b), (tr, ts) in (((i, j), (jr, js)), ((j, i), (jr.T, js.T))):
                nr, ns = tr.sum(axis=0), ts.sum(axis=0)
                both = (nr > 0) & (ns > 0)
                skipped[a, b] = int(np.sum((nr > 0) ^ (ns > 0)))
                diff = ts[:, both] / ns[both] - tr[:, both] / nr[both]
                cond[a, b] = float(np.sum(diff**2)) if both.any() else np.nan
    notes = []
    hit = list(zip(*np.nonzero(skipped)))
    if hit:
        shown = "; ".join(f"{columns[i]} given {columns[j]} ({skipped[i, j]})" for i, j in hit[:3])
        more = f" and {len(hit) - 3} more pairs" if len(hit) > 3 else ""
        notes.append(f"Conditional distances skip levels of the conditioning column that occur in one "
                     f"dataset only (the conditional is undefined in the other): {shown}{more}.")
    off = cond[~np.eye(m, dtype=bool)]
    off = off[~np.isnan(off)]
    marg = pd.Series(marginal, dtype=float)
    return PegsDistances(
        marginal=marg,
        conditional=pd.DataFrame(cond, index=columns, columns=columns),
        marginal_mean=float(marg.mean()) if m else float("nan"),
        conditional_mean=float(off.mean()) if off.size else float("nan"),
        skipped=pd.DataFrame(skipped, index=columns, columns=columns),
        notes=tuple(notes),
        bins=int(bins),
    )


def _joint_counts(ci: np.ndarray, cj: np.ndarray, ki: int, kj: int, buffer: np.ndarray) -> np.ndarray:
    """The ki × kj table of counts of the code pairs (ci, cj), as floats; the joint codes go in ``buffer``
    rather than in two fresh million-row arrays per pair (45 pairs at ten columns)."""
    joint = buffer[:ci.size]
    np.multiply(ci, kj, out=joint, dtype=joint.dtype)  # in the buffer's integers: small codes times kj overflow
    joint += cj
    return np.bincount(joint, minlength=ki * kj).reshape(ki, kj).astype(float)


def pegs_of(ctx) -> PegsDistances:
    """The PeGS distances both PeGS metrics of one metric context read (computed once)."""
    return ctx.cached("pegs", lambda: pegs_distances(ctx.real, ctx.synth, categorical=ctx.categorical))
