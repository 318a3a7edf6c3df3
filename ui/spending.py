"""The session's log of its uses of the data (every synthesis, sweep point and release), and the
sidebar's slots that show the settings and the spending."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

import dpsynth_core as core
from ui import state


def _log(entry: dict, key: str | None) -> None:
    """Add one use of the data (an entry the core made) to the session ledger, once per key."""
    ss = st.session_state
    seen = ss.setdefault("session_log_keys", set())
    if key is not None and key in seen:
        return
    if key is not None:
        seen.add(key)
    ss.setdefault("session_log", []).append(entry)
    show_spending()


def log_run(ledger: dict, *, purpose: str, key: str | None = None) -> None:
    """Add one synthesis on the current dataset to the session ledger (once per key)."""
    ds = state.dataset()
    _log(core.privacy.log_entry(ledger, fingerprint=ds.fingerprint, dataset=ds.name, purpose=purpose), key)


def log_estimate(entry: dict) -> None:
    """Add a private estimate of the schema (an entry the core made) to the session ledger."""
    _log(entry, None)


def log_sweep(table: pd.DataFrame) -> None:
    """Every synthesis of an R-U sweep is a use of the data: log each point once."""
    ds, base = state.dataset(), state.synth_key()
    for row in table[table["method"] != "original"].itertuples():
        eps = None if row.epsilon != row.epsilon else float(row.epsilon)
        key = json.dumps([base, "sweep", row.method, eps, int(row.seed)])
        _log(core.privacy.sweep_log_entry(core.SYNTHESIZERS[row.method], eps, int(row.seed),
                                          fingerprint=ds.fingerprint, dataset=ds.name), key)


def session_log() -> list[dict]:
    """Every use of the data in this session, on any dataset (the release's report lists them)."""
    return list(st.session_state.get("session_log", []))


def session_log_table() -> pd.DataFrame:
    """The session's syntheses on the current dataset."""
    fp = state.dataset().fingerprint
    rows = [e for e in st.session_state.get("session_log", []) if e["fingerprint"] == fp]
    return pd.DataFrame(rows, columns=["purpose", "method", "epsilon_total", "is_dp", "seed", "rows"])


def show_settings() -> None:
    """Write the method, ε and seed into the sidebar's slot (drawn by app.py)."""
    slot = st.session_state.get("settings_slot")
    if slot is not None:
        cfg = state.config()
        seed = f"seed {cfg.seed} (not DP)" if state.seeded() else "fresh randomness"
        slot.text(f"{core.SYNTHESIZERS[cfg.method].label}\nε = {cfg.epsilon:g} · {seed}")


def show_spending() -> None:
    """Write the session's spending on this dataset into the sidebar's slot (drawn by app.py)."""
    slot = st.session_state.get("spending_slot")
    if slot is not None:
        runs, spent = core.report.session_total(st.session_state.get("session_log", []),
                                                state.dataset().fingerprint)
        slot.text(f"{runs} synthesis(es) with DP methods, ε = {spent:g} in all")
