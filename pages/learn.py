"""Learn: the ideas behind DP synthesis, one small demo per tab, computed by dpsynth_core.teaching."""

import math

import pandas as pd
import streamlit as st

import dpsynth_core as core
from ui import audit as audit_ui, errors
from ui.cache import bundled
from ui.text import plain

errors.start_page()

T, F, C = core.teaching, core.plots.teaching, core.constraints

st.title("Learn")
st.caption("Eight small demos driven by sliders. They use formulas, simulations and the bundled datasets, "
           "never your uploaded file.")

EPSILONS = C.LEARN_EPSILONS
PAGE = dict(persist_state="page")  # a hidden tab's widgets keep their values

# -- Each demo's state in the address bar, so a link opens the same demo at the same settings --------------
# The link's learn_* parameters are read once, when the page opens with them; each control takes its value
# from there if it is a valid one (dpsynth_core.teaching.link_value), else its default.
_link = {k: st.query_params[k] for k in st.query_params if k.startswith("learn_")}
if _link and st.session_state.get("learn_link_seen") != _link:
    st.session_state["learn_link_seen"] = _link
    st.session_state["learn_link"] = dict(_link)
LINK = st.session_state.setdefault("learn_link", {})
SHOWN: dict = {}  # the open demo's controls, key → how its value is written in the link


def linked(key: str, default, *, options=None, low=None, high=None, encode=str):
    """The first value of the control under ``key``: the link's, when it holds a valid one, else ``default``."""
    SHOWN[key] = encode
    text = LINK.pop(key, None)
    if text is None:
        return default
    if options is not None and encode is not str:  # options written by their code (a column as "name:col")
        options_by_code = {encode(o): o for o in options}
        return options_by_code.get(text, default)
    value = T.link_value(text, default, options=options, low=low, high=high)
    return default if value is None else value


def write_demo_link(demo: str) -> None:
    """The address bar: the open demo and its controls' values (never the session's data or settings)."""
    ss = st.session_state
    params = {"learn_demo": demo, **{k: str(ss[k]).lower() if isinstance(ss[k], bool) else enc(ss[k])
                                     for k, enc in SHOWN.items() if ss.get(k) is not None}}
    ss["learn_link_seen"] = params  # our own writing is not a new link to apply on the next run
    if {k: st.query_params[k] for k in st.query_params} != params:
        st.query_params.from_dict(params)


def eps_slider(key: str, default: float = 1.0, options=EPSILONS, label="Privacy budget ε (log scale)"):
    value = linked(key, default, options=list(options))
    return float(st.select_slider(label, options=options, value=value, key=key, **PAGE))


def slider(label, lo, hi, value, key, step=None, **kw):
    return st.slider(label, lo, hi, linked(key, value, low=lo, high=hi), step=step, key=key, **PAGE, **kw)


@st.cache_data(max_entries=32, show_spinner=False)
def bb_sweep(theta, n, epsilons, ms, seed):
    return T.beta_binomial_sweep(theta, n, epsilons, ms, seed=seed)


def ratio():
    st.markdown("ε-DP promises that **any** outcome is at most e^ε times more (or less) likely when your record is "
                "in the data than when it is not. Small ε keeps that ratio near 1: nobody can tell from the result "
                "whether you took part. At ε = 10 the ratio may reach 22,026, which promises very little.")
    eps = eps_slider("learn_ratio_eps")
    table = T.probability_ratio_table(sorted({*T.RATIO_TABLE_EPSILONS, eps}), percent=True)
    bound = table.loc[table["epsilon"] == eps, "exp_epsilon"].iloc[0]
    st.metric("e^ε, the bound on the probability ratio", f"{bound:,.2f}")
    # Percentages to three significant figures: at ε = 10 the lower bound is 0.0000454%, not 0%.
    pct = st.column_config.NumberColumn(format="%.3g%%")
    st.dataframe(table.set_axis(["ε", "e^ε", "1% outcome: at least", "1% outcome: at most"], axis=1), hide_index=True,
                 column_config={"e^ε": st.column_config.NumberColumn(format="%.2f"), "1% outcome: at least": pct,
                                "1% outcome: at most": pct})
    st.plotly_chart(F.exp_epsilon_figure(T.exp_epsilon_curve(C.EPSILON_MIN, max(10.0, eps)), eps))


def noise():
    st.markdown("To release a count privately we add random noise whose size depends only on ε (and δ), not on "
                "the data: one person changes a count by at most 1. The app uses the geometric mechanism, "
                "Laplace's integer twin; the Gaussian needs a δ > 0 and, in its classical form, ε < 1.")
    a, b = st.columns(2)
    with a:
        count = slider("True count", 0, 500, 50, "learn_noise_count")
        eps = eps_slider("learn_noise_eps", 0.5, EPSILONS[:10])
    with b:
        delta = float(st.select_slider("δ (Gaussian only)", C.LEARN_DELTAS,
                                       linked("learn_noise_delta", 1e-5, options=list(C.LEARN_DELTAS)),
                                       key="learn_noise_delta", format_func=lambda d: f"{d:.0e}", **PAGE))
        seed = st.number_input("Seed of the released answers", 0, C.LEARN_SEED_MAX,
                               linked("learn_noise_seed", 0, low=0, high=C.LEARN_SEED_MAX), key="learn_noise_seed",
                               **PAGE)
    r = T.count_noise(count, eps, delta=delta, seed=int(seed))
    m, d = st.columns(3), r["draws"]
    m[0].metric("Laplace scale b = 1/ε", f"{r['laplace_scale']:.4g}", help=f"sd = √2·b = {r['laplace_sd']:.4g}")
    m[1].metric("Geometric sd", f"{r['geometric_sd']:.4g}", help=f"α = e^−ε = {r['geometric_alpha']:.4g}")
    m[2].metric("Gaussian σ = √(2 ln(1.25/δ))/ε", f"{r['gaussian_sigma']:.4g}")
    st.caption(f"One release of the count {count}: geometric {d['geometric']}, Laplace {d['laplace']:.2f}, "
               f"Gaussian {d['gaussian']:.2f}.")
    if not r["gaussian_valid"]:
        st.warning("The classical Gaussian σ is proven only for ε < 1; at this ε it is shown for comparison only.")
    st.plotly_chart(F.count_noise_figure(r))


def composition():
    st.markdown("A histogram's bins hold **disjoint** records, so adding or removing one person changes one bin "
                "by 1: by *parallel* composition every bin may use the whole ε. Accounting for the bins as separate "
                "queries on the same people (*sequential* composition) leaves ε/bins each, and the noise grows "
                "with the number of bins.")
    a, b = st.columns(2)
    with a:
        columns = list(C.LEARN_COMPOSITION_COLUMNS)
        first = linked("learn_comp_column", columns[0], options=columns, encode=":".join)
        name, col = st.selectbox("Column of a bundled dataset", columns, index=columns.index(first),
                                 format_func=": ".join, key="learn_comp_column", **PAGE)
        bins = slider("Bins", 2, 40, 10, "learn_comp_bins")
    with b:
        eps = eps_slider("learn_comp_eps")
        mechs = ["geometric", "laplace"]
        mech = st.radio("Noise", mechs, index=mechs.index(linked("learn_comp_mech", "geometric", options=mechs)),
                        horizontal=True, key="learn_comp_mech", **PAGE)
    df, schema = bundled(name)
    lower, upper = schema.columns[col].bounds
    r = T.composition_demo(df[col], lower=lower, upper=upper, bins=bins, epsilon=eps, mechanism=mech, seed=0)
    s = r["summary"].set_index("way")
    m = st.columns(4)
    for i, way in enumerate(("parallel", "sequential")):
        m[2 * i].metric(f"{way}: ε per bin", f"{s.loc[way, 'epsilon_per_bin']:.4g}")
        m[2 * i + 1].metric(f"{way}: RMSE per bin", f"{s.loc[way, 'rmse_analytic']:.4g}",
                            help=f"simulated over 2,000 releases: {s.loc[way, 'rmse_simulated']:.4g}")
    st.dataframe(r["summary"].rename(columns=lambda c: c.replace("_", " ")), hide_index=True)
    st.caption("Variance of Laplace noise is 2b² with b = 1/ε per bin; of geometric noise 2α/(1 − α)², α = e^−ε.")
    st.plotly_chart(F.composition_figure(r))


def randomized_response():
    st.markdown("Each person flips a biased coin and tells the truth with probability p, the opposite otherwise, "
                "so no single answer gives anyone away (ε = ln(p/(1 − p))). Because we know p we can undo the "
                "lies on average: π̂ = (share of yes − (1 − p))/(2p − 1) is unbiased, but its error grows fast "
                "as p approaches ½.")
    a, b = st.columns(2)
    with a:
        n = slider("People asked", 10, 5000, 200, "learn_rr_n")
        share = slider("True share with the trait", 0.0, 1.0, 0.3, "learn_rr_share", step=0.01)
    p = b.slider("p, probability of telling the truth", 0.55, 1.0, linked("learn_rr_p", 0.75, low=0.55, high=1.0),
                 0.01, key="learn_rr_p", **PAGE)
    r = T.randomized_response_demo(n, share, p, seed=0)
    m = st.columns(4)
    m[0].metric("ε = ln(p/(1 − p))", "∞ (no privacy)" if math.isinf(r["epsilon"]) else f"{r['epsilon']:.3g}")
    m[1].metric("Mean of 4,000 estimates", f"{r['mean_estimate']:.4f}", help=f"true share {r['truth']:.4f}")
    m[2].metric("sd, simulated", f"{r['sd_simulated']:.4f}")
    m[3].metric("sd, formula √(p(1 − p)/n)/(2p − 1)", f"{r['sd_analytic']:.4f}")
    st.plotly_chart(F.randomized_response_figure(r))


def exponential():
    st.markdown("The exponential mechanism releases an output r with probability ∝ exp(ε·q(r)/(2Δq)): outputs "
                "that score well are likely, the others still possible. Here the data are n yes/no records with "
                "x yes and r is a released count; which score we choose changes how close, and how plausible "
                "under the Beta posterior, the released r tends to be.")
    a, b, c = st.columns(3)
    with a:
        n = slider("Records n", 1, 100, 20, "learn_em_n")
        if st.session_state.get("learn_em_x", 0) > n:
            st.session_state["learn_em_x"] = n
        x = slider("Ones x", 0, n, min(7, n), "learn_em_x")
    with b:
        eps = eps_slider("learn_em_eps")
        factor = st.radio("Factor in exp(εq/(factor·Δq))", [2.0, 1.0],
                          index=[2.0, 1.0].index(linked("learn_em_factor", 2.0, options=[2.0, 1.0])),
                          horizontal=True, key="learn_em_factor", **PAGE)
    with c:
        g1 = slider("Prior γ₁", 0.1, 10.0, 1.0, "learn_em_g1", step=0.1)
        g2 = slider("Prior γ₂", 0.1, 10.0, 1.0, "learn_em_g2", step=0.1)
        actual = st.checkbox("Use each score's true sensitivity (not 1)", value=linked("learn_em_actual", False),
                             key="learn_em_actual")
    summary, dists = T.exponential_binary_table(n, x, eps, gamma=(g1, g2), factor=factor, actual_sensitivity=actual)
    st.dataframe(summary.drop(columns="score").rename(columns={
        "label": "score", "sensitivity": "Δq used", "true_sensitivity": "true Δq (n fixed)", "mode": "most probable r",
        "mode_probability": "P(most probable r)",
        "expected": "expected r", "expected_distance": "expected |r − x|",
        "expected_posterior": "expected P(r | x)"}), hide_index=True)
    st.caption("P(r | x) = C(n, r) B(r + γ₁ + x, n − r + γ₂ + n − x)/B(γ₁ + x, γ₂ + n − x): the Beta-binomial "
               "posterior predictive of r ones in n new records. Only with Δq at least the true sensitivity is the "
               "release ε-DP; the log score's can be well above 1.")
    st.plotly_chart(F.exponential_figure(dists, x))


def beta_binomial():
    st.markdown("This synthesizer draws θ̃ from a Beta(x + α, n − x + α) posterior and then ñ synthetic yes/no "
                "records; it is ε-DP when α ≥ ñ/(e^ε − 1), and m implicates get ε/m each. That large prior pulls "
                "the synthetic share toward ½, and the usual combining rules know nothing of it, so their "
                "intervals miss the truth far more often than they claim when ε is small.")
    a, b = st.columns(2)
    with a:
        theta = slider("True share θ", 0.0, 1.0, 0.3, "learn_bb_theta", step=0.01)
        n = slider("Records n (= ñ synthetic)", 20, 5000, 500, "learn_bb_n", step=10)
    with b:
        eps = eps_slider("learn_bb_eps", 1.0, EPSILONS[3:])
        m = slider("Implicates m", 1, 20, 3, "learn_bb_m")
    by_eps = bb_sweep(theta, n, tuple(C.EPSILON_STEPS[10:]), (m,), 0)
    by_m = bb_sweep(theta, n, (eps,), tuple(range(1, 21)), 1)
    row = by_m[by_m["m"] == m].iloc[0]
    cols = st.columns(5)
    cols[0].metric("α per implicate", f"{row['alpha']:.4g}")
    cols[1].metric("Bias of the synthetic share", f"{row['bias_analytic']:+.4f}",
                   help=f"simulated: {row['bias_simulated']:+.4f}")
    for col, (rule, label) in zip(cols[2:], T.COMBINING_RULES.items()):
        v = row[f"coverage_{rule}"]
        col.metric(f"Coverage, {rule} rule", "needs m ≥ 2" if pd.isna(v) else f"{v:.1%}", help=label)
    st.caption("2,000 simulated releases per point; nominal coverage 95%.")
    st.plotly_chart(F.beta_binomial_figure(by_eps, by="epsilon", current=eps))
    st.plotly_chart(F.beta_binomial_figure(by_m, by="m", current=m))


def sequential():
    st.markdown("Sequential synthesis builds each column from a model of the columns before it. If we keep only "
                "the model's predictions, every penguin of the same sex gets the same bill length: the spread "
                "collapses and the next column inherits a perfect, false correlation. Adding the residual noise "
                "back restores both. (Not DP: the models are fitted on the real data without noise.)")
    a, b = st.columns([3, 1])
    steps = list(T.SEQUENTIAL_STEPS)
    step = a.select_slider("Step", steps, linked("learn_seq_step", 4, options=steps),
                           format_func=T.SEQUENTIAL_STEPS.get, key="learn_seq_step", **PAGE)
    seed = b.number_input("Seed", 0, C.LEARN_SEED_MAX, linked("learn_seq_seed", 0, low=0, high=C.LEARN_SEED_MAX),
                          key="learn_seq_seed", **PAGE)
    r = T.sequential_synthesis_demo(bundled("penguins")[0], seed=int(seed))
    s = r["summary"]
    for col, who, label in zip(st.columns(3), ("real", "bare", "noisy"),
                               ("sd of bill length, real", "…bare predictions", "…with residual noise")):
        col.metric(label, f"{s.iloc[2][who]:.3g}")
    st.dataframe(s.head(T.SEQUENTIAL_SUMMARY_ROWS[step]).drop(columns=["noisy"] if step == 2 else []),
                 hide_index=True)
    st.plotly_chart(F.sequential_synthesis_figure(r, step))
    with st.expander("Fitted models"):
        st.dataframe(r["models"], hide_index=True)


def audit():
    st.markdown("Does a synthesizer keep its promise? Run it many times on a small public table D and on D′, the "
                "same table plus one planted record, and count how often an event happens on each (say, \"at "
                "least 40 synthetic rows with a = a2 and b = b2\"). ε-DP lets the two frequencies differ by a "
                "factor e^ε at most, so the 95 % Clopper–Pearson lower bound on their log ratio is evidence: "
                "above the claim, the method leaks more than it says. The same audit of a broken variant, with a "
                "tenth of the noise, shows that it could catch such an error.")
    A = core.privacy.audit
    methods = [m for m, s in core.SYNTHESIZERS.items() if s.is_dp and A.declared_audits(m)]
    a, b, c = st.columns(3)
    method = a.selectbox("Method", methods, index=methods.index(linked("learn_audit_method", "mst", options=methods)),
                         format_func=lambda m: core.SYNTHESIZERS[m].label, key="learn_audit_method", **PAGE)
    synth, design = core.SYNTHESIZERS[method], A.declared_audits(method)[0]
    eps = None
    if synth.spends.kind != core.privacy.NONE:  # the uniform baseline claims 0
        per = f" per {synth.spends.unit.format(**synth.defaults)}" if synth.spends.kind == core.privacy.PER_RECORD \
            else ""
        with b:
            eps = eps_slider(f"learn_audit_eps_{method}", design.epsilon, label=f"Claimed ε{per}")
    choices = audit_ui.runs_choices(method)
    runs = c.select_slider("Runs on each table", choices, linked(f"learn_audit_runs_{method}", design.quick_runs,
                                                                  options=choices),
                           key=f"learn_audit_runs_{method}", format_func=lambda r: f"{r:,}", **PAGE)
    st.caption(plain(design.note))
    audit_ui.audit_section("learn_audit", method, runs=runs, epsilon=eps)


DEMOS = {"e^ε": ratio, "Noise on a count": noise, "Composition": composition,
         "Randomized response": randomized_response, "Exponential mechanism": exponential,
         "Beta–binomial synthesizer": beta_binomial, "Sequential synthesis": sequential, "Privacy audit": audit}
SLUGS = {label: demo.__name__ for label, demo in DEMOS.items()}  # a demo's name in the link
wanted = LINK.pop("learn_demo", None)
asked = next((label for label, slug in SLUGS.items() if slug == wanted), None)
if asked is not None:
    st.session_state["learn_tab"] = asked  # the link's demo opens
# Only the open tab runs, so a slider move costs one demo, not eight.
for (label, demo), tab in zip(DEMOS.items(), st.tabs(list(DEMOS), key="learn_tab", on_change="rerun")):
    if tab.open:
        with tab:
            demo()
        write_demo_link(SLUGS[label])
