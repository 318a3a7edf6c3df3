"""Figures of the Compare page: each takes results of :mod:`dpsynth_core.utility` and returns a figure.

User text (column names, levels, design terms) goes through :func:`esc`
before it reaches a title, tick label or hover text.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .base import REAL_COLOUR, SYNTH_COLOUR, _layout, esc

__all__ = ["correlation_difference_figure", "histogram_grid_figure", "importance_figure", "missing_figure",
           "propensity_roc_figure", "propensity_scores_figure"]


def histogram_grid_figure(hists: dict[str, pd.DataFrame], *, columns: int = 3) -> go.Figure:
    """Small multiples: one panel of real and synthetic shares per column (from :func:`histogram_data`).

    Numeric bins are drawn on a value axis; their "(missing)" row is left to
    :func:`missing_figure`, which shows missing shares for every column.
    """
    names = list(hists)
    rows = max(1, math.ceil(len(names) / columns))
    height = max(320, 230 * rows + 60)
    # 60 px between rows whatever their number: room for the axis labels and the next title, no more.
    fig = make_subplots(rows=rows, cols=columns, subplot_titles=[esc(n) for n in names],
                        vertical_spacing=min(0.3, 60 / height), horizontal_spacing=0.06)
    for i, name in enumerate(names):
        h = hists[name]
        r, c = i // columns + 1, i % columns + 1
        numeric = bool(h["left"].notna().any())
        if numeric:
            # Each bin split in two halves, real then synthetic, on a value axis.
            h = h[h["left"].notna()]
            x = h["left"].to_numpy(dtype=float)
            width = (h["right"] - h["left"]).to_numpy(dtype=float) / 2
        else:
            x, width = [esc(b) for b in h["bin"]], None
        for k, (who, colour, label) in enumerate((("real", REAL_COLOUR, "real"),
                                                  ("synth", SYNTH_COLOUR, "synthetic"))):
            fig.add_trace(go.Bar(x=x, y=h[f"{who}_share"], width=width, offset=k * width if numeric else None,
                                 name=label, marker_color=colour, showlegend=i == 0, legendgroup=label,
                                 customdata=[esc(b) for b in h["bin"]],
                                 hovertemplate=f"%{{customdata}}<br>{label}: %{{y:.3f}}<extra></extra>"),
                          row=r, col=c)
        if not numeric:
            fig.update_xaxes(type="category", row=r, col=c)
        else:
            fig.update_xaxes(nticks=5, row=r, col=c)
    fig.update_layout(barmode="group", bargap=0.05, height=height)
    fig.update_xaxes(automargin=True)
    _layout(fig, "Every column: real vs synthetic shares", "", "")
    # The legend above the first row's panel titles, not on them.
    fig.update_layout(legend=dict(y=1 + 60 / fig.layout.height), margin=dict(t=120))
    return fig


def correlation_difference_figure(fit, *, title: str | None = None) -> go.Figure:
    """Heatmap of the lower triangle of synth − real (a :class:`CorrelationFit`), centred on 0."""
    diff = fit.difference.to_numpy(dtype=float).copy()
    labels = [esc(c) for c in fit.difference.columns]
    # Only the lower triangle carries information; the rest is left blank.
    diff[np.triu_indices_from(diff)] = np.nan
    finite = np.abs(diff[np.isfinite(diff)])
    top = max(float(finite.max()) if finite.size else 0.0, 0.1)
    text = [["" if np.isnan(v) else f"{v:+.2f}" for v in row] for row in diff]
    what = {"cramers_v": "Cramér's V", "spearman": "Spearman correlation"}.get(fit.measure, "correlation")
    fig = go.Figure(go.Heatmap(
        z=diff, x=labels, y=labels, zmin=-top, zmax=top, zmid=0, colorscale="RdBu_r", text=text,
        texttemplate="%{text}", hovertemplate="%{y} × %{x}<br>synthetic − real: %{z:.3f}<extra></extra>",
        colorbar=dict(title="synth − real"),
    ))
    fig.update_yaxes(autorange="reversed")
    n = len(labels)
    fig.update_layout(height=max(320, 45 * n + 160))
    default = f"Difference of {what} matrices (MAE {fit.mae:.3f}, RMSE {fit.rmse:.3f})"
    return _layout(fig, title or default, "", "")


def propensity_scores_figure(res) -> go.Figure:
    """Distribution of the propensity scores p̂ of real and of synthetic rows (a PropensityResult)."""
    edges = np.linspace(0.0, 1.0, 51)
    fig = go.Figure()
    for label, colour, value in (("real", REAL_COLOUR, 0), ("synthetic", SYNTH_COLOUR, 1)):
        scores = res.scores[res.labels == value]
        counts = np.histogram(np.clip(scores, 0.0, 1.0), bins=edges)[0]
        share = counts / max(len(scores), 1)
        fig.add_trace(go.Bar(x=(edges[:-1] + edges[1:]) / 2, y=share, width=edges[1] - edges[0], name=label,
                             marker_color=colour, opacity=0.6,
                             hovertemplate=f"p̂ ≈ %{{x:.2f}}<br>{label}: %{{y:.3f}}<extra></extra>"))
    c = float(np.mean(res.labels))
    fig.add_vline(x=c, line_dash="dot", line_color="black", annotation_text=f"c = {c:.2f}")
    fig.update_layout(barmode="overlay")
    where = "held-out rows" if res.holdout > 0 else "rows fitted"
    return _layout(fig, f"Propensity scores ({where}; SPECKS = {res.specks:.3f})", "p̂ = P(synthetic | row)",
                   "share of rows")


def propensity_roc_figure(res) -> go.Figure:
    """ROC curve of the discriminator's scores, with the chance diagonal."""
    roc = res.roc_curve()
    fig = go.Figure([
        go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="chance", line=dict(color="grey", dash="dot")),
        go.Scatter(x=roc["fpr"], y=roc["tpr"], mode="lines", name=f"AUC {res.auc:.3f}",
                   line=dict(color=SYNTH_COLOUR), hovertemplate="FPR %{x:.3f}<br>TPR %{y:.3f}<extra></extra>"),
    ])
    fig.update_xaxes(range=[0, 1])
    fig.update_yaxes(range=[0, 1], scaleanchor="x")
    return _layout(fig, f"ROC of the discriminator (AUC = {res.auc:.3f})",
                   "false positive rate (real rows called synthetic)", "true positive rate")


def importance_figure(importance: pd.Series, *, top: int = 12, title: str = "What gives the synthesis away") -> go.Figure:
    """Horizontal bars of the largest ``top`` values of a discriminator's variable importance."""
    imp = importance.head(top)[::-1]
    fig = go.Figure(go.Bar(x=imp.to_numpy(dtype=float), y=[esc(t) for t in imp.index], orientation="h",
                           marker_color=SYNTH_COLOUR, hovertemplate="%{y}: %{x:.4g}<extra></extra>"))
    fig.update_layout(height=max(250, 28 * len(imp) + 120))
    return _layout(fig, title, "importance", "")


def missing_figure(missing: pd.DataFrame) -> go.Figure:
    """Share of missing values per column, real beside synthetic (from :func:`missing_shares`)."""
    labels = [esc(c) for c in missing.index]
    fig = go.Figure([
        go.Bar(y=labels, x=missing["real"], name="real", orientation="h", marker_color=REAL_COLOUR,
               hovertemplate="%{y}<br>real: %{x:.3f}<extra></extra>"),
        go.Bar(y=labels, x=missing["synthetic"], name="synthetic", orientation="h", marker_color=SYNTH_COLOUR,
               hovertemplate="%{y}<br>synthetic: %{x:.3f}<extra></extra>"),
    ])
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(range=[0, max(0.05, float(np.nanmax(missing[["real", "synthetic"]].to_numpy(dtype=float),
                                                          initial=0.0)) * 1.1)])
    fig.update_layout(barmode="group", height=max(250, 40 * len(labels) + 120))
    return _layout(fig, "Missing values, real vs synthetic", "share of rows missing", "")
