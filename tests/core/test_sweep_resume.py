"""An R-U sweep cut short resumes from its last finished point with the results of an uninterrupted sweep
(issue 32.1): finished points are kept in the ledger store beside their entries, the rest computed with the
same seeds, and no point is counted twice."""

import joblib
import pandas as pd
import pytest

import dpsynth_core as core
from dpsynth_core.privacy import LedgerStore, Use

METHODS, GRID = ["independent", "mst"], [0.5, 2.0]
KW = dict(seed=3, metrics=["pmse_ratio", "dcr_median", "ks_mean"])


class _Cut(Exception):
    pass


@pytest.fixture(scope="module")
def penguins():
    return core.load_bundled("penguins")


def _stop_after(k: int):
    calls = []

    def progress(fraction, message):
        calls.append(message)
        if len(calls) == k:
            raise _Cut  # as the app's Cancel, or a server stopping mid-sweep, leaves it
    return progress


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_cut_sweep_resumes_with_the_uninterrupted_table_and_counts_each_point_once(penguins, tmp_path, n_jobs):
    df, schema = penguins
    use = Use("penguins", core.fingerprint(df))
    whole_store, cut_store = LedgerStore(tmp_path / "whole.sqlite3"), LedgerStore(tmp_path / "cut.sqlite3")
    with joblib.parallel_config(n_jobs=n_jobs):
        whole = core.ru_map(df, METHODS, GRID, schema=schema, use=use, store=whole_store, **KW)
        with pytest.raises(_Cut):
            core.ru_map(df, METHODS, GRID, schema=schema, use=use, store=cut_store, progress=_stop_after(2), **KW)
        cut = cut_store.unfinished_sweeps(use.fingerprint)
        # 6 points: the original data, 2 × 2 DP points, the bootstrap; at least the 2 reported were kept (with two
        # workers a third may have finished before the cancel reached the pool).
        assert len(cut) == 1 and cut[0]["total"] == 6 and cut[0]["done"] >= 2
        before = len(cut_store.entries(use.fingerprint))
        seen = []
        resumed = core.ru_map(df, METHODS, GRID, schema=schema, use=use, store=cut_store,
                              progress=lambda f, m: seen.append(m), **KW)
    pd.testing.assert_frame_equal(resumed, whole)
    synth_points = 5  # all but the original data
    kept = synth_points - len(seen)
    assert kept >= 2 and before == kept  # only the missing points were computed, each written once
    assert len(cut_store.entries(use.fingerprint)) == len(whole_store.entries(use.fingerprint)) == synth_points
    assert cut_store.unfinished_sweeps(use.fingerprint) == []


def test_a_finished_sweep_run_again_computes_and_counts_nothing(penguins, tmp_path):
    df, schema = penguins
    use, store = Use("penguins", core.fingerprint(df)), LedgerStore(tmp_path / "s.sqlite3")
    first = core.ru_map(df, ["independent"], [1.0], schema=schema, use=use, store=store, n_jobs=1, **KW)
    seen = []
    again = core.ru_map(df, ["independent"], [1.0], schema=schema, use=use, store=store, n_jobs=1,
                        progress=lambda f, m: seen.append(m), **KW)
    pd.testing.assert_frame_equal(again, first)
    assert seen == [] and len(store.entries(use.fingerprint)) == 2  # independent at ε 1, the bootstrap


def test_other_settings_are_another_sweep(penguins, tmp_path):
    # A point is kept for the settings that fix it: another seed, grid or measure computes afresh.
    df, schema = penguins
    use, store = Use("penguins", core.fingerprint(df)), LedgerStore(tmp_path / "s.sqlite3")
    core.ru_map(df, ["independent"], [1.0], schema=schema, use=use, store=store, n_jobs=1, **KW)
    seen = []
    core.ru_map(df, ["independent"], [1.0], schema=schema, use=use, store=store, n_jobs=1, seed=4,
                metrics=KW["metrics"], progress=lambda f, m: seen.append(m))
    assert len(seen) == 2
