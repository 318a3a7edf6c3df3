"""One column at a time, as numbers: distances, moments, percentiles, missing shares.

:mod:`.univariate` gives the plot data (histograms, ECDFs); this module the
tables a statistician reads beside them. Every gap is explained: a value
that cannot be computed is NaN *and* has a row in the notes saying why, so
the page never shows a silent hole.

Conventions
-----------
- Categorical distances (total variation, Hellinger) compare the shares of
  every level of either dataset, missing values being a level of their own
  (as in :func:`~dpsynth_core.utility.univariate.histogram_data`), so a
  synthesis that loses or invents missing values is charged for it.
- Numeric statistics use the finite values only; the share of missing
  values is reported apart (:func:`missing_shares`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..metric_info import Metric, register
from .design import check_pair, column_kinds, factorize_labels
from .univariate import ks_of_sorted

__all__ = [
    "MOMENT_PERCENTILES",
    "ColumnComparison",
    "column_distances",
    "compare_columns",
    "hellinger_distance",
    "missing_shares",
    "moments_table",
    "special_value_shares",
    "share_vectors",
    "tv_distance",
]

#: Percentiles reported by :func:`moments_table` by default.
MOMENT_PERCENTILES = (1, 5, 25, 50, 75, 95, 99)

register(
    Metric(
        name="ks_mean",
        label="Mean KS",
        kind="utility",
        goal="minimize",
        lower=0.0,
        upper=1.0,
        best=0.0,
        reading="Average over numeric columns of the largest gap between the real and "
        "synthetic cumulative distributions; 0 means identical marginals.",
        section="marginals",
        compute=lambda ctx: _nanmean(_ks_of(ctx)),
        note="No numeric column to compare.",
        headline=True,
    )
)
register(
    Metric(
        name="tv_mean",
        label="Mean TV distance",
        kind="utility",
        goal="minimize",
        lower=0.0,
        upper=1.0,
        best=0.0,
        reading="Average over categorical columns of half the summed gaps between real and "
        "synthetic level shares; 0 same shares, 1 no level in common.",
        section="marginals",
        compute=lambda ctx: _nanmean(distances_of(ctx)["tv"]),
        note="No categorical column to compare.",
        headline=True,
    )
)
register(
    Metric(
        name="hellinger_mean",
        label="Mean Hellinger",
        kind="utility",
        goal="minimize",
        lower=0.0,
        upper=1.0,
        best=0.0,
        reading="Average over categorical columns of the Hellinger distance between level "
        "shares; 0 same shares, 1 no level in common; weighs rare levels more than TV.",
        section="marginals",
        compute=lambda ctx: _nanmean(distances_of(ctx)["hellinger"]),
        note="No categorical column to compare.",
    )
)


# ------------------------------------------------------------ categorical


def share_vectors(a, b) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Shares of every level of two categorical samples, on their union of levels.

    Parameters
    ----------
    a, b : array-like or Series
        The two samples. Missing values are the level ``"(missing)"``;
        values are compared as labels (``1`` and ``1.0`` are one level).

    Returns
    -------
    levels : list of str
        Sorted union of the levels.
    p, q : ndarray of float
        Share of each level in ``a`` and in ``b`` (each sums to 1); NaN
        when the sample is empty.

    Examples
    --------
    >>> share_vectors(["x", "y", "y", "y"], ["y", "z"])
    (['x', 'y', 'z'], array([0.25, 0.75, 0.  ]), array([0. , 0.5, 0.5]))
    """
    ca, la = factorize_labels(pd.Series(np.asarray(a, dtype=object)) if not isinstance(a, pd.Series) else a)
    cb, lb = factorize_labels(pd.Series(np.asarray(b, dtype=object)) if not isinstance(b, pd.Series) else b)
    levels = sorted(set(la) | set(lb))
    pos = {lev: i for i, lev in enumerate(levels)}
    out = []
    for codes, own in ((ca, la), (cb, lb)):
        counts = np.bincount(codes, minlength=len(own)).astype(float)
        shares = np.zeros(len(levels))
        shares[[pos[lev] for lev in own]] = counts
        total = shares.sum()
        out.append(shares / total if total else np.full(len(levels), np.nan))
    return levels, out[0], out[1]


def tv_distance(a, b) -> float:
    """Total variation distance ½ Σ |p(x) − q(x)| between two categorical samples.

    Parameters
    ----------
    a, b : array-like or Series
        The two samples (see :func:`share_vectors` for levels and missing
        values).

    Returns
    -------
    float
        In [0, 1]: 0 for equal shares, 1 when no level is shared. NaN when
        a sample is empty.

    Examples
    --------
    >>> tv_distance(["x", "y", "y", "y"], ["y", "z"])
    0.5
    """
    return _tv(*share_vectors(a, b)[1:])


def _tv(p: np.ndarray, q: np.ndarray) -> float:
    return float(0.5 * np.abs(p - q).sum()) if p.size else float("nan")


def hellinger_distance(a, b) -> float:
    """Hellinger distance √(½ Σ (√p(x) − √q(x))²) between two categorical samples.

    Scaled to [0, 1] (the ½ inside the root); some texts leave it out and
    get [0, √2]. Equal to √(1 − Σ √(p q)).

    Parameters
    ----------
    a, b : array-like or Series
        The two samples (see :func:`share_vectors`).

    Returns
    -------
    float
        In [0, 1]; NaN when a sample is empty.

    Examples
    --------
    >>> round(hellinger_distance(["x", "y"], ["x", "x"]), 6)
    0.541196
    """
    return _hellinger(*share_vectors(a, b)[1:])


def _hellinger(p: np.ndarray, q: np.ndarray) -> float:
    if not p.size:
        return float("nan")
    return float(np.sqrt(0.5 * np.sum((np.sqrt(p) - np.sqrt(q)) ** 2)))


# ---------------------------------------------------------------- numeric


def _finite(series: pd.Series) -> np.ndarray:
    x = series.to_numpy(dtype=float, na_value=np.nan)
    return x[np.isfinite(x)]


@dataclass(frozen=True)
class _Sample:
    """A numeric column's finite values in one dataset, in row order and sorted.

    The KS distance, the percentiles and the test for a constant column all read the sorted copy, so the
    column is read and sorted once for the three; the moments' sums read the row order, as they always did
    (a sum's rounding depends on its order).
    """

    values: np.ndarray
    ordered: np.ndarray


def _samples(real: pd.DataFrame, synth: pd.DataFrame, kinds: dict[str, str]) -> dict[tuple[str, str], _Sample]:
    """The :class:`_Sample` of every numeric column of ``kinds`` in each dataset, keyed (column, "real" or
    "synthetic")."""
    out = {}
    for col, kind in kinds.items():
        if kind == "numeric":
            for who, frame in (("real", real), ("synthetic", synth)):
                x = _finite(frame[col])
                out[col, who] = _Sample(x, np.sort(x))
    return out


def _moments(sample: _Sample, percentiles: Sequence[float]) -> dict[str, float]:
    x = sample.values
    n = x.size
    out = {"n": float(n)}
    if n == 0:
        out.update(mean=np.nan, sd=np.nan, skewness=np.nan, kurtosis=np.nan, zero_share=np.nan)
        out.update({f"p{q:g}": np.nan for q in percentiles})
        return out
    mean = x.mean()
    dev = x - mean
    # Products, not **: numpy's float power is several times slower.
    dev2 = dev * dev
    m2 = dev2.mean()
    # Moment ratios g1 = m3/m2^1.5 and g2 = m4/m2^2 - 3 (scipy.stats.skew and
    # kurtosis with their defaults); undefined for a constant column. The
    # relative test catches a column whose deviations are rounding noise.
    spread = m2 > (np.finfo(float).eps * max(abs(mean), 1.0)) ** 2
    out.update(mean=float(mean), sd=float(np.sqrt(dev2.sum() / (n - 1))) if n > 1 else np.nan,
               zero_share=float(np.mean(x == 0)), skewness=np.nan, kurtosis=np.nan)
    if spread:
        # The third and fourth powers overwrite the deviations: a million-row column's fresh memory costs
        # more than its products.
        m3 = np.multiply(dev2, dev, out=dev).mean()
        m4 = np.multiply(dev2, dev2, out=dev).mean()
        out.update(skewness=float(m3 / m2**1.5), kurtosis=float(m4 / m2**2 - 3.0))
    values = np.percentile(sample.ordered, list(percentiles))  # the same order statistics, found at once
    out.update({f"p{q:g}": float(v) for q, v in zip(percentiles, values)})
    return out


def _numeric_gap(sample: _Sample, who: str) -> str | None:
    """Why the moments of a column cannot all be computed, or None."""
    x = sample.ordered
    if x.size == 0:
        return f"no values in the {who} data (all missing): KS and moments not computed"
    if x.size == 1:
        return f"one value in the {who} data: sd, skewness and kurtosis undefined"
    if x[0] == x[-1]:  # sorted: every value equal
        return f"constant in the {who} data: skewness and kurtosis undefined"
    return None


def moments_table(
    real: pd.DataFrame,
    synth: pd.DataFrame,
    *,
    categorical: Iterable[str] | None = None,
    percentiles: Sequence[float] = MOMENT_PERCENTILES,
) -> pd.DataFrame:
    """Moments, percentiles and share of zeros of every numeric column, real beside synthetic.

    Parameters
    ----------
    real, synth : DataFrame
        Confidential and synthetic data; the real data's columns are used.
    categorical : iterable of str, optional
        Numeric columns to treat as categorical (left out).
    percentiles : sequence of float, default (1, 5, 25, 50, 75, 95, 99)
        Percentiles in [0, 100], linear interpolation (numpy's default,
        R's type 7).

    Returns
    -------
    DataFrame
        Indexed by (``column``, ``data``) with ``data`` in
        {"real", "synthetic"}; columns ``n`` (finite values), ``mean``,
        ``sd`` (n − 1 in the denominator), ``skewness`` (g1 = m3/m2^1.5),
        ``kurtosis`` (excess, g2 = m4/m2² − 3: 0 for a normal),
        ``zero_share`` (share of finite values equal to 0) and one column
        ``p<q>`` per percentile. NaN where undefined (see
        :func:`compare_columns` for the reasons).

    Examples
    --------
    >>> import pandas as pd
    >>> t = moments_table(pd.DataFrame({"x": [0.0, 1.0, 2.0]}), pd.DataFrame({"x": [1.0, 1.0, 4.0]}),
    ...                   percentiles=(50,))
    >>> t.loc[("x", "real"), ["mean", "sd", "zero_share", "p50"]].tolist()
    [1.0, 1.0, 0.3333333333333333, 1.0]
    """
    columns = check_pair(real, synth)
    kinds = column_kinds([real, synth], columns, categorical=categorical)
    return _moments_table(_samples(real, synth, kinds), percentiles)


def _moments_table(samples: dict[tuple[str, str], _Sample], percentiles: Sequence[float]) -> pd.DataFrame:
    """:func:`moments_table` of the samples of :func:`_samples`."""
    percentiles = [float(q) for q in percentiles]
    if any(not 0.0 <= q <= 100.0 for q in percentiles):
        raise ValueError(f"percentiles must be in [0, 100], got {percentiles}")
    rows = [_moments(sample, percentiles) for sample in samples.values()]
    index = list(samples)
    names = ["n", "mean", "sd", "skewness", "kurtosis", "zero_share"] + [f"p{q:g}" for q in percentiles]
    out = pd.DataFrame(rows, columns=names, index=pd.MultiIndex.from_tuples(index, names=["column", "data"])
                       if index else pd.MultiIndex.from_arrays([[], []], names=["column", "data"]))
    out["n"] = out["n"].astype(np.int64)
    return out


def missing_shares(real: pd.DataFrame, synth: pd.DataFrame) -> pd.DataFrame:
    """Share of missing values in each column, real beside synthetic.

    Missing means NaN/None/NA, and for numeric columns also ±inf (values no
    statistic here can use).

    Returns
    -------
    DataFrame
        Indexed by column: ``real``, ``synthetic`` and ``difference``
        (synthetic − real). NaN for a dataset with no rows.

    Examples
    --------
    >>> import pandas as pd
    >>> missing_shares(pd.DataFrame({"a": [1.0, None]}), pd.DataFrame({"a": [1.0, 2.0]}))
       real  synthetic  difference
    a   0.5        0.0        -0.5
    """
    columns = check_pair(real, synth)

    def share(frame: pd.DataFrame, col: str) -> float:
        if len(frame) == 0:
            return float("nan")
        s = frame[col]
        miss = s.isna().to_numpy().copy()
        if pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype):
            miss |= ~np.isfinite(s.to_numpy(dtype=float, na_value=np.nan))
        return float(miss.mean())

    out = pd.DataFrame(
        {"real": [share(real, c) for c in columns], "synthetic": [share(synth, c) for c in columns]},
        index=pd.Index(columns, name="column"),
    )
    out["difference"] = out["synthetic"] - out["real"]
    out.index.name = None
    return out


def special_value_shares(real: pd.DataFrame, synth: pd.DataFrame, schema) -> pd.DataFrame:
    """Each special value's share of its column, real beside synthetic: the point masses (0 hours
    worked, a code such as −8) that the schema gives a cell of their own.

    A share counts every row, missing ones included, as the missing shares do.

    Returns
    -------
    DataFrame
        One row per modelled column and special value: ``column``, ``value``, ``real``,
        ``synthetic`` and ``difference`` (synthetic − real); no rows without special values.

    Examples
    --------
    >>> import pandas as pd
    >>> from dpsynth_core.schema import Schema
    >>> s = Schema.from_dict({"h": {"kind": "numeric", "bounds": [0, 9], "specials": [0]}})
    >>> special_value_shares(pd.DataFrame({"h": [0, 0, 3, 5]}), pd.DataFrame({"h": [0, 2, 3, 5]}), s)
      column  value  real  synthetic  difference
    0      h    0.0   0.5       0.25       -0.25
    """
    rows = []
    for col in schema.used:
        if col not in real.columns or col not in synth.columns:
            continue
        for value in schema[col].specials:
            shares = [float((pd.to_numeric(f[col], errors="coerce") == value).mean()) if len(f) else float("nan")
                      for f in (real, synth)]
            rows.append({"column": col, "value": value, "real": shares[0], "synthetic": shares[1],
                         "difference": shares[1] - shares[0]})
    return pd.DataFrame(rows, columns=["column", "value", "real", "synthetic", "difference"])


# ------------------------------------------------------------- per column


def _distances(real: pd.DataFrame, synth: pd.DataFrame, kinds: dict[str, str],
               samples: dict[tuple[str, str], _Sample]):
    """The distance table and its notes; ``samples`` holds every numeric column's (see :func:`_samples`)."""
    # Notes for numeric columns come from compare_columns, which sees why.
    rows, notes = [], []
    for col, kind in kinds.items():
        if kind == "numeric":
            ks = ks_of_sorted(samples[col, "real"].ordered, samples[col, "synthetic"].ordered)
            rows.append((col, kind, ks, np.nan, np.nan))
        else:
            if len(real) == 0 or len(synth) == 0:
                tv = hel = np.nan
                notes.append((col, "TV, Hellinger", "a dataset has no rows"))
            else:
                shares = share_vectors(real[col], synth[col])[1:]  # once for both distances
                tv, hel = _tv(*shares), _hellinger(*shares)
            rows.append((col, kind, np.nan, tv, hel))
    table = pd.DataFrame(rows, columns=["column", "kind", "ks", "tv", "hellinger"]).set_index("column")
    table.index.name = None
    return table, notes


def column_distances(
    real: pd.DataFrame,
    synth: pd.DataFrame,
    *,
    categorical: Iterable[str] | None = None,
) -> pd.DataFrame:
    """Distance between real and synthetic marginals, one row per column.

    Parameters
    ----------
    real, synth : DataFrame
        Confidential and synthetic data; the real data's columns are used
        and must all be in ``synth``.
    categorical : iterable of str, optional
        Numeric columns to treat as categorical (integer codes).

    Returns
    -------
    DataFrame
        Indexed by column name, with ``ks`` (Kolmogorov-Smirnov distance,
        numeric columns, NaN values dropped), ``tv`` (total variation) and
        ``hellinger`` (categorical columns, missing as a level). NaN where
        a distance does not apply to the column's kind, or cannot be
        computed (:func:`compare_columns` says why).

    Examples
    --------
    >>> import pandas as pd
    >>> real = pd.DataFrame({"x": [1.0, 2.0], "g": ["a", "b"]})
    >>> synth = pd.DataFrame({"x": [3.0, 4.0], "g": ["a", "a"]})
    >>> column_distances(real, synth)[["ks", "tv"]]
        ks   tv
    x  1.0  NaN
    g  NaN  0.5
    """
    columns = check_pair(real, synth)
    kinds = column_kinds([real, synth], columns, categorical=categorical)
    return _distances(real, synth, kinds, _samples(real, synth, kinds))[0][["ks", "tv", "hellinger"]]


@dataclass(frozen=True)
class ColumnComparison:
    """Everything the Compare page shows about single columns.

    Attributes
    ----------
    distances : DataFrame
        Indexed by column: ``kind``, ``ks``, ``tv``, ``hellinger`` (see
        :func:`column_distances`).
    moments : DataFrame
        :func:`moments_table`.
    missing : DataFrame
        :func:`missing_shares`.
    notes : DataFrame
        One row per value that could not be computed: ``column``,
        ``metric``, ``reason``. Empty when nothing is missing.
    """

    distances: pd.DataFrame
    moments: pd.DataFrame
    missing: pd.DataFrame
    notes: pd.DataFrame

    @property
    def tv_mean(self) -> float:
        """Mean TV distance over categorical columns (NaN if none)."""
        return _nanmean(self.distances["tv"])

    @property
    def hellinger_mean(self) -> float:
        """Mean Hellinger distance over categorical columns (NaN if none)."""
        return _nanmean(self.distances["hellinger"])

    @property
    def ks_mean(self) -> float:
        """Mean KS distance over numeric columns (NaN if none)."""
        return _nanmean(self.distances["ks"])


def _nanmean(values: pd.Series) -> float:
    v = values.to_numpy(dtype=float)
    v = v[~np.isnan(v)]
    return float(v.mean()) if v.size else float("nan")


def compare_columns(
    real: pd.DataFrame,
    synth: pd.DataFrame,
    *,
    categorical: Iterable[str] | None = None,
    percentiles: Sequence[float] = MOMENT_PERCENTILES,
) -> ColumnComparison:
    """Distances, moments and missing shares of every column, with a note for every gap.

    Parameters
    ----------
    real, synth : DataFrame
        Confidential and synthetic data.
    categorical : iterable of str, optional
        Numeric columns to treat as categorical.
    percentiles : sequence of float
        Passed to :func:`moments_table`.

    Returns
    -------
    ColumnComparison

    Examples
    --------
    >>> import pandas as pd
    >>> real = pd.DataFrame({"x": [1.0, 2.0, 3.0]})
    >>> synth = pd.DataFrame({"x": [2.0, 2.0, 2.0]})
    >>> compare_columns(real, synth).notes.loc[0, "reason"]
    'constant in the synthetic data: skewness and kurtosis undefined'
    """
    columns = check_pair(real, synth)
    kinds = column_kinds([real, synth], columns, categorical=categorical)
    # One column at a time: its samples are read and sorted once for KS, moments and notes, then dropped.
    # Held for every column at once they took 16 bytes a row per numeric column and dataset, 144 MiB on a
    # 675,000-row table with 7 numeric columns (bench/bench_memory.py measures the Compare page). The
    # tables and notes come out the same, in the same order.
    distances, moments, notes, gaps = [], [], [], []
    for col, kind in kinds.items():
        samples = _samples(real, synth, {col: kind})
        table, found = _distances(real, synth, {col: kind}, samples)
        distances.append(table)
        notes += found
        for (name, who), sample in samples.items():
            reason = _numeric_gap(sample, who)
            if reason:
                gaps.append((name, "KS, moments" if sample.values.size == 0 else "moments", reason))
        if samples:
            moments.append(_moments_table(samples, percentiles))
    return ColumnComparison(
        distances=pd.concat(distances) if distances else _distances(real, synth, {}, {})[0],
        moments=pd.concat(moments) if moments else _moments_table({}, percentiles),
        missing=missing_shares(real, synth),
        notes=pd.DataFrame(notes + gaps, columns=["column", "metric", "reason"]),
    )


# ----------------------------------------------------------- metric context


def distances_of(ctx) -> pd.DataFrame:
    """Per-column KS, TV and Hellinger distances, shared by the marginal metrics of one
    :class:`~dpsynth_core.metric_info.MetricContext` (a caller holding a :class:`ColumnComparison` puts its
    ``distances`` in ``ctx.shared["distances"]``)."""
    return ctx.cached("distances", lambda: column_distances(ctx.real, ctx.synth, categorical=ctx.categorical))


def _ks_of(ctx) -> pd.Series:
    """The KS column of :func:`distances_of`; when no caller shared the full table, computed for the numeric
    columns alone (the R-U map's default asks for KS only, and TV and Hellinger cost as much again)."""
    if "distances" in ctx.shared:
        return ctx.shared["distances"]["ks"]

    def numeric_only():
        columns = check_pair(ctx.real, ctx.synth)
        kinds = column_kinds([ctx.real, ctx.synth], columns, categorical=ctx.categorical)
        numeric = {c: k for c, k in kinds.items() if k == "numeric"}
        return _distances(ctx.real, ctx.synth, numeric, _samples(ctx.real, ctx.synth, numeric))[0]["ks"]
    return ctx.cached("ks", numeric_only)
