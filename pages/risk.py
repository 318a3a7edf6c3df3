"""Risk: how much the release discloses about the confidential records."""

import math
import sys

import streamlit as st

import dpsynth_core as core
from ui import errors, measures, state, widgets
from ui.text import plain

errors.start_page()

risk = core.risk
metrics, section_title, sections = core.metric_info.metrics, core.metric_info.section_title, core.metric_info.sections
st.title("Risk")
summary_slot = st.empty()  # one line on every verdict below, written when they are all known
SHOWN = []  # the estimates shown on this run, for that line
widgets.compact_controls()  # tune ε here and see the verdicts follow
ds, cfg = state.dataset(), state.config()

# The holdout changes which rows every synthesis reads, the release's too: it is the steward's setting, on
# Synthesize. This page may propose one (a button and its sentence), never set it unasked.
C = core.constraints
release = state.current_release() if st.session_state["mode"] == "release" else None
if release is not None:  # the page measures the release, on the rows it was made from (state.shown_holdout)
    made, here = state.shown_holdout(), f"{cfg.holdout:.0%} of the rows" if cfg.holdout else "none"
    st.caption((f"The release held out {made:.0%} of the rows, as its ledger says: the verdicts compare the records "
                "it was made from with records it never saw" if made else "The release was made from every row, as "
                "its ledger says, so verdicts beyond the random-data baselines stay open")
               + ("." if cfg.holdout == made else f". The holdout set on Synthesize ({here}) applies to the next "
                  "release: run it again there."))
elif cfg.holdout:
    st.caption(f"{cfg.holdout:.0%} of the rows are held out (set on Synthesize): the synthesis on every page, the "
               f"release too, uses the other {1 - cfg.holdout:.0%}, and the verdicts compare the records it saw "
               "with records it never saw.")
else:
    proposed = C.default_holdout(len(ds.df))  # the rule: tables large enough for held-out shares to be precise
    share = proposed or C.RISK_HOLDOUT_DEFAULT
    if proposed:
        why = f"holding out {share:.0%} of the rows would let them compare the records the synthesizer saw with others"
    else:
        why = (f"with {len(ds.df):,} rows (fewer than {C.RISK_HOLDOUT_MIN_ROWS:,}) the held-out records' shares would "
               f"be imprecise, but you may hold out {share:.0%} all the same")
    st.info(f"Every row is used, so verdicts beyond the random-data baselines stay open; {why}. The synthesis on every "
            f"page, the release too, would then use the other {1 - share:.0%} (the setting is on Synthesize).")
    st.button(f"Hold out {share:.0%} of the rows", key="risk_propose_holdout", on_click=state.set_holdout,
              args=(share,))

result = widgets.synthesis()
ledger, used = result.ledger, ds.schema.used
train, held = state.split()
real, synth = train[used], result.data[used]
holdout = held[used] if held is not None else None
key = state.synth_key()


def show(est, fmt: str = "{:.3f}", note: str = "", chart_key: str = "") -> None:
    """A measure's tile and verdict beside the figure of its references."""
    left, right = st.columns([2, 3])
    left.metric(est.label, "n/a" if math.isnan(est.value) else fmt.format(est.value),
                help=core.METRICS[est.metric].reading)
    box = {"none": left.success, "population": left.info, "undetermined": left.info,
           "disclosure": left.warning}[est.finding]
    box(plain(est.verdict()))
    SHOWN.append(est)
    right.plotly_chart(core.plots.estimate_figure(est, note=note), key=chart_key or f"est_{est.metric}")


def show_summary() -> None:
    """The page's first line: every verdict in one sentence, and why verdicts stay open without a holdout."""
    line = risk.verdict_summary(SHOWN)
    undecided = any(e.finding == "undetermined" for e in SHOWN)
    if any(e.finding == "disclosure" for e in SHOWN):
        summary_slot.warning(line)
    elif undecided:
        summary_slot.info(line + " Without held-out rows a synthesis that learned only the population beats the "
                          "random-data baselines too, so those verdicts are left open rather than called "
                          "disclosure.")
    else:
        summary_slot.success(line)


st.subheader(section_title("formal"))
widgets.show_statement(ledger)
formal = risk.formal_risk(ledger)
a, b, c = st.columns(3)
a.metric("ε", f"{formal.epsilon:g}" if formal.is_dp else "none (not DP)")
b.metric("δ", f"{formal.delta:g}" if formal.is_dp else "n/a")
c.metric("e^ε (bound on the probability ratio)",
         "n/a" if not formal.is_dp else (f"{formal.exp_epsilon:,.2f}" if math.isfinite(formal.exp_epsilon)
                                         else "more than 10^300"))

st.subheader("Which measures apply")
linked = risk.is_row_linked(ledger)
st.markdown(plain(risk.applicable_measures(ledger, holdout=holdout is not None)))
keys = st.multiselect("Key variables (what an intruder knows about a person)", used,
                      default=[k for k in ds.schema.keys if k in used], key="risk_keys")
options = [col for col in used if col not in keys]
default_sensitive = options.index(ds.schema.sensitive) if ds.schema.sensitive in options else 0
sensitive = st.selectbox("Sensitive column (what the intruder wants to learn)", options, index=default_sensitive,
                         key="risk_sensitive") if options else None
numeric_keys = [k for k in keys if ds.schema[k].kind == "numeric"]
left, right = st.columns(2)
tol = left.number_input("Tolerance for numeric keys (same units as the column; 0 = exact)", min_value=0.0,
                        value=0.0, key="risk_tol") if numeric_keys else 0.0
stol = None
if sensitive is not None and ds.schema[sensitive].kind == "numeric":
    default_tol = risk.default_sensitive_tolerance(sensitive, [real, synth], ds.schema)
    # A range wider than the largest float (1e308 to -1e308) makes 5% of it infinite; the browser's number
    # box holds at most the largest float, which matches everything just the same.
    default_tol = min(float(default_tol), sys.float_info.max) if default_tol == default_tol else 0.0
    stol = right.number_input("A numeric guess reveals the sensitive value when this close (default: 5% of its "
                              "range)", min_value=0.0, value=float(default_tol), key="risk_stol")
if not keys:
    st.info("Pick at least one key variable to measure matching and prediction.")

# Every measure comes from the metric registry, section by section: the page puts what it computed (with the
# keys, tolerances and holdout chosen above) in one metric context, each section draws its own extras, and each
# registered measure of the section is shown with its verdict, or says what it needs.
ctx = core.MetricContext(real, synth, schema=ds.schema, seed=cfg.seed, holdout=holdout, keys=keys,
                         sensitive=sensitive)


def draw_matching() -> set:
    ctx.shared["matching"] = measures.match_risk(key, real, synth, tuple(keys), tol or None, ds.schema)
    return set()


def after_matching() -> None:
    mr = ctx.shared["matching"]
    a, b = st.columns([2, 3])
    a.metric("False match rate", "n/a" if math.isnan(mr.rates.false_rate) else f"{mr.rates.false_rate:.3f}",
             help="Among records matched to exactly one released row, the share matched to the wrong one.")
    b.caption(f"Expected matches: {mr.rates.expected:,.1f} of {mr.rates.n:,} records (released as is: "
              f"{mr.original.expected:,.1f}). The false match rate is the intruder's error among unique matches.")
    st.markdown("**Per record**: *c_j* released rows match the record's keys; *T_j* says whether its own row "
                "is among them. Riskiest first.")
    st.dataframe(mr.table, height=260, placeholder="")


def draw_key_match() -> set:
    if sensitive is None:  # every column is a key: only uniqueness on the keys applies
        ctx.shared["sample_uniqueness"] = risk.sample_uniqueness(real, synth, keys, schema=ds.schema, seed=cfg.seed)
        return {"synthetic_uniques"}
    km, uq, su = measures.key_match_risk(key, real, synth, holdout, tuple(keys), sensitive, tol or None, stol,
                                         ds.schema, cfg.seed)
    ctx.shared.update(key_match=km, uniques=uq, sample_uniqueness=su)
    st.caption(f"{km.matched_share:.1%} of the records have at least one synthetic row sharing their keys; "
               + ("the guess is the most frequent value among those rows." if km.tolerance is None else
                  f"the guess is the mean of those rows, revealing when within {km.tolerance:.4g}.")
               + f" Records unique on the keys: {uq.n_unique:,}; reappearing in the synthetic data with their "
               f"sensitive value: {uq.reproduced:,}.")
    return {"synthetic_uniques"}  # drawn after the verdicts, beside its references


def after_key_match() -> None:
    su = ctx.shared["sample_uniqueness"]
    a, b, c = st.columns(3)
    a.metric("Real rows unique on the keys", f"{su.real_share:.3f}")
    b.metric("Synthetic rows unique on the keys", f"{su.synth_share:.3f}",
             help=core.METRICS["synthetic_uniques"].reading)
    c.metric("Random public-domain rows unique on the keys", f"{su.estimate.baseline:.3f}",
             help="The same share in random data of the synthetic size within the public domain.")


def draw_distance() -> set:
    dr = ctx.shared["distance"] = measures.distance_risk(key, real, synth, holdout, ds.schema, cfg.seed)
    if dr.measured is not None:
        also = f" and {min(len(holdout), dr.measured[0]):,} of the {len(holdout):,} held out" \
            if holdout is not None else ""
        st.caption(f"Measured on a random subsample of {dr.measured[0]:,} of the {dr.measured[1]:,} records the "
                   f"synthesizer saw{also}, each searched against all {len(synth):,} synthetic records; the "
                   "intervals are for that sample.")
    st.plotly_chart(core.plots.dcr_distributions_figure(dr.dcr_train, dr.dcr_holdout, dr.dcr_baseline),
                    key="dcr_chart")
    if dr.membership is not None:
        st.plotly_chart(core.plots.roc_figure(dr.membership), key="roc_chart")
    return set()


def draw_inference() -> set:
    try:
        ai = ctx.shared["inference"] = measures.attribute_inference(key, real, synth, holdout, tuple(keys),
                                                                    sensitive, ds.schema, cfg.seed)
    except core.DataError as err:  # e.g. the synthetic sensitive column has one known value: no model to score
        st.info(plain(str(err)))
        return {m.name for m in metrics("risk", "inference")}
    st.caption(plain(f"The intruder fits {ai.model} on the synthetic data to predict {sensitive} from "
                     f"{', '.join(keys)}, then applies it to the {ai.n:,} confidential records."))
    return set()  # one model answers accuracy or RMSE, as the column is categorical or numeric: the other has none


DRAW = {"matching": draw_matching, "key match": draw_key_match, "distance": draw_distance,
        "inference": draw_inference}
AFTER = {"matching": after_matching, "key match": after_key_match}
skip = {"formal", "key match" if linked else "matching"}  # a row-linked release is matched, a synthetic one not
for section in sections("risk"):
    members = metrics("risk", section)
    if section in skip or all(ctx.missing(m.needs) for m in members):
        continue
    st.subheader(section_title(section))
    drawn = DRAW.get(section, set)()
    for m in members:
        if m.name in drawn:
            continue
        if ctx.missing(m.needs):
            hint = ": tick the holdout box at the top." if "holdout" in ctx.missing(m.needs) else "."
            st.info(plain(m.explain(ctx, math.nan).rstrip(".") + hint))
        elif m.estimate is not None:
            est = m.estimated(ctx)
            if est is not None:
                show(est, fmt=m.value_format, note=sensitive if "sensitive" in m.needs else "")
        elif m.compute is not None:
            value = m.value(ctx)
            st.metric(m.label, "n/a" if math.isnan(value) else m.value_format.format(value), help=m.reading)
    AFTER.get(section, lambda: None)()

show_summary()
