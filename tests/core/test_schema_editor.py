"""Tests for dpsynth_core.schema_editor: the Data page's table of the schema, edited and read back.

Expected values are written out by hand, or read from the bundled penguins CSV.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dpsynth_core.datasets import load_bundled
from dpsynth_core.schema import FIELDS, ColumnSchema, Schema, infer_schema, merge_declared
from dpsynth_core.schema_editor import (declarable, declaration_sentence, schema_from_table, schema_table)
from tests.conftest import DATA


@pytest.mark.parametrize("source", ["inferred", "declared"])
def test_schema_table_round_trip(source):
    df = pd.read_csv(DATA / "penguins.csv")
    df["id"] = np.arange(1, len(df) + 1)  # an excluded column too
    inferred = infer_schema(df)
    schema = inferred if source == "inferred" else merge_declared(inferred, load_bundled("penguins")[1])
    table = schema_table(schema)
    assert list(table["column"]) == list(df.columns)
    assert list(table["read off the data"]) == [", ".join(f for f in FIELDS if f in c.derived_fields)
                                                for c in schema.columns.values()]
    back = schema_from_table(table, schema, keys=schema.keys, sensitive=schema.sensitive)
    assert back == schema


def test_editing_a_bound_declares_that_bound_only():
    # Public means declared, value by value: typing a lower bound declares it, and nothing else of the row.
    df = pd.read_csv(DATA / "penguins.csv")
    schema = infer_schema(df)
    table = schema_table(schema)
    row = table.index[table["column"] == "bill_length_mm"][0]
    table.loc[row, "lower"] = 30.0
    edited = schema_from_table(table, schema)
    col = edited["bill_length_mm"]
    assert col.bounds == (30.0, df["bill_length_mm"].max())
    # The untouched upper bound is still the data's maximum, so the column stays read off the data.
    assert col.derived is True
    assert col.declared_fields == {"lower"}
    assert col.derived_fields == {"kind", "upper", "integer", "nullable", "decimals"}
    assert edited.derived_columns == schema.used
    note = schema_table(edited).set_index("column").loc["bill_length_mm"]
    assert note["read off the data"] == "kind, upper, integer, nullable, decimals" and not note["estimated privately"]
    # The public view names the declared bound and withholds the data's maximum.
    public = edited.to_public_dict()["bill_length_mm"]
    assert public == {"lower": 30.0, "withheld": ["kind", "upper", "integer", "nullable", "decimals"]}
    assert str(df["bill_length_mm"].max()) not in json.dumps(public)
    # a row left as it was keeps its provenance
    assert edited["bill_depth_mm"] == schema["bill_depth_mm"]


def test_a_value_read_off_the_data_is_declared_one_field_at_a_time_naming_it():
    df = pd.read_csv(DATA / "penguins.csv")
    schema = infer_schema(df)
    table = schema_table(schema)
    table.loc[table["column"] == "species", "categories"] = "Adelie, Chinstrap, Gentoo, Emperor"
    edited = schema_from_table(table, schema, keys=["species", "nope"], sensitive="body_mass_g")
    assert edited["species"].categories == ("Adelie", "Chinstrap", "Gentoo", "Emperor")
    # The typed list is declared; the kind and the nullable flag were read off the data and still are.
    assert edited["species"].declared_fields == {"categories"}
    assert edited["species"].derived_fields == {"kind", "nullable"}
    assert edited.keys == ("species",) and edited.sensitive == "body_mass_g"
    # Each field read off the data is offered on its own, with its exact value.
    items = {(d.column, d.field): d for d in declarable(edited)}
    assert len(items) == sum(len(c.derived_fields) for c in edited.columns.values())
    top = items[("body_mass_g", "upper")]
    assert top.value == str(int(df["body_mass_g"].max())) == "6300"
    sentence = declaration_sentence(top)
    assert "upper bound of 'body_mass_g' as public: 6300" in sentence and "only right if" in sentence
    assert items[("year", "categories")].value == "2007, 2008, 2009"
    assert items[("sex", "nullable")].value == "may be missing"
    declared = edited.replace_column("body_mass_g", derived_fields=edited["body_mass_g"].derived_fields - {"upper"})
    assert declared["body_mass_g"].declared_fields == {"upper"}


def test_special_values_are_typed_as_numbers_and_then_declared():
    df = pd.DataFrame({"hours": [0.0] * 30 + [float(h) for h in range(10, 80)]})
    schema = infer_schema(df)
    # 0 holds 30 of 100 values: read off the data as a special value (a share of at least 10 %).
    assert schema["hours"].specials == (0.0,) and "specials" in schema["hours"].derived_fields
    table = schema_table(schema)
    assert table.loc[0, "specials"] == "0"
    table.loc[0, "specials"] = "0, -8"
    edited = schema_from_table(table, schema)["hours"]
    assert edited.specials == (0.0, -8.0) and "specials" in edited.declared_fields
    table.loc[0, "specials"] = ""
    assert schema_from_table(table, schema)["hours"].specials == ()
    table.loc[0, "specials"] = "zero"
    with pytest.raises(ValueError, match="'hours': special values are numbers"):
        schema_from_table(table, schema)


def test_an_estimated_value_keeps_its_source_until_typed():
    step = {"mechanism": "two-sided geometric", "target": "schema: x", "epsilon": 0.05}
    col = ColumnSchema(name="x", kind="numeric", bounds=(0.0, 10.0), estimated={"lower": 0.02, "upper": 0.02},
                       estimate_steps=(step,))
    schema = Schema({"x": col})
    table = schema_table(schema)
    assert table.loc[0, "estimated privately"] == "lower (ε = 0.02), upper (ε = 0.02)"
    assert schema_from_table(table, schema) == schema
    table.loc[0, "upper"] = 12.0
    edited = schema_from_table(table, schema)["x"]
    assert edited.estimated_fields == {"lower"} and "upper" in edited.declared_fields
    assert edited.estimate_steps == (step,)  # the ε was spent: its step stays with the column


def test_inferred_flags_are_read_off_the_data_and_declared_one_by_one():
    whole = [float(v) for v in range(0, 120, 3)] * 2  # 40 distinct whole numbers: numeric, integer
    df = pd.DataFrame({"n": whole[:-1] + [None], "x": [0.25 * v for v in range(1, 81)]})
    schema = infer_schema(df)
    assert schema["n"].nullable and schema["n"].integer and "nullable" in schema["n"].derived_fields
    assert schema["n"].decimals is None  # whole numbers: the integer flag, no precision
    assert schema["x"].decimals == 2 and "decimals" in schema["x"].derived_fields  # 0.25 steps: 2 decimals
    table = schema_table(schema)
    table.loc[table["column"] == "n", "nullable"] = False  # an act on the flag: declared, as typed
    table.loc[table["column"] == "x", "decimals"] = 1
    edited = schema_from_table(table, schema)
    assert edited["n"].nullable is False and edited["n"].declared_fields == {"nullable"}
    assert edited["x"].decimals == 1 and edited["x"].declared_fields == {"decimals"}
    table.loc[table["column"] == "x", "decimals"] = 2.5
    with pytest.raises(ValueError, match="'x': decimals must be a whole number"):
        schema_from_table(table, schema)


def test_changing_the_kind_asks_for_the_new_domain():
    df = pd.DataFrame({"g": list("abcab") * 8})
    schema = infer_schema(df)
    table = schema_table(schema)
    table.loc[0, ["kind", "lower", "upper"]] = ["numeric", 0.0, 9.0]
    edited = schema_from_table(table, schema)["g"]
    # Kind and bounds typed: declared. The integer/nullable flags carried over were read off the data.
    assert edited.kind == "numeric" and edited.bounds == (0.0, 9.0)
    assert edited.declared_fields == {"kind", "lower", "upper"} and edited.derived_fields == {"integer", "nullable"}
    table.loc[0, "kind"] = "excluded"
    excluded = schema_from_table(table, schema)["g"]
    assert excluded.kind == "excluded" and not excluded.derived



@pytest.mark.parametrize("lower, upper, words", [
    (50.0, 40.0, "lower <= upper"),
    (None, 40.0, "give it a lower and an upper bound"),
])
def test_bad_bounds_in_the_table_name_the_column(lower, upper, words):
    df = pd.read_csv(DATA / "penguins.csv")
    schema = infer_schema(df)
    table = schema_table(schema)
    row = table.index[table["column"] == "bill_length_mm"][0]
    table.loc[row, "lower"] = lower
    table.loc[row, "upper"] = upper
    with pytest.raises(ValueError, match="'bill_length_mm'") as info:
        schema_from_table(table, schema)
    assert words in str(info.value)
