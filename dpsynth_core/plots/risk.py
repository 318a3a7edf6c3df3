"""Figures of the Risk page: a measure against its references, DCR distributions, the ROC.

Each takes results computed in :mod:`dpsynth_core.risk` and only draws them.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from ..metric_info import METRICS
from .base import REAL_COLOUR, SYNTH_COLOUR, _layout, esc

__all__ = ["dcr_distributions_figure", "estimate_figure", "roc_figure"]

TRAIN_COLOUR = "#d62728"  # records the synthesizer saw
BASELINE_COLOUR = "#7f7f7f"
_MAX_ROC_POINTS = 2000


def estimate_figure(est, *, note: str = "") -> go.Figure:
    """A risk measure for the release next to its references, each with its interval.

    Rows, top to bottom: this release, held-out records (when there are
    any), the no-information baseline, the original data released as is.
    ``note`` (user text allowed, escaped) is added to the title.
    """
    rows = [("this release", est.value, est.lower, est.upper, TRAIN_COLOUR)]
    if est.holdout is not None:
        rows.append(("held-out records", est.holdout, est.holdout_lower, est.holdout_upper, REAL_COLOUR))
    rows.append(("baseline: " + est.baseline_label, est.baseline, est.baseline_lower, est.baseline_upper,
                 BASELINE_COLOUR))
    rows.append(("original data released as is", est.original, est.original, est.original, "black"))
    fig = go.Figure()
    for name, value, lo, hi, colour in rows:
        lo, hi = (value, value) if lo is None or hi is None or math.isnan(lo) else (lo, hi)
        fig.add_trace(go.Scatter(
            x=[value], y=[name], mode="markers", name=name, showlegend=False,
            marker=dict(color=colour, size=11, symbol="diamond" if name.startswith("original") else "circle"),
            error_x=dict(type="data", symmetric=False, array=[hi - value], arrayminus=[value - lo], color=colour),
            hovertemplate=f"{name}: %{{x:.4g}} [{lo:.4g}, {hi:.4g}]<extra></extra>",
        ))
    fig.update_yaxes(autorange="reversed")
    info = METRICS.get(est.metric)
    shown = [v for row in rows for v in row[1:4] if v is not None and math.isfinite(v)]
    if info is not None and math.isfinite(info.lower) and math.isfinite(info.upper) and shown:
        # From the measure's floor to just past the largest value shown, within its range.
        top = min(info.upper, max(shown) * 1.15) if max(shown) > info.lower else info.upper
        pad = 0.03 * (top - info.lower)
        fig.update_xaxes(range=[info.lower - pad, top + pad])
    title = f"{esc(est.label)}" + (f" — {esc(note)}" if note else "")
    _layout(fig, title, f"{est.confidence:.0%} {esc(est.interval)} intervals", "")
    fig.update_layout(height=110 + 45 * len(rows), margin=dict(l=10, r=20, t=50, b=50))
    return fig


def dcr_distributions_figure(dcr_train, dcr_holdout=None, dcr_baseline=None, *, bins: int = 40) -> go.Figure:
    """Shares of records per distance-to-closest-record bin: trained-on, held-out, random-data baseline.

    The bins are shared by every group and the bars are shares, so groups
    of different sizes compare directly; a spike at 0 is exact copies.
    """
    groups = [("records the synthesizer saw", dcr_train, TRAIN_COLOUR)]
    if dcr_holdout is not None:
        groups.append(("held-out records", dcr_holdout, REAL_COLOUR))
    if dcr_baseline is not None:
        groups.append(("baseline: random public-domain data", dcr_baseline, BASELINE_COLOUR))
    top = max(float(np.max(g[1])) for g in groups)
    edges = np.linspace(0.0, top if top > 0 else 1.0, bins + 1)
    centres = (edges[:-1] + edges[1:]) / 2
    fig = go.Figure()
    for name, values, colour in groups:
        counts = np.histogram(np.asarray(values, float), bins=edges)[0]
        fig.add_trace(go.Bar(x=centres, y=counts / max(len(values), 1), width=edges[1] - edges[0], name=name,
                             marker_color=colour, opacity=0.55,
                             hovertemplate=f"{name}<br>distance %{{x:.3g}}<br>share %{{y:.3f}}<extra></extra>"))
    fig.update_layout(barmode="overlay")
    return _layout(fig, "Distance to the closest synthetic record", "Gower distance (0 = exact copy)",
                   "share of records")


def roc_figure(membership) -> go.Figure:
    """ROC of the membership attack "member when DCR ≤ threshold", with the guessing diagonal."""
    fpr, tpr = np.asarray(membership.fpr), np.asarray(membership.tpr)
    if len(fpr) > _MAX_ROC_POINTS:  # thin the curve for the browser; its ends stay
        keep = np.unique(np.r_[np.linspace(0, len(fpr) - 1, _MAX_ROC_POINTS).astype(int), len(fpr) - 1])
        fpr, tpr = fpr[keep], tpr[keep]
    fig = go.Figure([
        go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="random guessing (AUC 0.5)",
                   line=dict(color=BASELINE_COLOUR, dash="dot")),
        go.Scatter(x=fpr, y=tpr, mode="lines", name=f"DCR attack (AUC {membership.auc:.3f})",
                   line=dict(color=SYNTH_COLOUR, width=2)),
    ])
    fig.update_xaxes(range=[0, 1])
    fig.update_yaxes(range=[0, 1.02])
    return _layout(fig, f"Membership inference ROC (AUC = {membership.auc:.3f})",
                   "false positive rate (held-out records called members)",
                   "true positive rate (members found)")
