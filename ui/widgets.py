"""The controls and displays shared by the pages: the method and ε controls (drawn on Synthesize,
Compare and Risk over one shared state), the headline readout, the privacy ledger and the downloads.

Each page draws the same controls under the same keys, and every change goes into the session's
settings (``ui.state.set_config``), so ε can be tuned from whichever page shows its effect.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

import dpsynth_core as core
from ui import measures, runs, spending, state
from ui.errors import show_error
from ui.text import plain

C = core.constraints
ss = st.session_state


def start_value(key: str, fallback):
    """The value the widget under ``key`` starts from; pass it as the widget's default as well.

    A widget owns its key only while it is drawn: coming back to a page, the key is restored from
    ``fallback`` (the settings). The same value goes in as the widget's default because a browser that
    draws a widget only after a later rerun (seen with 30 pages loading at once) starts it from its
    default and sends that back as if the user had chosen it.
    """
    return st.session_state.setdefault(key, fallback)


start = start_value


def _on_method() -> None:
    state.set_config(method=ss["method"], params=())
    ss["method_switched"] = True  # the next synthesis says which method it is running


def epsilon_key(widget: str) -> str:
    """The key of the ε ``widget`` ("eps_slider" or "eps_input") this run: its name and how often it was renewed.

    Neither ε callback writes the other widget's key. Written there, the server's value of that widget ran
    ahead of the browser's, and a message the browser sent before drawing that run (the next fast key
    press) carried the old value back: Streamlit took it for a user's edit and called the other callback,
    which put the settings, the slider and the link back to an older ε (three fast → from ε = 1 once left
    the thumb at 1.0 and the link at 1.58). Instead, a change from one widget renews the other under a new
    key, drawn from the settings, and a callback under a renewed key does nothing: it is the browser's late
    report of a widget it has not yet replaced (the server may have dropped that key's value already, so
    Streamlit calls it even for the value it last had), not the user's choice.
    """
    return f"{widget}_{ss.get('eps_renewals', {}).get(widget, 0)}"


def _renew(widget: str) -> None:
    renewals = ss.setdefault("eps_renewals", {})
    renewals[widget] = renewals.get(widget, 0) + 1


def _on_slider(key: str) -> None:
    if key != epsilon_key("eps_slider"):
        return
    ss.pop("eps_error", None)
    state.set_config(epsilon=float(ss[key]))
    _renew("eps_input")


def _on_input(key: str) -> None:
    """A typed ε: used if the app allows it, else refused with a sentence (the box never clamps silently)."""
    if key != epsilon_key("eps_input"):
        return
    error = C.epsilon_input_error(ss[key])
    if error:
        ss["eps_error"] = error
        return
    ss.pop("eps_error", None)
    state.set_config(epsilon=float(ss[key]))
    _renew("eps_slider")  # drawn again at the typed ε's nearest step


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
    options = {**chosen.defaults, **dict(cfg.params)} if cfg.method == ss["method"] else chosen.defaults
    slider, box = epsilon_key("eps_slider"), epsilon_key("eps_input")
    st.select_slider("Total privacy budget ε of the release (log scale)", options=C.EPSILON_STEPS,
                     value=start(slider, C.nearest_epsilon_step(cfg.epsilon)), key=slider,
                     on_change=_on_slider, args=(slider,), disabled=not is_dp_method)
    # No min/max: a typed value out of range is refused in words by _on_input instead of clamped unseen.
    st.number_input(f"Total ε, exact ({C.EPSILON_MIN:g} to {C.EPSILON_MAX:g})", value=start(box, cfg.epsilon),
                    key=box, format="%.4g", on_change=_on_input, args=(box,), disabled=not is_dp_method)
    if chosen.spends.kind == core.privacy.PER_RECORD and cfg.method == ss["method"]:
        # the option widgets (drawn below) may hold a value newer than the settings
        current = {k: ss.get(f"opt_{ss['method']}_{k}", v) for k, v in options.items()}
        per_record_caption(chosen, current, cfg, state.dataset())
    if ss.get("eps_error"):
        show_error(ss["eps_error"] + f" The settings keep ε = {state.config().epsilon:g}.")
    return chosen, options


def per_record_caption(chosen, options, cfg, ds) -> None:
    """The per-record (per-block) ε a per-record method gets from the total, beside the slider."""
    n = cfg.n or len(ds.df)
    budget, spent = chosen.spends, ds.schema.estimate_epsilon  # a private estimate of the schema is paid first
    if spent >= cfg.epsilon:
        return  # the synthesis refuses these settings in a sentence of its own
    count = 0.0 if cfg.n else budget.row_count_epsilon(cfg.epsilon, spent)
    each = budget.plan(cfg.epsilon, n=n, row_count=count, implicates=cfg.implicates, params=options,
                       schema=spent).per_unit
    about = "" if cfg.n else "about "
    st.caption(f"{chosen.label} spends it as {about}ε = {each:.3g} per {budget.unit.format(**options)} "
               f"({n:,} records{'' if cfg.n else ', before the noisy count'}).")


def method_options(chosen, options: dict, columns: list[str]) -> tuple:
    """One widget per option the method declares (its type, range and help); returns the options changed
    from their defaults as sorted (name, value) pairs, the settings' ``params``.

    A ``columns`` option (an order of the modelled columns) starts from the schema's order, which stands
    for its default (None).
    """
    changed = {}
    for option in chosen.options:
        key = f"opt_{chosen.name}_{option.name}"
        value = options.get(option.name, option.default)
        if option.type == "columns":
            value = list(value or columns)
        option_input(option, key, start(key, value), columns)
        value = ss[key]
        if option.type == "columns":
            value = None if list(value) == columns else tuple(value)
        if value != option.default:
            changed[option.name] = value
    return tuple(sorted(changed.items()))


def option_input(option, key: str, value, columns: list[str]) -> None:
    """The widget of one declared option (:class:`dpsynth_core.synth.Option`), by its type."""
    label, helptext = option.name, option.help
    if option.type == "choice":
        st.selectbox(label, list(option.choices), index=list(option.choices).index(value), key=key, help=helptext)
    elif option.type == "columns":
        st.multiselect(label, columns, default=value, key=key, help=helptext)
    elif option.type == "bool":
        st.checkbox(label, value=value, key=key, help=helptext)
    elif option.type == "int":
        st.number_input(label, min_value=None if option.low is None else int(option.low),
                        max_value=None if option.high is None else int(option.high), step=1, value=value, key=key,
                        help=helptext, placeholder="the method's default" if option.optional else None)
    else:
        st.number_input(label, min_value=None if option.low is None else float(option.low),
                        max_value=None if option.high is None else float(option.high), value=value, key=key,
                        format="%g", help=helptext)


def compact_controls() -> None:
    """Method and ε in one row, for the pages that show a synthesis (teaching mode only: a release is fixed)."""
    if ss.get("mode") == "release":
        return
    with st.expander("Method and ε (the same settings as on Synthesize)", expanded=True):
        left, right = st.columns([1, 1])
        with left:
            method_and_epsilon(state.config())
        with right:
            st.caption("A change here reruns the synthesis and this page; the sidebar and the other pages follow.")


def synthesis():
    """The synthesis the page shows, with the method's name on screen while it runs (a switch can take seconds)."""
    cfg = state.config()
    label = core.SYNTHESIZERS[cfg.method].label
    switched = ss.pop("method_switched", False)
    what = f"Switching to {label}: synthesizing" if switched else f"Synthesizing with {label}"
    with st.spinner(plain(f"{what} at ε = {cfg.epsilon:g}…"), show_time=True):
        return runs.synthesis_or_stop()


def show_headline(result) -> None:
    """Headline utility and risk figures of the synthesis, with the per-column distances, under the controls."""
    ds = state.dataset()
    real = state.split()[0]
    h = measures.headline(state.synth_key(), real, result.data, ds.schema, state.config().seed)
    st.markdown("**At a glance** (utility, then risk; details on Compare and Risk)")
    figures, chart = st.columns([3, 2])
    tiles = h.figures()  # the registry's headline metrics, utility first: one row per kind
    for kind in ("utility", "risk"):
        row = [t for t in tiles if core.METRICS[t[0]].kind == kind]
        for col, (name, label, value) in zip(figures.columns(max(3, len(row))), row):
            col.metric(label, "n/a" if value != value else f"{value:.3g}", help=core.METRICS[name].reading)
    figures.caption(plain(h.sample_note()))
    # The small chart is a table with a bar per column, not a plotly figure: it is redrawn on every move of
    # the ε slider, and in Chromium a plotly update cost the page ~80 ms of script per move besides its
    # layout, the table's ~10 ms (a CPU profile of bench/browser_move.py's moves). The bars' scale is fixed
    # at 0-1, the distances' range, so a move's bars can be compared with the last move's.
    chart.dataframe(h.by_column(), hide_index=True, key="headline_bars", placeholder="", column_config={
        "column": st.column_config.TextColumn("Column"),
        "distance": st.column_config.ProgressColumn(
            "Distance (KS or TV)", format="%.3f", min_value=0.0, max_value=1.0,
            help="KS for a numeric column, total variation for a categorical one: 0 = the same distribution, "
                 "1 = no overlap."),
    })


def show_statement(ledger: dict, statement: str | None = None, tone: str | None = None) -> None:
    """The plain-words privacy statement, its tone graded by the core: green only for a DP run
    with a small total ε, a warning when not DP, ε is large or δ is above 1/n (``tone``: the core's
    grading of ``statement``, e.g. a release's with what was spent in all)."""
    text = plain(statement or ledger["statement"])
    tone = tone or core.statement_tone(ledger)
    if tone == "success":
        st.success(text)
    elif tone == "info":
        st.info(text)
    else:
        st.warning(text, icon="⚠️")


def show_ledger(ledger: dict, *, statement: str | None = None, tone: str | None = None) -> None:
    """The privacy ledger in words, figures and a table of its steps."""
    st.subheader("Privacy ledger")
    show_statement(ledger, statement, tone)
    if ledger["epsilon_total"] is not None:
        a, b, c = st.columns(3)
        a.metric("ε total", f"{ledger['epsilon_total']:g}",
                 help=ledger.get("composition") if ledger["epsilon_per_record"] is None else
                 f"ε = {ledger['epsilon_per_record']:.4g} per {ledger.get('record_unit') or 'synthetic record'} "
                 f"for {ledger['n_rows']:,} records (sequential composition), plus the row count if it was "
                 "not declared.")
        b.metric("e^ε (probability-ratio bound)",
                 core.privacy.ratio_text(ledger["exp_epsilon"], ledger["epsilon_total"]))
        c.metric("δ", f"{ledger['delta']:g}")
    if ledger["steps"]:
        st.dataframe(core.ledger_steps_table(ledger), hide_index=True, placeholder="")  # no "None" cells
    held = ledger.get("holdout", {})
    st.caption(
        f"Neighbouring datasets: {ledger['neighbouring']}. Row count: {ledger['public']['row_count']['value']:,} "
        f"({ledger['public']['row_count']['source']}). Rows held out from the synthesizer: "
        + (f"{held['share']:.0%} (each by a fresh secret coin; the synthesis used the others)." if held.get("taken")
           else "none (every row used).")
    )


def ledger_tables() -> None:
    """The ledger store's entries on the session's dataset, oldest first: the table ``dpsynth ledger`` prints, for
    this dataset alone (the store may hold other sessions' datasets, which are not this session's to see)."""
    try:
        entries, _ = core.privacy.store.ledger_view(spending.store(), state.dataset().fingerprint)
    except core.LedgerError as err:
        show_error(str(err))
        return
    st.dataframe(entries, hide_index=True, placeholder="")


def download(label: str, data: bytes | Callable[[], bytes], *, file_name: str, mime: str, key: str,
             where=st) -> None:
    """A download button whose file is made and sent only when it is clicked.

    Handed bytes, Streamlit files them on every rerun and the browser fetches the whole file each time
    just to check its link: the synthetic CSV on every move of the ε slider (megabytes for a large
    table), the R-U map's HTML with plotly.js inside on every rerun of that page. Handed a callable,
    nothing is made or sent until the click, and the click does not rerun the page.
    """
    where.download_button(label, data if callable(data) else (lambda: data), file_name=file_name, mime=mime,
                          key=key, on_click="ignore")
