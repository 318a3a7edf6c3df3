"""Two columns at a time: correlation fit and Cramér's V.

A synthesis can get every marginal right and lose every association (the
``independent`` baseline does exactly that); these measures see it.

References
----------
The correlation-fit summary (MAE and RMSE of the lower triangle of the
difference of correlation matrices) follows the Urban Institute's synthetic
data course; Cramér's V is Cramér (1946), *Mathematical Methods of
Statistics*, §21.9.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..metric_info import Metric, register, when_missing
from .design import check_pair, column_kinds, factorize_labels

__all__ = ["CorrelationFit", "association_fit", "correlation_fit", "cramers_v", "matrix_fit"]

_METHODS = ("pearson", "spearman")

register(
    Metric(
        name="corr_mae",
        label="Correlation fit (MAE)",
        kind="utility",
        goal="minimize",
        lower=0.0,
        upper=2.0,
        best=0.0,
        reading="Mean absolute difference between real and synthetic correlations over all "
        "pairs of numeric columns; 0 same correlations, 0.1 is already a visible change.",
        section="bivariate",
        compute=lambda ctx: correlation_of(ctx).mae,
        note=when_missing(lambda ctx: " ".join(correlation_of(ctx).notes)),
    )
)
register(
    Metric(
        name="corr_rmse",
        label="Correlation fit (RMSE)",
        kind="utility",
        goal="minimize",
        lower=0.0,
        upper=2.0,
        best=0.0,
        reading="Root mean squared difference between real and synthetic correlations; "
        "above the MAE when a few pairs are far off.",
        section="bivariate",
        compute=lambda ctx: correlation_of(ctx).rmse,
        note=when_missing(lambda ctx: " ".join(correlation_of(ctx).notes)),
    )
)
register(
    Metric(
        name="cramers_v_mae",
        label="Cramér's V fit (MAE)",
        kind="utility",
        goal="minimize",
        lower=0.0,
        upper=1.0,
        best=0.0,
        reading="Mean absolute difference between real and synthetic Cramér's V over all "
        "pairs of categorical columns; 0 same strength of association.",
        section="bivariate",
        compute=lambda ctx: association_of(ctx).mae,
        note=when_missing(lambda ctx: " ".join(association_of(ctx).notes)),
    )
)


@dataclass(frozen=True)
class CorrelationFit:
    """How well the synthetic data keep the pairwise associations.

    Attributes
    ----------
    mae, rmse : float
        Mean absolute and root mean squared value of the lower triangle of
        ``difference`` (pairs where both values are defined). NaN with
        fewer than two usable columns.
    difference : DataFrame
        ``synth − real``, square and symmetric over the columns compared,
        0 on the diagonal, NaN where either matrix is undefined.
    real, synth : DataFrame
        The two association matrices.
    pairs : DataFrame
        The lower triangle as rows: ``a``, ``b``, ``real``, ``synth``,
        ``difference``.
    measure : str
        ``"pearson"``, ``"spearman"`` or ``"cramers_v"``.
    notes : tuple of str
        Why some pairs are undefined.
    """

    mae: float
    rmse: float
    difference: pd.DataFrame
    real: pd.DataFrame = field(repr=False)
    synth: pd.DataFrame = field(repr=False)
    pairs: pd.DataFrame = field(repr=False)
    measure: str = "pearson"
    notes: tuple[str, ...] = ()


def matrix_fit(real: pd.DataFrame, synth: pd.DataFrame, *, measure: str = "pearson",
               notes: Iterable[str] = ()) -> CorrelationFit:
    """Summarise two association matrices by their lower-triangle difference.

    Parameters
    ----------
    real, synth : DataFrame
        Square matrices with the same labels in the same order.
    measure : str
        Name of the association measure, kept on the result.
    notes : iterable of str
        Carried to the result.

    Returns
    -------
    CorrelationFit

    Examples
    --------
    The course example: differences 0.15, 0.65 and −0.1 give MAE 0.3.

    >>> import pandas as pd
    >>> real = pd.DataFrame([[1, .5, .2], [.5, 1, .1], [.2, .1, 1]], index=list("abc"), columns=list("abc"))
    >>> synth = real + pd.DataFrame([[0, .15, .65], [.15, 0, -.1], [.65, -.1, 0]], index=list("abc"),
    ...                             columns=list("abc"))
    >>> round(matrix_fit(real, synth).mae, 12)
    0.3
    """
    labels = list(real.index)
    diff = synth.to_numpy(dtype=float) - real.to_numpy(dtype=float)
    np.fill_diagonal(diff, 0.0)
    rows, cols = np.tril_indices(len(labels), k=-1)
    lower = diff[rows, cols]
    defined = lower[~np.isnan(lower)]
    pairs = pd.DataFrame({
        "a": pd.array([labels[i] for i in rows], dtype="str"),
        "b": pd.array([labels[j] for j in cols], dtype="str"),
        "real": real.to_numpy(dtype=float)[rows, cols],
        "synth": synth.to_numpy(dtype=float)[rows, cols],
        "difference": lower,
    })
    return CorrelationFit(
        mae=float(np.mean(np.abs(defined))) if defined.size else float("nan"),
        rmse=float(np.sqrt(np.mean(defined**2))) if defined.size else float("nan"),
        difference=pd.DataFrame(diff, index=labels, columns=labels),
        real=real,
        synth=synth,
        pairs=pairs,
        measure=measure,
        notes=tuple(notes),
    )


def _columns_of_kind(real, synth, categorical, kind: str, what: str) -> tuple[list[str], list[str]]:
    """Columns of ``kind``, and a note when there are fewer than the two a pair needs."""
    columns = check_pair(real, synth)
    kinds = column_kinds([real, synth], columns, categorical=categorical)
    chosen = [c for c, k in kinds.items() if k == kind]
    notes = []
    if len(chosen) < 2:
        notes.append(f"{what} needs two {kind} columns; there {'is' if len(chosen) == 1 else 'are'} "
                     f"{len(chosen)}.")
    return chosen, notes


def correlation_fit(
    real: pd.DataFrame,
    synth: pd.DataFrame,
    *,
    method: str = "pearson",
    categorical: Iterable[str] | None = None,
) -> CorrelationFit:
    """Difference of the correlation matrices of the numeric columns, summarised.

    Parameters
    ----------
    real, synth : DataFrame
        Confidential and synthetic data.
    method : {"pearson", "spearman"}, default "pearson"
        Correlation coefficient. Each pair uses the rows where both values
        are present (pairwise complete observations).
    categorical : iterable of str, optional
        Numeric columns to treat as categorical (left out).

    Returns
    -------
    CorrelationFit
        MAE and RMSE over the lower triangle of synth − real; a column
        constant in one dataset has undefined correlations there, which
        are left out and named in ``notes``.

    Examples
    --------
    >>> import pandas as pd
    >>> real = pd.DataFrame({"x": [1.0, 2, 3, 4], "y": [1.0, 2, 3, 5]})
    >>> fit = correlation_fit(real, real)
    >>> fit.mae, fit.rmse
    (0.0, 0.0)
    """
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
    numeric, notes = _columns_of_kind(real, synth, categorical, "numeric", "Correlation fit")
    mats = {}
    for who, frame in (("real", real), ("synthetic", synth)):
        columns = {c: _finite_or_nan(frame[c]) for c in numeric}
        values = pd.DataFrame(columns, index=frame.index, columns=numeric)
        with np.errstate(invalid="ignore", divide="ignore"):
            mats[who] = values.corr(method=method)
        flat = [c for c, x in columns.items() if _single_value(x)]
        if flat and len(numeric) > 1:
            notes.append(f"{', '.join(map(str, flat))}: constant or empty in the {who} data, so "
                         "its correlations there are undefined and left out of the fit.")
    return matrix_fit(mats["real"], mats["synthetic"], measure=method, notes=notes)


def _finite_or_nan(series: pd.Series) -> np.ndarray:
    """The column as floats, ±inf as NaN (missing to the correlation); copied only when it holds an inf."""
    x = series.to_numpy(dtype=float, na_value=np.nan)
    return x if not np.isinf(x).any() else np.where(np.isinf(x), np.nan, x)


def _single_value(x: np.ndarray) -> bool:
    """Fewer than two distinct values besides NaN (``nunique() < 2``, without hashing a million floats)."""
    ok = ~np.isnan(x)
    return np.min(x, where=ok, initial=np.inf) >= np.max(x, where=ok, initial=-np.inf)


def _contingency(x_codes: np.ndarray, y_codes: np.ndarray, nx: int, ny: int) -> np.ndarray:
    # Codes shifted by one so a missing value (-1) counts in a first row or column that is then cut off:
    # the pairs with a missing value are left out without masking and copying a million codes.
    pair = x_codes * (ny + 1)
    pair += y_codes
    pair += ny + 2  # (x + 1)(ny + 1) + (y + 1)
    flat = np.bincount(pair, minlength=(nx + 1) * (ny + 1))
    table = flat.reshape(nx + 1, ny + 1)[1:, 1:].astype(float)
    # Levels never seen among the complete pairs carry no information.
    return table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]


def _v_from_table(table: np.ndarray) -> float:
    n = table.sum()
    r, c = table.shape
    if n == 0 or min(r, c) < 2:
        return float("nan")
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / n
    chi2 = float(np.sum((table - expected) ** 2 / expected))
    return float(np.sqrt(chi2 / (n * (min(r, c) - 1))))


def cramers_v(x, y) -> float:
    """Cramér's V between two categorical samples: √(χ² / (n (min(r, c) − 1))).

    χ² is Pearson's statistic of the r × c contingency table (no continuity
    correction) over the rows where both values are present; r and c count
    the levels seen there.

    Parameters
    ----------
    x, y : array-like or Series
        Paired samples of the same length.

    Returns
    -------
    float
        In [0, 1]: 0 independent, 1 each determines the other. NaN when a
        variable takes a single value (association undefined).

    Examples
    --------
    >>> cramers_v(["a", "a", "b", "b"], ["u", "u", "v", "v"])
    1.0
    >>> cramers_v(["a", "a", "b", "b"], ["u", "v", "u", "v"])
    0.0
    """
    x = x if isinstance(x, pd.Series) else pd.Series(np.asarray(x, dtype=object))
    y = y if isinstance(y, pd.Series) else pd.Series(np.asarray(y, dtype=object))
    if len(x) != len(y):
        raise ValueError(f"x and y must have the same length, got {len(x)} and {len(y)}")
    cx, lx = factorize_labels(x, missing=None)
    cy, ly = factorize_labels(y, missing=None)
    return _v_from_table(_contingency(cx, cy, len(lx), len(ly)))


def association_fit(
    real: pd.DataFrame,
    synth: pd.DataFrame,
    *,
    categorical: Iterable[str] | None = None,
) -> CorrelationFit:
    """Difference of the Cramér's V matrices of the categorical columns, summarised.

    Parameters
    ----------
    real, synth : DataFrame
        Confidential and synthetic data.
    categorical : iterable of str, optional
        Numeric columns to treat as categorical (included).

    Returns
    -------
    CorrelationFit
        With ``measure="cramers_v"``; the diagonal of ``real`` and
        ``synth`` is 1. Pairs with a column of one level are undefined,
        left out and named in ``notes``.

    Examples
    --------
    >>> import pandas as pd
    >>> real = pd.DataFrame({"g": list("aabb"), "h": list("uuvv")})
    >>> synth = pd.DataFrame({"g": list("aabb"), "h": list("uvuv")})
    >>> association_fit(real, synth).mae
    1.0
    """
    cats, notes = _columns_of_kind(real, synth, categorical, "categorical", "Cramér's V")
    mats = {}
    for who, frame in (("real", real), ("synthetic", synth)):
        coded = [factorize_labels(frame[c], missing=None) for c in cats]
        m = np.eye(len(cats))
        for i in range(len(cats)):
            for j in range(i):
                (ci, li), (cj, lj) = coded[i], coded[j]
                m[i, j] = m[j, i] = _v_from_table(_contingency(ci, cj, len(li), len(lj)))
        # The levels are those the frame's values take (missing dropped), so fewer than two: one value.
        flat = [c for c, (_, levels) in zip(cats, coded) if len(levels) < 2]
        if flat and len(cats) > 1:
            notes.append(f"{', '.join(map(str, flat))}: a single level in the {who} data, so its "
                         "Cramér's V there is undefined and left out of the fit.")
        mats[who] = pd.DataFrame(m, index=cats, columns=cats)
    return matrix_fit(mats["real"], mats["synthetic"], measure="cramers_v", notes=notes)


def correlation_of(ctx) -> CorrelationFit:
    """The correlation fit the correlation metrics of one metric context share (computed once)."""
    return ctx.cached("correlation", lambda: correlation_fit(ctx.real, ctx.synth, categorical=ctx.categorical))


def association_of(ctx) -> CorrelationFit:
    """The Cramér's V fit of one metric context (computed once)."""
    return ctx.cached("association", lambda: association_fit(ctx.real, ctx.synth, categorical=ctx.categorical))
