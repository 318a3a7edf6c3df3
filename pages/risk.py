"""Risk: how much the release discloses about the confidential records."""

import streamlit as st

import app_state
from app_state import core

st.title("Risk")
ds, cfg = app_state.dataset(), app_state.config()
result = app_state.synthesis_or_stop()
ledger = result.ledger

st.subheader("Formal guarantee")
app_state.show_statement(ledger)

real, synth = app_state.split()[0][ds.schema.used], result.data[ds.schema.used]
st.subheader("Re-identification by matching on key variables")
keys = st.multiselect("Key variables", ds.schema.used, default=list(ds.schema.keys), key="risk_keys")
if ledger["kept_columns"]:
    st.markdown(
        "This release is **partially synthetic**: row *j* of the release is the synthetic version of "
        "confidential record *j*, so an intruder who knows a record's key variables can look for it "
        "among the released rows. Match rates (Reiter & Mitra 2009) measure how often that works."
    )
    if not keys:
        st.info("Pick at least one key variable.")
        st.stop()
    numeric_keys = [k for k in keys if ds.schema[k].kind == "numeric"]
    tol = st.number_input("Tolerance for numeric keys (same units as the column)", min_value=0.0,
                          value=0.0, key="risk_tol") if numeric_keys else None
    mr = app_state.match_rates(app_state.synth_key(), real, synth, tuple(keys), tol or None)
    a, b, c = st.columns(3)
    a.metric("Expected match rate", f"{mr.expected_share:.3f}", help=core.METRICS["expected_match_rate"].reading)
    b.metric("True match rate", f"{mr.true_rate:.3f}", help=core.METRICS["true_match_rate"].reading)
    c.metric("False match rate", "n/a" if mr.false_rate != mr.false_rate else f"{mr.false_rate:.3f}",
             help="Among records matched to exactly one released row, the share matched to the wrong one.")
    st.caption(f"Expected matches: {mr.expected:,.1f} of {mr.n:,} records.")
    st.dataframe(mr.per_record, height=240)
else:
    st.markdown(
        "This release is **fully synthetic**: no released row stands for a particular confidential "
        "record, so identity matching is ill-defined and match rates do not apply. "
        "To see them, synthesize only some columns on the Synthesize page (the rest are kept row for row). "
        "Shown instead: how close the synthetic rows come to real records."
    )
    dcr = app_state.dcr(app_state.synth_key(), real, synth, ds.schema)
    a, b = st.columns(2)
    a.metric("Real records copied exactly", f"{core.exact_copy_share(real, synth):.3f}",
             help=core.METRICS["exact_copy_share"].reading)
    b.metric("Median distance to closest synthetic row (Gower)", f"{float(dcr.median()):.4f}",
             help=core.METRICS["dcr_median"].reading)
    st.plotly_chart(core.plots.dcr_figure(dcr), key="dcr_chart")
