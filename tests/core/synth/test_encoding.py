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
from dpsynth_core.synth.encoding import (OUTSIDE, column_domain, decode_column, encode_column, in_schema_dtype,
                                        schema_dtype, view_codes)

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


# --- special values: a cell each, decoded exactly ------------------------------------------------------

def _hours(**kw) -> ColumnSchema:
    return ColumnSchema(name="hours", kind="numeric", bounds=(0.0, 100.0), integer=True, nullable=True,
                        specials=(0.0, -8.0), **kw)


def test_special_values_have_cells_after_the_bins_and_before_missing():
    col = _hours()
    d = column_domain(col, 4)  # bins [0, 25), [25, 50), [50, 75), [75, 100]
    assert d.n_bins == 4 and d.size == 4 + 2 + 1 and d.missing_code == 6
    assert d.labels[4:] == (0.0, -8.0)
    values = pd.Series([0, -8, 1, 30, 99, 100, None, 150, -3])
    # 0 and −8 go to their own cells (−8 is below the bounds: a special value is not clipped); 1 to the
    # first bin; 150 and −3 are clipped into the last and first bins; None is missing.
    assert encode_column(values, d).tolist() == [4, 5, 0, 1, 3, 3, 6, 3, 0]


def test_special_cells_decode_exactly_and_bins_never_decode_to_a_special_value():
    col = _hours()
    d = column_domain(col, 40)  # width 2.5: the first bin's whole numbers are 0, 1, 2 (and 3 only at its edge)
    rng = np.random.default_rng(7)
    codes = np.array([40] * 1000 + [41] * 1000 + [0] * 20_000 + [d.missing_code] * 10)
    x = decode_column(codes, d, rng)
    assert (x[:1000] == 0).all() and (x[1000:2000] == -8).all() and np.isnan(x[-10:]).all()
    first = x[2000:-10]
    # Without the redraw, rint of a uniform on [0, 2.5) is 0 a fifth of the time; with it, never.
    assert not (first == 0).any() and set(np.unique(first)) == {1.0, 2.0}
    # Every value drawn in the bin keeps its law apart from the special value: 1 and 2 as often as
    # rint gives them on [0.5, 2.5): one half each (binomial sd 0.0035; 5 sd tolerance).
    assert abs((first == 1).mean() - 0.5) < 0.018


def test_a_column_without_special_values_decodes_as_before():
    col = ColumnSchema(name="x", kind="numeric", bounds=(0.0, 10.0))
    d = column_domain(col, 5)
    codes = np.array([0, 2, 4, 4])
    got = decode_column(codes, d, np.random.default_rng(3))
    u = np.random.default_rng(3).random(4)
    np.testing.assert_array_equal(got, d.edges[codes] + u * 2.0)  # bins of width 2, one uniform each


def test_a_bin_never_decodes_onto_a_special_value_at_the_declared_precision():
    # x in [0, 10] with 2 decimals and 0 special: a draw below 0.005 would be written 0.00, so it is drawn again.
    col = ColumnSchema(name="x", kind="numeric", bounds=(0.0, 10.0), decimals=2, specials=(0.0,))
    d = column_domain(col, 1000)  # the first bin is [0, 0.01): half its draws round to 0.00, the others to 0.01
    x = decode_column(np.zeros(5000, dtype=np.int64), d, np.random.default_rng(2))
    assert not (np.round(x, 2) == 0).any() and (np.round(x, 2) == 0.01).all()


@pytest.mark.parametrize("bounds, decimals, integer, values, expected", [
    # plain rounding where the bounds are on the grid
    ((0.0, 1.0), 1, False, [0.04, 0.96, np.nan], [0.0, 1.0, np.nan]),
    # an upper bound off the grid: 0.96 would round out to 1.0, it rounds in to 0.9 instead
    ((0.0, 0.97), 1, False, [0.96, 0.5], [0.9, 0.5]),
    # a whole-number column with a bound at 10.5: 10.4 rounds to 10, 10.5 itself to 10, not 11 (banker's
    # rounding would give 10 anyway; 10.49 shows the clip is not what moves it)
    ((0.5, 10.5), None, True, [0.6, 10.49, 10.5], [1, 10, 10]),
    # no grid point between the bounds: plain rounding (the declaration cannot be met by any rounding)
    ((0.01, 0.02), 1, False, [0.015], [0.0]),
    # a value already outside the bounds is rounded and left where it is
    ((0.0, 0.97), 1, False, [1.26], [1.3]),
])
def test_numbers_are_rounded_to_their_precision_without_leaving_their_bounds(bounds, decimals, integer, values,
                                                                           expected):
    col = ColumnSchema(name="x", kind="numeric", bounds=bounds, decimals=decimals, integer=integer, nullable=True)
    out = in_schema_dtype(np.array(values, dtype=float), col)
    expect = pd.Series(expected, dtype="Int64" if integer else float)
    pd.testing.assert_series_equal(out.reset_index(drop=True), expect, check_names=False)


def test_a_tiny_number_keeps_its_digits_when_its_precision_is_inferred():
    from dpsynth_core.schema import infer_column
    col = infer_column(pd.Series([0.0, 3.2589635082121624e-27, 1.5], name="b"))
    assert col.decimals is None  # 27 digits are past MAX_DECIMALS: not rounded at all
    assert infer_column(pd.Series([0.25, 1e-6, 3.0], name="c")).decimals == 6
    assert infer_column(pd.Series([1e12, 2.5], name="d")).decimals == 1


@pytest.mark.parametrize("fine, merge", [(40, 4), (40, 2), (20, 2)])
def test_a_view_of_a_fine_grid_is_the_coarser_grid(fine, merge):
    # 40 bins merged 4 at a time are the 10 bins that encoding at 10 bins gives (the fine edges
    # hold the coarse ones, bounds [0, 100]); special values and missing keep cells of their own
    col = ColumnSchema(name="x", kind="numeric", bounds=(0.0, 100.0), nullable=True, specials=(-1.0,))
    rng = np.random.default_rng(3)
    values = pd.Series(np.concatenate([rng.uniform(0, 100, 2000), [-1.0, 0.0, 100.0, np.nan, 2.5, 97.5]]))
    fine_domain, coarse_domain = column_domain(col, fine), column_domain(col, fine // merge)
    got = view_codes(fine_domain, merge)[encode_column(values, fine_domain)]
    np.testing.assert_array_equal(got, encode_column(values, coarse_domain))
    categorical = column_domain(ColumnSchema(name="c", kind="categorical", categories=("a", "b", "c")), fine)
    assert view_codes(categorical, merge).tolist() == [0, 1, 2]  # no order: never merged
