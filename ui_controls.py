"""The method and ε controls, drawn on Synthesize, Compare and Risk over one shared state.

Each page draws the same widgets under the same keys, and every change goes into the session's
settings (``app_state.set_config``), so ε can be tuned from whichever page shows its effect. The
headline readout of the Synthesize page lives here too, beside the controls it follows.
"""

from __future__ import annotations

import streamlit as st

import app_state
from app_state import core, plain

C = core.constraints
ss = st.session_state
start = app_state.start_value


def _on_method() -> None:
    app_state.set_config(method=ss["method"], params=())
    ss["method_switched"] = True  # the next synthesis says which method it is running


def _on_slider() -> None:
    ss["eps_input"] = ss["eps_slider"]
    ss.pop("eps_error", None)
    app_state.set_config(epsilon=float(ss["eps_slider"]))


def _on_input() -> None:
    """A typed ε: used if the app allows it, else refused with a sentence (the box never clamps silently)."""
    error = C.epsilon_input_error(ss["eps_input"])
    if error:
        ss["eps_error"] = error
        return
    ss.pop("eps_error", None)
    ss["eps_slider"] = C.nearest_epsilon_step(ss["eps_input"])
    app_state.set_config(epsilon=float(ss["eps_input"]))


def method_and_epsilon(cfg, *, after_method=None) -> tuple:
    """The method, the ε slider and the exact ε; returns the chosen synthesizer and its options.

    ``after_method(method)``, if given, draws under the method's description (Synthesize's forecast).
    """
    methods = list(core.SYNTHESIZERS)
    st.selectbox(
        "Method", methods, index=methods.index(start("method", cfg.method)), key="method",
        format_func=lambda m: core.SYNTHESIZERS[m].label + ("" if core.SYNTHESIZERS[m].is_dp else " — not DP"),
        on_change=_on_method,
    )
    chosen = core.SYNTHESIZERS[ss["method"]]
    st.caption(chosen.description)
    if after_method is not None:
        after_method(ss["method"])
    is_dp_method = chosen.is_dp
    options = {**getattr(chosen, "defaults", {}), **dict(cfg.params)} if cfg.method == ss["method"] \
        else dict(getattr(chosen, "defaults", {}))
    unit = " per " + chosen.record_unit.format(**options) if chosen.per_record else ""
    st.select_slider(f"Privacy budget ε{unit} (log scale)", options=C.EPSILON_STEPS,
                     value=start("eps_slider", C.nearest_epsilon_step(cfg.epsilon)), key="eps_slider",
                     on_change=_on_slider, disabled=not is_dp_method)
    # No min/max: a typed value out of range is refused in words by _on_input instead of clamped unseen.
    st.number_input(f"ε{unit}, exact ({C.EPSILON_MIN:g} to {C.EPSILON_MAX:g})", value=start("eps_input", cfg.epsilon),
                    key="eps_input", format="%.4g", on_change=_on_input, disabled=not is_dp_method)
    if ss.get("eps_error"):
        app_state.show_error(ss["eps_error"] + f" The settings keep ε = {app_state.config().epsilon:g}.")
    return chosen, options


def compact_controls() -> None:
    """Method and ε in one row, for the pages that show a synthesis (teaching mode only: a release is fixed)."""
    if ss.get("mode") == "release":
        return
    with st.expander("Method and ε (the same settings as on Synthesize)", expanded=True):
        left, right = st.columns([1, 1])
        with left:
            method_and_epsilon(app_state.config())
        with right:
            st.caption("A change here reruns the synthesis and this page; the sidebar and the other pages follow.")


def synthesis():
    """The synthesis the page shows, with the method's name on screen while it runs (a switch can take seconds)."""
    cfg = app_state.config()
    label = core.SYNTHESIZERS[cfg.method].label
    switched = ss.pop("method_switched", False)
    what = f"Switching to {label}: synthesizing" if switched else f"Synthesizing with {label}"
    with st.spinner(plain(f"{what} at ε = {cfg.epsilon:g}…"), show_time=True):
        return app_state.synthesis_or_stop()


def show_headline(result) -> None:
    """Headline utility and risk figures of the synthesis, with the per-column distances, under the controls."""
    ds = app_state.dataset()
    real = app_state.split()[0]
    h = app_state.headline(app_state.synth_key(), real, result.data, ds.schema, app_state.config().seed)
    st.markdown("**At a glance** (utility, then risk; details on Compare and Risk)")
    figures, chart = st.columns([3, 2])
    tiles = h.figures()
    for row in (tiles[:3], tiles[3:]):
        for col, (name, label, value) in zip(figures.columns(3), row):
            info = core.METRICS.get(name)
            col.metric(label, "n/a" if value != value else f"{value:.3g}", help=info.reading if info else
                       "Mean total variation distance over the categorical columns (0: same shares).")
    figures.caption(plain(h.sample_note()))
    chart.plotly_chart(core.plots.readout.headline_figure(h), key="headline_chart")
