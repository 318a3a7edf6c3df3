"""Process-wide set-up: uploads kept in memory, freed memory returned to the system, closed sessions ended.

Importing this module applies the set-up once per server process (``ui.state`` imports it, and every
session runs app.py, which imports ``ui.state``, before any upload).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import threading
import time

from streamlit.runtime.session_manager import ActiveSessionInfo

import dpsynth_core as core


def keep_uploads_in_memory() -> None:
    """Make Streamlit's upload handling keep every upload in memory, never in a temporary file.

    Streamlit's server (Starlette) parses an upload with a SpooledTemporaryFile that moves to a file in
    the system's temporary directory once a part passes 1 MB (starlette.formparsers.MultiPartParser
    .spool_max_size): a 49 MB upload was a 49 MB deleted file in /tmp while it was parsed. Raised above
    the largest body Streamlit's server accepts (server.maxUploadSize MiB plus its 1 MiB margin for the
    multipart framing; it refuses larger bodies while they stream), the spool never leaves memory.
    tests/e2e/test_upload_privacy.py watches the server's open files during a 7 MB upload.
    """
    from starlette.formparsers import MultiPartParser

    MultiPartParser.spool_max_size = (core.constraints.MAX_UPLOAD_MB + 2) * 2**20


keep_uploads_in_memory()  # once per server process, before any upload (a session runs app.py first)


def return_freed_memory() -> None:
    """Let the memory of a closed session's tables go back to the system, not stay in the allocators.

    A session's frames die with it (``ui.cache.session_cache``), but the server's resident memory did not
    fall: Arrow's default pool (mimalloc, which holds pandas' text columns) keeps freed memory for reuse,
    and glibc's malloc raises its mmap threshold after large frees, so later large arrays come from heaps
    it never shrinks. Arrow is pointed at the system allocator and glibc's threshold is fixed at 4 MiB, so
    every large buffer is a mapping of its own, unmapped when freed (bench/bench_large.py measures it).
    """
    import ctypes

    import pyarrow as pa

    pa.set_memory_pool(pa.system_memory_pool())
    try:
        ctypes.CDLL("libc.so.6").mallopt(-3, 4 * 2**20)  # M_MMAP_THRESHOLD (fixed, not adjusted upwards)
    except (OSError, AttributeError):
        pass  # not glibc: its allocator's own policy applies


return_freed_memory()


def end_expired_sessions(manager) -> list:
    """Shut down the closed sessions whose reconnect time has passed and drop them from the store; those ended.

    Streamlit keeps a closed session for ``server.disconnectedSessionTTL`` seconds in case its browser
    reconnects. Once that time has passed the session is expired but stays in the store, with its state
    (the upload, its frames and caches), until the next session is stored, and is then dropped without
    being shut down. Here it is shut down (its uploads and media leave Streamlit's stores) and dropped as
    soon as its time has passed. (A session dropped some other way, e.g. the oldest when the store holds
    128, is shut down by AppSession.__del__ once collected.) ``manager`` is the runtime's
    WebsocketSessionManager; its store is touched on the server's event loop only, so this runs there
    (:func:`end_closed_sessions`).
    """
    expired = manager._session_storage._cache.expire()  # the TTLCache of Streamlit's MemorySessionStorage
    for _, info in expired:
        info.session.shutdown()
    return [info.session for _, info in expired]


def end_closed_sessions(manager, loop: asyncio.AbstractEventLoop) -> int:
    """End the expired sessions (:func:`end_expired_sessions`, on the server's event loop), then free what
    they held; the number ended.

    Two things keep an ended session's data otherwise. Streamlit's message loop keeps the last session it
    sent messages for in a local variable (an ActiveSessionInfo, out of date since the disconnect) until
    it sends another session's: with no other user connected the last session would stay, whole; those
    stale entries are pointed away from it. And a session's objects are in reference cycles (its
    callbacks, pages and state point at each other) that, with ``runner.postScriptGC`` off, a full
    collection may not reach for a long time: one is run here, off the event loop, and then glibc
    returns the freed heap pages (:func:`trim_heaps`).
    """
    ended = concurrent.futures.Future()

    def on_loop():
        try:
            ended.set_result(end_expired_sessions(manager))
        except Exception as error:  # noqa: BLE001 - raised in the watcher's thread, which reports it
            ended.set_exception(error)

    loop.call_soon_threadsafe(on_loop)
    sessions = ended.result()
    count = len(sessions)
    while sessions:  # emptied, so that nothing here keeps an ended session
        _forget_stale_entries(sessions.pop())
    if count:
        gc.collect()
        trim_heaps()
    return count


def _forget_stale_entries(session) -> None:
    for holder in gc.get_referrers(session):
        if isinstance(holder, ActiveSessionInfo):  # out of date: the session was no longer active
            holder.session = None


def trim_heaps() -> None:
    """Give glibc's free heap memory back to the system (each script thread's arena keeps its freed blocks)."""
    import ctypes

    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc: its allocator's own policy applies


def watch_closed_sessions(period: float = 2.0) -> None:
    """End closed sessions within ``period`` seconds of their reconnect time passing, for the server's life.

    Once per server process; nothing under AppTest or a bare script, which run no Streamlit runtime.
    """
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return
    runtime = Runtime.instance()

    def watch():
        loop = runtime._get_async_objs().eventloop
        while not loop.is_closed():
            time.sleep(period)
            try:
                end_closed_sessions(runtime._session_mgr, loop)
            except RuntimeError:
                if loop.is_closed():  # the server stopped
                    return
                raise

    threading.Thread(target=watch, name="dpsynth-closed-sessions", daemon=True).start()


watch_closed_sessions()
