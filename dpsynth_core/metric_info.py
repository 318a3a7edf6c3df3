"""The metric registry: every utility and risk measure as one object.

A :class:`Metric` says what a measure is (name, label, section), how to read
it (direction, range, best value, a one-line reading), what it needs (rows
held out, key variables, a sensitive column) and how to compute it from a
:class:`MetricContext`. Each is registered beside its code in
:mod:`dpsynth_core.utility` or :mod:`dpsynth_core.risk`; the R-U map, the
Compare and Risk pages, the report and the Synthesize readout list metrics
from :data:`METRICS` by kind and section, never by hand. Adding a measure
is one :func:`register` call (see CONTRIBUTING.md).

Direction and range are data (as SDMetrics does with ``goal``,
``min_value``, ``max_value``) so plots orient axes and colours without
special cases.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

import pandas as pd

from .errors import DataError

Goal = Literal["maximize", "minimize", "target"]
#: What a metric may need beyond the real and synthetic rows.
NEEDS = {
    "holdout": "rows held out before synthesis",
    "keys": "key variables (declare them on the Data page)",
    "sensitive": "a sensitive column (declare it on the Data page)",
}

#: Section names in display order, with the heading pages and reports give them. A metric may name a
#: section not listed here: it is shown after these, under its name.
SECTIONS = {
    "propensity": "Can a model tell them apart?",
    "marginals": "Column by column",
    "bivariate": "Pairs of columns",
    "regression": "A regression on both",
    "formal": "Formal guarantee",
    "matching": "Re-identification by matching on key variables",
    "key match": "Attribute disclosure by matching on key variables",
    "distance": "Distance to closest record and membership inference",
    "inference": "Attribute disclosure by prediction",
}

_ROLE = object()  # "the schema's role" (None is a role too: no sensitive column)


class MetricContext:
    """Everything one call computes metrics from, and the results they share.

    Parameters
    ----------
    real, synth : DataFrame
        The rows the synthesizer saw and the synthetic data.
    schema : Schema, optional
        Column kinds, bounds and roles; without it kinds are read off dtypes.
    seed : int or Generator, optional
        Seeds every random step (subsamples, discriminators).
    holdout : DataFrame, optional
        Rows held out before synthesis.
    keys, sensitive : optional
        Key variables and sensitive column; default the schema's roles.
    shared : dict, optional
        Results computed once and read by several metrics (the propensity
        fit behind pMSE, its ratio, SPECKS and AUC). A caller that already
        holds such a result (the Compare page's chosen discriminator) puts
        it here under the key the metric's module uses.
    options : dict, optional
        Per-call settings a metric reads, such as ``{"propensity_rows_each": 500}`` (the rows of each table
        the shared propensity fit may use) or ``{"threads": 1}`` (a metric's own worker threads, where it has any: the
        R-U sweep's points already run side by side); a metric without its option uses its default.
    """

    def __init__(self, real: pd.DataFrame, synth: pd.DataFrame, *, schema: Any = None, seed: Any = None,
                 holdout: pd.DataFrame | None = None, keys=_ROLE, sensitive: Any = _ROLE,
                 shared: dict | None = None, options: dict | None = None):
        self.real, self.synth, self.schema, self.seed, self.holdout = real, synth, schema, seed, holdout
        self.keys = tuple(getattr(schema, "keys", ()) or ()) if keys is _ROLE else tuple(keys or ())
        self.sensitive = getattr(schema, "sensitive", None) if sensitive is _ROLE else sensitive
        self.shared = {} if shared is None else shared
        self.options = {} if options is None else options
        #: metric name → the sentence saying why these data give it no value (a DataError it raised)
        self.refused: dict[str, str] = {}

    @property
    def categorical(self) -> list[str] | None:
        """Columns the schema declares categorical (None without a schema: decided by dtype)."""
        if self.schema is None:
            return None
        return [c for c in self.real.columns if c in self.schema.columns and self.schema[c].kind == "categorical"]

    def cached(self, key: str, make: Callable[[], Any]) -> Any:
        """``shared[key]``, made by ``make()`` on first use."""
        if key not in self.shared:
            self.shared[key] = make()
        return self.shared[key]

    def missing(self, needs) -> list[str]:
        """The needs of ``needs`` this context does not meet."""
        have = {"holdout": self.holdout is not None, "keys": bool(self.keys), "sensitive": self.sensitive is not None}
        return [n for n in needs if not have[n]]


@dataclass(frozen=True, kw_only=True)
class Metric:
    """One metric.

    Parameters
    ----------
    name : str
        Column name used in tables (``pmse_ratio``).
    label : str
        Short label for axes and tiles.
    kind : {"utility", "risk"}
        Which axis of the risk-utility map it belongs to.
    section : str
        The group it is shown in ("propensity", "marginals", "bivariate",
        "regression", "distance", "key match", "inference", "matching",
        "formal"); within a section, metrics come in registration order.
    goal : {"maximize", "minimize", "target"}
        Direction in which the metric improves. For ``"target"`` the best
        value is ``best`` (AUC 0.5, pMSE ratio 1).
    lower, upper : float
        Range of the metric (``inf`` where unbounded).
    best : float
        The value a perfect synthesis (utility) or a release with no
        disclosure (risk) would reach.
    reading : str
        One line telling a person how to read the number.
    needs : frozenset of str
        Keys of :data:`NEEDS`; without one the metric is NaN.
    compute : callable, optional
        ``compute(ctx) -> float`` on a :class:`MetricContext`. None for a
        figure read off something else (ε off the ledger, match rates off
        a row-linked release): such a metric is not on the R-U map.
    note : str or callable, optional
        What a tile says beside the value: a sentence shown when the value
        is not finite, or ``note(ctx, value) -> str | None``.
    estimate : callable, optional
        ``estimate(ctx) -> RiskEstimate`` (risk metrics): the value with
        its interval and references, as the Risk page and report show it.
    headline : bool
        Shown in the Synthesize page's live readout.
    value_format : str
        How a page prints one value (``"{:.3f}"``; ``"{:,.4g}"`` for an unbounded one).
    on_copy : float, optional
        The value when the synthetic data are a copy of the real data, where it is not ``best``
        (pMSE ratio: 0, the discriminator sees less than its null expects) or is worth stating for a
        risk measure (exact copies: 1). The common tests check it.
    acceptable : float, optional
        The level the app calls acceptable, stated on the pages: a value strictly better than it is
        acceptable (pMSE ratio: under ``constraints.PMSE_RATIO_ACCEPTABLE``). The R-U map starts the
        steward's threshold there and colours an answer green only when it is acceptable. None: the app
        states no such level for this measure.
    """

    name: str
    label: str
    kind: Literal["utility", "risk"]
    goal: Goal
    lower: float
    upper: float
    best: float
    reading: str
    section: str = ""
    needs: frozenset[str] = field(default_factory=frozenset)
    compute: Callable[[MetricContext], float] | None = field(default=None, compare=False, repr=False)
    note: str | Callable[[MetricContext, float], str | None] | None = field(default=None, compare=False,
                                                                           repr=False)
    estimate: Callable[[MetricContext], Any] | None = field(default=None, compare=False, repr=False)
    headline: bool = False
    value_format: str = "{:.3f}"
    on_copy: float | None = None
    acceptable: float | None = None

    def __post_init__(self):
        unknown = set(self.needs) - set(NEEDS)
        if unknown:
            raise ValueError(f"metric {self.name!r} needs {sorted(unknown)}; needs are {sorted(NEEDS)}")
        object.__setattr__(self, "needs", frozenset(self.needs))

    def better(self, a: float, b: float) -> bool:
        """True when value ``a`` is strictly better than ``b`` for this metric."""
        if self.goal == "maximize":
            return a > b
        if self.goal == "minimize":
            return a < b
        return abs(a - self.best) < abs(b - self.best)

    def is_acceptable(self, value: float) -> bool | None:
        """Whether ``value`` is strictly better than :attr:`acceptable`; None when no level is stated or the
        value is not a number."""
        if self.acceptable is None or value != value:
            return None
        return self.better(value, self.acceptable)

    @property
    def on_map(self) -> bool:
        """Whether the R-U map can compute it (it has a compute function)."""
        return self.compute is not None

    def value(self, ctx: MetricContext) -> float:
        """The metric on ``ctx``; NaN when a need is not met or it has no compute function."""
        if self.compute is None or ctx.missing(self.needs):
            return math.nan
        try:
            return float(self.compute(ctx))
        except DataError as err:  # these data cannot give it a value: NaN, and ``explain`` says why
            ctx.refused[self.name] = str(err)
            return math.nan

    def estimated(self, ctx: MetricContext):
        """``estimate(ctx)``, or None when it has none or these data cannot give one (``explain`` says why)."""
        if self.estimate is None or ctx.missing(self.needs):
            return None
        try:
            return self.estimate(ctx)
        except DataError as err:
            ctx.refused[self.name] = str(err)
            return None

    def explain(self, ctx: MetricContext, value: float) -> str | None:
        """The sentence a tile shows beside ``value`` (None when there is nothing to say)."""
        unmet = ctx.missing(self.needs)
        if unmet:
            return f"{self.label} needs {' and '.join(NEEDS[n] for n in unmet)}."
        if self.name in ctx.refused:
            return ctx.refused[self.name]
        text = self.note(ctx, value) if callable(self.note) else None
        if text is None and not (value is not None and math.isfinite(value)):
            text = self.note if isinstance(self.note, str) else f"{self.label} could not be computed for these data."
        return text


METRICS: dict[str, Metric] = {}


def register(metric: Metric) -> Metric:
    """Add ``metric`` to :data:`METRICS` (names must be unique)."""
    if metric.name in METRICS:
        raise ValueError(f"metric {metric.name!r} is already registered")
    METRICS[metric.name] = metric
    return metric


def unregister(name: str) -> Metric:
    """Remove and return metric ``name`` (tests register throw-away metrics)."""
    return METRICS.pop(name)


def metrics(kind: str | None = None, section: str | None = None) -> list[Metric]:
    """Registered metrics of ``kind`` and ``section`` (None: any), in registration order."""
    return [m for m in METRICS.values() if kind in (None, m.kind) and section in (None, m.section)]


def sections(kind: str) -> list[str]:
    """Section names of ``kind``'s metrics: those of :data:`SECTIONS` in its order, then any other in the
    order its first metric was registered."""
    names = dict.fromkeys(m.section for m in METRICS.values() if m.kind == kind)
    return [s for s in SECTIONS if s in names] + [s for s in names if s not in SECTIONS]


def section_estimates(section: str, ctx: MetricContext) -> list:
    """Estimates (value, interval, references) of ``section``'s metrics that have one and whose needs ``ctx``
    meets, in registry order; a metric whose estimate does not apply to these data (None, or a DataError whose
    sentence goes to ``ctx.refused``) is left out."""
    found = (m.estimated(ctx) for m in metrics(section=section))
    return [est for est in found if est is not None]


def section_title(section: str) -> str:
    """The heading of ``section``."""
    return SECTIONS.get(section, section[:1].upper() + section[1:])


def when_missing(notes: Callable[[MetricContext], str | None]) -> Callable[[MetricContext, float], str | None]:
    """A ``note`` that says ``notes(ctx)`` only when the value is not finite."""
    return lambda ctx, value: None if value is not None and math.isfinite(value) else (notes(ctx) or None)
