"""End to end in Chromium: the Data page's schema is declared in bulk, saved as JSON, kept and loaded again."""

import json
from pathlib import Path

import pandas as pd
import pytest

import dpsynth_core as core
from tests.conftest import ROOT
from tests.e2e.conftest import shot, wait_idle

pytestmark = pytest.mark.e2e


def _upload_csv(page, path: Path) -> None:
    page.get_by_test_id("stFileUploaderDropzoneInput").first.set_input_files(str(path))
    wait_idle(page)


def test_declare_in_bulk_save_reupload_and_load_the_schema(page, tmp_path):
    src = pd.read_csv(ROOT / "data" / "penguins.csv").head(120)
    first, other = tmp_path / "birds.csv", tmp_path / "other birds.csv"
    first.write_bytes(core.to_csv_bytes(src))
    other.write_bytes(core.to_csv_bytes(src.iloc[::-1]))
    _upload_csv(page, first)
    page.get_by_text("8 of 8 column(s) still have values read off the data").wait_for()
    page.get_by_text("Key variables (what an intruder may know)").scroll_into_view_if_needed()
    shot(page, "data-schema-undeclared")
    for label in ("Declare all categories as listed", "Use these bounds",
                  "Declare kinds, flags and precision as shown"):
        page.get_by_role("button", name=label).click()
        wait_idle(page)
    page.get_by_text("Every column's domain is declared public").wait_for()
    page.get_by_text("Key variables (what an intruder may know)").scroll_into_view_if_needed()
    shot(page, "data-schema-declared")

    with page.expect_download() as dl:
        page.get_by_test_id("stDownloadButton").filter(has_text="Download the schema (JSON)").get_by_role(
            "button").click()
    assert dl.value.suggested_filename == "birds.schema.json"
    saved = Path(dl.value.path()).read_bytes()
    spec = json.loads(saved)
    assert list(spec) == list(src.columns) and not any("derived" in c or "n_missing" in c for c in spec.values())
    assert spec["bill_length_mm"]["bounds"] == [src["bill_length_mm"].min(), src["bill_length_mm"].max()]

    # Other content gets its own (inferred) schema; the first file again gets its declarations back.
    _upload_csv(page, other)
    page.get_by_text("still have values read off the data").wait_for()
    _upload_csv(page, first)
    page.get_by_text("Every column's domain is declared public").wait_for()

    # The saved file loads onto the other table and declares it too.
    _upload_csv(page, other)
    page.get_by_text("still have values read off the data").wait_for()
    schema_file = tmp_path / "birds.schema.json"
    schema_file.write_bytes(saved)
    page.get_by_test_id("stFileUploaderDropzoneInput").nth(1).set_input_files(str(schema_file))
    wait_idle(page)
    page.get_by_text("Every column's domain is declared public").wait_for()
    assert page.get_by_test_id("stException").count() == 0
