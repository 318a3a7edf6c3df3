"""Tests for dpsynth_core.schema_editor: the Data page's table of the schema, edited and read back.

Expected values are written out by hand, or read from the bundled penguins CSV.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dpsynth_core.datasets import load_bundled
from dpsynth_core.schema import infer_schema, merge_declared
from dpsynth_core.schema_editor import schema_from_table, schema_table
from tests.conftest import DATA


@pytest.mark.parametrize("source", ["inferred", "declared"])
def test_schema_table_round_trip(source):
    df = pd.read_csv(DATA / "penguins.csv")
    df["id"] = np.arange(1, len(df) + 1)  # an excluded column too
    inferred = infer_schema(df)
    schema = inferred if source == "inferred" else merge_declared(inferred, load_bundled("penguins")[1])
    table = schema_table(schema)
    assert list(table["column"]) == list(df.columns)
    assert list(table["public"]) == [not c.derived for c in schema.columns.values()]
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
    assert note["read off the data"] == "kind, upper, integer, nullable, decimals" and not note["public"]
    # The public view names the declared bound and withholds the data's maximum.
    public = edited.to_public_dict()["bill_length_mm"]
    assert public == {"lower": 30.0, "withheld": ["kind", "upper", "integer", "nullable", "decimals"]}
    assert str(df["bill_length_mm"].max()) not in json.dumps(public)
    # a row left as it was keeps its provenance
    assert edited["bill_depth_mm"] == schema["bill_depth_mm"]


def test_ticking_public_and_editing_categories():
    df = pd.read_csv(DATA / "penguins.csv")
    schema = infer_schema(df)
    table = schema_table(schema)
    table.loc[table["column"] == "year", "public"] = True
    table.loc[table["column"] == "species", "categories"] = "Adelie, Chinstrap, Gentoo, Emperor"
    edited = schema_from_table(table, schema, keys=["species", "nope"], sensitive="body_mass_g")
    # Ticking "public" declares every value of the row as shown.
    assert not edited["year"].derived and edited["year"].categories == (2007, 2008, 2009)
    assert edited["year"].reason == "declared on the Data page"
    assert edited["species"].categories == ("Adelie", "Chinstrap", "Gentoo", "Emperor")
    # The typed list is declared; the kind and the nullable flag were read off the data and still are.
    assert edited["species"].declared_fields == {"categories"}
    assert edited["species"].derived_fields == {"kind", "nullable"}
    assert edited.keys == ("species",) and edited.sensitive == "body_mass_g"
    # Unticking a public row marks its values as read off the data again.
    table = schema_table(edited)
    table.loc[table["column"] == "year", "public"] = False
    again = schema_from_table(table, edited)
    assert again["year"].derived_fields == {"kind", "categories", "nullable"}


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
