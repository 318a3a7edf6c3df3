"""Measures the risk-utility sweep can report, registered by the modules that compute them.

A utility or risk module registers a scorer next to its metric's
:class:`~dpsynth_core.metric_info.MetricInfo`; :func:`dpsynth_core.ru_map`
looks scorers up by name, so adding a measure to the R-U map touches only
the module that computes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .metric_info import METRICS


@dataclass(frozen=True)
class Scorer:
    """One measure the sweep can report: ``fn(real, synth, *, schema, seed, holdout, shared)`` → float.

    ``real`` is the data the synthesizer saw; ``holdout`` the rows kept
    out of it (None unless the sweep holds rows out). A scorer that needs the
    holdout returns NaN without it.
    """

    name: str
    fn: Callable[..., float]
    needs_holdout: bool = False

    @property
    def kind(self) -> str:
        return METRICS[self.name].kind


SCORERS: dict[str, Scorer] = {}


def register_scorer(name: str, fn: Callable[..., float], *, needs_holdout: bool = False) -> None:
    """Offer metric ``name`` (described in METRICS) on the R-U map."""
    SCORERS[name] = Scorer(name, fn, needs_holdout)
