"""Ledger: every computation on this dataset in the ledger store, what they spent in all, the download and the cap."""

import streamlit as st

import dpsynth_core as core
from ui import errors, spending, state, widgets
from ui.text import plain

errors.start_page()

ss = st.session_state
st.title("Ledger")
st.markdown(
    "Differential privacy adds up over every output ever computed on the same people, so the budget belongs to "
    "the dataset: every synthesis of it, from every session, tab and `dpsynth` command on this machine, is "
    "written to one ledger store before it is shown. A look with a fixed seed, a method that is not DP or "
    "domains read off the data carries no guarantee: it is counted apart and adds nothing to ε."
)
ds = state.dataset()
store = spending.store()
totals = spending.totals()
if totals is None:
    st.stop()

st.subheader(plain(f"Spent on {ds.name}"))
st.text("\n".join(totals.lines()))
warning = core.privacy.delta_warning(totals.delta, len(ds.df) if totals.dp_computations else None)
if warning:
    st.warning(warning)

st.subheader("Entries")
widgets.ledger_tables()
widgets.download("Download the ledger of this dataset (CSV, confidential)",
                 lambda: core.privacy.store.ledger_csv(store, ds.fingerprint),
                 file_name=f"{core.release.safe_name(ds.name)}-ledger-CONFIDENTIAL.csv", mime="text/csv",
                 key="download_ledger_store")
st.caption(plain(
    f"The store is the file {store.path} (set DPSYNTH_LEDGER to use another). It holds no row or value of the data, "
    "but it is confidential all the same: it says what was looked at, when and how often. Back it up with the "
    "data; deleting it does not undo any privacy loss, it only forgets it."))

st.subheader("Budget cap")
st.markdown("The most the DP computations on this dataset may spend in all (the reported ε above, and δ). A DP run "
            "that would pass it is refused before the data are read; a look with a fixed seed is not refused but "
            "counted apart.")
cap = totals.cap
left, right = st.columns(2)
cap_epsilon = left.number_input("Cap on ε in all", min_value=0.0, value=widgets.start_value(
    "cap_epsilon", float(cap.epsilon) if cap else max(1.0, round(totals.reported_epsilon, 2))), format="%g",
    key="cap_epsilon")
cap_delta = right.number_input("Cap on δ in all (0: no (ε, δ) method)", min_value=0.0, max_value=0.5,
                               value=widgets.start_value("cap_delta", float(cap.delta) if cap else 0.0),
                               format="%g", key="cap_delta")
a, b, _ = st.columns([1, 1, 3])
if a.button("Set the cap", key="cap_set", type="primary"):
    try:
        store.set_cap(ds.fingerprint, ds.name, core.privacy.Cap(float(cap_epsilon), float(cap_delta)))
    except (ValueError, core.LedgerError) as err:
        errors.show_error(str(err))
    else:
        st.rerun()  # the totals above and the sidebar show the new cap
if b.button("Remove the cap", key="cap_remove", disabled=cap is None):
    store.set_cap(ds.fingerprint, ds.name, None)
    st.rerun()
