"""What has been spent on the session's dataset, read from the ledger store, and the sidebar's slots that
show the settings and the spending.

The core writes every synthesis on the data to the ledger store as it computes it
(:mod:`dpsynth_core.privacy.store`); the app only says which dataset, why and from which session
(:func:`use`), and reads the totals back. So a reload, a second tab, a restart of the server or a
``dpsynth`` command on the same data all show the same totals.
"""

from __future__ import annotations

import uuid

import streamlit as st

import dpsynth_core as core
from ui import state
from ui.errors import show_error
from ui.text import plain


def store() -> core.privacy.LedgerStore:
    """The ledger store shared with the command line (``$DPSYNTH_LEDGER``, else the user's data directory)."""
    return core.privacy.LedgerStore()


def source() -> str:
    """This session, as the store's entries name it: a random number, nothing of the browser or the user."""
    return "app session " + st.session_state.setdefault("ledger_session", uuid.uuid4().hex[:12])


def use(purpose: str) -> core.privacy.Use:
    """The session's dataset as the store knows it (its name and content), and why it is read."""
    ds = state.dataset()
    return core.privacy.Use(ds.name, ds.fingerprint, purpose=purpose, source=source())


def unfinished_sweeps() -> list[dict]:
    """The R-U sweeps of the session's dataset that stopped before their last point, newest first (none when the
    store cannot be read: the sidebar already says so)."""
    try:
        return store().unfinished_sweeps(state.dataset().fingerprint)
    except core.LedgerError:
        return []


def totals() -> core.privacy.Totals | None:
    """What the store holds for the session's dataset; None, after one sentence, when it cannot be read."""
    ds = state.dataset()
    try:
        return store().totals(ds.fingerprint, ds.name)
    except core.LedgerError as err:
        show_error(str(err))
        return None


def show_settings() -> None:
    """Write the method, ε, seed and holdout into the sidebar's slot (drawn by app.py)."""
    slot = st.session_state.get("settings_slot")
    if slot is not None:
        cfg = state.config()
        seed = f"seed {cfg.seed} (not DP)" if state.seeded() else "fresh randomness"
        held = f"\n{cfg.holdout:.0%} of rows held out" if cfg.holdout else "\nevery row used (none held out)"
        slot.text(f"{core.SYNTHESIZERS[cfg.method].label}\nε = {cfg.epsilon:g} · {seed}{held}")


def show_spending() -> None:
    """Write what the store holds for this dataset into the sidebar's slot (drawn by app.py)."""
    slot = st.session_state.get("spending_slot")
    if slot is not None:
        ds = state.dataset()
        try:
            found = store().totals(ds.fingerprint, ds.name)
        except core.LedgerError as err:
            slot.error(plain(str(err)))
            return
        slot.text("\n".join(found.lines()))
