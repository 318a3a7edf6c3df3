"""Screenshots of the app in Debian's Chromium: every page to look at, or the README's pictures.

Run: ``.venv/bin/python scripts/screenshots.py [--data penguins|diamonds]`` starts the app on a free local
port, drives the system Chromium through each page (an R-U sweep included) and writes, for each, the first
screen at 1440×900 and the whole page to tests/artifacts/screens/ (gitignored): look at them before saying
a change to the pages is done.

``--readme`` writes the README's three pictures instead, into docs/img/ (committed): the Synthesize page,
the Compare page and the R-U map after a sweep of the page's default methods, on the penguins at the app's
defaults (ε = 1, seed fixed), each a window of 1440×900 (the map 1440×1350) scrolled to the part the
README describes. Run it again when a page changes what the README shows, and look at each PNG before
committing it.
"""

import argparse
import os
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# The screenshots' syntheses go to a ledger store of their own (the server inherits it), never the user's.
os.environ.setdefault("DPSYNTH_LEDGER", str(Path(tempfile.mkdtemp(prefix="dpsynth-screens-")) / "ledger.sqlite3"))

from playwright.sync_api import sync_playwright  # noqa: E402

from tests.e2e.conftest import ARTIFACTS, _serve, go, launch, new_page, wait_idle  # noqa: E402

OUT = ARTIFACTS / "screens"
README_IMAGES = ROOT / "docs" / "img"
WIDTH, HEIGHT = 1440, 900


def _next_frame(pg) -> None:
    """Wait until the browser has laid out and painted the page as it is now (two animation frames)."""
    pg.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")


def shoot(pg, name: str, out: Path = OUT, *, full: bool = True) -> None:
    """The first screen at 1440×900 (``name.png``) and, with ``full``, the whole page (``name-full.png``).

    Streamlit scrolls inside its own container, so a "full page" screenshot shows only the window: for the
    whole page the window is made as tall as that container's content, then put back.
    """
    out.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(out / f"{name}.png"))
    print(out / f"{name}.png")
    if not full:
        return
    height = pg.evaluate("Math.max(...[...document.querySelectorAll('[data-testid=stMain], section.main, "
                         f"[data-testid=stAppViewContainer]')].map(e => e.scrollHeight), {HEIGHT})")
    pg.set_viewport_size({"width": WIDTH, "height": int(height)})
    _next_frame(pg)
    pg.screenshot(path=str(out / f"{name}-full.png"))
    pg.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    _next_frame(pg)


def _scroll_to_top(pg, locator) -> None:
    """Scroll the page so that ``locator`` is at the top of the window."""
    locator.evaluate("e => e.scrollIntoView({block: 'start'})")
    _next_frame(pg)


def _sweep(pg) -> None:
    pg.get_by_role("button", name="Run sweep").click()
    wait_idle(pg)
    pg.locator(".js-plotly-plot").first.wait_for()


def every_page(pg, data: str) -> None:
    shoot(pg, f"{data}-data")
    for name in ("Synthesize", "Compare", "Risk"):
        go(pg, name)
        shoot(pg, f"{data}-{name.lower()}")
        if name == "Compare":
            pg.get_by_text("All columns at once (small multiples)").click()
            wait_idle(pg)
            shoot(pg, f"{data}-compare-small-multiples")
    go(pg, "R-U map")
    shoot(pg, f"{data}-ru_map-empty")
    _sweep(pg)
    shoot(pg, f"{data}-ru_map")
    go(pg, "Learn")
    for tab in ("Exponential mechanism", "Beta–binomial synthesizer"):
        pg.get_by_role("tab", name=tab).click()
        wait_idle(pg, fresh=False)  # a tab opens in the browser, without a rerun
        shoot(pg, f"learn-{tab.split()[0].lower()}")


def readme(pg) -> None:
    # Each picture starts at what the README says about the page (the teaching banner above it is on
    # every page).
    go(pg, "Synthesize")
    _scroll_to_top(pg, pg.get_by_role("heading", name="Synthesize"))
    shoot(pg, "synthesize", README_IMAGES, full=False)
    go(pg, "Compare")
    pg.locator(".js-plotly-plot").first.wait_for()
    _scroll_to_top(pg, pg.get_by_text(re.compile("real rows vs")))  # the verdict, then the tabs
    shoot(pg, "compare", README_IMAGES, full=False)
    go(pg, "R-U map")
    _sweep(pg)  # the page's default methods: the DP methods the suggestion may name
    pg.set_viewport_size({"width": WIDTH, "height": 1350})  # the answer and the whole map in one picture
    _scroll_to_top(pg, pg.get_by_role("heading", name="The steward's question"))
    shoot(pg, "ru_map", README_IMAGES, full=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="penguins", help="bundled dataset to open (default penguins)")
    parser.add_argument("--readme", action="store_true", help="write the README's pictures into docs/img/")
    args = parser.parse_args()
    with _serve("screenshots.log") as url, sync_playwright() as p:
        browser = launch(p)
        ctx, pg = new_page(browser, f"{url}/?data=bundled%3A{'penguins' if args.readme else args.data}",
                           timeout_ms=120_000, viewport={"width": WIDTH, "height": HEIGHT})
        if args.readme:
            readme(pg)
        else:
            every_page(pg, args.data)
        ctx.close()
        browser.close()


if __name__ == "__main__":
    main()
