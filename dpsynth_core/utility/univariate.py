"""One column at a time: shared-bin histograms, ECDFs and the KS distance.

The plot helpers return tidy frames so a page only draws; binning and the
point where the KS distance is reached are decided here, once, for both
datasets alike (different bins per dataset would make the bars look alike or
different for no reason).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import DataError
from .design import MISSING_LABEL, as_labels, bin_edges, column_kinds

__all__ = ["EcdfData", "ecdf_data", "histogram_data", "ks_mean", "ks_statistic"]

def _finite(values) -> np.ndarray:
    if isinstance(values, (pd.Series, pd.Index)):
        # Nullable dtypes hold pd.NA, which numpy cannot cast to float.
        x = values.to_numpy(dtype=float, na_value=np.nan)
    else:
        x = np.asarray(values, dtype=float).ravel()
    return x[~np.isnan(x)]


def _ecdf_at(sorted_sample: np.ndarray, points: np.ndarray) -> np.ndarray:
    # side="right" counts values <= point: the right-continuous ECDF.
    return np.searchsorted(sorted_sample, points, side="right") / sorted_sample.size


def ks_statistic(a, b) -> float:
    """Two-sample Kolmogorov-Smirnov distance sup_x |F_a(x) − F_b(x)|.

    Parameters
    ----------
    a, b : array-like of float
        The two samples; NaN values are dropped.

    Returns
    -------
    float
        In [0, 1]; NaN if either sample is empty after dropping NaN.

    Examples
    --------
    >>> ks_statistic([1, 2, 3], [1, 2, 3])
    0.0
    >>> ks_statistic([1, 2], [3, 4])
    1.0
    """
    return ks_of_sorted(np.sort(_finite(a)), np.sort(_finite(b)))


def ks_of_sorted(a: np.ndarray, b: np.ndarray) -> float:
    """:func:`ks_statistic` of two samples already sorted, without NaN: for a caller that needs them sorted
    for more than the KS distance (percentiles), so each is sorted once."""
    if a.size == 0 or b.size == 0:
        return float("nan")
    # Both ECDFs are steps that only jump at sample values, so the sup is reached at one of them. One pass
    # over the pooled values in order counts, at the last of each run of equal values x, the values of a
    # and of b that are ≤ x: the right-continuous ECDFs there, as a binary search per value would (the same
    # counts, so the same quotients): a merge of two sorted runs, which a stable sort does in linear time,
    # rather than two binary searches of every value.
    pooled = np.concatenate([a, b])
    order = np.argsort(pooled, kind="stable")
    x = pooled[order]
    last = np.append(x[1:] != x[:-1], True)
    count_a = np.cumsum(order < a.size)[last]
    count_b = np.flatnonzero(last) + 1 - count_a
    return float(np.max(np.abs(count_a / a.size - count_b / b.size)))


def _check_column(real: pd.DataFrame, synth: pd.DataFrame, column: str) -> None:
    for name, frame in (("real", real), ("synth", synth)):
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"{name} must be a pandas DataFrame, got {type(frame).__name__}")
        if column not in frame.columns:
            raise ValueError(f"column {column!r} is not in the {name} data")


def _kind(real: pd.DataFrame, synth: pd.DataFrame, column: str, categorical: bool | None) -> str:
    if categorical is None:
        return column_kinds([real, synth], [column])[column]
    return "categorical" if categorical else "numeric"


def ks_mean(
    real: pd.DataFrame,
    synth: pd.DataFrame,
    *,
    categorical: Iterable[str] | None = None,
) -> float:
    """Mean KS distance over the numeric columns shared by both frames.

    Parameters
    ----------
    real, synth : DataFrame
        Confidential and synthetic data.
    categorical : iterable of str, optional
        Numeric columns to treat as categorical (left out of the mean).

    Returns
    -------
    float
        In [0, 1]; NaN when there is no numeric column (or every one is
        empty in a dataset).

    Examples
    --------
    >>> import pandas as pd
    >>> real = pd.DataFrame({"x": [1, 2], "y": [0.0, 1.0], "g": ["a", "b"]})
    >>> synth = pd.DataFrame({"x": [3, 4], "y": [0.0, 1.0], "g": ["a", "a"]})
    >>> ks_mean(real, synth)
    0.5
    """
    columns = [c for c in real.columns if c in synth.columns]
    kinds = column_kinds([real, synth], columns, categorical=categorical)
    values = [ks_statistic(real[c], synth[c]) for c, k in kinds.items() if k == "numeric"]
    values = [v for v in values if not np.isnan(v)]
    return float(np.mean(values)) if values else float("nan")


def histogram_data(
    real: pd.DataFrame,
    synth: pd.DataFrame,
    column: str,
    *,
    bins: int = 30,
    categorical: bool | None = None,
    order=None,
) -> pd.DataFrame:
    """Shares of real and synthetic rows in shared bins of one column.

    Parameters
    ----------
    real, synth : DataFrame
        Confidential and synthetic data.
    column : str
        The column to bin.
    bins : int, default 30
        Number of equal-width bins over the union range of both datasets
        (numeric columns). Must be at least 1.
    categorical : bool or None, default None
        Force the column to be treated as categorical (True) or numeric
        (False); None decides from the dtypes.
    order : sequence, optional
        Categorical columns: the declared categories, listed first in this
        order (each one even if no row has it); levels outside it follow,
        sorted. None: every level sorted.

    Returns
    -------
    DataFrame
        One row per bin, with columns ``bin`` (label), ``left`` and
        ``right`` (edges; NaN for levels), ``real_count``,
        ``synth_count``, ``real_share``, ``synth_share``. Numeric bins are
        ``[left, right)``, the last one closed. Categorical columns have one
        row per level of either dataset, sorted. A ``"(missing)"`` row is
        added when either dataset has missing values; shares are over all
        rows, so each share column sums to 1.

    Examples
    --------
    >>> import pandas as pd
    >>> real = pd.DataFrame({"g": ["a", "b", None]})
    >>> synth = pd.DataFrame({"g": ["a", "a", "c"]})
    >>> histogram_data(real, synth, "g")[["bin", "real_count", "synth_count"]]
             bin  real_count  synth_count
    0  (missing)           1            0
    1          a           1            2
    2          b           1            0
    3          c           0            1
    """
    _check_column(real, synth, column)
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)):
        raise TypeError(f"bins must be an int, got {type(bins).__name__}")
    if bins < 1:
        raise ValueError(f"bins must be at least 1, got {bins}")
    n_real, n_synth = len(real), len(synth)

    if _kind(real, synth, column, categorical) == "categorical":
        lab_real, lab_synth = as_labels(real[column]), as_labels(synth[column])
        seen = set(lab_real) | set(lab_synth)
        declared = list(dict.fromkeys(as_labels(pd.Series(list(order), dtype=object)))) if order is not None else []
        levels = declared + sorted(seen - set(declared))
        count_real = pd.Series(lab_real).value_counts().reindex(levels, fill_value=0)
        count_synth = pd.Series(lab_synth).value_counts().reindex(levels, fill_value=0)
        out = pd.DataFrame(
            {
                "bin": pd.array(levels, dtype="str"),
                "left": np.nan,
                "right": np.nan,
                "real_count": count_real.to_numpy(dtype=np.int64),
                "synth_count": count_synth.to_numpy(dtype=np.int64),
            }
        )
    else:
        try:
            x_real = real[column].to_numpy(dtype=float, na_value=np.nan)
            x_synth = synth[column].to_numpy(dtype=float, na_value=np.nan)
        except (TypeError, ValueError) as exc:
            raise DataError(
                f"Column {column!r} is not numeric; pass categorical=True to count its levels."
            ) from exc
        # Infinite values cannot be binned; they are shown as missing.
        x_real = np.where(np.isfinite(x_real), x_real, np.nan)
        x_synth = np.where(np.isfinite(x_synth), x_synth, np.nan)
        both = np.concatenate([_finite(x_real), _finite(x_synth)])
        if both.size:
            edges = bin_edges(both, int(bins))
        else:
            edges = np.array([0.0, 1.0])
        count_real = np.histogram(_finite(x_real), bins=edges)[0]
        count_synth = np.histogram(_finite(x_synth), bins=edges)[0]
        labels = [
            f"[{lo:.4g}, {hi:.4g}{']' if i == len(edges) - 2 else ')'}"
            for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:]))
        ]
        out = pd.DataFrame(
            {
                "bin": pd.array(labels, dtype="str"),
                "left": edges[:-1],
                "right": edges[1:],
                "real_count": count_real.astype(np.int64),
                "synth_count": count_synth.astype(np.int64),
            }
        )
        miss_real, miss_synth = int(np.isnan(x_real).sum()), int(np.isnan(x_synth).sum())
        if miss_real or miss_synth:
            missing_row = pd.DataFrame(
                {
                    "bin": pd.array([MISSING_LABEL], dtype="str"),
                    "left": [np.nan],
                    "right": [np.nan],
                    "real_count": [miss_real],
                    "synth_count": [miss_synth],
                }
            )
            out = pd.concat([out, missing_row], ignore_index=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["real_share"] = out["real_count"] / n_real if n_real else np.nan
        out["synth_share"] = out["synth_count"] / n_synth if n_synth else np.nan
    return out


@dataclass(frozen=True)
class EcdfData:
    """Both empirical CDFs of one column and where they differ most.

    Attributes
    ----------
    table : DataFrame
        Columns ``x`` (the sorted distinct values of both datasets),
        ``real`` and ``synth`` (each ECDF at ``x``, right-continuous, so a
        step plot with ``shape="hv"`` draws it).
    ks : float
        The KS distance, max |real − synth| over ``table``.
    x_at_max : float
        The value where that distance is reached (the first, if several).
    real_at_max, synth_at_max : float
        The two ECDF heights there, to draw the KS segment.
    """

    table: pd.DataFrame
    ks: float
    x_at_max: float
    real_at_max: float
    synth_at_max: float


def ecdf_data(real: pd.DataFrame, synth: pd.DataFrame, column: str) -> EcdfData:
    """Empirical CDFs of a numeric column in both datasets.

    Parameters
    ----------
    real, synth : DataFrame
        Confidential and synthetic data.
    column : str
        A numeric column; NaN values are dropped.

    Returns
    -------
    EcdfData

    Raises
    ------
    DataError
        If the column is not numeric or has no value in either dataset.

    Examples
    --------
    >>> import pandas as pd
    >>> e = ecdf_data(pd.DataFrame({"x": [1, 2, 3]}), pd.DataFrame({"x": [2, 3, 4]}), "x")
    >>> e.ks, e.x_at_max, e.real_at_max, e.synth_at_max  # doctest: +ELLIPSIS
    (0.333..., 1.0, 0.333..., 0.0)
    """
    _check_column(real, synth, column)
    if column_kinds([real, synth], [column])[column] != "numeric":
        raise DataError(f"Column {column!r} is categorical; an ECDF needs a numeric column.")
    a = np.sort(_finite(real[column].to_numpy(dtype=float, na_value=np.nan)))
    b = np.sort(_finite(synth[column].to_numpy(dtype=float, na_value=np.nan)))
    if a.size == 0 or b.size == 0:
        raise DataError(f"Column {column!r} has no values in one of the datasets.")
    x = np.unique(np.concatenate([a, b]))
    f_real, f_synth = _ecdf_at(a, x), _ecdf_at(b, x)
    gap = np.abs(f_real - f_synth)
    # Ties in exact arithmetic can differ in the last bit (2/3 - 1/3 vs 1/3);
    # take the first point within rounding of the maximum.
    i = int(np.flatnonzero(gap >= gap.max() - 1e-12)[0])
    return EcdfData(
        table=pd.DataFrame({"x": x, "real": f_real, "synth": f_synth}),
        ks=float(gap[i]),
        x_at_max=float(x[i]),
        real_at_max=float(f_real[i]),
        synth_at_max=float(f_synth[i]),
    )
