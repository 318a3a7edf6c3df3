"""The session's log of its uses of the data (every synthesis, sweep point and release), and the
sidebar's slots that show the settings and the spending."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

import dpsynth_core as core
from ui import state


def log_run(ledger: dict, *, purpose: str, key: str | None = None) -> None:
    """Add one synthesis on the current dataset to the session ledger (once per key)."""
    ss = st.session_state
    seen = ss.setdefault("session_log_keys", set())
    if key is not None and key in seen:
        return
    if key is not None:
        seen.add(key)
    ds = state.dataset()
    ss.setdefault("session_log", []).append({
        "fingerprint": ds.fingerprint, "dataset": ds.name, "purpose": purpose,
        "method": ledger["method"], "epsilon_total": ledger["epsilon_total"], "is_dp": ledger["is_dp"],
        "seed": ledger.get("seed"), "rows": ledger["n_rows"],
    })
    show_spending()


def log_sweep(table: pd.DataFrame) -> None:
    """Every synthesis of an R-U sweep is a use of the data: log each point once."""
    base = state.synth_key()
    for row in table[table["method"] != "original"].itertuples():
        eps = None if row.epsilon != row.epsilon else float(row.epsilon)
        key = json.dumps([base, "sweep", row.method, eps, int(row.seed)])
        is_dp_method = core.SYNTHESIZERS[row.method].is_dp
        # ε is the point's total for every method; a sweep point is seeded exploration, so not DP as run.
        log_run({"method": row.method, "epsilon_total": eps if is_dp_method else None, "is_dp": False,
                 "seed": int(row.seed), "n_rows": None}, purpose="R-U sweep", key=key)


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
        slot.text(f"{runs} DP synthesis(es), ε = {spent:g} in all")
