"""Common audit tests over the registry: every DP synthesizer's declared audits (``audits`` on its class) run
through the one audit machinery (dpsynth_core/privacy/audit.py). A new DP method is audited by declaring
them; no test names it, and one that declares none fails here with a sentence saying what to declare.

The contract, for the short version (the design's ``quick_runs``, in the fast suite) and the full one
(``runs``, marked slow): the 95 % lower bound on ε stays at or below the claim, AND the broken variant
(a tenth of the noise, the claim unchanged) is bound above the claim, so an audit without power fails.

Tolerance: for a correct method the bound exceeds the claim with probability at most 5 % (less: the
Clopper–Pearson bounds are conservative). The seeds are fixed, so each test is deterministic; the
margins of every design over several seeds are in docs/audit.md.
"""

from __future__ import annotations

import dataclasses

import pytest

from dpsynth_core.privacy.audit import Broken, declared_audits, run_audit
from dpsynth_core.synth import SYNTHESIZERS

DP_METHODS = [m for m, s in SYNTHESIZERS.items() if s.is_dp]
CASES = [(m, i) for m in DP_METHODS for i in range(max(1, len(declared_audits(m))))]
QUICK_SEED, FULL_SEED = 20261, 20262


def _declared(method: str, which: int):
    designs = declared_audits(method)
    if not designs:
        pytest.fail(f"{method} is differentially private but declares no empirical privacy audit: add "
                    "`audits = (Audit(schema, ...),)` to its class (dpsynth_core/privacy/audit.py; docs/audit.md "
                    "says how to choose the pair, the statistic and the sizes).")
    return designs[which]


def check_audit(method: str, which: int = 0, *, full: bool = False, n_jobs: int | None = None) -> None:
    """The contract on one declared audit: its short version, or with ``full`` its full one."""
    design = _declared(method, which)
    result = run_audit(method, which=which, runs=design.runs if full else design.quick_runs,
                       seed=FULL_SEED if full else QUICK_SEED, n_jobs=n_jobs)
    event = result.honest.event if not result.holds else result.broken.event
    assert result.holds and result.has_power, f"{result.verdict()} Event: {event}. Design: {design.note}"


def check_audits(method: str, *, n_jobs: int | None = None) -> None:
    """Every declared audit of ``method``, short: what the common checks of a new synthesizer call."""
    for which in range(max(1, len(declared_audits(method)))):
        check_audit(method, which, n_jobs=n_jobs)


def test_every_dp_method_declares_an_audit():
    missing = [m for m in DP_METHODS if not declared_audits(m)]
    assert not missing, (f"DP methods without a declared empirical privacy audit: {missing}. Add "
                         "`audits = (Audit(schema, ...),)` to each class (docs/audit.md).")


@pytest.mark.parametrize("method, which", CASES)  # every DP method's short audit in the fast loop (issue 29)
def test_declared_audit_short(method, which):
    check_audit(method, which)


@pytest.mark.slow
@pytest.mark.parametrize("method, which", CASES)
def test_declared_audit_full(method, which):
    check_audit(method, which, full=True)


def test_a_dp_method_without_an_audit_fails_saying_what_to_declare(monkeypatch):
    monkeypatch.setattr(type(SYNTHESIZERS["independent"]), "audits", ())
    with pytest.raises(pytest.fail.Exception, match=r"declares no empirical privacy audit: add `audits = \(Audit"):
        check_audits("independent")


def test_an_audit_without_power_fails_the_contract(monkeypatch):
    # A "broken" variant with all of its noise (factor 1) is the method itself: no audit can catch it, and the
    # contract must say the audit is too weak rather than pass.
    design = dataclasses.replace(declared_audits("independent")[0], broken=Broken(factor=1.0), quick_runs=20)
    monkeypatch.setattr(type(SYNTHESIZERS["independent"]), "audits", (design,))
    with pytest.raises(AssertionError, match="too weak to catch such an error"):
        check_audit("independent", n_jobs=1)
