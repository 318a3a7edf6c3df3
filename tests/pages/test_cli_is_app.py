"""Issue 31.3: `dpsynth synthesize --config <the app's settings JSON>` writes the very bytes of the app's downloads.

The app's side is what its download buttons hand the browser: each button's deferred callable, captured
where Streamlit registers it, and called as a click would. The settings and the schema the command reads
are the app's own downloads too (Synthesize's settings JSON, the Data page's schema JSON), so the test
compares a steward's two routes end to end, for the bundled penguins and for an uploaded table whose
precision was read off the data (the issue's 34.8 written as 34.833807421060285)."""

from __future__ import annotations

import io
import json
import zipfile

import pandas as pd
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

import dpsynth_core as core
from tests.conftest import APP, DATA, no_errors
from tests.core.test_cli import run

pytestmark = pytest.mark.integration  # the page tier: run by scripts/test.sh and CI, not a plain pytest


@pytest.fixture
def downloads(monkeypatch):
    """{file name: bytes} of every download button drawn from now on, made as a click makes them."""
    made: dict[str, object] = {}
    register = MediaFileManager.add_deferred

    def add_deferred(self, data_callable, mimetype, coordinates, file_name=None, **kw):
        made.pop(file_name, None)
        made[file_name] = data_callable
        return register(self, data_callable, mimetype, coordinates, file_name=file_name, **kw)

    monkeypatch.setattr(MediaFileManager, "add_deferred", add_deferred)

    def get(name: str) -> bytes:
        data = made[name]()
        return data.encode("utf-8") if isinstance(data, str) else data
    get.names = lambda: list(made)  # the file names, the last drawn last
    return get


def _app_files(at, downloads, tmp_path) -> str:
    """Save the Data page's schema and Synthesize's settings as a steward would; the files' stem."""
    at.switch_page("pages/data.py").run()
    no_errors(at)
    name = at.session_state["dataset"].name
    (tmp_path / "schema.json").write_bytes(downloads(f"{core.release.safe_name(name)}.schema.json"))
    at.switch_page("pages/synthesize.py").run()
    no_errors(at)
    settings = [n for n in downloads.names() if n.endswith(".settings.json")][-1]  # this run's
    stem = settings.removesuffix(".settings.json")
    (tmp_path / "settings.json").write_bytes(downloads(f"{stem}.settings.json"))
    return stem


def test_penguins_mst_the_command_writes_the_apps_csv_and_ledger(tmp_path, downloads):
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("pages/synthesize.py").run()
    at.selectbox(key="method").set_value("mst").run()
    no_errors(at)
    stem = _app_files(at, downloads, tmp_path)
    assert json.loads((tmp_path / "settings.json").read_text())["seed"] == 2026  # the app's fixed seed
    code, _, err = run("synthesize", DATA / "penguins.csv", "--schema", "schema.json", "--config", "settings.json",
                       "-o", "cli.csv", cwd=tmp_path)
    assert code == 0, err
    assert (tmp_path / "cli.csv").read_bytes() == downloads(f"{stem}.csv")
    ledger = (tmp_path / "cli.ledger.json").read_bytes()
    assert ledger == downloads(f"{stem}.ledger.json")
    # The ledger keeps what the schema declares of each column, integer and nullable included.
    columns = json.loads(ledger)["public"]["columns"]
    assert columns["flipper_length_mm"]["integer"] is True and columns["bill_length_mm"]["nullable"] is True


def test_an_upload_with_its_precision_read_off_the_data_gives_the_same_files_implicates_too(tmp_path, downloads):
    # Values with one decimal: the inferred schema rounds to it (decimals read off the data, withheld from the
    # ledger as a value read off the data); two implicates: the app's zip against the command's two CSVs.
    rng = pd.Series(range(120))
    table = pd.DataFrame({"x": (rng * 0.7 % 40 + 10).round(1), "g": list("abc") * 40})
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.file_uploader(key="uploader").set_value(("survey.csv", core.to_csv_bytes(table), "text/csv")).run()
    no_errors(at)
    assert at.session_state["dataset"].schema["x"].decimals == 1
    at.switch_page("pages/synthesize.py").run()
    at.number_input(key="implicates").set_value(2).run()
    no_errors(at)
    stem = _app_files(at, downloads, tmp_path)
    (tmp_path / "survey.csv").write_bytes(core.to_csv_bytes(table))
    code, _, err = run("synthesize", "survey.csv", "--schema", "schema.json", "--config", "settings.json",
                       "-o", "cli.csv", cwd=tmp_path)
    assert code == 0, err
    with zipfile.ZipFile(io.BytesIO(downloads(f"{stem}.zip"))) as z:
        app = {n: z.read(n) for n in z.namelist()}
    assert (tmp_path / "cli-implicate1.csv").read_bytes() == app[f"{stem}-implicate1.csv"]
    assert (tmp_path / "cli-implicate2.csv").read_bytes() == app[f"{stem}-implicate2.csv"]
    assert (tmp_path / "cli.ledger.json").read_bytes() == app[f"{stem}.ledger.json"] == downloads(f"{stem}.ledger.json")
    x = pd.read_csv(tmp_path / "cli-implicate1.csv")["x"].dropna()
    assert ((x * 10).round() == x * 10).all()  # one decimal, as the app wrote it (34.8, not 34.833807421060285)
    assert json.loads((tmp_path / "cli.ledger.json").read_text())["public"]["columns"]["x"]["withheld"]


def test_the_sweep_writes_the_r_u_pages_table(tmp_path, downloads):
    # The R-U page sweeps at the session's seed (2026 by default) with the map's measures; `dpsynth sweep --seed`
    # with the same methods and grid writes the page's "Sweep table (CSV)".
    at = AppTest.from_file(APP, default_timeout=300).run()
    at.switch_page("pages/ru_map.py").run()
    at.multiselect(key="ru_methods").set_value(["independent"]).run()
    at.text_input(key="ru_grid").set_value("0.5, 2").run()
    at.button(key="ru_run").click().run()
    no_errors(at)
    seed = at.session_state["synth_config"].seed
    code, _, err = run("sweep", DATA / "penguins.csv", "--schema", DATA / "penguins.schema.json", "--methods",
                       "independent", "--epsilons", "0.5,2", "--seed", seed, "--n-jobs", "1", "-o", "cli.csv",
                       cwd=tmp_path)
    assert code == 0, err
    cli = (tmp_path / "cli.csv").read_bytes()
    assert cli == downloads("ru_sweep.csv")
    table = pd.read_csv(io.BytesIO(cli))
    assert sorted(table["epsilon"].dropna()) == [0.5, 2.0] and set(table["method"]) == {"original", "independent",
                                                                                        "bootstrap"}
