"""Demo 7: sequential regression synthesis on the penguins, step by step."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..synth.base import make_rng
from ._checks import check_int


def _ols(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    resid = y - X @ beta
    return beta, math.sqrt(resid @ resid / (len(y) - X.shape[1]))


# The demo's steps on the penguins, and how many rows of its ``summary`` each step has produced so far.
SEQUENTIAL_STEPS = {1: "1. sex from its proportions", 2: "2. bill length: bare predictions",
                    3: "3. bill length: plus residual noise", 4: "4. flipper length from sex and bill length"}
SEQUENTIAL_SUMMARY_ROWS = {1: 1, 2: 3, 3: 3, 4: 6}


def sequential_synthesis_demo(df: pd.DataFrame, *, category: str = "sex", first: str = "bill_length_mm",
                              second: str = "flipper_length_mm", n_synth: int | None = None,
                              seed: int | np.random.Generator | None = 0) -> dict:
    """Sequential regression synthesis in three steps, without and with residual noise.

    Rows missing any of the three columns are dropped. Step 1 draws the
    binary ``category`` from its observed proportions. Step 2 fits
    ``first`` ~ 1 + category by least squares and synthesizes it either as
    the bare prediction Xβ̂ ("bare") or as Xβ̂ + N(0, σ̂²) ("noisy"). Step 3
    fits ``second`` ~ 1 + category + first and synthesizes it the same way
    from each variant's own synthetic predictors. Both variants share step 1,
    so the residual noise is their only difference. Not DP: the models are
    fitted on the confidential data without noise (the Urban course's
    parametric approach).

    Returns
    -------
    dict
        ``real``, ``bare``, ``noisy`` (DataFrames of the three columns),
        ``models`` (DataFrame: ``target``, ``term``, ``coefficient``, plus the
        residual sd as term ``sigma``) and ``summary`` (DataFrame: ``statistic``
        with a ``real``, ``bare`` and ``noisy`` value: each numeric column's
        mean and sd, the category's share, and the correlation of the two
        numeric columns).
    """
    cols = [category, first, second]
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"columns not in the data: {missing}")
    real = df[cols].dropna().reset_index(drop=True)
    levels = sorted(real[category].unique())
    if len(levels) != 2:
        raise ValueError(f"{category!r} must have exactly two values, found {len(levels)}")
    if len(real) < 4:
        raise ValueError("need at least 4 complete rows")
    n = len(real) if n_synth is None else check_int("n_synth", n_synth, 1)
    rng = make_rng(seed)
    ind = (real[category] == levels[1]).to_numpy(float)
    y1, y2 = real[first].to_numpy(float), real[second].to_numpy(float)
    beta1, s1 = _ols(np.column_stack([np.ones(len(ind)), ind]), y1)
    beta2, s2 = _ols(np.column_stack([np.ones(len(ind)), ind, y1]), y2)

    syn_ind = (rng.random(n) < ind.mean()).astype(float)
    z1, z2 = rng.standard_normal(n), rng.standard_normal(n)
    out = {}
    for variant, noise in (("bare", 0.0), ("noisy", 1.0)):
        a = beta1[0] + beta1[1] * syn_ind + noise * s1 * z1
        b = beta2[0] + beta2[1] * syn_ind + beta2[2] * a + noise * s2 * z2
        out[variant] = pd.DataFrame({category: np.where(syn_ind == 1, levels[1], levels[0]), first: a, second: b})

    models = pd.DataFrame({
        "target": [first] * 3 + [second] * 4,
        "term": ["intercept", f"{category}={levels[1]}", "sigma",
                 "intercept", f"{category}={levels[1]}", first, "sigma"],
        "coefficient": [*beta1, s1, *beta2, s2],
    })

    def stats_of(d: pd.DataFrame) -> list[float]:
        return [float((d[category] == levels[1]).mean()), d[first].mean(), d[first].std(), d[second].mean(),
                d[second].std(), float(np.corrcoef(d[first], d[second])[0, 1]) if d[first].std() > 0 else np.nan]

    names = [f"share {category}={levels[1]}", f"mean {first}", f"sd {first}", f"mean {second}",
             f"sd {second}", f"correlation {first}, {second}"]
    summary = pd.DataFrame({"statistic": names, "real": stats_of(real), "bare": stats_of(out["bare"]),
                            "noisy": stats_of(out["noisy"])})
    return {"real": real, "bare": out["bare"], "noisy": out["noisy"], "models": models, "summary": summary,
            "levels": levels}
