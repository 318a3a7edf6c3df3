"""Plotly figures: each takes data computed elsewhere in the core and returns a figure.

Plotly renders a subset of HTML in titles, tick labels and hover text, so
every piece of user text (column names, category values, file names) goes
through :func:`esc` first and is shown literally.
"""

from __future__ import annotations

import html
import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

from ..metric_info import METRICS
from ..frontier import capped_points, summarise
from ..rumap import NO_EPSILON

REAL_COLOUR = "#1f77b4"
SYNTH_COLOUR = "#ff7f0e"
METHOD_COLOURS = ["#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"]

# Every figure's look, as plotly's default: a figure starts with its default template, and naming another
# in update_layout validated a deep copy of it, 0.13 s a figure on a busy server (the Compare page draws
# eight). The figures are the same.
pio.templates.default = "plotly_white"


def esc(text: object) -> str:
    """User text made literal for plotly's HTML-like labels."""
    return html.escape(str(text), quote=True)


def _layout(fig: go.Figure, title: str, x: str, y: str) -> go.Figure:
    # The legend sits in a row above the plot, under the title: below it, it ran into the x axis's title
    # and its tick labels (slanted bin labels reach far down).
    fig.update_layout(title=dict(text=title, y=0.98, yanchor="top"), xaxis_title=x, yaxis_title=y,
                      margin=dict(l=50, r=20, t=90, b=50),
                      legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0))
    return fig


def histogram_figure(hist: pd.DataFrame, column: str) -> go.Figure:
    """Real and synthetic shares side by side in the shared bins of :func:`histogram_data`."""
    labels = [esc(b) for b in hist["bin"]]
    fig = go.Figure([
        go.Bar(x=labels, y=hist["real_share"], name="real", marker_color=REAL_COLOUR,
               hovertemplate="%{x}<br>real: %{y:.3f}<extra></extra>"),
        go.Bar(x=labels, y=hist["synth_share"], name="synthetic", marker_color=SYNTH_COLOUR,
               hovertemplate="%{x}<br>synthetic: %{y:.3f}<extra></extra>"),
    ])
    fig.update_layout(barmode="group", bargap=0.1)
    # Bin labels ("[2500, 2900)") slant when there are many; automargin keeps them inside the figure.
    fig.update_xaxes(type="category", automargin=True, tickangle=-45 if len(labels) > 8 else 0)
    return _layout(fig, f"Distribution of {esc(column)}", esc(column), "share of rows")


ECDF_LEVELS = 2000  # a drawn ECDF is within 1/2000 of its height everywhere: under a pixel


def step_points(f: np.ndarray, levels: int = ECDF_LEVELS) -> np.ndarray:
    """Indices of the points a step line (``line_shape="hv"``) through ``f`` needs.

    ``f`` is non-decreasing, one value per sorted x. A point where ``f`` does not rise draws nothing and
    is dropped. If more than ``levels`` rises remain, the first point at or above each multiple of
    1/levels is kept (each is a true point of the curve), with the first and the last: between two kept
    points the curve rises by less than 1/levels, so the line drawn is never further than that from it.

    >>> step_points(np.array([0.25, 0.25, 0.5, 1.0, 1.0])).tolist()
    [0, 2, 3, 4]
    """
    rises = np.flatnonzero(np.diff(f) > 0) + 1
    if len(rises) > levels:
        # 1e-12: a level k/levels and a share count/n that are equal can differ in the last bit.
        rises = np.searchsorted(f, np.arange(1, levels + 1) / levels - 1e-12, side="left")
    return np.unique(np.concatenate([[0], rises[rises < len(f)], [len(f) - 1]]))


def ecdf_figure(ecdf, column: str) -> go.Figure:
    """Both ECDFs as step lines, with the KS distance marked where it is reached.

    A curve with more than :data:`ECDF_LEVELS` steps (a continuous column of a large table) is drawn
    through the subset :func:`step_points` keeps, and the title says so; the KS distance uses them all.
    """
    t = ecdf.table
    x, thinned, traces = t["x"].to_numpy(), False, []
    for column_name, label, colour in (("real", "real", REAL_COLOUR), ("synth", "synthetic", SYNTH_COLOUR)):
        f = t[column_name].to_numpy()
        keep = step_points(f)
        thinned |= np.count_nonzero(np.diff(f) > 0) > ECDF_LEVELS  # step_points kept a subset of the rises
        traces.append(go.Scatter(x=x[keep], y=f[keep], name=label, mode="lines", line_shape="hv",
                                 line_color=colour))
    traces.append(go.Scatter(x=[ecdf.x_at_max, ecdf.x_at_max], y=[ecdf.real_at_max, ecdf.synth_at_max],
                             name=f"KS distance {ecdf.ks:.3f}", mode="lines+markers",
                             line=dict(color="black", dash="dot")))
    title = f"ECDF of {esc(column)} (KS = {ecdf.ks:.3f})"
    if thinned:
        title += f"<br><sup>drawn to within {100 / ECDF_LEVELS:g}% of the height</sup>"
    return _layout(go.Figure(traces), title, esc(column), "cumulative share")


def ci_forest_figure(table: pd.DataFrame) -> go.Figure:
    """Each coefficient's synthetic interval against its real one, on one axis scaled by the real interval.

    A coefficient's size depends on its predictor's units (an intercept of 13 beside a slope of 0.02 per
    millimetre), so on a raw shared axis the small ones shrink to a dot, and one axis per coefficient scatters
    the labels. Here every value v of a coefficient is drawn at (v − real estimate) / (real half-width): the
    real interval is always −1 to 1 (shaded), and the synthetic one shows how far it moved and how wide it is,
    in units of the real interval; a dotted mark shows where β = 0 falls. The raw values are in the hover.
    A coefficient without a real interval is left out (the table shows it).
    """
    rows = table.iloc[::-1]  # the intercept on top
    half = ((rows["hi_real"] - rows["lo_real"]) / 2).to_numpy(dtype=float)
    ok = np.isfinite(half) & (half > 0)
    rows, half = rows[ok], half[ok]
    est_real = rows["est_real"].to_numpy(dtype=float)
    terms = [esc(t) for t in rows["term"]]

    def scaled(values) -> np.ndarray:
        return (np.asarray(values, dtype=float) - est_real) / half

    fig = go.Figure()
    fig.add_vrect(x0=-1, x1=1, fillcolor=REAL_COLOUR, opacity=0.08, line_width=0)
    for who, colour, shift, name in (("real", REAL_COLOUR, 0.15, "real"), ("synth", SYNTH_COLOUR, -0.15, "synthetic")):
        est, lo, hi = (rows[f"{p}_{who}"].to_numpy(dtype=float) for p in ("est", "lo", "hi"))
        x, x_lo, x_hi = scaled(est), scaled(lo), scaled(hi)
        raw = [f"{t}, {name}: {e:.4g} [{a:.4g}, {b:.4g}]" for t, e, a, b in zip(terms, est, lo, hi)]
        fig.add_trace(go.Scatter(
            x=x, y=np.arange(len(terms)) + shift, mode="markers", name=name, marker=dict(color=colour, size=8),
            error_x=dict(type="data", symmetric=False, array=x_hi - x, arrayminus=x - x_lo, color=colour),
            customdata=raw, hovertemplate="%{customdata}<extra></extra>"))
    fig.add_trace(go.Scatter(x=scaled(np.zeros(len(terms))), y=np.arange(len(terms)), mode="markers", name="β = 0",
                             marker=dict(symbol="line-ns-open", size=14, color="#888888"),
                             hovertemplate="β = 0 falls here<extra></extra>"))
    fig.update_yaxes(tickvals=list(range(len(terms))), ticktext=terms, range=[-0.6, len(terms) - 0.4],
                     showgrid=False)
    fig.update_xaxes(zeroline=True, zerolinecolor="#bbbbbb")
    fig.update_layout(height=max(260, 42 * len(terms) + 160))
    _layout(fig, "Confidence intervals, synthetic against real (real interval = −1 to 1, shaded)",
            "distance from the real estimate, in real half-widths", "")
    return fig


def _axis_reversed(metric: str) -> bool:
    # Put "better" up and "less risky" left whatever the measure's direction.
    info = METRICS.get(metric)
    if info is None:
        return False
    if info.kind == "utility":
        return info.goal != "maximize"
    return info.goal == "maximize"


def _end_labels(epsilons: pd.Series) -> list[str]:
    """ε text at the two ends of a method's line only; the points between say theirs on hover.

    A method without ε (not DP) gets no text beside its point: its legend entry and hover say "not DP",
    and such points sit by the reference stars, whose labels a third label would cover.
    """
    eps = list(epsilons)
    return [(f"ε={e:g}" if i in (0, len(eps) - 1) else "") if not math.isnan(e) else "" for i, e in enumerate(eps)]


# Label positions taken in turn by the methods, so two lines ending near each other do not stack labels.
# (The reference stars take "top left" and "bottom left".)
_TEXT_POSITIONS = ["top right", "bottom right", "middle right", "top center", "bottom center", "middle left"]


def ru_figure(points: pd.DataFrame, x: str, y: str, *, answer: dict | None = None) -> go.Figure:
    """Risk (x) against utility (y): one line per method through its ε sweep.

    Means over replicates are drawn with error bars of ±1 standard deviation;
    reference points (original data, bootstrap) are drawn as stars. Each
    marker's ``customdata`` is ``[method, epsilon, seed]`` of one replicate
    (the first), so a selection can load that synthesis. Only the ends of a
    line carry their ε as text (the rest on hover), each method's labels on
    its own side. ``answer`` (from :func:`dpsynth_core.frontier.smallest_epsilon`,
    with its ``epsilon``, ``risk`` and ``utility``) is ringed and labelled.
    """
    summary = summarise(points, x, y)
    xl = METRICS[x].label if x in METRICS else x
    yl = METRICS[y].label if y in METRICS else y
    ceiling = capped_points(points, y)
    fig, lines = go.Figure(), 0
    for i, (method, part) in enumerate(summary.groupby("method", sort=False)):
        part = part.sort_values("epsilon")
        ref = bool(part["reference"].iloc[0]) or method == "original"
        lines += 0 if ref else 1
        eps_text = [("ε = " + f"{e:g}") if not math.isnan(e) else "not DP" for e in part["epsilon"]]
        capped = [ceiling.get((method, e)) for e in part["epsilon"]]  # hollow: the ratio could not read poor
        name = esc(part["label"].iloc[0]) + ("" if part["is_dp"].all() else " (not DP)")
        fig.add_trace(go.Scatter(
            x=part["x"], y=part["y"], name=name,
            mode="markers+text" if ref else "lines+markers+text",
            text=[esc(part["label"].iloc[0])] * len(part) if ref else _end_labels(part["epsilon"]),
            # References sit at the risky edge (the original data is the riskiest release): label inwards.
            textposition=("top left" if method == "original" else "bottom left") if ref
            else _TEXT_POSITIONS[lines % len(_TEXT_POSITIONS)], cliponaxis=False,
            marker=dict(size=14 if ref else 9,
                        symbol="star" if ref else ["circle-open" if c is not None else "circle" for c in capped],
                        color="black" if method == "original" else METHOD_COLOURS[i % len(METHOD_COLOURS)]),
            error_x=dict(type="data", array=part["x_sd"].fillna(0), visible=bool(part["reps"].max() > 1)),
            error_y=dict(type="data", array=part["y_sd"].fillna(0), visible=bool(part["reps"].max() > 1)),
            customdata=np.stack([part["method"], part["epsilon"].fillna(NO_EPSILON), part["seed"]], axis=1),
            hovertext=[f"{name}<br>{t}<br>{esc(xl)} = {a:.4g}<br>{esc(yl)} = {b:.4g}"
                       + (f"<br>(on so few rows it could not exceed {c:.3g})" if c is not None else "")
                       for t, a, b, c in zip(eps_text, part["x"], part["y"], capped)],
            hoverinfo="text",
        ))
    front = summary[summary["pareto"]].sort_values("x")
    if len(front) > 1:
        fig.add_trace(go.Scatter(x=front["x"], y=front["y"], name="Pareto frontier", mode="lines",
                                 line=dict(color="grey", dash="dash", width=1), hoverinfo="skip"))
    if answer is not None and answer.get("epsilon") is not None:
        fig.add_trace(go.Scatter(
            x=[answer["risk"]], y=[answer["utility"]], name=f"answer: smallest ε = {answer['epsilon']:g}",
            mode="markers", marker=dict(size=22, symbol="circle-open", color="black", line=dict(width=3)),
            hoverinfo="skip"))
        fig.add_annotation(x=answer["risk"], y=answer["utility"], text=f"smallest ε = {answer['epsilon']:g}",
                           showarrow=True, arrowhead=2, ax=40, ay=-40, bgcolor="white", bordercolor="black")
    _layout(fig, "Risk–utility map", f"{esc(xl)} (risk)", f"{esc(yl)} (utility)")
    if _axis_reversed(x):
        fig.update_xaxes(autorange="reversed")
    if _axis_reversed(y):
        fig.update_yaxes(autorange="reversed")
    # A sweep's legend (methods, references, the frontier, the answer) runs to three rows and more; placed from
    # the plot's top edge upwards, as _layout places it, it covered the title (issue 31.10). Hung under the title
    # in the figure's own coordinates instead, it pushes the plot down however many rows it takes.
    fig.update_layout(height=560, clickmode="event+select", margin=dict(t=60),
                      legend=dict(yref="container", y=0.93, yanchor="top"))
    return fig


def dcr_figure(dcr) -> go.Figure:
    """Histogram of each real record's Gower distance to its closest synthetic row."""
    fig = go.Figure(go.Histogram(x=np.asarray(dcr), nbinsx=40, marker_color=SYNTH_COLOUR,
                                 hovertemplate="distance %{x}<br>%{y} records<extra></extra>"))
    return _layout(fig, "Distance to the closest synthetic record", "Gower distance (0 = exact copy)",
                   "confidential records")


PNG_UNAVAILABLE = ("PNG export needs Chromium on the server; use the camera button in the chart's toolbar to save "
                   "the image from your browser instead.")


def png_unavailable() -> str | None:
    """:data:`PNG_UNAVAILABLE` when :func:`figure_png` cannot work here (kaleido, or a Chromium for it to drive,
    is missing), so a page offers the other way before a click fails; None when it can, or cannot tell."""
    try:
        import kaleido  # noqa: F401
        from choreographer.browsers.chromium import Chromium
    except ImportError:
        return PNG_UNAVAILABLE
    try:
        return None if Chromium.find_browser(skip_local=False) else PNG_UNAVAILABLE
    except Exception:  # noqa: BLE001 - the finder's own trouble: let figure_png try and say
        return None


def figure_png(fig: go.Figure, *, scale: float = 2.0) -> bytes:
    """The figure as a PNG (kaleido drives the machine's Chromium); RuntimeError with a sentence if it cannot."""
    try:
        return fig.to_image(format="png", scale=scale)
    except Exception as err:  # kaleido missing, or no Chromium to drive
        raise RuntimeError(PNG_UNAVAILABLE) from err
