"""Compare: real vs synthetic, column by column and as a whole."""

import streamlit as st

import app_state
from app_state import core, plain

st.title("Compare")
ds, cfg = app_state.dataset(), app_state.config()
result = app_state.synthesis_or_stop()

real, synth = app_state.split()[0][ds.schema.used], result.data[ds.schema.used]
st.caption(f"{plain(result.ledger['label'])}, {plain(result.ledger['dp_label'])}: "
           f"{len(real):,} real rows vs {len(synth):,} synthetic rows.")

st.subheader("Can a model tell them apart?")
prop = app_state.propensity(app_state.synth_key(), real, synth, cfg.seed)
tiles = st.columns(4)
for tile, name in zip(tiles, ("pmse", "pmse_ratio", "specks", "auc")):
    info = core.METRICS[name]
    tile.metric(info.label, f"{getattr(prop, name):.4g}", help=info.reading)
st.caption(
    f"Logistic discriminator with all pairwise interactions (it sees lost associations), fitted on "
    f"{prop.n_used:,} of {len(real) + len(synth):,} rows drawn at random ({prop.n_params} parameters). " + core.METRICS["pmse_ratio"].reading
)

st.subheader("One column")
column = st.selectbox("Column", ds.schema.used, key="compare_column")
is_cat = ds.schema[column].kind == "categorical"
hist = core.histogram_data(real, synth, column, categorical=is_cat)
left, right = st.columns(2)
left.plotly_chart(core.plots.histogram_figure(hist, column), key="hist_chart")
if is_cat:
    right.info("The ECDF needs a numeric column; this one is categorical.")
else:
    try:
        right.plotly_chart(core.plots.ecdf_figure(core.ecdf_data(real, synth, column), column), key="ecdf_chart")
    except core.DataError as err:
        right.info(plain(str(err)))

st.subheader("A regression on both")
numeric = [c for c in ds.schema.used if ds.schema[c].kind == "numeric"]
binary = [c for c in ds.schema.used if ds.schema[c].kind == "categorical" and len(ds.schema[c].categories) == 2]
outcomes = numeric + binary
if not outcomes:
    st.info("No numeric or two-level column to use as an outcome.")
    st.stop()
outcome = st.selectbox("Outcome", outcomes, key="reg_outcome")
choices = [c for c in ds.schema.used if c != outcome]
predictors = st.multiselect("Predictors", choices, default=choices[:3], key="reg_predictors")
if not predictors:
    st.info("Pick at least one predictor.")
    st.stop()
family = "logistic" if outcome in binary else "linear"
try:
    reg = core.regression_ci_overlap(real, synth, outcome, predictors, family=family)
except (core.DataError, ValueError) as err:
    app_state.show_error(str(err))
    st.stop()
a, b = st.columns(2)
a.metric("Mean CI overlap", f"{reg.mean_overlap:.3f}", help=core.METRICS["ci_overlap_mean"].reading)
b.metric("SSO share", f"{reg.sso:.3f}", help="Share of coefficients with the same sign, the same significance "
         "and overlapping intervals (Barrientos et al. 2021).")
st.plotly_chart(core.plots.ci_forest_figure(reg.table), key="ci_chart")
st.dataframe(reg.table, hide_index=True)
