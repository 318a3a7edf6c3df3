"""The empirical privacy audit: a lower confidence bound on ε, measured by running a synthesizer.

A mechanism M is (ε, δ)-DP when, for neighbouring datasets D and D′ and every set of outputs E,

    P(M(D′) ∈ E) ≤ e^ε · P(M(D) ∈ E) + δ,  and the same with D and D′ swapped.

So ε ≥ log((P(M(D′) ∈ E) − δ) / P(M(D) ∈ E)) for every event E. The audit (in the manner of Jagielski
et al. 2020 and Nasr et al. 2021) runs the synthesizer many times on a public look-alike D and on its
neighbour D′ = D plus one planted record, with fresh randomness each run, and reads a statistic of
every output (how many synthetic rows fall in the planted record's cell). The runs are split:

1. On the first third of the runs (:data:`SELECTION_SHARE`) every event "statistic ≥ t" and "statistic < t", each
   in both directions, is scored by the bound it gives there, and the best is chosen.
2. On the other two thirds, that one event's probabilities get exact one-sided Clopper–Pearson bounds at
   level α/2 each (a lower bound for the numerator, an upper one for the denominator), so that

       ε̂ = log((lower of P(E | one) − δ) / upper of P(E | other))

   is below the true privacy loss of E with probability at least 1 − α (95 % by default). The event
   was chosen on runs the bound never sees, so no correction for the choice is needed.

If ε̂ exceeds the claimed ε, the claim is false (up to the 5 %). A bound below the claim proves
nothing on its own, so every audit also runs a deliberately broken variant of the method — a tenth of
its noise, claimed at the same ε (:class:`Broken`) — and shows that the same audit catches it.

What a method is audited with is declared on its class as data (``audits = (Audit(...),)``): the
neighbouring pair (:class:`Neighbours`), the statistic (:class:`CellCounts`), and the ε, sizes and
options of its own design. :func:`run_audit` runs any declared audit, on the design's own schema or on
a look-alike built from another schema (a steward's, in the app): never on confidential rows. The
synthesizer is a black box here: every run is a call of :func:`~dpsynth_core.synth.synthesize`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd
from joblib import delayed
from scipy import stats

from .. import constraints
from ..parallel import Pickled, resolve_n_jobs, run
from ..schema import ColumnSchema, Schema
from .accounting import zcdp_epsilon, zcdp_rho
from .budget import NONE, PER_RECORD

ALPHA = 0.05  # the bound holds with probability 1 − ALPHA
SELECTION_SHARE = 1 / 3  # share of each dataset's runs that chooses the event; the rest bounds it
TASKS_PER_STREAM = 16  # tasks each (variant, dataset) stream of runs is cut into: progress steps and load balance
AUDIT_BINS = 20  # bins of a numeric column when the method has no ``bins`` option
MIN_RUNS = 4  # fewer runs a side cannot split into a choice and a bound


# -- the statistics ----------------------------------------------------------------------------

def clopper_pearson(hits, runs, level: float) -> tuple[np.ndarray, np.ndarray]:
    """One-sided Clopper–Pearson bounds of binomial proportions: ``(lower, upper)``.

    ``lower`` is below the success probability with probability ≥ 1 − ``level``, and ``upper`` above
    it with the same guarantee (each on its own). Exact: the quantiles of the beta laws
    Beta(k, n − k + 1) and Beta(k + 1, n − k).
    """
    hits = np.asarray(hits, dtype=float)
    runs = np.broadcast_to(np.asarray(runs, dtype=float), hits.shape)
    if np.any(hits < 0) or np.any(hits > runs):
        raise ValueError("hits must lie in [0, runs]")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    with np.errstate(divide="ignore", invalid="ignore"):
        lower = np.where(hits > 0, stats.beta.ppf(level, hits, runs - hits + 1), 0.0)
        upper = np.where(hits < runs, stats.beta.ppf(1 - level, hits + 1, runs - hits), 1.0)
    return lower, upper


def epsilon_bound(hits_num, runs_num, hits_den, runs_den, *, delta: float = 0.0,
                  alpha: float = ALPHA) -> np.ndarray:
    """Lower confidence bounds of log((P(E | num) − δ) / P(E | den)), one per event given.

    ``hits_num`` of ``runs_num`` runs on one dataset and ``hits_den`` of ``runs_den`` on the other
    fell in E. Each probability is bounded at level ``alpha``/2 (:func:`clopper_pearson`), so the
    bound holds with probability ≥ 1 − ``alpha`` for one event. ``-inf`` where the numerator's
    lower bound does not exceed δ.
    """
    lower, _ = clopper_pearson(hits_num, runs_num, alpha / 2)
    _, upper = clopper_pearson(hits_den, runs_den, alpha / 2)
    with np.errstate(divide="ignore"):
        return np.log(np.maximum(lower - delta, 0.0)) - np.log(upper)


@dataclass(frozen=True)
class Event:
    """One event on one statistic: ``statistic ≥ threshold`` (``at_least``) or ``< threshold``, and the
    direction of the ratio: P(E | D′)/P(E | D) when ``neighbour_first``, else the reverse."""

    statistic: int
    threshold: float
    at_least: bool
    neighbour_first: bool

    def hits(self, values: np.ndarray) -> int:
        """How many of ``values`` (runs × statistics) are in the event."""
        column = values[:, self.statistic]
        return int(np.count_nonzero(column >= self.threshold if self.at_least else column < self.threshold))

    def bound(self, d: np.ndarray, d2: np.ndarray, delta: float, alpha: float) -> float:
        """The event's bound on ε from the runs ``d`` (on D) and ``d2`` (on D′)."""
        num, den = (d2, d) if self.neighbour_first else (d, d2)
        return float(epsilon_bound(self.hits(num), len(num), self.hits(den), len(den), delta=delta, alpha=alpha))


def choose_event(d: np.ndarray, d2: np.ndarray, *, delta: float = 0.0, alpha: float = ALPHA) -> Event | None:
    """The event with the largest bound on these runs (rows: runs, columns: statistics): every threshold
    that splits the values seen, both sides of it, both directions. None when no statistic varies."""
    best, best_bound = None, -math.inf
    for j in range(d.shape[1]):
        a, b = np.sort(d[:, j]), np.sort(d2[:, j])
        thresholds = np.unique(np.concatenate([a, b]))[1:]  # "≥ the smallest value" holds always
        if thresholds.size == 0:
            continue
        ge_a = len(a) - np.searchsorted(a, thresholds, side="left")
        ge_b = len(b) - np.searchsorted(b, thresholds, side="left")
        candidates = {  # (at_least, neighbour_first) → bounds over the thresholds
            (True, True): epsilon_bound(ge_b, len(b), ge_a, len(a), delta=delta, alpha=alpha),
            (True, False): epsilon_bound(ge_a, len(a), ge_b, len(b), delta=delta, alpha=alpha),
            (False, True): epsilon_bound(len(b) - ge_b, len(b), len(a) - ge_a, len(a), delta=delta, alpha=alpha),
            (False, False): epsilon_bound(len(a) - ge_a, len(a), len(b) - ge_b, len(b), delta=delta, alpha=alpha),
        }
        for (at_least, neighbour_first), bounds in candidates.items():
            k = int(np.argmax(bounds))
            if bounds[k] > best_bound or best is None:
                best_bound = bounds[k]
                best = Event(j, float(thresholds[k]), at_least, neighbour_first)
    return best


# -- the neighbouring pair ---------------------------------------------------------------------

@dataclass(frozen=True)
class Cell:
    """Where one column's planted value sits: ``ordinary`` values D uses, and a test for "in the cell"."""

    column: str
    ordinary: tuple            # values of D's rows (never in the cell)
    planted: object            # the planted record's value
    test: tuple                # ("equals", v), ("at least", edge) or ("missing",)

    def contains(self, values: pd.Series) -> np.ndarray:
        """Which of ``values`` (a synthetic column, typed by the schema) fall in the planted record's cell."""
        kind = self.test[0]
        if kind == "missing":
            return values.isna().to_numpy()
        if kind == "at least":
            return pd.to_numeric(values, errors="coerce").to_numpy(dtype=float, na_value=np.nan) >= self.test[1]
        # numpy's comparison of the values as objects: a tenth of pandas' on arrow text
        return values.to_numpy(dtype=object, na_value=None) == self.test[1]

    def text(self) -> str:
        kind = self.test[0]
        if kind == "missing":
            return f"{self.column} missing"
        if kind == "at least":
            return f"{self.column} ≥ {self.test[1]:g}"
        return f"{self.column} = {self.test[1]}"


def column_cell(col: ColumnSchema, bins: int, missing: bool = False) -> Cell | None:
    """The cell of a column: its last category, or its top bin (``bins`` over the declared bounds; the
    planted value is the upper bound, D's values the other bins' midpoints), or "missing" for a nullable
    column when ``missing``. None when the column has one value only."""
    if col.kind == "categorical":
        cats = list(col.categories)
        ordinary, planted = tuple(cats[:-1]), cats[-1]
        test = ("equals", planted)
    else:
        # Here, not at the top: importing synth.encoding runs the synth package, whose methods import this module.
        from ..synth.encoding import column_domain

        domain = column_domain(col, bins)
        if domain.edges is None or len(domain.edges) < 3:
            ordinary, planted, test = (), None, None
        else:
            mids = (domain.edges[:-1] + domain.edges[1:]) / 2
            if col.integer:
                mids = np.clip(np.rint(mids), *col.bounds)
            # the planted value at the upper bound: in the top bin, and the most a record can move a sum
            ordinary, planted = tuple(float(v) for v in mids[:-1]), float(col.bounds[1])
            test = ("at least", float(domain.edges[-2]))
    if missing and col.nullable:
        if not ordinary:
            return None
        return Cell(col.name, ordinary, np.nan, ("missing",))
    if not ordinary:
        return None
    return Cell(col.name, ordinary, planted, test)


@dataclass(frozen=True)
class Pair:
    """Neighbouring datasets: ``data`` (D) and :attr:`neighbour` (D′, D plus the ``planted`` record).

    ``cells`` say, column by column, where the planted record sits; D has no row in any of them.
    """

    data: pd.DataFrame
    planted: dict
    cells: tuple[Cell, ...]
    schema: Schema

    @property
    def neighbour(self) -> pd.DataFrame:
        return pd.concat([self.data, pd.DataFrame({c: [v] for c, v in self.planted.items()})], ignore_index=True)

    def in_cell(self, frame: pd.DataFrame, cells: tuple[int, ...]) -> np.ndarray:
        """Rows of ``frame`` in the planted record's cell on the cells numbered ``cells``."""
        inside = np.ones(len(frame), dtype=bool)
        for i in cells:
            inside &= self.cells[i].contains(frame[self.cells[i].column])
        return inside

    def cell_text(self, cells: tuple[int, ...]) -> str:
        return " and ".join(self.cells[i].text() for i in cells)


@dataclass(frozen=True)
class Neighbours:
    """How the pair is built from a schema: D's rows never enter the planted record's cell.

    Each modelled column has ordinary values (all categories but the last; the midpoints of all bins
    but the top one) and a planted one (the last category; the upper bound; missing, for a nullable
    numeric column when ``missing``). D has ``rows`` rows drawn from the ordinary values with
    the public seed ``seed``, or, with ``groups``, rows given on the first two cell columns as
    ((value index, value index), count) — index −1 is the planted value — and every other column at
    its first ordinary value. D′ = D plus the planted record. Columns with a single value are left
    out of the cell.
    """

    rows: int = 30
    groups: tuple[tuple[tuple[int, int], int], ...] = ()
    missing: bool = False
    seed: int = 0

    def make(self, schema: Schema, bins: int, rows: int | None = None) -> Pair:
        used = schema.used
        sub = Schema({c: schema[c] for c in used}, tuple(k for k in schema.keys if k in used),
                     schema.sensitive if schema.sensitive in used else None)
        cells = {c: column_cell(schema[c], bins, self.missing) for c in used}
        kept = tuple(cell for cell in cells.values() if cell is not None)
        if len(kept) < (2 if self.groups else 1):
            raise ValueError("An audit needs a column with at least two values (categories or bins) to plant a "
                             "record in a cell no other row uses; declare such a column.")
        rng = np.random.default_rng(self.seed)
        if self.groups:
            first, second = kept[0], kept[1]
            pick = lambda cell, i: cell.planted if i < 0 else cell.ordinary[i]  # noqa: E731
            size = sum(count for _, count in self.groups)
            columns = {first.column: [pick(first, i) for (i, _), k in self.groups for _ in range(k)],
                       second.column: [pick(second, j) for (_, j), k in self.groups for _ in range(k)]}
            for c in used:
                if c not in columns:
                    columns[c] = [self._fill(schema[c], cells[c])] * size
        else:
            size = self.rows if rows is None else int(rows)
            columns = {c: self._draw(schema[c], cells[c], size, rng) for c in used}
        planted = {c: (cells[c].planted if cells[c] is not None else self._fill(schema[c], None)) for c in used}
        data = pd.DataFrame({c: pd.Series(columns[c], dtype=object if schema[c].kind == "categorical" else float)
                             for c in used})
        return Pair(data, planted, kept, sub)

    @staticmethod
    def _fill(col: ColumnSchema, cell: Cell | None):
        """The value a column takes where the design does not set it."""
        if cell is not None:
            return cell.ordinary[0]
        return col.categories[0] if col.kind == "categorical" else float(col.bounds[0])

    @staticmethod
    def _draw(col: ColumnSchema, cell: Cell | None, size: int, rng: np.random.Generator) -> list:
        if cell is None:
            return [Neighbours._fill(col, None)] * size
        return [cell.ordinary[i] for i in rng.integers(0, len(cell.ordinary), size)]


@dataclass(frozen=True)
class CellCounts:
    """The statistics of one run: how many synthetic rows of the unit fall in the planted record's cell,
    on each group of cell columns in ``cells`` (indices into the pair's cells, in schema order).

    A unit is the whole synthetic table for a method that spends ε on the release; one record (or one
    block of records) for a method whose ε is per record (block): each is then a run of its own.
    ``first`` adds, per unit, whether its first record is in the cell (blocks: the first record of a
    block is a plain PeGS record).
    """

    cells: tuple[tuple[int, ...], ...] = ((0, 1),)
    first: bool = False

    def groups(self, pair: Pair) -> list[tuple[int, ...]]:
        """The groups that exist for this pair (a schema with fewer columns drops the wider ones)."""
        out = []
        for group in self.cells:
            kept = tuple(i for i in group if i < len(pair.cells))
            if kept and kept not in out:
                out.append(kept)
        return out

    def names(self, pair: Pair, size: int | None) -> list[tuple[str, str, str | None]]:
        """Each statistic in words, as (what is counted, the cell, the subject when it is 0 or 1 per run):
        ``size`` is the rows of a unit (None: the whole release)."""
        if size is None:
            counted, subject = "synthetic rows", None
        elif size == 1:
            counted, subject = "", "the synthetic record"
        else:
            counted, subject = f"of a block's {size} records", None
        names = [(counted, pair.cell_text(g), subject) for g in self.groups(pair)]
        if self.first:
            names.append(("", pair.cell_text(self.groups(pair)[0]), "the first record of a block"))
        return names

    def __call__(self, frame: pd.DataFrame, pair: Pair, size: int) -> np.ndarray:
        """(units × statistics) counts for a synthetic frame of units of ``size`` rows each."""
        out = []
        for group in self.groups(pair):
            inside = pair.in_cell(frame, group).reshape(-1, size)
            out.append(inside.sum(axis=1))
        if self.first:
            out.append(pair.in_cell(frame, self.groups(pair)[0]).reshape(-1, size)[:, 0])
        return np.column_stack(out).astype(np.int64)


# -- the broken variant and the declaration ----------------------------------------------------

@dataclass(frozen=True)
class Broken:
    """The deliberately broken variant: the same method with its noise scale divided by ``factor`` (10),
    still claiming the original ε; or, for a method with no noise to cut, another registered ``method``
    run in its place (``text`` says what it is).

    Pure ε: the noise of factor·ε (a Laplace or geometric scale ∝ 1/ε, the perturbation of PeGS and PMI
    likewise). zCDP (``zcdp``): ρ × factor² (σ ∝ 1/√ρ), run at the ε whose ρ that is, at the same δ.
    """

    zcdp: bool = False
    method: str | None = None
    text: str = ""
    factor: float = 10.0

    def epsilon(self, epsilon: float | None, delta: float) -> float | None:
        """The ε the broken variant runs at (None: it spends none)."""
        if self.method is not None or epsilon is None:
            return None
        if self.zcdp:
            return zcdp_epsilon(self.factor ** 2 * zcdp_rho(epsilon, delta), delta)
        return self.factor * epsilon

    def describe(self) -> str:
        if self.text:
            return self.text
        share = "a tenth" if self.factor == 10 else "half" if self.factor == 2 else f"1/{self.factor:g}"
        how = f"ρ × {self.factor ** 2:g}" if self.zcdp else f"that of {self.factor:g}ε"
        return f"{share} of the noise, {how}, with the same ε claimed"


@dataclass(frozen=True)
class Audit:
    """A DP method's empirical audit, declared on its class: ``audits = (Audit(...), ...)``.

    The first is the method's main audit (the one the app and ``dpsynth audit`` run). ``schema`` is the
    design's public schema (a dict as :meth:`Schema.from_dict` reads it), ``pair`` builds D and D′ from a
    schema, ``statistic`` reads each output, ``epsilon``/``delta`` the claim the tests check (per record or
    block for a method whose ε is per unit), ``n`` the synthetic rows of a run (records per unit come from
    the method's options), ``options`` the method's options the design uses (a user's choices override them),
    ``fixed`` the options a valid run needs whatever the user chose (every unit its own seed: ``chains``),
    ``runs`` the full audit's runs per dataset (the slow tests) and ``quick_runs`` the fast suite's.
    ``note`` says why the design has power, for the docs and the test's message.
    """

    schema: dict
    statistic: CellCounts = CellCounts()
    pair: Neighbours = Neighbours()
    epsilon: float = 1.0
    delta: float = 0.0
    n: int = 2000
    options: dict = field(default_factory=dict)
    fixed: dict = field(default_factory=dict)
    runs: int = 2000
    quick_runs: int = 200
    broken: Broken = Broken()
    note: str = ""


def three_columns(size: int = 3, names: str = "abc") -> dict:
    """A design schema: categorical columns ``names`` with ``size`` categories each (a0, a1, a2, …)."""
    return {c: {"kind": "categorical", "categories": [f"{c}{i}" for i in range(size)]} for c in names}


# -- running an audit ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Outcome:
    """One variant's audit: the chosen event, its bound, and the statistic's values on D and D′."""

    epsilon_run: float | None     # the ε the method actually ran at (None: it spends none)
    bound: float                  # the 95 % lower confidence bound on ε (−inf: no event showed a loss)
    event: str                    # the chosen event in words
    statistic: str                # the statistic the event reads
    threshold: float | None
    at_least: bool
    neighbour_first: bool
    hits: tuple[int, int]         # held-out runs in the event, on D and on D′
    held_out: int                 # held-out runs per dataset
    values: tuple[np.ndarray, np.ndarray] = field(repr=False)  # the statistic on every run, D and D′

    def distribution(self) -> pd.DataFrame:
        """The statistic's distribution on D and D′: each value seen, and its share of the runs."""
        d, d2 = self.values
        values = np.unique(np.concatenate([d, d2]))
        share = lambda x: np.searchsorted(np.sort(x), values, side="right") - np.searchsorted(  # noqa: E731
            np.sort(x), values, side="left")
        return pd.DataFrame({"value": values, "share_d": share(d) / max(len(d), 1),
                             "share_d2": share(d2) / max(len(d2), 1)})


@dataclass(frozen=True)
class AuditResult:
    """What :func:`run_audit` found: the claim, and the honest and broken variants' outcomes."""

    method: str
    label: str
    claim: float
    delta: float
    per: str                      # what ε is per: "release", "synthetic record", "block of 3 synthetic records"
    runs: int                     # runs per dataset and variant
    rows: int                     # rows of D
    n: int                        # synthetic rows per run (records per unit, for per-unit methods)
    honest: Outcome
    broken: Outcome
    broken_text: str
    cpu_seconds: float            # CPU time of every run, in whichever process ran it
    wall_seconds: float

    @property
    def holds(self) -> bool:
        """The honest bound stays at or below the claim."""
        return self.honest.bound <= self.claim

    @property
    def has_power(self) -> bool:
        """The broken variant's bound exceeds the claim: the audit catches it."""
        return self.broken.bound > self.claim

    def verdict(self) -> str:
        """The result in one or two sentences."""
        claim = f"ε = {self.claim:g}" + (f" (δ = {self.delta:g})" if self.delta else "")
        first = (f"The lower bound {bound_text(self.honest.bound)} stays at or below the claimed {claim}: the runs "
                 "show no privacy loss beyond the claim." if self.holds else
                 f"The lower bound {bound_text(self.honest.bound)} exceeds the claimed {claim}: with 95 % confidence "
                 "the method loses more privacy than it claims.")
        second = (f" The broken variant ({self.broken_text}) reaches {bound_text(self.broken.bound)}, above the "
                  "claim: this audit can catch such an error." if self.has_power else
                  f" The broken variant ({self.broken_text}) reaches only {bound_text(self.broken.bound)}, not above "
                  "the claim: this audit is too weak to catch such an error at these settings (more runs, or the "
                  "method's own design, would help).")
        return first + second


def bound_text(bound: float) -> str:
    """A bound as the tables print it: −∞ when no run showed the event."""
    return "−∞" if bound == -math.inf else f"{bound:.3g}"


def audit_table(result: AuditResult) -> pd.DataFrame:
    """The result as the app and the command line show it, one row per variant, every value as text: the
    claim, the ε it ran at, the bound, the runs, the event and its held-out counts."""
    rows = []
    for name, outcome in (("as released", result.honest), (f"broken: {result.broken_text}", result.broken)):
        d_hits, d2_hits = outcome.hits
        rows.append({"variant": name, "claimed ε": f"{result.claim:g}",
                     "ran at ε": "spends none" if outcome.epsilon_run is None else f"{outcome.epsilon_run:.4g}",
                     "95 % lower bound on ε": bound_text(outcome.bound), "runs per dataset": f"{result.runs:,}",
                     "event": outcome.event,
                     "in the event (held-out runs, D → D′)": f"{d_hits:,} → {d2_hits:,} of {outcome.held_out:,}"})
    return pd.DataFrame(rows)


def declared_audits(method: str) -> tuple[Audit, ...]:
    """The audits ``method`` declares on its class (empty for a method with none)."""
    from ..synth import SYNTHESIZERS  # here, not at the top: the synthesizers import this module

    return tuple(getattr(SYNTHESIZERS[method], "audits", ()))


def run_audit(method: str, *, which: int = 0, design: Audit | None = None, schema: Schema | dict | None = None,
              epsilon: float | None = None, delta: float | None = None, runs: int | None = None,
              rows: int | None = None, options: dict | None = None, seed: int | None = None,
              progress: Callable[[float, str], None] | None = None, n_jobs: int | None = None) -> AuditResult:
    """Audit ``method``'s claimed ε by running it on a public pair of neighbours, and its broken variant too.

    Parameters
    ----------
    method : str
        A registered DP synthesizer with a declared audit.
    which : int, default 0
        Which of its declared audits (0: the main one).
    design : Audit, optional
        An audit to run instead of a declared one (a variant of it, in the tests and the docs' sizing).
    schema : Schema or dict, optional
        Build the pair from this schema (a steward's) instead of the design's: never from data.
    epsilon, delta : float, optional
        The claim to audit (default the design's); per record (block) for a per-unit method.
    runs : int, optional
        Runs on each dataset for each variant (default the design's full ``runs``).
    rows : int, optional
        Rows of D (default the design's).
    options : dict, optional
        The method's options (a user's); the design's ``fixed`` ones still apply.
    seed : int, optional
        Reproducible runs (each run's seed derived from it); None: fresh operating-system entropy in every
        run, as a release draws it.
    progress : callable, optional
        Called as ``progress(fraction_done, message)`` as runs finish; an exception it raises cancels the
        audit (the app's Cancel) and propagates.
    n_jobs : int, optional
        Worker processes through joblib, as :func:`~dpsynth_core.rumap.ru_map`: None follows the active
        ``joblib.parallel_config``, else every local core.
    """
    from ..synth import SYNTHESIZERS

    if method not in SYNTHESIZERS:
        raise ValueError(f"unknown method {method!r}; choose one of {sorted(SYNTHESIZERS)}")
    synth = SYNTHESIZERS[method]
    design = _design(synth, which, design)
    started = time.perf_counter()
    schema = Schema.from_dict(design.schema) if schema is None else (
        Schema.from_dict(schema) if isinstance(schema, dict) else schema)
    params = synth.resolve({**design.options, **(options or {}), **design.fixed})
    pair = design.pair.make(schema, params.get("bins", AUDIT_BINS), rows)
    # An (ε, δ) method is audited at its δ (the default when none is given, as synthesize does); a pure one at 0.
    claim_delta = (float(design.delta if delta is None else delta) or constraints.DEFAULT_DELTA
                   if synth.spends.needs_delta else 0.0)
    kind = synth.spends.kind
    claim = 0.0 if kind == NONE else float(design.epsilon if epsilon is None else epsilon)
    runs = int(design.runs if runs is None else runs)
    if runs < MIN_RUNS:
        raise ValueError(f"an audit needs at least {MIN_RUNS} runs on each dataset, got {runs}")
    per_unit = kind == PER_RECORD
    size = (params[synth.spends.unit_size] if synth.spends.unit_size else 1) if per_unit else design.n
    variants = {"honest": (method, None if kind == NONE else claim, params),
                "broken": ((design.broken.method, None, {}) if design.broken.method is not None else
                           (method, design.broken.epsilon(claim, claim_delta), params))}
    streams = [(v, which_data) for v in variants for which_data in (0, 1)]
    names = design.statistic.names(pair, size if per_unit else None)
    values = {s: np.empty((runs, len(names)), dtype=np.int64) for s in range(len(streams))}
    done, cpu = 0, 0.0

    def keep(s: int, start: int, count: int, stats_: np.ndarray, seconds: float) -> None:
        nonlocal done, cpu
        values[s][start:start + count] = stats_
        done += count
        cpu += seconds
        if progress is not None:  # an exception here (the app's Cancel) stops the audit (see parallel.run)
            variant, which_data = streams[s]
            progress(done / (runs * len(streams)), f"{'broken variant' if variant == 'broken' else 'as released'}, "
                     f"{'D′' if which_data else 'D'}: {done:,} of {runs * len(streams):,} runs")

    payload = _payload(pair, design, claim_delta, per_unit, size)
    run([delayed(_task)(payload, s, *task) for s, task in _tasks(streams, variants, runs, per_unit, seed)],
         resolve_n_jobs(n_jobs), keep)
    outcomes = {v: _outcome(values[2 * i], values[2 * i + 1], names, claim_delta, variants[v][1])
                for i, v in enumerate(variants)}
    return AuditResult(method, synth.label, claim, claim_delta, synth.spends.unit.format(**params) if per_unit
                       else "release", runs, len(pair.data), size, outcomes["honest"], outcomes["broken"],
                       design.broken.describe(), cpu, time.perf_counter() - started)


def _design(synth, which: int, design: Audit | None) -> Audit:
    """The audit to run: ``design``, else the method's declared one numbered ``which``; a sentence if none."""
    if not synth.is_dp:
        raise ValueError(f"{synth.label} is not differentially private: there is no ε to audit.")
    if design is not None:
        return design
    designs = declared_audits(synth.name)
    if not designs:
        raise ValueError(f"{synth.label} declares no audit; see docs/audit.md.")
    if not 0 <= which < len(designs):
        raise ValueError(f"{synth.label} declares {len(designs)} audit(s), numbered from 0; choose one of "
                         f"{list(range(len(designs)))}.")
    return designs[which]


def _tasks(streams, variants: dict, runs: int, per_unit: bool, seed: int | None):
    """(stream, (first run, runs, method, ε, options, which dataset, seeds)) for every task: each stream's runs
    cut into :data:`TASKS_PER_STREAM` pieces. With ``seed`` every run (every synthesis, for a per-unit
    method) gets a seed derived from it, the same whatever the number of workers; without, None."""
    root = np.random.SeedSequence(seed)
    chunk = max(1, -(-runs // TASKS_PER_STREAM))
    for s, (variant, which_data) in enumerate(streams):
        method, eps, options = variants[variant]
        for start in range(0, runs, chunk):
            count = min(chunk, runs - start)
            child = root.spawn(1)[0]
            seeds = None if seed is None else [
                int(x) for x in child.generate_state(1 if per_unit else count, dtype=np.uint64) % 2**63]
            yield s, (start, count, method, eps, options, which_data, seeds)


def _payload(pair: Pair, design: Audit, delta: float, per_unit: bool, size: int):

    return Pickled({"pair": pair, "statistic": design.statistic, "delta": delta, "per_unit": per_unit,
                     "size": size, "n": design.n})


def _task(payload, s: int, start: int, count: int, method: str, epsilon: float | None, options: dict,
          which_data: int, seeds: list[int] | None) -> tuple[int, int, int, np.ndarray, float]:
    """``count`` runs of ``method`` on D (``which_data`` 0) or D′ (1), in a worker: their statistics.

    Every run is a call of synthesize() with a declared row count, on public rows (``confidential=False``:
    nothing is recorded in the ledger store, no cap applies): fresh operating-system entropy when ``seeds``
    is None, else the given seeds. A per-unit method makes all ``count`` units in one call,
    each unit with its own seed (``fixed`` options), so they are independent runs.
    """
    from ..synth import synthesize
    from ..synth.base import measurement

    cpu = time.process_time()
    p = payload.get()
    pair, statistic = p["pair"], p["statistic"]
    df = pair.neighbour if which_data else pair.data
    measured = measurement(df, method, schema=pair.schema, **options)
    extra = {"delta": p["delta"]} if p["delta"] else {}
    if p["per_unit"]:
        n = count * p["size"]
        result = synthesize(df, method, epsilon=None if epsilon is None else epsilon * count, schema=pair.schema,
                            n=n, seed=None if seeds is None else seeds[0], measured=measured, confidential=False,
                            **extra, **options)
        out = statistic(result.data, pair, p["size"])
    else:
        rows = []
        for r in range(count):
            result = synthesize(df, method, epsilon=epsilon, schema=pair.schema, n=p["n"],
                                seed=None if seeds is None else seeds[r], measured=measured, confidential=False,
                                **extra, **options)
            rows.append(statistic(result.data, pair, p["n"])[0])
        out = np.array(rows, dtype=np.int64)
    return s, start, count, out, time.process_time() - cpu


def _outcome(d: np.ndarray, d2: np.ndarray, names: list[tuple[str, str, str | None]], delta: float,
             epsilon_run: float | None) -> Outcome:
    """Choose the event on the first share of each side's runs, bound it on the rest."""
    cut = int(math.ceil(SELECTION_SHARE * len(d)))
    event = choose_event(d[:cut], d2[:cut], delta=delta)
    held_d, held_d2 = d[cut:], d2[cut:]
    if event is None:
        return Outcome(epsilon_run, -math.inf, "none: the statistics took one value in every run",
                       _statistic_text(names[0]), None, True, True, (0, 0), len(held_d), (d[:, 0], d2[:, 0]))
    more = "D′ (with the planted record)" if event.neighbour_first else "D (without it)"
    return Outcome(epsilon_run, event.bound(held_d, held_d2, delta, ALPHA),
                   f"{_event_text(names[event.statistic], event)}; more likely on {more}",
                   _statistic_text(names[event.statistic]), event.threshold, event.at_least, event.neighbour_first,
                   (event.hits(held_d), event.hits(held_d2)), len(held_d),
                   (d[:, event.statistic], d2[:, event.statistic]))


def _statistic_text(name: tuple[str, str, str | None]) -> str:
    counted, cell, subject = name
    return f"whether {subject} has {cell} (1) or not (0)" if subject is not None else f"{counted} with {cell}"


def _event_text(name: tuple[str, str, str | None], event: Event) -> str:
    """The event in words: "at least 45 synthetic rows with a = a2 and b = b2", "the synthetic record has …"."""
    counted, cell, subject = name
    if subject is not None:  # values 0 and 1: the one threshold is 1
        return f"{subject} has {cell}" if event.at_least else f"{subject} does not have {cell}"
    if event.threshold == 1:
        one = "synthetic row" if counted == "synthetic rows" else counted
        return f"at least 1 {one} with {cell}" if event.at_least else f"no {one} with {cell}".replace(
            "no of", "none of")
    return f"{'at least' if event.at_least else 'fewer than'} {event.threshold:,.0f} {counted} with {cell}"
