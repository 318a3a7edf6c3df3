"""Issue 31 in Debian's Chromium: the R-U map's defaults, its legend under the title, and its PNG in one click."""

import re

import pytest

from tests.e2e.conftest import go, shot, wait_idle

pytestmark = pytest.mark.e2e


def _sweep(page, grid: str) -> None:
    go(page, "R-U map")
    page.get_by_label("ε grid (comma-separated; log-spaced by default)").fill(grid)
    page.keyboard.press("Enter")
    wait_idle(page)
    page.get_by_role("button", name="Run sweep").click()
    page.locator(".js-plotly-plot").first.wait_for(timeout=180_000)  # four methods: slower on a loaded machine
    wait_idle(page)


def test_ru_map_legend_leaves_the_title_clear_and_the_png_downloads_in_one_click(page):
    _sweep(page, "0.3, 3")  # the default methods: the four DP methods the app may suggest
    chart = page.locator(".js-plotly-plot").first
    legend = chart.locator(".legend").bounding_box()
    title = chart.locator(".gtitle").bounding_box()
    plot = chart.locator(".draglayer .nsewdrag").first.bounding_box()  # the plotting area
    # 31.10: the legend's rows (methods, references, frontier, answer) covered the title; now it sits between
    # the title and the plot.
    assert title["y"] + title["height"] <= legend["y"], (title, legend)
    assert legend["y"] + legend["height"] <= plot["y"], (legend, plot)
    assert all(name in chart.inner_text() for name in ("MST", "PrivBayes", "Independent noisy marginals",
                                                        "DP sequential regression"))
    shot(page, "issue31-ru_map")
    # 31.6: one click on "Figure (PNG)" downloads the PNG (a button used to make it, and a second to offer it).
    button = page.get_by_test_id("stDownloadButton").filter(has_text="Figure (PNG)").get_by_role("button")
    with page.expect_download(timeout=90_000) as dl:
        button.click()
    assert dl.value.suggested_filename == "ru_map.png"
    png = dl.value.path().read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    assert page.get_by_test_id("stException").count() == 0


def test_ru_map_answer_is_green_only_at_an_acceptable_pmse_ratio(page):
    _sweep(page, "0.3, 3")
    threshold = page.get_by_label(re.compile("^pMSE ratio to reach"))
    assert threshold.input_value() == "10"  # the level the app calls acceptable, stated under it
    page.get_by_text(re.compile("starts at 10, the pMSE ratio this app calls acceptable")).wait_for()
    threshold.fill("1000")  # reached at the lowest ε, whatever the sweep holds
    threshold.press("Enter")
    wait_idle(page)
    answer = page.get_by_text(re.compile("^The smallest ε at which MST"))
    answer.wait_for()
    ratio = float(re.search(r"\(pMSE ratio ([\d.]+)\)", answer.inner_text()).group(1))
    box = page.get_by_test_id("stAlertContentSuccess" if ratio < 10 else "stAlertContentWarning")
    assert box.filter(has_text=re.compile("^The smallest ε at which MST")).count() == 1
