"""The core's measures as the pages call them, cached in the session (``ui.cache.session_cache``):
Risk's disclosure measures, Compare's utility measures, the R-U sweep and the Synthesize page's headline.

Each is keyed by ``key`` (the synthesis key, which holds the data's content hash) and its settings; the
frames are passed as unkeyed ``_`` arguments.
"""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

import dpsynth_core as core
from ui import spending, state
from ui.cache import measures_in_session, session_cache, session_store
from ui.errors import show_error

# -- Risk page: each call returns the measure with its references (dpsynth_core.risk) --


@session_cache("Measuring distances to the closest records…", max_entries=8)
def distance_risk(key: str, _train, _synth, _holdout, _schema, seed: int):
    return core.risk.distance_risk(_train, _synth, holdout=_holdout, schema=_schema, seed=seed,
                                   max_rows=core.constraints.RISK_DISTANCE_MAX_ROWS)


@session_cache("Matching records…", max_entries=8)
def match_risk(key: str, _real, _released, keys: tuple, tolerance, _schema):
    return core.risk.match_risk(_real, _released, list(keys), tolerance=tolerance, schema=_schema)


@session_cache("Matching on key variables…", max_entries=8)
def key_match_risk(key: str, _real, _synth, _holdout, keys: tuple, sensitive: str, tolerance, sensitive_tolerance,
                   _schema, seed: int):
    """Key-match attribute disclosure, reproduced uniques and sample uniqueness, together."""
    kw = dict(tolerance=tolerance, sensitive_tolerance=sensitive_tolerance, schema=_schema, holdout=_holdout)
    return (core.risk.key_match_disclosure(_real, _synth, list(keys), sensitive, **kw),
            core.risk.unique_reproduction(_real, _synth, list(keys), sensitive, **kw),
            core.risk.sample_uniqueness(_real, _synth, list(keys), schema=_schema, seed=seed))


@session_cache("Fitting the intruder's model…", max_entries=8)
def attribute_inference(key: str, _real, _synth, _holdout, keys: tuple, sensitive: str, _schema, seed: int):
    return core.risk.attribute_inference(_real, _synth, list(keys), sensitive, schema=_schema, holdout=_holdout,
                                         seed=seed)


# -- Compare page: utility measures (dpsynth_core.utility) --


@session_cache("Fitting the discriminator…", max_entries=8)
def discriminator(key: str, _real, _synth, choice: str, holdout: float, permutations: int, seed: int,
                  categorical: tuple):
    return core.utility.run_discriminator(_real, _synth, choice, seed=seed, holdout=holdout,
                                          permutations=permutations, categorical=list(categorical))


@session_cache("Comparing columns and pairs…", max_entries=8)
def utility_summary(key: str, _real, _synth, categorical: tuple):
    return core.utility.utility_summary(_real, _synth, categorical=list(categorical))


@session_cache("Fitting the regression…", max_entries=8)
def regression(key: str, _real, _synths: tuple, outcome: str, predictors: tuple, family: str,
               partially_synthetic: bool, categorical: tuple, seed: int):
    return core.regression_ci_overlap(_real, list(_synths), outcome, list(predictors), family=family,
                                      partially_synthetic=partially_synthetic, categorical=list(categorical),
                                      max_cells=core.constraints.REGRESSION_MAX_CELLS, seed=seed)


# -- Synthesize page: the headline readout (dpsynth_core.readout) --


@session_cache(max_entries=8)
def headline(key: str, _real, _synth, _schema, seed: int):
    return core.readout.headline(_real, _synth, _schema, seed)


# -- R-U map page --


def ru_sweep(key: str, df, schema, methods: tuple, epsilons: tuple, reps: int, seed: int, *, confidential: bool,
             progress=None, metrics: tuple | None = None, holdout: float = 0.0, scheduler: str = "") -> pd.DataFrame:
    """The R-U sweep; revisiting the same settings costs nothing (and computes nothing new on the data).

    On the session's dataset (``confidential``) the core writes every point to the ledger store as it
    arrives; a public look-alike file (not ``confidential``) is recorded nowhere.

    Its points run on this machine's cores, or on the Dask cluster at
    ``scheduler``; the table is the same either way, so the cache ignores it.

    Cached by hand rather than with session_cache, whose spinner would sit beside the progress bar.
    Keyed by content like every cache here (``key`` holds the data's hash).
    """
    # The session's split of its own dataset (a public look-alike gets a fresh one), so a chosen
    # point rebuilds on the same rows.
    mask = state.holdout_mask(holdout) if df is state.dataset().df else None
    full = json.dumps([key, methods, epsilons, reps, seed, metrics, holdout,
                       state.mask_key(holdout) if mask is not None else "fresh"], default=str)
    sweeps = session_store("ru_sweep")  # the session's own: released when it ends
    if full in sweeps:
        sweeps.move_to_end(full)
        return sweeps[full]
    with measures_in_session(), core.cluster.on_scheduler(scheduler):
        table = core.ru_map(df, list(methods), list(epsilons), reps=reps, seed=seed, schema=schema,
                            progress=progress, metrics=list(metrics) if metrics else None, holdout=holdout,
                            holdout_mask=mask, confidential=confidential,
                            use=spending.use("sweep point") if confidential else None,
                            store=spending.store() if confidential else None)
    sweeps[full] = table
    while len(sweeps) > 4:
        sweeps.popitem(last=False)
    return table


def public_lookalike(upload) -> pd.DataFrame | None:
    """A public file with the dataset's columns, for tuning without touching the confidential data."""
    if upload is None:
        st.info("Upload a public file with the same columns (for example an earlier public release).")
        return None
    try:
        df = core.load_csv(upload)
        state.dataset().schema.check_frame(df)
    except core.DataError as err:
        show_error(str(err))
        return None
    return df[[c for c in state.dataset().df.columns if c in df.columns]]
