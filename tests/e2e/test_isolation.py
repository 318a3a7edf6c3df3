"""Two browser sessions upload different files: neither sees the other's rows anywhere."""

import pandas as pd
import pytest

import dpsynth_core as core
from tests.e2e.conftest import download, go, new_page, wait_idle

pytestmark = pytest.mark.e2e


def _table(marker: str, n: int = 40) -> pd.DataFrame:
    # Same columns and shape, so only the values could betray the other session.
    return pd.DataFrame({"group": [f"{marker}-{i % 3}" for i in range(n)], "value": [1000 * (i % 7) for i in range(n)]})


def _session(browser, server, path, marker):
    ctx, page = new_page(browser, server, accept_downloads=True)
    page.get_by_test_id("stFileUploaderDropzoneInput").first.set_input_files(str(path))
    wait_idle(page)
    page.get_by_text(f"{path.name}: 40 rows, 2 columns").wait_for()
    return ctx, page


def _download_bootstrap(page) -> pd.DataFrame:
    go(page, "Synthesize")
    page.get_by_test_id("stSelectbox").get_by_role("combobox").first.click()
    page.get_by_role("option", name="Bootstrap — not DP").click()
    wait_idle(page)
    dl = download(page, "Download synthetic CSV")
    return pd.read_csv(dl.value.path())


def test_two_sessions_never_see_each_others_data(browser, server, tmp_path):
    pa, pb = tmp_path / "alpha.csv", tmp_path / "beta.csv"
    pa.write_bytes(core.to_csv_bytes(_table("ALPHA")))
    pb.write_bytes(core.to_csv_bytes(_table("BETA")))
    ctx_a, a = _session(browser, server, pa, "ALPHA")
    ctx_b, b = _session(browser, server, pb, "BETA")  # B uploads after A, on the same server
    try:
        # Same method, seed and settings in both: a cache keyed by anything but content would
        # hand B the answer computed for A.
        out_a, out_b = _download_bootstrap(a), _download_bootstrap(b)
        assert set(out_a["group"]) <= {"ALPHA-0", "ALPHA-1", "ALPHA-2"}
        assert set(out_b["group"]) <= {"BETA-0", "BETA-1", "BETA-2"}
        for page, own, other in ((a, "ALPHA", "BETA"), (b, "BETA", "ALPHA")):
            for name in ("Data", "Synthesize", "Compare", "Risk"):
                go(page, name)
                assert other not in page.content(), (name, other)
            # The check can see values: the Compare histogram labels its bars with the session's own groups.
            go(page, "Compare")
            page.locator(".js-plotly-plot").first.wait_for()
            assert f"{own}-0" in page.content()
        # A's session still holds A after B's upload.
        go(a, "Data")
        a.get_by_text("alpha.csv: 40 rows, 2 columns").wait_for()
    finally:
        ctx_a.close()
        ctx_b.close()
