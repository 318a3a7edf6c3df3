"""Fast key presses on the ε slider in Debian's Chromium (issue 20, point 1): after the app is idle, the thumb,
the exact-ε box, the link and the settings all say the ε the keys chose, on every page with the controls.

On diamonds each press reruns a synthesis, so presses 0.1 s apart leave while the previous run is still
being drawn: the browser's next message then carries values older than the server's, which once moved the
settings back (the thumb at 1.0 with the link at 1.58)."""

import re
import urllib.parse

import pytest

from tests.e2e.conftest import wait_idle

pytestmark = pytest.mark.e2e

# Between presses: shorter than a rerun on diamonds, so the next key never waits for the app. Whether a late
# message lands before or after the callbacks depends on timing and on the session, so each page tries
# several pauses, each in a new session.
PAUSES_MS = (50, 100, 150, 250)
EXPECTED = "0.251"  # four log steps of 10^0.1 up from ε = 0.1: 10^-0.6 = 0.2512 to the slider's 3 digits


def _press(page, keys: list[str], pause_ms: int) -> None:
    page.get_by_test_id("stSlider").get_by_role("slider").first.focus()
    for key in keys:
        page.keyboard.press(key)
        page.wait_for_timeout(pause_ms)
    wait_idle(page)
    wait_idle(page)  # a message sent just before the first idle can start one more run


def _shown(page) -> dict:
    """ε as the thumb, the exact box, the address bar and the sidebar's settings show it."""
    sidebar = re.search(r"ε = (\S+) · seed", page.get_by_test_id("stSidebar").inner_text())
    return {
        "thumb": page.get_by_test_id("stSliderThumbValue").first.inner_text(),
        "box": page.get_by_label(re.compile("ε, exact")).first.input_value(),
        "link": urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)["eps"][0],
        "settings": sidebar.group(1) if sidebar else None,
    }


@pytest.mark.parametrize("name", ["synthesize", "compare", "risk"])
def test_fast_epsilon_presses_leave_thumb_box_link_and_settings_agreeing(page, server, name):
    agreeing = dict.fromkeys(("thumb", "box", "link", "settings"), EXPECTED)
    for pause in PAUSES_MS:
        page.goto(f"{server}/{name}?data=bundled%3Adiamonds&method=independent&eps=0.1&seed=7")  # a new session
        wait_idle(page)
        assert set(_shown(page).values()) == {"0.1"}
        _press(page, ["ArrowRight"] * 4, pause)
        assert _shown(page) == agreeing, f"four presses {pause} ms apart"
        # Back and forth: the settings return to an ε whose link the browser may still show when the next
        # key leaves, and the address bar must not keep the step in between.
        _press(page, ["ArrowRight", "ArrowLeft", "ArrowRight", "ArrowLeft"], pause)
        assert _shown(page) == agreeing, f"back and forth {pause} ms apart"
