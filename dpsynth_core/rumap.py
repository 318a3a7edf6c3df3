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
from .metric_info import METRICS
from .risk import exact_copy_share, gower_dcr
from .schema import Schema
from .synth import SYNTHESIZERS, synthesize
from .utility import ks_statistic, propensity_metrics

#: Columns of :func:`ru_map` that hold measures, in display order.
UTILITY_COLUMNS = ("pmse_ratio", "auc", "specks", "ks_mean")
RISK_COLUMNS = ("exact_copy_share", "dcr_median")


def point_seed(base: int, method: str, epsilon: float, rep: int) -> int:
    """Seed of one point, stable whatever else is in the sweep."""
    eps_key = 0 if math.isnan(epsilon) else int(round(epsilon * 1_000_000))
    seq = np.random.SeedSequence([base, zlib.crc32(method.encode()), eps_key, rep])
    return int(seq.generate_state(1)[0])


def score(real: pd.DataFrame, synth: pd.DataFrame, *, schema: Schema | None, seed: int) -> dict[str, float]:
    """The utility and risk measures of one synthetic dataset."""
    used = schema.used if schema is not None else list(real.columns)
    r, s = real[used], synth[used]
    prop = propensity_metrics(r, s, interactions=True, seed=seed,
                              max_rows=constraints.PROPENSITY_HEADLINE_ROWS)
    numeric = [c for c in used if pd.api.types.is_numeric_dtype(r[c])
               and (schema is None or schema[c].kind == "numeric")]
    ks = [ks_statistic(r[c].to_numpy(float), s[c].to_numpy(float)) for c in numeric]
    dcr = gower_dcr(r, s, schema=schema)
    return {
        "pmse_ratio": prop.pmse_ratio,
        "auc": prop.auc,
        "specks": prop.specks,
        "ks_mean": float(np.mean(ks)) if ks else float("nan"),
        "exact_copy_share": exact_copy_share(r, s),
        "dcr_median": float(np.median(dcr)),
    }


def ru_map(
    df: pd.DataFrame,
    methods: Sequence[str],
    epsilons: Sequence[float],
    *,
    reps: int = 1,
    seed: int | None = None,
    schema: Schema | None = None,
    references: bool = True,
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
    progress : callable, optional
        Called as ``progress(fraction_done, message)`` after each point.

    Returns
    -------
    pandas.DataFrame
        One row per point: ``method``, ``label``, ``is_dp`` (of the run, as
        its ledger says), ``epsilon``, ``rep``, ``seed``, ``reference`` and
        the measures in :data:`UTILITY_COLUMNS` and :data:`RISK_COLUMNS`.
    """
    unknown = [m for m in methods if m not in SYNTHESIZERS]
    if unknown:
        raise ValueError(f"unknown methods {unknown}; choose from {sorted(SYNTHESIZERS)}")
    if reps < 1:
        raise ValueError(f"reps must be at least 1, got {reps}")
    base = int(np.random.SeedSequence(seed).entropy % 2**63) if seed is None else int(seed)
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
                     **score(df, df, schema=schema, seed=base)})
    for i, (m, eps, rep) in enumerate(jobs):
        s = point_seed(base, m, eps, rep)
        result = synthesize(df, m, epsilon=None if math.isnan(eps) else eps, schema=schema, seed=s)
        rows.append({"method": m, "label": SYNTHESIZERS[m].label, "is_dp": result.ledger["is_dp"],
                     "epsilon": eps, "rep": rep, "seed": s, "reference": m == "bootstrap",
                     **score(df, result.data, schema=result.schema, seed=s)})
        if progress is not None:
            progress((i + 1) / len(jobs), f"{SYNTHESIZERS[m].label}, ε = {eps:g}, replicate {rep + 1}")
    return pd.DataFrame(rows)


def metric_options(kind: str) -> list[str]:
    """Measures of ``kind`` ("utility" or "risk") that :func:`ru_map` reports."""
    cols = UTILITY_COLUMNS if kind == "utility" else RISK_COLUMNS
    return [c for c in cols if c in METRICS]
