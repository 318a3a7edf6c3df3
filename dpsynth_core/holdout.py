"""Rows held out of a synthesis, for the measures that compare it with records it never saw (membership
inference): which rows, drawn with fresh secret randomness, and the split. The app's pages, the R-U sweep and
the command line share them."""

from __future__ import annotations

import numpy as np
import pandas as pd


def holdout_mask(n: int, share: float, rng: np.random.Generator | None = None) -> np.ndarray:
    """Which of ``n`` records are held out: each independently with probability ``share``.

    The randomness is fresh operating-system entropy (``rng`` is for tests), never
    a seed derived from the data or stored anywhere: adding one record changes
    only that record's membership, and the split itself reveals nothing about
    the data. Keep the mask (not a seed) to reuse the split.
    """
    if not 0.0 <= share < 1.0:
        raise ValueError(f"holdout must be a share in [0, 1), got {share!r}")
    rng = np.random.default_rng() if rng is None else rng
    return rng.random(n) < share


def split_holdout(df: pd.DataFrame, share: float, *, mask: np.ndarray | None = None,
                  rng: np.random.Generator | None = None) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """Rows for the synthesizer and rows held out (None when ``share`` is 0).

    ``mask`` (True: held out) comes from :func:`holdout_mask`; without it one is
    drawn here with fresh randomness (``rng`` for tests).
    """
    if share <= 0:
        return df, None
    if mask is None:
        mask = holdout_mask(len(df), share, rng)
    mask = np.asarray(mask, dtype=bool)
    if len(mask) != len(df):
        raise ValueError(f"the holdout mask has {len(mask)} entries for {len(df)} rows")
    if mask.all() or not mask.any():
        raise ValueError(f"a holdout share of {share:g} left no rows on one side of {len(df)}; "
                         "choose a share nearer one half or use more rows")
    return df[~mask].reset_index(drop=True), df[mask].reset_index(drop=True)
