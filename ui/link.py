"""The share link: settings read from the URL's query parameters at a session's start and written back
as they change (never the data); a link for an uploaded file waits for that file.

A link for an upload that this server process did not make (``dpsynth_core.share.made_here``) is how a
restart shows: the browser reconnects to a new session with the old address, whose upload is gone with
the old process (or the address comes from another server). The page says so in one sentence, the
address bar keeps the link's settings while the session waits, and the next upload takes them.
"""

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
    settings, notes = core.settings.RunSettings.from_query(params)
    token = params.get("data", "")
    if token.startswith("bundled:") and token[8:] in core.BUNDLED:
        state.set_bundled(token[8:])
        apply_config(settings)
    elif token.startswith("upload:"):
        # The data never travels in a link: wait for the user to upload the file (ui.link.notes says so).
        st.session_state["pending_link"] = (token, settings)
    st.session_state["link_notes"] = notes


WAITING = "this link is for an uploaded file: upload the same file on the Data page to restore it"
RESTARTED = ("this server has restarted since this address was made, or the address comes from another server, so "
             "the uploaded file is not here: upload it again on the Data page, and the settings in the address bar "
             "will apply to it")


def waiting_link() -> str | None:
    """The token of the link the session waits for, until a file is uploaded or another dataset chosen."""
    pending = st.session_state.get("pending_link")
    return pending[0] if pending and state.dataset().source == "bundled" else None


def notes() -> list[str]:
    """What to tell about the link, each a sentence without its capital and full stop: the values it had
    that were ignored (once), and while the session waits for the link's file, what to upload and why."""
    out = st.session_state.pop("link_notes", [])
    token = waiting_link()
    if token is not None:
        out.append(WAITING if core.share.made_here(token) else RESTARTED)
    return out


def apply_pending() -> None:
    """After an upload: the settings of a link that was waiting for this very file.

    A link this server process did not make cannot be checked against the file (its secret is gone): the
    person was asked to upload the file again, and the first upload takes the link's settings.
    """
    pending = st.session_state.get("pending_link")
    if not pending:
        return
    ds = state.dataset()
    if not core.share.made_here(pending[0]):
        st.session_state.setdefault("link_notes", []).append(f"the settings in the address bar now apply to {ds.name}")
    elif core.share.dataset_token("upload", ds.name, ds.fingerprint) != pending[0]:
        return
    apply_config(pending[1])
    st.session_state.pop("pending_link")


def apply_config(settings: dict) -> None:
    """Settings from a link, keeping only columns the current schema models."""
    cols = settings.get("columns")
    if cols is not None:
        cols = tuple(c for c in cols if c in state.dataset().schema.used) or None
    state.set_config(**{**settings, "columns": cols} if "columns" in settings else settings)


def write_link() -> None:
    """Keep the URL's query parameters equal to the current settings (never the data); while the session
    waits for a link's file, the address keeps that link."""
    if waiting_link() is not None:
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
