"""``risk._base.shared_codes`` factorises each part alone and then their distinct values: its codes must be
those of factorising the joined parts (the reference written out below), for parts of any mix of dtypes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpsynth_core.risk._base import shared_codes

S = pd.Series
PARTS = [
    [S(["a", "b", None]), S(["b", "c"], dtype=object)],
    [S([1, 2, 3]), S([1.0, 2.5, np.nan])],  # 1 and 1.0 are one value
    [S([1, 2, 3]), S(["1", 2], dtype=object)],  # "1" is not 1
    [S([1, 2, None], dtype="Int64"), S([2, 1, 0])],
    [S([True, False]), S([1, 0])],
    [S([True, False], dtype=object), S([1, 0.0], dtype=object)],
    [S(["x", "y"], dtype="category"), S(["y", "z"])],
    [S([], dtype=float), S([1.0])],
    [S([0.0, -0.0]), S([0.0])],
    [S([np.nan, None], dtype=object), S([None])],  # every missing value is one code
    [S(["a"]), S([1.5]), S([1.5, "a"], dtype=object)],
    [S(pd.to_datetime(["2020-01-01", None])), S(pd.to_datetime(["2020-01-01"]))],
]


def _joined_codes(parts):
    """The reference: one factorisation of all parts joined, missing values last."""
    joined = pd.concat([p.reset_index(drop=True) for p in parts], ignore_index=True)
    codes, uniques = pd.factorize(joined)
    codes = np.where(codes < 0, len(uniques), codes)
    return np.split(codes, np.cumsum([len(p) for p in parts])[:-1])


@pytest.mark.parametrize("parts", PARTS)
def test_shared_codes_are_those_of_the_joined_parts(parts):
    got, expected = shared_codes(parts), _joined_codes(parts)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)
        assert g.dtype == np.int64


def test_shared_codes_on_large_random_parts():
    rng = np.random.default_rng(11)
    words = np.array(["n", "s", None, "e", "w"], dtype=object)
    parts = [S(words[rng.integers(0, 5, 20_000)]).astype("str"), S(words[rng.integers(0, 4, 30_000)]),
             S(words[rng.integers(1, 5, 500)], index=rng.permutation(500))]
    for g, e in zip(shared_codes(parts), _joined_codes(parts)):
        np.testing.assert_array_equal(g, e)
