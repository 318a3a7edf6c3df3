"""A closed session's data is released when its reconnect time has passed (issue 16, point 3).

Streamlit's own session manager, store and (last test) runtime are used, with the store's clock replaced
by a counter, so the reconnect time passes without waiting. Streamlit alone keeps an expired session, with
its state, until the next session is stored; ``ui.server.end_closed_sessions`` (run every 2 s by the
server) ends it at once.
"""

import asyncio
import gc
import threading
import weakref

import numpy as np
import pandas as pd
import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.runtime import Runtime, RuntimeConfig
from streamlit.runtime.caching.ttl_cache import TTLCache
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.runtime.memory_session_storage import MemorySessionStorage
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.script_data import ScriptData
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.runtime.uploaded_file_manager import UploadedFileRec
from streamlit.runtime.websocket_session_manager import WebsocketSessionManager
from streamlit.web.cache_storage_manager_config import create_default_cache_storage_manager

from tests.conftest import APP
from ui import server  # imported before any Runtime exists: no watcher thread of its own in these tests

pytestmark = pytest.mark.integration  # the page tier: run by scripts/test.sh and CI, not a plain pytest

TTL = 120.0  # server.disconnectedSessionTTL's default


def _run(coroutine) -> None:
    """``asyncio.run`` in a thread of its own: the browser tests' Playwright keeps an event loop running in
    the main thread for the rest of the session, where ``asyncio.run`` refuses to start another."""
    failure = []

    def target():
        try:
            asyncio.run(coroutine)
        except BaseException as err:  # re-raised in the test's thread
            failure.append(err)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]


class Browser:
    """A connected browser tab; what the server sends it is dropped."""

    def write_forward_msg(self, msg):
        pass


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def _storage(clock: Clock) -> MemorySessionStorage:
    storage = MemorySessionStorage(ttl_seconds=int(TTL))
    storage._cache = TTLCache(maxsize=128, ttl=TTL, timer=clock)  # the same store on the counter's clock
    return storage


def _manager(clock: Clock) -> tuple[WebsocketSessionManager, MemoryUploadedFileManager]:
    uploads = MemoryUploadedFileManager("/_stcore/upload_file")
    return WebsocketSessionManager(_storage(clock), uploads, ScriptCache(), None), uploads


def _closed_session():
    """A session that held an upload and a frame in its state, its browser closed just now: (the session
    manager, the upload store, the store's clock, the session's id, a weak reference to the frame, and the
    session's entry from when it was active, which Streamlit's message loop keeps after the close)."""
    clock = Clock()
    manager, uploads = _manager(clock)
    session_id = manager.connect_session(Browser(), ScriptData(APP), user_info={})
    session = manager.get_active_session_info(session_id).session
    data = b"a,b\n" + b"1,x\n" * 1000
    uploads.add_file(session_id, UploadedFileRec("f1", "t.csv", "text/csv", data))
    df = pd.DataFrame({"a": np.arange(1000), "b": ["x"] * 1000})
    session.session_state["dataset"] = df
    page = {"df": df}  # a page's globals, held by its widget's callback in the state: a reference cycle
    page["on_change"] = lambda: page["df"]
    session.session_state["on_change"] = page["on_change"]
    last_flushed = manager.get_active_session_info(session_id)  # the runtime's message loop keeps this
    manager.disconnect_session(session_id)
    return manager, uploads, clock, session_id, weakref.ref(df), last_flushed


def _end(manager) -> int:
    """What the server's watcher does every 2 s: from its own thread, with the event loop running."""
    return asyncio.to_thread(server.end_closed_sessions, manager, asyncio.get_running_loop())


def test_closed_session_freed_once_its_reconnect_time_passes():
    async def scenario():
        manager, uploads, clock, session_id, frame, last_flushed = _closed_session()  # the entry held throughout

        clock.now += TTL - 1  # within the reconnect time: kept whole, and a reconnect finds it
        assert await _end(manager) == 0
        gc.collect()
        assert frame() is not None
        assert manager.get_session_info(session_id) is not None
        assert len(uploads.get_files(session_id, ["f1"])) == 1

        clock.now += 2  # past it: shut down, its upload removed and its frame garbage
        gc.disable()  # the collection must be the watcher's (the server's full collections are rare)
        try:
            assert await _end(manager) == 1
        finally:
            gc.enable()
        assert frame() is None
        assert uploads.get_files(session_id, ["f1"]) == []
        assert manager.get_session_info(session_id) is None

    _run(scenario())


def test_streamlit_alone_keeps_an_expired_session_until_another_is_stored():
    """Why the watcher is needed: without it the expired session's frame lives on."""
    async def scenario():
        manager, uploads, clock, session_id, frame, _ = _closed_session()
        clock.now += TTL + 1
        gc.collect()
        assert frame() is not None
        assert len(uploads.get_files(session_id, ["f1"])) == 1  # and never removed by Streamlit

    _run(scenario())


def test_a_reconnected_session_is_not_ended():
    async def scenario():
        manager, uploads, clock, session_id, frame, _ = _closed_session()
        clock.now += TTL - 1
        assert manager.connect_session(Browser(), ScriptData(APP), {}, existing_session_id=session_id) == session_id
        clock.now += TTL + 1  # the session is connected again: its old reconnect time means nothing
        assert await _end(manager) == 0
        assert frame() is not None
        assert manager.is_active_session(session_id)

    _run(scenario())


def test_no_uploaded_table_outlives_its_session_in_the_process():
    """Once a session's state is gone, nothing process-wide (a module's globals, a shared cache) keeps its
    uploaded table, after every page that computes on it has run."""
    from streamlit.testing.v1 import AppTest

    csv = pd.DataFrame({"age": np.arange(300) % 70 + 18, "region": np.array(["n", "s", "e"])[np.arange(300) % 3]})
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.file_uploader(key="uploader").set_value(("t.csv", csv.to_csv(index=False).encode(), "text/csv")).run()
    for page in ("pages/synthesize.py", "pages/compare.py", "pages/risk.py"):
        at.switch_page(page).run()
        assert not at.exception, [e.value for e in at.exception]
    frame = weakref.ref(at.session_state["dataset"].df)
    assert frame().shape == (300, 2)
    del at
    gc.collect()
    assert frame() is None


def test_a_served_session_is_freed_once_its_reconnect_time_passes():
    """The app run by Streamlit's own runtime, as ``streamlit run`` serves it: its message loop, its
    script thread and the app's reference cycles. The session's dataset is garbage once the session ends."""
    async def scenario():
        clock = Clock()
        runtime = Runtime(RuntimeConfig(
            script_path=APP, media_file_storage=MemoryMediaFileStorage("/media"),
            uploaded_file_manager=MemoryUploadedFileManager("/_stcore/upload_file"),
            cache_storage_manager=create_default_cache_storage_manager(), session_storage=_storage(clock)))
        await runtime.start()
        try:
            session_id = runtime.connect_session(client=Browser(), user_info={})
            session = runtime.get_app_session(session_id)
            session.track_settling()
            rerun = BackMsg()
            rerun.rerun_script.query_string = ""
            runtime.handle_backmsg(session_id, rerun)  # the browser's first request: the Data page
            async with asyncio.timeout(300):  # a bound on the wait, not a timing assertion
                await session.wait_until_settled()
            dataset = weakref.ref(session.session_state["dataset"])
            assert dataset().name == "penguins"
            del session
            runtime.disconnect_session(session_id)
            clock.now += TTL + 1
            gc.disable()  # the collection must be the watcher's
            try:
                assert await _end(runtime._session_mgr) == 1
            finally:
                gc.enable()
            assert dataset() is None
        finally:
            runtime.stop()
            await runtime.stopped
            Runtime._instance = None  # the next test (AppTest) runs with no runtime, as before

    _run(scenario())


def test_the_watcher_collects_once_memory_has_grown_past_the_threshold(monkeypatch):
    """Growth is counted from the memory after the last collection, or from any lower reading since."""
    readings = iter([1000, 1000 + server.COLLECT_AFTER_GROWTH,  # start; grown by exactly the threshold: no
                     1000 + server.COLLECT_AFTER_GROWTH + 1,  # past it: collect,
                     1200,  # after which the memory is read again
                     900,  # a session ended: the base falls with it
                     900 + server.COLLECT_AFTER_GROWTH + 1,  # past the threshold from there: collect
                     950])
    monkeypatch.setattr(server, "resident_bytes", lambda: next(readings))
    calls = []
    monkeypatch.setattr(server.gc, "collect", lambda *a: calls.append("collect"))
    monkeypatch.setattr(server, "trim_heaps", lambda: calls.append("trim"))
    collect = server.GrowthCollector()
    assert collect() is False and calls == []
    assert collect() is True and calls == ["collect", "trim"] and collect.base == 1200
    assert collect() is False and collect.base == 900
    assert collect() is True and calls == ["collect", "trim"] * 2
    # A page run that started before the watcher's last collection counts from its own start.
    readings = iter([2000 + server.COLLECT_AFTER_GROWTH, 1500])
    assert collect(since=2000 - 1) is True and calls == ["collect", "trim"] * 3
