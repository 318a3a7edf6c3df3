"""Design-matrix encoding shared by the propensity and regression metrics.

Both metrics turn a mixed-type frame into a float matrix the same way:
numeric columns as numbers, categorical columns as dummies with one level
dropped, and columns that add nothing to the span of the others removed, so
the number of fitted parameters ``k`` is honest (the pMSE null formula and the
regression degrees of freedom both depend on it).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import linalg
from scipy.linalg import lapack

__all__ = [
    "MISSING_LABEL",
    "Design",
    "as_labels",
    "bin_edges",
    "check_pair",
    "column_kinds",
    "factorize_labels",
    "factorized_once",
    "independent_columns",
    "level_codes",
    "propensity_design",
    "schema_categorical",
]

#: Level given to missing values of a categorical column.
MISSING_LABEL = "(missing)"

# A column is dropped as linearly dependent when, after centring and scaling to
# unit norm, less than this share of its variance is left once it is projected
# on the columns already kept (R^2 > 1 - 1e-9). Far above the rounding error
# of a Gram matrix of 1e6 rows, far below any real signal.
_DEPENDENCE_TOL = 1e-9


@dataclass(frozen=True)
class Design:
    """A float design matrix without its intercept column.

    Attributes
    ----------
    X : ndarray of shape (n_rows, n_columns)
        The encoded columns (the intercept is implicit).
    names : tuple of str
        One name per column: the column itself for a numeric variable,
        ``"col[T.level]"`` for a dummy, ``"col[missing]"`` for a missing
        indicator and ``"a:b"`` for an interaction.
    groups : tuple of str
        The variable (or ``"a:b"`` pair) each column comes from.
    """

    X: np.ndarray
    names: tuple[str, ...]
    groups: tuple[str, ...]
    #: sentences stating how the design was cut down to its term cap (shown to the user)
    reductions: tuple[str, ...] = ()

    @property
    def n_columns(self) -> int:
        """Number of columns (parameters without the intercept)."""
        return self.X.shape[1]

    def take(self, keep: Sequence[int] | np.ndarray) -> Design:
        """Return the design restricted to the columns ``keep`` (in that order)."""
        keep = np.asarray(keep, dtype=int)
        return Design(
            X=self.X[:, keep],
            names=tuple(self.names[i] for i in keep),
            groups=tuple(self.groups[i] for i in keep),
            reductions=self.reductions,
        )


def _is_numeric(series: pd.Series) -> bool:
    # Booleans are numbers to numpy but yes/no answers to the user.
    return pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(
        series.dtype
    )


def column_kinds(
    frames: Iterable[pd.DataFrame],
    columns: Sequence[str],
    *,
    categorical: Iterable[str] | None = None,
) -> dict[str, str]:
    """Classify each column as ``"numeric"`` or ``"categorical"``.

    A column is numeric only when it has a numeric, non-boolean dtype in every
    frame and is not named in ``categorical``; everything else (text, object,
    bool, category, or integer codes the user declared) is categorical.

    Parameters
    ----------
    frames : iterable of DataFrame
        The frames that will be encoded together (real and synthetic).
    columns : sequence of str
        Columns to classify; each must exist in every frame.
    categorical : iterable of str, optional
        Columns to treat as categorical whatever their dtype.

    Returns
    -------
    dict
        Column name to ``"numeric"`` or ``"categorical"``.
    """
    frames = list(frames)
    forced = set(categorical or ())
    # Names of other columns are fine (a page may pass the whole schema's
    # list for a model on a few columns); names of no column are a typo.
    present = set().union(*(set(f.columns) for f in frames)) if frames else set()
    unknown = forced - present - set(columns)
    if unknown:
        raise ValueError(
            f"categorical names columns that are not in the data: {sorted(unknown)}"
        )
    kinds = {}
    for col in columns:
        numeric = col not in forced and all(_is_numeric(f[col]) for f in frames)
        kinds[col] = "numeric" if numeric else "categorical"
    return kinds


def check_pair(real: pd.DataFrame, synth: pd.DataFrame) -> list[str]:
    """The real data's columns, after checking both are frames and synth has every one of them.

    Raises
    ------
    TypeError
        If either is not a DataFrame.
    ValueError
        If a column of ``real`` is missing from ``synth``.
    """
    for name, frame in (("real", real), ("synth", synth)):
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"{name} must be a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in real.columns if c not in synth.columns]
    if missing:
        raise ValueError(f"columns {missing} of the real data are not in the synthetic data")
    return list(real.columns)


def schema_categorical(schema, columns: Iterable[str]) -> list[str] | None:
    """Columns a schema declares categorical (None without a schema: decide by dtype)."""
    if schema is None:
        return None
    return [c for c in columns if c in schema.columns and schema[c].kind == "categorical"]


def bin_edges(finite: np.ndarray, bins: int) -> np.ndarray:
    """``bins`` equal-width bin edges over the range of ``finite`` (numpy's, when it can).

    numpy refuses a range wider than the largest float (say −1e308 to 1e308),
    and a single huge value (its ±0.5 is lost in rounding); the edges are then
    laid out over half the values and doubled, which is exact.
    """
    with np.errstate(over="ignore"):
        span = finite.max() - finite.min()
    if np.isfinite(span):
        try:
            return np.histogram_bin_edges(finite, bins=bins)
        except ValueError:
            pass  # one value near 1e308: numpy's ±0.5 around it is lost in rounding
    lo, hi = finite.min() / 2.0, finite.max() / 2.0
    pad = abs(lo) * 1e-9 if lo == hi else 0.0  # a relative pad that rounding keeps
    return 2.0 * np.linspace(lo - pad, hi + pad, bins + 1)


def _label(value) -> str:
    # Integral floats print as integers so codes 1.0 and 1 are one level.
    if isinstance(value, (float, np.floating)) and value.is_integer():
        return str(int(value))
    return str(value)


def factorize_labels(
    series: pd.Series, *, missing: str | None = MISSING_LABEL
) -> tuple[np.ndarray, list[str]]:
    """Integer codes into the sorted string levels of a categorical column.

    Labels are strings so that a level read as ``int`` in one frame and as
    ``str`` in the other is still one level, and so that levels sort;
    integral floats print as integers (codes ``1.0`` and ``1`` are the same
    level). Only the distinct values are turned into strings, which matters
    on 10^5 rows.

    Parameters
    ----------
    series : Series
        The column.
    missing : str or None, default "(missing)"
        Level for missing values; with ``None`` missing rows get code -1.

    Returns
    -------
    codes : ndarray of int
        Position of each row's level in ``levels`` (-1: missing, dropped);
        read-only, as it may be shared (see :func:`factorized_once`).
    levels : list of str
        Sorted levels.
    """
    return _once(series, ("labels", missing), lambda: _sorted_codes(series, missing))


def _sorted_codes(series: pd.Series, missing: str | None) -> tuple[np.ndarray, list[str]]:
    """The work of :func:`factorize_labels`."""
    codes, uniques = _once(series, "factorize", lambda: pd.factorize(series, use_na_sentinel=True))
    names = [_label(v) for v in np.asarray(uniques, dtype=object)]
    has_missing = missing is not None and bool((codes < 0).any())
    levels = sorted(set(names) | ({missing} if has_missing else set()))
    position = {level: i for i, level in enumerate(levels)}
    # The extra last entry is where code -1 (missing) lands.
    lookup = np.array([position[n] for n in names] + [position.get(missing, -1)], dtype=np.intp)
    out = lookup[codes]
    out.flags.writeable = False  # shared by every caller inside factorized_once
    return out, levels


_FACTORIZED: ContextVar[dict | None] = ContextVar("factorized", default=None)


def _once(series: pd.Series, what, compute):
    """``compute()``, done once per column array and ``what`` inside :func:`factorized_once`."""
    memo = _FACTORIZED.get()
    if memo is None:
        return compute()
    identity, held = _identity(series)
    if (identity, what) not in memo:
        # Holding the array keeps its identity from being another's while the memo lives.
        memo[identity, what] = (held, compute())
    return memo[identity, what][1]


def _identity(series: pd.Series) -> tuple[object, object]:
    """What the memo knows a column by, and the array that must live as long as the memo for it to hold.

    A frame keeps one array per string or nullable column, known by its id. A numpy column is wrapped in a
    new array at each access, so it is known by its memory instead: address, shape, strides and dtype of
    the frame's own ndarray.
    """
    values = series.array if isinstance(series, pd.Series) else series
    if not isinstance(values, pd.arrays.NumpyExtensionArray):
        return id(values), values
    x = values.to_numpy()  # a view of the frame's memory, not a copy
    return (x.__array_interface__["data"][0], x.shape, x.strides, x.dtype.str), x


@contextmanager
def factorized_once() -> Iterator[None]:
    """Within this block, :func:`factorize_labels` hashes each column's array once and reuses its codes in
    every later call on it (its result too).

    The Compare page's summary asks for a categorical column's codes in five places (total variation,
    Hellinger, PeGS, Cramér's V, …); hashing a million strings costs ~0.1 s each time, and mapping the
    codes onto the sorted levels a million-row pass more. A column is known by its array, a numpy column
    by its memory (see :func:`_identity`), so the frames must not change inside the block.
    """
    token = _FACTORIZED.set({})
    try:
        yield
    finally:
        _FACTORIZED.reset(token)


def as_labels(series: pd.Series, *, missing: str | None = MISSING_LABEL) -> np.ndarray:
    """The string label of each row of a categorical column.

    Parameters
    ----------
    series : Series
        The column.
    missing : str or None, default "(missing)"
        Label for missing values; ``None`` keeps them as ``None``.

    Returns
    -------
    ndarray of object
        See :func:`factorize_labels` for how values become labels.
    """
    codes, levels = factorize_labels(series, missing=missing)
    out = np.array(levels + [missing], dtype=object)
    return out[codes]


def level_codes(series: pd.Series, levels: Sequence[str]) -> np.ndarray:
    """Position of each row's label in ``levels`` (labels as :func:`factorize_labels` makes them); -1 for a
    missing value or a label not among ``levels``.

    Only the column's distinct values are looked up, so a million rows cost one factorisation rather than
    a million string comparisons.
    """
    codes, own = factorize_labels(series, missing=None)
    position = {level: i for i, level in enumerate(levels)}
    # The extra last entry is where code -1 (missing) lands.
    lookup = np.array([position.get(level, -1) for level in own] + [-1], dtype=np.intp)
    return lookup[codes]


def independent_columns(X: np.ndarray, *, tol: float = _DEPENDENCE_TOL) -> np.ndarray:
    """Indices of a maximal set of columns independent of each other and of 1.

    Columns are scanned in order and a column is kept when it is not (up to
    ``tol``) a linear combination of the intercept and the columns kept so
    far, so earlier columns win: a main effect is kept over an interaction
    that duplicates it. The test runs on the Gram matrix of the centred
    columns (p x p), which is far cheaper than a QR of the n x p data.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_columns)
        The design without intercept.
    tol : float, default 1e-9
        Share of a column's variance that must remain after projection.

    Returns
    -------
    ndarray of int
        Indices of the kept columns, increasing.
    """
    n, p = X.shape
    if p == 0 or n == 0:
        return np.arange(0)
    centred = X - X.mean(axis=0)
    gram = centred.T @ centred
    # Constant columns say nothing beyond the intercept; test them exactly on
    # the raw values, as centring leaves rounding noise behind.
    todo = np.flatnonzero(X.max(axis=0) != X.min(axis=0))
    variance = np.diag(gram)[todo]
    residual = gram[np.ix_(todo, todo)]  # Gram of the undecided columns, net of the kept ones
    keep: list[np.ndarray] = []
    while todo.size:
        # Cholesky's j-th pivot squared is column j's variance left after projecting it on the kept
        # columns and the undecided ones before it: the test of the scan, for all columns at once.
        # The first dependent column stops the block; the rest are projected on the block and scanned again.
        factor, info = lapack.dpotrf(residual, lower=1, clean=1)
        valid = todo.size if info == 0 else info - 1  # pivots past a failed one are not computed
        pivots = np.diag(factor)[:valid] ** 2
        low = np.flatnonzero(pivots <= tol * variance[:valid])
        first = int(low[0]) if low.size else valid
        keep.append(todo[:first])
        if first == todo.size:
            break
        block, rest = slice(0, first), slice(first + 1, None)
        if first:
            w = linalg.solve_triangular(factor[block, block], residual[block, rest], lower=True, check_finite=False)
            residual = residual[rest, rest] - w.T @ w
        else:
            residual = residual[rest, rest]
        todo, variance = todo[rest], variance[rest]
    return np.concatenate(keep).astype(int) if keep else np.arange(0)


def _main_effects(
    data: pd.DataFrame, kinds: dict[str, str]
) -> tuple[list[np.ndarray], list[str], list[str]]:
    columns: list[np.ndarray] = []
    names: list[str] = []
    groups: list[str] = []
    for col, kind in kinds.items():
        if kind == "numeric":
            x = data[col].to_numpy(dtype=float, na_value=np.nan)
            missing = ~np.isfinite(x)
            observed = x[~missing]
            # Scaled by a power of two first (exact): the mean and sd of numbers near
            # ±1e308 would overflow, and the standardised column does not change.
            top = float(np.abs(observed).max()) if observed.size else 0.0
            if top > 0:
                x, observed = np.ldexp(x, -math.frexp(top)[1]), np.ldexp(observed, -math.frexp(top)[1])
            fill = observed.mean() if observed.size else 0.0
            x = np.where(missing, fill, x)
            sd = x.std()
            # Standardised so products in the interaction model stay well
            # scaled; the fitted probabilities do not depend on it.
            x = (x - x.mean()) / sd if sd > 0 else x - x.mean()
            columns.append(x)
            names.append(col)
            groups.append(col)
            if missing.any():
                columns.append(missing.astype(float))
                names.append(f"{col}[missing]")
                groups.append(col)
        else:
            codes, levels = factorize_labels(data[col])
            for i, level in enumerate(levels[1:], start=1):
                columns.append((codes == i).astype(float))
                names.append(f"{col}[T.{level}]")
                groups.append(col)
    return columns, names, groups


#: Level that pooled rare levels become when the main effects exceed the term cap.
OTHER_LEVELS = "(other levels)"


def main_effect_count(data: pd.DataFrame, kinds: dict[str, str]) -> int:
    """Columns the main effects of ``data`` take (before dropping dependent ones)."""
    count = 0
    for col, kind in kinds.items():
        values = data[col]
        if kind == "numeric":
            x = values.to_numpy(dtype=float, na_value=np.nan)
            count += 1 + int(not np.isfinite(x).all())
        else:
            count += max(values.nunique(dropna=False) - 1, 0)
    return count


def _pool_rare_levels(data: pd.DataFrame, kinds: dict[str, str], max_terms: int) -> tuple[pd.DataFrame, str | None]:
    """Keep each categorical column's most frequent levels so the main effects fit in ``max_terms``."""
    if main_effect_count(data, kinds) <= max_terms:
        return data, None
    cats = [c for c, k in kinds.items() if k == "categorical"]
    if not cats:
        return data, None  # numeric columns take one or two terms each (at most 400 at 200 columns)
    fixed = main_effect_count(data, {c: k for c, k in kinds.items() if k == "numeric"})
    counts = {c: as_labels(data[c]) for c in cats}
    counts = {c: pd.Series(v).value_counts(sort=True) for c, v in counts.items()}
    # The largest number of levels per column (the pooled one included) that fits the cap.
    keep = 2
    for k in range(2, max(len(v) for v in counts.values()) + 1):
        if fixed + sum(min(len(v), k) - 1 for v in counts.values()) > max_terms:
            break
        keep = k
    pooled = {}
    for c, v in counts.items():
        if len(v) > keep:
            kept = set(v.index[: keep - 1])
            labels = as_labels(data[c])
            pooled[c] = np.where(pd.Series(labels).isin(kept).to_numpy(), labels, OTHER_LEVELS)
    note = (f"Rare levels pooled: {len(pooled)} categorical column{'s' if len(pooled) != 1 else ''} with more "
            f"than {keep} levels keep their {keep - 1} most frequent and pool the rest as {OTHER_LEVELS!r}, "
            f"so the main effects take at most {max_terms:,} terms.")
    return data.assign(**pooled), note


def propensity_design(
    data: pd.DataFrame,
    *,
    kinds: dict[str, str],
    interactions: bool = False,
    max_terms: int | None = None,
) -> Design:
    """Encode stacked real and synthetic rows for a propensity model.

    Numeric columns are mean-imputed (mean of the stacked data) with a
    missing indicator added when any value is missing, then standardised;
    categorical columns become dummies for every level but the first in
    sorted order, missing values being a level of their own. With
    ``interactions`` all pairwise products of main-effect columns from
    different variables are added. Constant and linearly dependent columns
    are dropped (see :func:`independent_columns`).

    Parameters
    ----------
    data : DataFrame
        Stacked rows (real and synthetic).
    kinds : dict
        Output of :func:`column_kinds`; its keys are the columns encoded.
    interactions : bool, default False
        Add pairwise products of main-effect columns.
    max_terms : int or None, default None
        Cap on the design's columns: beyond it each categorical column's
        rarest levels are pooled into ``"(other levels)"`` and only the first
        pairwise products (in column order) are kept. ``Design.reductions``
        states what was cut.

    Returns
    -------
    Design
    """
    reductions = []
    if max_terms is not None:
        # With interactions the main effects get a quarter of the terms, the products the rest.
        data, note = _pool_rare_levels(data, kinds, max_terms // 4 if interactions else max_terms)
        reductions += [note] if note else []
    columns, names, groups = _main_effects(data, kinds)
    if interactions and len(columns) > 1:
        room = None if max_terms is None else max(max_terms - len(columns), 0)
        sizes = pd.Series(groups).value_counts().to_numpy()
        possible = int((len(groups) ** 2 - int((sizes ** 2).sum())) // 2)  # pairs from different variables
        main = list(zip(columns, names, groups))
        added, capped = 0, False
        for i in range(len(main)):
            for j in range(i + 1, len(main)):
                if room is not None and added >= room:
                    capped = True
                    break
                (xi, ni, gi), (xj, nj, gj) = main[i], main[j]
                # Two dummies of one variable never both equal 1, and a
                # numeric column times its own missing indicator is 0.
                if gi == gj:
                    continue
                product = xi * xj
                if product.max() == product.min():
                    continue
                columns.append(product)
                names.append(f"{ni}:{nj}")
                groups.append(f"{gi}:{gj}")
                added += 1
        if capped:
            reductions.append(f"Interactions capped: {added:,} of the {possible:,} possible pairwise products "
                              f"kept (the first in column order), so the model fits at most {max_terms:,} terms.")
    n = len(data)
    X = np.column_stack(columns) if columns else np.zeros((n, 0))
    design = Design(X=X, names=tuple(names), groups=tuple(groups), reductions=tuple(reductions))
    return design.take(independent_columns(design.X))
