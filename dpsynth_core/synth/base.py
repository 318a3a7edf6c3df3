"""The synthesizer interface, the registry and :func:`synthesize`.

Every synthesizer has two phases (docs/methods.md#synthesizers):

* ``measure`` — the only step that reads the confidential data (counts,
  sufficient statistics, fitted trees). It spends no randomness, so its
  result is cached per dataset content and reused for every ε and seed.
* ``generate`` — noise and sampling: takes the measurement, ε and two numpy
  Generators (``noise``, the secret stream every privacy mechanism draws from, and
  ``rng``, which samples records from what was released: :mod:`..privacy.randomness`),
  returns synthetic values and the mechanism steps it ran.

A synthesizer is one module: a subclass with every fact of the method on it — its options
(:mod:`.options`), the way it spends ε (``spends``, :mod:`..privacy.budget`), its place in the picker
(``rank``), its forecast and whether the method suggestion may name it (``forecast``,
``suggest_priority`` and ``suggestion``), its own limits as class attributes — registered with
:func:`register` and imported in ``synth/__init__.py``. The page, the forecast, the suggestion, the
R-U map, the release, the report, the CLI and the common tests then find it in :data:`SYNTHESIZERS`.
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
from ..errors import BudgetExceeded, DataError, MethodRefused
from ..privacy import NONE, TOTAL, Budget, Entry, Geometric, LedgerStore, Step, Use, build_ledger
from ..privacy.mechanisms import check_epsilon
from ..privacy.randomness import streams
from ..schema import Schema, schema_of
from .encoding import assemble_frame
from .forecasting import Forecast, no_forecast
from .options import Option, resolve


class Synthesizer:
    """Base class: subclasses set the class attributes and the two phases."""

    name: ClassVar[str]
    label: ClassVar[str]
    is_dp: ClassVar[bool]
    description: ClassVar[str]
    #: the method's options, each with its type, range, default and help (the page's widgets)
    options: ClassVar[tuple[Option, ...]] = ()
    #: how a DP method spends ε: all of it (TOTAL), none (NONE) or per record (PER_RECORD)
    spends: ClassVar[Budget] = Budget(TOTAL)
    #: can condition on kept columns (partial synthesis row for row)
    conditional: ClassVar[bool] = False
    #: a limit of the guarantee a DP method's ledger states (e.g. floating-point noise)
    caveat: ClassVar[str] = ""
    #: the measure step also takes a Dask DataFrame, summed partition by partition (see .counting)
    partitioned: ClassVar[bool] = False
    #: place in the method picker and the R-U map's list, lowest first, every DP method before every other
    #: whatever its rank; equal ranks keep the order of registration. The shipped methods: the marginal-based
    #: ones, then the other DP methods from most to least useful at a total ε (bench/bench_seed_methods.py),
    #: then the non-DP references. Without one, a method follows the ranked methods of its kind.
    rank: ClassVar[float] = math.inf
    #: whether :func:`dpsynth_core.suggest_method` may name this method: it asks the DP methods that have a
    #: priority, lowest first (equal priorities in picker order), and names the first whose
    #: :meth:`suggestion` gives a reason. None: never suggested.
    suggest_priority: ClassVar[int | None] = None
    #: a DP method's empirical privacy audits (:class:`~dpsynth_core.privacy.audit.Audit`), the first its main one:
    #: the common tests, the app and ``dpsynth audit`` run them; a DP method without one fails the common tests
    audits: ClassVar[tuple] = ()

    def not_dp_reasons(self, **params) -> list[str]:
        """Reasons a DP method's run with these options is not DP (a choice read off the data)."""
        return []

    def forecast(self, schema: Schema, epsilon: float, n: int | None = None, **params) -> Forecast:
        """Utility forecast at TOTAL budget ``epsilon`` from the schema, ε, n (None: not declared) and
        the options (all of them, resolved) alone: it never sees the data. A method that declares none
        says so ("No forecast", level "unknown")."""
        return no_forecast(self.label)

    def suggestion(self, schema: Schema, epsilon: float, n: int | None, forecast: Forecast | None) -> str | None:
        """Why the method suggestion may name this method here, or None: not here.

        Asked only when ``suggest_priority`` is set, with public facts only: the schema, the TOTAL
        ``epsilon``, ``n`` (None: not declared) and this method's own ``forecast`` at its default options
        (None when the schema models no column). The reason is the end of the sentence "Suggested at
        ε = …: <label>", from its punctuation on.
        """
        return None

    def refuse(self, schema: Schema, columns: list[str], n: int | None, **params) -> str | None:
        """One sentence saying why this method cannot handle the data, or None.

        Called before any work is done, with the public facts only: the schema, the declared number
        of synthetic rows ``n`` (None when it is not declared: it will be a noisy count, up to
        ``constraints.MAX_SYNTH_ROWS``) and the options. Never the data, its row count or any value:
        a refusal that changed between n and n + 1 confidential rows would itself leak, so a DP
        method that cannot bound its work without the data's size must work in pieces instead. The
        sentence quotes no count or value of the data.
        """
        return None

    def measure(self, df: pd.DataFrame, schema: Schema, columns: list[str], **params) -> Any:
        """What the method needs of the data for ``columns`` (exact counts, statistics, fitted models):
        the only step that reads it. No randomness: the result is cached per data and options."""
        raise NotImplementedError

    def generate(self, measured: Any, *, epsilon: float | None, n: int, rng: np.random.Generator,
                 **params) -> tuple[dict[str, np.ndarray], list[Step]]:
        """``n`` synthetic values per column from ``measured``, and the ledger steps of the mechanisms it
        ran. ``epsilon`` is what the declared budget gives one implicate (per record or block for
        PER_RECORD, 0 for NONE, None for a method that is not DP); the steps must spend exactly that,
        times the units for PER_RECORD (the core checks them).

        A DP method also gets ``noise``: every draw of a privacy mechanism (noise, a private choice, a
        perturbed draw) comes from it, and only the sampling of records from released quantities from
        ``rng`` (:mod:`..privacy.randomness`). ``noise=None`` (a test driving ``generate`` by hand)
        means ``rng``. A method that is not DP gets ``rng`` alone."""
        raise NotImplementedError

    @property
    def defaults(self) -> dict:
        """Each declared option's default, by name."""
        return {o.name: o.default for o in self.options}

    def resolve(self, params: dict) -> dict:
        """The options a run uses: the declared defaults overridden by ``params``, each checked."""
        return resolve(self.options, params, self.label)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} is_dp={self.is_dp}>"


SYNTHESIZERS: dict[str, Synthesizer] = {}


def register(cls: type[Synthesizer]) -> type[Synthesizer]:
    """Class decorator adding one instance of ``cls`` to :data:`SYNTHESIZERS`, kept in picker order
    (DP methods first, then by ``rank``, then in the order of registration)."""
    SYNTHESIZERS[cls.name] = cls()
    ordered = sorted(SYNTHESIZERS.items(), key=lambda item: (not item[1].is_dp, item[1].rank))  # stable
    SYNTHESIZERS.clear()
    SYNTHESIZERS.update(ordered)
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
    schema = schema if dask else schema_of(df, schema)
    params = synth.resolve(params)
    # a DP method's refusal sees no count of the data (Synthesizer.refuse); the synthetic n is not known here
    refusal = synth.refuse(schema, schema.used, None if synth.is_dp else len(df), **params)
    if refusal:
        raise MethodRefused(refusal)
    return synth.measure(df, schema, schema.used, **params) if dask else _measured(synth, df, schema, schema.used, params)


# -- the public entry point --------------------------------------------------

def make_rng(seed: int | np.random.Generator | None) -> np.random.Generator:
    """One Generator from ``seed`` (None: fresh operating-system entropy), for the teaching demos; a
    synthesis draws from two (:func:`..privacy.randomness.streams`)."""
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
    use: Use | None = None,
    store: LedgerStore | None = None,
    confidential: bool = True,
    **params: Any,
) -> Synthesis:
    """Make a synthetic version of ``df`` with ``method``, recorded in the ledger store before it is returned.

    Parameters
    ----------
    df : pandas.DataFrame
        The confidential data.
    method : str
        A name in :data:`SYNTHESIZERS`.
    epsilon : float, optional
        The TOTAL privacy budget of the release, required by DP methods and
        ignored by the others. Per-record methods (``spends`` PER_RECORD) spend it as
        ε per record (or block) = their share of the total / number of records
        (blocks); the ledger shows both figures. A method that spends none
        (NONE) needs it only for a noisy row count, when ``n`` is not declared.
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
        such runs can be labelled DP. The privacy noise and the sampling of
        records come from two separate streams (:mod:`..privacy.randomness`),
        both derived from the seed when one is given.
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
    use : dpsynth_core.privacy.Use, optional
        Which dataset the rows come from and why (the steward's name, the
        content fingerprint of the whole table, the purpose, the source),
        for the ledger store. Default: an unnamed table known by the
        fingerprint of ``df``, purpose "exploration", source "python".
    store : dpsynth_core.privacy.LedgerStore, optional
        The ledger store; default the user's (:func:`dpsynth_core.privacy.default_path`).
    confidential : bool, default True
        False only for rows that are not confidential (a public look-alike
        file, data made up for a test or a teaching demo): then no cap is
        checked and nothing is recorded. Never pass it for the steward's
        data: the run's privacy loss would go unaccounted.
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
    BudgetExceeded
        A DP run would take the dataset past its cap (a MethodRefused, raised before the data are read).
    LedgerError
        The run's entry could not be written to the store: nothing is returned.

    Notes
    -----
    Written before it is shown: the cap is checked before the data are read, and the run's entry
    (:class:`dpsynth_core.privacy.Entry`) is written, on disk, after computing and before returning.
    If it cannot be written, nothing is returned (fail closed); a process killed after the write has
    recorded what it spent.
    """
    args = dict(epsilon=epsilon, delta=delta, schema=schema, n=n, seed=seed, columns=columns, implicates=implicates,
                holdout_share=holdout_share, measured=measured, **params)
    if not confidential:
        return compute_synthesis(df, method, **args)
    if method not in SYNTHESIZERS:
        raise ValueError(f"unknown method {method!r}; choose one of {sorted(SYNTHESIZERS)}")
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    use = Use("unnamed table", fingerprint(df)) if use is None else use
    store = LedgerStore() if store is None else store
    refusal = _cap_refusal(SYNTHESIZERS[method], store, use, epsilon, delta, seed)
    if refusal:
        raise BudgetExceeded(refusal)
    result = compute_synthesis(df, method, **args)
    store.record(use, Entry.of_ledger(result.ledger, rows=len(df)))
    return result


def _cap_refusal(synth: Synthesizer, store: LedgerStore, use: Use, epsilon, delta, seed) -> str | None:
    """The cap's sentence for a run that would be DP, checked before the data are read, else None.

    Only a DP method with fresh randomness and ε to spend draws on the budget (a seeded run is a look
    without a guarantee, counted apart). Its ρ is bounded by ε²/2 for a pure ε method (the squares of
    its steps' ε sum to at most the square of their sum); an (ε, δ) method's ρ is not known before it
    runs, so the check uses basic composition, which bounds the total from above as well.
    """
    if not synth.is_dp or seed is not None or not epsilon:
        return None
    try:
        epsilon = check_epsilon(epsilon)
        spent_delta = (float(delta) or constraints.DEFAULT_DELTA) if synth.spends.needs_delta else 0.0
    except (TypeError, ValueError):
        return None  # the synthesis itself says what is wrong with them
    needs_delta = synth.spends.needs_delta
    return store.refusal(use.fingerprint, epsilon=epsilon, delta=spent_delta,
                         rho=None if needs_delta else epsilon * epsilon / 2)


def compute_synthesis(df: pd.DataFrame, method: str, *, epsilon=None, delta=0.0, schema=None, n=None, seed=None,
                      columns=None, implicates=1, holdout_share=None, measured=None, **params: Any) -> Synthesis:
    """What :func:`synthesize` computes, without the ledger store: no cap is checked and no entry written.

    Only for a caller that records the run itself before anything of it is shown (the R-U sweep
    records each point in its parent process as the point arrives, so remote workers need no access
    to the store). Parameters and result as :func:`synthesize`.
    """
    if method not in SYNTHESIZERS:
        raise ValueError(f"unknown method {method!r}; choose one of {sorted(SYNTHESIZERS)}")
    synth = SYNTHESIZERS[method]
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    if len(df) == 0:
        raise DataError("The data has no rows; load a file with at least one row of data.")

    declared = Schema.from_dict(schema) if isinstance(schema, dict) else schema
    schema = schema_of(df, declared)
    schema.check_frame(df)
    schema_steps = schema_estimate_steps(schema)
    schema_eps = math.fsum(s.total_epsilon for s in schema_steps)

    epsilon = _checked_arguments(synth, epsilon, delta, n, implicates, columns, schema_eps)
    used = schema.used
    targets = _targets(used, columns, n, len(df))

    params = synth.resolve(params)
    kept = [c for c in used if c not in targets]
    # A DP run's refusal sees public facts only (Synthesizer.refuse); a run that is not DP (a method that
    # is not, or a partial synthesis, which keeps the rows) releases len(df) rows anyway.
    refusal_n = n if n is not None else None if synth.is_dp and not kept else len(df)
    refusal = synth.refuse(schema, targets, refusal_n, **params)
    if refusal:
        raise MethodRefused(refusal)

    rng, noise = streams(seed)
    n, count_steps, row_count_source = _row_count(synth, df, n, epsilon, kept, noise, schema_eps)
    budget, plan = synth.spends, None
    if synth.is_dp:
        plan = budget.plan(epsilon, n=n, row_count=float(sum(s.epsilon for s in count_steps)), implicates=implicates,
                           params=params, delta=budget.run_delta(delta), schema=schema_eps)
    if kept and synth.conditional:
        measured = _measured(synth, df, schema, used, {**params, "targets": targets})
        extra = {"keep": df[kept]}
    else:
        measured = _measured(synth, df, schema, targets, params) if measured is None else measured
        extra = {}
    implicate_delta = budget.implicate_delta(delta, implicates)
    if implicate_delta is not None:  # (ε, δ) methods need δ > 0: the default when none is asked for
        extra["delta"] = implicate_delta
    if synth.is_dp:
        extra["noise"] = noise
    frames, parts = [], []
    for m in range(implicates):
        values, part = synth.generate(measured, epsilon=None if plan is None else plan.generation_epsilon, n=n,
                                      rng=rng, **extra, **params)
        values.update({c: df[c].to_numpy() for c in kept})  # conditional methods return only the targets
        frames.append(assemble_frame(values, schema, df.columns, n))
        parts.append([dataclasses.replace(st, implicate=m + 1) for st in part] if implicates > 1 else part)
    if plan is not None:
        budget.check(plan, count_steps, parts, implicate_delta=implicate_delta)  # a mismatch is a bug

    ledger = build_ledger(synth, schema, plan=plan, delta=delta, n=n, implicates=implicates,
                          row_count_source=row_count_source,
                          steps=schema_steps + count_steps + [st for part in parts for st in part], targets=targets,
                          kept=kept, seed=seed, params=params, holdout_share=holdout_share)
    return Synthesis(data=frames[0], method=method, ledger=ledger, schema=schema, implicates=tuple(frames))


def _checked_arguments(synth: Synthesizer, epsilon, delta, n, implicates, columns, schema_eps: float) -> float | None:
    """The run's total ε, checked with the other arguments a run takes (δ, n, implicates): a wrong one
    is a ValueError saying what is allowed, before anything reads the data."""
    if synth.is_dp:
        epsilon = _checked_epsilon(synth, epsilon, n_declared=n is not None or columns is not None)
        if epsilon is not None and schema_eps >= epsilon * (1 - 1e-9):
            raise MethodRefused(f"The schema's private estimate spent ε = {schema_eps:.4g} of the data, and the "
                                f"release's total ε = {epsilon:g} must cover it and the synthesis: choose a total "
                                "ε above it, or declare the schema's values.")
    if not (0.0 <= float(delta) < 1.0):
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")
    if n is not None and not 1 <= int(n) <= constraints.MAX_SYNTH_ROWS:
        raise ValueError(f"n must be between 1 and {constraints.MAX_SYNTH_ROWS:,}, got {n}")
    if isinstance(implicates, bool) or not isinstance(implicates, (int, np.integer)) \
            or not 1 <= implicates <= constraints.MAX_IMPLICATES:
        raise ValueError(f"implicates must be an integer from 1 to {constraints.MAX_IMPLICATES}, got {implicates!r}")
    return epsilon


def _targets(used: list[str], columns, n, rows: int) -> list[str]:
    """The columns a run synthesizes: every modelled column, or the named ones of a partial synthesis
    (which keeps the others' values row for row, so n must be the data's row count)."""
    targets = used if columns is None else [c for c in used if c in set(columns)]
    if columns is not None:
        unknown = sorted(set(columns) - set(used))
        if unknown:
            raise ValueError(f"cannot synthesize {unknown}: not modelled columns of the schema")
        if n is not None and n != rows:
            raise ValueError("partial synthesis keeps rows one for one, so n must equal len(df)")
    if not targets:
        raise DataError("No column can be synthesized; mark at least one column as categorical or numeric.")
    return targets


def _checked_epsilon(synth: Synthesizer, epsilon, *, n_declared: bool) -> float | None:
    """The total ε of a DP method's run, checked; None for a method that spends none with n declared
    (nothing of the data is then read, so no ε is asked for or shown)."""
    if synth.spends.kind == NONE:
        if n_declared:
            return None  # it reads nothing of the data: ε is not used, as for a method that is not DP
        if epsilon is None or epsilon == 0:
            raise ValueError(f"{synth.label} reads nothing of the data, but without a declared number of "
                             "rows it releases a noisy count of them: declare n, or give epsilon > 0 for "
                             "the count")
    elif epsilon is None:
        raise ValueError(f"method {synth.name!r} is differentially private and needs epsilon > 0")
    return check_epsilon(epsilon)


def schema_estimate_steps(schema: Schema) -> list[Step]:
    """The ledger steps of the schema's private estimates (:mod:`..schema_estimate`): spent once on the
    data, listed and paid for by every synthesis that uses the schema."""
    names = {f.name for f in dataclasses.fields(Step)}
    return [Step(**{k: v for k, v in st.items() if k in names}) for st in schema.estimate_steps]


def _row_count(synth: Synthesizer, df: pd.DataFrame, n: int | None, epsilon: float | None,
               kept: list[str], noise: np.random.Generator, schema_eps: float = 0.0) -> tuple[int, list[Step], str]:
    """The number of synthetic rows, and the budget it cost.

    Under add/remove-one neighbours the exact row count is itself a statistic
    of the data, so a DP method with no declared ``n`` releases a noisy count
    (two-sided geometric, sensitivity 1) with its declared share of the ε the
    schema's estimate (``schema_eps``) left.
    """
    if n is not None:
        return int(n), [], "declared by the user (public)"
    if not synth.is_dp or kept:
        return len(df), [], "the number of rows in the data (this run is not DP)"
    share = synth.spends.row_count_share
    mechanism = Geometric(synth.spends.row_count_epsilon(epsilon, schema_eps))
    noisy = max(1, len(df) + int(mechanism.sample(noise, 1)[0]))
    step = mechanism.step("number of rows",
                          detail=f"{share:.0%} of ε; the result sets the synthetic row count")
    return min(noisy, constraints.MAX_SYNTH_ROWS), [step], f"released with noise (ε = {mechanism.epsilon:.4g})"
