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

This module is the sweep and its table's points. The steward's analysis of the table (the frontier, the
smallest ε, the best method, the defaults) is :mod:`dpsynth_core.frontier`; the parallel back end it shares
with the privacy audit is :mod:`dpsynth_core.parallel`; the holdout split is :mod:`dpsynth_core.holdout`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import time
import zlib
from typing import Callable, Sequence

import numpy as np
import pandas as pd
from joblib import delayed, effective_n_jobs

from . import constraints, risk as _risk, utility as _utility  # noqa: F401  (importing them registers their metrics)
from .frontier import capped_points
from .holdout import split_holdout
from .metric_info import METRICS, MetricContext
from .parallel import Pickled, resolve_n_jobs, run
from .privacy import Entry, LedgerStore, Use, dp_but_for_seed
from .schema import Schema
from .synth import SYNTHESIZERS, fingerprint
from .synth.base import compute_synthesis, measurement


class _Pickled(Pickled):
    """The sweep's rows (train, held out, schema), pickled once for all its points: the sweep's own name for
    what it scatters to a Dask cluster (the sweep's tests count the scattered objects by it)."""


#: Measures reported by default, in display order, and the map's default risk measure (constraints says why).
UTILITY_COLUMNS = constraints.RU_UTILITY_COLUMNS
RISK_COLUMNS = constraints.RU_RISK_COLUMNS
DEFAULT_RISK = constraints.RU_DEFAULT_RISK


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
    ``propensity_rows`` (stacked rows of the propensity fit) with ``pmse_ratio_ceiling`` (the most its pMSE
    ratio could read on those rows, :attr:`PropensityResult.ratio_ceiling`) and ``dcr_rows`` (confidential
    records whose DCR was measured), each where that measure was computed."""
    out = {}
    if "propensity" in shared:
        out["propensity_rows"] = int(shared["propensity"].n_used)
        out["pmse_ratio_ceiling"] = float(shared["propensity"].ratio_ceiling)
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
    metrics = _checked(methods, epsilons, reps, holdout, metrics, schema)
    base = int(np.random.SeedSequence(seed).entropy % 2**63) if seed is None else int(seed)
    if confidential:
        use = dataclasses.replace(Use("unnamed table", fingerprint(df)) if use is None else use, purpose="sweep point")
        store = LedgerStore() if store is None else store
    train, held = split_holdout(df, holdout, mask=holdout_mask)
    jobs = _jobs(methods, epsilons, reps, references)
    n_jobs = resolve_n_jobs(n_jobs)
    options = dict(SWEEP_OPTIONS if options is None else options)
    if effective_n_jobs(n_jobs) != 1:
        options.setdefault("threads", 1)  # points run side by side: a measure's own threads would only compete
    points = _Points(jobs, progress, store if confidential else None, use)
    if confidential and seed is not None:
        # A sweep cut short (a restart, a cancel) resumes: its finished points are read back, and only the
        # others are computed, with the same seeds, so the table is the uninterrupted sweep's.
        points.resume(_sweep_settings(jobs, base, metrics, options, holdout, holdout_mask, schema))
    points.run(_Pickled((train, held, schema)), metrics, options, base, n_jobs)
    return points.table()


def _checked(methods, epsilons, reps: int, holdout: float, metrics, schema) -> list[str]:
    """The sweep's measures (default: the R-U defaults), after every argument is checked (ValueError if not)."""
    unknown = [m for m in methods if m not in SYNTHESIZERS]
    if unknown:
        raise ValueError(f"Unknown method{_s(unknown)} {_listed(unknown)}; choose among "
                         f"{_listed(sorted(SYNTHESIZERS))}.")
    if reps < 1:
        raise ValueError(f"A sweep needs at least 1 replicate per point, got {reps}.")
    if not 0.0 <= holdout < 1.0:
        raise ValueError(f"The share held out must be at least 0 and below 1, got {holdout:g}.")
    metrics = list(metrics or UTILITY_COLUMNS + RISK_COLUMNS)
    unknown = [m for m in metrics if m not in METRICS or not METRICS[m].on_map]
    if unknown:
        raise ValueError(f"Unknown measure{_s(unknown)} {_listed(unknown)}; choose among "
                         f"{_listed(sorted(n for n, m in METRICS.items() if m.on_map))}.")
    spent = schema.estimate_epsilon if schema is not None else 0.0
    if spent and any(float(e) <= spent for e in epsilons) and any(SYNTHESIZERS[m].is_dp for m in methods):
        raise ValueError(f"The schema's private estimate spent ε = {spent:.4g}, which every total ε of the sweep "
                         "must cover with some left for the synthesis: keep only ε above it in the grid.")
    return metrics


def _listed(names) -> str:
    """Names as a person reads them in a sentence (not as a Python list)."""
    return ", ".join(map(str, names))


def _s(names) -> str:
    return "s" if len(names) > 1 else ""


def _jobs(methods, epsilons, reps: int, references: bool) -> list[tuple[str, float, int]]:
    """The sweep's points as (method, ε, replicate): the original data first, each method's grid (one point per
    replicate, ε NaN, for a method that is not DP), then the bootstrap unless it is swept already."""
    jobs: list[tuple[str, float, int]] = [("original", math.nan, 0)] if references else []
    for m in dict.fromkeys(methods):
        grid = [float(e) for e in epsilons] if SYNTHESIZERS[m].is_dp else [math.nan]
        jobs += [(m, e, r) for e in grid for r in range(reps)]
    if references and "bootstrap" not in methods:
        jobs += [("bootstrap", math.nan, r) for r in range(reps)]
    return jobs


class _Points:
    """The sweep's points as they are done: each kept as it arrives, written to the ledger store first (when the
    table is confidential: ``store`` is None otherwise), the progress told, and the table at the end."""

    def __init__(self, jobs: list[tuple[str, float, int]], progress: Callable | None, store: LedgerStore | None,
                 use: Use | None):
        self.jobs, self.progress, self.store, self.use = jobs, progress, store, use
        self.rows: list[dict | None] = [None] * len(jobs)
        self.sweep = None  # the stored sweep this one resumes and records into, when seeded
        self.first: dict[str, int] = {}  # method → its first point to do
        self.measured: dict = {}
        self.cost: dict[str, float] = {}
        self.total = sum(m != "original" for m, _, _ in jobs)
        self.done = 0

    def resume(self, settings: str) -> None:
        """Read back the points of a stored sweep of the same ``settings`` (:func:`_sweep_settings`)."""
        self.sweep, finished = self.store.begin_sweep(self.use, settings, len(self.jobs))
        for i, scores in finished.items():
            self.rows[i] = scores

    def run(self, data: Pickled, metrics: list[str], options: dict, base: int, n_jobs: int | None) -> None:
        """Compute every point still to do, in two rounds.

        The measure step reads the data once per method per sweep: round one runs each method's first point still
        to do, which measures in its worker and hands the measurement back with its row (the original data's point
        beside them), so no worker waits on a slow measurement (PMI's fits: seconds) with nothing to do. Round two
        runs every other point with its method's measurement, costliest methods first, so the last points to
        finish are short ones. The rows travel pickled once a round (:class:`~dpsynth_core.parallel.Pickled`).
        """
        jobs, rows = self.jobs, self.rows
        for i, (m, _, _) in enumerate(jobs):
            if m != "original" and rows[i] is None:
                self.first.setdefault(m, i)
        opening = sorted(self.first.values()) + [i for i, j in enumerate(jobs)
                                                 if j[0] == "original" and rows[i] is None]
        self.done = sum(m != "original" and rows[i] is not None for i, (m, _, _) in enumerate(jobs))
        run([delayed(_point)(i, data, metrics, options, *jobs[i], base) for i in opening], n_jobs, self.keep)
        later = sorted((i for i in range(len(jobs)) if rows[i] is None), key=lambda i: -self.cost[jobs[i][0]])
        run([delayed(_point)(i, data, metrics, options, *jobs[i], base, self.measured[jobs[i][0]]) for i in later],
            n_jobs, self.keep)
        if self.sweep is not None:
            self.store.finish_sweep(self.sweep)

    def keep(self, i: int, row: dict, entry: Entry | None, measurement, seconds: float) -> None:
        """Point ``i``'s result, as it arrives in this process."""
        m, eps, rep = self.jobs[i]
        # Written before the point is kept: a failed write ends the sweep, with no table.
        if self.sweep is not None:
            self.store.record_point(self.use, entry, self.sweep, i, _plain(row))
        elif entry is not None and self.store is not None:
            self.store.record(self.use, entry)
        self.rows[i] = row
        if m == "original":
            return
        if i == self.first[m]:
            self.measured[m], self.cost[m] = measurement, seconds
        self.done += 1
        if self.progress is not None:
            # A progress callback that raises (the app's Cancel) ends the sweep (see dpsynth_core.parallel.run).
            where = "not DP" if math.isnan(eps) else f"ε = {eps:g}"
            self.progress(self.done / self.total, f"{SYNTHESIZERS[m].label}, {where}, replicate {rep + 1}")

    def table(self) -> pd.DataFrame:
        return pd.DataFrame([{k: _plain_value(v) for k, v in row.items()} for row in self.rows])


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


def _point(i: int, data: Pickled, metrics: list[str], options: dict, m: str, eps: float, rep: int, base: int,
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
            "table's columns propensity_rows and dcr_rows give each point's sizes." + _capped_note(points))


def _capped_note(points: pd.DataFrame) -> str:
    """A sentence naming the points whose pMSE ratio could not read unacceptable on the rows it was fitted on
    (:func:`~dpsynth_core.frontier.capped_points`), or ''."""
    capped = capped_points(points, "pmse_ratio")
    if not capped:
        return ""
    where = ", ".join(f"{SYNTHESIZERS[m].label if m in SYNTHESIZERS else m} at ε = {e:g} (at most {c:.3g})"
                      for (m, e), c in capped.items())
    return (f" On so few rows the pMSE ratio of these points could not reach "
            f"{constraints.PMSE_RATIO_ACCEPTABLE:g}, so a low value there says nothing about their utility: "
            f"{where}; the steward's answer does not count them.")


def _sizes(rows: pd.Series) -> str:
    """A sample size in words: "5,000", or "4,990–5,000" when the points' sizes differ."""
    lo, hi = int(rows.min()), int(rows.max())
    return f"{lo:,}" if lo == hi else f"{lo:,}–{hi:,}"


def metric_options(kind: str) -> list[str]:
    """Measures of ``kind`` ("utility" or "risk") the sweep can report, defaults first."""
    defaults = UTILITY_COLUMNS if kind == "utility" else RISK_COLUMNS
    return [*defaults, *sorted(n for n, m in METRICS.items() if m.kind == kind and m.on_map and n not in defaults)]


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
