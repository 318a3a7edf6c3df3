"""The synthesis the pages show (the exploration at the current settings, or the release), and the
release itself: made once with a fresh seed, logged, packaged."""

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


def synthesize(df: pd.DataFrame, schema: core.Schema, cfg: state.SynthConfig, seed: int | None) -> core.Synthesis:
    """The core's synthesis of ``df`` at the settings ``cfg``, with ``seed`` (None: fresh entropy)."""
    return core.synthesize(df, cfg.method, epsilon=cfg.epsilon, delta=cfg.delta, schema=schema, n=cfg.n, seed=seed,
                           columns=list(cfg.columns) if cfg.columns is not None else None,
                           implicates=cfg.implicates, holdout_share=cfg.holdout or None, **dict(cfg.params))


@session_cache("Synthesizing…", max_entries=4)
def _synthesis(fingerprint: str, _df: pd.DataFrame, schema_json: str, cfg: state.SynthConfig, seed: int | None,
               mask_key: str) -> core.Synthesis:
    return synthesize(_df, core.Schema.from_dict(json.loads(schema_json)), cfg, seed)


def current_synthesis() -> core.Synthesis:
    """The synthesis for the session's dataset and settings (cached), logged once per setting."""
    ds, cfg = state.dataset(), state.config()
    train, _ = state.split(cfg.holdout)
    result = _synthesis(ds.fingerprint, train, json.dumps(ds.schema.to_dict(), default=str), cfg, state.run_seed(),
                        state.mask_key())
    spending.log_run(result.ledger, purpose="exploration", key=state.synth_key())
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
    """Synthesize once with a fresh seed, log it, and build the public package; the internal report waits.

    A refusal leaves its sentence in ``release_error`` and no release.
    """
    ds, cfg = state.dataset(), state.config()
    st.session_state.pop("release_error", None)
    train, held = state.split(cfg.holdout)  # the settings' split, not the last release's
    try:
        with measures_in_session():
            result = synthesize(train, ds.schema, cfg, seed=None)
    except (core.DataError, core.MethodRefused) as err:
        st.session_state["release_error"] = str(err)
        return
    except Exception as err:  # noqa: BLE001 - a library's message is not the app's sentence (and may quote data)
        log_unexpected(err)
        st.session_state["release_error"] = GENERIC_ERROR
        return
    spending.log_run(result.ledger, purpose="release")
    log = spending.session_log()
    stem = core.release.file_stem(ds.name, result.ledger) + "-release"
    package = core.report.release_package(dataset_name=ds.name, fingerprint=ds.fingerprint, synthesis=result,
                                          stem=stem, log=log)

    def internal(name=ds.name, fp=ds.fingerprint, real=train, holdout=held, seed=cfg.seed) -> bytes:
        return core.report.internal_report(dataset_name=name, fingerprint=fp, real=real, synthesis=result,
                                           log=log, holdout=holdout, seed=seed)

    statement = core.report.release_statement(result.ledger, log, ds.fingerprint)
    st.session_state["release"] = Release(ds.fingerprint, result, statement, stem, package, internal,
                                          state.release_settings(), core.fingerprint(result.data))
