"""Process-wide set-up: uploads kept in memory, freed memory returned to the system, closed sessions ended, page
runs' garbage collected, and the security headers of every response.

Importing this module applies the set-up once per server process (the launcher, serve.py, imports it before
the server starts; ``ui.state`` imports it too, and every session runs app.py, which imports ``ui.state``,
before any upload). The headers and the server's silence about itself need the launcher: they are set
around Streamlit's own web application, which exists before any session runs.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import contextlib
import gc
import hashlib
import logging
import os
import re
import sys
import threading
import time
from pathlib import Path

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


#: Growth of the server's resident memory since the watcher last looked at it past which it collects.
COLLECT_AFTER_GROWTH = 64 * 2**20


def resident_bytes() -> int:
    """This process's resident memory (Linux's /proc; 0 elsewhere, where nothing is then collected)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


class GrowthCollector:
    """Collect the cyclic garbage and trim the heaps once the server's memory has grown by
    :data:`COLLECT_AFTER_GROWTH` since the last time: called after every page run (``ui.errors.run_page``)
    and by the watcher every 2 s (for the runs of a fragment, such as Synthesize's controls).

    A page run on a large table leaves its frames (the split rows, the measures' inputs) as garbage in a
    reference cycle: the page's module namespace holds the page's functions, which hold the namespace.
    With ``runner.postScriptGC`` off (``.streamlit/config.toml`` says why) only a full collection frees them,
    which Python's collector may not run for a long time, and glibc keeps the heap pages freed under
    them: on a 675,000 × 12 upload the server held 1,193 MiB after the Risk page, where the same pages in one
    process held 657 MiB once collected and trimmed (bench/bench_memory.py). A rerun on a class's tables
    grows the memory by far less than the threshold, so their runs never pay for a collection (~0.1 s
    holding the interpreter); a large table's pages take seconds, beside which it is small.
    """

    def __init__(self) -> None:
        self.base = resident_bytes()
        self.lock = threading.Lock()

    def __call__(self, since: int | None = None) -> bool:
        """Collect if the memory grew past the threshold since the last collection, or since ``since``
        (a page run's start: a collection by the watcher during the run saw the run's data still in use)."""
        with self.lock:  # one collection at a time, from whichever thread sees the growth first
            now = resident_bytes()
            if now - min(self.base, now if since is None else since) <= COLLECT_AFTER_GROWTH:
                self.base = min(self.base, now)  # memory given back (a session ended): growth counts from there
                return False
            gc.collect()
            trim_heaps()
            self.base = resident_bytes()
            return True


collect_if_grown = GrowthCollector()  # the server's one, for the pages and the watcher


_WATCHING = threading.Lock()  # taken once the watcher runs: one per server process, whichever thread asks first


def watch_closed_sessions(period: float = 2.0) -> None:
    """End closed sessions within ``period`` seconds of their reconnect time passing, and collect what page
    runs left once the memory has grown (:class:`GrowthCollector`), for the server's life.

    Once per server process, from whichever comes first once Streamlit's runtime has started: the
    launcher's lifespan (:func:`lifespan`) or the first session's import of this module; nothing under
    AppTest or a bare script, which run no Streamlit runtime.
    """
    from streamlit.runtime import Runtime, RuntimeState

    if not Runtime.exists() or Runtime.instance().state == RuntimeState.INITIAL:
        return
    if not _WATCHING.acquire(blocking=False):  # check and set at once: two threads may ask together
        return
    runtime = Runtime.instance()

    def watch():
        loop = runtime._get_async_objs().eventloop
        while not loop.is_closed():
            time.sleep(period)
            try:
                end_closed_sessions(runtime._session_mgr, loop)
                collect_if_grown()
            except RuntimeError:
                if loop.is_closed():  # the server stopped
                    return
                raise

    threading.Thread(target=watch, name="dpsynth-closed-sessions", daemon=True).start()


watch_closed_sessions()


# -- What every response says about the page and about the server (set up by the launcher, serve.py) --

_LOG = logging.getLogger("dpsynth")


def _inline_script_hashes() -> list[str]:
    """CSP sources for the inline scripts of the page Streamlit serves (its static index.html, served as is).

    Hashed from the installed Streamlit's own file, so a new Streamlit release brings its own hashes
    rather than needing 'unsafe-inline'.
    """
    import streamlit

    page = (Path(streamlit.__file__).parent / "static" / "index.html").read_text(encoding="utf-8")
    return [f"'sha256-{base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()}'"
            for body in re.findall(r"<script>(.*?)</script>", page, flags=re.S)]


def content_security_policy() -> str:
    """What the page may load and run, nothing beyond what Streamlit's page needs (each source said why).

    Everything comes from this server: Streamlit's scripts, styles, fonts and images, the websocket
    ('self' covers ws: and wss: to the same host and port), the uploads and the downloads. Styles
    may be inline, as Streamlit's styling library (Emotion) writes them into <style> elements at run
    time; scripts may not, but for the one small script of Streamlit's page, allowed by its hash, and
    may compile WebAssembly ('wasm-unsafe-eval', which allows no JavaScript eval): the 64-bit integer
    library (long.js) in Streamlit's message decoder builds a small module at start.
    Images may be data: and blob: URLs (icons and the plots' exported images), fonts data: URLs, and
    web workers blob: URLs. Nothing may be embedded (object-src, frame-src) and the page may be framed
    by pages of this server only (frame-ancestors, with X-Frame-Options for older browsers).
    """
    directives = {
        "default-src": ["'none'"],
        "script-src": ["'self'", "'wasm-unsafe-eval'", *_inline_script_hashes()],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:", "blob:"],
        "font-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "worker-src": ["'self'", "blob:"],
        "manifest-src": ["'self'"],
        "media-src": ["'self'", "blob:"],
        "object-src": ["'none'"],
        "frame-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'self'"],
    }
    return "; ".join(f"{name} {' '.join(sources)}" for name, sources in directives.items())


def security_headers() -> dict[str, str]:
    return {
        "Content-Security-Policy": content_security_policy(),
        "X-Frame-Options": "SAMEORIGIN",  # frame-ancestors 'self' for browsers that predate it
        "X-Content-Type-Options": "nosniff",  # a file is run or shown only as the type the server says
        "Referrer-Policy": "no-referrer",  # the address holds the settings: it is sent to no one
    }


class SecurityHeaders:
    """ASGI middleware: :func:`security_headers` on every response, in place of any the app set itself.

    Pure ASGI (not Starlette's BaseHTTPMiddleware), so responses stream as before and the websocket's
    handshake gets the headers too. serve.py puts it around Streamlit's application with ``st.App``'s
    ``middleware``, so it sees every request, the page and the static files included.
    """

    _STARTS = {"http.response.start", "websocket.accept", "websocket.http.response.start"}

    def __init__(self, app) -> None:
        self.app = app
        headers = security_headers()
        self.names = {name.lower().encode("latin-1") for name in headers}
        self.encoded = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message) -> None:
            if message["type"] in self._STARTS:
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in self.names]
                message = {**message, "headers": kept + self.encoded}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def drop_server_banner() -> bool:
    """Stop uvicorn from naming itself in a ``server`` header on every response; whether it was reached.

    Streamlit starts uvicorn with settings of its own, which leave uvicorn's ``server_header`` on and offer
    no option for it. uvicorn imports the launcher (serve.py) from inside ``Config.load``, after that
    method has encoded the header and before the server sends anything; the server copies the config's
    encoded headers into every response (``Server.on_tick``), so removing it there removes it from all.
    Called by the launcher as it is imported: the Config is the ``self`` of a calling frame.
    (tests/e2e/test_headers.py checks that no response names the server.)
    """
    import uvicorn

    frame = sys._getframe(1)
    while frame is not None:
        config = frame.f_locals.get("self")
        if isinstance(config, uvicorn.Config):
            config.server_header = False
            config.encoded_headers = [(k, v) for k, v in config.encoded_headers if k != b"server"]
            return True
        frame = frame.f_back
    _LOG.warning("the launcher was not imported by uvicorn's Config.load: responses may name the server")
    return False


@contextlib.asynccontextmanager
async def lifespan(_app):
    """The launcher's lifespan: once Streamlit's runtime has started, the watcher of closed sessions."""
    watch_closed_sessions()
    yield
