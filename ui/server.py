"""Process-wide set-up: uploads kept in memory, freed memory returned to the system, a session's end.

Importing this module applies the set-up once per server process (``ui.state`` imports it, and every
session runs app.py, which imports ``ui.state``, before any upload).
"""

from __future__ import annotations

import threading
import weakref

from streamlit.runtime.scriptrunner import get_script_run_ctx

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


class SessionEnd:
    """Kept in each session's state; when Streamlit drops the session, its finaliser cleans up after it.

    Streamlit offers no hook for a session's end. A closed session is dropped once its reconnect time
    has passed (server.disconnectedSessionTTL, 120 s by default, at the next session stored), and with it
    its state, but without being shut down: its uploads stayed in Streamlit's upload store for the
    server's life (each 49 MB upload). The finaliser removes them; and as glibc keeps the freed small
    blocks of each script thread's arena until asked, a second later the heaps are trimmed.
    """

    def __init__(self):
        ctx = get_script_run_ctx()
        session_id, uploads = (ctx.session_id, ctx.uploaded_file_mgr) if ctx is not None else (None, None)
        weakref.finalize(self, _session_ended, session_id, uploads)


def _session_ended(session_id, uploads) -> None:
    if uploads is not None:
        uploads.remove_session_files(session_id)
    timer = threading.Timer(1.0, _malloc_trim)  # after the rest of the session's state is freed
    timer.daemon = True
    timer.start()


def _malloc_trim() -> None:
    import ctypes

    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
