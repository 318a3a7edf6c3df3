"""The dpsynth server as ``streamlit run serve.py`` starts it, timing each rerun on the server side (load test only).

For each session, the time from the server receiving a rerun request to the script run it causes having
finished (on the event loop, when its last messages are queued to the browser) is appended to the file
named by ``DPSYNTH_RERUN_TIMINGS`` as ``<request epoch seconds> <seconds>``. Nothing about the data or
the session's settings is written. The hooks wrap two methods of Streamlit's AppSession, which are not
public API: if they move, this fails at start rather than reporting nothing.

Run as ``python bench/_timed_server.py run serve.py [streamlit options]`` (the launcher users start; the hooks
apply to the st.App it serves, which runs in this process).
"""

from __future__ import annotations

import os
import sys
import threading
import time

from streamlit.runtime.app_session import AppSession
from streamlit.web import cli

_OUT = open(os.environ["DPSYNTH_RERUN_TIMINGS"], "a", buffering=1)  # noqa: SIM115 - open for the server's life
_LOCK = threading.Lock()
_PENDING: dict[str, float] = {}  # session id -> when its oldest unanswered rerun request arrived

_handle_backmsg = AppSession.handle_backmsg
_on_event = AppSession._handle_scriptrunner_event_on_event_loop


def handle_backmsg(self, msg):
    if msg.WhichOneof("type") == "rerun_script":
        with _LOCK:
            _PENDING.setdefault(self.id, time.time())  # a rerun that interrupts another keeps the first wait
    return _handle_backmsg(self, msg)


def on_event(self, sender, event, *args, **kwargs):
    result = _on_event(self, sender, event, *args, **kwargs)
    # A run's end: the whole script's, or a fragment's (the Synthesize page's controls rerun as a fragment).
    if (event.name.startswith("SCRIPT_STOPPED") and event.name != "SCRIPT_STOPPED_FOR_RERUN") \
            or event.name == "FRAGMENT_STOPPED_WITH_SUCCESS":
        with _LOCK:
            asked = _PENDING.pop(self.id, None)
        if asked is not None:
            _OUT.write(f"{asked:.3f} {time.time() - asked:.4f}\n")
    return result


AppSession.handle_backmsg = handle_backmsg
AppSession._handle_scriptrunner_event_on_event_loop = on_event

if __name__ == "__main__":
    sys.argv = ["streamlit", *sys.argv[1:]]
    cli.main()
