"""The synthesizer interface, the registry and :func:`synthesize`.

Every synthesizer has two phases (METHODS.md §2):

* ``measure`` — the only step that reads the confidential data (counts,
  sufficient statistics, fitted trees). It spends no randomness, so its
  result is cached per dataset content and reused for every ε and seed.
* ``release`` — noise and sampling: takes the measurement, ε and one numpy
  Generator, returns synthetic values and the mechanism steps it ran.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import threading
from collections import OrderedDict
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .. import constraints
from ..errors import DataError, MethodRefused
from ..mechanisms import check_epsilon, geometric_noise
from ..schema import Schema, infer_schema, merge_declared
from .encoding import assemble_frame

NEIGHBOURING = "add or remove one record (unbounded DP)"


@dataclass(frozen=True)
class Step:
    """One mechanism run during a release, for the ledger.

    ``repeats`` counts identical runs on the same records (one per synthetic
    record for per-record methods): they compose sequentially, so the step
    costs ``epsilon * repeats``.
    """

    mechanism: str
    target: str
    epsilon: float
    delta: float = 0.0
    sensitivity: float | None = None
    detail: str = ""
    repeats: int = 1
    implicate: int | None = None

    @property
    def total_epsilon(self) -> float:
        return self.epsilon * self.repeats

    @property
    def total_delta(self) -> float:
        return self.delta * self.repeats

    def to_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if v not in (None, "")}
        out["epsilon_total"] = self.total_epsilon
        return out


@dataclass(frozen=True)
class Forecast:
    """What a DP method is likely to keep, said before any run from public facts only.

    ``level``: "good", "fair", "poor" (expect near-uniform or noise-dominated
    output) or "unknown" (a fact it needs, such as n, is not declared).
    """

    sentence: str
    level: str


class Synthesizer:
    """Base class: subclasses set the class attributes and the two phases."""

    name: ClassVar[str]
    label: ClassVar[str]
    is_dp: ClassVar[bool]
    description: ClassVar[str]
    #: can condition on kept columns (partial synthesis row for row)
    conditional: ClassVar[bool] = False
    #: ``epsilon`` is spent once per synthetic record (PeGS, PMI): n_s records cost n_s·ε
    per_record: ClassVar[bool] = False
    #: what one per-record ε buys, formatted with the method's params
    #: (block PeGS: "block of {block} synthetic records")
    record_unit: ClassVar[str] = "synthetic record"
    #: a limit of the guarantee a DP method's ledger states (e.g. floating-point noise)
    caveat: ClassVar[str] = ""

    def units(self, n: int, **params) -> int:
        """How many times a per-record method spends its per-record ε for ``n`` synthetic rows."""
        return n
    #: the measure step also takes a Dask DataFrame, summed partition by partition (see .counting)
    partitioned: ClassVar[bool] = False

    def not_dp_reasons(self, **params) -> list[str]:
        """Reasons a DP method's run with these options is not DP (a choice read off the data)."""
        return []

    def forecast(self, schema: Schema, epsilon: float, n: int | None = None, **params) -> Forecast | None:
        """Utility forecast at TOTAL budget ``epsilon`` from the schema, ε, n (None: not declared) and
        the options alone: it never sees the data. None: no forecast of its own."""
        return None

    def refuse(self, schema: Schema, columns: list[str], n: int, **params) -> str | None:
        """One sentence saying why this method cannot handle the data, or None.

        Called before any work is done (no data is read).
        """
        return None

    def measure(self, df: pd.DataFrame, schema: Schema, columns: list[str], **params) -> Any:
        raise NotImplementedError

    def release(self, measured: Any, *, epsilon: float | None, n: int, rng: np.random.Generator,
                **params) -> tuple[dict[str, np.ndarray], list[Step]]:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} is_dp={self.is_dp}>"


SYNTHESIZERS: dict[str, Synthesizer] = {}

#: What each method option means, for the app's option widgets.
OPTION_HELP = {
    "bins": "Bins per numeric column (over its declared bounds).",
    "cat_bins": "Bins per numeric predictor when conditioning a categorical column.",
    "max_cells": "Largest conditional table of a categorical column; earlier columns beyond it are left out.",
    "top": "How many key features' exact values key each conditional.",
    "block": "Records drawn per block; a block costs ε.",
    "ranking": "How key features are chosen: 'public' (declared column order, DP) or 'data' (mutual "
               "information on the data, as in the paper; not DP).",
    "min_leaf": "Fewest real rows in a tree leaf (donors per leaf).",
    "fit_rows": "Rows the per-column models are fitted on (a fixed subsample above it).",
    "max_iter": "Iterations of each logistic-regression fit.",
    "C": "Inverse strength of the logistic regressions' L2 penalty.",
    "order": "Order in which columns are synthesized (each regressed on those before it).",
    "log_scale": "Model numeric columns whose public bounds are positive and span a factor ≥ 10 (prices) on "
                 "the log scale.",
    "max_predictors": "Most earlier columns a numeric column is regressed on (the first and the nearest).",
    "numeric_weight": "Shares of ε each numeric regression gets, against one for every other column.",
    "chains": ("Gibbs chains run side by side (default: one per 200 records): each record is swept from the "
               "previous synthetic record of its chain, the first from a uniform seed. Set it to the number of "
               "rows for one uniform seed "
               "per record, as in the paper (loses the marginals: one sweep from a uniform seed mostly sees "
               "keys the data never showed)."),
}


#: Order of the method picker and the R-U map's choices (issue 18): the marginal-based methods
#: first, then the other DP methods from most to least useful at a total ε (bench/bench_seed_methods.py),
#: then the non-DP references. Names not registered are skipped; methods not listed follow the listed
#: ones of their kind (DP or not) in registration order.
METHOD_ORDER = ("mst", "privbayes", "aim", "independent", "dp_seqreg", "pmi", "pegs", "pegs_rs", "dirichlet",
                "cart", "parametric", "bootstrap")


def register(cls: type[Synthesizer]) -> type[Synthesizer]:
    """Class decorator adding one instance of ``cls`` to :data:`SYNTHESIZERS`, kept in :data:`METHOD_ORDER`."""
    SYNTHESIZERS[cls.name] = cls()
    rank = {m: i for i, m in enumerate(METHOD_ORDER)}
    ordered = sorted(SYNTHESIZERS, key=lambda m: (not SYNTHESIZERS[m].is_dp, rank.get(m, len(rank))))
    items = [(m, SYNTHESIZERS[m]) for m in ordered]
    SYNTHESIZERS.clear()
    SYNTHESIZERS.update(items)
    return cls


@dataclass(frozen=True)
class Synthesis:
    """A synthetic dataset and its privacy ledger."""

    data: pd.DataFrame
    method: str
    ledger: dict
    schema: Schema = field(repr=False)
    #: all m implicates (``data`` is the first)
    implicates: tuple[pd.DataFrame, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        if not self.implicates:
            object.__setattr__(self, "implicates", (self.data,))


# -- measurement cache -------------------------------------------------------

_CACHE_SIZE = 8
_measure_cache: "OrderedDict[str, Any]" = OrderedDict()
_measure_lock = threading.Lock()  # the app runs sessions in threads; an OrderedDict is not thread-safe
# A caller's own cache instead of the module's, for the calls made inside ``measure_cache``: the app gives
# each session its own, so a session's measurements (which can hold its data) end with the session.
_caller_cache: ContextVar["OrderedDict[str, Any] | None"] = ContextVar("dpsynth_measure_cache", default=None)


@contextmanager
def measure_cache(store: "OrderedDict[str, Any]"):
    """Keep the measurements made inside this block in ``store`` rather than in the process-wide cache."""
    token = _caller_cache.set(store)
    try:
        yield store
    finally:
        _caller_cache.reset(token)


def fingerprint(df: pd.DataFrame) -> str:
    """Content hash of a frame (values, column names and dtypes), for caching."""
    h = hashlib.sha256()
    h.update(json.dumps([[str(c), str(t)] for c, t in df.dtypes.items()]).encode())
    h.update(pd.util.hash_pandas_object(df, index=False).to_numpy().tobytes())
    return h.hexdigest()


def _measured(synth: Synthesizer, df: pd.DataFrame, schema: Schema, columns: list[str], params: dict) -> Any:
    # Keyed by content: two sessions get the same entry only if they hold
    # the same data, so nothing of one user's data can reach another.
    key = json.dumps([synth.name, fingerprint(df), schema.to_dict(), columns, params],
                     sort_keys=True, default=str)
    cache = _caller_cache.get()
    cache = _measure_cache if cache is None else cache
    with _measure_lock:
        if key in cache:
            cache.move_to_end(key)
            return cache[key]
    value = synth.measure(df, schema, columns, **params)  # outside the lock: measuring can take seconds
    with _measure_lock:
        cache[key] = value
        while len(cache) > _CACHE_SIZE:
            cache.popitem(last=False)
    return value


def measurement(df: pd.DataFrame, method: str, *, schema: Schema | None = None, **params: Any) -> Any:
    """The measure step :func:`synthesize` runs for ``method`` on all modelled columns (cached).

    ``df`` may be a Dask DataFrame for methods marked ``partitioned``, with a
    declared ``schema``: the counts are then computed on its cluster.
    """
    synth = SYNTHESIZERS[method]
    dask = hasattr(df, "npartitions")
    if dask and (schema is None or not synth.partitioned):
        raise ValueError(f"{synth.label} needs the data in memory (a pandas DataFrame)" if schema is not None
                         else "A Dask DataFrame needs a declared schema: its domains cannot be read off the data.")
    schema = schema if dask else infer_schema(df) if schema is None else merge_declared(infer_schema(df), schema)
    params = {**getattr(synth, "defaults", {}), **params}
    refusal = synth.refuse(schema, schema.used, len(df), **params)
    if refusal:
        raise MethodRefused(refusal)
    return synth.measure(df, schema, schema.used, **params) if dask else _measured(synth, df, schema, schema.used, params)


# -- the public entry point --------------------------------------------------

def make_rng(seed: int | np.random.Generator | None) -> np.random.Generator:
    """One Generator from ``seed`` (None: fresh operating-system entropy)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")
    return np.random.default_rng(seed)


def synthesize(
    df: pd.DataFrame,
    method: str,
    *,
    epsilon: float | None = None,
    delta: float = 0.0,
    schema: Schema | dict | None = None,
    n: int | None = None,
    seed: int | np.random.Generator | None = None,
    columns: list[str] | None = None,
    implicates: int = 1,
    holdout_share: float | None = None,
    measured: Any = None,
    **params: Any,
) -> Synthesis:
    """Make a synthetic version of ``df`` with ``method``.

    Parameters
    ----------
    df : pandas.DataFrame
        The confidential data.
    method : str
        A name in :data:`SYNTHESIZERS`.
    epsilon : float, optional
        The TOTAL privacy budget of the release, required by DP methods and
        ignored by the others. Per-record methods (``per_record``) spend it as
        ε per record (or block) = their share of the total / number of records
        (blocks); the ledger shows both figures.
    delta : float, default 0
        Accepted for the (ε, δ) methods; pure ε-DP methods spend none.
    schema : Schema or dict, optional
        Public domain of each column. Without it the domain is read off the
        data and the release is labelled not DP.
    n : int, optional
        Number of synthetic rows, declared public. Without it a DP method
        releases a noisy count of the data's rows (a share of ε, shown in the
        ledger); a non-DP method uses ``len(df)``.
    seed : int or numpy.random.Generator, optional
        Same seed, same output: reproducible exploration, labelled not DP (the
        output is then a fixed function of the data). None (the default) draws
        fresh operating-system entropy that is never stored or returned; only
        such runs can be labelled DP.
    columns : list of str, optional
        Synthesize only these columns and keep the others row for row
        (partial synthesis; the release then contains original values and is
        not DP).
    implicates : int, default 1
        Number m of synthetic datasets; each gets 1/m of the budget.
    holdout_share : float, optional
        When ``df`` is what is left after holding out records (each with
        probability ``holdout_share``, by fresh secret randomness), the share,
        for the ledger. The held-out records are not used.
    measured : optional
        The result of :func:`measurement` for the same data, method, schema
        and options, computed once and reused (a sweep's workers); only
        without ``columns``.
    **params
        Method options (e.g. ``bins`` for methods that discretise).

    Returns
    -------
    Synthesis
        ``data`` is the first implicate; ``implicates`` holds all m.

    Raises
    ------
    MethodRefused
        The method cannot handle this data; the message says why and what to do.
    """
    if method not in SYNTHESIZERS:
        raise ValueError(f"unknown method {method!r}; choose one of {sorted(SYNTHESIZERS)}")
    synth = SYNTHESIZERS[method]
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    if len(df) == 0:
        raise DataError("The data has no rows; load a file with at least one row of data.")

    declared = Schema.from_dict(schema) if isinstance(schema, dict) else schema
    schema = infer_schema(df) if declared is None else merge_declared(infer_schema(df), declared)
    schema.check_frame(df)

    if synth.is_dp:
        epsilon = check_epsilon(epsilon) if epsilon is not None else _missing_epsilon(method)
    if not (0.0 <= float(delta) < 1.0):
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")
    if n is not None and not 1 <= int(n) <= constraints.MAX_SYNTH_ROWS:
        raise ValueError(f"n must be between 1 and {constraints.MAX_SYNTH_ROWS:,}, got {n}")
    if isinstance(implicates, bool) or not isinstance(implicates, (int, np.integer)) \
            or not 1 <= implicates <= constraints.MAX_IMPLICATES:
        raise ValueError(f"implicates must be an integer from 1 to {constraints.MAX_IMPLICATES}, got {implicates!r}")

    used = schema.used
    targets = used if columns is None else [c for c in used if c in set(columns)]
    if columns is not None:
        unknown = sorted(set(columns) - set(used))
        if unknown:
            raise ValueError(f"cannot synthesize {unknown}: not modelled columns of the schema")
        if n is not None and n != len(df):
            raise ValueError("partial synthesis keeps rows one for one, so n must equal len(df)")
    if not targets:
        raise DataError("No column can be synthesized; mark at least one column as categorical or numeric.")

    params = {**getattr(synth, "defaults", {}), **params}
    kept = [c for c in used if c not in targets]
    refusal = synth.refuse(schema, targets, n if n is not None else len(df), **params)
    if refusal:
        raise MethodRefused(refusal)

    rng = make_rng(seed)
    n, count_steps, row_count_source = _row_count(synth, df, n, epsilon, kept, rng)
    eps_each = None
    if synth.is_dp:
        eps_each = epsilon_each(synth, epsilon, n, count_epsilon=sum(s.epsilon for s in count_steps),
                                implicates=implicates, **params)
    if kept and synth.conditional:
        measured = _measured(synth, df, schema, used, {**params, "targets": targets})
        extra = {"keep": df[kept]}
    else:
        measured = _measured(synth, df, schema, targets, params) if measured is None else measured
        extra = {}
    if getattr(synth, "uses_delta", False):  # zCDP methods need δ > 0: the default when none is asked for
        extra["delta"] = (float(delta) or constraints.DEFAULT_DELTA) / implicates
    frames, steps = [], list(count_steps)
    for m in range(implicates):
        values, part = synth.release(measured, epsilon=eps_each, n=n, rng=rng, **extra, **params)
        values.update({c: df[c].to_numpy() for c in kept})  # conditional methods return only the targets
        frames.append(assemble_frame(values, schema, df.columns, n))
        steps += [dataclasses.replace(st, implicate=m + 1) for st in part] if implicates > 1 else part

    ledger = build_ledger(synth, schema, epsilon=epsilon, delta=delta, n=n, implicates=implicates,
                          row_count_source=row_count_source, steps=steps,
                          targets=targets, kept=kept, seed=seed, params=params, eps_each=eps_each,
                          holdout_share=holdout_share)
    return Synthesis(data=frames[0], method=method, ledger=ledger, schema=schema, implicates=tuple(frames))


def epsilon_each(synth: Synthesizer, epsilon: float, n: int, *, count_epsilon: float = 0.0,
                 implicates: int = 1, **params) -> float:
    """The ε one implicate's release gets from the total ``epsilon``; per record (block) for per-record methods.

    The noisy row count's ``count_epsilon`` comes off first, each implicate gets 1/m of the rest, and
    a per-record method divides its share over the records (blocks) it draws.

    >>> epsilon_each(SYNTHESIZERS["pegs"], 10.0, 100, count_epsilon=0.5)
    0.095
    """
    each = (epsilon - count_epsilon) / implicates
    return each / synth.units(n, **params) if synth.per_record else each


def _row_count(synth: Synthesizer, df: pd.DataFrame, n: int | None, epsilon: float | None,
               kept: list[str], rng: np.random.Generator) -> tuple[int, list[Step], str]:
    """The number of synthetic rows, and the budget it cost.

    Under add/remove-one neighbours the exact row count is itself a statistic
    of the data, so a DP method with no declared ``n`` releases a noisy count
    (two-sided geometric, sensitivity 1) with a share of ε.
    """
    if n is not None:
        return int(n), [], "declared by the user (public)"
    if not synth.is_dp or kept:
        return len(df), [], "the number of rows in the data (this run is not DP)"
    eps_n = epsilon * constraints.ROW_COUNT_EPSILON_SHARE
    noisy = max(1, len(df) + int(geometric_noise(1, eps_n, rng)[0]))
    step = Step("two-sided geometric", "number of rows", eps_n, sensitivity=1.0,
                detail=f"{constraints.ROW_COUNT_EPSILON_SHARE:.0%} of ε; the result sets the synthetic row count")
    return min(noisy, constraints.MAX_SYNTH_ROWS), [step], f"released with noise (ε = {eps_n:.4g})"


def _missing_epsilon(method: str):
    raise ValueError(f"method {method!r} is differentially private and needs epsilon > 0")


SEEDED_REASON = ("a fixed seed was given: reproducible exploration, not DP (the output is a fixed function of "
                 "the data and the seed; the mechanism itself is ε-DP only with fresh, secret randomness)")


def dp_but_for_seed(ledger: dict) -> bool:
    """True when the run's only reason not to be DP is its fixed seed: released with fresh
    randomness, the same settings would be DP (how the R-U map, which is exploration, labels points)."""
    return ledger["is_dp"] or ledger["not_dp_reasons"] == [SEEDED_REASON]


def build_ledger(synth: Synthesizer, schema: Schema, *, epsilon, delta, n, implicates, row_count_source,
                 steps: list[Step], targets: list[str], kept: list[str], seed, params: dict,
                 eps_each: float | None = None, holdout_share: float | None = None) -> dict:
    """The privacy ledger of one synthesis (METHODS.md §1), JSON-ready."""
    derived = [c for c in targets if schema[c].derived]
    undeclared = [c for c, col in schema.columns.items() if col.derived and c not in targets and c not in kept]
    reasons = []
    if not synth.is_dp:
        reasons.append(f"{synth.label} is not a differentially private method")
    if derived:
        reasons.append("data-derived bounds or categories for " + ", ".join(derived))
    if undeclared:
        reasons.append("no declared schema entry for " + ", ".join(undeclared)
                       + " (its kind was read off the data; declare every column, excluded ones too)")
    if kept:
        reasons.append("partial synthesis releases original values of " + ", ".join(kept))
    if synth.is_dp:
        reasons += synth.not_dp_reasons(**params)
        if seed is not None:
            reasons.append(SEEDED_REASON)
    is_dp = not reasons
    total = math.fsum(s.total_epsilon for s in steps) if synth.is_dp else None
    delta_spent = math.fsum(s.total_delta for s in steps)
    if synth.is_dp and not math.isclose(total, epsilon, rel_tol=1e-9):
        raise AssertionError(f"ledger steps spend ε={total}, expected {epsilon}")  # a bug, never user error
    unit = synth.record_unit.format(**params)
    units = synth.units(n, **params) if synth.per_record else None

    public_columns = {}
    for c in targets:
        col = schema[c]
        domain = {"categories": list(col.to_dict().get("categories", []))} if col.kind == "categorical" \
            else {"bounds": list(col.bounds)}
        public_columns[c] = {"kind": col.kind, **domain,
                             "source": "read off the data (not public)" if col.derived else "declared public"}
    if is_dp:
        label = f"ε-DP with ε = {total:g}" if delta_spent == 0 else f"(ε, δ)-DP with ε = {total:g}, δ = {delta_spent:g}"
        if synth.per_record:
            label += f" (ε = {eps_each:.4g} per {unit}, {units:,} × {implicates} implicate(s))" if implicates > 1 \
                else f" (ε = {eps_each:.4g} per {unit} × {units:,})"
    else:
        label = "not DP (" + "; ".join(reasons) + ")"
    composition = "none"
    if steps:
        composition = "sequential: the total is the sum of the steps' ε (each step's ε × its repeats)"
        if implicates > 1:
            composition += (f"; {implicates} implicates: {implicates}·{n:,} = {implicates * n:,} records "
                            f"released, each implicate of {n:,} records at ε/{implicates}")
    ledger = {
        "method": synth.name,
        "label": synth.label,
        "is_dp": is_dp,
        "dp_label": label,
        "not_dp_reasons": reasons,
        "epsilon_total": total,
        "epsilon_requested": float(epsilon) if synth.is_dp else None,
        "epsilon_per_record": float(eps_each) if synth.per_record and synth.is_dp else None,
        "record_unit": unit if synth.per_record else None,
        "epsilon_per_implicate": (float(epsilon) / implicates) if synth.is_dp else None,
        "implicates": implicates,
        "delta": float(delta_spent),
        "delta_requested": float(delta),
        "exp_epsilon": float(math.exp(total)) if total is not None and total < 700 else None,
        "neighbouring": NEIGHBOURING,
        "caveats": [synth.caveat] if synth.is_dp and synth.caveat else [],
        "composition": composition,
        "steps": [s.to_dict() for s in steps],
        "public": {
            "row_count": {"value": n, "source": row_count_source},
            "columns": public_columns,
        },
        "synthesized_columns": targets,
        "kept_columns": kept,
        "excluded_columns": [c for c, s in schema.columns.items() if s.kind == "excluded"],
        "n_rows": n,
        # None: fresh operating-system entropy, never stored, shown or returned.
        "seed": int(seed) if isinstance(seed, (int, np.integer)) else None if seed is None else "generator",
        "holdout": ({"taken": True, "share": float(holdout_share),
                     "how": "each record held out independently with this probability, by fresh secret "
                            "randomness; held-out records are not used by the synthesis"}
                    if holdout_share else {"taken": False}),
        "params": {k: v for k, v in params.items() if isinstance(v, (int, float, str, bool))},
    }
    ledger["statement"] = privacy_statement(ledger)
    return ledger


#: Total ε up to which the statement is shown as a plain success, and above which as a warning.
STRONG_EPSILON, WEAK_EPSILON = 1.0, 10.0


def strength_words(epsilon: float, ratio_text: str) -> str:
    """What e^ε means at this size, in one sentence."""
    if epsilon <= STRONG_EPSILON:
        return f"At e^ε = {ratio_text} the guarantee is strong."
    if epsilon <= WEAK_EPSILON:
        return (f"At e^ε = {ratio_text} the guarantee is moderate: an attacker's odds about any one person "
                "may grow by that factor.")
    return (f"e^ε = {ratio_text}: the guarantee is very weak; an attacker's odds about any one person may "
            "grow by that factor, so this output can reveal a great deal about individuals.")


def statement_tone(ledger: dict) -> str:
    """How the statement is shown: "success" (DP, ε ≤ 1), "info" (DP, ε ≤ 10) or "warning"
    (not DP, or ε above 10: never a reassuring green box)."""
    if not ledger["is_dp"]:
        return "warning"
    eps = ledger["epsilon_total"]
    return "success" if eps <= STRONG_EPSILON else "info" if eps <= WEAK_EPSILON else "warning"


def privacy_statement(ledger: dict) -> str:
    """The ledger in plain words, for people."""
    if not ledger["is_dp"]:
        return (f"This synthesis is not differentially private: {'; '.join(ledger['not_dp_reasons'])}. "
                "It carries no formal privacy guarantee.")
    eps = ledger["epsilon_total"]
    ratio = ledger["exp_epsilon"]  # None when e^ε overflows a float (ε ≥ 700)
    ratio_text = f"{ratio:,.2f}" if ratio is not None and ratio < 100 else \
        f"{ratio:,.0f}" if ratio is not None else f"e^{eps:g}, more than 10^300"
    text = (f"This synthesis satisfies {ledger['dp_label']} (neighbouring datasets: {ledger['neighbouring']}): "
            f"adding or removing any one person's record changes the probability of any output "
            f"by at most a factor e^ε = {ratio_text}. {strength_words(eps, ratio_text)}")
    if ledger["delta"] > 0:
        text += f" The bound may fail with probability at most δ = {ledger['delta']:g}."
    for caveat in ledger.get("caveats", []):
        text += f" Caveat: {caveat}"
    return text


def ledger_steps_table(ledger: dict) -> pd.DataFrame:
    """The ledger's mechanism steps as a table, plus a row with the composed total."""
    cols = ["implicate", "mechanism", "target", "epsilon", "repeats", "epsilon_total", "delta", "sensitivity"]
    steps = pd.DataFrame(ledger["steps"]).reindex(columns=cols)
    if ledger.get("implicates", 1) == 1:
        steps = steps.drop(columns="implicate")
    if steps["repeats"].fillna(1).eq(1).all():
        steps = steps.drop(columns=["repeats", "epsilon_total"])
    if len(steps):
        total = {"mechanism": "total (sequential composition)", "target": "",
                 "epsilon": ledger["epsilon_total"], "delta": ledger["delta"]}
        steps = pd.concat([steps, pd.DataFrame([total])], ignore_index=True)
    return steps
