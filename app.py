"""dpsynth: entry point. Navigation and the shared sidebar, nothing else."""

import streamlit as st

import app_state

st.set_page_config(page_title="dpsynth", layout="wide")
app_state.init_session()

pages = [
    st.Page("pages/data.py", title="Data", default=True),
    st.Page("pages/synthesize.py", title="Synthesize"),
    st.Page("pages/compare.py", title="Compare"),
    st.Page("pages/risk.py", title="Risk"),
    st.Page("pages/ru_map.py", title="R-U map"),
]
page = st.navigation(pages)

with st.sidebar:
    ds, cfg = app_state.dataset(), app_state.config()
    st.caption("Dataset")
    st.text(f"{ds.name} · {len(ds.df):,} rows × {ds.df.shape[1]} columns")
    if not ds.schema.is_public:
        st.caption("Some bounds or categories are read off the data: no synthesis of it is DP.")
    st.caption("Synthesis")
    label = app_state.core.SYNTHESIZERS[cfg.method].label
    st.text(f"{label}\nε = {cfg.epsilon:g} · seed {cfg.seed}")

page.run()
