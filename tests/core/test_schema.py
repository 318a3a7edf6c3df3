"""Tests for dpsynth_core.schema: inference and declared schemas (the editable table: test_schema_editor.py).

Expected kinds, bounds and counts are written out by hand from the small
frames built here, or counted from the raw CSV text with the csv module.
"""

from __future__ import annotations

import csv
import json

import numpy as np
import pandas as pd
import pytest

from dpsynth_core import constraints
from dpsynth_core.datasets import load_bundled
from dpsynth_core.schema import ColumnSchema, Schema, infer_column, infer_schema, merge_declared, schema_of
from tests.conftest import DATA

RNG_SEED = 20240611


def _col(values, name="c"):
    return infer_column(pd.Series(values, name=name))


# --- infer_column: one case per rule ----------------------------------------

def test_integer_with_three_values_is_categorical():
    col = _col([3, 1, 2, 1, 3, 3, 2, 1] * 4)
    assert col.kind == "categorical"
    assert col.categories == (1, 2, 3)
    assert col.derived and "3 distinct values" in col.reason
    assert col.n_missing == 0 and not col.nullable


def test_consecutive_integer_per_row_is_an_identifier():
    n = constraints.ID_MIN_ROWS  # 20 rows: the smallest table where the rule applies
    ids = np.random.default_rng(RNG_SEED).permutation(np.arange(101, 101 + n))  # shuffled 101..120
    col = _col(ids)
    assert col.kind == "excluded"
    assert "identifier" in col.reason


def test_identifier_rule_needs_enough_rows_and_consecutive_values():
    # 19 consecutive whole numbers: too few rows for "distinct per row" to mean anything.
    short = _col(np.arange(1, constraints.ID_MIN_ROWS))
    assert short.kind == "numeric" and short.integer and short.bounds == (1.0, 19.0)
    # 25 distinct even numbers: distinct per row but with gaps, so a measurement, not an id.
    even = _col(np.arange(2, 52, 2))
    assert even.kind == "numeric" and even.bounds == (2.0, 50.0)


def test_text_distinct_per_row_is_excluded():
    col = _col([f"person-{i:03d}" for i in range(30)])
    assert col.kind == "excluded"
    assert "identifier" in col.reason


def test_text_with_too_many_levels_is_excluded_and_the_limit_itself_is_kept():
    k = constraints.MAX_CATEGORIES + 1
    over = _col([f"level {i}" for i in range(k)] * 2)  # 2k rows, so not one value per row
    assert over.kind == "excluded"
    assert f"{k} distinct values" in over.reason and "too many categories" in over.reason
    at_limit = _col([f"level {i}" for i in range(constraints.MAX_CATEGORIES)] * 2)
    assert at_limit.kind == "categorical" and len(at_limit.categories) == constraints.MAX_CATEGORIES


def test_mostly_numeric_text_is_excluded_as_mixed():
    col = _col(["1", "2.5", "3", "oops", "4"])  # 4 of 5 parse as numbers
    assert col.kind == "excluded"
    assert "mixed types" in col.reason and "'oops'" in col.reason


def test_mostly_text_with_a_few_numbers_stays_categorical():
    col = _col(["a", "b", "7", "a", "b", "a"])  # 1 of 6 parses as a number
    assert col.kind == "categorical"
    assert col.categories == ("7", "a", "b")


def test_all_missing_column_is_excluded():
    col = _col([np.nan] * 7)
    assert col.kind == "excluded"
    assert col.n_missing == 7 and col.nullable
    assert "missing" in col.reason


def test_numeric_bounds_are_min_and_max_and_derived():
    values = [3.5, 1.25, np.nan, 7.0, 2.0, np.nan, 6.75]
    col = _col(values)
    assert col.kind == "numeric"
    assert col.bounds == (1.25, 7.0)  # smallest and largest observed value
    assert col.derived is True
    assert col.integer is False
    assert col.n_missing == 2 and col.nullable is True


def test_whole_numbers_with_many_values_are_integer_numeric():
    values = [10, 13, 17, 22, 25, 31, 40, 44, 52, 60, 71, 80]  # 12 distinct > 10, with gaps
    col = _col(values)
    assert col.kind == "numeric" and col.integer and col.bounds == (10.0, 80.0)


def test_missing_values_counted_in_categorical_text():
    col = _col(["x", None, "y", "x", np.nan, "y"])
    assert col.kind == "categorical"
    assert col.categories == ("x", "y")
    assert col.n_missing == 2 and col.nullable


def test_booleans_are_categorical():
    col = _col([True, False, True, True])
    assert col.kind == "categorical" and col.categories == (False, True)


def test_infer_schema_on_penguins_counts_missing_values_from_the_file():
    df = pd.read_csv(DATA / "penguins.csv")
    with open(DATA / "penguins.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    schema = infer_schema(df)
    for name, col in schema.columns.items():
        n_na = sum(r[name] == "NA" for r in rows)
        assert col.n_missing == n_na, name
        assert col.nullable == (n_na > 0), name
    assert schema["sex"].n_missing == 11
    assert schema["year"].kind == "categorical" and schema["year"].categories == (2007, 2008, 2009)
    observed = [float(r["flipper_length_mm"]) for r in rows if r["flipper_length_mm"] != "NA"]
    assert schema["flipper_length_mm"].bounds == (min(observed), max(observed))
    assert not schema.is_public  # every domain was read off the data


def test_infer_schema_rejects_non_frames():
    with pytest.raises(TypeError):
        infer_schema([[1, 2], [3, 4]])


# --- declared schemas --------------------------------------------------------

def test_from_dict_to_dict_round_trip_keeps_key_and_sensitive_flags():
    spec = json.loads((DATA / "diamonds.schema.json").read_text(encoding="utf-8"))
    schema = Schema.from_dict(spec)
    assert schema.keys == ("carat", "cut", "color", "clarity")
    assert schema.sensitive == "price"
    assert schema["price"].integer and schema["price"].bounds == (326.0, 18823.0)
    assert schema.to_dict() == spec  # the file is written in the canonical form
    assert Schema.from_dict(schema.to_dict()) == schema
    json.dumps(schema.to_dict())


def test_round_trip_of_an_inferred_schema_keeps_reasons_and_missing_counts():
    df = pd.read_csv(DATA / "penguins.csv")
    schema = infer_schema(df).with_roles(keys=["species", "island"], sensitive="body_mass_g")
    back = Schema.from_dict(json.loads(json.dumps(schema.to_dict())))
    assert back == schema
    assert back["sex"].n_missing == 11 and back["sex"].derived


@pytest.mark.parametrize("spec, words", [
    ({"a": {"kind": "numeric"}}, "bounds"),
    ({"a": {"kind": "categorical"}}, "categories"),
    ({"a": {"kind": "categorical", "categories": []}}, "categories"),
    ({"a": {"kind": "numeric", "bounds": [5, 1]}}, "lower <= upper"),
    ({"a": {"kind": "numeric", "bounds": [0, float("inf")]}}, "finite"),
    ({"a": {"kind": "numeric", "bounds": [1]}}, "bounds"),
    ({"a": {"kind": "ordinal", "categories": [1]}}, "kind"),
    ({"a": {"kind": "numeric", "bounds": [0, 1], "sensitive": True},
      "b": {"kind": "numeric", "bounds": [0, 1], "sensitive": True}}, "only one"),
    ({}, "non-empty"),
    ({"a": [0, 1]}, "mapping"),
])
def test_from_dict_errors(spec, words):
    with pytest.raises(ValueError, match=words):
        Schema.from_dict(spec)


def test_keys_must_be_columns():
    cols = {"a": ColumnSchema(name="a", kind="numeric", bounds=(0, 1))}
    with pytest.raises(ValueError, match="'b'"):
        Schema(cols, keys=("b",))


def test_equal_bounds_are_allowed():
    assert Schema.from_dict({"a": {"bounds": [2, 2]}})["a"].bounds == (2.0, 2.0)


def test_is_public():
    declared = Schema.from_dict({"a": {"kind": "categorical", "categories": ["x", "y"]},
                                 "b": {"kind": "numeric", "bounds": [0, 1]}})
    assert declared.is_public and declared.derived_columns == []
    one_derived = declared.replace_column("b", derived=True)
    assert not one_derived.is_public and one_derived.derived_columns == ["b"]
    # An excluded column is not modelled, so its (derived) status does not matter.
    excluded = one_derived.replace_column("b", kind="excluded")
    assert excluded.is_public and excluded.used == ["a"]


def test_merge_declared_keeps_missing_counts_from_the_data():
    df, merged = load_bundled("penguins")
    declared = Schema.from_dict(json.loads((DATA / "penguins.schema.json").read_text(encoding="utf-8")))
    assert declared["sex"].n_missing == 0  # the file says nothing about this data's gaps
    with open(DATA / "penguins.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for name in df.columns:
        assert merged[name].n_missing == sum(r[name] == "NA" for r in rows), name
        # every other field is the declared one
        assert merged[name].replace(n_missing=0) == declared[name], name
    assert merged.is_public
    assert merged.keys == ("species", "island", "sex") and merged.sensitive == "body_mass_g"
    assert list(merged.columns) == list(df.columns)


def test_merge_declared_keeps_inferred_columns_the_declaration_omits():
    df = pd.DataFrame({"a": [1.5, 2.5, 9.0], "b": ["u", "v", "u"]})
    declared = Schema.from_dict({"a": {"bounds": [0, 10]}})
    merged = merge_declared(infer_schema(df), declared)
    assert merged["a"].bounds == (0.0, 10.0) and not merged["a"].derived
    assert merged["b"].derived and merged["b"].categories == ("u", "v")
    assert merged.derived_columns == ["b"]


@pytest.mark.parametrize("declaration", ["none", "inferred", "bundled file", "every column", "some columns",
                                         "other order"])
def test_schema_of_is_merge_declared_of_the_inferred_schema(declaration):
    """schema_of skips inference when every column is declared: the result must be the merge's all the same
    (the missing counts read off this data, the declared fields, keys and sensitive column, column order)."""
    df = pd.read_csv(DATA / "penguins.csv")
    df["id"] = np.arange(1, len(df) + 1)  # an excluded column
    bundled = Schema.from_dict(json.loads((DATA / "penguins.schema.json").read_text(encoding="utf-8")))
    inferred = infer_schema(df)
    declared = {"none": None,
                "inferred": inferred.with_roles(keys=("island", "sex"), sensitive="body_mass_g"),
                "bundled file": bundled,  # no "id": that column is inferred
                # the file says nothing of this data's gaps (n_missing 0): they must be counted
                "every column": Schema({**bundled.columns, "id": ColumnSchema(name="id", kind="excluded")},
                                       keys=bundled.keys, sensitive=bundled.sensitive),
                "some columns": Schema.from_dict({"bill_length_mm": {"bounds": [0, 100]}}),
                "other order": Schema(dict(reversed(merge_declared(inferred, bundled).columns.items())),
                                      keys=("sex",))}[declaration]
    expected = inferred if declared is None else merge_declared(inferred, declared)
    got = schema_of(df, declared)
    assert got == expected
    assert list(got.columns) == list(df.columns)
    assert got["sex"].n_missing == int(df["sex"].isna().sum()) > 0


def test_bulk_declarations_cover_their_fields_only():
    df = pd.read_csv(DATA / "penguins.csv")
    schema = infer_schema(df)
    cats = schema.declare({"kind", "categories"}, kinds=["categorical"])
    for name, col in cats.columns.items():
        if col.kind == "categorical":
            assert col.declared_fields == {"kind", "categories"}  # nullable still read off the data
        else:
            assert col == schema[name]
    bounds = cats.declare({"kind", "lower", "upper"}, kinds=["numeric"])
    assert all({"lower", "upper"} <= c.declared_fields for c in bounds.columns.values() if c.kind == "numeric")
    assert bounds.undeclared_columns == list(schema.columns)
    everything = bounds.declare({"kind", "integer", "nullable", "decimals"})
    assert everything.undeclared_columns == [] and everything.is_public
    assert all(c.reason == "declared on the Data page" for c in everything.columns.values())


def test_schema_json_round_trip_keeps_field_provenance():
    df = pd.read_csv(DATA / "penguins.csv")
    schema = infer_schema(df).declare({"lower"}, kinds=["numeric"])
    text = json.dumps(schema.to_dict(), default=str)
    back = Schema.from_dict(json.loads(text))
    assert back == schema
    assert json.loads(text)["bill_length_mm"]["derived"] == ["decimals", "integer", "kind", "nullable", "upper"]
    with pytest.raises(ValueError, match="derived must be"):
        Schema.from_dict({"a": {"kind": "numeric", "bounds": [0, 1], "derived": "yes"}})
    with pytest.raises(ValueError, match="unknown field"):
        Schema.from_dict({"a": {"kind": "numeric", "bounds": [0, 1], "derived": ["lowr"]}})


def test_public_view_has_no_count_reason_or_value_read_off_the_data():
    df = pd.read_csv(DATA / "penguins.csv")
    declared = merge_declared(infer_schema(df), load_bundled("penguins")[1])
    public = declared.to_public_dict()
    assert public["bill_length_mm"] == {"kind": "numeric", "bounds": [30.0, 60.0], "integer": False,
                                        "nullable": True}
    assert public["species"] == {"kind": "categorical", "categories": ["Adelie", "Chinstrap", "Gentoo"],
                                 "nullable": False}
    assert all("n_missing" not in c and "reason" not in c for c in public.values())
    inferred = infer_schema(df).to_public_dict()
    assert inferred["body_mass_g"] == {"withheld": ["kind", "lower", "upper", "integer", "nullable"]}


@pytest.mark.parametrize("values, decimals", [
    ([0.5, 1.25, 3.0], 2), ([1.1, 2.2, 1e6 + 0.3], 1), ([1 / 3, 0.5], None), ([12.5, 7.5, 1.0], 1),
])
def test_inferred_precision_is_the_fewest_decimals_that_write_every_value(values, decimals):
    col = _col(values * 10 + [v + 100 for v in values] * 10)
    assert col.kind == "numeric" and col.decimals == decimals


# --- special values and private estimates in the schema ------------------------

def test_inferred_special_values_are_the_values_holding_a_tenth():
    # 0 holds 40 %, 99999 holds 10 % (exactly the share), 7 holds 5 %: two special values, most frequent first.
    values = [0.0] * 40 + [99999.0] * 10 + [7.0] * 5 + [float(v) for v in range(100, 145)]
    col = _col(values)
    assert col.kind == "numeric" and col.specials == (0.0, 99999.0)
    assert "specials" in col.derived_fields and "specials" in col.relevant_fields
    # A column with no such value has none, and the field does not apply.
    assert _col([0.5 * v for v in range(40)]).relevant_fields == {"kind", "lower", "upper", "integer", "nullable",
                                                               "decimals"}


def test_special_values_are_checked():
    with pytest.raises(ValueError, match="special values must be numbers"):
        ColumnSchema(name="x", kind="numeric", bounds=(0, 1), specials=("a",))
    with pytest.raises(ValueError, match="finite"):
        ColumnSchema(name="x", kind="numeric", bounds=(0, 1), specials=(float("nan"),))
    with pytest.raises(ValueError, match=f"at most {constraints.MAX_SPECIALS}"):
        ColumnSchema(name="x", kind="numeric", bounds=(0, 1), specials=tuple(range(constraints.MAX_SPECIALS + 1)))
    # repeated values collapse; a categorical column has none
    assert ColumnSchema(name="x", kind="numeric", bounds=(0, 1), specials=(0, 0.0, -8)).specials == (0.0, -8.0)
    assert ColumnSchema(name="g", kind="categorical", categories=("a",), specials=(0,)).specials == ()


def test_estimated_fields_round_trip_and_are_public_with_their_epsilon():
    steps = [{"mechanism": "noisy log-scale histogram", "target": "schema: bounds of x", "epsilon": 0.03},
             {"mechanism": "two-sided geometric", "target": "schema: missing values of x", "epsilon": 0.01,
              "delta": 0.0}]
    spec = {"x": {"kind": "numeric", "bounds": [0, 1000], "specials": [0], "nullable": True,
                  "derived": ["integer"], "estimated": {"lower": 0.03, "upper": 0.03, "nullable": 0.01},
                  "estimate_steps": steps},
            "g": {"kind": "categorical", "categories": ["a", "b"]}}
    schema = Schema.from_dict(spec)
    x = schema["x"]
    assert x.estimated_fields == {"lower", "upper", "nullable"} and x.derived_fields == {"integer"}
    assert x.declared_fields == {"kind", "specials"}
    assert x.source("upper") == "estimated privately (ε = 0.03)" and x.source("integer") == "read off the data (not DP)"
    assert schema.estimate_epsilon == pytest.approx(0.04) and schema.estimate_delta == 0.0
    assert Schema.from_dict(json.loads(json.dumps(schema.to_dict()))) == schema
    public = x.to_public_dict()
    # estimated values are published with their ε and steps; the value read off the data is withheld
    assert public["bounds"] == [0.0, 1000.0] and public["specials"] == [0.0] and public["nullable"] is True
    assert public["estimated"] == {"lower": 0.03, "nullable": 0.01, "upper": 0.03}
    assert public["estimate_steps"] == steps and public["withheld"] == ["integer"] and "integer" not in public
    # Declaring an estimated field makes it declared; the steps stay.
    again = x.declare({"upper"})
    assert again.estimated_fields == {"lower", "nullable"} and again.estimate_steps == x.estimate_steps
    with pytest.raises(ValueError, match="estimated must map"):
        Schema.from_dict({"x": {"kind": "numeric", "bounds": [0, 1], "estimate_steps": [{"target": "x"}]}})


def test_bundled_randhie_is_zero_inflated_and_inside_its_declared_schema():
    # The shares data/README.md states, counted from the raw CSV text.
    with open(DATA / "randhie.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 20_190
    zero = {c: sum(float(r[c]) == 0 for r in rows) / len(rows) for c in ("mdvis", "lncoins", "lpi", "fmde")}
    assert [round(zero[c], 2) for c in zero] == [0.31, 0.54, 0.24, 0.42]
    df, schema = load_bundled("randhie")
    assert schema.is_public and schema.sensitive == "mdvis"
    for name in schema.used:
        col = schema[name]
        if col.kind == "numeric":
            x = df[name].to_numpy(dtype=float)
            assert ((x >= col.bounds[0]) & (x <= col.bounds[1])).all(), name
            assert col.specials == ((0.0, 1.0) if name == "physlm" else () if name == "disea" else (0.0,))
        else:
            assert set(df[name]) == set(col.categories) == {0, 1}
