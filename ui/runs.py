"""The synthesis the pages show (the exploration at the current settings, or the release), and the
release itself: made once with a fresh seed, packaged with what the ledger store holds on the data.

Every synthesis here goes through ``core.synthesize``, which writes it to the ledger store before
returning it: a cached result is shown again without a new entry, a result computed again (dropped
from the session's small cache, then asked for again) is a new use of the data and a new entry."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd
import streamlit as st

import dpsynth_core as core
from ui import spending, state
from ui.cache import measures_in_session, session_cache
from ui.errors import GENERIC_ERROR, guard, log_unexpected


def synthesize(df: pd.DataFrame, schema: core.Schema, cfg: state.SynthConfig, seed: int | None, *,
               purpose: str) -> core.Synthesis:
    """The core's synthesis of ``df`` (the session's dataset, or the rows of it not held out) at the settings
    ``cfg``, with ``seed`` (None: fresh entropy); recorded in the ledger store with ``purpose``."""
    return core.synthesize(df, cfg.method, epsilon=cfg.epsilon, delta=cfg.delta, schema=schema, n=cfg.n, seed=seed,
                           columns=list(cfg.columns) if cfg.columns is not None else None,
                           implicates=cfg.implicates, holdout_share=cfg.holdout or None,
                           use=spending.use(purpose), store=spending.store(), **dict(cfg.params))


def _frames_bytes(result: core.Synthesis) -> int:
    """Memory of a synthesis's frames (every implicate), as pandas counts it without walking each string."""
    return int(sum(frame.memory_usage(index=False).sum() for frame in result.implicates))


# Four syntheses, and at most 128 MiB of them: two full-size syntheses of a 675,000-row upload (110 MiB each)
# took the server past 1 GB (bench/bench_memory.py). A synthesis dropped is drawn again on a revisit: the same
# one with a fixed seed, a new one (recorded in the ledger store, like any) with fresh randomness.
@session_cache("Synthesizing…", max_entries=4, max_bytes=128 * 2**20, size=_frames_bytes)
def _synthesis(fingerprint: str, _df: pd.DataFrame, schema_json: str, cfg: state.SynthConfig, seed: int | None,
               mask_key: str) -> core.Synthesis:
    return synthesize(_df, core.Schema.from_dict(json.loads(schema_json)), cfg, seed, purpose="exploration")


def current_synthesis() -> core.Synthesis:
    """The synthesis for the session's dataset and settings (cached; each computation is recorded by the core)."""
    ds, cfg = state.dataset(), state.config()
    train, _ = state.split(cfg.holdout)
    result = _synthesis(ds.fingerprint, train, json.dumps(ds.schema.to_dict(), default=str), cfg, state.run_seed(),
                        state.mask_key())
    spending.show_spending()  # a new computation is a new entry: the sidebar follows
    return result


def synthesis_or_stop() -> core.Synthesis:
    """The synthesis the pages show: in release mode the release, else the current exploration.

    If the core refuses it, its sentence and an end to the page.
    """
    if st.session_state.get("mode") == "release":
        release = state.current_release()
        if release is None:
            st.info("Release mode: run the release on the Synthesize page first; nothing else is computed "
                    "on the confidential data until then.")
            st.stop()
        return release.synthesis
    result = guard(current_synthesis)
    if result is None:
        st.stop()
    return result


@dataclass(frozen=True)
class Release:
    """The final synthesis of a dataset, made once in release mode."""

    fingerprint: str
    synthesis: core.Synthesis
    statement: str
    tone: str  # how the statement is shown (core.report.release_tone)
    stem: str
    package: bytes  # the public release: synthetic CSV(s), public ledger, public report
    internal: Callable[[], bytes]  # the confidential internal report, made when downloaded
    settings: str  # the dataset, schema and settings it was made at (state.release_settings())
    content: str  # hash of the released data, hashed once here rather than on every cache lookup

    @property
    def zip_name(self) -> str:
        return f"{self.stem}.zip"

    @property
    def internal_name(self) -> str:
        return f"{self.stem.removesuffix('-release')}-internal-report-CONFIDENTIAL.html"


def run_release() -> None:
    """Synthesize once with a fresh seed (recorded by the core), and build the public package with what the store
    holds on the data, this release included; the internal report waits.

    A refusal leaves its sentence in ``release_error`` and no release.
    """
    ds, cfg = state.dataset(), state.config()
    st.session_state.pop("release_error", None)
    train, held = state.split(cfg.holdout)  # the settings' split, not the last release's
    try:
        with measures_in_session():
            result = synthesize(train, ds.schema, cfg, seed=None, purpose="release")
        totals = spending.store().totals(ds.fingerprint, ds.name)  # this release included
    except (core.DataError, core.MethodRefused, core.LedgerError) as err:
        st.session_state["release_error"] = str(err)
        return
    except Exception as err:  # noqa: BLE001 - a library's message is not the app's sentence (and may quote data)
        log_unexpected(err)
        st.session_state["release_error"] = GENERIC_ERROR
        return
    stem = core.release.file_stem(ds.name, result.ledger) + "-release"
    package = core.report.release_package(dataset_name=ds.name, synthesis=result, stem=stem, totals=totals)

    def internal(name=ds.name, fp=ds.fingerprint, real=train, holdout=held, seed=cfg.seed) -> bytes:
        return core.report.internal_report(dataset_name=name, fingerprint=fp, real=real, synthesis=result,
                                           totals=totals, holdout=holdout, seed=seed)

    statement = core.report.release_statement(result.ledger, totals)
    tone = core.report.release_tone(result.ledger, totals)
    st.session_state["release"] = Release(ds.fingerprint, result, statement, tone, stem, package, internal,
                                          state.release_settings(), core.fingerprint(result.data))
