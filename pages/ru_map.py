"""R-U map: risk against utility across ε and methods, and the steward's question."""

import streamlit as st

import dpsynth_core as core
from ui import errors, measures, spending, state, steward, widgets
from ui.text import plain

errors.start_page()


def steward_question(table, x: str, y: str) -> dict | None:
    """The smallest ε reaching a utility threshold, asked of one DP method; its answer (marked on the map)."""
    st.subheader("The steward's question")
    dp_methods = core.frontier.dp_methods(table)
    if not dp_methods:
        st.info("Add a DP method to the sweep to ask for the smallest ε that reaches a utility threshold.")
        return None
    q1, q2 = st.columns(2)
    cfg = state.config()
    first = dp_methods.index(core.frontier.default_target(dp_methods, state.dataset().schema, cfg.epsilon, cfg.n))
    target = q1.selectbox("Method", dp_methods, index=first, format_func=lambda m: core.SYNTHESIZERS[m].label,
                          key="ru_q_method")
    info = core.METRICS[y]
    # The default is the level the app calls acceptable where it states one (pMSE ratio), else a split of the
    # method's grid; the key holds the measure and method, so a new choice gets its own default.
    start = core.frontier.default_threshold(table, target, y)
    threshold = q2.number_input(f"{info.label} to reach ({info.reading})",
                                value=float(info.best) if start != start else start, format="%.4g",
                                key=f"ru_q_threshold_{y}_{target}")
    st.caption(steward.threshold_note(y))
    answer = core.frontier.smallest_epsilon(table, target, y, threshold, x)
    if answer["epsilon"] is None:
        st.warning(answer["sentence"])
    else:
        found = answer["sentence"] + " " + answer["resolution"] + " It is ringed on the map."
        if answer["acceptable"]:  # green only where the app's own scale calls the utility acceptable
            st.success(found)
        elif answer["acceptable"] is None:
            st.info(found)
        else:
            st.warning(found + f" But {info.label} {answer['utility']:.3g} is not what this app calls acceptable "
                       f"({steward.acceptable_text(info)}).")
    swept = [float(e) for e in sorted(table["epsilon"].dropna().unique())]
    at_eps = swept[0] if len(swept) == 1 else st.select_slider(
        "Which DP method keeps the most at ε =", options=swept, key="ru_best_eps", format_func=lambda e: f"{e:g}",
        value=min(swept, key=lambda e: abs(e - state.config().epsilon)))
    best = core.frontier.best_dp_method(table, at_eps, y)
    if best is not None:
        st.info(best["sentence"])
    return answer


st.title("Risk–utility map")
ds, cfg = state.dataset(), state.config()
ss = st.session_state
st.markdown(
    "Each point is one synthesis: its disclosure risk (x) against its utility (y), the mean over replicates "
    "with ±1 sd bars. Lines follow each method through the ε grid; stars mark the original data and the "
    "bootstrap; the dashed line is the Pareto frontier. Click a point to load that synthesis everywhere."
)
st.caption(
    "The map is exploration, not a release: each point is a synthesis with its own fixed seed, reproducible "
    "and therefore not DP as run; 'DP' on the map means the method would be DP released with fresh "
    "randomness. ε is the total ε of each synthesis for every method (PeGS and PMI spend it over their "
    "records). Choosing ε from a sweep of the confidential data tunes on that data."
)

source = st.radio("Sweep on", ["the confidential data", "a public look-alike file"], horizontal=True,
                  key="ru_source", help="Every synthesis of the confidential data in a sweep is a use of it that "
                  "no DP guarantee covers, and is recorded in the ledger. A public file with the same columns is "
                  "the clean alternative: tune ε on it, then release once.")
public = source != "the confidential data"
if public:
    sweep_df = measures.public_lookalike(st.file_uploader("Public look-alike CSV (same columns)", type=["csv", "txt"],
                                                           key="ru_public_file"))
    if sweep_df is None:
        st.stop()
elif ss["mode"] == "release":
    st.info("Release mode: sweeping the confidential data would spend more of it. Sweep a public look-alike "
            "file instead, or switch to teaching mode.")
    st.stop()
else:
    sweep_df = ds.df
    for cut in spending.unfinished_sweeps()[:1]:  # the newest sweep of this data cut short, if any
        st.info(f"An R-U sweep of this dataset stopped at {cut['done']:,} of its {cut['total']:,} points (started "
                f"{cut['started'][:16].replace('T', ' ')} UTC): the server restarted, the sweep was cancelled, or it "
                "is still running in another tab. Its finished points are kept: run it again with the same settings "
                "and only the missing points are computed, with the same seeds.")

methods = st.multiselect("Methods", list(core.SYNTHESIZERS),
                         default=core.frontier.default_methods(ds.schema, len(ds.df)),
                         format_func=lambda m: core.SYNTHESIZERS[m].label, key="ru_methods",
                         help="By default the DP methods the app may suggest for this table; the original data "
                              "and the bootstrap are always drawn for reference.")
grid_text = st.text_input("Total ε grid (comma-separated; log-spaced by default)",
                          ", ".join(f"{e:g}" for e in core.constraints.RU_EPSILONS), key="ru_grid")
a, b, c, d = st.columns(4)
reps = a.number_input("Replicates", min_value=1, max_value=core.constraints.RU_MAX_REPLICATES, value=1, key="ru_reps")
risk_options = core.rumap.metric_options("risk")
x = b.selectbox("Risk (x)", risk_options, index=risk_options.index(core.rumap.DEFAULT_RISK),
                format_func=lambda m: core.METRICS[m].label, key="ru_x",
                help="Median distance to the closest record by default: every DP point has 0 exact copies, "
                     "so that axis would pile them up.")
y = c.selectbox("Utility (y)", core.rumap.metric_options("utility"),
                format_func=lambda m: core.METRICS[m].label, key="ru_y")
holdout = d.select_slider("Rows held out", options=core.constraints.RU_HOLDOUT_SHARES, value=0.0,
                          format_func=lambda v: f"{v:.0%}", key="ru_holdout",
                          help="Held out before synthesis; membership inference compares them with the rest.")
scheduler = st.text_input("Dask scheduler (optional)", "", key="ru_scheduler", placeholder="tcp://host:8786",
                          help="Run the sweep's points on this Dask cluster instead of this machine's cores; same "
                          "results. Its workers need dpsynth installed and receive the data swept: use only a "
                          "cluster you trust with it.")
try:
    epsilons = core.parse_epsilon_grid(grid_text)
except ValueError as err:
    errors.show_error(str(err))
    st.stop()

run, cancel = st.columns([1, 5])
cancel_slot = cancel.empty()  # Cancel is drawn only while a sweep runs, and removed when it ends
if run.button("Run sweep", type="primary", key="ru_run", disabled=not methods):
    cancel_slot.button("Cancel", key="ru_cancel")  # any click reruns the page, which stops the sweep
    bar = st.progress(0.0, text="Starting…")
    try:
        # Keyed by the swept table's own content: a public file must never get another file's sweep.
        key = state.synth_key() + (core.fingerprint(sweep_df) if public else "")
        table = measures.ru_sweep(key, sweep_df, ds.schema, tuple(methods),
                                   tuple(epsilons), int(reps), cfg.seed, confidential=not public,
                                   progress=lambda f, msg: bar.progress(f, text=msg),
                                   metrics=tuple(dict.fromkeys([*core.rumap.UTILITY_COLUMNS,
                                                                *core.rumap.RISK_COLUMNS, x, y])),
                                   holdout=float(holdout), scheduler=scheduler)
    except (core.DataError, core.MethodRefused, ValueError, core.LedgerError) as err:
        bar.empty()
        cancel_slot.empty()  # nothing runs any more
        errors.show_error(str(err))
        st.stop()
    bar.empty()
    cancel_slot.empty()
    ss["ru_result"] = (table, public, float(holdout))
    if not public:
        spending.show_spending()  # the core wrote every point of the sweep to the ledger store
elif ss.get("ru_cancel"):
    st.warning("Sweep cancelled; nothing of it was kept.")

if ss.get("ru_result") is None:
    st.info("Choose methods and an ε grid, then run the sweep.")
    st.stop()
table, swept_public, swept_holdout = ss["ru_result"]
missing = [core.METRICS[m].label for m in (x, y) if m not in table.columns or table[m].isna().all()]
if missing:
    st.info(f"This sweep has no values of {' and '.join(missing)}: run it again with them chosen. Membership "
            "inference needs rows held out; key-based measures need key variables and a sensitive column.")
    st.stop()
if swept_public:
    st.caption("Swept on the public look-alike file: no use of the confidential data, so nothing is recorded.")

answer = steward_question(table, x, y)
fig = core.plots.ru_figure(table, x, y, answer=answer)
event = st.plotly_chart(fig, key="ru_chart", on_select="rerun", selection_mode="points")
samples = core.rumap.sample_note(table)
if samples:
    st.caption(samples)
points = event.selection.points if event and event.selection else []
if points and "customdata" in points[0]:
    chosen = core.rumap.point_settings(points[0]["customdata"], swept_holdout)
    if chosen is not None:
        method, eps, seed = chosen["method"], chosen.get("epsilon"), chosen["seed"]
        if any(getattr(cfg, k) != v for k, v in chosen.items()):
            state.set_config(**chosen)
            st.rerun()  # so the sidebar, drawn before this page, shows the loaded synthesis
        shown = "" if eps is None else f" at ε = {eps:g}"
        if swept_holdout:
            shown += f" with {swept_holdout:.0%} of the rows held out, as swept (the setting is on Synthesize)"
        where = " (it runs on the confidential data)" if swept_public else ""
        st.success(f"Loaded {core.SYNTHESIZERS[method].label}{shown} (seed {int(seed)}: exploration, not DP)"
                   f"{where}: open Synthesize, Compare or Risk to inspect it.")

st.subheader("Export")
e1, e2, e3 = st.columns(3)
widgets.download("Figure (interactive HTML)", lambda fig=fig: fig.to_html(include_plotlyjs=True).encode("utf-8"),
                   file_name="ru_map.html", mime="text/html", key="ru_html", where=e1)
widgets.download("Sweep table (CSV)", lambda table=table: core.to_csv_bytes(table), file_name="ru_sweep.csv",
                   mime="text/csv", key="ru_csv", where=e2)
# One click: the PNG is made when the button is clicked (seconds: kaleido starts a browser) and downloaded at once.
# (A button that made it, then a second one that offered it, downloaded nothing on the first click.)
unavailable = core.plots.png_unavailable()
if unavailable:
    e3.caption(unavailable)
else:
    widgets.download("Figure (PNG)", lambda fig=fig: core.plots.figure_png(fig), file_name="ru_map.png",
                     mime="image/png", key="ru_png", where=e3)
# ε in words where a method has none (the CSV export keeps the number column, empty there).
st.dataframe(table.assign(epsilon=[core.rumap.epsilon_text(e) for e in table["epsilon"]]), hide_index=True,
             placeholder="")
st.caption(plain(f"{len(table)} points."))
