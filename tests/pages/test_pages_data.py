"""Data page: the schema is the user's work: declared value by value, kept, saved and loaded as JSON."""

import json

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import dpsynth_core as core
from tests.conftest import APP, entries

pytestmark = pytest.mark.integration  # the page tier: run by scripts/test.sh and CI, not a plain pytest

PEOPLE = pd.DataFrame({
    "age": [23, 35, 41, 52, 67, 29, 33, 48, 71, 19, 25, 38] * 5,
    "height": [1.62, 1.75, 1.81, 1.58, 1.69, 1.77, 1.7, 1.64, 1.83, 1.6, 1.72, 1.66] * 5,
    "group": list("abcabcabcabc") * 5,
})


def _upload(at, name="people.csv", df=PEOPLE):
    at.file_uploader(key="uploader").set_value((name, core.to_csv_bytes(df), "text/csv")).run()
    assert not at.exception, [e.value for e in at.exception]
    return at.session_state["dataset"]


def _schema_upload(at, payload: bytes):
    at.file_uploader(key="schema_uploader").set_value(("s.schema.json", payload, "application/json")).run()
    assert not at.exception, [e.value for e in at.exception]


def _declare_one(at, column: str, field: str) -> str:
    """Declare one value read off the data through the page; returns the sentence the page showed for it."""
    schema = at.session_state["dataset"].schema
    items = core.schema_editor.declarable(schema)
    pick = next(i for i, d in enumerate(items) if (d.column, d.field) == (column, field))
    box = next(b for b in at.selectbox if b.label == "Value read off the data")
    box.set_value(pick).run()
    sentence = next(w.value for w in at.warning if "Declare the" in w.value)
    at.button(key="declare_one").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return sentence


def test_the_private_estimate_makes_an_upload_public_and_is_recorded(ledger_store):
    rng = np.random.default_rng(4)
    big = pd.DataFrame({"hours": np.where(rng.random(3000) < 0.3, 0, rng.integers(1, 60, 3000)),
                        "job": rng.choice(["clerk", "nurse", "cook"], 3000)})
    at = AppTest.from_file(APP, default_timeout=60).run()
    ds = _upload(at, "jobs.csv", big)
    assert ds.schema.undeclared_columns == ["hours", "job"]
    # proposed: the constraints' share of the settings' ε (1)
    assert at.number_input(key="estimate_epsilon").value == pytest.approx(core.constraints.SCHEMA_ESTIMATE_SHARE)
    at.number_input(key="estimate_epsilon").set_value(0.3).run()
    assert at.button(key="estimate_schema").label == "Estimate privately with ε = 0.3"
    at.button(key="estimate_schema").click().run()
    assert not at.exception, [e.value for e in at.exception]
    schema = at.session_state["dataset"].schema
    # 3,000 rows at 0.15 per column: every threshold asserted on is at most 200 records against 900 or more (the
    # estimate runs on fresh entropy here, as in the app; these outcomes fail with probability below 1e−20)
    assert schema.undeclared_columns == [] and schema.estimate_epsilon == pytest.approx(0.3)
    assert schema["job"].categories == ("clerk", "cook", "nurse") and schema["hours"].specials == (0.0,)
    assert any("Every column's domain is public" in s.value for s in at.success)
    assert any("private estimates spent ε = 0.3" in c.value for c in at.caption)
    # one entry in the ledger store, purpose "schema estimate", at the estimate's ε and δ
    (entry,) = entries(ledger_store)
    assert (entry["purpose"], entry["method"], entry["is_dp"]) == ("schema estimate", "private schema estimate", 1)
    assert entry["epsilon"] == pytest.approx(0.3) and entry["delta"] == pytest.approx(schema.estimate_delta)
    assert at.button(key="estimate_schema").disabled  # nothing left to estimate


def test_a_value_read_off_the_data_is_declared_one_at_a_time(at):
    ds = _upload(at)
    sentence = _declare_one(at, "height", "upper")
    assert "upper bound of 'height' as public: 1\\.83" in sentence and "only right if" in sentence
    schema = at.session_state["dataset"].schema
    assert schema["height"].declared_fields == {"upper"} and schema["age"] == ds.schema["age"]
    assert "upper" not in at.session_state["dataset"].schema["height"].derived_fields


def test_the_same_file_uploaded_again_keeps_its_schema(at):
    _upload(at)
    _declare_one(at, "group", "categories")
    kept = at.session_state["dataset"].schema
    _upload(at, "other.csv", PEOPLE.iloc[:30])  # other content: its own inferred schema
    assert at.session_state["dataset"].schema.undeclared_columns == ["age", "height", "group"]
    ds = _upload(at, "people-again.csv")  # same content, another name
    assert ds.schema == kept and ds.schema["group"].declared_fields == {"categories"}


def test_schema_json_round_trip_through_the_page(at):
    _upload(at)
    _declare_one(at, "height", "lower")
    _declare_one(at, "height", "upper")
    saved = at.session_state["dataset"].schema
    payload = saved.to_json().encode("utf-8")
    spec = json.loads(payload)
    assert all("n_missing" not in c and "reason" not in c for c in spec.values())  # no data facts in the file
    assert spec["height"]["bounds"] == [1.58, 1.83] and spec["height"]["derived"] == ["decimals", "integer", "kind",
                                                                                       "nullable"]
    # The same columns in another order of rows: other content, so a schema inferred afresh.
    _upload(at, "people2.csv", PEOPLE.iloc[::-1].reset_index(drop=True))
    fresh = at.session_state["dataset"].schema
    assert fresh.undeclared_columns == ["age", "height", "group"]
    _schema_upload(at, payload)
    loaded = at.session_state["dataset"].schema
    assert not at.error
    for name in saved.columns:
        assert loaded[name].derived_fields == saved[name].derived_fields
        assert (loaded[name].bounds, loaded[name].categories) == (saved[name].bounds, saved[name].categories)


def test_a_declared_schema_file_with_roles_makes_the_data_public(at):
    _upload(at)
    spec = {"age": {"kind": "numeric", "bounds": [0, 120], "integer": True, "key": True},
            "height": {"kind": "numeric", "bounds": [0.5, 2.5], "decimals": 2, "sensitive": True},
            "group": {"kind": "categorical", "categories": ["a", "b", "c", "d"]}}
    _schema_upload(at, json.dumps(spec).encode())
    schema = at.session_state["dataset"].schema
    assert schema.undeclared_columns == [] and schema.keys == ("age",) and schema.sensitive == "height"
    assert schema["height"].decimals == 2 and schema["group"].categories == ("a", "b", "c", "d")
    assert any("Every column's domain is public" in s.value for s in at.success)
    fp = at.session_state["dataset"].fingerprint[:12]
    assert at.multiselect(key=f"keys_{fp}").value == ["age"]


@pytest.mark.parametrize("payload, words", [
    (b"{not json", "not valid JSON"),
    (b'{"age": {"kind": "numeric"}}', "needs bounds"),
    (b'{"weight": {"kind": "numeric", "bounds": [0, 1]}}', "column 'weight' that this data does not have"),
])
def test_a_bad_schema_file_says_why_and_keeps_the_schema(at, payload, words):
    ds = _upload(at)
    _schema_upload(at, payload)
    assert len(at.error) == 1 and words in at.error[0].value.replace("\\", "")
    assert at.session_state["dataset"].schema == ds.schema


def test_the_link_names_an_upload_by_a_keyed_hash_never_its_fingerprint(at):
    ds = _upload(at)
    at.switch_page("pages/synthesize.py").run()
    token = at.query_params["data"]
    token = token[0] if isinstance(token, list) else token
    assert token == core.share.dataset_token("upload", ds.name, ds.fingerprint) and token.startswith("upload:")
    link = "&".join(f"{k}={v}" for k, v in at.query_params.items())
    for k in range(0, 64 - 8 + 1, 8):
        assert ds.fingerprint[k:k + 8] not in link


def _shown_errors(at) -> list[str]:
    return [e.value.replace("\\", "") for e in at.error]  # the page escapes user text (the file's name)


def test_a_refused_file_is_named_and_the_next_refusal_replaces_its_sentence(at):
    """A file the loader refuses for its size (past 50,000,000 bytes: constraints.MAX_UPLOAD_BYTES) replaces
    the sentence about the file before it; taking the file out of the box clears the sentence."""
    unclosed = b'a,b\n1,"x\n2,y\n'
    at.file_uploader(key="uploader").set_value(("bad.csv", unclosed, "text/csv")).run()
    assert _shown_errors(at) == ["bad.csv was not loaded: the row starting on line 2 has a double quote that is never "
                                 "closed; put quotes around whole values, write a quote inside a value as two quotes "
                                 "and upload the file again. The previous dataset is still loaded."]
    row = b"1," + b"x" * 98 + b"\n"  # 101 bytes
    big = b"a,b\n" + row * 495_050  # 4 + 101 × 495,050 = 50,000,054 bytes
    assert len(big) == 50_000_054
    at.file_uploader(key="uploader").set_value(("big.csv", big, "text/csv")).run()
    assert _shown_errors(at) == ["big.csv was not loaded: the file is larger than the 50 MB limit (50,000,000 "
                                 "bytes); upload a smaller file, for example a sample of the rows. The previous "
                                 "dataset is still loaded."]
    at.file_uploader(key="uploader").set_value(None).run()
    assert not at.exception and _shown_errors(at) == []
    assert at.session_state["dataset"].name == "penguins"


def test_an_over_long_value_is_refused_with_the_limit_and_its_length(at):
    data = b"a,b\n1," + b"x" * 2_000_000 + b"\n2,y\n"  # one unquoted value of 2,000,000 characters
    at.file_uploader(key="uploader").set_value(("long.csv", data, "text/csv")).run()
    assert _shown_errors(at) == ["long.csv was not loaded: the row starting on line 2 has a value of 2,000,000 "
                                 "characters, over the limit of 131,072 characters a value may have; shorten that "
                                 "value or leave its column out and upload the file again. The previous dataset is "
                                 "still loaded."]


def test_an_all_blank_column_is_excluded_in_a_sentence_and_released_blank(at):
    # Issue 31.7: the column became 'excluded' in the table's kind cell, and nothing on the page said so.
    ds = _upload(at, "blank.csv", PEOPLE.assign(notes=None))
    assert ds.schema["notes"].kind == "excluded"
    notes = [i.value.replace("\\", "") for i in at.info if "Not synthesized" in i.value]  # without Markdown escapes
    assert len(notes) == 1 and "notes (every value is missing)" in notes[0] and "every value blank" in notes[0]
    # What the sentence promises: the synthetic data hold the column, blank.
    out = core.synthesize(ds.df, "independent", epsilon=1.0, schema=ds.schema, seed=0).data
    assert "notes" in out.columns and out["notes"].isna().all()


def test_previews_show_a_missing_value_as_a_blank_cell(at):
    # Issue 31.7: the browser's table shows a missing cell as "None" unless the placeholder is "" (as on Compare).
    ds = _upload(at, "gaps.csv", PEOPLE.assign(height=PEOPLE["height"].where(PEOPLE.index % 4 > 0)))
    assert ds.df["height"].isna().any()
    pages = {"data": at.dataframe}
    at.switch_page("pages/synthesize.py").run()
    pages["synthesize"] = at.dataframe
    at.session_state["mode"] = at.session_state["mode_choice"] = "release"
    at.run()
    pages["release"] = at.dataframe
    for page, tables in pages.items():
        assert len(tables) >= 1, page
        for table in tables:
            assert table.proto.HasField("placeholder") and table.proto.placeholder == "", page
    assert pages["data"][0].value["height"].isna().any()  # the preview has missing cells to show blank
