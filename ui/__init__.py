"""The app's glue between Streamlit and ``dpsynth_core``, one concern per module.

Pages import what they use directly (``from ui import state, widgets``); every number comes from the core.

- ``server``: process-wide set-up (uploads kept in memory, freed memory returned, closed sessions ended and freed).
- ``cache``: caches that live in the session's own state, and the public bundled data.
- ``state``: the session's dataset, settings, schema, seed, holdout split and synthesis key.
- ``link``: the share link (query parameters) and a link waiting for its upload.
- ``runs``: the synthesis the pages show, and the release.
- ``spending``: what was spent on the session's dataset (the ledger store), and the sidebar's slots.
- ``measures``: the cached core calls of Compare, Risk, the R-U map and the headline.
- ``text``: user text made inert for markdown, frames made displayable.
- ``errors``: one sentence instead of a traceback; the page net.
- ``widgets``: the shared controls and displays (method and ε, ledger, downloads, headline).
"""

import dpsynth_core as _core

# The core's package is lazy (for the command line's --help); the app uses all of it, and its modules reach
# submodules of submodules by attribute (core.privacy.audit), set only once a module imported them. A fresh
# server may run a page before app.py (a link to /synthesize), so the package that every page imports loads it.
_core.load()
