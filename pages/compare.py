"""Compare: real vs synthetic as a whole, column by column, pair by pair and in a regression.

The verdict comes first; each section is a tab, so any of them is one click away.
"""

import pandas as pd
import streamlit as st

import dpsynth_core as core
from ui import errors, measures, state, widgets
from ui.text import plain

errors.start_page()

U, P, C = core.utility, core.plots, core.constraints
section_title, sections = core.metric_info.section_title, core.metric_info.sections
LAID_OUT = ("propensity", "marginals", "bivariate", "regression")  # the sections this page draws with charts
HELD_OUT = C.COMPARE_HELD_OUT_SHARE  # share of rows scored, not fitted, when the held-out option is on


def show_tiles(tiles) -> None:
    """Metric tiles with their one-line reading; a value that could not be computed says why."""
    for col, t in zip(st.columns(len(tiles)), tiles):
        col.metric(t.label, t.text, help=t.reading)
        col.caption(plain(t.reading))
    notes = [f"- **{plain(t.label)}**: {plain(t.note)}" for t in tiles if t.note]
    if notes:
        st.warning("\n".join(notes))


def blank_na(table):
    """Numbers to four significant digits, missing cells blank (with st.dataframe's placeholder="": the
    browser shows a missing value as "None" whatever the Styler says)."""
    return table.style.format(lambda v: "" if pd.api.types.is_scalar(v) and pd.isna(v) else
                              (f"{v:.4g}" if isinstance(v, float) else v))


def declared(column: str):
    """The column's declared categories, in their declared order (None for a numeric column)."""
    col = ds.schema[column]
    return col.categories if col.kind == "categorical" else None


st.title("Compare")
widgets.compact_controls()  # tune ε here and see the comparison follow
ds, cfg = state.dataset(), state.config()
result = widgets.synthesis()

used = ds.schema.used
real = state.split()[0][used]
synths = tuple(d[used] for d in result.implicates)
synth, m = synths[0], len(synths)
cats = tuple(c for c in used if ds.schema[c].kind == "categorical")
key = state.synth_key()  # in release mode it holds the release's content hash
st.caption(f"{plain(result.ledger['label'])}, {plain(result.ledger['dp_label'])}: "
           f"{len(real):,} real rows vs {len(synth):,} synthetic rows"
           + (f" (implicate 1 of {m}; the regression combines all {m})." if m > 1 else "."))

verdict_slot = st.container()  # filled last: it reads every section's results
sections_here = [section_title(s) for s in LAID_OUT] + [section_title(s) for s in sections("utility")
                                                        if s not in LAID_OUT]
tabs = dict(zip([*LAID_OUT, *[s for s in sections("utility") if s not in LAID_OUT]], st.tabs(sections_here)))

# -- Propensity ---------------------------------------------------------------
with tabs["propensity"]:
    a, b, c = st.columns([3, 1.4, 1])
    choice = a.radio("Discriminator", list(U.DISCRIMINATORS), format_func=lambda k: U.DISCRIMINATORS[k].label,
                     key="compare_discriminator")
    held = b.toggle("Score held-out rows", key="compare_heldout",
                    help=f"Fit on {1 - HELD_OUT:.0%} of the rows and compute every figure on the other "
                         f"{HELD_OUT:.0%}, so a discriminator that memorises rows gains nothing.")
    perms = c.number_input("CART permutations", min_value=1, max_value=C.CART_PERMUTATIONS_MAX,
                           value=C.CART_PERMUTATIONS_DEFAULT, key="compare_perms",
                           disabled=choice != "cart", help="Label permutations averaged for the CART null pMSE.")
    # The headline discriminator is the one every page's "pMSE ratio" comes from, on the same sample: the
    # verdict reads it whatever the choice here.
    headline = measures.discriminator(key, real, synth, "logit_interactions", 0.0, 1, cfg.seed, cats)
    holdout = HELD_OUT if held else 0.0
    variant = U.discriminator_variant(choice, holdout)
    prop = headline if variant is None else measures.discriminator(key, real, synth, choice, holdout, int(perms),
                                                                     cfg.seed, cats)
    disc = U.DISCRIMINATORS[choice]
    if choice == "logit_main":
        st.warning("Main effects only: this model is blind to lost associations. A synthesis that keeps every "
                   "marginal and breaks every relation between columns can score as indistinguishable here.")
    # Every figure of a section comes from the metric registry: the page's results go in one metric context,
    # so each metric reads them (or computes itself, for one that needs more), in the section it names.
    ctx = core.MetricContext(real, synth, schema=ds.schema, seed=cfg.seed, shared={"propensity": prop})
    show_tiles(U.propensity_tiles(prop, ctx, variant))
    for note in prop.notes:
        if note != prop.ratio_note:  # that one is already under the tiles
            st.info(plain(note))
    scored = f"scored on {len(prop.labels):,} held-out rows" if held else "scored on the rows it was fitted on"
    total = len(real) + len(synth)
    drawn = f"a random subsample of {prop.n_used:,} of the {total:,} stacked rows" if prop.n_used < total else \
        f"the {total:,} stacked rows"
    st.caption(f"{disc.description} Fitted on {prop.n_fit:,} rows of {drawn} ({prop.n_params} "
               f"{'leaves' if disc.model == 'cart' else 'parameters'}), {scored}."
               + ("" if variant is None else f" Its figures carry its name ({variant}); the pMSE ratio every page "
                                             "shows is the headline discriminator's."))
    left, right = st.columns(2)
    left.plotly_chart(P.propensity_scores_figure(prop), key="scores_chart")
    right.plotly_chart(P.propensity_roc_figure(prop), key="roc_chart")
    with st.expander("What gives the synthesis away: the discriminator's variable importance"):
        if prop.importance is not None and len(prop.importance):
            st.plotly_chart(P.importance_figure(prop.importance), key="importance_chart")
        else:
            st.info("The model had no usable column, so there is no importance to show.")

# -- Columns ------------------------------------------------------------------
summary = measures.utility_summary(key, real, synth, cats)
ctx.shared.update(summary.shared())
with tabs["marginals"]:
    show_tiles(U.section_tiles("marginals", ctx))
    gaps = [f"- {plain(n)}" for n in summary.column_notes()]
    if gaps:
        st.warning("Some values could not be computed:\n" + "\n".join(gaps))
    st.dataframe(blank_na(summary.columns.distances.assign(
        marginal_distance=summary.pegs.marginal.reindex(summary.columns.distances.index))), key="distances_table",
        placeholder="")
    st.caption("KS for numeric columns; total variation and Hellinger for categorical ones (missing values are a "
               f"level); the PeGS marginal distance for both, numeric columns in {summary.pegs.bins} bins. "
               "An empty cell: the distance does not apply to the column's kind.")

    if st.toggle("All columns at once (small multiples)", key="compare_small_multiples"):
        hists = {col: core.histogram_data(real, synth, col, categorical=col in cats, order=declared(col))
                 for col in used}
        st.plotly_chart(P.histogram_grid_figure(hists), key="grid_chart")
    else:
        column = st.selectbox("Column", used, key="compare_column")
        is_cat = column in cats
        left, right = st.columns(2)
        left.plotly_chart(P.histogram_figure(core.histogram_data(real, synth, column, categorical=is_cat,
                                                                 order=declared(column)), column), key="hist_chart")
        if is_cat:
            right.info("The ECDF needs a numeric column; this one is categorical.")
        else:
            try:
                right.plotly_chart(P.ecdf_figure(core.ecdf_data(real, synth, column), column), key="ecdf_chart")
            except core.DataError as err:
                right.info(plain(str(err)))

    st.markdown("**Moments and percentiles of the numeric columns**")
    if len(summary.columns.moments):
        # Two tables that each fit the page, rather than one with the upper percentiles scrolled out of sight.
        moments = summary.columns.moments  # indexed by (column, data)
        pct = [c for c in moments.columns if str(c).startswith("p") and str(c)[1:].isdigit()]
        st.dataframe(blank_na(moments.drop(columns=pct)), key="moments_table", placeholder="")
        st.dataframe(blank_na(moments[pct]), key="percentiles_table", placeholder="")
        st.caption("sd with n − 1; skewness g1 = m3/m2^1.5; kurtosis is excess kurtosis g2 = m4/m2² − 3 (0 for a "
                   "normal); zero_share is the share of values equal to 0; percentiles interpolate linearly.")
    else:
        st.info("No numeric column: no moments to compare.")
    specials = U.special_value_shares(real, synth, ds.schema)
    if len(specials):
        st.markdown("**Special values** (each a cell of its own, released exactly)")
        st.dataframe(blank_na(specials), hide_index=True, key="specials_table", placeholder="")
        st.caption("The share of each column's rows holding the special value, in the real and in the synthetic "
                   "data; difference = synthetic − real.")
    missing = summary.columns.missing
    if missing[["real", "synthetic"]].fillna(0).to_numpy().any():
        left, right = st.columns(2)
        left.plotly_chart(P.missing_figure(missing), key="missing_chart")
        right.dataframe(blank_na(missing), key="missing_table", placeholder="")
    else:
        st.caption("Missing values: none in either dataset, in any column.")

# -- Pairs --------------------------------------------------------------------
with tabs["bivariate"]:
    pair_tiles = U.section_tiles("bivariate", ctx)
    show_tiles(pair_tiles)
    for note in summary.pair_notes():
        if not any(note in (t.note or "") for t in pair_tiles):
            st.info(plain(note))
    left, right = st.columns(2)
    if len(summary.correlation.difference) >= 2:
        left.plotly_chart(P.correlation_difference_figure(summary.correlation), key="corr_chart")
    if len(summary.association.difference) >= 2:
        right.plotly_chart(P.correlation_difference_figure(summary.association), key="cramer_chart")

# -- Regression ---------------------------------------------------------------
reg, outcome = None, None
with tabs["regression"]:
    outcomes = U.regression_outcomes(ds.schema, used)  # outcome → family (linear, or logistic for two levels)
    if not outcomes:
        st.info("No numeric or two-level column to use as an outcome.")
    else:
        outcome = st.selectbox("Outcome", list(outcomes), key="reg_outcome")
        choices = [col for col in used if col != outcome]
        predictors = st.multiselect("Predictors", choices, default=choices[:3], key="reg_predictors")
        if not predictors:
            st.info("Pick at least one predictor.")
        else:
            family = outcomes[outcome]
            partial = bool(result.ledger.get("kept_columns"))
            try:
                reg = measures.regression(key, real, synths, outcome, tuple(predictors), family, partial, cats,
                                          cfg.seed)
            except (core.DataError, ValueError) as err:
                errors.show_error(str(err))
    if reg is not None:
        ctx.shared["regression"] = reg
        show_tiles(U.section_tiles("regression", ctx))
        if m > 1:
            st.info(plain(f"The synthetic intervals combine {m} implicates with Reiter's rule for "
                          f"{'partially' if partial else 'fully'} synthetic data. ") + plain(U.COMBINING_CAVEAT))
        for note in reg.notes:
            if U.COMBINING_CAVEAT not in note:
                st.caption(plain(note))
        st.plotly_chart(P.ci_forest_figure(reg.table), key="ci_chart")
        st.dataframe(reg.table, hide_index=True, key="reg_table", placeholder="")
        if reg.combining is not None:
            with st.expander("How the implicates were combined"):
                st.dataframe(reg.combining, key="combining_table")

# -- Any other section of the registry, in its own tab --------------------------
for section, tab in tabs.items():
    if section not in LAID_OUT:
        with tab:
            show_tiles(U.section_tiles(section, ctx))

# -- The verdict, on top -------------------------------------------------------
verdict = U.utility_verdict(headline, summary, reg, outcome=outcome)
tone = {"good": verdict_slot.success, "fair": verdict_slot.info, "poor": verdict_slot.warning}.get(
    verdict.level, verdict_slot.info)
tone("\n".join(f"- {plain(line)}" for line in verdict.lines))
