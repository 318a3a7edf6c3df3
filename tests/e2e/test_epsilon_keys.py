"""Fast key presses on the ε slider in Debian's Chromium (issue 20, point 1): after the app is idle, the thumb,
the exact-ε box, the link and the settings all say the ε the keys chose, on every page with the controls.

On diamonds each press reruns a synthesis, so presses 0.1 s apart leave while the previous run is still
being drawn: the browser's next message then carries values older than the server's, which once moved the
settings back (the thumb at 1.0 with the link at 1.58).

The race is made certain rather than left to the machine's timing: the page holds back the server's
messages (``window.__runs.hold``, tests/e2e/conftest.py) and each key is pressed only once the server has
handled the previous one, so every key after the first leaves with the widget values of before the
previous run, however fast or loaded the machine. The four right presses wait for each run to finish on
the server (the next message arrives after the run's callbacks and cleanup); the back-and-forth presses
wait only for each run to start (the next message can land during the run and interrupt it).
"""

import re
import urllib.parse

import pytest

from tests.e2e.conftest import wait_idle, wait_server

pytestmark = pytest.mark.e2e

EXPECTED = "0.251"  # four log steps of 10^0.1 up from ε = 0.1: 10^-0.6 = 0.2512 to the slider's 3 digits


def _press_before_the_page_draws(page, keys: list[str], *, finished: bool) -> None:
    """Press ``keys`` on the slider, each after the server has finished (or started) the run of the one
    before, while the page draws none of those runs; then let the page draw them all and wait until idle."""
    page.get_by_test_id("stSlider").get_by_role("slider").first.focus()
    page.evaluate("window.__runs.hold = true")
    try:
        for key in keys:
            sent = page.evaluate("window.__runs.requests")
            page.keyboard.press(key)
            wait_server(page, finished=finished, after=sent)  # this key's request, not the one before
        # Every message the page sent carried values of before the server's runs: nothing was drawn.
        assert page.evaluate("window.__runs.held.length") > 0
    finally:
        page.evaluate("window.__runs.release()")
    wait_idle(page)


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
    page.goto(f"{server}/{name}?data=bundled%3Adiamonds&method=independent&eps=0.1&seed=7")  # a new session
    wait_idle(page)
    assert set(_shown(page).values()) == {"0.1"}
    _press_before_the_page_draws(page, ["ArrowRight"] * 4, finished=True)
    assert _shown(page) == agreeing, "four presses, each after the server's run of the one before"
    # Back and forth: the settings return to an ε whose link the browser may still show when the next key
    # leaves, and the address bar must not keep the step in between.
    _press_before_the_page_draws(page, ["ArrowRight", "ArrowLeft", "ArrowRight", "ArrowLeft"], finished=False)
    assert _shown(page) == agreeing, "back and forth, each press once the server has started the one before"
