"""Estimate a table's public schema privately: each field still read off the data gets a value
released by a DP mechanism (:mod:`.privacy.domain`), with its ε (issue 27).

The budget. ε is split equally over the columns that have a field to estimate; which columns and
which steps is decided by the declarations alone (public), never by the data. Within a column the
steps share its ε in proportion to :data:`WEIGHTS`:

1. **presence** (weight 1): noisy counts of the column's cells that are missing, numbers and other
   values (two-sided geometric, one cell per record). It decides the kind when the kind is not
   declared (numbers outnumber other values: numeric; else categorical; neither clearly present:
   excluded) and whether the column may be missing (a noisy count of missing cells that no empty
   cell would reach, :data:`~.constraints.SCHEMA_FLAG_BETA`).
2. a numeric column: **decimals** (1): noisy counts of the decimals each value needs (0 … 6, more),
   giving the whole-number flag (only on evidence: else unrounded) and the precision; **range** (6): the bounds
   (:class:`~.privacy.domain.RangeHistogram`, over a coarse range if the steward gives one: if no
   bucket passes, the steward's range itself); **specials** (2): the values holding at least
   ``SPECIAL_MIN_SHARE`` of the noisy count of numbers, at most ``MAX_SPECIALS``: 0 by the range
   histogram's own bucket {0} (no further cost), the others by a
   :class:`~.privacy.domain.ThresholdedHistogram` of the non-zero exact values.
   A categorical column: **categories** (9): a thresholded histogram of its values, or noisy counts
   over a list the steward gives.

Both kinds' steps weigh 9, so when the kind itself is estimated every path spends the column's whole
ε; a path that stops early (a column excluded as empty) records the rest as reserved: the guarantee
is that of the worst path, whatever the data chose. δ (thresholded histograms, one per column at
most) is split like ε. Every choice after a release is made from that release alone.

A field the data are too few to estimate at this ε (no bucket or category passes its threshold)
keeps its value read off the data and is named in :attr:`SchemaEstimate.notes`; a declared value is
never replaced. Neighbouring datasets: add or remove one record.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import constraints
from .errors import BudgetExceeded
from .privacy.domain import Buckets, RangeHistogram, ThresholdedHistogram, clear_threshold, sum_threshold
from .privacy.ledger import Step
from .privacy.mechanisms import Geometric, check_epsilon
from .privacy.randomness import noise_generator
from .privacy.store import Entry, LedgerStore, Use
from .schema import ColumnSchema, Schema, _plain, schema_of

WEIGHTS = {"presence": 1, "decimals": 1, "range": 6, "specials": 2, "categories": 9}
#: What each step releases.
RELEASES = {"presence": ("kind", "nullable"), "decimals": ("integer", "decimals"), "range": ("lower", "upper"),
            "specials": ("specials",), "categories": ("categories",)}
DECIMAL_CELLS = 8  # a value needs 0 … 6 decimals, or more (cell 7)


@dataclass(frozen=True)
class SchemaEstimate:
    """The result of :func:`estimate_schema`: the schema with its estimated fields, the ledger steps of
    the estimate (its ε and δ are their sums), and one sentence per field it could not estimate."""

    schema: Schema
    steps: tuple[Step, ...]
    notes: tuple[str, ...] = ()
    seeded: bool = False

    @property
    def epsilon(self) -> float:
        return math.fsum(s.total_epsilon for s in self.steps)

    @property
    def delta(self) -> float:
        return math.fsum(s.total_delta for s in self.steps)

    def entry(self, *, rows: int | None) -> Entry:
        """The estimate as the ledger store records it (purpose "schema estimate"): its ε and δ, and its ρ
        as zCDP (Σ ε²/2) when no step spends δ. A synthesis with the schema leaves this share out of its own
        entry (:meth:`..privacy.Entry.of_ledger`), so the store counts it once."""
        rho = math.fsum(s.epsilon ** 2 / 2 for s in self.steps) if self.delta == 0 else None
        return Entry(method="private schema estimate", epsilon=self.epsilon, delta=self.delta, rho=rho,
                     seeded=self.seeded, is_dp=not self.seeded, rows=rows)


# -- the exact counts each step reads (the only reads of the data) ------------------------------------

def as_numbers(series: pd.Series) -> np.ndarray:
    """The column's values as floats: NaN where missing or not a number (true/false are not numbers)."""
    if pd.api.types.is_bool_dtype(series):
        return np.full(len(series), np.nan)
    if pd.api.types.is_numeric_dtype(series):
        return series.to_numpy(dtype=float)
    parsed = pd.to_numeric(series.where(~series.map(lambda v: isinstance(v, (bool, np.bool_)))), errors="coerce")
    return parsed.to_numpy(dtype=float)


def presence_counts(series: pd.Series, *, kind_known: bool) -> np.ndarray:
    """[missing, numbers, other values] (the kind not declared) or [missing, present] cells."""
    missing = series.isna().to_numpy()
    if kind_known:
        return np.array([missing.sum(), (~missing).sum()])
    numbers = np.isfinite(as_numbers(series)) & ~missing
    return np.array([missing.sum(), numbers.sum(), (~missing & ~numbers).sum()])


def decimal_counts(values: np.ndarray) -> np.ndarray:
    """How many of ``values`` (finite numbers) need 0, 1, …, 6 decimals, or more (cell 7)."""
    need = np.full(len(values), DECIMAL_CELLS - 1)
    scale = np.maximum(np.abs(values), 1.0) * 1e-9
    for d in range(DECIMAL_CELLS - 2, -1, -1):
        need[np.abs(values - np.round(values, d)) <= scale] = d
    return np.bincount(need, minlength=DECIMAL_CELLS)


def value_counts(values) -> tuple[list, np.ndarray]:
    """The distinct values observed (missing ones left out) and how often each occurs."""
    counts = pd.Series(values).dropna().value_counts(sort=False)
    return [_plain(v) for v in counts.index], counts.to_numpy()


# -- one column --------------------------------------------------------------------------------------

@dataclass
class _Column:
    """A column's estimate as it is built: its values, the fields estimated (with ε) and its steps."""

    name: str
    epsilon: float
    delta: float
    seeded: bool
    values: dict
    estimated: dict
    steps: list
    notes: list

    def step(self, mechanism, what: str, detail: str, fields) -> Step:
        st = mechanism.step(f"schema estimate: {what} of {self.name}", detail=detail)
        self.steps.append(st)
        self.estimated.update({f: mechanism.epsilon for f in fields})
        return st

    def spent(self) -> tuple[float, float]:
        return math.fsum(s.epsilon for s in self.steps), math.fsum(s.delta for s in self.steps)


def _plan(col: ColumnSchema, kind_known: bool, has_candidates: bool) -> list[str]:
    """The steps a column runs, from its declarations alone (never the data)."""
    fields = col.derived_fields
    if not kind_known:
        return ["presence"]  # the rest follows the kind the presence step releases
    if col.kind == "categorical":
        return (["presence"] if "nullable" in fields else []) + (["categories"] if "categories" in fields else [])
    if col.kind != "numeric":
        return []
    bounds = bool({"lower", "upper"} & fields)
    steps = ["presence"] if ("nullable" in fields or bounds) else []
    # The precision: when the whole-number flag is read off the data, or declared False with no precision public.
    precision = "integer" in fields or ("integer" in col.declared_fields and not col.integer
                                        and "decimals" not in col.public_fields)
    steps += ["decimals"] if precision else []
    return steps + (["range", "specials"] if bounds else [])


def _share(eps: float, steps: list[str], step: str) -> float:
    return eps * WEIGHTS[step] / sum(WEIGHTS[s] for s in steps)


def _presence(c: _Column, series: pd.Series, col: ColumnSchema, kind_known: bool, eps: float, rng) -> float | None:
    """Step 1; returns the noisy count of present values (numbers, for the kind chosen numeric)."""
    mech = Geometric(eps)
    noisy = mech.noisy(presence_counts(series, kind_known=kind_known), rng)
    t_missing = clear_threshold(eps, 1, constraints.SCHEMA_FLAG_BETA)
    released = [] if "nullable" not in col.derived_fields and kind_known else ["nullable"]
    c.values["nullable"] = bool(noisy[0] >= t_missing) if "nullable" in released else col.nullable
    if kind_known:
        c.step(mech, "missing values", f"noisy counts of missing and present cells; may be missing when the "
               f"missing count reaches {t_missing}", released)
        return float(noisy[1])
    t_present = clear_threshold(eps, 2, constraints.SCHEMA_FLAG_BETA)
    numbers, other = int(noisy[1]), int(noisy[2])
    kind = "excluded" if max(numbers, other) < t_present else "numeric" if numbers >= other else "categorical"
    c.values["kind"] = kind
    if kind == "excluded":
        c.notes.append(f"{c.name}: fewer than the {t_present} values this ε needs to tell its kind; excluded. "
                       "Declare its kind (and its domain), or raise ε.")
    c.step(mech, "kind and missing values", "noisy counts of missing cells, numbers and other values; a kind "
           f"needs {t_present} values", ["kind", *released])
    return float(numbers if kind == "numeric" else other)


def _categories(c: _Column, series: pd.Series, eps: float, delta: float, rng, candidates) -> None:
    keys, counts = value_counts(series)
    if candidates is not None:
        listed = list(candidates)
        exact = np.array([dict(zip(keys, counts)).get(v, 0) for v in listed])
        mech = Geometric(eps)
        noisy = mech.noisy(exact, rng)
        keep = noisy >= clear_threshold(eps, len(listed), constraints.SCHEMA_FLAG_BETA)
        kept = [v for v, k in zip(listed, keep) if k] or listed
        c.values["categories"] = tuple(kept)
        c.step(mech, "categories", f"noisy counts over the {len(listed)} categories the steward listed", ["categories"])
        return
    mech = ThresholdedHistogram(eps, delta=delta)
    if not len(keys):
        keys, counts = [], np.zeros(0, np.int64)
    _, keep = mech.release(counts, rng)
    c.step(mech, "categories", f"values published when their noisy count reaches {mech.threshold}", ["categories"])
    kept = [k for k, ok in zip(keys, keep) if ok]
    if not kept:
        c.notes.append(f"{c.name}: no category reaches the {mech.threshold} records this ε needs to publish it; "
                       "declare its categories (or give a list), or raise ε.")
        c.estimated.pop("categories")
        return
    c.values["categories"] = tuple(_sorted(kept))


def _sorted(values: list) -> list:
    try:
        return sorted(values)
    except TypeError:
        return sorted(values, key=str)


def _decimals_step(c: _Column, values: np.ndarray, eps: float, rng) -> None:
    """The whole-number flag and the precision. The precision is the most decimals a clear noisy count
    needs. A column is called whole-numbered only on evidence: the noisy counts must show that values
    with decimals are at most :data:`~.constraints.WHOLE_MAX_SHARE` of the whole ones (the noisy count of
    values with decimals plus the threshold a sum of empty counts stays below). Absent that evidence it
    is left unrounded: rounding a column whose decimals the noise hides would move those values onto
    whole numbers (a column of 0s, 1s and 5 % fractions would lose its fractions to 0), while leaving a
    whole-numbered column unrounded moves nothing."""
    mech = Geometric(eps)
    noisy = mech.noisy(decimal_counts(values), rng)
    t = clear_threshold(eps, DECIMAL_CELLS, constraints.SCHEMA_FLAG_BETA)
    passed = np.flatnonzero(noisy >= t)
    need = int(passed.max()) if len(passed) else DECIMAL_CELLS - 1
    if need == 0:
        with_decimals = int(noisy[1:].sum()) + sum_threshold(eps, DECIMAL_CELLS - 1, constraints.SCHEMA_FLAG_BETA)
        if with_decimals > constraints.WHOLE_MAX_SHARE * noisy[0]:
            need = DECIMAL_CELLS - 1
            c.notes.append(f"{c.name}: at this ε the noisy counts cannot show that it holds whole numbers only "
                           f"(up to {with_decimals} values could have decimals); it is left unrounded. Declare it "
                           "whole-numbered if that is public.")
    c.values["integer"] = need == 0
    c.values["decimals"] = need if 0 < need < DECIMAL_CELLS - 1 else None
    c.step(mech, "precision", f"noisy counts of the decimals each value needs; a precision needs {t} values, "
           f"whole numbers when values with decimals are clearly at most {constraints.WHOLE_MAX_SHARE:.0%} of them", ["integer", "decimals"])


def _range(c: _Column, values: np.ndarray, eps: float, rng, coarse, integer: bool) -> float | None:
    """The bounds; returns the noisy count of the bucket {0} (log-spaced buckets only, else None)."""
    mech = RangeHistogram(eps, buckets=Buckets(coarse), beta=constraints.SCHEMA_RANGE_BETA)
    noisy = mech.noisy(mech.buckets.counts(values), rng)
    low, high, found = mech.bounds(noisy)
    where = (f"{mech.buckets.cells} equal buckets over the steward's range {coarse[0]:g} to {coarse[1]:g}"
             if coarse is not None else "log-spaced buckets")
    c.step(mech, "bounds", f"{where}; the outermost buckets whose noisy count reaches {mech.threshold}",
           ["lower", "upper"])
    zero = None if coarse is not None else float(noisy[mech.buckets.index(np.zeros(1))[0]])
    if not found:
        c.estimated.pop("lower"), c.estimated.pop("upper")
        if coarse is not None:  # the steward's own range, public
            c.values["bounds"], c.values["declared"] = (float(coarse[0]), float(coarse[1])), {"lower", "upper"}
            return zero
        c.notes.append(f"{c.name}: no bucket of values reaches the {mech.threshold} records this ε needs to place "
                       "its bounds; declare them (or give a coarse range), or raise ε.")
        return zero
    if c.values.get("integer", integer):
        low, high = math.floor(low), math.ceil(high)
    c.values["bounds"] = (float(low), float(high))
    return zero


def _specials(c: _Column, values: np.ndarray, eps: float, delta: float, rng, total: float, zero: float | None,
              listed=None) -> None:
    """Special values: 0 by ``zero`` (the range's noisy count of the bucket {0}) when given, and the other
    exact values by noisy counts of the values the steward ``listed``; or, with no list, by one histogram
    over the exact values in which the public codes :data:`~.constraints.COMMON_SPECIALS` are always
    counted (a clear noisy count suffices: their keys are public) and any other value is published only
    past the thresholded histogram's threshold (its δ). Each record is in one cell of that histogram, so
    the two parts share its ε. A value is kept when it holds SPECIAL_MIN_SHARE of ``total``."""
    rest = values[values != 0] if zero is not None else values
    least = constraints.SPECIAL_MIN_SHARE * max(total, 1.0)
    zero_note = "; 0 by the bounds' noisy count of the bucket {0}" if zero is not None else ""
    share = f"kept when it is at least {constraints.SPECIAL_MIN_SHARE:.0%} of the noisy count of numbers{zero_note}"
    public = listed if listed is not None else constraints.COMMON_SPECIALS
    keys = [float(v) for v in public if not (zero is not None and float(v) == 0)]
    flag = clear_threshold(eps, max(len(keys), 1), constraints.SCHEMA_FLAG_BETA)
    mech = Geometric(eps) if listed is not None else ThresholdedHistogram(eps, delta=delta)
    noisy = Geometric(eps).noisy(np.array([(rest == k).sum() for k in keys], dtype=np.int64), rng)
    keep = noisy >= flag
    if listed is not None:
        c.step(mech, "special values", f"noisy counts of the {len(keys)} values the steward listed; {share}",
               ["specials"])
    else:
        others, counts = value_counts(rest[~np.isin(rest, keys)])
        more, passed = mech.release(np.asarray(counts, dtype=np.int64), rng)
        keys, noisy, keep = keys + others, np.concatenate([noisy, more]), np.concatenate([keep, passed])
        c.step(mech, "special values", f"noisy counts of the {len(keys) - len(others)} common codes "
               f"({', '.join(f'{v:g}' for v in keys[:len(keys) - len(others)])}), kept past {flag}; any other "
               f"exact value published when its noisy count reaches {mech.threshold}; {share}", ["specials"])
    found = [(k, v) for k, v, ok in zip(noisy, keys, keep) if ok] + ([(zero, 0.0)] if zero is not None else [])
    chosen = sorted((float(-k), float(v)) for k, v in found if k >= least)
    c.values["specials"] = tuple(v for _, v in chosen[:constraints.MAX_SPECIALS])


def _estimate_column(series: pd.Series, col: ColumnSchema, eps: float, delta: float, rng, *, seeded: bool,
                     coarse=None, candidates=None, specials=None) -> tuple[ColumnSchema, list[Step], list[str]]:
    """One column's estimate at (ε, δ): the new column, its steps and its notes."""
    kind_known = "kind" not in col.derived_fields
    plan = _plan(col, kind_known, candidates is not None)
    c = _Column(str(col.name), eps, delta, seeded, {}, {}, [], [])
    if not plan:
        return col, [], []
    full = plan if kind_known else ["presence", "decimals", "range", "specials"]  # either kind weighs 9 more
    total = _presence(c, series, col, kind_known, _share(eps, full, "presence"), rng) if "presence" in plan else None
    kind = c.values.get("kind", col.kind)
    if not kind_known:
        plan = ["presence"] + {"numeric": ["decimals", "range", "specials"], "categorical": ["categories"]}.get(kind, [])
        full = ["presence", "decimals", "range", "specials"]
    if "categories" in plan:
        step_delta = delta if candidates is None else 0.0
        _categories(c, series, _share(eps, full, "categories"), step_delta, rng, candidates)
    numbers = as_numbers(series)
    numbers = numbers[np.isfinite(numbers)]
    if "decimals" in plan:
        _decimals_step(c, numbers, _share(eps, full, "decimals"), rng)
    if "range" in plan:
        zero = _range(c, numbers, _share(eps, full, "range"), rng, coarse, col.integer)
        _specials(c, numbers, _share(eps, full, "specials"), delta, rng, total if total is not None else len(numbers),
                  zero, specials)
    # δ is spent by a thresholded histogram: special values or categories without a steward's list.
    thresholded = (not kind_known or ("range" in plan and specials is None)
                   or ("categories" in plan and candidates is None))
    _reserve(c, eps, delta if thresholded else 0.0)
    return _column_from(col, c, kind, series, numbers), c.steps, c.notes


def _reserve(c: _Column, eps: float, delta: float) -> None:
    """Record the column's budget in full: a path that stopped early spends less, but the guarantee is the
    worst path's (the path was chosen from noisy counts)."""
    spent_eps, spent_delta = c.spent()
    if spent_eps < eps * (1 - 1e-12) or spent_delta < delta * (1 - 1e-12):
        c.steps.append(Step("reserved", f"schema estimate: {c.name} (budget of the steps this column skipped)",
                            max(eps - spent_eps, 0.0), delta=max(delta - spent_delta, 0.0),
                            detail="the steps are chosen from noisy counts; the guarantee is that of the longest path"))


def _column_from(col: ColumnSchema, c: _Column, kind: str, series: pd.Series, numbers: np.ndarray) -> ColumnSchema:
    """The estimated column: released values where the estimate found them, declared values kept, the rest
    read off the data."""
    v = c.values
    declared = col.declared_fields | col.estimated_fields if kind == col.kind else frozenset()
    pick = {f: f not in declared for f in ("categories", "lower", "upper", "integer", "nullable", "decimals",
                                           "specials")}
    categories = bounds = None
    if kind == "categorical":
        categories = v.get("categories") if pick["categories"] and "categories" in v else col.categories
        if categories is None:  # the kind was estimated and no category was found: the data's own
            categories = tuple(_sorted(value_counts(series)[0])) or ("",)
    if kind == "numeric":
        bounds = col.bounds
        if "bounds" in v:
            lo, hi = v["bounds"]
            bounds = (lo if pick["lower"] else bounds[0], hi if pick["upper"] else bounds[1])
        elif bounds is None:  # the kind was estimated and the range was not found: the data's own
            bounds = (float(numbers.min()), float(numbers.max())) if len(numbers) else (0.0, 0.0)
    integer = v["integer"] if pick["integer"] and "integer" in v else col.integer
    decimals = v["decimals"] if pick["decimals"] and "integer" in v else col.decimals
    specials = v["specials"] if pick["specials"] and "specials" in v else col.specials
    nullable = v["nullable"] if pick["nullable"] and "nullable" in v else col.nullable
    estimated = {f: e for f, e in c.estimated.items() if f == "kind" or pick.get(f, True)}
    kept = (col.estimated if kind == col.kind else ())
    new = ColumnSchema(name=col.name, kind=kind, categories=categories, bounds=bounds, integer=integer,
                       nullable=nullable, decimals=decimals if kind == "numeric" else None,
                       specials=specials if kind == "numeric" else (), derived_fields=frozenset(),
                       estimated={**dict(kept), **estimated},
                       estimate_steps=col.estimate_steps + tuple(_step_dict(s, c.seeded) for s in c.steps),
                       reason=f"estimated privately (ε = {sum(s.epsilon for s in c.steps):.3g} for this column)",
                       n_missing=col.n_missing)
    # A field neither declared nor estimated (nothing passed its threshold) is still read off the data; the
    # steward's coarse range, used as the bounds when no bucket passed, is declared.
    derived = new.relevant_fields - new.estimated_fields - ((declared | v.get("declared", set())) & new.relevant_fields)
    return new.replace(derived_fields=frozenset(derived), estimated=new.estimated)


def _step_dict(step: Step, seeded: bool) -> dict:
    out = {k: v for k, v in step.to_dict().items() if k != "epsilon_total"}
    if seeded:
        out["seeded"] = True
    return out


# -- the table -----------------------------------------------------------------------------------------

def columns_to_estimate(schema: Schema, candidates: dict | None = None) -> list[str]:
    """The columns with a field the estimate would release (decided by the declarations alone)."""
    return [n for n, col in schema.columns.items()
            if _plan(col, "kind" not in col.derived_fields, n in (candidates or {}))]


def estimate_schema(df: pd.DataFrame, epsilon: float, *, base: Schema | None = None,
                    delta: float = constraints.SCHEMA_ESTIMATE_DELTA, ranges: dict | None = None,
                    candidates: dict | None = None, specials: dict | None = None,
                    seed: int | None = None) -> SchemaEstimate:
    """Estimate every field of ``base`` still read off the data, privately, at (ε, δ) in all.

    Parameters
    ----------
    df : pandas.DataFrame
        The confidential table.
    epsilon : float
        The estimate's whole budget (module docstring for its split).
    base : Schema, optional
        The schema as it stands (declared values are kept and cost nothing); None: inferred from ``df``,
        every field read off the data.
    delta : float
        δ of the thresholded histograms, in all.
    ranges : dict, optional
        ``{column: (low, high)}``: a coarse range the steward gives; the bounds are then found among
        equal-width buckets inside it, not the log-spaced ones.
    candidates : dict, optional
        ``{column: [categories]}``: a list the steward gives; the categories are then those of it with
        a clear noisy count (ε-DP, no δ).
    specials : dict, optional
        ``{column: [values]}``: candidate special values the steward gives (0 is always a candidate);
        those holding ``SPECIAL_MIN_SHARE`` of the column by a noisy count are kept (ε-DP, no δ).
    seed : int, optional
        Fixed randomness for tests and benchmarks: the estimate is then not DP (its steps say so).
        None (the default): the noise comes from the secret ChaCha20 stream of
        :mod:`.privacy.randomness`, keyed by fresh operating-system entropy.
    """
    epsilon = check_epsilon(epsilon)
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    schema = schema_of(df, base)
    ranges, candidates, specials = dict(ranges or {}), dict(candidates or {}), dict(specials or {})
    for where, given in (("ranges", ranges), ("candidates", candidates), ("specials", specials)):
        unknown = [c for c in given if c not in schema.columns]
        if unknown:
            raise ValueError(f"{where} names a column {unknown[0]!r} that the data does not have.")
    todo = columns_to_estimate(schema, candidates)
    rng = noise_generator(seed)  # the secret privacy-noise stream (privacy/randomness.py)
    cols, steps, notes = dict(schema.columns), [], []
    for name in todo:
        cols[name], col_steps, col_notes = _estimate_column(
            df[name], schema[name], epsilon / len(todo), delta / len(todo), rng, seeded=seed is not None,
            coarse=ranges.get(name), candidates=candidates.get(name), specials=specials.get(name))
        steps += col_steps
        notes += col_notes
    for name, col in cols.items():  # fields no step releases (special values beside declared bounds, say)
        left = [f for f in col.relevant_fields if f in col.derived_fields]
        if left and not any(n.startswith(f"{name}: ") for n in notes):
            notes.append(f"{name}: its {', '.join(sorted(left))} are still read off the data and no step of the "
                         "estimate releases them beside what is declared; declare them or type them in the table.")
    if not todo and not notes:
        notes.append("Every field is declared or estimated already: nothing to estimate.")
    keys = tuple(k for k in schema.keys if cols[k].kind != "excluded")
    sensitive = schema.sensitive if schema.sensitive and cols[schema.sensitive].kind != "excluded" else None
    return SchemaEstimate(Schema(cols, keys, sensitive), tuple(steps), tuple(notes), seed is not None)


def estimate_and_record(df: pd.DataFrame, epsilon: float, *, use: Use, store: LedgerStore | None = None,
                        **options) -> SchemaEstimate:
    """:func:`estimate_schema`, checked against the dataset's cap before the data are read and recorded in the
    ledger store before it is returned (``use`` with purpose "schema estimate"), as :func:`.synth.synthesize`
    records a synthesis: an estimate whose entry cannot be written raises and returns nothing.
    ``options``: those of :func:`estimate_schema`."""
    store = LedgerStore() if store is None else store
    delta = options.get("delta", constraints.SCHEMA_ESTIMATE_DELTA)
    refusal = store.refusal(use.fingerprint, epsilon=check_epsilon(epsilon), delta=delta, rho=None)
    if refusal:
        raise BudgetExceeded(refusal)
    est = estimate_schema(df, epsilon, **options)
    if est.steps:
        store.record(use, est.entry(rows=len(df)))
    return est
