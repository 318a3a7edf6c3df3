"""Session state and cached core calls shared by the pages.

Everything here is glue: numbers come from ``dpsynth_core``. Cached calls
(``session_cache``) keep their results in the session's own state, so they
are never shared between sessions and die with the session (a process-wide
st.cache_data kept each closed session's uploads, syntheses and measures).
They are keyed by the dataset's full content hash (``fingerprint``) and the
settings; the DataFrame itself is passed as an unkeyed ``_df`` argument.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import functools
import inspect
import runpy
import threading
import traceback
import weakref
from collections import OrderedDict
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import streamlit as st
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

    A session's frames die with it (``session_cache``), but the server's resident memory did not fall:
    Arrow's default pool (mimalloc, which holds pandas' text columns) keeps freed memory for reuse, and
    glibc's malloc raises its mmap threshold after large frees, so later large arrays come from heaps it
    never shrinks. Arrow is pointed at the system allocator and glibc's threshold is fixed at 4 MiB, so
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


class _SessionEnd:
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


@dataclass(frozen=True)
class Dataset:
    """The table the session works on."""

    name: str
    df: pd.DataFrame
    schema: core.Schema
    fingerprint: str
    source: str  # "bundled" or "upload"


@dataclass(frozen=True)
class SynthConfig:
    method: str = "independent"
    epsilon: float = core.constraints.EPSILON_DEFAULT
    delta: float = 0.0
    seed: int = 2026
    #: exploration with ``seed`` (reproducible, not DP); False: fresh randomness, never stored
    fixed_seed: bool = True
    n: int | None = None
    columns: tuple[str, ...] | None = None  # None: all modelled columns
    holdout: float = 0.0  # share of rows kept away from the synthesizer, for holdout-based risk
    implicates: int = 1
    params: tuple = ()  # method options changed from their defaults, as sorted (name, value) pairs


def _session_store(name: str) -> OrderedDict:
    """A cache that lives in the session's state: gone when the session ends."""
    return st.session_state.setdefault("_cache", {}).setdefault(name, OrderedDict())


def session_cache(spinner: str | None = None, max_entries: int = 8):
    """Cache a function's results in the session's state, like st.cache_data without sharing.

    Arguments whose names start with "_" are not part of the key (the data, passed beside its hash).
    A session's entries are released with the session; the core's measurements made inside are kept
    in the session too (``dpsynth_core.synth.base.measure_cache``).
    """
    def wrap(fn):
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def cached(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            key = repr([(k, v) for k, v in bound.arguments.items() if not k.startswith("_")])
            store = _session_store(fn.__qualname__)
            if key in store:
                store.move_to_end(key)
                return store[key]
            with st.spinner(spinner) if spinner else nullcontext(), measures_in_session():
                value = fn(*args, **kwargs)
            store[key] = value
            while len(store) > max_entries:
                store.popitem(last=False)
            return value

        return cached

    return wrap


def measures_in_session():
    """The core's measurement cache for the calls made inside: the session's own."""
    return core.synth.base.measure_cache(_session_store("measure"))


@st.cache_data(show_spinner=False, max_entries=4)  # public bundled data only: shared across sessions
def bundled(name: str):
    return core.load_bundled(name)


def init_session() -> None:
    """Open on the penguins with nothing uploaded, or on what a shared link asks for."""
    ss = st.session_state
    ss.setdefault("_session_end", _SessionEnd())
    if "dataset" not in ss:
        set_bundled("penguins")
        _read_link()
    ss.setdefault("synth_config", SynthConfig())
    ss.setdefault("session_log", [])
    ss.setdefault("mode", "teaching")


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
    runpy.run_path(str(Path(__file__).with_name("app.py")), run_name="__main__")
    st.stop()


_APP_RUN = threading.local()  # each session's script runs in its own thread


def run_page(page) -> None:
    """Run the chosen page; an error it did not catch becomes one sentence, never a traceback.

    The core's refusals show their own sentence, anything else the generic one (the library's message
    could quote the data, so it is neither shown nor logged). The session's state is left as it was.
    """
    _APP_RUN.active = True
    try:
        page.run()
    except (core.DataError, core.MethodRefused) as err:
        show_error(str(err))
    except Exception as err:  # noqa: BLE001 - the last net
        show_unexpected(err)
    finally:
        _APP_RUN.active = False


def start_value(key: str, fallback):
    """The value the widget under ``key`` starts from; pass it as the widget's default as well.

    A widget owns its key only while it is drawn: coming back to a page, the key is restored from
    ``fallback`` (the settings). The same value goes in as the widget's default because a browser that
    draws a widget only after a later rerun (seen with 30 pages loading at once) starts it from its
    default and sends that back as if the user had chosen it.
    """
    return st.session_state.setdefault(key, fallback)


def _read_link() -> None:
    """Apply settings from the URL's query parameters once, at the session's start."""
    params = {k: st.query_params[k] for k in st.query_params}
    if not params:
        return
    settings, notes = core.share.parse_config_params(params)
    token = params.get("data", "")
    if token.startswith("bundled:") and token[8:] in core.BUNDLED:
        set_bundled(token[8:])
        apply_config(settings)
    elif token.startswith("upload:"):
        # The data never travels in a link: wait for the user to upload the same file (to this server).
        st.session_state["pending_link"] = (token, settings)
        notes.append("this link is for an uploaded file: upload the same file on the Data page to restore it")
    st.session_state["link_notes"] = notes


def apply_config(settings: dict) -> None:
    """Settings from a link, keeping only columns the current schema models."""
    cols = settings.get("columns")
    if cols is not None:
        cols = tuple(c for c in cols if c in dataset().schema.used) or None
    set_config(**{**settings, "columns": cols} if "columns" in settings else settings)


def write_link() -> None:
    """Keep the URL's query parameters equal to the current settings (never the data)."""
    ds, cfg = dataset(), config()
    token = core.share.dataset_token(ds.source, ds.name, ds.fingerprint)
    params = core.share.config_params(cfg.__dict__, dataset=token)
    if not seeded():
        params.pop("seed", None)  # a run drawn from fresh randomness has no seed to name
    if {k: st.query_params[k] for k in st.query_params} != params:
        st.query_params.from_dict(params)


def _kept_schema(fingerprint: str, fallback: core.Schema | None) -> core.Schema | None:
    """The schema the user left on this content earlier in the session, else ``fallback``."""
    return st.session_state.setdefault("kept_schemas", {}).get(fingerprint, fallback)


def set_bundled(name: str) -> None:
    df, schema = bundled(name)
    fp = core.fingerprint(df)
    st.session_state["dataset"] = Dataset(name, df, _kept_schema(fp, schema), fp, "bundled")
    st.session_state["synth_config"] = SynthConfig()
    st.session_state.pop("ru_result", None)


def set_uploaded(name: str, df: pd.DataFrame) -> None:
    """Work on an uploaded table; the same content uploaded again keeps the schema declared on it."""
    fp = core.fingerprint(df)
    schema = _kept_schema(fp, None)
    st.session_state["dataset"] = Dataset(name, df, core.infer_schema(df) if schema is None else schema, fp,
                                          "upload")
    st.session_state["synth_config"] = SynthConfig()
    st.session_state.pop("ru_result", None)
    pending = st.session_state.get("pending_link")
    if pending and core.share.dataset_token("upload", name, dataset().fingerprint) == pending[0]:
        apply_config(pending[1])
        st.session_state.pop("pending_link")


def dataset() -> Dataset:
    return st.session_state["dataset"]


def set_schema(schema: core.Schema) -> None:
    """The user's schema for this dataset, kept (by content) for the rest of the session."""
    ds = dataset()
    st.session_state["dataset"] = Dataset(ds.name, ds.df, schema, ds.fingerprint, ds.source)
    st.session_state.setdefault("kept_schemas", {})[ds.fingerprint] = schema
    st.session_state["schema_version"] = st.session_state.get("schema_version", 0) + 1
    cfg = config()
    if cfg.columns is not None:
        kept = tuple(c for c in cfg.columns if c in schema.used)
        set_config(columns=kept or None)


def config() -> SynthConfig:
    return st.session_state["synth_config"]


def set_config(**changes) -> None:
    cfg = config()
    st.session_state["synth_config"] = SynthConfig(**{**cfg.__dict__, **changes})


def seeded() -> bool:
    """Whether syntheses run with the settings' seed: exploration with a fixed seed, never in release mode."""
    return st.session_state.get("mode") != "release" and config().fixed_seed


def run_seed() -> int | None:
    """The seed a synthesis at the current settings runs with; None: fresh entropy, never stored."""
    return config().seed if seeded() else None


def holdout_mask(share: float | None = None) -> "np.ndarray | None":
    """Which rows are held out, drawn once per dataset and share with fresh randomness (one coin
    per record) and kept in the session, so every page sees the same split. The mask itself is
    kept, never a seed: nothing derived from the data chooses it."""
    share = config().holdout if share is None else share
    if share <= 0:
        return None
    masks = st.session_state.setdefault("holdout_masks", {})
    key = (dataset().fingerprint, share)
    if key not in masks:
        masks[key] = core.rumap.holdout_mask(len(dataset().df), share)
    return masks[key]


def mask_key(share: float | None = None) -> str:
    """A cache key for the session's split (its digest; the mask never leaves the server)."""
    mask = holdout_mask(share)
    return "none" if mask is None else hashlib.sha256(mask.tobytes()).hexdigest()


def split() -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """(rows the synthesizer sees, held-out rows or None)."""
    return core.rumap.split_holdout(dataset().df, config().holdout, mask=holdout_mask())


@session_cache("Synthesizing…", max_entries=4)
def _synthesis(fingerprint: str, _df: pd.DataFrame, schema_json: str, method: str, epsilon: float,
               delta: float, seed: int | None, n: int | None, columns: tuple | None, holdout: float,
               mask_key: str, implicates: int, params: tuple) -> core.Synthesis:
    schema = core.Schema.from_dict(json.loads(schema_json))
    return core.synthesize(_df, method, epsilon=epsilon, delta=delta, schema=schema, n=n, seed=seed,
                           columns=list(columns) if columns is not None else None, implicates=implicates,
                           holdout_share=holdout or None, **dict(params))


def current_synthesis() -> core.Synthesis:
    """The synthesis for the session's dataset and settings (cached), logged once per setting."""
    ds, cfg = dataset(), config()
    train, _ = split()
    result = _synthesis(ds.fingerprint, train, json.dumps(ds.schema.to_dict(), default=str), cfg.method,
                        cfg.epsilon, cfg.delta, run_seed(), cfg.n, cfg.columns, cfg.holdout, mask_key(),
                        cfg.implicates, cfg.params)
    log_run(result.ledger, purpose="exploration", key=synth_key())
    return result


def log_run(ledger: dict, *, purpose: str, key: str | None = None) -> None:
    """Add one synthesis on the current dataset to the session ledger (once per key)."""
    ss = st.session_state
    seen = ss.setdefault("session_log_keys", set())
    if key is not None and key in seen:
        return
    if key is not None:
        seen.add(key)
    ss.setdefault("session_log", []).append({
        "fingerprint": dataset().fingerprint, "dataset": dataset().name, "purpose": purpose,
        "method": ledger["method"], "epsilon_total": ledger["epsilon_total"], "is_dp": ledger["is_dp"],
        "seed": ledger.get("seed"), "rows": ledger["n_rows"],
    })
    show_spending()


def show_settings() -> None:
    """Write the method, ε and seed into the sidebar's slot (drawn by app.py)."""
    slot = st.session_state.get("settings_slot")
    if slot is not None:
        cfg = config()
        seed = f"seed {cfg.seed} (not DP)" if seeded() else "fresh randomness"
        slot.text(f"{core.SYNTHESIZERS[cfg.method].label}\nε = {cfg.epsilon:g} · {seed}")


def show_spending() -> None:
    """Write the session's spending on this dataset into the sidebar's slot (drawn by app.py)."""
    slot = st.session_state.get("spending_slot")
    if slot is not None:
        runs, spent = core.report.session_total(st.session_state.get("session_log", []), dataset().fingerprint)
        slot.text(f"{runs} DP synthesis(es), ε = {spent:g} in all")


def session_log_table() -> pd.DataFrame:
    """The session's syntheses on the current dataset."""
    fp = dataset().fingerprint
    rows = [e for e in st.session_state.get("session_log", []) if e["fingerprint"] == fp]
    return pd.DataFrame(rows, columns=["purpose", "method", "epsilon_total", "is_dp", "seed", "rows"])


def synthesis_or_stop() -> core.Synthesis:
    """The synthesis the pages show: in release mode the release, else the current exploration.

    If the core refuses it, its sentence and an end to the page.
    """
    if st.session_state.get("mode") == "release":
        release = current_release()
        if release is None:
            st.info("Release mode: run the release on the Synthesize page first; nothing else is computed "
                    "on the confidential data until then.")
            st.stop()
        return release.synthesis
    result = guard(current_synthesis)
    if result is None:
        st.stop()
    return result


def show_statement(ledger: dict, statement: str | None = None) -> None:
    """The plain-words privacy statement, its tone graded by the core: green only for a DP run
    with a small total ε, a warning when not DP or ε is large."""
    text = plain(statement or ledger["statement"])
    tone = core.statement_tone(ledger)
    if tone == "success":
        st.success(text)
    elif tone == "info":
        st.info(text)
    else:
        st.warning(text, icon="⚠️")


def show_ledger(ledger: dict, *, statement: str | None = None) -> None:
    """The privacy ledger in words, figures and a table of its steps."""
    st.subheader("Privacy ledger")
    show_statement(ledger, statement)
    if ledger["epsilon_total"] is not None:
        a, b, c = st.columns(3)
        a.metric("ε total", f"{ledger['epsilon_total']:g}",
                 help=None if ledger["epsilon_per_record"] is None else
                 f"ε = {ledger['epsilon_per_record']:.4g} per {ledger.get('record_unit') or 'synthetic record'} "
                 f"for {ledger['n_rows']:,} records (sequential composition), plus the row count if it was "
                 "not declared.")
        b.metric("e^ε (probability-ratio bound)", f"{ledger['exp_epsilon']:,.2f}" if ledger["exp_epsilon"] else "∞")
        c.metric("δ", f"{ledger['delta']:g}")
    if ledger["steps"]:
        st.dataframe(core.ledger_steps_table(ledger), hide_index=True, placeholder="")  # no "None" cells
    st.caption(
        f"Neighbouring datasets: {ledger['neighbouring']}. Row count: {ledger['public']['row_count']['value']:,} "
        f"({ledger['public']['row_count']['source']})."
    )


@dataclass(frozen=True)
class Release:
    """The final synthesis of a dataset, made once in release mode."""

    fingerprint: str
    synthesis: core.Synthesis
    statement: str
    stem: str
    package: bytes  # the public release: synthetic CSV(s), public ledger, public report
    internal: Callable[[], bytes]  # the confidential internal report, made when downloaded
    settings: str  # the dataset, schema and settings it was made at (release_settings())
    content: str  # hash of the released data, hashed once here rather than on every cache lookup

    @property
    def zip_name(self) -> str:
        return f"{self.stem}.zip"

    @property
    def internal_name(self) -> str:
        return f"{self.stem.removesuffix('-release')}-internal-report-CONFIDENTIAL.html"


def release_settings() -> str:
    """What a release depends on: the dataset, its schema and the settings (never the data itself)."""
    ds = dataset()
    return json.dumps([ds.fingerprint, ds.schema.to_dict(), config().__dict__], sort_keys=True, default=str)


def run_release() -> None:
    """Synthesize once with a fresh seed, log it, and build the public package; the internal report waits.

    A refusal leaves its sentence in ``release_error`` and no release.
    """
    ds, cfg = dataset(), config()
    st.session_state.pop("release_error", None)
    train, held = split()
    try:
        with measures_in_session():
            result = core.synthesize(train, cfg.method, epsilon=cfg.epsilon, delta=cfg.delta, schema=ds.schema,
                                     n=cfg.n, seed=None,
                                     columns=list(cfg.columns) if cfg.columns is not None else None,
                                     implicates=cfg.implicates, holdout_share=cfg.holdout or None,
                                     **dict(cfg.params))
    except (core.DataError, core.MethodRefused) as err:
        st.session_state["release_error"] = str(err)
        return
    except Exception as err:  # noqa: BLE001 - a library's message is not the app's sentence (and may quote data)
        log_unexpected(err)
        st.session_state["release_error"] = GENERIC_ERROR
        return
    log_run(result.ledger, purpose="release")
    log = list(st.session_state["session_log"])
    stem = core.release.file_stem(ds.name, result.ledger) + "-release"
    package = core.report.release_package(dataset_name=ds.name, fingerprint=ds.fingerprint, synthesis=result,
                                          stem=stem, log=log)

    def internal(name=ds.name, fp=ds.fingerprint, real=train, holdout=held, seed=cfg.seed) -> bytes:
        return core.report.internal_report(dataset_name=name, fingerprint=fp, real=real, synthesis=result,
                                           log=log, holdout=holdout, seed=seed)

    statement = core.report.release_statement(result.ledger, log, ds.fingerprint)
    st.session_state["release"] = Release(ds.fingerprint, result, statement, stem, package, internal,
                                          release_settings(), core.fingerprint(result.data))


def current_release() -> Release | None:
    rel = st.session_state.get("release")
    return rel if rel is not None and rel.fingerprint == dataset().fingerprint else None


def synth_key() -> str:
    """Cache key of the synthesis the pages show: the dataset, its schema and the settings.

    In release mode the pages show the release, made with a fresh seed under
    the same settings, so its content hash joins the key.
    """
    ds = dataset()
    release = current_release() if st.session_state.get("mode") == "release" else None
    marker = release.content if release is not None else "exploration"
    return json.dumps([ds.fingerprint, ds.schema.to_dict(), config().__dict__, marker], sort_keys=True, default=str)


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$&=])")
# Streamlit turns :name: into an emoji and :material/name: into an icon before any Markdown escape is
# read, so a backslash cannot stop them; a word joiner (U+2060, invisible) after the colon does.
_SHORTCODE = re.compile(r":(?=[\w+-])")
WORD_JOINER = "\u2060"


def plain(text: object) -> str:
    """User text made inert for Streamlit's markdown: no links, images, HTML, formatting, headings
    (``x`` over ``===``), emoji or icon shortcodes (``:material/home:``)."""
    return _SHORTCODE.sub(":" + WORD_JOINER, _MD_SPECIAL.sub(r"\\\1", str(text)))


def displayable(df: pd.DataFrame) -> pd.DataFrame:
    """A frame the browser's table can show: values Arrow has no type for (integers of 2⁶⁴ and up in a
    text column, mixed objects) are shown as their text; missing values stay missing."""
    out = df.copy()
    for col in out.columns[out.dtypes == object]:
        out[col] = out[col].map(lambda v: v if v is None or isinstance(v, str) or v != v else str(v))
    return out


def show_error(message: str) -> None:
    """One sentence for the user, with any user text in it made inert."""
    st.error(plain(message), icon="⚠️")


GENERIC_ERROR = ("This could not be computed for this dataset and these settings; try other settings or "
                 "columns, or another file. Nothing else in the session has changed.")
_LOG = logging.getLogger("dpsynth")


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

    The core's own refusals (DataError, MethodRefused) are written for the user and shown as they are;
    anything else gets the generic sentence. Streamlit's st.stop and st.rerun are not exceptions of
    this kind and pass through.
    """
    try:
        return fn(*args, **kwargs)
    except (core.DataError, core.MethodRefused) as err:
        show_error(str(err))
    except Exception as err:  # noqa: BLE001 - the page must never show a traceback
        show_unexpected(err)
    return None


def download(label: str, data: bytes | Callable[[], bytes], *, file_name: str, mime: str, key: str,
             where=st) -> None:
    """A download button whose file is made and sent only when it is clicked.

    Handed bytes, Streamlit files them on every rerun and the browser fetches the whole file each time
    just to check its link: the synthetic CSV on every move of the ε slider (megabytes for a large
    table), the R-U map's HTML with plotly.js inside on every rerun of that page. Handed a callable,
    nothing is made or sent until the click, and the click does not rerun the page.
    """
    where.download_button(label, data if callable(data) else (lambda: data), file_name=file_name, mime=mime,
                          key=key, on_click="ignore")




def ru_sweep(key: str, df, schema, methods: tuple, epsilons: tuple, reps: int, seed: int, *, progress=None,
             metrics: tuple | None = None, holdout: float = 0.0, scheduler: str = "") -> pd.DataFrame:
    """The R-U sweep; revisiting the same settings costs nothing.

    Its points run on this machine's cores, or on the Dask cluster at
    ``scheduler``; the table is the same either way, so the cache ignores it.

    Cached by hand rather than with session_cache, whose spinner would sit beside the progress bar.
    Keyed by content like every cache here (``key`` holds the data's hash).
    """
    # The session's split of its own dataset (a public look-alike gets a fresh one), so a chosen
    # point rebuilds on the same rows.
    mask = holdout_mask(holdout) if df is dataset().df else None
    full = json.dumps([key, methods, epsilons, reps, seed, metrics, holdout,
                       mask_key(holdout) if mask is not None else "fresh"], default=str)
    sweeps = _session_store("ru_sweep")  # the session's own: released when it ends
    if full in sweeps:
        sweeps.move_to_end(full)
        return sweeps[full]
    with measures_in_session(), core.cluster.on_scheduler(scheduler):
        table = core.ru_map(df, list(methods), list(epsilons), reps=reps, seed=seed, schema=schema,
                            progress=progress, metrics=list(metrics) if metrics else None, holdout=holdout,
                            holdout_mask=mask)
    sweeps[full] = table
    while len(sweeps) > 4:
        sweeps.popitem(last=False)
    return table


def log_sweep(table: pd.DataFrame) -> None:
    """Every synthesis of an R-U sweep is a use of the data: log each point once."""
    base = synth_key()
    for row in table[table["method"] != "original"].itertuples():
        eps = None if row.epsilon != row.epsilon else float(row.epsilon)
        key = json.dumps([base, "sweep", row.method, eps, int(row.seed)])
        is_dp_method = core.SYNTHESIZERS[row.method].is_dp
        # ε is the point's total for every method; a sweep point is seeded exploration, so not DP as run.
        log_run({"method": row.method, "epsilon_total": eps if is_dp_method else None, "is_dp": False,
                 "seed": int(row.seed), "n_rows": None}, purpose="R-U sweep", key=key)


# -- Risk page: each call returns the measure with its references (dpsynth_core.risk) --

@session_cache("Measuring distances to the closest records…", max_entries=8)
def distance_risk(key: str, _train, _synth, _holdout, _schema, seed: int):
    return core.risk.distance_risk(_train, _synth, holdout=_holdout, schema=_schema, seed=seed,
                                   max_rows=core.constraints.RISK_DISTANCE_MAX_ROWS)


@session_cache("Matching records…", max_entries=8)
def match_risk(key: str, _real, _released, keys: tuple, tolerance, _schema):
    return core.risk.match_risk(_real, _released, list(keys), tolerance=tolerance, schema=_schema)


@session_cache("Matching on key variables…", max_entries=8)
def key_match_risk(key: str, _real, _synth, _holdout, keys: tuple, sensitive: str, tolerance, sensitive_tolerance,
                   _schema, seed: int):
    """Key-match attribute disclosure, reproduced uniques and sample uniqueness, together."""
    kw = dict(tolerance=tolerance, sensitive_tolerance=sensitive_tolerance, schema=_schema, holdout=_holdout)
    return (core.risk.key_match_disclosure(_real, _synth, list(keys), sensitive, **kw),
            core.risk.unique_reproduction(_real, _synth, list(keys), sensitive, **kw),
            core.risk.sample_uniqueness(_real, _synth, list(keys), schema=_schema, seed=seed))


@session_cache("Fitting the intruder's model…", max_entries=8)
def attribute_inference(key: str, _real, _synth, _holdout, keys: tuple, sensitive: str, _schema, seed: int):
    return core.risk.attribute_inference(_real, _synth, list(keys), sensitive, schema=_schema, holdout=_holdout,
                                         seed=seed)


# -- Compare page: utility measures (dpsynth_core.utility) --

@session_cache("Fitting the discriminator…", max_entries=8)
def discriminator(key: str, _real, _synth, choice: str, holdout: float, permutations: int, seed: int,
                  categorical: tuple):
    return core.utility.run_discriminator(_real, _synth, choice, seed=seed, holdout=holdout,
                                          permutations=permutations, categorical=list(categorical))


@session_cache("Comparing columns and pairs…", max_entries=8)
def utility_summary(key: str, _real, _synth, categorical: tuple):
    return core.utility.utility_summary(_real, _synth, categorical=list(categorical))


@session_cache("Fitting the regression…", max_entries=8)
def regression(key: str, _real, _synths: tuple, outcome: str, predictors: tuple, family: str,
               partially_synthetic: bool, categorical: tuple):
    return core.regression_ci_overlap(_real, list(_synths), outcome, list(predictors), family=family,
                                      partially_synthetic=partially_synthetic, categorical=list(categorical))


def public_lookalike(upload) -> pd.DataFrame | None:
    """A public file with the dataset's columns, for tuning without touching the confidential data."""
    if upload is None:
        st.info("Upload a public file with the same columns (for example an earlier public release).")
        return None
    try:
        df = core.load_csv(upload)
        dataset().schema.check_frame(df)
    except core.DataError as err:
        show_error(str(err))
        return None
    return df[[c for c in dataset().df.columns if c in df.columns]]


# -- Synthesize page: the headline readout (dpsynth_core.readout) --

@st.cache_data(show_spinner=False, max_entries=64)
def headline(key: str, _real, _synth, _schema, seed: int):
    return core.readout.headline(_real, _synth, _schema, seed)
