"""The privacy audit's section, drawn on Learn (for a class: the method's own design) and beside the release
(for a steward: a look-alike of the dataset's declared schema): a run button with a progress bar and Cancel,
then the claimed ε beside the lower bound, the broken variant's bound, the verdict, the table and the figure.

The audit builds its tables from a schema (dpsynth_core.privacy.audit), never from the session's rows: it
spends nothing and is not in the session's spending log. Its result is kept in the session under the
section's key and shown again while the request (method, options, claim, runs, schema) is the same.
"""

from __future__ import annotations

import json

import streamlit as st

import dpsynth_core as core
from ui.errors import show_error, show_unexpected
from ui.text import plain

A = core.privacy.audit


def runs_choices(method: str, which: int = 0) -> list[int]:
    """Runs a user may choose for ``method``'s audit: around the design's short run, up to its full one."""
    design = A.declared_audits(method)[which]
    return sorted({max(A.MIN_RUNS, design.quick_runs // 2), design.quick_runs, 2 * design.quick_runs, design.runs,
                   2 * design.runs})


def audit_section(key: str, method: str, *, runs: int, schema: core.Schema | None = None, options: dict | None = None,
                  epsilon: float | None = None, delta: float | None = None) -> None:
    """Run (on click) and show the audit of ``method`` at the claim ``epsilon`` (``delta``) with ``runs`` runs
    on each table; ``schema`` None: the method's own design, else a look-alike of it."""
    ss = st.session_state
    request = json.dumps([method, schema.to_dict() if schema is not None else None, options or {}, epsilon, delta,
                          runs], sort_keys=True, default=str)
    results = ss.setdefault("audit_results", {})
    run, cancel = st.columns([1, 5])
    cancel_slot = cancel.empty()  # Cancel is drawn only while an audit runs
    if run.button("Run the audit", type="primary", key=f"{key}_run"):
        cancel_slot.button("Cancel", key=f"{key}_cancel")  # any click reruns the page, which stops the audit
        bar = st.progress(0.0, text="Starting the workers…")
        try:
            result = A.run_audit(method, schema=schema, epsilon=epsilon, delta=delta, runs=runs, options=options,
                                 progress=lambda f, msg: bar.progress(f, text=msg))
        except (ValueError, core.DataError, core.MethodRefused) as err:
            result = str(err)
        except Exception as err:  # noqa: BLE001 - one sentence, never a traceback
            result = err
        bar.empty()
        cancel_slot.empty()  # nothing runs any more
        if isinstance(result, str):
            show_error(result)
            return
        if isinstance(result, Exception):
            show_unexpected(result)
            return
        results[key] = (request, result)
    elif ss.get(f"{key}_cancel"):
        st.warning("Audit cancelled; nothing of it was kept.")
    shown = results.get(key)
    if shown is None or shown[0] != request:
        st.info("Run the audit to see the claimed ε beside what the runs show.")
        return
    show_result(shown[1], key)


def show_result(result, key: str) -> None:
    """The claim beside the bounds, the verdict, the table and the figure of one audit."""
    m = st.columns(3)
    claim = f"{result.claim:g}" + (f" (δ = {result.delta:g})" if result.delta else "")
    m[0].metric(f"Claimed ε (per {result.per})", claim)
    m[1].metric("Lower bound on ε, 95 %", A.bound_text(result.honest.bound),
                help="Below the claim: the runs show no more privacy loss than claimed.")
    m[2].metric("Broken variant's bound", A.bound_text(result.broken.bound),
                help=f"The same audit of {result.broken_text}: above the claim shows the audit would catch it.")
    (st.success if result.holds and result.has_power else st.warning)(plain(result.verdict()))
    st.dataframe(A.audit_table(result), hide_index=True)
    st.plotly_chart(core.plots.audit_figure(result), key=f"{key}_figure")
    st.caption(plain(f"{result.runs:,} runs on each of D ({result.rows:,} rows) and D′ (one more, the planted "
                     f"record), for each variant; the event is chosen on the first third of the runs and the bound "
                     f"computed on the rest. {result.cpu_seconds:,.0f} CPU seconds in {result.wall_seconds:,.0f} s."))


def release_audit(synthesis: core.Synthesis, schema: core.Schema, params: dict) -> None:
    """Beside the release: its method audited at the release's claim (ε per record for a per-record method) on a
    look-alike of the declared schema, with the release's options."""
    method, ledger = synthesis.method, synthesis.ledger
    synth = core.SYNTHESIZERS[method]
    if not synth.is_dp or not A.declared_audits(method):
        st.caption(plain(f"{synth.label} is not differentially private: it has no ε to audit."))
        return
    st.markdown("Evidence for the ε this release states: the method runs many times, with the release's options, "
                "on a public look-alike built from the declared schema (never the confidential rows) and on the "
                "same table plus one planted record. The 95 % lower bound on ε should stay below the claim, and "
                "a broken variant with a tenth of the noise should go above it. It spends no privacy budget.")
    choices = runs_choices(method)
    runs = st.select_slider("Runs on each table", choices, value=A.declared_audits(method)[0].quick_runs,
                            key=f"release_audit_runs_{method}")
    claim = ledger.get("epsilon_per_record") or ledger.get("epsilon_total")
    audit_section("release_audit", method, runs=runs, schema=schema, options=params, epsilon=claim,
                  delta=ledger.get("delta") or None)
