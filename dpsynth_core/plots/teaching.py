"""Figures of the Learn page: each takes a result of :mod:`dpsynth_core.teaching` and returns a figure."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..teaching import COMBINING_RULES, SCORES
from .base import METHOD_COLOURS, REAL_COLOUR, SYNTH_COLOUR, _layout, esc

TRUE_COLOUR = "black"
RULE_COLOURS = dict(zip(COMBINING_RULES, METHOD_COLOURS[1:]))
SCORE_COLOURS = dict(zip(SCORES, METHOD_COLOURS))


def exp_epsilon_figure(curve: pd.DataFrame, epsilon: float) -> go.Figure:
    """e^ε against ε (log axes), with the chosen ε marked."""
    fig = go.Figure([
        go.Scatter(x=curve["epsilon"], y=curve["exp_epsilon"], mode="lines", name="e^ε",
                   line_color=REAL_COLOUR, hovertemplate="ε = %{x:.3g}<br>e^ε = %{y:,.4g}<extra></extra>"),
        go.Scatter(x=[epsilon], y=[np.exp(epsilon)], mode="markers+text", name=f"ε = {epsilon:g}",
                   marker=dict(size=12, color=SYNTH_COLOUR), text=[f"e^{epsilon:g} = {np.exp(epsilon):,.4g}"],
                   textposition="top left"),
    ])
    # Ticks at powers of ten only (every k-th, for at most ~8): plotly's default labels 2 and 5 between
    # them as well, which crowds the axis and reads like a linear one.
    for axis, values in ((fig.update_xaxes, curve["epsilon"]), (fig.update_yaxes, curve["exp_epsilon"])):
        decades = np.log10(values.max()) - np.log10(values.min())
        axis(type="log", dtick=max(1, int(np.ceil(decades / 8))))
    return _layout(fig, "How much one record can change any outcome's probability",
                   "ε (log scale)", "bound on the probability ratio e^ε (log scale)")


def count_noise_figure(result: dict) -> go.Figure:
    """Laplace and Gaussian densities and the geometric pmf of the noisy count, with the true count."""
    grid, pmf, c = result["grid"], result["pmf"], result["true_count"]
    fig = go.Figure([
        go.Bar(x=pmf["answer"], y=pmf["geometric_pmf"], name="geometric (exact pmf, used for counts)",
               marker_color=SYNTH_COLOUR, opacity=0.55,
               hovertemplate="answer %{x}<br>P = %{y:.4f}<extra></extra>"),
        go.Scatter(x=grid["x"], y=grid["laplace_pdf"], mode="lines", name=f"Laplace, b = {result['laplace_scale']:.3g}",
                   line=dict(color=REAL_COLOUR, width=2)),
        go.Scatter(x=grid["x"], y=grid["gaussian_pdf"], mode="lines",
                   name=f"Gaussian, σ = {result['gaussian_sigma']:.3g}", line=dict(color=METHOD_COLOURS[1], width=2)),
    ])
    fig.add_vline(x=c, line=dict(color=TRUE_COLOUR, dash="dash"), annotation_text=f"true count {c}")
    fig.update_layout(bargap=0)
    return _layout(fig, "Where the released answer can land", "released answer", "probability (density)")


def composition_figure(result: dict) -> go.Figure:
    """True and noisy bin counts (top) and each way's error with ±2 sd bands (bottom)."""
    t = result["bins"]
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08, row_heights=[0.55, 0.45],
                        subplot_titles=("counts: true and one release each way", "error of that release (noisy − true)"))
    fig.add_trace(go.Bar(x=t["label"], y=t["count"], name="true count", marker_color="#7f7f7f"), 1, 1)
    for way, colour in (("parallel", REAL_COLOUR), ("sequential", SYNTH_COLOUR)):
        fig.add_trace(go.Bar(x=t["label"], y=t[way], name=way, marker_color=colour), 1, 1)
        fig.add_trace(go.Scatter(
            x=t["label"], y=t[way] - t["count"], mode="markers", marker=dict(color=colour, size=9),
            error_y=dict(type="data", array=2 * t[f"sd_{way}"], color=colour, thickness=1),
            name=f"{way}: error ± 2 sd", showlegend=True,
            hovertemplate="%{x}<br>error %{y:.3g}<extra></extra>"), 2, 1)
    fig.add_hline(y=0, line=dict(color=TRUE_COLOUR, width=1), row=2, col=1)
    fig.update_layout(barmode="group", height=560)
    fig.update_xaxes(type="category")
    _layout(fig, "The same ε, two ways of accounting for it", "", "")
    return fig.update_xaxes(title_text="bin", row=2, col=1)


def randomized_response_figure(result: dict) -> go.Figure:
    """Left: sd of the estimate against p. Right: the simulated estimates at the chosen p."""
    curve = result["curve"]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("error (sd) of the estimate as p varies",
                                                        "estimates from repeated surveys at this p"))
    fig.add_trace(go.Scatter(
        x=curve["p"], y=curve["sd"], mode="lines", name="sd (formula)", line_color=REAL_COLOUR,
        customdata=curve["epsilon"], hovertemplate="p = %{x:.2f}<br>ε = %{customdata:.3g}<br>sd = %{y:.4f}<extra></extra>"),
        1, 1)
    p = result["p"]
    fig.add_trace(go.Scatter(x=[p], y=[result["sd_simulated"]], mode="markers", name="sd (simulated)",
                             marker=dict(size=12, color=SYNTH_COLOUR)), 1, 1)
    fig.add_trace(go.Histogram(x=result["estimates"], nbinsx=40, name="estimates", marker_color=SYNTH_COLOUR,
                               opacity=0.7, showlegend=False), 1, 2)
    fig.add_vline(x=result["truth"], line=dict(color=TRUE_COLOUR, dash="dash"), row=1, col=2,
                  annotation_text="true share")
    fig.update_xaxes(title_text="p, probability of answering truthfully", row=1, col=1)
    fig.update_xaxes(title_text="estimated share", row=1, col=2)
    fig.update_yaxes(title_text="sd of the estimate", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(title_text="surveys", row=1, col=2)
    return _layout(fig, "Randomized response: truth with probability p", "", "")


def exponential_figure(distributions: pd.DataFrame, x: int) -> go.Figure:
    """Sampling distribution of r under each score, with the true count x marked."""
    fig = go.Figure()
    for score, part in distributions.groupby("score", sort=False):
        fig.add_trace(go.Scatter(x=part["r"], y=part["probability"], mode="lines+markers", name=SCORES[score],
                                 line=dict(color=SCORE_COLOURS[score], shape="hvh"), marker=dict(size=5),
                                 hovertemplate="r = %{x}<br>P = %{y:.4f}<extra></extra>"))
    pp = distributions[distributions["score"] == next(iter(SCORES))]
    fig.add_trace(go.Scatter(x=pp["r"], y=pp["posterior_predictive"], mode="lines", name="posterior predictive P(r | x)",
                             line=dict(color="#7f7f7f", dash="dot")))
    fig.add_vline(x=x, line=dict(color=TRUE_COLOUR, dash="dash"), annotation_text=f"x = {x}")
    return _layout(fig, "Exponential mechanism: probability of releasing r", "released count of ones r",
                   "probability")


def beta_binomial_figure(sweep: pd.DataFrame, *, by: str = "epsilon", level: float = 0.95,
                         current: float | None = None) -> go.Figure:
    """Coverage of each combining rule's interval (left) and the estimate's bias (right), along ε or m.

    ``current`` (the ε or m the sliders are at) is marked by a dotted vertical line on both panels.
    """
    s = sweep.sort_values(by)
    xlabel = "total ε (log scale)" if by == "epsilon" else "implicates m"
    fig = make_subplots(rows=1, cols=2, subplot_titles=(f"coverage of nominal {level:.0%} intervals",
                                                        "bias of the synthetic estimate"))
    for rule, label in COMBINING_RULES.items():
        fig.add_trace(go.Scatter(x=s[by], y=s[f"coverage_{rule}"], mode="lines+markers", name=label,
                                 line_color=RULE_COLOURS[rule], connectgaps=False,
                                 hovertemplate="%{x:.3g}: coverage %{y:.1%}<extra></extra>"), 1, 1)
    fig.add_hline(y=level, line=dict(color=TRUE_COLOUR, dash="dash"), row=1, col=1, annotation_text="nominal")
    fig.add_trace(go.Scatter(x=s[by], y=s["bias_analytic"], mode="lines", name="bias α(1 − 2θ)/(n + 2α)",
                             line_color=REAL_COLOUR), 1, 2)
    fig.add_trace(go.Scatter(x=s[by], y=s["bias_simulated"], mode="markers", name="bias, simulated",
                             marker=dict(color=SYNTH_COLOUR, size=7)), 1, 2)
    fig.add_hline(y=0, line=dict(color=TRUE_COLOUR, width=1), row=1, col=2)
    if by == "epsilon":
        fig.update_xaxes(type="log")
    fig.update_xaxes(title_text=xlabel)
    fig.update_yaxes(range=[-0.02, 1.02], tickformat=".0%", row=1, col=1)
    if current is not None:
        for col in (1, 2):
            fig.add_vline(x=current, line=dict(color="black", dash="dot", width=1), row=1, col=col)
        # Written by hand: on a log axis an annotation's x is log10 of the value (a shape's is the value).
        fig.add_annotation(x=math.log10(current) if by == "epsilon" else current, xref="x", y=0.5, yref="y domain",
                           text=f"{'ε' if by == 'epsilon' else 'm'} = {current:g}", showarrow=False, xanchor="left",
                           bgcolor="rgba(255,255,255,0.8)")
    _layout(fig, f"Beta–binomial synthesizer along {'ε' if by == 'epsilon' else 'm'}", "", "")
    fig.update_layout(legend=dict(y=1.14), margin=dict(t=120))  # clear of the panel titles
    return fig


def sequential_synthesis_figure(result: dict, step: int) -> go.Figure:
    """What each step of the sequential synthesis produces, real data in blue."""
    real, bare, noisy = result["real"], result["bare"], result["noisy"]
    cat, first, second = real.columns
    grey = "#7f7f7f"
    if step == 1:
        levels = result["levels"]
        shares = [[float((d[cat] == lv).mean()) for lv in levels] for d in (real, noisy)]
        fig = go.Figure([go.Bar(x=[esc(v) for v in levels], y=shares[0], name="real", marker_color=REAL_COLOUR),
                         go.Bar(x=[esc(v) for v in levels], y=shares[1], name="synthetic", marker_color=SYNTH_COLOUR)])
        return _layout(fig, f"Step 1: {esc(cat)} drawn from its proportions", esc(cat), "share of rows")
    if step in (2, 3):
        fig = go.Figure([go.Histogram(x=real[first], name="real", marker_color=REAL_COLOUR, opacity=0.6, nbinsx=40),
                         go.Histogram(x=bare[first], name="bare predictions", marker_color=grey, opacity=0.6,
                                      nbinsx=40)])
        if step == 3:
            fig.add_trace(go.Histogram(x=noisy[first], name="predictions + residual noise",
                                       marker_color=SYNTH_COLOUR, opacity=0.6, nbinsx=40))
        fig.update_layout(barmode="overlay")
        return _layout(fig, f"Step {step}: {esc(first)} from a regression on {esc(cat)}", esc(first), "rows")
    # The bare predictions are drawn last: they are only two points, one per category.
    fig = go.Figure([
        go.Scatter(x=real[first], y=real[second], mode="markers", name="real", marker=dict(color=REAL_COLOUR, size=5)),
        go.Scatter(x=noisy[first], y=noisy[second], mode="markers", name="with residual noise",
                   marker=dict(color=SYNTH_COLOUR, size=5, opacity=0.7)),
        go.Scatter(x=bare[first], y=bare[second], mode="markers", name="bare predictions (all rows)",
                   marker=dict(color=TRUE_COLOUR, size=16, symbol="x")),
    ])
    return _layout(fig, f"Step 4: {esc(second)} from a regression on {esc(cat)} and {esc(first)}",
                   esc(first), esc(second))
