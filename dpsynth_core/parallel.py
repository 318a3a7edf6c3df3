"""The parallel back end of the R-U sweep and the privacy audit: tasks through joblib, results kept as they end.

Both run many independent tasks (a sweep point, an audit's block of runs) whose results depend only on their
arguments, so serial, local-process and Dask runs give the same answers. :func:`run` keeps each result in the
calling process as it arrives (the ledger store is written there, never in a worker) and cancels the rest when
keeping raises (the app's Cancel); :func:`resolve_n_jobs` reads the active ``joblib.parallel_config`` (under
``parallel_config(backend="dask")`` with a ``dask.distributed.Client``, :mod:`dpsynth_core.cluster`, the tasks
run on that cluster); :class:`Pickled` ships a large argument once.
"""

from __future__ import annotations

import pickle
import warnings
from typing import Callable

from joblib import Parallel
from joblib.parallel import LokyBackend, get_active_backend


def run(tasks: list, n_jobs: int | None, keep: Callable) -> None:
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
        with warnings.catch_warnings():  # joblib warns that it cancelled the pending tasks: that was the aim
            warnings.filterwarnings("ignore", message=".*tasks which were still being processed", category=UserWarning)
            results.close()


class _SharedLokyBackend(LokyBackend):
    """joblib's default process pool, but a cancelled sweep (or audit) leaves the pool's workers alive.

    The pool is shared by every sweep and audit of the process (each app session's);
    joblib's own abort kills its workers, which broke another session's sweep
    running at the same time. Here dispatching stops and the few tasks
    already sent (at most ``pre_dispatch``) finish and are dropped.
    """

    def abort_everything(self, ensure_ready=True):
        pass


def _backend():
    """The active joblib backend; the default local pool in its cancel-safe form."""
    backend, _ = get_active_backend()
    return _SharedLokyBackend(nesting_level=backend.nesting_level) if type(backend) is LokyBackend else None


def resolve_n_jobs(n_jobs: int | None) -> int | None:
    """``n_jobs``; None: the active ``joblib.parallel_config``'s, else every local core.

    joblib alone reads an unset n_jobs as the backend's default, which is 1
    (serial) for local processes; a sweep or an audit should use the machine unless told. A count of
    0 (joblib's own words: "has no meaning") raises ValueError with one sentence.
    """
    if n_jobs == 0:
        raise ValueError("The number of worker processes must be at least 1 (or -1 for every core), got 0.")
    if n_jobs is not None:
        return n_jobs
    backend, configured = get_active_backend()
    if configured is not None or backend.default_n_jobs != 1:
        return None  # the config's n_jobs, or the backend's own default (Dask: every worker)
    return -1


class Pickled:
    """A task argument pickled once for all the tasks (the sweep's rows: train, held out, schema).

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
