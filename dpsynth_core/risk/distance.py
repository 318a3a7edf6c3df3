"""Distance to closest record, exact copies and membership inference.

Gower's distance between two mixed-type records is the mean over columns of
a per-column distance in [0, 1]: ``|x - y| / range`` for numeric columns,
0/1 mismatch for categorical ones. It is an L1 distance once each record is
written as coordinates (numeric values divided by range, categories one-hot
at weight 1/2 so that a mismatch costs 1/2 + 1/2), all divided by the number
of columns. That turns "closest synthetic record" into an L1 nearest
neighbour query on KD-trees: no n x n matrix is ever built. Categories are
better handled outside the tree: synthetic records are split by category
combination (one tree each over the numeric coordinates), and a real record
visits another combination only when its mismatches alone cost less than the
best distance already found. With many category columns (a survey) nearly
every combination passes that test, so a record is first measured against the
synthetic records that agree with it on a whole block of its categories: by
pigeonhole its nearest is among them whenever it differs in fewer categories
than there are blocks. The result is exact either way.

Missing values
--------------
A missing value equals a missing value (distance 0) and is as far as
possible from any value (distance 1) in that column, numeric or categorical.
For numeric columns with missing values this is exact in L1 with three
coordinates: a value x (scaled to [0, 1]) becomes ``(x/2, (1-x)/2, 0)`` and a
missing value ``(0, 0, 1/2)``; their L1 distance is
``x/2 + (1-x)/2 + 1/2 = 1`` whatever x, and two values stay ``|x - y|`` apart.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.spatial import cKDTree
from sklearn.metrics import roc_auc_score, roc_curve

from .. import constraints
from ..errors import DataError
from ..metric_info import Metric, register
from ._base import as_float, check_frame, combine_codes, is_numeric, shared_codes
from .estimate import CONFIDENCE, RiskEstimate, auc_interval, median_interval, wilson_interval
from .reference import column_domain, hit_probability, random_public_data

__all__ = [
    "DistanceRisk",
    "MembershipInference",
    "distance_risk",
    "dcr_records",
    "exact_copy_share",
    "gower_dcr",
    "membership_inference",
]

#: Confidential records whose DCR to random public-domain data is measured for the baseline median.
BASELINE_ROWS = 2000
#: Public seed of the rule choosing which confidential records a capped DCR measures (:func:`dcr_records`).
DCR_RECORDS_SEED = 20_190_619


def dcr_records(n: int, max_rows: int | None) -> np.ndarray:
    """Positions, in order, of the records a DCR capped at ``max_rows`` measures among ``n`` records.

    All ``n`` when ``max_rows`` is None or at least ``n``; else ``max_rows`` positions drawn uniformly
    without replacement by a generator seeded with the public :data:`DCR_RECORDS_SEED`.

    Fixed, so every point of a sweep measures the same records and the points compare fairly (a sample
    drawn per point would add its own noise between them); random, so the choice does not follow the
    table's row order (the first rows of diamonds are its cheapest stones). The positions depend on ``n``
    and the public seed alone, never on a value, and choosing them is no release: the DCR is a risk
    diagnostic shown to the steward, not published.

    Examples
    --------
    >>> dcr_records(5, None).tolist()
    [0, 1, 2, 3, 4]
    >>> len(dcr_records(53_940, 10_000)), bool((dcr_records(53_940, 10_000) == dcr_records(53_940, 10_000)).all())
    (10000, True)
    """
    if max_rows is None or max_rows >= n:
        return np.arange(n)
    return np.sort(np.random.default_rng(DCR_RECORDS_SEED).choice(n, size=max_rows, replace=False))


def gower_dcr(
    real: pd.DataFrame,
    synth: pd.DataFrame,
    *,
    schema: Any = None,
    n_jobs: int = -1,
    max_rows: int | None = None,
) -> np.ndarray:
    """Gower distance from each real record to its closest synthetic record.

    Parameters
    ----------
    real : pandas.DataFrame
        Records whose protection is measured (the confidential data, or a
        holdout split).
    synth : pandas.DataFrame
        The synthetic data; must hold every used column. Must not be empty.
    schema : object or None, default=None
        An object with ``columns``, a dict of column name to an object with
        ``kind`` ("categorical", "numeric" or "excluded") and, for numeric
        columns, ``bounds`` ``(lower, upper)``. Excluded columns are ignored;
        numeric values are clipped to the bounds and divided by
        ``upper - lower``. ``None``: every column of ``real`` is used, int and
        float columns are numeric, anything else categorical, and numeric
        ranges are read off the union of both frames.
    n_jobs : int, default=-1
        Worker threads of the nearest neighbour query; -1 uses all cores.
    max_rows : int or None, default=None
        Measure at most this many real records, those :func:`dcr_records`
        chooses (the same ones on every call for a table of one size);
        every synthetic record is still searched, so each distance is
        exact. None: every record.

    Returns
    -------
    numpy.ndarray of float, shape (min(len(real), max_rows),)
        Distances in [0, 1], in the order of the records measured; 0 means
        an identical synthetic record exists.

    Notes
    -----
    A missing value is at distance 0 from a missing value and 1 from any
    value of its column. A column with one distinct value per row (an
    identifier) adds about 1/p to every distance; exclude it in the schema.

    References
    ----------
    .. [1] Gower, J. C. (1971). A general coefficient of similarity and some
       of its properties. Biometrics 27(4), 857-871.

    Examples
    --------
    >>> import pandas as pd
    >>> real = pd.DataFrame({"colour": ["red", "blue"], "size": [1.0, 3.0]})
    >>> synth = pd.DataFrame({"colour": ["red", "blue"], "size": [2.0, 3.0]})
    >>> gower_dcr(real, synth).tolist()  # (0 + |1 - 2| / 2) / 2 and a copy
    [0.25, 0.0]
    """
    check_frame(real, "real")
    check_frame(synth, "synth")
    if len(synth) == 0:
        raise DataError("The synthetic data have no rows, so no distance can be measured; synthesize some rows.")
    real = real.iloc[dcr_records(len(real), max_rows)]
    encoded_real, encoded_synth = _encode([real, synth], schema)
    check_distance_cost([encoded_real, encoded_synth], encoded_synth)
    return _NearestGower(encoded_synth, n_jobs=n_jobs).query(encoded_real)


@dataclass(frozen=True, kw_only=True, eq=False)  # eq=False: array fields have no truth value
class MembershipInference:
    """Result of a distance-based membership inference attack.

    Attributes
    ----------
    auc : float
        ROC AUC of the attacker, in [0, 1]; 0.5 means members cannot be told
        from non-members, 1 means perfectly.
    fpr, tpr : numpy.ndarray
        False and true positive rates of the ROC curve.
    thresholds : numpy.ndarray
        DCR cut-offs: guessing "member" when ``DCR <= thresholds[i]`` gives
        ``fpr[i]`` and ``tpr[i]``. Increasing; the first is ``-inf``.
    dcr_members, dcr_non_members : numpy.ndarray
        Gower DCR of each member and non-member record to the synthetic data.
    """

    auc: float
    fpr: np.ndarray
    tpr: np.ndarray
    thresholds: np.ndarray
    dcr_members: np.ndarray
    dcr_non_members: np.ndarray


def membership_inference(
    members: pd.DataFrame,
    non_members: pd.DataFrame,
    synth: pd.DataFrame,
    *,
    schema: Any = None,
    n_jobs: int = -1,
) -> MembershipInference:
    """Membership inference by distance to closest synthetic record.

    The attacker holds records some of which were used to fit the
    synthesizer and guesses "member" when a record's Gower DCR to the
    synthetic data is below a threshold (score ``-DCR``). Non-members should
    come from a holdout split taken before synthesis.

    Parameters
    ----------
    members : pandas.DataFrame
        Records the synthesizer was trained on. Must not be empty.
    non_members : pandas.DataFrame
        Records from the same population it did not see. Must not be empty.
    synth : pandas.DataFrame
        The synthetic data. Must not be empty.
    schema : object or None, default=None
        As in :func:`gower_dcr`; without it numeric ranges come from the
        union of all three frames, so both groups are measured alike.
    n_jobs : int, default=-1
        Worker threads of the nearest neighbour query; -1 uses all cores.

    Returns
    -------
    MembershipInference
        AUC, ROC curve over DCR thresholds and the two sets of distances.

    Examples
    --------
    >>> import pandas as pd
    >>> members = pd.DataFrame({"x": [0.0, 1.0]})
    >>> others = pd.DataFrame({"x": [0.5, 3.0]})
    >>> membership_inference(members, others, synth=members).auc
    1.0
    """
    for frame, name in ((members, "members"), (non_members, "non_members"), (synth, "synth")):
        check_frame(frame, name)
        if len(frame) == 0:
            raise DataError(f"Membership inference needs records in {name}, which has none; hold out and keep some rows.")
    encoded_members, encoded_non, encoded_synth = _encode([members, non_members, synth], schema)
    check_distance_cost([encoded_members, encoded_non, encoded_synth], encoded_synth)
    nearest = _NearestGower(encoded_synth, n_jobs=n_jobs)
    return _attack(nearest.query(encoded_members), nearest.query(encoded_non))


def _attack(dcr_members: np.ndarray, dcr_non: np.ndarray) -> MembershipInference:
    """ROC of the "member when DCR <= threshold" attack from the two groups' distances."""
    is_member = np.r_[np.ones(len(dcr_members)), np.zeros(len(dcr_non))]
    score = -np.r_[dcr_members, dcr_non]  # closer to the synthetic data = more likely a member
    fpr, tpr, thresholds = roc_curve(is_member, score)
    return MembershipInference(
        auc=float(roc_auc_score(is_member, score)),
        fpr=fpr,
        tpr=tpr,
        thresholds=-thresholds,
        dcr_members=dcr_members,
        dcr_non_members=dcr_non,
    )


@dataclass(frozen=True, kw_only=True, eq=False)  # eq=False: array fields have no truth value
class DistanceRisk:
    """Distances to closest record, exact copies and membership inference, with references.

    Attributes
    ----------
    dcr_train : numpy.ndarray
        Gower DCR of each record the synthesizer saw to the synthetic data.
    dcr_holdout : numpy.ndarray or None
        The same for held-out records.
    dcr_baseline : numpy.ndarray
        DCR of (up to :data:`BASELINE_ROWS`) records the synthesizer saw to
        random data of the synthetic data's size within the public domain.
    copies_train, copies_holdout : float, float or None
        Share of those records that appear unchanged in the synthetic data.
    membership : MembershipInference or None
        The DCR-threshold attack, train (members) vs holdout; None without one.
    estimates : dict of str to RiskEstimate
        ``exact_copy_share``, ``dcr_median`` and, with a holdout, ``mia_auc``.
    measured : tuple of int or None
        With ``max_rows``: (records measured, records the synthesizer saw);
        None when every record was measured.
    """

    dcr_train: np.ndarray
    dcr_holdout: np.ndarray | None
    dcr_baseline: np.ndarray
    copies_train: float
    copies_holdout: float | None
    membership: MembershipInference | None
    estimates: dict
    measured: tuple[int, int] | None = None  # (records measured, records given) when ``max_rows`` subsampled


def distance_risk(
    train: pd.DataFrame,
    synth: pd.DataFrame,
    *,
    holdout: pd.DataFrame | None = None,
    schema: Any = None,
    seed: int | np.random.Generator | None = None,
    n_jobs: int = -1,
    confidence: float = CONFIDENCE,
    max_rows: int | None = None,
) -> DistanceRisk:
    """Everything distance-based the Risk page shows, from one set of KD-trees.

    Parameters
    ----------
    train : pandas.DataFrame
        The records the synthesizer saw.
    synth : pandas.DataFrame
        The synthetic data.
    holdout : pandas.DataFrame or None, default=None
        Records held out before synthesis (same population, never seen).
        They give the holdout references and the membership attack.
    schema : object or None, default=None
        As in :func:`gower_dcr`; also the public domain of the random data.
    seed : int, Generator or None, default=None
        Seeds the random public-domain data and the subsample measured
        against it.
    n_jobs : int, default=-1
        Worker threads of the nearest neighbour queries.
    confidence : float, default=0.95
        Level of the intervals: Wilson for copy shares, order statistics for
        medians, Hanley–McNeil for the AUC.
    max_rows : int or None, default=None
        Measure at most this many records of ``train`` (and of ``holdout``),
        drawn at random without replacement; every synthetic record is still
        searched, so each measured record's DCR and copy are exact and the
        shares, medians and AUC are estimates from the subsample (their
        intervals use its size). None: every record.

    Returns
    -------
    DistanceRisk

    Notes
    -----
    References per measure: released as is, the original data is its own
    copy (every DCR 0, every record copied) and a membership attacker
    misses only holdout records duplicated in the training rows
    (AUC = 1 - share/2). The baselines are random data within the public
    domain (copies: the exact chance that ``len(synth)`` random rows hold a
    record, a product over columns of
    :func:`~dpsynth_core.risk.reference.hit_probability`; DCR: measured on
    such data) and random guessing (AUC 0.5).
    """
    check_frame(train, "train")
    check_frame(synth, "synth")
    for frame, name in ((train, "train"), (synth, "synth"), (holdout, "holdout")):
        if frame is not None and len(frame) == 0:
            raise DataError(f"Distance-based risk needs records in {name}, which has none; hold out and keep some rows.")
    rng = np.random.default_rng(seed)
    given = [train, synth] + ([holdout] if holdout is not None else [])  # the domains read every record
    names = [c for c, _, _ in _used_columns(given, schema)]
    domains = {c: column_domain(c, given, schema) for c in names}
    measured = None
    if max_rows is not None and len(train) > max_rows:
        measured = (max_rows, len(train))
        train = train.iloc[np.sort(rng.choice(len(train), size=max_rows, replace=False))]
    if max_rows is not None and holdout is not None and len(holdout) > max_rows:
        holdout = holdout.iloc[np.sort(rng.choice(len(holdout), size=max_rows, replace=False))]
    dcr_train, dcr_hold, dcr_base = _nearest_distances(train, synth, holdout, schema, names, domains, rng, n_jobs)

    copies = exact_copy_share(train, synth)
    held_copies = exact_copy_share(holdout, synth) if holdout is not None else None
    copy_base = _random_copy_share(train, len(synth), lambda c: column_domain(c, given, schema))
    estimates = {
        "exact_copy_share": _copy_estimate(copies, len(train), copy_base, held_copies,
                                           None if holdout is None else len(holdout), confidence),
        "dcr_median": _dcr_estimate(dcr_train, dcr_base, dcr_hold, confidence),
    }
    membership = None
    if dcr_hold is not None:
        membership = _attack(dcr_train, dcr_hold)
        estimates["mia_auc"] = _membership_estimate(membership.auc, len(train), holdout, train, confidence)
    return DistanceRisk(dcr_train=dcr_train, dcr_holdout=dcr_hold, dcr_baseline=dcr_base, copies_train=copies,
                        copies_holdout=held_copies, membership=membership, estimates=estimates,
                        measured=measured)


def _nearest_distances(train, synth, holdout, schema, names, domains, rng, n_jobs):
    """Each training record's and each held-out record's distance to its closest synthetic record, and
    those of :data:`BASELINE_ROWS` training records to random public-domain data of ``len(synth)`` rows.

    One scale for all (the random data's values count in undeclared ranges and category codes), then
    each search on its own: the random data is encoded only when its search comes (drawn again then, the
    same draws from a copy of the generator), the synthetic records' KD-trees are freed before the random
    data's are built, and nothing keeps a frame's records once searched. On a 675,000-row table (80 %
    trained on) this took the search's peak from 451 MiB above the frames to about a third of that
    (bench/bench_memory.py); the distances are the same floats, as nothing in a search depends on what
    else is held."""
    frames = [train, synth] + ([holdout] if holdout is not None else [])
    replay = copy.deepcopy(rng)
    noise = random_public_data(names, domains, len(synth), rng)
    encoded = _encode([*frames, noise], schema, keep=range(len(frames)))
    del noise
    check_distance_cost(encoded, encoded[1], rows=len(synth))
    enc_train, enc_hold = encoded[0], encoded[2] if holdout is not None else None
    nearest = _NearestGower(encoded[1], n_jobs=n_jobs)  # holds its own sorted copy of the synthetic records
    del encoded
    dcr_train = nearest.query(enc_train)
    dcr_hold = nearest.query(enc_hold) if enc_hold is not None else None
    del nearest, enc_hold
    sample = np.sort(rng.choice(len(train), size=min(BASELINE_ROWS, len(train)), replace=False))
    enc_noise = _encode([*frames, random_public_data(names, domains, len(synth), replay)], schema,
                        keep=[len(frames)])[0]
    baseline = _NearestGower(enc_noise, n_jobs=n_jobs)
    del enc_noise
    return dcr_train, dcr_hold, baseline.query(_take(enc_train, sample))


def _random_copy_share(train: pd.DataFrame, n_synth: int, domain_of) -> float:
    """The exact expected share of ``train``'s records that ``n_synth`` random rows of the public domain
    hold: 1 − (1 − π)^n_synth per record, π the product over columns of the chance of its value."""
    pi = np.ones(len(train))
    for c in train.columns:
        pi = pi * hit_probability(train[c], domain_of(c))
    return float(np.mean(-np.expm1(n_synth * np.log1p(-np.minimum(pi, 1.0 - 1e-16)))))


def _copy_estimate(copies: float, n: int, copy_base: float, held_copies: float | None, n_held: int | None,
                   confidence: float) -> RiskEstimate:
    held = {}
    if held_copies is not None:
        held = dict(zip(("holdout", "holdout_lower", "holdout_upper"),
                        (held_copies, *wilson_interval(round(held_copies * n_held), n_held, confidence=confidence))))
    lo, hi = wilson_interval(round(copies * n), n, confidence=confidence)
    return RiskEstimate(
        metric="exact_copy_share", value=copies, lower=lo, upper=hi, interval="Wilson",
        baseline=copy_base, baseline_lower=copy_base, baseline_upper=copy_base,
        baseline_label="random data within the public domain", original=1.0, n=n, confidence=confidence, **held,
    )


def _dcr_estimate(dcr_train: np.ndarray, dcr_base: np.ndarray, dcr_hold: np.ndarray | None,
                  confidence: float) -> RiskEstimate:
    held = {}
    if dcr_hold is not None:
        held = dict(zip(("holdout", "holdout_lower", "holdout_upper"),
                        (float(np.median(dcr_hold)), *median_interval(dcr_hold, confidence=confidence))))
    lo, hi = median_interval(dcr_train, confidence=confidence)
    base_lo, base_hi = median_interval(dcr_base, confidence=confidence)
    return RiskEstimate(
        metric="dcr_median", value=float(np.median(dcr_train)), lower=lo, upper=hi,
        interval="order-statistic", baseline=float(np.median(dcr_base)), baseline_lower=base_lo,
        baseline_upper=base_hi, baseline_label="random data within the public domain", original=0.0,
        n=len(dcr_train), confidence=confidence, **held,
    )


def _membership_estimate(auc: float, n: int, holdout: pd.DataFrame, train: pd.DataFrame,
                         confidence: float) -> RiskEstimate:
    lo, hi = auc_interval(auc, n, len(holdout), confidence=confidence)
    return RiskEstimate(
        metric="mia_auc", value=auc, lower=lo, upper=hi, interval="Hanley–McNeil",
        baseline=0.5, baseline_lower=0.5, baseline_upper=0.5, baseline_label="random guessing",
        original=1.0 - 0.5 * exact_copy_share(holdout, train), n=n + len(holdout), confidence=confidence,
        holdout_applies=False,
    )


def _take(encoded: "_Encoded", rows: np.ndarray) -> "_Encoded":
    return _Encoded(codes=encoded.codes[rows], numeric=encoded.numeric[rows], levels=encoded.levels, p=encoded.p)


def exact_copy_share(real: pd.DataFrame, synth: pd.DataFrame) -> float:
    """Share of real records that appear, identical in every column, in synth.

    Parameters
    ----------
    real : pandas.DataFrame
        The confidential data. Must not be empty.
    synth : pandas.DataFrame
        The synthetic data; must hold every column of ``real`` (matched by
        name, extra columns ignored).

    Returns
    -------
    float
        In [0, 1]. Values compare exactly (1 and 1.0 are equal, 1.0 and
        1.0000001 are not); a missing value equals a missing value. Real
        records that repeat each count.

    Examples
    --------
    >>> import pandas as pd
    >>> real = pd.DataFrame({"a": [1, 2, 3, 4], "b": ["x", "y", None, "x"]})
    >>> synth = pd.DataFrame({"b": [None, "x"], "a": [3, 2]})
    >>> exact_copy_share(real, synth)
    0.25
    """
    check_frame(real, "real")
    check_frame(synth, "synth")
    if len(real) == 0:
        raise DataError("The real data have no rows, so no share can be computed; load data with rows.")
    missing = [c for c in real.columns if c not in synth.columns]
    if missing:
        raise DataError(f"Columns {missing!r} of the real data are not in the synthetic data; compare tables with "
                        "the same columns.")
    # Column by column, keep only the real and synthetic rows whose values so far have a partner on the
    # other side: a real row is a copy exactly when it survives every column. A continuous column leaves
    # few candidates, so the later columns are coded for a handful of rows rather than for all of them.
    keep_r, keep_s = _numeric_candidates(real, synth)
    ids_r, ids_s = np.zeros(len(keep_r), dtype=np.int64), np.zeros(len(keep_s), dtype=np.int64)
    for c in real.columns:
        if not (len(keep_r) and len(keep_s)):
            break
        codes_r, codes_s = shared_codes([real[c].iloc[keep_r], synth[c].iloc[keep_s]])
        ids = combine_codes([np.r_[ids_r, ids_s], np.r_[codes_r, codes_s]], len(keep_r) + len(keep_s))
        ids_r, ids_s = ids[: len(keep_r)], ids[len(keep_r):]
        in_r, in_s = np.isin(ids_r, ids_s), np.isin(ids_s, ids_r)
        keep_r, ids_r, keep_s, ids_s = keep_r[in_r], ids_r[in_r], keep_s[in_s], ids_s[in_s]
    return len(keep_r) / len(real) if len(keep_s) else 0.0


def _numeric_candidates(real: pd.DataFrame, synth: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the real and synthetic rows that may still be copies after the numeric columns alone.

    A row whose number has no equal number on the other side is no copy. The common values are found by
    sorting (numpy's, ten times faster than hashing a million distinct floats), so a continuous column
    rules out almost every row for a few hundredths of a second. Equal values stay equal as floats, so
    no copy is lost; the exact comparison of :func:`exact_copy_share` then decides among the rest.
    """
    keep_r, keep_s = np.arange(len(real)), np.arange(len(synth))
    for c in real.columns:
        if not (len(keep_r) and len(keep_s) and is_numeric(real[c]) and is_numeric(synth[c])):
            continue
        x, y = as_float(real[c].iloc[keep_r], c), as_float(synth[c].iloc[keep_s], c)
        common = np.intersect1d(x, y)  # NaN is never common: a missing value pairs with a missing one
        in_r = np.isin(x, common) | (np.isnan(x) & np.isnan(y).any())
        in_s = np.isin(y, common) | (np.isnan(y) & np.isnan(x).any())
        keep_r, keep_s = keep_r[in_r], keep_s[in_s]
    return keep_r, keep_s


def _used_columns(frames: list[pd.DataFrame], schema: Any) -> list[tuple[str, str, tuple | None]]:
    """(name, kind, bounds) of each column the distance uses."""
    if schema is None:
        specs = [(c, None, None) for c in frames[0].columns]
    else:
        specs = []
        for name, col in schema.columns.items():
            kind = col.kind
            if kind not in ("categorical", "numeric", "excluded"):
                raise ValueError(
                    f"schema column {name!r}: kind must be categorical, numeric or excluded, got {kind!r}"
                )
            if kind != "excluded":
                specs.append((name, kind, getattr(col, "bounds", None) if kind == "numeric" else None))
    if not specs:
        raise DataError("No column is left to measure distances on; mark at least one column categorical or numeric.")
    for name, _, _ in specs:
        for frame in frames:
            if name not in frame.columns:
                raise DataError(f"Column {name!r} is missing from one of the data sets compared; compare tables with the "
                                "same columns.")
    return [
        (name, kind or ("numeric" if all(is_numeric(f[name]) for f in frames) else "categorical"), bounds)
        for name, kind, bounds in specs
    ]


@dataclass(frozen=True)
class _Encoded:
    """One frame's records in Gower coordinates, split by column kind.

    ``codes`` holds the category codes (shared by every frame encoded
    together) of the categorical columns, ``numeric`` the numeric coordinates
    already divided by ``p``; a category mismatch costs ``1 / p``.
    """

    codes: np.ndarray  # (n, number of categorical columns), int
    numeric: np.ndarray  # (n, numeric coordinates), float
    levels: np.ndarray  # categories per categorical column, shared by all frames
    p: int  # columns used


def check_distance_cost(encoded: list[_Encoded], synth: _Encoded, rows: int = 0) -> None:
    """Refuse, before any search, a distance search whose coordinates would pass the memory budget.

    Every record becomes a row of numeric coordinates plus one per category of
    each categorical column that does not split the synthetic records into
    groups (see :class:`_NearestGower`), held by the KD-trees and by the
    queries, about twice over. ``rows``: records of a search to come, not encoded yet.
    """
    rows += sum(len(e.codes) for e in encoded)
    grouped = _NearestGower._grouping_columns(synth.codes, synth.levels)
    width = synth.numeric.shape[1] + int(sum(n for k, n in enumerate(synth.levels) if k not in grouped))
    refusal = constraints.over_memory_budget(
        f"Measuring distances on {rows:,} records × {width:,} coordinates (one per category)", 2 * 8 * rows * width,
        "exclude columns with many categories on the Data page or synthesize fewer rows")
    if refusal:
        raise DataError(refusal)


def _encode(frames: list[pd.DataFrame], schema: Any, keep=None) -> list[_Encoded]:
    """Encode several frames on one scale (shared ranges and category codes); only those of ``keep``
    (positions, default all), in its order: the others still count in the scale.

    Each frame's codes and coordinates are written column by column into one array each (Fortran
    order, as the search reads them): a million-row table is not stacked a second time.
    """
    keep = range(len(frames)) if keep is None else list(keep)
    columns = _used_columns(frames, schema)
    p = len(columns)
    # A numeric column with a missing value anywhere takes the three coordinates of the module docstring.
    widths = {name: 3 if any(f[name].isna().any() for f in frames) else 1
              for name, kind, _ in columns if kind == "numeric"}
    n_codes = sum(kind == "categorical" for _, kind, _ in columns)
    codes = [np.empty((len(frames[i]), n_codes), dtype=np.int64, order="F") for i in keep]
    numeric = [np.empty((len(frames[i]), sum(widths.values())), order="F") for i in keep]
    levels: list[int] = []
    at = 0
    for name, kind, bounds in columns:
        if kind == "categorical":
            parts = shared_codes([f[name] for f in frames])
            for out, i in zip(codes, keep):
                out[:, len(levels)] = parts[i]
            levels.append(int(max(c.max(initial=-1) for c in parts)) + 1)
            continue
        values = [as_float(f[name], name) for f in frames]
        if bounds is not None:
            lo, hi = float(bounds[0]), float(bounds[1])
        else:
            finite = np.concatenate([v[~np.isnan(v)] for v in values])
            lo, hi = (finite.min(), finite.max()) if finite.size else (0.0, 0.0)
        # A constant column has every difference 0; any positive span keeps it so.
        span = hi - lo if hi > lo else 1.0
        for out, v in zip(numeric, (values[i] for i in keep)):
            x = np.clip(v, lo, hi)
            x -= lo  # in place: a million-row table makes no more temporaries than it must
            x /= span
            if widths[name] == 1:
                np.divide(x, p, out=out[:, at])
                continue
            # The three coordinates of the module docstring: 1 from any value.
            missing = np.isnan(x)
            x = np.where(missing, 0.0, x)
            half = np.where(missing, 0.0, 0.5)
            for k, coordinate in enumerate((half * x, half * (1.0 - x), 0.5 * missing)):
                np.divide(coordinate, p, out=out[:, at + k])
        at += widths[name]
    return [_Encoded(codes=c, numeric=x, levels=np.array(levels, dtype=np.int64), p=p)
            for c, x in zip(codes, numeric)]


# Splitting the synthetic records by category combination takes their one-hot
# coordinates out of the KD-tree, whose L1 search slows down sharply with
# dimension (diamonds against a uniform synthesis: 14 s with 27 coordinates,
# about 1 s split into 280 trees of 7). Each group costs a Python-level pass
# over the real records, hence a cap on their number.
_MAX_GROUPS = 256
#: Real × synthetic records of one group below which distances are computed outright rather than
#: through a KD-tree built for them: a few records against a group are cheaper measured than a tree
#: is built (1,000 real records against a million synthetic ones: 0.1 s rather than 0.4 s of building).
BRUTE_FORCE_PAIRS = 2**18
#: Real records below which one group's KD-tree is searched in this thread: starting the workers
#: costs more than such a search.
THREADED_ROWS = 4096
#: Tree coordinates (numeric ones plus one-hot ones of the ungrouped categories) above which a group is
#: always measured outright: an L1 KD-tree in that many dimensions visits most of its leaves anyway, while
#: below it the trees win as the synthetic table grows. CPU for 1,000 records, trees against outright: the
#: survey-like table (bench/survey_like.py, 48 coordinates) 0.51 / 0.08 s at 22,000 rows and 3.41 / 0.42 s at
#: 220,000; the memory bench's table (bench/bench_memory.py, 17 coordinates) 0.07 / 0.03 s at 22,000 rows but
#: 0.13 / 0.64 s at 200,000 (at 16 its 675,000 rows went outright, and the Risk page took 61 s instead of 4).
TREE_MAX_COORDINATES = 24
#: The candidate search of a wide table (:meth:`_NearestGower._near_by_blocks`) splits the category columns
#: into this many blocks, then into more for the records still unsettled (as far as half the columns allow):
#: a record fewer mismatches away than there are blocks agrees with it on one block at least. Fewer blocks
#: make fewer candidates, more settle more records. On bench/survey_like.py (1,000 records, 22,000 synthetic)
#: two blocks settle 30-50% of the records in 0.01 s, three all but 6-10%, five the rest: 0.07-0.10 s of CPU
#: in all, where starting at three took 0.11-0.19 s (a synthesis by MST puts many candidates in the blocks of
#: common records, which two blocks settle first).
BLOCK_ROUNDS = (2, 3, 5)
#: Candidate pairs measured at once by that search (memory: a few arrays of this many numbers).
BLOCK_PAIRS = 2**21


class _NearestGower:
    """Exact Gower distance to the closest synthetic record.

    Synthetic records are grouped on some categorical columns, one L1
    KD-tree per group over the remaining coordinates (the numeric ones, then
    one-hot columns of the other categories). A real record is first searched
    in its own group, then in any other group whose category mismatches alone
    cost less than the best distance found so far. A group's tree is built
    when a search first needs it; a few records against a group are measured
    against each of its records instead (:func:`_l1_nearest`, the same sums
    as the tree's). The records are kept sorted by group, one row per numeric
    coordinate and per ungrouped category column, so a group is one slice and
    its one-hot coordinates are written only for its tree.

    A wide table (more than TREE_MAX_COORDINATES tree coordinates: many
    category columns) is measured outright, and its real records first
    against candidates only (:meth:`_near_by_blocks`); the group search
    then takes the records the candidates do not settle. Every way sums a
    distance in the same order, so the result is the same float whichever
    way found it.
    """

    def __init__(self, synth: _Encoded, *, n_jobs: int):
        self.n_jobs = n_jobs
        self.p = synth.p
        self.levels = synth.levels
        self.by = self._grouping_columns(synth.codes, synth.levels)
        self.free = [k for k in range(len(self.levels)) if k not in self.by]
        ids = combine_codes([synth.codes[:, k] for k in self.by], len(synth.codes))
        # Gathered coordinate by coordinate: gathering whole records in that order takes several times longer.
        order = np.argsort(ids, kind="stable")
        self.starts = np.r_[0, np.cumsum(np.bincount(ids))]
        self.keys = synth.codes[order[self.starts[:-1]]][:, self.by]  # category combination of group g
        self.numeric = np.empty((synth.numeric.shape[1], len(order)))
        for j, row in enumerate(self.numeric):
            np.take(synth.numeric[:, j], order, out=row)
        self.codes = np.empty((len(self.free), len(order)), dtype=np.int64)
        for j, k in enumerate(self.free):
            np.take(synth.codes[:, k], order, out=self.codes[j])
        self.trees: dict[int, cKDTree] = {}
        self.wide = self.numeric.shape[0] + int(sum(self.levels[k] for k in self.free)) > TREE_MAX_COORDINATES
        self.rounds = self._block_rounds(self.levels) if self.wide else []
        self.member_group = np.repeat(np.arange(len(self.keys)), np.diff(self.starts))

    @staticmethod
    def _block_rounds(levels: np.ndarray) -> list[list[list[int]]]:
        """The blockings of the category columns the candidate search tries in turn (BLOCK_ROUNDS blocks each,
        at most half the columns, at least two)."""
        counts = dict.fromkeys(min(k, len(levels) // 2) for k in BLOCK_ROUNDS)
        return [_NearestGower._blocks(levels, k) for k in counts if k >= 2]

    @staticmethod
    def _blocks(levels: np.ndarray, count: int) -> list[list[int]]:
        """The category columns in ``count`` blocks of about equal numbers of combinations (most levels first,
        each to the block with fewest so far)."""
        blocks, sizes = [[] for _ in range(count)], np.zeros(count)
        for k in np.argsort(-levels, kind="stable"):
            smallest = int(np.argmin(sizes))
            blocks[smallest].append(int(k))
            sizes[smallest] += np.log(max(int(levels[k]), 1))
        return [sorted(b) for b in blocks]

    def _column(self, k: int) -> np.ndarray:
        """Category column k of the synthetic records, in their sorted order."""
        if k in self.free:
            return self.codes[self.free.index(k)]
        return self.keys[self.member_group, self.by.index(k)]

    @staticmethod
    def _grouping_columns(codes: np.ndarray, levels: np.ndarray) -> list[int]:
        # Columns with most categories first: each removes the most coordinates.
        chosen: list[int] = []
        for k in np.argsort(-levels, kind="stable"):
            trial = [*chosen, int(k)]
            # No more combinations than the product of the levels: only past the cap are they counted.
            if np.prod([float(levels[j]) for j in trial]) <= _MAX_GROUPS or \
                    combine_codes([codes[:, j] for j in trial], len(codes)).max(initial=0) < _MAX_GROUPS:
                chosen = trial
        return chosen

    def _points(self, numeric: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """Records as tree coordinates, one row each: the numeric ones, then one-hot columns of the
        ungrouped categories (``codes``: one column per ungrouped category column)."""
        n, m = numeric.shape
        out = np.zeros((n, m + int(sum(self.levels[k] for k in self.free))))
        out[:, :m] = numeric
        rows = np.arange(n)
        for j, k in enumerate(self.free):
            # weight 1/2: a mismatch moves two coordinates, 1/2 + 1/2 = 1
            out[rows, m + codes[:, j]] = 0.5 / self.p
            m += int(self.levels[k])
        return out

    def _search(self, g: int, numeric: np.ndarray, codes: np.ndarray, bound: float) -> np.ndarray:
        """L1 distance from each record (its numeric coordinates and ungrouped codes) to the nearest
        record of group g; inf (the tree) or a distance of at least bound (measured outright) where
        none is below bound."""
        if not (len(self.numeric) or len(self.free)):  # every column is grouped: within a group all agree
            return np.zeros(len(numeric))
        group = slice(self.starts[g], self.starts[g + 1])
        if g not in self.trees and (self.wide or len(numeric) * (group.stop - group.start) <= BRUTE_FORCE_PAIRS):
            return _l1_nearest(numeric, codes, self.numeric[:, group], self.codes[:, group], 0.5 / self.p)
        if g not in self.trees:
            # Median splits stall on tied coordinates (one-hot values, repeated
            # numbers); sliding-midpoint splits made the query ten times faster.
            self.trees[g] = cKDTree(self._points(self.numeric[:, group].T, self.codes[:, group].T),
                                    balanced_tree=False)
        workers = self.n_jobs if len(numeric) >= THREADED_ROWS else 1
        return self.trees[g].query(self._points(numeric, codes), p=1, distance_upper_bound=bound,
                                   workers=workers)[0]

    def query(self, real: _Encoded) -> np.ndarray:
        # A wide table: candidates first (the records that agree with a real record on a whole block of its
        # categories), in rounds of more blocks for the records not settled, then the group search for the
        # records whose nearest may still lie among the others.
        best = np.full(len(real.numeric), np.inf)
        unsure = np.arange(len(real.numeric))
        for blocks in self.rounds:
            best[unsure] = self._near_by_blocks(blocks, real.numeric[unsure], real.codes[unsure])
            unsure = unsure[~(best[unsure] < len(blocks) / self.p - 1e-9)]
        if unsure.size:
            best[unsure] = self._query_groups(real.numeric[unsure], real.codes[unsure])
        return best

    def _near_by_blocks(self, blocks: list[list[int]], numeric: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """Per real record, the least distance to the synthetic records that agree with it on every category
        of at least one of ``blocks``; the same floats as the group search (:meth:`_pair_distances`).

        A synthetic record outside every such set differs in a category of each block, so it is at least
        len(blocks)/p away: where the least found is below that, it is the nearest record's distance (the
        multi-index search of Norouzi, Punjani and Fleet 2012 for Hamming distance). On a survey of ten
        categorical columns, whose nearest records differ in two or three of them, that is a few hundred
        candidates a record rather than nearly every synthetic record the group search measured.
        """
        n_s, n_r = self.numeric.shape[1], len(numeric)
        best = np.full(n_r, np.inf)
        for block in blocks:
            ids = combine_codes([np.r_[self._column(k), codes[:, k]] for k in block], n_s + n_r)
            members = np.argsort(ids[:n_s], kind="stable")
            ranked = ids[:n_s][members]
            first = np.searchsorted(ranked, ids[n_s:], side="left")
            counts = np.searchsorted(ranked, ids[n_s:], side="right") - first
            ends = np.cumsum(counts)
            start = 0
            while start < n_r:  # rows in chunks of about BLOCK_PAIRS candidate pairs
                stop = max(start + 1, int(np.searchsorted(ends, ends[start] - counts[start] + BLOCK_PAIRS, "right")))
                rows = np.arange(start, min(stop, n_r))
                each = counts[rows]
                r_idx = np.repeat(rows, each)
                if r_idx.size:
                    within = np.arange(r_idx.size) - np.repeat(np.cumsum(each) - each, each)
                    s_pos = members[first[r_idx] + within]
                    np.minimum.at(best, r_idx, self._pair_distances(numeric[rows], codes[rows], each, s_pos))
                start = int(rows[-1]) + 1
        return best

    def _pair_distances(self, numeric: np.ndarray, codes: np.ndarray, each: np.ndarray,
                        s_pos: np.ndarray) -> np.ndarray:
        """Distances of real record i (a row of ``numeric`` and ``codes``) to each of its ``each[i]`` synthetic
        records in ``s_pos``, summed as the group search sums them: the numeric coordinates in order, the
        weight twice per differing ungrouped category (:func:`_l1_nearest`), then, for a record of another
        group, its grouped mismatches over p."""
        d = np.zeros(len(s_pos))
        for k in range(self.numeric.shape[0]):
            d += np.abs(np.repeat(numeric[:, k], each) - self.numeric[k, s_pos])
        weight = 0.5 / self.p
        free = np.zeros(len(s_pos), dtype=_count_dtype(len(self.free)))
        for j, k in enumerate(self.free):
            free += np.repeat(codes[:, k], each) != self.codes[j, s_pos]
        for i in range(1, int(free.max(initial=0)) + 1):
            more = free >= i
            d[more] = (d[more] + weight) + weight
        grouped = np.zeros(len(s_pos), dtype=_count_dtype(len(self.by)))
        groups = self.member_group[s_pos]
        for j, k in enumerate(self.by):
            grouped += np.repeat(codes[:, k], each) != self.keys[groups, j]
        other = grouped > 0
        d[other] = d[other] + grouped[other] / self.p
        return d

    def _query_groups(self, numeric: np.ndarray, real_codes: np.ndarray) -> np.ndarray:
        """The group search: each record in its own group, then in the others its grouped categories
        alone do not rule out."""
        free = real_codes[:, self.free]
        codes = real_codes[:, self.by]
        n, n_groups = len(numeric), len(self.keys)
        ids = combine_codes([np.r_[self.keys[:, j], codes[:, j]] for j in range(len(self.by))],
                            n_groups + n)
        group_of = np.full(int(ids.max(initial=0)) + 1, -1)
        group_of[ids[:n_groups]] = np.arange(n_groups)
        own = group_of[ids[n_groups:]]  # -1: no synthetic record shares the categories

        best = np.full(n, np.inf)
        for g in range(n_groups):
            rows = np.flatnonzero(own == g)
            if rows.size:
                best[rows] = self._search(g, numeric[rows], free[rows], np.inf)
        # Another group differs in one category at least, 1/p: only records not yet that close look there.
        left = np.flatnonzero(best > 1 / self.p)
        codes_left = codes[left]
        for g in range(n_groups if left.size else 0):
            mismatch = (codes_left != self.keys[g]).sum(axis=1) / self.p
            near = (mismatch > 0) & (mismatch < best[left])
            rows, mismatch = left[near], mismatch[near]
            if rows.size:
                # the tree takes one bound: the loosest any of these rows needs
                bound = float(np.max(best[rows] - mismatch))
                found = self._search(g, numeric[rows], free[rows], bound) + mismatch
                best[rows] = np.minimum(best[rows], found)
        return best


def _l1_nearest(numeric: np.ndarray, codes: np.ndarray, members: np.ndarray, member_codes: np.ndarray,
                weight: float) -> np.ndarray:
    """L1 distance from each record to its nearest member, without the one-hot coordinates.

    ``numeric``, ``codes``: one row per record; ``members``, ``member_codes``: one row per coordinate.
    The sums run as the KD-tree's over :meth:`_NearestGower._points`: the numeric coordinates in order,
    then per ungrouped category column its one-hot ones, where a mismatch adds ``weight`` twice and
    a match adds zeros; adding zero changes no float, so both give the same distance. Every mismatch adds
    the same two terms, so that sum depends on the numeric part and the number of mismatches alone: from
    COUNTED_COLUMNS category columns on, :func:`_nearest_with_mismatches` counts them in bytes instead.
    """
    out = np.empty(len(numeric))
    n = members.shape[1]
    step = max(1, BRUTE_FORCE_PAIRS // max(n, 1))
    for start in range(0, len(numeric), step):
        block, block_codes = numeric[start:start + step], codes[start:start + step]
        d, term = np.zeros((len(block), n)), np.empty((len(block), n))
        for k, column in enumerate(members):
            d += np.abs(np.subtract(block[:, k, None], column, out=term), out=term)
        if len(member_codes) >= COUNTED_COLUMNS:
            out[start:start + step] = _nearest_with_mismatches(d, block_codes, member_codes, weight)
            continue
        for k, column in enumerate(member_codes):
            np.multiply(block_codes[:, k, None] != column, weight, out=term)
            d += term
            d += term
        out[start:start + step] = d.min(axis=1)
    return out


def _count_dtype(columns: int) -> type:
    """The integer type that counts mismatches over ``columns`` columns: a byte up to 255 of them."""
    return np.uint8 if columns <= 255 else np.int32


#: Ungrouped category columns from which the outright search counts mismatches rather than adding their
#: weights: below it the two passes of floats per column cost less than ranking and re-summing.
COUNTED_COLUMNS = 3


def _nearest_with_mismatches(d: np.ndarray, codes: np.ndarray, member_codes: np.ndarray, weight: float) -> np.ndarray:
    """Per row of ``d`` (the numeric part of each record's distance to each member), the least of the
    distances the tree sums: ``d`` then ``weight`` added twice per category that differs, in that order.

    The mismatches are counted in bytes (a comparison and an addition per column, where adding the weights
    took four passes over floats), ranked by ``d + 2·weight·count``, which lies within a few units in the
    last place of the sum, and the sum itself is then taken in the tree's order for the members ranked
    within 1e-9 of each row's least: the same float as before.
    """
    count = np.zeros(d.shape, dtype=_count_dtype(len(member_codes)))
    for k, column in enumerate(member_codes):
        count += codes[:, k, None] != column
    approx = count * (2 * weight)
    approx += d
    low = approx.min(axis=1)
    rows, cols = np.nonzero(approx <= (low + 1e-9)[:, None])
    exact, mismatches = d[rows, cols], count[rows, cols]
    for i in range(1, int(mismatches.max(initial=0)) + 1):
        more = mismatches >= i
        exact[more] = (exact[more] + weight) + weight
    out = np.full(len(d), np.inf)
    np.minimum.at(out, rows, exact)
    return out


register(Metric(
    name="exact_copy_share",
    label="Exact copies",
    kind="risk",
    goal="minimize",
    lower=0.0,
    upper=1.0,
    best=0.0,
    reading="Share of confidential records that appear unchanged in the synthetic data.",
    section="distance",
    compute=lambda ctx: exact_copy_share(ctx.real, ctx.synth),
    estimate=lambda ctx: distance_of(ctx).estimates.get("exact_copy_share"),
    headline=True, on_copy=1.0, value_format="{:.4f}",
))
register(Metric(
    name="dcr_median",
    label="Median DCR",
    kind="risk",
    goal="maximize",
    lower=0.0,
    upper=1.0,
    best=1.0,
    reading="Median Gower distance from a confidential record to its closest synthetic record; larger is safer.",
    section="distance",
    compute=lambda ctx: float(np.median(dcr_of(ctx))),
    estimate=lambda ctx: distance_of(ctx).estimates.get("dcr_median"),
    headline=True, on_copy=0.0, value_format="{:.4f}",
))
register(Metric(
    name="mia_auc",
    label="Membership inference AUC",
    kind="risk",
    goal="target",
    lower=0.0,
    upper=1.0,
    best=0.5,
    reading="How well closeness to the synthetic data tells training records from holdout ones; 0.5 is guessing.",
    section="distance", needs={"holdout"},
    compute=lambda ctx: membership_inference(ctx.real, ctx.holdout, ctx.synth, schema=ctx.schema).auc,
    estimate=lambda ctx: distance_of(ctx).estimates.get("mia_auc"),
))


def dcr_of(ctx) -> np.ndarray:
    """Each real record's Gower distance to its closest synthetic record, for one metric context (shared as
    ``"dcr"``; the Synthesize readout puts a subsample's there). With ``ctx.options["dcr_rows"]`` (the R-U
    sweep's cap) only the records :func:`dcr_records` chooses are measured; ``ctx.options["threads"]`` sets the
    search's threads (default every core)."""
    return ctx.cached("dcr", lambda: gower_dcr(ctx.real, ctx.synth, schema=ctx.schema,
                                               n_jobs=ctx.options.get("threads", -1),
                                               max_rows=ctx.options.get("dcr_rows")))


def distance_of(ctx) -> DistanceRisk:
    """The Risk page's distance measures for one metric context (shared as ``"distance"``)."""
    return ctx.cached("distance", lambda: distance_risk(ctx.real, ctx.synth, holdout=ctx.holdout, schema=ctx.schema,
                                                       seed=ctx.seed))
