"""End to end in Debian's Chromium: upload → synthesize at ε → compare → risk → R-U map → download."""

import json
import re
import zipfile
from pathlib import Path

import pandas as pd
import pytest

import dpsynth_core as core
from tests.conftest import ROOT
from tests.e2e.conftest import download, go, new_page, shot, wait_idle

pytestmark = pytest.mark.e2e


def test_upload_change_epsilon_compare_and_download(page, tmp_path):
    # A real table, uploaded through the file input as a user would.
    src = pd.read_csv(ROOT / "data" / "penguins.csv").sample(200, random_state=7)
    csv_path = tmp_path / "my penguins.csv"
    csv_path.write_bytes(core.to_csv_bytes(src))
    page.get_by_test_id("stFileUploaderDropzoneInput").first.set_input_files(str(csv_path))
    wait_idle(page)
    page.get_by_text("my penguins.csv: 200 rows, 8 columns").wait_for()
    page.get_by_text("read off the data").first.wait_for()  # uploaded bounds are not public
    shot(page, "data")

    go(page, "Synthesize")
    thumb = page.get_by_test_id("stSlider").get_by_role("slider")
    before = page.get_by_test_id("stSliderThumbValue").inner_text()
    thumb.focus()
    for _ in range(3):  # in a row, not waiting for the app (test_epsilon_keys.py: faster, on every page)
        page.keyboard.press("ArrowRight")
    wait_idle(page)
    after = page.get_by_test_id("stSliderThumbValue").inner_text()
    assert (before, after) == ("1.0", "2.0")  # three log steps of 10^0.1 from ε = 1
    page.get_by_text("is not differentially private").first.wait_for()
    shot(page, "synthesize")

    dl = download(page, "Download synthetic CSV")
    out = pd.read_csv(dl.value.path())
    assert list(out.columns) == list(src.columns)
    assert dl.value.suggested_filename == "my penguins-independent-eps2-seed2026.csv"
    dl = download(page, "Download ledger")
    assert dl.value.suggested_filename == "my penguins-independent-eps2-seed2026.ledger.json"
    ledger = json.loads(Path(dl.value.path()).read_text(encoding="utf-8"))
    # The row count was not declared, so it is a noisy count; the companion ledger says how many.
    assert ledger["n_rows"] == len(out) and ledger["epsilon_total"] == 2.0
    assert ledger["is_dp"] is False and "data-derived" in ledger["dp_label"]
    # m = 2 implicates: one zip with a CSV per implicate and the ledger, ε split between them.
    page.get_by_label("Implicates (m datasets: m·n records, ε/m each)").fill("2")
    page.keyboard.press("Enter")
    wait_idle(page)
    dl = download(page, "Download 2 implicates (zip)")
    stem = "my penguins-independent-eps2-seed2026"
    with zipfile.ZipFile(dl.value.path()) as z:
        assert sorted(z.namelist()) == [f"{stem}-implicate1.csv", f"{stem}-implicate2.csv", f"{stem}.ledger.json"]
        assert all(list(pd.read_csv(z.open(f"{stem}-implicate{i}.csv")).columns) == list(src.columns)
                   for i in (1, 2))
        assert json.loads(z.read(f"{stem}.ledger.json"))["implicates"] == 2

    go(page, "Compare")
    page.locator(".js-plotly-plot").first.wait_for()
    assert page.locator(".js-plotly-plot").count() >= 2  # histogram + CI forest (species has no ECDF)
    assert page.get_by_test_id("stMetric").count() >= 4
    shot(page, "compare")

    go(page, "Risk")
    page.get_by_text("fully synthetic").wait_for()
    shot(page, "risk")


def _sweep_and_pick_independent_at_3(page) -> None:
    """Sweep ε ∈ {0.3, 3} and click the independent-marginals point at ε = 3."""
    go(page, "R-U map")
    page.get_by_label("ε grid (comma-separated; log-spaced by default)").fill("0.3, 3")
    page.keyboard.press("Enter")
    wait_idle(page)
    page.get_by_role("button", name="Run sweep").click()
    wait_idle(page)
    page.locator(".js-plotly-plot").first.wait_for()
    shot(page, "ru_map")
    # Traces: original data, then the default methods (points in ε order), then the bootstrap.
    df, schema = core.datasets.load_bundled("penguins")
    trace = 1 + core.frontier.default_methods(schema, len(df)).index("independent")
    page.locator(".js-plotly-plot .scatterlayer .trace").nth(trace).locator(".points path").nth(1).click(force=True)
    wait_idle(page)
    page.get_by_text("Loaded Independent noisy marginals at ε = 3").wait_for()


def test_ru_sweep_and_choosing_a_point_loads_it(page):
    _sweep_and_pick_independent_at_3(page)
    # The exports are made only on click: the sweep's table as CSV, the figure as self-contained HTML.
    dl = download(page, "Sweep table (CSV)")
    sweep = pd.read_csv(dl.value.path())
    points = int(re.search(r"(\d+) points\.", page.get_by_text(re.compile(r"\d+ points\.")).inner_text()).group(1))
    assert dl.value.suggested_filename == "ru_sweep.csv" and len(sweep) == points
    assert set(sweep.loc[sweep["method"] == "independent", "epsilon"]) == {0.3, 3.0}
    dl = download(page, "Figure (interactive HTML)")
    html = Path(dl.value.path()).read_text(encoding="utf-8")
    assert dl.value.suggested_filename == "ru_map.html"
    assert "Independent noisy marginals" in html and "<script src=" not in html  # plotly.js is inside
    sidebar = page.get_by_test_id("stSidebar")
    assert "ε = 3" in sidebar.inner_text()
    go(page, "Synthesize")
    # The exact input holds the chosen ε; the log slider shows its nearest step, 10^0.5 ≈ 3.16.
    assert page.get_by_label("ε, exact").input_value() == "3"
    assert page.get_by_test_id("stSliderThumbValue").inner_text() == "3.16"
    # A move reruns only the page's fragment; the sidebar's settings and spending and the address bar follow.
    runs, spent, looks = _spending(sidebar)
    page.get_by_test_id("stSlider").get_by_role("slider").focus()
    page.keyboard.press("ArrowRight")  # 10^0.6 ≈ 3.98
    wait_idle(page)
    assert "ε = 3.98 · seed" in sidebar.inner_text() and "eps=3.98" in page.url
    # A seeded run: one more look without a guarantee, nothing added to the DP totals (issue 26).
    assert _spending(sidebar) == (runs, pytest.approx(spent), looks + 1)


def _spending(sidebar) -> tuple[int, float, int]:
    """The sidebar's DP computations on this dataset (from the ledger store), the ε they spent in all, and the
    looks without a guarantee."""
    text = sidebar.inner_text()
    found = re.search(r"(\d+) DP computations?: ε = ([\d.e+-]+), δ", text)
    looks = re.search(r"(\d+) looks? without a guarantee", text)
    return int(found.group(1)), float(found.group(2)), int(looks.group(1))


def test_cancel_stops_a_running_sweep_and_the_next_sweep_runs(page):
    go(page, "R-U map")
    page.get_by_label("ε grid (comma-separated; log-spaced by default)").fill(
        ", ".join(f"{e:g}" for e in [0.1, 0.2, 0.3, 0.5, 1, 2, 3, 5, 10, 20, 30, 50]))
    page.keyboard.press("Enter")
    wait_idle(page)
    page.get_by_label("Replicates").fill("10")  # 140 points: long enough to be running when Cancel is clicked
    page.keyboard.press("Enter")
    wait_idle(page)
    page.get_by_role("button", name="Run sweep").click()
    page.get_by_role("button", name="Cancel").click()  # shown while the sweep runs
    wait_idle(page)
    page.get_by_text("Sweep cancelled; nothing of it was kept.").wait_for()
    assert page.locator(".js-plotly-plot").count() == 0
    # The pool survives the cancel: a small sweep runs to its map.
    page.get_by_label("ε grid (comma-separated; log-spaced by default)").fill("1")
    page.keyboard.press("Enter")
    wait_idle(page)
    page.get_by_role("button", name="Run sweep").click()
    wait_idle(page)
    page.locator(".js-plotly-plot").first.wait_for()


def test_sweep_pick_a_point_then_release_package(page):
    _sweep_and_pick_independent_at_3(page)
    # The URL now carries the settings (never the data), ready to share.
    assert "method=independent" in page.url and "eps=3" in page.url and "data=bundled%3Apenguins" in page.url

    page.get_by_test_id("stSidebar").get_by_text("release", exact=True).click()
    wait_idle(page)
    go(page, "Synthesize")
    sidebar = page.get_by_test_id("stSidebar")
    runs, spent, looks = _spending(sidebar)
    page.get_by_role("button", name="Run the release").click()
    wait_idle(page)
    assert _spending(sidebar) == (runs + 1, pytest.approx(spent + 3), looks)  # the release, at ε = 3, counts
    # Done at these settings: the button waits for a change.
    assert page.get_by_role("button", name="Run the release").is_disabled()
    dl = download(page, "Download the public release")
    shot(page, "release")
    stem = "penguins-independent-eps3-release"
    assert dl.value.suggested_filename == f"{stem}.zip"
    internal_dl = download(page, "Download the internal report")
    assert internal_dl.value.suggested_filename == "penguins-independent-eps3-internal-report-CONFIDENTIAL.html"
    internal = Path(internal_dl.value.path()).read_text(encoding="utf-8")
    assert internal.count("CONFIDENTIAL") >= 5 and "Disclosure risk" in internal
    with zipfile.ZipFile(dl.value.path()) as z:
        assert sorted(z.namelist()) == [f"{stem}.csv", f"{stem}.ledger.json", f"{stem}.report.html"]
        data = pd.read_csv(z.open(f"{stem}.csv"))
        ledger = json.loads(z.read(f"{stem}.ledger.json"))
        report = z.read(f"{stem}.report.html").decode("utf-8")
    assert list(data.columns) == list(pd.read_csv(ROOT / "data" / "penguins.csv").columns)
    assert ledger["method"] == "independent" and ledger["epsilon_total"] == 3.0 and ledger["seed"] is None
    assert ledger["is_dp"] is True and ledger["n_rows"] == len(data)
    # The sweep's syntheses and the release all count: the statement names what the ledger store holds.
    assert f"{runs + 1} DP computation" in report and f"{looks} looks at the data without a guarantee" in report
    assert "CONFIDENTIAL" not in report and "SHA-256" not in report  # the public report: synthetic data only
    assert ledger["spent_on_this_data"]["epsilon"] == pytest.approx(spent + 3)


def test_a_link_to_a_page_is_the_first_request_a_fresh_server_gets(browser, fresh_server):
    # Until app.py has run once, Streamlit runs a page file named by the address on its own (pages/ mode).
    ctx, pg = new_page(browser, fresh_server + "/synthesize?data=bundled%3Adiamonds&method=independent&eps=0.5&seed=7")
    try:
        assert pg.get_by_test_id("stException").count() == 0
        assert pg.get_by_test_id("stSidebarNav").inner_text().split() == [
            "Data", "Synthesize", "Compare", "Risk", "R-U", "map", "Ledger", "Learn"]
        sidebar = pg.get_by_test_id("stSidebar").inner_text()
        assert "diamonds" in sidebar and "ε = 0.5 · seed 7" in sidebar
        pg.get_by_role("heading", name="Synthesize").wait_for()
        assert pg.get_by_label("ε, exact").input_value() == "0.5"
    finally:
        ctx.close()
