"""Screenshots of every page at 1440×900, to look at before saying a change to the pages is done.

Run: .venv/bin/python scripts/screenshots.py [--data penguins|diamonds]. Starts the app on a free local
port, drives Debian's Chromium through each page (an R-U sweep included) and writes full-page PNGs to
tests/artifacts/screens/ (gitignored).
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

from tests.e2e.conftest import ARTIFACTS, CHROMIUM, FLAGS, _serve, go, wait_idle  # noqa: E402

OUT = ARTIFACTS / "screens"


def shoot(pg, name: str) -> None:
    """The first screen at 1440×900 (``name.png``) and the whole page (``name-full.png``).

    Streamlit scrolls inside its own container, so a "full page" screenshot shows only the window: for the
    whole page the window is made as tall as that container's content, then put back.
    """
    OUT.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(OUT / f"{name}.png"))
    height = pg.evaluate("Math.max(...[...document.querySelectorAll('[data-testid=stMain], section.main, "
                         "[data-testid=stAppViewContainer]')].map(e => e.scrollHeight), 900)")
    pg.set_viewport_size({"width": 1440, "height": int(height)})
    pg.wait_for_timeout(500)
    pg.screenshot(path=str(OUT / f"{name}-full.png"))
    pg.set_viewport_size({"width": 1440, "height": 900})
    print(OUT / f"{name}.png", height)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="penguins", help="bundled dataset to open (default penguins)")
    args = parser.parse_args()
    with _serve("screenshots.log") as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        ctx = browser.new_context(viewport={"width": 1440, "height": 900})
        ctx.route(re.compile(r"^https?://(?!127\.0\.0\.1|localhost)"), lambda r: r.abort())
        pg = ctx.new_page()
        pg.set_default_timeout(120_000)
        pg.goto(f"{url}/?data=bundled%3A{args.data}")
        wait_idle(pg)
        shoot(pg, f"{args.data}-data")
        for name in ("Synthesize", "Compare", "Risk"):
            go(pg, name)
            shoot(pg, f"{args.data}-{name.lower()}")
            if name == "Compare":
                pg.get_by_text("All columns at once (small multiples)").click()
                wait_idle(pg)
                shoot(pg, f"{args.data}-compare-small-multiples")
        go(pg, "R-U map")
        shoot(pg, f"{args.data}-ru_map-empty")
        pg.get_by_role("button", name="Run sweep").click()
        wait_idle(pg)
        pg.locator(".js-plotly-plot").first.wait_for()
        shoot(pg, f"{args.data}-ru_map")
        go(pg, "Learn")
        for tab in ("Exponential mechanism", "Beta–binomial synthesizer"):
            pg.get_by_role("tab", name=tab).click()
            wait_idle(pg)
            shoot(pg, f"learn-{tab.split()[0].lower()}")
        browser.close()


if __name__ == "__main__":
    main()
