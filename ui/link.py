"""The share link: settings read from the URL's query parameters at a session's start and written back
as they change (never the data); a link for an uploaded file waits for that file, and the address keeps
that link until the user chooses data or a setting (a reload or a bookmark made meanwhile still waits)."""

from __future__ import annotations

import streamlit as st

import dpsynth_core as core
from ui import state


def _params() -> dict:
    return {k: st.query_params[k] for k in st.query_params}


def read_link() -> None:
    """Apply settings from the URL's query parameters once, at the session's start."""
    params = _params()
    if not params:
        return
    settings, notes = core.share.parse_config_params(params)
    token = params.get("data", "")
    if token.startswith("bundled:") and token[8:] in core.BUNDLED:
        state.set_bundled(token[8:])
        apply_config(settings)
    elif token.startswith("upload:"):
        # The data never travels in a link: wait for the user to upload the same file (to this server).
        st.session_state["pending_link"] = (token, settings)
        # Meanwhile the session shows the penguins at their defaults, which the address must not take (issue
        # 31.4): it keeps this link until the data or a setting changes (then the address follows the session).
        st.session_state["held_link"] = (params, _situation())
        notes.append("this link is for an uploaded file: upload the same file on the Data page to restore it")
    st.session_state["link_notes"] = notes


def apply_pending() -> None:
    """After an upload: the settings of a link that was waiting for this very file."""
    pending = st.session_state.get("pending_link")
    ds = state.dataset()
    if pending and core.share.dataset_token("upload", ds.name, ds.fingerprint) == pending[0]:
        apply_config(pending[1])
        st.session_state.pop("pending_link")


def apply_config(settings: dict) -> None:
    """Settings from a link, keeping only columns the current schema models."""
    cols = settings.get("columns")
    if cols is not None:
        cols = tuple(c for c in cols if c in state.dataset().schema.used) or None
    state.set_config(**{**settings, "columns": cols} if "columns" in settings else settings)


def _situation() -> tuple:
    """What the address follows: the session's data (by content) and settings."""
    return state.dataset().fingerprint, state.config()


def _holding() -> bool:
    """Whether the address still holds a link that waits for its uploaded file (:func:`read_link`): true until the
    session's data or settings change, and the address is put back to it (a page switch may have cleared it)."""
    held = st.session_state.get("held_link")
    if held is None:
        return False
    if held[1] != _situation():
        st.session_state.pop("held_link")
        return False
    if _params() != held[0]:
        st.query_params.from_dict(held[0])
    return True


def write_link() -> None:
    """Keep the URL's query parameters equal to the current settings (never the data)."""
    if _holding():
        return
    ds, cfg = state.dataset(), state.config()
    token = core.share.dataset_token(ds.source, ds.name, ds.fingerprint)
    params = core.share.config_params(cfg, dataset=token)
    if not state.seeded():
        params.pop("seed", None)  # a run drawn from fresh randomness has no seed to name
    # The browser sends its address with every rerun, and it can be older than the link last written here
    # (the next key press left before that write arrived): equal to the new settings, that old address
    # alone would have kept the write and left the address bar at the link written before.
    if _params() != params or st.session_state.get("link_written") != params:
        st.query_params.from_dict(params)
        st.session_state["link_written"] = params
