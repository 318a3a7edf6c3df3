"""Session state and cached core calls shared by the pages.

Everything here is glue: numbers come from ``dpsynth_core``. Cached calls
are keyed by the dataset's full content hash (``fingerprint``), never by the
session, so a cache entry can only be reached by someone holding the same
data. The DataFrame itself is passed as an unhashed ``_df`` argument because
Streamlit hashes only a sample of the rows of a large frame.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import pandas as pd
import streamlit as st

import dpsynth_core as core


@dataclass(frozen=True)
class Dataset:
    """The table the session works on."""

    name: str
    df: pd.DataFrame
    schema: core.Schema
    fingerprint: str
    source: str  # "bundled" or "upload"


@dataclass(frozen=True)
class SynthConfig:
    method: str = "independent"
    epsilon: float = core.constraints.EPSILON_DEFAULT
    delta: float = 0.0
    seed: int = 2026
    n: int | None = None
    columns: tuple[str, ...] | None = None  # None: all modelled columns
    holdout: float = 0.0  # share of rows kept away from the synthesizer, for holdout-based risk
    implicates: int = 1


def _dataset_from(name: str, df: pd.DataFrame, schema: core.Schema, source: str) -> Dataset:
    return Dataset(name, df, schema, core.fingerprint(df), source)


@st.cache_data(show_spinner=False, max_entries=4)
def _bundled(name: str):
    return core.load_bundled(name)


def init_session() -> None:
    """Open on the penguins with nothing uploaded."""
    if "dataset" not in st.session_state:
        set_bundled("penguins")
    st.session_state.setdefault("synth_config", SynthConfig())


def set_bundled(name: str) -> None:
    df, schema = _bundled(name)
    st.session_state["dataset"] = _dataset_from(name, df, schema, "bundled")
    st.session_state["synth_config"] = SynthConfig()
    st.session_state.pop("ru_result", None)


def set_uploaded(name: str, df: pd.DataFrame) -> None:
    st.session_state["dataset"] = _dataset_from(name, df, core.infer_schema(df), "upload")
    st.session_state["synth_config"] = SynthConfig()
    st.session_state.pop("ru_result", None)


def dataset() -> Dataset:
    return st.session_state["dataset"]


def set_schema(schema: core.Schema) -> None:
    ds = dataset()
    st.session_state["dataset"] = Dataset(ds.name, ds.df, schema, ds.fingerprint, ds.source)
    cfg = config()
    if cfg.columns is not None:
        kept = tuple(c for c in cfg.columns if c in schema.used)
        set_config(columns=kept or None)


def config() -> SynthConfig:
    return st.session_state["synth_config"]


def set_config(**changes) -> None:
    cfg = config()
    st.session_state["synth_config"] = SynthConfig(**{**cfg.__dict__, **changes})


def split() -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """(rows the synthesizer sees, held-out rows or None), fixed per dataset so ε and seed can move."""
    ds, cfg = dataset(), config()
    return core.rumap.split_holdout(ds.df, cfg.holdout, seed=int(ds.fingerprint[:8], 16))


@st.cache_data(show_spinner="Synthesizing…", max_entries=64)
def _synthesis(fingerprint: str, _df: pd.DataFrame, schema_json: str, method: str, epsilon: float,
               delta: float, seed: int, n: int | None, columns: tuple | None, holdout: float,
               implicates: int) -> core.Synthesis:
    schema = core.Schema.from_dict(json.loads(schema_json))
    return core.synthesize(_df, method, epsilon=epsilon, delta=delta, schema=schema, n=n, seed=seed,
                           columns=list(columns) if columns is not None else None, implicates=implicates)


def current_synthesis() -> core.Synthesis:
    """The synthesis for the session's dataset and settings (cached)."""
    ds, cfg = dataset(), config()
    train, _ = split()
    return _synthesis(ds.fingerprint, train, json.dumps(ds.schema.to_dict(), default=str), cfg.method,
                      cfg.epsilon, cfg.delta, cfg.seed, cfg.n, cfg.columns, cfg.holdout, cfg.implicates)


def synthesis_or_stop() -> core.Synthesis:
    """The current synthesis; if the core refuses it, its sentence and an end to the page."""
    try:
        return current_synthesis()
    except (core.DataError, core.MethodRefused, ValueError) as err:
        show_error(str(err))
        st.stop()


def show_statement(ledger: dict) -> None:
    """The ledger's plain-words privacy statement: green only when the run is DP."""
    if ledger["is_dp"]:
        st.success(ledger["statement"])
    else:
        st.warning(plain(ledger["statement"]), icon="⚠️")


@st.cache_data(show_spinner="Fitting the discriminator…", max_entries=64)
def propensity(key: str, _real: pd.DataFrame, _synth: pd.DataFrame, seed: int):
    return core.propensity_metrics(_real, _synth, interactions=True, seed=seed,
                                   max_rows=core.constraints.PROPENSITY_HEADLINE_ROWS)


def synth_key() -> str:
    """Cache key of the current synthesis: the dataset, its schema and the settings."""
    ds = dataset()
    return json.dumps([ds.fingerprint, ds.schema.to_dict(), config().__dict__], sort_keys=True, default=str)


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$&])")


def plain(text: object) -> str:
    """User text made inert for Streamlit's markdown: no links, images, HTML or formatting."""
    return _MD_SPECIAL.sub(r"\\\1", str(text))


def show_error(message: str) -> None:
    """One sentence for the user, with any user text in it made inert."""
    st.error(plain(message), icon="⚠️")


@st.cache_data(show_spinner="Matching records…", max_entries=64)
def match_rates(key: str, _real, _released, keys: tuple, tolerance):
    return core.match_rates(_real, _released, list(keys), tolerance=tolerance)


@st.cache_data(show_spinner="Measuring distances…", max_entries=64)
def dcr(key: str, _real, _synth, _schema):
    return pd.Series(core.gower_dcr(_real, _synth, schema=_schema), name="dcr")


@st.cache_data(show_spinner=False, max_entries=16)
def ru_sweep(key: str, _df, _schema, methods: tuple, epsilons: tuple, reps: int, seed: int, _progress=None):
    """The R-U sweep; revisiting the same settings costs nothing."""
    return core.ru_map(_df, list(methods), list(epsilons), reps=reps, seed=seed, schema=_schema,
                       progress=_progress)
