"""Tests for dpsynth_core.synth.encoding's shortcuts: each must equal the plain pandas way it replaces.

``encode_column`` looks each distinct value of a categorical column up among the categories once, and
``in_schema_dtype`` converts each distinct decoded label once; the references are the row-by-row calls
(``pd.Categorical(values, categories).codes`` and ``pd.Series(values).astype(dtype)``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from dpsynth_core.schema import ColumnSchema
from dpsynth_core.synth.encoding import OUTSIDE, column_domain, encode_column, in_schema_dtype, schema_dtype

# (values, declared categories): text, whole numbers, floats and booleans, with missing values, labels
# outside the categories, and equal labels of different types (1, 1.0, True hash alike).
CASES = [
    (["a", "b", None, "a", np.nan, "z"], ("a", "b")),
    ([1, 2, None, 1, True, 7], (1, 2)),
    ([True, 1, 0.0, False], (0, 1)),
    ([1.0, 2.5, None, 2.5], (1.0, 2.5)),
    ([True, False, None], (False, True)),
    ([1, True, "1"], ("1", "a")),
    ([], ("a",)),
    ([np.nan, None], (1, 2)),
    ([1, 1.5], (1, 2)),  # 1.5 is no whole number: left as it is
    ([1, "x"], (1, 2)),
    ([2**64, 3], (3, 2**64)),  # past int64: kept as Python objects
]


def _reference_dtype(values: np.ndarray, dtype) -> pd.Series:
    try:
        return pd.Series(values).astype(dtype)
    except (TypeError, ValueError, OverflowError):
        return pd.Series(values)


@pytest.mark.parametrize("values, categories", CASES)
def test_labels_convert_as_pandas_converts_them_row_by_row(values, categories):
    col = ColumnSchema(name="c", kind="categorical", categories=categories)
    labels = np.array(values, dtype=object)
    pd.testing.assert_series_equal(in_schema_dtype(labels, col), _reference_dtype(labels, schema_dtype(col)))


@pytest.mark.parametrize("values, categories", CASES)
@pytest.mark.parametrize("nullable", [False, True])
@pytest.mark.parametrize("as_type", ["object", "inferred", "category"])
def test_categorical_codes_are_pandas_categorical_codes(values, categories, nullable, as_type):
    col = ColumnSchema(name="c", kind="categorical", categories=categories, nullable=nullable)
    domain = column_domain(col, 20)
    series = {"object": pd.Series(values, dtype=object), "inferred": pd.Series(values),
              "category": pd.Series(values, dtype=object).astype("category")}[as_type]
    with warnings.catch_warnings():  # pandas deprecates values outside the categories: they are wanted here
        warnings.simplefilter("ignore")
        expected = pd.Categorical(series, categories=list(categories)).codes.astype(np.int64)
    expected[series.isna().to_numpy()] = len(categories) if nullable else OUTSIDE
    np.testing.assert_array_equal(encode_column(series, domain), expected)


def test_categorical_codes_on_a_large_random_column():
    rng = np.random.default_rng(5)
    labels = np.array(["n", "s", "e", "w", None, "x"], dtype=object)
    series = pd.Series(labels[rng.integers(0, len(labels), 50_000)])
    col = ColumnSchema(name="c", kind="categorical", categories=("e", "n", "s", "w"), nullable=True)
    codes = encode_column(series, column_domain(col, 20))
    by_hand = {"e": 0, "n": 1, "s": 2, "w": 3, None: 4, "x": OUTSIDE}
    np.testing.assert_array_equal(codes, [by_hand[v if isinstance(v, str) else None] for v in series.astype(object)])
