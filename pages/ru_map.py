"""R-U map: risk against utility across ε and methods."""


import streamlit as st

import app_state
from app_state import core

st.title("Risk–utility map")
ds, cfg = app_state.dataset(), app_state.config()
st.markdown(
    "Each point is one synthesis: its disclosure risk (x) against its utility (y). Lines follow each "
    "method through the ε grid; stars mark the original data and the bootstrap. Click a point to load "
    "that synthesis on the other pages."
)

methods = st.multiselect("Methods", list(core.SYNTHESIZERS), default=["independent", "cart"],
                         format_func=lambda m: core.SYNTHESIZERS[m].label, key="ru_methods")
grid_text = st.text_input("ε grid (comma-separated)", ", ".join(f"{e:g}" for e in core.constraints.RU_EPSILONS),
                          key="ru_grid")
left, mid, right = st.columns(3)
reps = left.number_input("Replicates", min_value=1, max_value=20, value=1, key="ru_reps")
x = mid.selectbox("Risk (x)", core.rumap.metric_options("risk"), format_func=lambda m: core.METRICS[m].label,
                  key="ru_x")
y = right.selectbox("Utility (y)", core.rumap.metric_options("utility"),
                    format_func=lambda m: core.METRICS[m].label, key="ru_y")

holdout = st.select_slider("Rows held out before synthesis (membership inference compares them with the rest)",
                           options=[0.0, 0.1, 0.2, 0.3], value=0.0, format_func=lambda v: f"{v:.0%}", key="ru_holdout")
measures = tuple(dict.fromkeys([*core.rumap.UTILITY_COLUMNS, *core.rumap.RISK_COLUMNS, x, y]))

try:
    epsilons = core.parse_epsilon_grid(grid_text)
except ValueError as err:
    app_state.show_error(str(err))
    st.stop()

if st.button("Run sweep", type="primary", key="ru_run", disabled=not methods):
    bar = st.progress(0.0, text="Starting…")
    try:
        table = app_state.ru_sweep(app_state.synth_key(), ds.df, ds.schema, tuple(methods), tuple(epsilons),
                                   int(reps), cfg.seed, _progress=lambda f, msg: bar.progress(f, text=msg),
                                   metrics=measures, holdout=float(holdout))
    except (core.DataError, core.MethodRefused, ValueError) as err:
        app_state.show_error(str(err))
        st.stop()
    bar.empty()
    st.session_state["ru_result"] = table

table = st.session_state.get("ru_result")
if table is None:
    st.info("Choose methods and an ε grid, then run the sweep.")
    st.stop()

missing = [core.METRICS[m].label for m in (x, y) if m not in table.columns]
if missing:
    st.info(f"This sweep did not compute {' and '.join(missing)}: run it again.")
    st.stop()
if table[x].isna().all():
    st.info(f"{core.METRICS[x].label} is undefined at every point of this sweep: membership inference needs rows "
            "held out, key-based measures need key variables and a sensitive column (Data page), and accuracy "
            "or RMSE needs a categorical or numeric sensitive column respectively.")
    st.stop()
event = st.plotly_chart(core.plots.ru_figure(table, x, y), key="ru_chart", on_select="rerun",
                        selection_mode="points")
points = event.selection.points if event and event.selection else []
if points and "customdata" in points[0]:
    method, eps, seed = points[0]["customdata"]
    if method != "original":
        eps = None if float(eps) < 0 else float(eps)
        chosen = dict(method=method, seed=int(seed), n=None, columns=None,
                      **({"epsilon": eps} if eps is not None else {}))
        if any(getattr(cfg, k) != v for k, v in chosen.items()):
            app_state.set_config(**chosen)
            st.rerun()  # so the sidebar, drawn before this page, shows the loaded synthesis
        shown = "" if eps is None else f" at ε = {eps:g}"
        st.success(f"Loaded {core.SYNTHESIZERS[method].label}{shown} (seed {int(seed)}): "
                   "open Synthesize, Compare or Risk to inspect it.")
st.dataframe(table, hide_index=True)
