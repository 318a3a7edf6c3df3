"""The privacy audit from the browser (issue 28): a small audit on Learn runs to its numbers and figure, and
Cancel stops a long one."""

import re

import pytest

from tests.e2e.conftest import shot, wait_idle

pytestmark = pytest.mark.e2e


def test_a_small_audit_runs_from_the_learn_page(page, server):
    # The link opens the audit tab on the uniform baseline at its short audit's run count (50 runs a table).
    page.goto(server + "/learn?learn_demo=audit&learn_audit_method=uniform&learn_audit_runs_uniform=50")
    wait_idle(page)
    assert page.get_by_role("tab", name="Privacy audit").get_attribute("aria-selected") == "true"
    page.get_by_role("button", name="Run the audit").click()
    wait_idle(page)
    metrics = page.get_by_test_id("stMetric")
    metrics.filter(has_text="Lower bound on ε, 95 %").wait_for()
    assert metrics.filter(has_text="Claimed ε (per release)").get_by_test_id("stMetricValue").inner_text() == "0"
    broken = metrics.filter(has_text="Broken variant's bound").get_by_test_id("stMetricValue").inner_text()
    assert float(broken) > 0  # the bootstrap in its place is caught
    page.get_by_text(re.compile("this audit can catch such an error")).wait_for()
    page.locator(".js-plotly-plot").first.wait_for()
    sidebar = page.get_by_test_id("stSidebar").inner_text()
    assert "Dataset" not in sidebar  # Learn never reads the session's data
    shot(page, "learn-audit")


def test_cancel_stops_a_running_audit(page, server):
    # MST at its full run count takes minutes: Cancel, shown while it runs, stops it and keeps nothing.
    page.goto(server + "/learn?learn_demo=audit&learn_audit_method=mst&learn_audit_runs_mst=1200")
    wait_idle(page)
    page.get_by_role("button", name="Run the audit").click()
    page.get_by_test_id("stProgress").wait_for()  # the bar is drawn: the runs have started
    page.get_by_role("button", name="Cancel").click()
    wait_idle(page)
    page.get_by_text("Audit cancelled; nothing of it was kept.").wait_for()
    assert page.get_by_role("button", name="Cancel").count() == 0
    assert page.get_by_test_id("stMetric").filter(has_text="Lower bound on ε, 95 %").count() == 0
