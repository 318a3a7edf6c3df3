"""Attribute disclosure of a fully synthetic release by matching on key variables.

In a fully synthetic release no row stands for a particular person, so
"which row is this person" has no answer (docs/methods.md#key-matches-fully-synthetic-releases). What an intruder
can still do is look up the synthetic rows that share a confidential
record's keys and read off their sensitive value: the most frequent one for
a categorical column, the mean for a numeric one. This module measures how
often that reveals the true value, how many confidential records unique on
the keys reappear with their sensitive value, and how unique rows are on
the keys in the real and the synthetic data.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Real
from typing import Any

import numpy as np
import pandas as pd
from scipy.spatial import cKDTree

from ..errors import DataError
from ..metric_info import Metric, register
from ._base import as_float, check_frame, combine_codes, is_numeric, shared_codes
from .estimate import CONFIDENCE, RiskEstimate, wilson_interval
from .matching import _GROUP_SPACING, _TOLERANCE_SLACK, _check_keys, _check_tolerance
from .reference import column_domain, hit_probability, random_public_data

__all__ = [
    "DEFAULT_TOLERANCE_SHARE",
    "KeyMatchDisclosure",
    "SampleUniqueness",
    "UniqueReproduction",
    "default_sensitive_tolerance",
    "key_match_disclosure",
    "sample_uniqueness",
    "unique_reproduction",
]

#: Default tolerance for a numeric sensitive value, as a share of its public range:
#: a guess within 5% of the range counts as revealing it.
DEFAULT_TOLERANCE_SHARE = 0.05

_BLOCK = 32  # categories aggregated at once, so memory stays O(n x 32) whatever the count


def _match_sums(confidential: pd.DataFrame, released: pd.DataFrame, keys: list[str],
                tolerances: dict[str, float], weights: np.ndarray, *, chunk: int = 4096) -> np.ndarray:
    """Column sums of ``weights`` over the released rows matching each confidential record's keys.

    Matching is as in :func:`~dpsynth_core.risk.match_rates`: categorical keys
    exactly (missing equals missing), numeric keys with a tolerance within it.
    ``weights`` has one row per released row; the result one row per
    confidential record. No pair list is built unless two or more numeric
    keys carry a tolerance (then a KD-tree, in chunks of records).
    """
    n, n_r = len(confidential), len(released)
    weights = np.asarray(weights, dtype=np.float64).reshape(n_r, -1)
    m = weights.shape[1]
    numeric = [k for k in keys if is_numeric(confidential[k]) and is_numeric(released[k])]
    near = [k for k in numeric if tolerances.get(k, 0.0) > 0]
    columns = [np.concatenate(shared_codes([confidential[k], released[k]])) for k in keys if k not in near]
    scaled = []
    for k in near:
        values = np.concatenate([as_float(confidential[k], k), as_float(released[k], k)])
        missing = np.isnan(values)
        columns.append(missing.astype(np.int64))  # a missing value matches only a missing value
        scaled.append(np.where(missing, 0.0, values) / tolerances[k])
    group = combine_codes(columns, n + n_r) if columns else np.zeros(n + n_r, dtype=np.int64)
    own, other = group[:n], group[n:]
    radius = 1.0 + _TOLERANCE_SLACK

    if not near:
        size = int(group.max()) + 1
        return np.column_stack([np.bincount(other, weights=weights[:, i], minlength=size)[own]
                                for i in range(m)])
    if len(near) == 1:
        # Sort released rows by (group, value); each record's matches are one
        # contiguous run, summed as a difference of cumulative sums.
        v = scaled[0]
        lower, upper = v[:n] - radius, v[:n] + radius
        rank = np.unique(np.concatenate([v[n:], lower, upper]), return_inverse=True)[1]
        size = int(rank.max()) + 1
        packed = other * size + rank[:n_r]
        order = np.argsort(packed, kind="stable")
        packed = packed[order]
        first = np.searchsorted(packed, own * size + rank[n_r:n_r + n], side="left")
        last = np.searchsorted(packed, own * size + rank[n_r + n:], side="right")
        cum = np.vstack([np.zeros((1, m)), np.cumsum(weights[order], axis=0)])
        return cum[last] - cum[first]
    points = np.column_stack([group * _GROUP_SPACING, *scaled])
    tree = cKDTree(points[n:], balanced_tree=False)
    out = np.zeros((n, m))
    for start in range(0, n, chunk):
        lists = tree.query_ball_point(points[start:min(start + chunk, n)], r=radius, p=np.inf, workers=-1)
        lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
        flat = np.fromiter(itertools.chain.from_iterable(lists), dtype=np.int64, count=int(lengths.sum()))
        rows = np.repeat(np.arange(len(lists)), lengths)
        for i in range(m):
            out[start:start + len(lists), i] = np.bincount(rows, weights=weights[flat, i], minlength=len(lists))
    return out


def _is_categorical(name: str, frames: Sequence[pd.DataFrame], schema: Any) -> bool:
    col = None if schema is None else getattr(schema, "columns", {}).get(name)
    if col is not None and col.kind in ("categorical", "numeric"):
        return col.kind == "categorical"
    return not all(is_numeric(f[name]) for f in frames)


def _check_roles(keys, sensitive, frames: Sequence[tuple[str, pd.DataFrame]]) -> list[str]:
    for name, frame in frames:
        check_frame(frame, name)
    keys = _check_keys(keys, frames[0][1], frames[1][1])
    for name, frame in frames[2:]:
        missing = [k for k in keys if k not in frame.columns]
        if missing:
            raise ValueError(f"keys {missing!r} are not columns of {name}")
    if not isinstance(sensitive, str):
        raise TypeError(f"sensitive must be a column name, got {type(sensitive).__name__}")
    if sensitive in keys:
        raise ValueError(f"the sensitive column {sensitive!r} must not also be a key")
    for name, frame in frames:
        if sensitive not in frame.columns:
            raise ValueError(f"the sensitive column {sensitive!r} is not a column of {name}")
        if len(frame) == 0:
            raise DataError(f"The {name} data have no rows, so nothing can be matched; load data with rows.")
    return keys


def default_sensitive_tolerance(column: str, frames: Sequence[pd.DataFrame], schema: Any = None) -> float:
    """The tolerance used for a numeric sensitive ``column`` when none is given: 5% of its public range."""
    return _sensitive_tolerance(None, column_domain(column, frames, schema))


def _sensitive_tolerance(value, domain) -> float:
    if value is None:
        # 5% of each end first: the span of numbers near ±1.8e308 would overflow to inf.
        tol = DEFAULT_TOLERANCE_SHARE * domain.upper - DEFAULT_TOLERANCE_SHARE * domain.lower
        return float(tol) if tol > 0 and math.isfinite(tol) else 0.0
    if isinstance(value, bool) or not isinstance(value, Real) or not (math.isfinite(value) and value >= 0):
        raise ValueError(f"sensitive_tolerance must be a finite number >= 0, got {value!r}")
    return float(value)


# --- key-match attribute disclosure ------------------------------------------

@dataclass(frozen=True, kw_only=True, eq=False)  # eq=False: a DataFrame field has no truth value
class KeyMatchDisclosure:
    """Attribute disclosure by matching on keys (see :func:`key_match_disclosure`).

    Attributes
    ----------
    share : float
        Share of confidential records whose sensitive value the matching
        synthetic rows reveal, in [0, 1] (a tie between k values counts 1/k).
    matched_share : float
        Share of confidential records with at least one matching synthetic row.
    n : int
        Number of confidential records.
    tolerance : float or None
        Tolerance used for a numeric sensitive value (None: categorical).
    per_record : pandas.DataFrame
        Per confidential record (same index): ``c`` matching synthetic rows,
        ``guess`` (the value they point to; missing when ``c`` is 0) and
        ``revealed`` in [0, 1].
    estimate : RiskEstimate
        The share with its interval, baseline, original and holdout references.
    """

    share: float
    matched_share: float
    n: int
    tolerance: float | None
    per_record: pd.DataFrame
    estimate: RiskEstimate


def _key_match(confidential: pd.DataFrame, synth: pd.DataFrame, keys: list[str], sensitive: str,
               key_tol: dict[str, float], categorical: bool, tol: float):
    """Per-record (c, guess, revealed) of the key-match attack of ``synth`` on ``confidential``."""
    n = len(confidential)
    if categorical:
        true, fake = shared_codes([confidential[sensitive], synth[sensitive]])
        levels = int(max(true.max(initial=-1), fake.max(initial=-1))) + 1
        c = _match_sums(confidential, synth, keys, key_tol, np.ones(len(synth)))[:, 0]
        best = np.zeros(n)                      # largest count of one value among the matches
        modes = np.zeros(n)                     # how many values reach it
        guess = np.full(n, -1, dtype=np.int64)  # the first of them
        truth = np.zeros(n)                     # count of the true value among the matches
        for b0 in range(0, levels, _BLOCK):
            codes = np.arange(b0, min(b0 + _BLOCK, levels))
            counts = _match_sums(confidential, synth, keys, key_tol, (fake[:, None] == codes).astype(float))
            top = counts.max(axis=1)
            at_top = (counts == top[:, None]).sum(axis=1)
            higher, equal = top > best, (top == best) & (top > 0)
            guess = np.where(higher, codes[counts.argmax(axis=1)], guess)
            modes = np.where(higher, at_top, np.where(equal, modes + at_top, modes))
            best = np.maximum(best, top)
            inside = (true >= b0) & (true < b0 + len(codes))
            truth[inside] = counts[inside, true[inside] - b0]
        revealed = np.where((c > 0) & (truth == best), 1.0 / np.maximum(modes, 1), 0.0)
        first = dict(zip(*np.unique(fake, return_index=True)))
        values = synth[sensitive].to_numpy(dtype=object)
        guesses = pd.Series([values[first[g]] if g >= 0 else None for g in guess], index=confidential.index,
                            dtype=object)
        return c, guesses, revealed
    y = as_float(synth[sensitive], sensitive)
    ok = ~np.isnan(y)
    sums = _match_sums(confidential, synth, keys, key_tol, np.column_stack([np.ones(len(y)), ok, np.where(ok, y, 0.0)]))
    c, counted, total = sums[:, 0], sums[:, 1], sums[:, 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        guess = np.where(counted > 0, total / np.maximum(counted, 1), np.nan)
    truth = as_float(confidential[sensitive], sensitive)
    slack = tol * _TOLERANCE_SLACK + 1e-12 * np.abs(truth)
    with np.errstate(invalid="ignore"):
        revealed = (np.abs(guess - truth) <= tol + slack).astype(float)
    return c, pd.Series(guess, index=confidential.index), revealed


def _intruder_setup(confidential, synth, holdout, keys, sensitive, tolerance, sensitive_tolerance, schema):
    """Checked keys and their tolerances, the frames, and how the sensitive column is matched.

    Returns ``(keys, key_tol, frames, categorical, domain, tol)``: ``tol`` is 0 for a categorical
    sensitive column, else the sensitive tolerance on its public ``domain``.
    """
    frames = [("confidential", confidential), ("synth", synth)]
    if holdout is not None:
        frames.append(("holdout", holdout))
    keys = _check_roles(keys, sensitive, frames)
    numeric = [k for k in keys if is_numeric(confidential[k]) and is_numeric(synth[k])]
    key_tol = _check_tolerance(tolerance, keys, numeric)
    everything = [f for _, f in frames]
    categorical = _is_categorical(sensitive, everything, schema)
    domain = column_domain(sensitive, everything, schema)
    tol = 0.0 if categorical else _sensitive_tolerance(sensitive_tolerance, domain)
    return keys, key_tol, everything, categorical, domain, tol


def key_match_disclosure(
    confidential: pd.DataFrame,
    synth: pd.DataFrame,
    keys: Sequence[str] | str,
    sensitive: str,
    *,
    tolerance: float | Mapping[str, float] | None = None,
    sensitive_tolerance: float | None = None,
    schema: Any = None,
    holdout: pd.DataFrame | None = None,
    confidence: float = CONFIDENCE,
) -> KeyMatchDisclosure:
    """How often synthetic rows sharing a record's keys reveal its sensitive value.

    For each confidential record the intruder collects the ``c`` synthetic
    rows matching its ``keys`` and guesses the sensitive value they point
    to: the most frequent value for a categorical column (a tie between k
    values, one of them true, counts 1/k), the mean for a numeric one,
    revealing it when within ``sensitive_tolerance`` of the truth. A record
    with no match reveals nothing.

    Parameters
    ----------
    confidential : pandas.DataFrame
        Records whose protection is measured (the rows the synthesizer saw).
    synth : pandas.DataFrame
        The synthetic data; any number of rows.
    keys : str or sequence of str
        Key variables the intruder knows, matched as in :func:`match_rates`.
    sensitive : str
        The column the intruder wants; must not be a key.
    tolerance : float, dict of str to float, or None, default=None
        Tolerance of numeric keys, as in :func:`match_rates` (None: exact).
    sensitive_tolerance : float or None, default=None
        Distance within which a numeric guess reveals the value. None: 5% of
        the column's public range. Ignored for a categorical column.
    schema : Schema or None, default=None
        Public domain (kinds, categories, bounds) for the baseline and the
        default tolerance; without it both are read off the data.
    holdout : pandas.DataFrame or None, default=None
        Records held out before synthesis; the same attack on them is the
        holdout reference.
    confidence : float, default=0.95
        Level of the intervals.

    Returns
    -------
    KeyMatchDisclosure
        Its ``estimate`` compares the share with random guessing from the
        public domain (baseline), with the original data released as is
        (every record then matches at least itself) and with the holdout.

    Examples
    --------
    >>> conf = pd.DataFrame({"zip": ["a", "a", "b"], "ill": ["flu", "cold", "flu"]})
    >>> synth = pd.DataFrame({"zip": ["a", "a", "a", "c"], "ill": ["flu", "flu", "cold", "flu"]})
    >>> r = key_match_disclosure(conf, synth, ["zip"], "ill")
    >>> r.per_record["revealed"].tolist(), r.share
    ([1.0, 0.0, 0.0], 0.3333333333333333)
    """
    keys, key_tol, everything, categorical, domain, tol = _intruder_setup(
        confidential, synth, holdout, keys, sensitive, tolerance, sensitive_tolerance, schema)

    def run(conf, rel):
        return _key_match(conf, rel, keys, sensitive, key_tol, categorical, tol)

    c, guess, revealed = run(confidential, synth)
    n = len(confidential)
    share = float(revealed.mean())
    lower, upper = wilson_interval(float(revealed.sum()), n, confidence=confidence)
    baseline = float(hit_probability(confidential[sensitive], domain, tol).mean())
    held = {}
    if holdout is not None:
        h = run(holdout, synth)[2]
        held = dict(zip(("holdout", "holdout_lower", "holdout_upper"),
                        (float(h.mean()), *wilson_interval(float(h.sum()), len(h), confidence=confidence))))
    estimate = RiskEstimate(
        metric="key_match_disclosure", value=share, lower=lower, upper=upper, interval="Wilson",
        baseline=baseline, baseline_lower=baseline, baseline_upper=baseline,
        baseline_label="random guessing from the public domain",
        original=float(run(confidential, confidential)[2].mean()), n=n, confidence=confidence, **held,
    )
    per_record = pd.DataFrame({"c": c.astype(np.int64), "guess": guess, "revealed": revealed},
                              index=confidential.index)
    return KeyMatchDisclosure(share=share, matched_share=float(np.mean(c > 0)), n=n,
                              tolerance=None if categorical else tol, per_record=per_record, estimate=estimate)


# --- uniques reproduced -------------------------------------------------------

@dataclass(frozen=True, kw_only=True, eq=False)
class UniqueReproduction:
    """Confidential records unique on the keys that reappear in the synthetic data.

    Attributes
    ----------
    share : float
        ``reproduced / n_unique`` (NaN when no record is unique).
    reproduced : int
        Unique records with a synthetic row matching their keys and their
        sensitive value (numeric: within the tolerance).
    n_unique, n : int
        Records unique on the keys; all records.
    per_record : pandas.DataFrame
        ``unique`` and ``reproduced`` (bool) per confidential record.
    estimate : RiskEstimate
    """

    share: float
    reproduced: int
    n_unique: int
    n: int
    per_record: pd.DataFrame
    estimate: RiskEstimate


def _uniques(frame: pd.DataFrame, keys: list[str]) -> np.ndarray:
    """True for rows whose key combination occurs once in ``frame`` (exact values)."""
    ids = combine_codes([shared_codes([frame[k]])[0] for k in keys], len(frame))
    return np.bincount(ids)[ids] == 1


def _reproduced(conf, synth, keys, sensitive, key_tol, tol, categorical):
    tolerances = dict(key_tol)
    if not categorical and tol > 0:
        tolerances[sensitive] = tol
    unique = _uniques(conf, keys)
    found = _match_sums(conf, synth, [*keys, sensitive], tolerances, np.ones(len(synth)))[:, 0] > 0
    return unique, unique & found


def unique_reproduction(
    confidential: pd.DataFrame,
    synth: pd.DataFrame,
    keys: Sequence[str] | str,
    sensitive: str,
    *,
    tolerance: float | Mapping[str, float] | None = None,
    sensitive_tolerance: float | None = None,
    schema: Any = None,
    holdout: pd.DataFrame | None = None,
    confidence: float = CONFIDENCE,
) -> UniqueReproduction:
    """Share of confidential records unique on the keys whose keys and sensitive value reappear in ``synth``.

    A record unique on its keys (exact values) in the confidential data is
    the one an intruder can single out; if a synthetic row carries the same
    keys (numeric keys within ``tolerance``) and the same sensitive value
    (numeric: within ``sensitive_tolerance``, default 5% of its range), the
    release appears to confirm that person's value.

    Parameters are as in :func:`key_match_disclosure`. The baseline is the
    chance that random data of ``len(synth)`` rows within the public domain
    holds such a row; the original data released as is reproduces every
    unique (1); the holdout reference counts the holdout's own uniques.

    Examples
    --------
    >>> conf = pd.DataFrame({"zip": ["a", "b", "b", "c"], "ill": ["flu", "flu", "cold", "flu"]})
    >>> synth = pd.DataFrame({"zip": ["a", "c"], "ill": ["flu", "cold"]})
    >>> r = unique_reproduction(conf, synth, ["zip"], "ill")  # uniques: a/flu (reproduced), c/flu (not)
    >>> r.n_unique, r.reproduced, r.share
    (2, 1, 0.5)
    """
    keys, key_tol, everything, categorical, s_domain, tol = _intruder_setup(
        confidential, synth, holdout, keys, sensitive, tolerance, sensitive_tolerance, schema)

    unique, hit = _reproduced(confidential, synth, keys, sensitive, key_tol, tol, categorical)
    n_unique, reproduced = int(unique.sum()), int(hit.sum())
    share = reproduced / n_unique if n_unique else math.nan
    lower, upper = wilson_interval(reproduced, n_unique, confidence=confidence) if n_unique else (math.nan,) * 2
    # Random data of n_s rows within the public domain: a row matches record j
    # with probability pi_j (a product over the columns), so at least one does
    # with probability 1 - (1 - pi_j)^n_s.
    pi = hit_probability(confidential[sensitive], s_domain, tol)
    for k in keys:
        pi = pi * hit_probability(confidential[k], column_domain(k, everything, schema), key_tol.get(k, 0.0))
    chance = -np.expm1(len(synth) * np.log1p(-np.minimum(pi, 1.0 - 1e-16)))
    baseline = float(chance[unique].mean()) if n_unique else math.nan
    held = {}
    if holdout is not None:
        hu, hh = _reproduced(holdout, synth, keys, sensitive, key_tol, tol, categorical)
        if hu.sum():
            held = dict(zip(("holdout", "holdout_lower", "holdout_upper"),
                            (float(hh.sum() / hu.sum()), *wilson_interval(int(hh.sum()), int(hu.sum()),
                                                                          confidence=confidence))))
    estimate = RiskEstimate(
        metric="uniques_reproduced", value=share, lower=lower, upper=upper, interval="Wilson",
        baseline=baseline, baseline_lower=baseline, baseline_upper=baseline,
        baseline_label="random data within the public domain",
        original=1.0 if n_unique else math.nan,  # the original data contains each unique record
        n=n_unique, confidence=confidence, **held,
    )
    per_record = pd.DataFrame({"unique": unique, "reproduced": hit}, index=confidential.index)
    return UniqueReproduction(share=share, reproduced=reproduced, n_unique=n_unique, n=len(confidential),
                              per_record=per_record, estimate=estimate)


# --- sample uniqueness ----------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class SampleUniqueness:
    """Share of rows unique on the keys, in the real and in the synthetic data."""

    real_share: float
    synth_share: float
    real_n: int
    synth_n: int
    estimate: RiskEstimate


def sample_uniqueness(real: pd.DataFrame, synth: pd.DataFrame, keys: Sequence[str] | str, *,
                      schema: Any = None, seed: int | np.random.Generator | None = None,
                      confidence: float = CONFIDENCE) -> SampleUniqueness:
    """Sample uniqueness on the keys (exact values), real vs synthetic.

    The estimate is the synthetic share with a Wilson interval; its original
    reference is the real share, its baseline the share in random data of
    ``len(synth)`` rows drawn within the public domain (seeded by ``seed``),
    with its own Wilson interval.

    Examples
    --------
    >>> real = pd.DataFrame({"g": ["a", "a", "b"]})
    >>> r = sample_uniqueness(real, pd.DataFrame({"g": ["a", "b", "c", "c"]}), "g", seed=0)
    >>> r.real_share, r.synth_share
    (0.3333333333333333, 0.5)
    """
    check_frame(real, "real")
    check_frame(synth, "synth")
    keys = _check_keys(keys, real, synth)
    if len(real) == 0 or len(synth) == 0:
        raise DataError("Sample uniqueness needs rows in both the real and the synthetic data; load data with rows.")
    real_u, synth_u = _uniques(real, keys), _uniques(synth, keys)
    n_s = len(synth)
    domains = {k: column_domain(k, [real, synth], schema) for k in keys}
    noise_u = _uniques(random_public_data(keys, domains, n_s, np.random.default_rng(seed)), keys)
    lower, upper = wilson_interval(int(synth_u.sum()), n_s, confidence=confidence)
    b_lower, b_upper = wilson_interval(int(noise_u.sum()), n_s, confidence=confidence)
    estimate = RiskEstimate(
        metric="synthetic_uniques", value=float(synth_u.mean()), lower=lower, upper=upper, interval="Wilson",
        baseline=float(noise_u.mean()), baseline_lower=b_lower, baseline_upper=b_upper,
        baseline_label="random data within the public domain", original=float(real_u.mean()),
        n=n_s, confidence=confidence, holdout_applies=False,
    )
    return SampleUniqueness(real_share=float(real_u.mean()), synth_share=float(synth_u.mean()),
                            real_n=len(real), synth_n=n_s, estimate=estimate)


# --- registry -------------------------------------------------------------------

register(Metric(
    name="key_match_disclosure", label="Key-match attribute disclosure", kind="risk", goal="minimize",
    lower=0.0, upper=1.0, best=0.0,
    reading="Share of confidential records whose sensitive value the synthetic rows sharing their keys reveal.",
    section="key match", needs={"keys", "sensitive"},
    compute=lambda ctx: key_match_of(ctx).share, estimate=lambda ctx: key_match_of(ctx).estimate,
))
register(Metric(
    name="uniques_reproduced", label="Uniques reproduced", kind="risk", goal="minimize",
    lower=0.0, upper=1.0, best=0.0,
    reading="Share of records unique on the keys whose keys and sensitive value reappear in the synthetic data.",
    section="key match", needs={"keys", "sensitive"},
    compute=lambda ctx: uniques_of(ctx).share, estimate=lambda ctx: uniques_of(ctx).estimate, on_copy=1.0,
))
register(Metric(
    name="synthetic_uniques", label="Synthetic uniques on keys", kind="risk", goal="minimize",
    lower=0.0, upper=1.0, best=0.0,
    reading="Share of synthetic rows unique on the key variables (compare with the real data's share).",
    section="key match", needs={"keys"},
    compute=lambda ctx: sample_uniqueness_of(ctx).synth_share,
))


def _roles(schema) -> tuple[list[str], str | None]:
    keys = list(getattr(schema, "keys", ()) or ()) if schema is not None else []
    return keys, getattr(schema, "sensitive", None) if schema is not None else None


def key_match_of(ctx) -> KeyMatchDisclosure:
    """Key-match disclosure on a metric context's roles and holdout (the Risk page puts its own, with the
    tolerances it chose, in ``ctx.shared["key_match"]``)."""
    return ctx.cached("key_match", lambda: key_match_disclosure(ctx.real, ctx.synth, list(ctx.keys), ctx.sensitive,
                                                               schema=ctx.schema, holdout=ctx.holdout))


def uniques_of(ctx) -> UniqueReproduction:
    """Reproduced uniques on a metric context's roles and holdout (shared as ``"uniques"``)."""
    return ctx.cached("uniques", lambda: unique_reproduction(ctx.real, ctx.synth, list(ctx.keys), ctx.sensitive,
                                                            schema=ctx.schema, holdout=ctx.holdout))


def sample_uniqueness_of(ctx) -> SampleUniqueness:
    """Uniqueness on a metric context's keys (shared as ``"sample_uniqueness"``)."""
    return ctx.cached("sample_uniqueness", lambda: sample_uniqueness(ctx.real, ctx.synth, list(ctx.keys),
                                                                    schema=ctx.schema, seed=ctx.seed))
