"""The measure step of count-based methods on a Dask DataFrame: the same measurement as on pandas."""

import dataclasses

import numpy as np
import pandas as pd
import pytest

import dpsynth_core as core
from dpsynth_core.synth import base
from dpsynth_core.synth.counting import counts, marginals

pytestmark = pytest.mark.integration  # a Dask cluster: scripts/test.sh runs it


PARTITIONED = ["independent", "dirichlet", "dp_seqreg"]


@pytest.fixture(scope="module")
def cluster():
    from dask import distributed  # a dependency (requirements.txt): missing, this fails rather than skips

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as c, distributed.Client(c) as client:
        yield client


@pytest.fixture(scope="module")
def penguins():
    from dask import dataframe as dd  # imported here: a plain pytest, which leaves these tests out, never loads it

    df, schema = core.load_bundled("penguins")
    # Uneven partitions, one holding a single row: sums must not depend on where rows fall.
    ddf = dd.from_pandas(df, npartitions=1).repartition(divisions=[0, 1, 100, 250, len(df) - 1])
    assert ddf.npartitions == 4
    return df, ddf, schema


def same(a, b, path="measurement"):
    """Equal, recursively: counts exactly; float sums up to 1e-12 relative (the order of addition differs)."""
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        assert type(a) is type(b), path
        for f in dataclasses.fields(a):
            same(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{path}[{i}]")
    elif isinstance(a, np.ndarray):
        assert a.shape == b.shape and a.dtype == b.dtype, path
        if a.dtype.kind in "iub":
            assert np.array_equal(a, b), path
        else:
            np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-9, err_msg=path)
    else:
        assert a == b, path


@pytest.mark.parametrize("method", PARTITIONED)
def test_a_dask_frame_is_measured_as_the_pandas_frame(cluster, penguins, method):
    df, ddf, schema = penguins
    want = base.measurement(df, method, schema=schema)
    got = base.measurement(ddf, method, schema=schema)
    same(want, got)
    # ... so a release from it is the release from pandas, draw for draw.
    a = core.synthesize(df, method, epsilon=1.0, schema=schema, seed=5)
    b = core.synthesize(df, method, epsilon=1.0, schema=schema, seed=5, measured=got)
    if method == "dp_seqreg":  # its moments agree to rounding only, which may move a sampled value
        assert a.ledger == b.ledger
    else:
        pd.testing.assert_frame_equal(a.data, b.data)


def test_a_release_needs_only_a_few_rows_in_memory_beside_the_dask_measurement(cluster, penguins):
    # With n declared, synthesize reads the frame only for its columns and dtypes: 20 rows stand in for the
    # table (pandas rows: Dask's head() gives its own string dtype, which the synthetic columns would take).
    df, ddf, schema = penguins
    got = base.measurement(ddf, "dirichlet", schema=schema)
    a = core.synthesize(df, "dirichlet", epsilon=1.0, schema=schema, n=300, seed=8)
    b = core.synthesize(df.head(20), "dirichlet", epsilon=1.0, schema=schema, n=300, seed=8, measured=got)
    pd.testing.assert_frame_equal(a.data, b.data)
    assert a.ledger == b.ledger


def test_counts_are_the_crosstab_of_the_codes(cluster, penguins):
    df, ddf, schema = penguins
    table = counts(ddf, schema, ["species", "island", "sex"], bins=5)
    # Independent reference: pandas' crosstab over the declared categories (rows with a missing sex dropped,
    # unless sex is nullable, when missing is its last code).
    sex_levels = list(schema["sex"].categories)
    want = pd.crosstab([df["species"], df["island"]], df["sex"].fillna("__missing__"), dropna=False)
    levels = sex_levels + (["__missing__"] if schema["sex"].nullable else [])
    for i, sp in enumerate(schema["species"].categories):
        for j, isl in enumerate(schema["island"].categories):
            for k, sx in enumerate(levels):
                n = want.loc[(sp, isl), sx] if (sp, isl) in want.index and sx in want.columns else 0
                assert table[i, j, k] == n
    assert [m.tolist() for m in marginals(ddf, schema, ["island"], 5)] == [
        [int((df["island"] == c).sum()) for c in schema["island"].categories]]


def test_methods_that_need_the_data_in_memory_say_so(penguins):
    _, ddf, schema = penguins
    with pytest.raises(ValueError, match="needs the data in memory"):
        base.measurement(ddf, "cart", schema=schema)
    with pytest.raises(ValueError, match="needs a declared schema"):
        base.measurement(ddf, "independent")
