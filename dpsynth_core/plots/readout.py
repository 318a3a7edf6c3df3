"""The Synthesize page's small chart: how far each column's synthetic distribution is from the real one."""

from __future__ import annotations

import plotly.graph_objects as go

from .base import SYNTH_COLOUR, esc


def headline_figure(headline) -> go.Figure:
    """Per-column KS (numeric) or total variation (categorical) distance, largest first; 0 = same distribution."""
    d = headline.columns.dropna().sort_values(ascending=True)  # plotly draws the first bar at the bottom
    fig = go.Figure(go.Bar(x=d.tolist(), y=[esc(c) for c in d.index], orientation="h", marker_color=SYNTH_COLOUR,
                           hovertemplate="%{y}: %{x:.3f}<extra></extra>"))
    fig.update_layout(height=max(160, 18 * len(d) + 60),
                      margin=dict(l=10, r=10, t=36, b=30), title=dict(text="Distance per column (KS or TV)",
                                                                       font=dict(size=13)))
    fig.update_xaxes(range=[0, max(0.05, float(d.max()) * 1.1) if len(d) else 1], title=None)
    fig.update_yaxes(automargin=True)
    return fig
