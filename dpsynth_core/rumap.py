"""The risk-utility map (Duncan, Keller-McNulty & Stokes; METHODS.md §5).

One point per (synthesizer, ε, replicate): a synthesis scored by utility
and disclosure-risk measures, plus two reference points: the original data
released as is, and the bootstrap. Each point records the integer seed it
used, so the app can rebuild exactly that synthesis when a point is chosen.
"""

from __future__ import annotations

import math
import zlib
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from . import constraints
from .scoring import SCORERS, register_scorer
from .risk import exact_copy_share, gower_dcr, membership_inference
from .schema import Schema
from .synth import SYNTHESIZERS, synthesize
from .utility import ks_statistic, propensity_metrics

def _propensity(real, synth, *, seed, shared, **_):
    if "propensity" not in shared:
        shared["propensity"] = propensity_metrics(real, synth, interactions=True, seed=seed,
                                                  max_rows=constraints.PROPENSITY_HEADLINE_ROWS)
    return shared["propensity"]


def _ks_mean(real, synth, *, schema, **_):
    numeric = [c for c in real.columns if schema is None or schema[c].kind == "numeric"]
    numeric = [c for c in numeric if pd.api.types.is_numeric_dtype(real[c])]
    ks = [ks_statistic(real[c].to_numpy(float), synth[c].to_numpy(float)) for c in numeric]
    return float(np.mean(ks)) if ks else float("nan")


for _name in ("pmse_ratio", "auc", "specks"):
    register_scorer(_name, lambda r, s, _n=_name, **kw: getattr(_propensity(r, s, **kw), _n))
register_scorer("ks_mean", _ks_mean)
register_scorer("exact_copy_share", lambda r, s, **_: exact_copy_share(r, s))
register_scorer("mia_auc", lambda r, s, *, schema, holdout, **_: membership_inference(r, holdout, s, schema=schema).auc,
                needs_holdout=True)
register_scorer("dcr_median", lambda r, s, *, schema, **_: float(np.median(gower_dcr(r, s, schema=schema))))

#: Measures reported by default, in display order.
UTILITY_COLUMNS = ("pmse_ratio", "auc", "specks", "ks_mean")
RISK_COLUMNS = ("exact_copy_share", "dcr_median")


def point_seed(base: int, method: str, epsilon: float, rep: int) -> int:
    """Seed of one point, stable whatever else is in the sweep."""
    eps_key = 0 if math.isnan(epsilon) else int(round(epsilon * 1_000_000))
    seq = np.random.SeedSequence([base, zlib.crc32(method.encode()), eps_key, rep])
    return int(seq.generate_state(1)[0])


def score(real: pd.DataFrame, synth: pd.DataFrame, *, schema: Schema | None, seed: int,
          holdout: pd.DataFrame | None = None, metrics: Sequence[str] | None = None) -> dict[str, float]:
    """The measures ``metrics`` (default: the R-U defaults) of one synthetic dataset.

    Measures sharing a model (the propensity trio) fit it once: scorers get a
    ``shared`` dict, private to this call, to keep such results in.
    """
    used = schema.used if schema is not None else list(real.columns)
    r, s = real[used], synth[used]
    h = holdout[used] if holdout is not None else None
    out, shared = {}, {}
    for name in metrics or UTILITY_COLUMNS + RISK_COLUMNS:
        sc = SCORERS[name]
        out[name] = float("nan") if sc.needs_holdout and h is None else \
            float(sc.fn(r, s, schema=schema, seed=seed, holdout=h, shared=shared))
    return out


def ru_map(
    df: pd.DataFrame,
    methods: Sequence[str],
    epsilons: Sequence[float],
    *,
    reps: int = 1,
    seed: int | None = None,
    schema: Schema | None = None,
    references: bool = True,
    metrics: Sequence[str] | None = None,
    holdout: float = 0.0,
    progress: Callable[[float, str], None] | None = None,
) -> pd.DataFrame:
    """Sweep ``methods`` over ``epsilons`` and score every synthesis.

    Parameters
    ----------
    df : pandas.DataFrame
        Confidential data.
    methods : sequence of str
        Names in :data:`SYNTHESIZERS`. Non-DP methods ignore ε and get one
        point per replicate, with ``epsilon`` NaN.
    epsilons : sequence of float
        ε grid for the DP methods.
    reps : int, default 1
        Replicates per (method, ε), each with its own seed.
    seed : int, optional
        Base seed; each point's seed is derived from it (column ``seed``).
    schema : Schema, optional
        Public schema; without it bounds are read off the data (not DP).
    references : bool, default True
        Add the original data and the bootstrap as reference points.
    metrics : sequence of str, optional
        Names in :data:`SCORERS`; default the utility and risk defaults.
    holdout : float, default 0
        Share of rows held out before synthesis (by the base seed); the
        synthesizers see the rest, and holdout-based measures (membership
        inference) compare the two. 0 holds nothing out.
    progress : callable, optional
        Called as ``progress(fraction_done, message)`` after each point.

    Returns
    -------
    pandas.DataFrame
        One row per point: ``method``, ``label``, ``is_dp`` (of the run, as
        its ledger says), ``epsilon``, ``rep``, ``seed``, ``reference`` and
        one column per measure.
    """
    unknown = [m for m in methods if m not in SYNTHESIZERS]
    if unknown:
        raise ValueError(f"unknown methods {unknown}; choose from {sorted(SYNTHESIZERS)}")
    if reps < 1:
        raise ValueError(f"reps must be at least 1, got {reps}")
    if not 0.0 <= holdout < 1.0:
        raise ValueError(f"holdout must be a share in [0, 1), got {holdout!r}")
    metrics = list(metrics or UTILITY_COLUMNS + RISK_COLUMNS)
    unknown = [m for m in metrics if m not in SCORERS]
    if unknown:
        raise ValueError(f"unknown measures {unknown}; choose from {sorted(SCORERS)}")
    base = int(np.random.SeedSequence(seed).entropy % 2**63) if seed is None else int(seed)
    train, held = split_holdout(df, holdout, seed=base)
    jobs: list[tuple[str, float, int]] = []
    for m in dict.fromkeys(methods):
        grid = [float(e) for e in epsilons] if SYNTHESIZERS[m].is_dp else [math.nan]
        jobs += [(m, e, r) for e in grid for r in range(reps)]
    if references and "bootstrap" not in methods:
        jobs += [("bootstrap", math.nan, r) for r in range(reps)]

    rows = []
    if references:
        rows.append({"method": "original", "label": "Original data", "is_dp": False, "epsilon": math.nan,
                     "rep": 0, "seed": base, "reference": True,
                     **score(train, train, schema=schema, seed=base, holdout=held, metrics=metrics)})
    for i, (m, eps, rep) in enumerate(jobs):
        s = point_seed(base, m, eps, rep)
        result = synthesize(train, m, epsilon=None if math.isnan(eps) else eps, schema=schema, seed=s)
        rows.append({"method": m, "label": SYNTHESIZERS[m].label, "is_dp": result.ledger["is_dp"],
                     "epsilon": eps, "rep": rep, "seed": s, "reference": m == "bootstrap",
                     **score(train, result.data, schema=result.schema, seed=s, holdout=held,
                             metrics=metrics)})
        if progress is not None:
            progress((i + 1) / len(jobs), f"{SYNTHESIZERS[m].label}, ε = {eps:g}, replicate {rep + 1}")
    return pd.DataFrame(rows)


def split_holdout(df: pd.DataFrame, share: float, *, seed: int) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """Rows for the synthesizer and rows held out (None when ``share`` is 0), by a seeded permutation."""
    if share <= 0:
        return df, None
    order = np.random.default_rng(seed).permutation(len(df))
    k = int(round(share * len(df)))
    if not 0 < k < len(df):
        raise ValueError(f"a holdout share of {share:g} leaves no rows on one side of {len(df)}")
    return df.iloc[np.sort(order[k:])].reset_index(drop=True), df.iloc[np.sort(order[:k])].reset_index(drop=True)


def metric_options(kind: str) -> list[str]:
    """Measures of ``kind`` ("utility" or "risk") the sweep can report, defaults first."""
    defaults = UTILITY_COLUMNS if kind == "utility" else RISK_COLUMNS
    return [*defaults, *sorted(n for n, sc in SCORERS.items() if sc.kind == kind and n not in defaults)]
