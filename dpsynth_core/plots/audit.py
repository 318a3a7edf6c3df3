"""The privacy audit's figure: the statistic's distribution on D and on D′, for the method as released and
for its broken variant (the data: :class:`~dpsynth_core.privacy.audit.AuditResult`)."""

from __future__ import annotations

import math
import textwrap

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..privacy.audit import AuditResult, Outcome, bound_text
from .base import REAL_COLOUR, SYNTH_COLOUR, _layout, esc

MAX_BARS = 40  # more distinct values than this are grouped into equal-width bins of whole values


def binned(distribution: pd.DataFrame, max_bars: int = MAX_BARS) -> pd.DataFrame:
    """The shares of :meth:`Outcome.distribution` in at most ``max_bars`` bins of whole values: columns
    ``low``, ``high`` (inclusive) and the shares on D and D′ summed over each bin.

    >>> d = pd.DataFrame({"value": [0, 1, 2, 3], "share_d": [0.5, 0.5, 0, 0], "share_d2": [0, 0.5, 0.25, 0.25]})
    >>> b = binned(d, 2)
    >>> b[["low", "high"]].values.tolist(), b["share_d"].tolist(), b["share_d2"].tolist()
    ([[0, 1], [2, 3]], [1.0, 0.0], [0.5, 0.5])
    """
    lo, hi = int(distribution["value"].min()), int(distribution["value"].max())
    width = max(1, math.ceil((hi - lo + 1) / max_bars))
    which = (distribution["value"].to_numpy() - lo) // width
    out = distribution.groupby(which)[["share_d", "share_d2"]].sum()
    out.insert(0, "high", [int(lo + (k + 1) * width - 1) for k in out.index])
    out.insert(0, "low", [int(lo + k * width) for k in out.index])
    return out.reset_index(drop=True)


def _bars(fig: go.Figure, outcome: Outcome, col: int) -> None:
    bins = binned(outcome.distribution())
    mid, width = (bins["low"] + bins["high"]) / 2, bins["high"] - bins["low"] + 1
    labels = [str(lo) if lo == hi else f"{lo}–{hi}" for lo, hi in zip(bins["low"], bins["high"])]
    for k, (share, name, colour) in enumerate((("share_d", "D (without the planted record)", REAL_COLOUR),
                                               ("share_d2", "D′ (with it)", SYNTH_COLOUR))):
        # the two datasets' bars side by side inside each bin, on a numeric axis (empty bins keep their place)
        fig.add_trace(go.Bar(x=mid + (k - 0.5) * width * 0.4, y=bins[share], width=width * 0.4, name=name,
                             marker_color=colour, showlegend=col == 1, legendgroup=share, customdata=labels,
                             hovertemplate="%{customdata}: %{y:.1%} of the runs<extra></extra>"), 1, col)
    if outcome.threshold is not None:  # the event is "≥ t" or "< t": its edge lies half a value below t
        fig.add_vline(x=outcome.threshold - 0.5, line=dict(color="black", dash="dash"), row=1, col=col)
    if bins["high"].max() <= 1:  # a statistic that is 0 or 1: two ticks, not 0, 0.5, 1
        fig.update_xaxes(tickvals=[0, 1], row=1, col=col)


def _wrapped(text: str, width: int = 36) -> str:
    """User text made literal and broken into lines for an axis title."""
    return "<br>".join(esc(line) for line in textwrap.wrap(text, width))


def audit_figure(result: AuditResult) -> go.Figure:
    """Two panels, the method as released and its broken variant: the share of runs giving each value of
    the chosen statistic on D and on D′, and the dashed edge of the chosen event. The further apart the
    two distributions, the more one record shows."""
    titles = [f"As released: bound {bound_text(result.honest.bound)} (claimed {result.claim:g})",
              f"Broken variant: bound {bound_text(result.broken.bound)}"]
    fig = make_subplots(rows=1, cols=2, subplot_titles=titles, horizontal_spacing=0.1)
    _layout(fig, f"The audit's statistic over {result.runs:,} runs on each dataset", "", "share of runs (log scale)")
    for col, outcome in ((1, result.honest), (2, result.broken)):
        _bars(fig, outcome, col)
        fig.update_xaxes(title_text=_wrapped(outcome.statistic), automargin=True, row=1, col=col)
    # log scale: a rare event's bars (a few runs in a thousand) stay visible beside the common ones
    fig.update_yaxes(type="log", dtick=1, tickformat=".2~%")
    # the legend above the panels' own titles
    fig.update_layout(margin=dict(t=130), legend=dict(y=1.16))
    return fig
