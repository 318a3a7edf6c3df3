"""Caches that live in the session's own state, and the public bundled data shared by all sessions.

Cached calls (``session_cache``) keep their results in the session's state, so they are never shared
between sessions and die with the session (a process-wide st.cache_data kept each closed session's
uploads, syntheses and measures). They are keyed by the dataset's full content hash and the settings;
the DataFrame itself is passed as an unkeyed ``_df`` argument.
"""

from __future__ import annotations

import functools
import inspect
from collections import OrderedDict
from contextlib import nullcontext

import streamlit as st

import dpsynth_core as core


def session_store(name: str) -> OrderedDict:
    """A cache that lives in the session's state: gone when the session ends."""
    return st.session_state.setdefault("_cache", {}).setdefault(name, OrderedDict())


def session_cache(spinner: str | None = None, max_entries: int = 8, max_bytes: int | None = None,
                  size=None):
    """Cache a function's results in the session's state, like st.cache_data without sharing.

    Arguments whose names start with "_" are not part of the key (the data, passed beside its hash).
    A session's entries are released with the session; the core's measurements made inside are kept
    in the session too (``dpsynth_core.synth.base.measure_cache``). With ``max_bytes``, the oldest entries
    also go while the entries' ``size(value)`` adds up to more (the newest always stays).
    """
    def wrap(fn):
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def cached(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            key = repr([(k, v) for k, v in bound.arguments.items() if not k.startswith("_")])
            store = session_store(fn.__qualname__)
            if key in store:
                store.move_to_end(key)
                return store[key]
            with st.spinner(spinner) if spinner else nullcontext(), measures_in_session():
                value = fn(*args, **kwargs)
            store[key] = value
            while len(store) > max_entries or (max_bytes is not None and len(store) > 1
                                               and sum(size(v) for v in store.values()) > max_bytes):
                store.popitem(last=False)
            return value

        return cached

    return wrap


def measures_in_session():
    """The core's measurement cache for the calls made inside: the session's own."""
    return core.synth.base.measure_cache(session_store("measure"))


@st.cache_data(show_spinner=False, max_entries=4)  # public bundled data only: shared across sessions
def bundled(name: str):
    return core.load_bundled(name)
