"""One sentence for the user, never a traceback (or data) on the page or in the log; the net every page
runs in, and the start of a page that Streamlit ran on its own."""

from __future__ import annotations

import logging
import runpy
import threading
import traceback
from collections.abc import Callable
from pathlib import Path

import streamlit as st

import dpsynth_core as core
from ui import server
from ui.text import plain

GENERIC_ERROR = ("This could not be computed for this dataset and these settings; try other settings or "
                 "columns, or another file. Nothing else in the session has changed.")
_LOG = logging.getLogger("dpsynth")
_APP = Path(__file__).resolve().parent.parent / "app.py"


def show_error(message: str) -> None:
    """One sentence for the user, with any user text in it made inert."""
    st.error(plain(message), icon="⚠️")


def log_unexpected(err: BaseException) -> None:
    """Log where an unexpected error happened: its type and the code lines, never its message.

    A library's message can quote the data (a column name, its confidential minimum), and the server's
    log must hold nothing of it.
    """
    frames = traceback.extract_tb(err.__traceback__)[-8:]
    where = " < ".join(f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in reversed(frames))
    _LOG.error("unexpected %s at %s", type(err).__name__, where)


def show_unexpected(err: BaseException) -> None:
    """The generic sentence for an error the app did not foresee (the library's wording is not the app's)."""
    log_unexpected(err)
    show_error(GENERIC_ERROR)


def guard(fn: Callable, *args, **kwargs):
    """``fn(*args, **kwargs)``, or None after one sentence on the page if it fails.

    The core's own refusals (DataError, MethodRefused, LedgerError) are written for the user and shown as they are;
    anything else gets the generic sentence. Streamlit's st.stop and st.rerun are not exceptions of
    this kind and pass through.
    """
    try:
        return fn(*args, **kwargs)
    except (core.DataError, core.MethodRefused, core.LedgerError) as err:
        show_error(str(err))
    except Exception as err:  # noqa: BLE001 - the page must never show a traceback
        show_unexpected(err)
    return None


_APP_RUN = threading.local()  # each session's script runs in its own thread


def start_page() -> None:
    """Run the app's entry point first if Streamlit has run this page file on its own.

    Until some session of a freshly started server has run app.py, which declares the navigation,
    Streamlit (and AppTest's ``switch_page``) treats the pages/ folder as its older kind of multipage
    app and runs the page file an address names (a shared link to /synthesize, say) by itself, without
    the session set-up, the sidebar or app.py's net for errors. The entry point then runs here, declares
    the navigation and runs this page properly, and the stray run stops.
    """
    if getattr(_APP_RUN, "active", False):  # app.py is running this page, inside its net for errors
        return
    runpy.run_path(str(_APP), run_name="__main__")
    st.stop()


def run_page(page) -> None:
    """Run the chosen page; an error it did not catch becomes one sentence, never a traceback.

    The core's refusals show their own sentence, anything else the generic one (the library's message
    could quote the data, so it is neither shown nor logged). The session's state is left as it was.
    """
    _APP_RUN.active = True
    memory = server.resident_bytes()
    try:
        page.run()
    except (core.DataError, core.MethodRefused, core.LedgerError) as err:
        show_error(str(err))
    except Exception as err:  # noqa: BLE001 - the last net
        show_unexpected(err)
    finally:
        _APP_RUN.active = False
        server.collect_if_grown(since=memory)  # what a run on a large table left behind, before the next adds to it
