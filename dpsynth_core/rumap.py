"""The risk-utility map (Duncan, Keller-McNulty & Stokes; docs/methods.md#risk-utility-map).

One point per (synthesizer, ε, replicate): a synthesis scored by utility
and disclosure-risk measures, plus two reference points: the original data
released as is, and the bootstrap. ε is the total ε of each synthesis for
every method (per-record methods spend it over their records), so the points
of all methods sit on one ε axis.

The map is exploration, not a release: each point records the integer seed it
used, so the app can rebuild exactly that synthesis when a point is chosen,
and a seeded synthesis is not DP (its ledger says so). Every point reads the
confidential data; a steward who picks ε from the map tunes on that data. So
every synthesis of a sweep is written to the ledger store (purpose "sweep
point") by the process that called :func:`ru_map`, as each point's result
arrives and before the table is returned: the workers, perhaps a Dask
cluster's, never touch the store.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import pickle
import time
import warnings
import zlib
from typing import Callable, Sequence

import numpy as np
import pandas as pd
from joblib import Parallel, delayed, effective_n_jobs
from joblib.parallel import LokyBackend, get_active_backend

from . import constraints, risk as _risk, utility as _utility  # noqa: F401  (importing them registers their metrics)
from .metric_info import METRICS, MetricContext
from .privacy import Entry, LedgerStore, Use, dp_but_for_seed
from .schema import Schema
from .synth import SYNTHESIZERS, fingerprint
from .synth.base import compute_synthesis, measurement

#: Measures reported by default, in display order.
UTILITY_COLUMNS = ("pmse_ratio", "auc", "specks", "ks_mean")
RISK_COLUMNS = ("exact_copy_share", "dcr_median")


def point_seed(base: int, method: str, epsilon: float, rep: int) -> int:
    """Seed of one point, stable whatever else is in the sweep."""
    eps_key = 0 if math.isnan(epsilon) else int(round(epsilon * 1_000_000))
    seq = np.random.SeedSequence([base, zlib.crc32(method.encode()), eps_key, rep])
    return int(seq.generate_state(1)[0])


#: The measures' settings in a sweep (:class:`MetricContext` options): the median DCR over at most
#: ``RU_DCR_ROWS`` confidential records (the same records for every point); the propensity fit is the headline
#: one, on its sample (``PMSE_RATIO_ROWS`` of each table), as on every page. Each point's table row says the
#: rows used (``propensity_rows``, ``dcr_rows``).
SWEEP_OPTIONS = {"dcr_rows": constraints.RU_DCR_ROWS}


def score(real: pd.DataFrame, synth: pd.DataFrame, *, schema: Schema | None, seed: int,
          holdout: pd.DataFrame | None = None, metrics: Sequence[str] | None = None,
          shared: dict | None = None, options: dict | None = None) -> dict[str, float]:
    """The measures ``metrics`` (default: the R-U defaults) of one synthetic dataset.

    Each is computed by its :data:`METRICS` entry on one :class:`MetricContext`, so
    measures sharing a model (the propensity quartet) fit it once; a measure whose
    needs (holdout, keys, sensitive column) are not met is NaN. Pass ``shared`` (a dict)
    to read the shared results afterwards, and ``options`` for the measures' settings
    (such as :data:`SWEEP_OPTIONS`; none: each measure's default, every row).
    """
    used = schema.used if schema is not None else list(real.columns)
    h = holdout[used] if holdout is not None else None
    ctx = MetricContext(real[used], synth[used], schema=schema, seed=seed, holdout=h, shared=shared,
                        options=options)
    return {name: METRICS[name].value(ctx) for name in metrics or UTILITY_COLUMNS + RISK_COLUMNS}


def rows_used(shared: dict) -> dict[str, int]:
    """The sample sizes behind the sampled measures of one :func:`score` call, from its ``shared`` results:
    ``propensity_rows`` (stacked rows of the propensity fit) and ``dcr_rows`` (confidential records whose
    DCR was measured), each where that measure was computed."""
    out = {}
    if "propensity" in shared:
        out["propensity_rows"] = int(shared["propensity"].n_used)
    if "dcr" in shared:
        out["dcr_rows"] = len(shared["dcr"])
    return out


def ru_map(
    df: pd.DataFrame,
    methods: Sequence[str],
    epsilons: Sequence[float],
    *,
    reps: int = 1,
    seed: int | None = None,
    schema: Schema | None = None,
    references: bool = True,
    metrics: Sequence[str] | None = None,
    holdout: float = 0.0,
    holdout_mask: np.ndarray | None = None,
    progress: Callable[[float, str], None] | None = None,
    n_jobs: int | None = None,
    options: dict | None = None,
    use: Use | None = None,
    store: LedgerStore | None = None,
    confidential: bool = True,
) -> pd.DataFrame:
    """Sweep ``methods`` over ``epsilons`` and score every synthesis.

    Parameters
    ----------
    df : pandas.DataFrame
        Confidential data.
    methods : sequence of str
        Names in :data:`SYNTHESIZERS`. Non-DP methods ignore ε and get one
        point per replicate, with ``epsilon`` NaN.
    epsilons : sequence of float
        Grid of total ε for the DP methods (per-record methods included: each
        point's synthesis spends that total, shared over its records).
    reps : int, default 1
        Replicates per (method, ε), each with its own seed.
    seed : int, optional
        Base seed; each point's seed is derived from it (column ``seed``).
    schema : Schema, optional
        Public schema; without it bounds are read off the data (not DP).
    references : bool, default True
        Add the original data and the bootstrap as reference points.
    metrics : sequence of str, optional
        Names in :data:`METRICS` with a compute function; default the utility and risk defaults.
    holdout : float, default 0
        Share of rows held out before synthesis, each record independently
        with fresh secret randomness (:func:`holdout_mask`); the synthesizers
        see the rest, and holdout-based measures (membership inference)
        compare the two. 0 holds nothing out.
    holdout_mask : numpy.ndarray of bool, optional
        Which rows are held out (from :func:`holdout_mask`); pass the app's
        session mask so a chosen point rebuilds on the same rows.
    progress : callable, optional
        Called as ``progress(fraction_done, message)`` after each point, in
        the order points finish; an exception it raises cancels the sweep.
    n_jobs : int, optional
        Points run in parallel through joblib (processes by default). None:
        the active ``joblib.parallel_config``'s n_jobs, else every local
        core; under ``parallel_config(backend="dask")`` with a
        ``dask.distributed.Client`` the points run on that cluster. Each
        point's result depends only on its seed, so serial, local and Dask
        runs of one base seed give the same table.
    options : dict, optional
        The measures' settings (:class:`MetricContext` options); default
        :data:`SWEEP_OPTIONS`, sampled so a point costs about half the full
        measures.
    use : dpsynth_core.privacy.Use, optional
        The dataset ``df`` is (its name and the content fingerprint of the
        whole table) and the source, for the ledger store; its purpose is
        "sweep point". Default: an unnamed table known by ``df``'s fingerprint.
    store : dpsynth_core.privacy.LedgerStore, optional
        The ledger store each point is written to (default the user's).
    confidential : bool, default True
        False only for a table that is not confidential (a public look-alike
        file): nothing is then recorded. Never for the steward's data.

    Returns
    -------
    pandas.DataFrame
        One row per point: ``method``, ``label``, ``is_dp`` (DP if released
        with fresh randomness: the ledger's label but for the point's seed),
        ``epsilon`` (total ε), ``rep``, ``seed``, ``reference``, one column
        per measure, and the sample sizes behind them (:func:`rows_used`:
        ``propensity_rows``, ``dcr_rows``) where those measures were computed.
    """
    unknown = [m for m in methods if m not in SYNTHESIZERS]
    if unknown:
        raise ValueError(f"unknown methods {unknown}; choose from {sorted(SYNTHESIZERS)}")
    if reps < 1:
        raise ValueError(f"reps must be at least 1, got {reps}")
    if not 0.0 <= holdout < 1.0:
        raise ValueError(f"holdout must be a share in [0, 1), got {holdout!r}")
    metrics = list(metrics or UTILITY_COLUMNS + RISK_COLUMNS)
    unknown = [m for m in metrics if m not in METRICS or not METRICS[m].on_map]
    if unknown:
        raise ValueError(f"unknown measures {unknown}; choose from {sorted(n for n, m in METRICS.items() if m.on_map)}")
    spent = schema.estimate_epsilon if schema is not None else 0.0
    if spent and any(float(e) <= spent for e in epsilons) and any(SYNTHESIZERS[m].is_dp for m in methods):
        raise ValueError(f"The schema's private estimate spent ε = {spent:.4g}, which every total ε of the sweep "
                         "must cover with some left for the synthesis: keep only ε above it in the grid.")
    base = int(np.random.SeedSequence(seed).entropy % 2**63) if seed is None else int(seed)
    if confidential:
        use = dataclasses.replace(Use("unnamed table", fingerprint(df)) if use is None else use, purpose="sweep point")
        store = LedgerStore() if store is None else store
    train, held = split_holdout(df, holdout, mask=holdout_mask)
    jobs: list[tuple[str, float, int]] = [("original", math.nan, 0)] if references else []
    for m in dict.fromkeys(methods):
        grid = [float(e) for e in epsilons] if SYNTHESIZERS[m].is_dp else [math.nan]
        jobs += [(m, e, r) for e in grid for r in range(reps)]
    if references and "bootstrap" not in methods:
        jobs += [("bootstrap", math.nan, r) for r in range(reps)]

    # The measure step reads the data once per method per sweep: round one runs each method's first point,
    # which measures in its worker and hands the measurement back with its row (the original data's point
    # beside them), so no worker waits on a slow measurement (PMI's fits: seconds) with nothing to do.
    # Round two runs every other point with its method's measurement, costliest methods first, so the last
    # points to finish are short ones. The rows travel pickled once a round (_Pickled); max_nbytes=None:
    # joblib would otherwise write large arrays (the confidential rows, a bootstrap's measurement) to a
    # temporary folder to share them, possibly on disk.
    n_jobs = _n_jobs(n_jobs)
    data = _Pickled((train, held, schema))
    options = dict(SWEEP_OPTIONS if options is None else options)
    if effective_n_jobs(n_jobs) != 1:
        options.setdefault("threads", 1)  # points run side by side: a measure's own threads would only compete
    rows: list[dict | None] = [None] * len(jobs)
    sweep = None
    if confidential and seed is not None:
        # A sweep cut short (a restart, a cancel) resumes: its finished points are read back, and only the
        # others are computed, with the same seeds, so the table is the uninterrupted sweep's.
        settings = _sweep_settings(jobs, base, metrics, options, holdout, holdout_mask, schema)
        sweep, finished = store.begin_sweep(use, settings, len(jobs))
        for i, scores in finished.items():
            rows[i] = scores
    # The measure step reads the data once per method per sweep: round one runs each method's first point still
    # to do, which measures in its worker and hands the measurement back with its row (the original data's point
    # beside them), so no worker waits on a slow measurement (PMI's fits: seconds) with nothing to do.
    # Round two runs every other point with its method's measurement, costliest methods first, so the last
    # points to finish are short ones. The rows travel pickled once a round (_Pickled); max_nbytes=None:
    # joblib would otherwise write large arrays (the confidential rows, a bootstrap's measurement) to a
    # temporary folder to share them, possibly on disk.
    first: dict[str, int] = {}  # method → its first point to do
    for i, (m, _, _) in enumerate(jobs):
        if m != "original" and rows[i] is None:
            first.setdefault(m, i)
    opening = sorted(first.values()) + [i for i, j in enumerate(jobs) if j[0] == "original" and rows[i] is None]
    measured: dict = {}
    cost: dict[str, float] = {}
    total = sum(m != "original" for m, _, _ in jobs)
    done = sum(m != "original" and rows[i] is not None for i, (m, _, _) in enumerate(jobs))

    def keep(i: int, row: dict, entry: Entry | None, measurement, seconds: float) -> None:
        nonlocal done
        m, eps, rep = jobs[i]
        # Written before the point is kept: a failed write ends the sweep, with no table.
        if sweep is not None:
            store.record_point(use, entry, sweep, i, _plain(row))
        elif entry is not None and confidential:
            store.record(use, entry)
        rows[i] = row
        if m == "original":
            return
        if i == first[m]:
            measured[m], cost[m] = measurement, seconds
        done += 1
        if progress is not None:
            # A progress callback that raises (the app's Cancel) ends the sweep (see _run).
            where = "not DP" if math.isnan(eps) else f"ε = {eps:g}"
            progress(done / total, f"{SYNTHESIZERS[m].label}, {where}, replicate {rep + 1}")

    _run([delayed(_point)(i, data, metrics, options, *jobs[i], base) for i in opening], n_jobs, keep)
    later = sorted((i for i in range(len(jobs)) if rows[i] is None), key=lambda i: -cost[jobs[i][0]])
    _run([delayed(_point)(i, data, metrics, options, *jobs[i], base, measured[jobs[i][0]]) for i in later],
         n_jobs, keep)
    if sweep is not None:
        store.finish_sweep(sweep)
    return pd.DataFrame([{k: _plain_value(v) for k, v in row.items()} for row in rows])


def _sweep_settings(jobs, base: int, metrics, options: dict, holdout: float, holdout_mask, schema) -> str:
    """Everything that fixes a sweep's points, as one text: its jobs (method, ε, replicate), the base seed, the
    measures and their settings, the schema and which rows were held out (a digest of the mask: after a restart
    a new mask makes another sweep)."""
    held = hashlib.sha256(np.asarray(holdout_mask, dtype=bool).tobytes()).hexdigest() \
        if holdout and holdout_mask is not None else None
    return json.dumps({"jobs": [[m, None if math.isnan(e) else e, r] for m, e, r in jobs], "seed": base,
                       "metrics": list(metrics), "options": {k: v for k, v in options.items() if k != "threads"},
                       "holdout": holdout, "held": held,
                       "schema": schema.to_dict() if schema is not None else None}, sort_keys=True, default=str)


def _plain_value(value):
    """A numpy scalar as the Python number it holds (a stored point's scores come back as such)."""
    return value.item() if isinstance(value, np.generic) else value


def _plain(row: dict) -> dict:
    return {k: _plain_value(v) for k, v in row.items()}


def _run(tasks: list, n_jobs: int | None, keep: Callable) -> None:
    """Run ``tasks`` through joblib, calling ``keep(*result)`` in this process as each one ends.

    An exception in ``keep`` (the progress callback's cancel) closes the generator, which cancels the
    tasks not yet started, and propagates.
    """
    if not tasks:
        return
    results = Parallel(n_jobs=n_jobs, backend=_backend(), return_as="generator_unordered", max_nbytes=None)(tasks)
    try:
        for result in results:
            keep(*result)
    finally:
        with warnings.catch_warnings():  # joblib warns that it cancelled the pending points: that was the aim
            warnings.filterwarnings("ignore", message=".*tasks which were still being processed", category=UserWarning)
            results.close()


class _SharedLokyBackend(LokyBackend):
    """joblib's default process pool, but a cancelled sweep leaves the pool's workers alive.

    The pool is shared by every sweep of the process (each app session's);
    joblib's own abort kills its workers, which broke another session's sweep
    running at the same time. Here dispatching stops and the few points
    already sent (at most ``pre_dispatch``) finish and are dropped.
    """

    def abort_everything(self, ensure_ready=True):
        pass


def _backend():
    """The active joblib backend; the default local pool in its cancel-safe form."""
    backend, _ = get_active_backend()
    return _SharedLokyBackend(nesting_level=backend.nesting_level) if type(backend) is LokyBackend else None


def _n_jobs(n_jobs: int | None) -> int | None:
    """``n_jobs``; None: the active ``joblib.parallel_config``'s, else every local core.

    joblib alone reads an unset n_jobs as the backend's default, which is 1
    (serial) for local processes; a sweep should use the machine unless told.
    """
    if n_jobs is not None:
        return n_jobs
    backend, configured = get_active_backend()
    if configured is not None or backend.default_n_jobs != 1:
        return None  # the config's n_jobs, or the backend's own default (Dask: every worker)
    return -1


class _Pickled:
    """The sweep's rows (train, held out, schema), pickled once for all its tasks.

    joblib pickles each task's arguments in the parent, which shares the cores with the
    workers: diamonds' rows (three text columns) took about 25 ms each time, for every
    point. These bytes are copied instead and unpickled in the task (about 4 ms); on Dask,
    joblib scatters this object to the cluster once for the measure step and once for the
    points (it scatters arguments over 1 kB: hence ``__sizeof__``).
    """

    def __init__(self, value):
        self.payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)

    def get(self):
        return pickle.loads(self.payload)

    def __sizeof__(self):
        # Dask reads sizes through sys.getsizeof, and joblib scatters only arguments over 1 kB.
        return object.__sizeof__(self) + len(self.payload)


def _point(i: int, data: _Pickled, metrics: list[str], options: dict, m: str, eps: float, rep: int, base: int,
           measured=None) -> tuple[int, dict, Entry | None, object, float]:
    """One point of the sweep (run in a worker): its synthesis, scored. Depends on nothing but its arguments.

    Without ``measured`` the method is measured here. Returns the point's index and row, its entry for the
    ledger store (None for the original data, which is no synthesis), the measurement made here (None when
    one was passed in), and the CPU seconds of the point without its measurement (which orders the sweep's
    later points).
    """
    train, held, schema = data.get()
    shared: dict = {}
    if m == "original":
        values = score(train, train, schema=schema, seed=base, holdout=held, metrics=metrics, shared=shared,
                       options=options)
        return i, {"method": "original", "label": "Original data", "is_dp": False, "epsilon": math.nan,
                   "rep": 0, "seed": base, "reference": True, **values, **rows_used(shared)}, None, None, 0.0
    made = measurement(train, m, schema=schema) if measured is None else None
    start = time.process_time()
    s = point_seed(base, m, eps, rep)
    # Recorded by the sweep's own process as this point arrives (ru_map's keep), before the table is returned.
    result = compute_synthesis(train, m, epsilon=None if math.isnan(eps) else eps, schema=schema, seed=s,
                               measured=measured if made is None else made)
    values = score(train, result.data, schema=result.schema, seed=s, holdout=held, metrics=metrics, shared=shared,
                   options=options)
    row = {"method": m, "label": SYNTHESIZERS[m].label, "is_dp": dp_but_for_seed(result.ledger),
           "epsilon": eps, "rep": rep, "seed": s, "reference": m == "bootstrap", **values, **rows_used(shared)}
    return i, row, Entry.of_ledger(result.ledger, rows=len(train)), made, time.process_time() - start


def sample_note(points: pd.DataFrame) -> str | None:
    """Which rows a sweep's sampled measures used, in words for the map's page (None when it has none).

    Read off the table's ``propensity_rows`` and ``dcr_rows`` columns (:func:`rows_used`), so the sizes
    stated are the ones used, not the settings asked for.

    Examples
    --------
    >>> print(sample_note(pd.DataFrame({"dcr_rows": [10_000, 10_000]})))  # doctest: +NORMALIZE_WHITESPACE
    Samples behind the measures: the median DCR over 10,000 confidential records, the same records for
    every point (a fixed random subset when the data have more), each against every synthetic row. The
    other measures use every row; the table's columns propensity_rows and dcr_rows give each point's sizes.
    """
    parts = []
    if "propensity_rows" in points:
        parts.append(f"the propensity measures (pMSE, AUC, SPECKS) from a logistic fit on "
                     f"{_sizes(points['propensity_rows'])} stacked rows, real and synthetic rows drawn at random "
                     "for each point")
    if "dcr_rows" in points:
        parts.append(f"the median DCR over {_sizes(points['dcr_rows'])} confidential records, the same records "
                     "for every point (a fixed random subset when the data have more), each against every "
                     "synthetic row")
    if not parts:
        return None
    return ("Samples behind the measures: " + "; ".join(parts) + ". The other measures use every row; the "
            "table's columns propensity_rows and dcr_rows give each point's sizes.")


def _sizes(rows: pd.Series) -> str:
    """A sample size in words: "5,000", or "4,990–5,000" when the points' sizes differ."""
    lo, hi = int(rows.min()), int(rows.max())
    return f"{lo:,}" if lo == hi else f"{lo:,}–{hi:,}"


def holdout_mask(n: int, share: float, rng: np.random.Generator | None = None) -> np.ndarray:
    """Which of ``n`` records are held out: each independently with probability ``share``.

    The randomness is fresh operating-system entropy (``rng`` is for tests), never
    a seed derived from the data or stored anywhere: adding one record changes
    only that record's membership, and the split itself reveals nothing about
    the data. Keep the mask (not a seed) to reuse the split.
    """
    if not 0.0 <= share < 1.0:
        raise ValueError(f"holdout must be a share in [0, 1), got {share!r}")
    rng = np.random.default_rng() if rng is None else rng
    return rng.random(n) < share


def split_holdout(df: pd.DataFrame, share: float, *, mask: np.ndarray | None = None,
                  rng: np.random.Generator | None = None) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """Rows for the synthesizer and rows held out (None when ``share`` is 0).

    ``mask`` (True: held out) comes from :func:`holdout_mask`; without it one is
    drawn here with fresh randomness (``rng`` for tests).
    """
    if share <= 0:
        return df, None
    if mask is None:
        mask = holdout_mask(len(df), share, rng)
    mask = np.asarray(mask, dtype=bool)
    if len(mask) != len(df):
        raise ValueError(f"the holdout mask has {len(mask)} entries for {len(df)} rows")
    if mask.all() or not mask.any():
        raise ValueError(f"a holdout share of {share:g} left no rows on one side of {len(df)}; "
                         "choose a share nearer one half or use more rows")
    return df[~mask].reset_index(drop=True), df[mask].reset_index(drop=True)


def metric_options(kind: str) -> list[str]:
    """Measures of ``kind`` ("utility" or "risk") the sweep can report, defaults first."""
    defaults = UTILITY_COLUMNS if kind == "utility" else RISK_COLUMNS
    return [*defaults, *sorted(n for n, m in METRICS.items() if m.kind == kind and m.on_map and n not in defaults)]


def summarise(points: pd.DataFrame, x: str, y: str) -> pd.DataFrame:
    """Mean and standard deviation of measures ``x`` and ``y`` over replicates, per (method, ε).

    Columns: ``method``, ``label``, ``epsilon`` (NaN for methods without ε),
    ``x``, ``y``, ``x_sd``, ``y_sd``, ``seed`` (of the first replicate),
    ``is_dp``, ``reference``, ``reps``, and ``pareto`` (on the frontier).
    """
    keys = ["method", "label", "epsilon"]
    g = points.assign(epsilon=points["epsilon"].fillna(-1.0)).groupby(keys, sort=False)
    out = g.agg(x=(x, "mean"), y=(y, "mean"), x_sd=(x, "std"), y_sd=(y, "std"), seed=("seed", "first"),
                is_dp=("is_dp", "first"), reference=("reference", "first"), reps=("rep", "count")).reset_index()
    out["epsilon"] = out["epsilon"].where(out["epsilon"] >= 0, np.nan)
    out["pareto"] = pareto_mask(out["x"].to_numpy(float), out["y"].to_numpy(float), x, y)
    return out


def _loss(values: np.ndarray, metric: str, kind: str) -> np.ndarray:
    """Values turned so that smaller is better (less risk, more utility)."""
    info = METRICS.get(metric)
    if info is None:
        return values if kind == "risk" else -values
    if info.goal == "target":
        return np.abs(values - info.best)
    return -values if info.goal == "maximize" else values


def pareto_mask(x: np.ndarray, y: np.ndarray, x_metric: str, y_metric: str) -> np.ndarray:
    """True for points no other point beats on both risk (x) and utility (y).

    A point is dominated when another is at least as good on both measures
    and strictly better on one; "better" follows each metric's goal.
    """
    rx, uy = _loss(np.asarray(x, float), x_metric, "risk"), _loss(np.asarray(y, float), y_metric, "utility")
    ok = ~(np.isnan(rx) | np.isnan(uy))
    a, b = rx[:, None], uy[:, None]
    dominated = ((rx[None, :] <= a) & (uy[None, :] <= b) & ((rx[None, :] < a) | (uy[None, :] < b)) & ok[None, :])
    return ok & ~dominated.any(axis=1)


def reaches(value: float, threshold: float, metric: str) -> bool:
    """Whether a utility ``value`` is at least as good as ``threshold`` for ``metric``."""
    return bool(_loss(np.array([value]), metric, "utility")[0] <= _loss(np.array([threshold]), metric, "utility")[0])


def smallest_epsilon(points: pd.DataFrame, method: str, utility: str, threshold: float, risk: str) -> dict | None:
    """The steward's question: the smallest ε at which ``method`` reaches ``threshold``, and its risk there.

    Works on the means over replicates. Returns a dict with ``epsilon``, ``utility``, ``risk`` (None
    when no ε of the grid reaches the threshold) and ``sentence``; when one does, ``resolution`` (how
    close the grid pins it) and ``acceptable``: whether the utility there is what the app calls
    acceptable (:meth:`Metric.is_acceptable`; None for a measure with no stated level).
    """
    s = summarise(points[points["method"] == method], risk, utility).dropna(subset=["epsilon"])
    s = s.sort_values("epsilon")
    hit = [i for i, v in zip(s.index, s["y"]) if reaches(v, threshold, utility)]
    label = SYNTHESIZERS[method].label if method in SYNTHESIZERS else method
    ulabel, rlabel = (METRICS[m].label if m in METRICS else m for m in (utility, risk))
    if not hit:
        top = s["epsilon"].max() if len(s) else float("nan")
        return {"epsilon": None, "utility": None, "risk": None,
                "sentence": f"{label} does not reach {ulabel} {threshold:g} at any ε up to {top:g} in this sweep."}
    row = s.loc[hit[0]]
    lower = s.loc[s["epsilon"] < row["epsilon"], "epsilon"]
    if len(lower):
        resolution = (f"Smallest ε in this grid: {row['epsilon']:g}; the next lower grid point, {lower.max():g}, "
                      f"does not reach it, so the true smallest ε lies between {lower.max():g} and "
                      f"{row['epsilon']:g}: add grid points there to narrow it.")
    else:
        resolution = (f"{row['epsilon']:g} is the lowest ε in this grid: a smaller ε may reach the threshold "
                      "too; add lower grid points to find out.")
    info = METRICS.get(utility)
    return {"epsilon": float(row["epsilon"]), "utility": float(row["y"]), "risk": float(row["x"]),
            "resolution": resolution,
            "acceptable": None if info is None else info.is_acceptable(float(row["y"])),
            "sentence": (f"The smallest ε at which {label} reaches {ulabel} {threshold:g} is {row['epsilon']:g} "
                         f"({ulabel} {row['y']:.3g}); its risk there: {rlabel} {row['x']:.3g}.")}


#: Default risk measure of the R-U map: DP points spread along it (exact copies are 0 for all of them).
DEFAULT_RISK = "dcr_median"

#: How a point without ε (a method that is not DP) carries its ε in the map's ``customdata``: JSON has no NaN.
NO_EPSILON = -1.0


def epsilon_from_point(value) -> float | None:
    """A point's ε as the map's ``customdata`` carries it (:data:`NO_EPSILON` for none): the float, or None."""
    return None if float(value) < 0 else float(value)


def point_settings(customdata, holdout: float) -> dict | None:
    """The settings that rebuild one point of the map (its ``customdata``, ``[method, epsilon, seed]``):
    its method, seed (fixed: exploration) and the sweep's holdout, every row and column, and its ε if it
    has one. None for the original data, which is no synthesis."""
    method, eps, seed = customdata
    if method == "original":
        return None
    eps = epsilon_from_point(eps)
    return dict(method=method, seed=int(seed), fixed_seed=True, n=None, columns=None, holdout=holdout,
                **({"epsilon": eps} if eps is not None else {}))


def epsilon_text(epsilon: float) -> str:
    """A sweep point's ε in words: "not DP" where the method has none (NaN)."""
    return "not DP" if epsilon != epsilon else f"{epsilon:g}"


def dp_methods(points: pd.DataFrame) -> list[str]:
    """The DP methods of a sweep, in their order of appearance (reference points are no synthesizer)."""
    return [m for m in dict.fromkeys(points["method"]) if m in SYNTHESIZERS and SYNTHESIZERS[m].is_dp]


def default_methods(schema: Schema, n_rows: int) -> list[str]:
    """The methods the R-U map sweeps by default: the DP methods the method suggestion may name (those that
    declare a ``suggest_priority``: :func:`dpsynth_core.suggest_method`), in picker order, less any that
    refuse this table (its schema and row count). The reference points (the original data, the bootstrap)
    are always on the map; a method that is not DP is the user's choice, not a default."""
    out = []
    for name, synth in SYNTHESIZERS.items():
        if synth.is_dp and synth.suggest_priority is not None and schema.used \
                and not synth.refuse(schema, schema.used, n_rows, **synth.resolve({})):
            out.append(name)
    return out


def default_threshold(points: pd.DataFrame, method: str, utility: str) -> float:
    """The utility threshold the steward's question starts from.

    A measure whose level of "acceptable" the app states (:attr:`Metric.acceptable`: the pMSE ratio's
    ``constraints.PMSE_RATIO_ACCEPTABLE``) starts there: the answer is then the smallest ε at which the
    method reaches what a steward is told is acceptable. Any other measure has no such level, so its
    default only splits ``method``'s grid: halfway between its best and worst mean values (halfway in
    distance from the ideal for a measure with a target), so the best ε reaches it and the worst does not,
    unless all points are equal; :func:`threshold_note` says which it is. NaN when the method has no point
    with a value and the measure states no level.
    """
    info = METRICS.get(utility)
    if info is not None and info.acceptable is not None:
        return float(info.acceptable)
    s = summarise(points[points["method"] == method], utility, utility).dropna(subset=["epsilon", "y"])
    if not len(s):
        return float("nan")
    loss = _loss(s["y"].to_numpy(float), utility, "utility")
    half = float((loss.min() + loss.max()) / 2)  # halfway in "loss" (smaller is better), then back to values
    if info is None or info.goal == "maximize":
        value = -half
    else:
        value = info.best + half if info.goal == "target" else half
    return float(f"{value:.3g}")  # a number a person would type; the grid's points are far coarser


def threshold_note(utility: str) -> str:
    """Where the steward's threshold starts (:func:`default_threshold`), in words for the map's page."""
    info = METRICS.get(utility)
    label = info.label if info is not None else utility
    if info is not None and info.acceptable is not None:
        return (f"The threshold starts at {info.acceptable:g}, the {label} this app calls acceptable "
                f"({acceptable_text(info)}): type a stricter value if you need one.")
    return (f"This app states no acceptable level of {label}, so the threshold starts halfway between the "
            "method's best and worst point in this sweep, a split of the sweep rather than a standard: type the "
            "value you would accept. An answer on this measure is never marked acceptable (green).")


def acceptable_text(info) -> str:
    """The acceptable side of a measure's stated level in words: "under 10", "over 0.8"."""
    above = info.goal == "maximize" or (info.goal == "target" and info.acceptable < info.best)
    return f"{'over' if above else 'under'} {info.acceptable:g}"


def best_dp_method(points: pd.DataFrame, epsilon: float, utility: str) -> dict | None:
    """Which DP method keeps the most at ε = ``epsilon`` on the swept data, by the measure ``utility``.

    Compares the DP methods of the sweep (methods whose synthesizer is DP;
    reference points left out) at the grid ε nearest to ``epsilon`` (on the
    log scale), by their mean over replicates, "most" following the
    measure's goal (:data:`METRICS`). Returns None when the sweep has no DP
    method with a value of ``utility``; else a dict with ``method``,
    ``epsilon`` (the grid value used), ``utility``, ``ranking`` (method →
    mean, best first) and ``sentence``.
    """
    dp = points[points["method"].map(lambda m: m in SYNTHESIZERS and SYNTHESIZERS[m].is_dp)
                & ~points["reference"].astype(bool) & points["epsilon"].notna()]
    dp = dp[dp[utility].notna()] if utility in dp.columns else dp.iloc[0:0]
    if dp.empty:
        return None
    grid = np.array(sorted(dp["epsilon"].unique()))
    used = float(grid[np.argmin(np.abs(np.log(grid) - math.log(epsilon)))])
    at = dp[dp["epsilon"] == used]
    means = at.groupby("method", sort=False)[utility].mean()
    order = np.argsort(_loss(means.to_numpy(float), utility, "utility"), kind="stable")
    ranking = {m: float(means.iloc[i]) for i, m in ((i, means.index[i]) for i in order)}
    best, value = next(iter(ranking.items()))
    ulabel = METRICS[utility].label if utility in METRICS else utility
    where = f"ε = {used:g}" if math.isclose(used, epsilon, rel_tol=1e-9) else \
        f"ε = {used:g}, the swept ε nearest to {epsilon:g}"
    reps = int((at["method"] == best).sum())
    sentence = (f"At {where}, {SYNTHESIZERS[best].label} keeps the most by {ulabel}: {value:.3g} "
                f"(mean of {reps} replicate{'s' if reps != 1 else ''})")
    others = [f"{SYNTHESIZERS[m].label} {v:.3g}" for m, v in list(ranking.items())[1:]]
    sentence += (", against " + ", ".join(others) + ".") if others else "; it is the only DP method in this sweep."
    if not at.loc[at["method"] == best, "is_dp"].all():
        sentence += " These runs are not DP as run (see their ledgers: e.g. bounds read off the data)."
    return {"method": best, "epsilon": used, "utility": value, "ranking": ranking, "sentence": sentence}
