"""The fast loop's page tests (issue 29): the app opens, every page runs on the bundled data, and an upload,
good or bad, is taken or refused. Every other page test, under AppTest too, is marked ``integration``: a
plain ``pytest`` leaves them to ``scripts/test.sh`` (and CI), which runs every test."""

import pandas as pd
import pytest

import dpsynth_core as core
from tests.conftest import no_errors as _no_errors

PAGES = ["pages/data.py", "pages/synthesize.py", "pages/compare.py", "pages/risk.py", "pages/ru_map.py",
         "pages/ledger.py", "pages/learn.py"]


def test_opens_on_penguins_with_nothing_uploaded(at):
    _no_errors(at)
    assert at.session_state["dataset"].name == "penguins"
    assert len(at.session_state["dataset"].df) == 344
    # The bundled schema is declared, so no "read off the data" warning shows.
    assert not [w for w in at.warning if "read off the data" in w.value]


@pytest.mark.parametrize("page", PAGES)
def test_every_page_runs_without_error(at, page):
    at.switch_page(page).run()
    _no_errors(at)


def test_upload_replaces_dataset_and_flags_derived_bounds(at):
    df = pd.DataFrame({"age": [23, 35, 41, 52, 67, 29] * 5, "group": list("abcabc") * 5})
    at.file_uploader(key="uploader").set_value(("people.csv", core.to_csv_bytes(df), "text/csv")).run()
    _no_errors(at)
    ds = at.session_state["dataset"]
    assert ds.name == "people.csv" and ds.df.shape == (30, 2)
    assert any("read off the data" in w.value for w in at.warning)


@pytest.mark.parametrize(
    "payload",
    [b"", b"PK\x03\x04" + b"\x00" * 64, b"a,b\n1,2,3\n4,5\n", b"caf\xe9,b\n1,2\n"],
    ids=["empty", "xlsx", "ragged", "latin1"],
)
def test_bad_upload_shows_one_sentence_and_keeps_previous_dataset(at, payload):
    at.file_uploader(key="uploader").set_value(("bad.csv", payload, "text/csv")).run()
    assert not at.exception
    assert len(at.error) == 1
    assert "previous dataset is still loaded" in at.error[0].value
    assert at.session_state["dataset"].name == "penguins"


