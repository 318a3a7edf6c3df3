"""The session's dataset and settings: getters and setters, kept schemas, the seed, the holdout split and
the key of the synthesis the pages show. Everything lives in st.session_state."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

import dpsynth_core as core
from ui import server  # noqa: F401 - the server's process-wide set-up, before any upload
from ui.cache import bundled


@dataclass(frozen=True)
class Dataset:
    """The table the session works on."""

    name: str
    df: pd.DataFrame
    schema: core.Schema
    fingerprint: str
    source: str  # "bundled" or "upload"


#: The session's run settings: the core's one type, shared with the settings file, the link and the command line.
RunSettings = core.settings.RunSettings


def init_session() -> bool:
    """Open on the penguins with nothing uploaded; True on the session's first run (then the caller
    applies what a shared link asks for, ``ui.link.read_link``)."""
    ss = st.session_state
    new = "dataset" not in ss
    if new:
        set_bundled("penguins")
    ss.setdefault("synth_config", RunSettings())
    ss.setdefault("mode", "teaching")
    return new


def _kept_schema(fingerprint: str, fallback: core.Schema | None) -> core.Schema | None:
    """The schema the user left on this content earlier in the session, else ``fallback``."""
    return st.session_state.setdefault("kept_schemas", {}).get(fingerprint, fallback)


def carried_settings(schema: core.Schema, n_rows: int) -> RunSettings:
    """The settings a newly chosen table starts from (issue 31.9): the method, ε, δ, seed, fixed seed,
    implicates and the method's options that name no column carry over from the last table, so a steward
    comparing two tables keeps what they chose; the columns, the declared row count and the holdout were
    facts of the last table and start afresh. A method that refuses the new table (its schema and row count:
    more cells than it allows, say) gives way to the default method with its default options."""
    if "synth_config" not in st.session_state:
        return RunSettings()
    cfg = config()
    synth = core.SYNTHESIZERS[cfg.method]
    kinds = {o.name: o.type for o in synth.options}
    params = tuple((k, v) for k, v in cfg.params if kinds.get(k) != "columns")
    kept = dict(epsilon=cfg.epsilon, delta=cfg.delta, seed=cfg.seed, fixed_seed=cfg.fixed_seed,
                implicates=cfg.implicates)
    try:
        refused = not schema.used or synth.refuse(schema, schema.used, n_rows, **synth.resolve(dict(params)))
    except (ValueError, TypeError):  # an option that no longer applies
        refused = True
    return RunSettings(**kept) if refused else RunSettings(method=cfg.method, params=params, **kept)


def _switch_to(ds: Dataset) -> None:
    st.session_state["synth_config"] = carried_settings(ds.schema, len(ds.df))
    st.session_state["dataset"] = ds
    st.session_state.pop("ru_result", None)


def set_bundled(name: str) -> None:
    df, schema = bundled(name)
    fp = core.fingerprint(df)
    _switch_to(Dataset(name, df, _kept_schema(fp, schema), fp, "bundled"))


def set_uploaded(name: str, df: pd.DataFrame) -> None:
    """Work on an uploaded table; the same content uploaded again keeps the schema declared on it.
    (A link waiting for this upload is applied by ``ui.link.apply_pending``.)"""
    fp = core.fingerprint(df)
    schema = _kept_schema(fp, None)
    _switch_to(Dataset(name, df, core.infer_schema(df) if schema is None else schema, fp, "upload"))


def dataset() -> Dataset:
    return st.session_state["dataset"]


def set_schema(schema: core.Schema) -> None:
    """The user's schema for this dataset, kept (by content) for the rest of the session."""
    ds = dataset()
    st.session_state["dataset"] = Dataset(ds.name, ds.df, schema, ds.fingerprint, ds.source)
    st.session_state.setdefault("kept_schemas", {})[ds.fingerprint] = schema
    st.session_state["schema_version"] = st.session_state.get("schema_version", 0) + 1
    cfg = config()
    if cfg.columns is not None:
        kept = tuple(c for c in cfg.columns if c in schema.used)
        set_config(columns=kept or None)


def config() -> RunSettings:
    return st.session_state["synth_config"]


def set_config(**changes) -> None:
    cfg = config()
    st.session_state["synth_config"] = cfg.replace(**changes)


def seeded() -> bool:
    """Whether syntheses run with the settings' seed: exploration with a fixed seed, never in release mode."""
    return st.session_state.get("mode") != "release" and config().fixed_seed


def run_seed() -> int | None:
    """The seed a synthesis at the current settings runs with; None: fresh entropy, never stored."""
    return config().run_seed if seeded() else None


def holdout_mask(share: float | None = None) -> np.ndarray | None:
    """Which rows are held out, drawn once per dataset and share with fresh randomness (one coin
    per record) and kept in the session, so every page sees the same split. The mask itself is
    kept, never a seed: nothing derived from the data chooses it."""
    share = config().holdout if share is None else share
    if share <= 0:
        return None
    masks = st.session_state.setdefault("holdout_masks", {})
    key = (dataset().fingerprint, share)
    if key not in masks:
        masks[key] = core.holdout.holdout_mask(len(dataset().df), share)
    return masks[key]


def mask_key(share: float | None = None) -> str:
    """A cache key for the session's split (its digest; the mask never leaves the server)."""
    mask = holdout_mask(share)
    return "none" if mask is None else hashlib.sha256(mask.tobytes()).hexdigest()


def shown_holdout() -> float:
    """The share of rows held out of the synthesis the pages show: in release mode the release's own, as its
    ledger states it, whatever the settings say now (a changed holdout applies to the next release); else
    the settings' share."""
    release = current_release() if st.session_state.get("mode") == "release" else None
    if release is None:
        return config().holdout
    held = release.synthesis.ledger["holdout"]
    return float(held["share"]) if held["taken"] else 0.0


def split(share: float | None = None) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """(rows the synthesizer sees, held-out rows or None) at ``share`` (None: :func:`shown_holdout`), so the
    pages measure a release against the rows it was made from."""
    share = shown_holdout() if share is None else share
    return core.holdout.split_holdout(dataset().df, share, mask=holdout_mask(share))


def current_release():
    """The session's release (``ui.runs.Release``) if it is of the current dataset, else None."""
    rel = st.session_state.get("release")
    return rel if rel is not None and rel.fingerprint == dataset().fingerprint else None


def release_settings() -> str:
    """What a release depends on: the dataset, its schema and the settings (never the data itself)."""
    ds = dataset()
    return json.dumps([ds.fingerprint, ds.schema.to_dict(), config().__dict__], sort_keys=True, default=str)


def synth_key() -> str:
    """Cache key of the synthesis the pages show: the dataset, its schema and the settings.

    In release mode the pages show the release, made with a fresh seed under
    the same settings, so its content hash joins the key.
    """
    ds = dataset()
    release = current_release() if st.session_state.get("mode") == "release" else None
    marker = release.content if release is not None else "exploration"
    return json.dumps([ds.fingerprint, ds.schema.to_dict(), config().__dict__, marker], sort_keys=True, default=str)


def set_holdout(share: float) -> None:
    """Hold out ``share`` of the rows (0: none) from every synthesis, the release's too: the setting Synthesize
    shows. Its widgets start again from the settings (a callback of another page calls this)."""
    set_config(holdout=round(float(share), 2))
    st.session_state.pop("holdout", None)
