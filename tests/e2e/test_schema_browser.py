"""End to end in Chromium: the Data page's schema made public by the private estimate, saved as JSON, kept and
loaded again; then a release whose public ledger lists the estimate's steps."""

import json
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpsynth_core as core
from tests.e2e.conftest import download, go, shot, wait_idle

pytestmark = pytest.mark.e2e


def _table(rows: int = 4000, seed: int = 9) -> pd.DataFrame:
    """A zero-inflated table: hours worked (a third 0), an income with cents, a job; 4,000 rows make every
    threshold of the estimate at ε = 0.2 (a few hundred records at most) far below what it must find."""
    rng = np.random.default_rng(seed)
    job = rng.choice(["clerk", "nurse", "cook"], rows, p=[0.4, 0.35, 0.25])
    hours = np.where(rng.random(rows) < 0.33, 0, rng.integers(5, 60, rows))
    return pd.DataFrame({"hours": hours, "income": np.round(rng.uniform(1500, 9000, rows), 2), "job": job})


def _upload_csv(page, path: Path) -> None:
    page.get_by_test_id("stFileUploaderDropzoneInput").first.set_input_files(str(path))
    wait_idle(page)


def _estimate(page) -> None:
    page.get_by_role("button", name="Estimate privately with ε = 0.2").click()
    wait_idle(page)
    page.get_by_text("Every column's domain is public").wait_for()


def test_estimate_privately_save_reupload_and_load_the_schema(page, tmp_path):
    src = _table()
    first, other = tmp_path / "jobs.csv", tmp_path / "other jobs.csv"
    first.write_bytes(core.to_csv_bytes(src))
    other.write_bytes(core.to_csv_bytes(src.iloc[::-1]))
    _upload_csv(page, first)
    page.get_by_text("3 of 3 column(s) still have values read off the data").wait_for()
    shot(page, "data-schema-undeclared")
    _estimate(page)
    page.get_by_text("This schema's private estimates spent ε = 0.2 of the data").wait_for()
    page.get_by_text("Key variables (what an intruder may know)").scroll_into_view_if_needed()
    shot(page, "data-schema-estimated")

    dl = download(page, "Download the schema (JSON)")
    assert dl.value.suggested_filename == "jobs.schema.json"
    saved = Path(dl.value.path()).read_bytes()
    spec = json.loads(saved)
    assert list(spec) == list(src.columns) and not any("derived" in c or "n_missing" in c for c in spec.values())
    assert spec["job"]["categories"] == ["clerk", "cook", "nurse"] and spec["hours"]["specials"] == [0.0]
    assert sum(st["epsilon"] for c in spec.values() for st in c["estimate_steps"]) == pytest.approx(0.2)
    assert set(spec["hours"]["estimated"]) >= {"kind", "lower", "upper", "specials"}

    # Other content gets its own (inferred) schema; the first file again gets its estimate back.
    _upload_csv(page, other)
    page.get_by_text("still have values read off the data").wait_for()
    _upload_csv(page, first)
    page.get_by_text("Every column's domain is public").wait_for()

    # The saved file loads onto the other table and makes it public too (the estimate's steps with it).
    _upload_csv(page, other)
    page.get_by_text("still have values read off the data").wait_for()
    schema_file = tmp_path / "jobs.schema.json"
    schema_file.write_bytes(saved)
    page.get_by_test_id("stFileUploaderDropzoneInput").nth(1).set_input_files(str(schema_file))
    wait_idle(page)
    page.get_by_text("Every column's domain is public").wait_for()
    assert page.get_by_test_id("stException").count() == 0


def test_private_estimate_then_a_release_whose_public_ledger_lists_its_steps(page, tmp_path):
    path = tmp_path / "staff.csv"
    path.write_bytes(core.to_csv_bytes(_table(seed=10)))
    _upload_csv(page, path)
    _estimate(page)

    page.get_by_test_id("stSidebar").get_by_text("release", exact=True).click()
    wait_idle(page)
    go(page, "Synthesize")
    page.get_by_role("button", name="Run the release").click()
    wait_idle(page)
    page.get_by_text("The total includes ε = 0.2 that the schema's private estimate spent").first.wait_for()
    dl = download(page, "Download the public release")
    shot(page, "release-estimated-schema")
    stem = "staff-independent-eps1-release"
    assert dl.value.suggested_filename == f"{stem}.zip"
    with zipfile.ZipFile(dl.value.path()) as z:
        ledger = json.loads(z.read(f"{stem}.ledger.json"))
        report = z.read(f"{stem}.report.html").decode("utf-8")
    assert ledger["is_dp"] is True and ledger["epsilon_total"] == 1.0
    estimate = [s for s in ledger["steps"] if s["target"].startswith("schema estimate: ")]
    assert estimate == ledger["steps"][:len(estimate)] and len(estimate) >= 3  # listed first, every column's
    assert sum(s["epsilon"] for s in estimate) == pytest.approx(0.2)
    assert ledger["schema_estimate"]["epsilon"] == 0.2 and ledger["budget_split"]["schema_estimate"] == 0.2
    assert ledger["public"]["columns"]["hours"]["source"].startswith("estimated privately")
    assert "schema estimate: bounds of hours" in report
