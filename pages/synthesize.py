"""Synthesize: method, ε, seed and rows; the ledger in words; the download."""

import streamlit as st

import dpsynth_core as core
from ui import audit, errors, link, runs, spending, state, text, widgets

errors.start_page()

C = core.constraints
ss = st.session_state

st.title("Synthesize")


start = widgets.start_value


def show_forecast(method, cfg, schema) -> None:
    """Before any run: the method's utility forecast and the suggested method, from public facts only
    (the schema, the total ε, n if declared, the options; issue 18)."""
    options = dict(cfg.params) if cfg.method == method else {}  # the core adds the method's defaults
    try:
        fc = core.forecast(method, schema, cfg.epsilon, cfg.n, **options)
        suggestion = core.suggest_method(schema, cfg.epsilon, cfg.n)
    except (ValueError, TypeError, ArithmeticError):
        return  # an option out of range: the synthesis itself says what is wrong
    if fc is not None:
        (st.warning if fc.level == "poor" else st.caption)("Forecast: " + fc.sentence)
    if suggestion is not None and suggestion.method != method:  # None: no registered method may be suggested
        st.caption(suggestion.sentence)


def controls(ds, cfg) -> None:
    """Method, ε, seed, rows, implicates, columns and the method's options; each change is saved in the settings."""
    left, right = st.columns([2, 1])
    with left:
        # shared with Compare and Risk; the forecast sits right under the method's description
        chosen, options = widgets.method_and_epsilon(
            cfg, after_method=lambda method: show_forecast(method, cfg, ds.schema))
    with right:
        if ss["mode"] == "release":
            st.caption("Release mode: the release runs with fresh randomness; no seed is kept or shown.")
        else:
            st.checkbox("Fixed seed: reproducible exploration, not DP", value=start("fixed_seed", cfg.fixed_seed),
                        key="fixed_seed", on_change=lambda: state.set_config(fixed_seed=bool(ss["fixed_seed"])),
                        help="With a fixed seed the output is a fixed function of the data and the seed, so the run "
                             "is labelled not DP. Untick for fresh randomness that is never stored: the run is "
                             "then labelled DP if everything else allows.")
            st.number_input("Seed", min_value=0, max_value=C.SEED_MAX, step=1, value=start("seed", cfg.seed),
                            key="seed", disabled=not ss["fixed_seed"],
                            on_change=lambda: state.set_config(seed=int(ss["seed"])))
        st.checkbox("Declare the number of synthetic rows", value=start("n_declared", cfg.n is not None),
                    key="n_declared",
                    on_change=lambda: state.set_config(
                        n=int(ss["n_rows"]) if ss["n_declared"] and ss.get("n_rows") is not None else None),
                    help="A declared row count is public. Otherwise a DP method releases a noisy count of the "
                         f"data's rows, spending {C.ROW_COUNT_EPSILON_SHARE:.0%} of ε.")
        # Empty until typed: the data's exact row count is confidential unless it is known publicly,
        # so the box never offers it (issue 15).
        st.number_input("Synthetic rows (a public figure)", min_value=1, max_value=C.MAX_SYNTH_ROWS, step=1,
                        value=start("n_rows", cfg.n), key="n_rows", disabled=not ss["n_declared"],
                        placeholder="type a publicly known count",
                        help="The data's exact number of rows is confidential unless it is known publicly "
                             "(e.g. published with the survey); type a public figure, not one read off the data.",
                        on_change=lambda: state.set_config(
                            n=int(ss["n_rows"]) if ss["n_rows"] is not None else None))
        holdout_control(cfg)
        st.number_input("Implicates (m datasets: m·n records, ε/m each)", min_value=1, max_value=C.MAX_IMPLICATES,
                        step=1,
                        value=start("implicates", cfg.implicates), key="implicates",
                        on_change=lambda: state.set_config(implicates=int(ss["implicates"])))
        st.multiselect("Columns to synthesize (the rest are kept as they are)", ds.schema.used,
                       default=start("synth_columns", list(cfg.columns) if cfg.columns is not None else ds.schema.used),
                       key="synth_columns",
                       on_change=lambda: state.set_config(columns=None if set(ss["synth_columns"]) == set(
                           ds.schema.used) else tuple(ss["synth_columns"])))

    if chosen.options:  # drawn from the method's declarations (dpsynth_core.synth.options)
        with st.expander("Method options"):
            params = widgets.method_options(chosen, options, ds.schema.used)
            if params != state.config().params:
                state.set_config(params=params)


def holdout_control(cfg) -> None:
    """The holdout: one visible setting, here alone (Risk may propose one; the ledger and the sidebar show it)."""
    steps = round((C.RISK_HOLDOUT_MAX - C.RISK_HOLDOUT_MIN) / C.RISK_HOLDOUT_STEP)
    shares = sorted({0.0, cfg.holdout,
                     *(round(C.RISK_HOLDOUT_MIN + i * C.RISK_HOLDOUT_STEP, 2) for i in range(steps + 1))})
    st.selectbox("Rows held out from the synthesizer (Risk compares them with the rows it saw)", shares,
                 index=shares.index(start("holdout", cfg.holdout)), key="holdout",
                 format_func=lambda s: f"{s:.0%} of the rows" if s else "none: every row is used",
                 on_change=lambda: state.set_config(holdout=float(ss["holdout"])),
                 help="Each row is held out by a fresh secret coin with this probability. The synthesis on every "
                      "page, the release too, then uses the other rows only; its ledger states the share.")


def release_run() -> None:
    """Release mode: the one final synthesis, its package, and every synthesis of this dataset in the session."""
    st.subheader("Release")
    st.markdown(
        "The release is synthesized **once**, at the settings above, with a **fresh random seed**; every "
        "computation on this dataset, from any session or `dpsynth` command, is listed below with what it spent."
    )
    release = state.current_release()
    done = release is not None and release.settings == state.release_settings()
    if st.button("Run the release", type="primary", key="run_release", disabled=done,
                 help="Done at these settings: change a setting or the schema to run another release." if done
                 else None):
        runs.run_release()
        st.rerun()  # drawn again at once: the button disabled, the sidebar's spending updated
    if "release_error" in ss:
        errors.show_error(ss["release_error"])
    release = state.current_release()
    if release is None:
        st.info("No release yet for this dataset.")
    else:
        if release.settings != state.release_settings():
            st.info("The settings or the schema changed since this release: run the release again to release "
                    "at the new settings.")
        widgets.show_ledger(release.synthesis.ledger, statement=release.statement, tone=release.tone)
        d1, d2 = st.columns(2)
        widgets.download("Download the public release (zip: synthetic CSV, ledger, public report)",
                           release.package, file_name=release.zip_name, mime="application/zip",
                           key="download_release", where=d1)
        widgets.download("Download the internal report (CONFIDENTIAL, not for publication)", release.internal,
                           file_name=release.internal_name, mime="text/html", key="download_internal", where=d2)
        st.caption("The public release holds the synthetic data, its ledger and a report built from them alone. "
                   "The internal report compares the release with the confidential data: keep it with the data.")
        st.subheader("Privacy audit of the release's method")
        audit.release_audit(release.synthesis, state.dataset().schema, dict(state.config().params))
    st.subheader("Every use of this dataset")
    widgets.ledger_tables()


def exploration(ds) -> None:
    """Teaching mode: the synthesis at the current settings, its ledger, a preview and the downloads."""
    result = widgets.synthesis()
    ledger = result.ledger
    widgets.show_headline(result)  # utility and risk at a glance, following ε on this page
    widgets.show_ledger(ledger)

    st.subheader("Synthetic data (exploration, not a release)")
    # A preview (the download has every row); a missing value blank, as in the CSV, not "None".
    st.dataframe(text.displayable(result.data.head(50)), height=260, placeholder="")
    stem = core.release.file_stem(ds.name, ledger)
    # Each file is encoded only when its button is clicked (the diamonds CSV takes ~0.6 s and is 7 MB).
    d1, d2 = st.columns(2)
    # The files are the core's (release.synthesis_files), as `dpsynth synthesize` writes them: the same bytes.
    if len(result.implicates) == 1:
        widgets.download("Download synthetic CSV",
                           lambda r=result, s=stem: core.release.csv_files(r, s)[f"{s}.csv"],
                           file_name=f"{stem}.csv", mime="text/csv", key="download_csv", where=d1)
    else:
        widgets.download(f"Download {len(result.implicates)} implicates (zip)",
                           lambda r=result, s=stem: core.release.zip_bytes(core.release.synthesis_files(r, s)),
                           file_name=f"{stem}.zip", mime="application/zip", key="download_csv", where=d1)
    # What leaves the machine carries the declared schema only: values read off the data are withheld.
    widgets.download("Download ledger (JSON)", lambda r=result: core.release.ledger_file(r),
                       file_name=f"{stem}.ledger.json", mime="application/json", key="download_ledger", where=d2)
    # The settings as `dpsynth synthesize --config` reads them: this run, repeated in batch.
    widgets.download("Download settings (JSON, for the dpsynth command)",
                       lambda c=state.config(): c.to_json().encode("utf-8"),
                       file_name=f"{stem}.settings.json", mime="application/json", key="download_settings", where=d2)


@st.fragment
def settings_and_result() -> None:
    """The controls and what they make. Moving one reruns this fragment only, not the sidebar, navigation
    and banners around it: a move costs the browser ~15% less (bench/load_test.py, a class on one machine).
    """
    # The sidebar's settings and spending, rewritten from here on every run (a fragment may write outside
    # itself only where it also wrote on the last full run); a new synthesis rewrites the spending again.
    spending.show_settings()
    spending.show_spending()
    controls(state.dataset(), state.config())
    link.write_link()  # the address bar holds the settings
    if ss["mode"] == "release":
        release_run()
    else:
        exploration(state.dataset())


settings_and_result()
