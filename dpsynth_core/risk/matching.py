"""Identity disclosure of a row-linked release by matching on key variables.

An intruder who knows some key variables of a confidential record looks for
released records with the same keys (Reiter & Mitra 2009; docs/methods.md#match-rates-row-linked-releases).
The measures only make sense when released row j *is* the released version
of confidential row j (partially synthetic data, or any traditional SDC
release); for fully synthetic data identity matching is ill-defined.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Real

import numpy as np
import pandas as pd
from scipy.spatial import cKDTree

from ..errors import DataError
from ..metric_info import Metric, register
from ._base import as_float, check_frame, combine_codes, is_numeric, shared_codes
from .estimate import CONFIDENCE, RiskEstimate, wilson_interval
from .reference import column_domain, hit_probability

__all__ = ["MatchRates", "MatchRisk", "match_rates", "match_risk", "match_table"]

# Decimal data live in binary floats: 1.1 - 1.0 is 0.10000000000000009, so a
# tolerance of 0.1 typed by a person would miss that pair. Differences may
# exceed the tolerance by this relative amount, far below any real precision.
_TOLERANCE_SLACK = 1e-9

# Groups of exact keys become one more coordinate of the KD-tree, spaced
# further apart than the search radius (1 + slack) so groups never match.
_GROUP_SPACING = 3.0


@dataclass(frozen=True, kw_only=True, eq=False)  # eq=False: a DataFrame field has no truth value
class MatchRates:
    """Match-based identity disclosure risk of a row-linked release.

    Attributes
    ----------
    expected : float
        Expected number of correct matches, ``sum_j T_j / c_j``.
    expected_share : float
        ``expected / n``, in [0, 1].
    true_rate : float
        ``#{j : c_j = 1, T_j = 1} / n``, in [0, 1].
    false_rate : float
        ``#{j : c_j = 1, T_j = 0} / #{j : c_j = 1}``, in [0, 1]; NaN when no
        record has a unique match.
    n : int
        Number of confidential records.
    per_record : pandas.DataFrame
        One row per confidential record (same index) with columns ``c``
        (number of released records matching its keys, may be 0) and ``T``
        (1 if its own released record is among them, else 0).
    """

    expected: float
    expected_share: float
    true_rate: float
    false_rate: float
    n: int
    per_record: pd.DataFrame


def match_rates(
    confidential: pd.DataFrame,
    released: pd.DataFrame,
    keys: Sequence[str] | str,
    *,
    tolerance: float | Mapping[str, float] | None = None,
) -> MatchRates:
    """Expected, true and false match rates of an intruder matching on keys.

    For each confidential record j the intruder knows its ``keys`` and finds
    the ``c_j`` released records that match them; ``T_j = 1`` when released
    record j (the true one) is among them. A record with ``c_j = 0`` has
    ``T_j = 0`` and adds nothing to the expected matches.

    Parameters
    ----------
    confidential : pandas.DataFrame
        The confidential data, n rows.
    released : pandas.DataFrame
        The released data, linked by position: row j is the released version
        of confidential row j. Must have n rows.
    keys : str or sequence of str
        Key variables the intruder knows. Must be columns of both frames.
        Categorical keys (anything not int/float) match exactly, with a
        missing value matching a missing value.
    tolerance : float, dict of str to float, or None, default=None
        ``None``: numeric keys match exactly too. A float: every numeric key
        matches when ``|difference| <= tolerance``. A dict: tolerances per
        numeric key; keys not named match exactly. Must be finite and >= 0.
        Differences may exceed a tolerance by a relative 1e-9 so that decimal
        data match as written (1.1 vs 1.0 within 0.1). With a tolerance a
        missing value matches only a missing value.

    Returns
    -------
    MatchRates
        The rates and the per-record ``c_j`` and ``T_j``.

    Raises
    ------
    DataError
        If the frames differ in length or are empty.
    ValueError
        If a key is missing from a frame or a tolerance is invalid.

    References
    ----------
    .. [1] Reiter, J. P. and Mitra, R. (2009). Estimating risks of
       identification disclosure in partially synthetic data. Journal of
       Privacy and Confidentiality 1(1).

    Examples
    --------
    >>> import pandas as pd
    >>> conf = pd.DataFrame({"sex": ["f", "f", "m"], "age": [30, 30, 41]})
    >>> rel = pd.DataFrame({"sex": ["f", "f", "m"], "age": [30, 30, 40]})
    >>> r = match_rates(conf, rel, ["sex", "age"])
    >>> r.per_record["c"].tolist(), r.expected, r.true_rate
    ([2, 2, 0], 1.0, 0.0)
    >>> match_rates(conf, rel, ["sex", "age"], tolerance=1).true_rate
    0.3333333333333333
    """
    check_frame(confidential, "confidential")
    check_frame(released, "released")
    keys = _check_keys(keys, confidential, released)
    n = len(confidential)
    if len(released) != n:
        raise DataError(
            f"Match rates need a row-linked release, but the confidential data have {n} rows and the "
            f"released data {len(released)}; compare a partially synthetic release of the same rows."
        )
    if n == 0:
        raise DataError("Match rates need at least one confidential record; load data with rows.")
    numeric = [k for k in keys if is_numeric(confidential[k]) and is_numeric(released[k])]
    tolerances = _check_tolerance(tolerance, keys, numeric)

    near = [k for k in numeric if tolerances.get(k, 0.0) > 0]
    exact = [k for k in keys if k not in near]
    columns = [np.concatenate(shared_codes([confidential[k], released[k]])) for k in exact]
    scaled = {}
    for k in near:
        values = np.concatenate([as_float(confidential[k], k), as_float(released[k], k)])
        missing = np.isnan(values)
        # A missing value matches only a missing value: missingness joins the
        # exact keys, and the value itself is parked at 0.
        columns.append(missing.astype(np.int64))
        scaled[k] = np.where(missing, 0.0, values) / tolerances[k]
    group = combine_codes(columns, 2 * n)

    radius = 1.0 + _TOLERANCE_SLACK  # in units of each key's tolerance
    if not near:
        # Exact matching: c_j is the size of record j's key group in the release.
        c = np.bincount(group[n:], minlength=int(group.max()) + 1)[group[:n]]
        t = group[:n] == group[n:]
    elif len(near) == 1:
        c, t = _count_in_window(group, scaled[near[0]], n, radius)
    else:
        points = np.column_stack([group * _GROUP_SPACING, *scaled.values()])
        # Sliding-midpoint splits cope better with the many tied group values.
        tree = cKDTree(points[n:], balanced_tree=False)
        c = tree.query_ball_point(points[:n], r=radius, p=np.inf, return_length=True, workers=-1)
        t = np.abs(points[:n] - points[n:]).max(axis=1) <= radius

    c = np.asarray(c, dtype=np.int64)
    t = t.astype(np.int64)
    unique = c == 1
    expected = float(np.sum(t[c > 0] / c[c > 0]))
    n_unique = int(unique.sum())
    return MatchRates(
        expected=expected,
        expected_share=expected / n,
        true_rate=float(np.sum(unique & (t == 1))) / n,
        false_rate=float(np.sum(unique & (t == 0))) / n_unique if n_unique else math.nan,
        n=n,
        per_record=pd.DataFrame({"c": c, "T": t}, index=confidential.index),
    )


def match_table(confidential: pd.DataFrame, rates: MatchRates, keys: Sequence[str] | str) -> pd.DataFrame:
    """The per-record breakdown for people: keys, ``c_j``, whether ``T_j`` and the record's risk.

    One row per confidential record, riskiest first (largest ``T_j / c_j``,
    then fewest matches), with its key values and the columns ``matches
    (c_j)``, ``own row among them (T_j)`` (bool) and ``risk (T_j / c_j)``.
    """
    keys = [keys] if isinstance(keys, str) else list(keys)
    c, t = rates.per_record["c"].to_numpy(), rates.per_record["T"].to_numpy()
    risk = np.divide(t, c, out=np.zeros(len(c)), where=c > 0)
    table = pd.DataFrame({f"key: {k}": confidential[k].to_numpy() for k in keys}, index=confidential.index)
    table["matches (c_j)"] = c
    table["own row among them (T_j)"] = t.astype(bool)
    table["risk (T_j / c_j)"] = risk
    order = np.lexsort((np.where(c > 0, c, np.iinfo(np.int64).max), -risk))
    return table.iloc[order]


@dataclass(frozen=True, kw_only=True, eq=False)
class MatchRisk:
    """Match rates with their references (see :func:`match_risk`)."""

    rates: MatchRates
    original: MatchRates
    table: pd.DataFrame
    estimates: dict[str, RiskEstimate]


def match_risk(
    confidential: pd.DataFrame,
    released: pd.DataFrame,
    keys: Sequence[str] | str,
    *,
    tolerance: float | Mapping[str, float] | None = None,
    schema: object = None,
    confidence: float = CONFIDENCE,
) -> MatchRisk:
    """Match rates of a row-linked release next to the original data and random data.

    The original reference is the same intruder against the confidential
    data released as is (the expected match rate is then the number of
    distinct key combinations over n). The baseline is a release of random
    data within the public domain, row-linked like the real one: if record
    j's keys are hit by a random row with probability pi_j (a product over
    keys of :func:`~dpsynth_core.risk.reference.hit_probability`), then
    ``E[T_j / c_j] = (1 - (1 - pi_j)^n) / n`` and
    ``P(c_j = 1, T_j = 1) = pi_j (1 - pi_j)^(n - 1)``, exactly. Intervals are
    Wilson's (conservative for the expected rate, a mean of values in [0, 1]).
    """
    rates = match_rates(confidential, released, keys, tolerance=tolerance)
    keys = [keys] if isinstance(keys, str) else list(keys)
    original = match_rates(confidential, confidential, keys, tolerance=tolerance)
    numeric = [k for k in keys if is_numeric(confidential[k]) and is_numeric(released[k])]
    tolerances = _check_tolerance(tolerance, keys, numeric)
    n = rates.n
    pi = np.ones(n)
    for k in keys:
        pi = pi * hit_probability(confidential[k], column_domain(k, [confidential, released], schema),
                                  tolerances.get(k, 0.0))
    pi = np.minimum(pi, 1.0)
    log_miss = np.log1p(-np.minimum(pi, 1.0 - 1e-16))
    expected_base = float(np.mean(-np.expm1(n * log_miss)) / n)
    true_base = float(np.mean(pi * np.exp((n - 1) * log_miss)))
    estimates = {}
    for name, value, k, base, orig in (
        ("expected_match_rate", rates.expected_share, rates.expected, expected_base, original.expected_share),
        ("true_match_rate", rates.true_rate, rates.true_rate * n, true_base, original.true_rate),
    ):
        lo, hi = wilson_interval(min(float(k), n), n, confidence=confidence)
        estimates[name] = RiskEstimate(
            metric=name, value=value, lower=lo, upper=hi, interval="Wilson", baseline=base,
            baseline_lower=base, baseline_upper=base, baseline_label="random data within the public domain",
            original=orig, n=n, confidence=confidence, holdout_applies=False,
        )
    return MatchRisk(rates=rates, original=original, table=match_table(confidential, rates, keys),
                     estimates=estimates)


def _count_in_window(group: np.ndarray, scaled: np.ndarray, n: int, radius: float):
    """c_j and T_j for one numeric key with a tolerance, by sorting.

    ``group`` and ``scaled`` hold confidential rows then released rows.
    Released record i matches record j when it is in j's group and
    ``scaled[j] - radius <= scaled[i] <= scaled[j] + radius``. Unlike a
    KD-tree count, the cost does not grow with the number of matches.
    """
    own, other = scaled[:n], scaled[n:]
    lower, upper = own - radius, own + radius
    # Ranks among all values compared keep their order exactly, so
    # (group, rank) packs into one int64 key without rounding.
    rank = np.unique(np.concatenate([other, lower, upper]), return_inverse=True)[1]
    size = int(rank.max()) + 1
    released = np.sort(group[n:] * size + rank[:n])
    first = np.searchsorted(released, group[:n] * size + rank[n:2 * n], side="left")
    last = np.searchsorted(released, group[:n] * size + rank[2 * n:], side="right")
    t = (group[:n] == group[n:]) & (lower <= other) & (other <= upper)
    return last - first, t


def _check_keys(keys, confidential: pd.DataFrame, released: pd.DataFrame) -> list[str]:
    if isinstance(keys, str):
        keys = [keys]
    keys = list(keys)
    if not keys:
        raise ValueError("keys must name at least one column, got none")
    if len(set(keys)) != len(keys):
        raise ValueError(f"keys must not repeat a column, got {keys!r}")
    for name, frame in (("confidential", confidential), ("released", released)):
        missing = [k for k in keys if k not in frame.columns]
        if missing:
            raise ValueError(f"keys {missing!r} are not columns of {name}")
    return keys


def _check_tolerance(tolerance, keys: list[str], numeric: list[str]) -> dict[str, float]:
    """Validated tolerance per numeric key (absent keys match exactly)."""
    if tolerance is None:
        return {}
    if isinstance(tolerance, Mapping):
        wrong = [k for k in tolerance if k not in numeric]
        if wrong:
            raise ValueError(
                f"tolerance may only name numeric keys {numeric!r}, got {wrong!r}"
            )
        items = dict(tolerance)
    else:
        items = {k: tolerance for k in numeric}
    out = {}
    for k, tol in items.items():
        if isinstance(tol, bool) or not isinstance(tol, Real):
            raise TypeError(f"tolerance for {k!r} must be a number, got {type(tol).__name__}")
        if not (math.isfinite(tol) and tol >= 0):
            raise ValueError(f"tolerance for {k!r} must be finite and >= 0, got {tol!r}")
        out[k] = float(tol)
    return out


register(Metric(
    name="expected_match_rate",
    label="Expected match rate",
    kind="risk",
    goal="minimize",
    lower=0.0,
    upper=1.0,
    best=0.0,
    reading="Share of confidential records an intruder matching on the keys would identify, on average.",
    # Row-linked releases only (the synthetic row i stands for confidential record i): not on the R-U map.
    section="matching", needs={"keys"},
    estimate=lambda ctx: match_of(ctx).estimates.get("expected_match_rate"),
))
register(Metric(
    name="true_match_rate",
    label="True match rate",
    kind="risk",
    goal="minimize",
    lower=0.0,
    upper=1.0,
    best=0.0,
    reading="Share of confidential records whose keys match exactly one released record, their own.",
    section="matching", needs={"keys"},
    estimate=lambda ctx: match_of(ctx).estimates.get("true_match_rate"),
))


def match_of(ctx) -> MatchRisk:
    """Match risk of a row-linked release on a metric context's keys (shared as ``"matching"``)."""
    return ctx.cached("matching", lambda: match_risk(ctx.real, ctx.synth, list(ctx.keys), schema=ctx.schema))
