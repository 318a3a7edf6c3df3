"""The R-U sweep in parallel: serial, local processes and a Dask cluster give one table."""

import os
import sys
import threading
import types

import joblib
import numpy as np
import pandas as pd
import pytest

import dpsynth_core as core
from dpsynth_core import rumap
from dpsynth_core.holdout import holdout_mask, split_holdout
from dpsynth_core.metric_info import Metric, register, unregister
from dpsynth_core.parallel import resolve_n_jobs
from dpsynth_core.risk import distance
from dpsynth_core.synth import base

pytestmark = pytest.mark.integration  # pools of processes and a Dask cluster (imported in the test that needs it)

METHODS = ["independent", "dp_seqreg", "cart"]


@pytest.fixture(scope="module")
def penguins():
    return core.load_bundled("penguins")


def _mask(df):
    """One holdout split shared by every sweep here (the app keeps its session's mask the same way)."""
    return holdout_mask(len(df), 0.2, np.random.default_rng(17))


def _sweep(penguins, **kw):
    df, schema = penguins
    return core.ru_map(df, METHODS, [0.5, 3.0], reps=2, seed=17, schema=schema, holdout=0.2, holdout_mask=_mask(df),
                       metrics=[*rumap.UTILITY_COLUMNS, *rumap.RISK_COLUMNS, "mia_auc"], **kw)


@pytest.fixture(scope="module")
def serial(penguins):
    with joblib.parallel_config(n_jobs=1):
        return _sweep(penguins)


def test_serial_table_is_the_points_scored_one_by_one(penguins, serial):
    # The reference: each point rebuilt by hand from its recorded seed.
    df, schema = penguins
    train, held = split_holdout(df, 0.2, mask=_mask(df))
    assert len(serial) == 1 + 2 * 2 * 2 + 2 + 2  # original, 2 DP × 2 ε × 2 reps, cart × 2, bootstrap × 2
    for row in serial[serial["method"] != "original"].itertuples():
        eps = None if row.epsilon != row.epsilon else row.epsilon
        assert row.seed == rumap.point_seed(17, row.method, row.epsilon, row.rep)
        synth = core.synthesize(train, row.method, epsilon=eps, schema=schema, seed=int(row.seed)).data
        want = rumap.score(train, synth, schema=schema, seed=int(row.seed), holdout=held,
                           metrics=["pmse_ratio", "dcr_median", "mia_auc"])
        assert (row.pmse_ratio, row.dcr_median, row.mia_auc) == (want["pmse_ratio"], want["dcr_median"],
                                                                 want["mia_auc"])


def test_local_processes_give_the_serial_table(penguins, serial):
    pd.testing.assert_frame_equal(_sweep(penguins, n_jobs=2), serial)
    pd.testing.assert_frame_equal(_sweep(penguins), serial)  # default: every local core


# Slow with worker processes: the worker imports every library (about 4 s of CPU); the cluster of threads
# tries the same dispatch and scatter.
@pytest.mark.parametrize("processes", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_a_dask_cluster_gives_the_serial_table(penguins, serial, processes, monkeypatch):
    # AppTest leaves the app script as __main__, and a spawned worker process would run it again on start.
    from dask import distributed  # a dependency (requirements.txt): missing, this fails rather than skips

    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
    scattered = []
    scatter = distributed.Client.scatter
    monkeypatch.setattr(distributed.Client, "scatter",
                        lambda self, data, *a, **k: (scattered.append(data), scatter(self, data, *a, **k))[1])
    # Two slots, so joblib dispatches to the cluster (with one it runs the points here, serially): two
    # workers of a thread each, or one worker process of two threads, since a process of its own (the rows
    # pickled across a process boundary, __main__ not run again) is what that case tests, and each costs a
    # process importing every library.
    workers, threads = (1, 2) if processes else (2, 1)
    with distributed.LocalCluster(n_workers=workers, threads_per_worker=threads, processes=processes,
                                  dashboard_address=None) as cluster, distributed.Client(cluster):
        with joblib.parallel_config(backend="dask"), distributed.get_task_stream() as stream:
            table = _sweep(penguins)
    # The points ran as tasks of the cluster (joblib names each batch after the function).
    assert any("_point" in task["key"] for task in stream.data)
    pd.testing.assert_frame_equal(table, serial)
    # The rows went to the cluster once for the measure step and once for the points, not with every task.
    assert [type(d).__name__ for d in scattered].count("_Pickled") == 2


def test_n_jobs_none_follows_the_joblib_config():
    assert resolve_n_jobs(None) == -1  # no config: every local core (joblib alone would run serially)
    assert resolve_n_jobs(3) == 3
    with joblib.parallel_config(n_jobs=1):
        assert resolve_n_jobs(None) is None and joblib.Parallel(n_jobs=None).n_jobs == 1
    with joblib.parallel_config(backend="threading", n_jobs=2):
        assert joblib.Parallel(n_jobs=resolve_n_jobs(None)).n_jobs == 2


def test_under_a_serial_config_every_point_runs_in_this_process(penguins):
    register(Metric(name="_pid", label="pid", kind="risk", goal="minimize", lower=0, upper=1e9, best=0,
                    reading="test only", section="test", compute=lambda ctx: os.getpid()))
    try:
        df, schema = penguins
        with joblib.parallel_config(n_jobs=1):
            table = core.ru_map(df, ["independent"], [1.0], seed=1, schema=schema, metrics=["_pid"])
        assert set(table["_pid"]) == {os.getpid()}
    finally:
        unregister("_pid")


def test_points_side_by_side_score_on_one_thread_each(penguins):
    # The DCR's search uses every core by default; run beside other points it would only compete for them.
    register(Metric(name="_threads", label="threads", kind="risk", goal="minimize", lower=-1, upper=64, best=0,
                    reading="test only", section="test", compute=lambda ctx: ctx.options.get("threads", -1)))
    try:
        df, schema = penguins
        kw = dict(seed=1, schema=schema, metrics=["_threads"], references=False)
        with joblib.parallel_config(backend="threading", n_jobs=2):  # threads of this process see the metric
            assert set(core.ru_map(df, ["independent"], [1.0, 2.0], **kw)["_threads"]) == {1}
        with joblib.parallel_config(n_jobs=1):
            assert set(core.ru_map(df, ["independent"], [1.0], **kw)["_threads"]) == {-1}
    finally:
        unregister("_threads")


def test_each_method_is_measured_once_per_sweep(penguins, monkeypatch):
    df, schema = penguins
    calls = []
    for name in ("independent", "dp_seqreg"):
        synth = core.SYNTHESIZERS[name]
        monkeypatch.setattr(synth, "measure", lambda *a, _f=synth.measure, _n=name, **k: (calls.append(_n), _f(*a, **k))[1])
    base._measure_cache.clear()
    with joblib.parallel_config(n_jobs=1):
        core.ru_map(df, ["independent", "dp_seqreg"], [0.5, 1.0, 2.0], reps=2, seed=3, schema=schema,
                    metrics=["ks_mean"], references=False)
    assert sorted(calls) == ["dp_seqreg", "independent"]


def test_a_measurement_passed_in_gives_the_same_synthesis(penguins):
    df, schema = penguins
    measured = base.measurement(df, "dp_seqreg", schema=schema)
    a = core.synthesize(df, "dp_seqreg", epsilon=1.0, schema=schema, seed=4)
    b = core.synthesize(df, "dp_seqreg", epsilon=1.0, schema=schema, seed=4, measured=measured)
    pd.testing.assert_frame_equal(a.data, b.data)
    assert a.ledger == b.ledger


class _Cancel(Exception):
    pass


def test_progress_reports_each_point_and_an_exception_in_it_cancels(penguins):
    df, schema = penguins
    seen = []
    core.ru_map(df, ["independent", "cart"], [0.5, 1.0, 2.0], seed=2, schema=schema, metrics=["ks_mean"], n_jobs=2,
                progress=lambda f, msg: seen.append((f, msg)))
    assert [f for f, _ in seen] == pytest.approx([i / 5 for i in range(1, 6)])  # 3 DP points, cart, bootstrap
    assert sorted(m for _, m in seen) == sorted(
        ["Independent noisy marginals, ε = 0.5, replicate 1", "Independent noisy marginals, ε = 1, replicate 1",
         "Independent noisy marginals, ε = 2, replicate 1", "Sequential CART, not DP, replicate 1", "Bootstrap, not DP, replicate 1"])

    def cancel(f, msg):
        raise _Cancel

    with pytest.raises(_Cancel):
        core.ru_map(df, ["independent"], [0.5, 1.0, 2.0, 4.0], seed=2, schema=schema, metrics=["ks_mean"],
                    n_jobs=2, progress=cancel)
    # The pool is usable after a cancelled sweep.
    assert len(core.ru_map(df, ["independent"], [1.0], seed=2, schema=schema, metrics=["ks_mean"], n_jobs=2)) == 3


def test_a_cancel_leaves_another_sweep_running_at_the_same_time_intact(penguins, serial):
    # Two app sessions share the process pool: joblib's own abort killed its workers under the other sweep.
    df, schema = penguins
    out, started = {}, threading.Event()

    def other():
        out["table"] = _sweep(penguins, n_jobs=2, progress=lambda f, msg: started.set())

    def cancelled(f, msg):
        raise _Cancel

    core.ru_map(df, ["independent"], [1.0], seed=2, schema=schema, metrics=["ks_mean"], n_jobs=2)  # pool started
    thread = threading.Thread(target=other)
    thread.start()
    assert started.wait(120)
    with pytest.raises(_Cancel):
        core.ru_map(df, ["independent"], [0.5, 1.0, 2.0, 4.0], seed=2, schema=schema, metrics=["ks_mean"],
                    n_jobs=2, progress=cancelled)
    thread.join(300)
    pd.testing.assert_frame_equal(out["table"], serial)


SMALL = {"propensity_rows_each": 100, "dcr_rows": 100}  # below penguins' rows, so both samples bite


@pytest.fixture(scope="module")
def sampled(penguins):
    """A sweep at sample sizes small enough to bite on penguins, serially (the reference)."""
    df, schema = penguins
    with joblib.parallel_config(n_jobs=1):
        return core.ru_map(df, ["independent", "dp_seqreg"], [1.0], seed=5, schema=schema, options=SMALL)


def test_sampled_measures_equal_their_computation_on_the_same_samples(penguins, sampled):
    df, schema = penguins
    used = schema.used
    # The DCR's records: drawn here by the rule's definition (uniform, without replacement, public seed),
    # every synthetic row searched; the propensity fit on 100 rows of each table drawn from the point's seed
    # (each table sampled in turn, then the logit with interactions, as the rule is written here).
    records = np.sort(np.random.default_rng(distance.DCR_RECORDS_SEED).choice(len(df), size=100, replace=False))
    assert list(sampled["propensity_rows"]) == [200] * len(sampled)
    assert list(sampled["dcr_rows"]) == [100] * len(sampled)
    for row in sampled.itertuples():
        synth = df if row.method == "original" else core.synthesize(
            df, row.method, epsilon=None if row.epsilon != row.epsilon else row.epsilon, schema=schema,
            seed=int(row.seed)).data
        dcr = float(np.median(core.risk.gower_dcr(df[used].iloc[records], synth[used], schema=schema)))
        rng = np.random.default_rng(int(row.seed))
        rs = df[used].iloc[np.sort(rng.choice(len(df), 100, replace=False))]
        ss = synth[used].iloc[np.sort(rng.choice(len(synth), 100, replace=False))]
        cats = [c for c in used if schema[c].kind == "categorical"]
        fit = core.utility.propensity_metrics(rs, ss, interactions=True, seed=rng, categorical=cats, max_rows=200)
        assert (row.dcr_median, row.pmse_ratio, row.auc, row.specks) == (dcr, fit.pmse_ratio, fit.auc, fit.specks)
    # Every row would give other figures: the samples are what the table reports.
    full = rumap.score(df, core.synthesize(df, "independent", epsilon=1.0, schema=schema,
                                           seed=int(sampled["seed"][1])).data, schema=schema,
                       seed=int(sampled["seed"][1]), metrics=["dcr_median", "pmse_ratio"])
    assert (full["dcr_median"], full["pmse_ratio"]) != (sampled["dcr_median"][1], sampled["pmse_ratio"][1])


def test_sampled_sweep_in_local_processes_gives_the_serial_table(penguins, sampled):
    df, schema = penguins
    table = core.ru_map(df, ["independent", "dp_seqreg"], [1.0], seed=5, schema=schema, options=SMALL, n_jobs=2)
    pd.testing.assert_frame_equal(table, sampled)


def test_the_sample_sizes_are_columns_of_the_default_sweep(penguins, serial):
    # Penguins has fewer rows than either cap: every record measured, every row stacked.
    df, schema = penguins
    train = int((~_mask(df)).sum())
    assert set(serial["dcr_rows"]) == {train}
    assert (serial["propensity_rows"] > train).all()
    # A sweep without those measures has no such columns.
    with joblib.parallel_config(n_jobs=1):
        table = core.ru_map(df, ["independent"], [1.0], seed=1, schema=schema, metrics=["ks_mean"])
    assert not {"propensity_rows", "dcr_rows"} & set(table.columns)


def test_dcr_records_are_a_fixed_uniform_subset_not_the_first_rows():
    n, k = 53_940, 10_000
    rows = distance.dcr_records(n, k)
    assert len(np.unique(rows)) == k and rows.min() >= 0 and rows.max() < n
    assert (rows == distance.dcr_records(n, k)).all()  # the same records on every call
    # Each quarter of the table holds a quarter of them: 2,500 ± 4.6 sd (sd = √(k·¼·¾·(n − k)/(n − 1)) ≈ 39),
    # not the first 10,000 rows (on diamonds, its cheapest stones).
    quarters = np.bincount(rows * 4 // n, minlength=4)
    assert np.all(np.abs(quarters - k / 4) < 180), quarters
    assert (distance.dcr_records(n, None) == np.arange(n)).all() and (distance.dcr_records(50, 80) == np.arange(50)).all()
