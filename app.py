"""dpsynth: entry point. Navigation and the shared sidebar, nothing else."""

import streamlit as st

from ui import errors, link, spending, state, widgets
from ui.text import plain

st.set_page_config(page_title="dpsynth", layout="wide")
if state.init_session():  # the session's first run: apply what a shared link asks for
    link.read_link()


def dataset_caption() -> None:
    """The session's table in the sidebar. Its data stays in this function's locals: Streamlit runs app.py
    as the process's ``__main__`` module, whose globals outlive the run, so a table bound there stayed in
    memory after its session ended, until another session ran (bench/bench_large.py memory)."""
    ds = state.dataset()
    st.caption("Dataset")
    st.text(f"{ds.name} · {len(ds.df):,} rows × {ds.df.shape[1]} columns")
    if ds.schema.undeclared_columns:
        st.caption("Some columns' domains are read off the data: no synthesis of it is DP.")


pages = [
    st.Page("pages/data.py", title="Data", default=True),
    st.Page("pages/synthesize.py", title="Synthesize"),
    st.Page("pages/compare.py", title="Compare"),
    st.Page("pages/risk.py", title="Risk"),
    st.Page("pages/ru_map.py", title="R-U map"),
    st.Page("pages/ledger.py", title="Ledger"),
    st.Page("pages/learn.py", title="Learn"),
]
page = st.navigation(pages)

learning = page.title == "Learn"  # Learn never reads the session's data: no dataset, settings or link of them
if learning:
    st.session_state["settings_slot"] = st.session_state["spending_slot"] = None
else:
    with st.sidebar:
        # The mode lives under its own key: a widget's key is dropped on runs that don't draw it.
        modes = ["teaching", "release"]
        st.radio("Mode", modes, index=modes.index(widgets.start_value("mode_choice", st.session_state["mode"])),
                 key="mode_choice", horizontal=True,
                 on_change=lambda: st.session_state.update(mode=st.session_state["mode_choice"]),
                 help="Teaching: explore real vs synthetic freely (not a release). Release: run the final "
                      "synthesis once, with a fresh seed, and download the release package.")
        dataset_caption()
        # Slots: the Synthesize page reruns on its own when a setting changes and rewrites them.
        st.caption("Synthesis")
        st.session_state["settings_slot"] = st.empty()
        st.caption("Spent on this dataset (every session and command)")
        st.session_state["spending_slot"] = st.empty()  # rewritten whenever a page shows a new synthesis
if not learning:
    spending.show_settings()
    spending.show_spending()

for note in link.notes():  # what the link asked for and could not have; after a restart, what was lost
    st.info(plain(note[0].upper() + note[1:] + "."))
if st.session_state["mode"] == "teaching" and page.title != "Learn":  # Learn never reads the session's data
    st.info("**Teaching mode — exploration, not a release.** Results here are computed on the confidential "
            "data; choosing ε by looking at them is itself a use of the data that no DP guarantee covers. "
            "Switch to release mode in the sidebar for the final synthesis.")
if not learning:  # Learn writes its own demo's state in the address bar
    link.write_link()
errors.run_page(page)  # inside a net: one sentence, never a traceback (or data) on the page or in the log
