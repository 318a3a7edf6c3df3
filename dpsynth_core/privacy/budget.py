"""How a synthesizer spends ε, declared as data on its class, and the check of a run against it.

Every synthesizer says how it spends the total ε of a release (``spends = Budget(...)``):

* ``TOTAL`` — its mechanisms spend its share (independent, MST, …): all of it, or the declared
  ``fraction`` of it, the rest left unspent (the ledger's total is what the steps spent);
* ``NONE`` — it reads nothing of the data (a draw from the declared public domain): ε = 0, DP
  trivially. Only an undeclared row count then costs ε: the whole budget goes to the noisy count;
* ``PER_RECORD`` — it spends a per-record ε once per unit (a synthetic record, or a block of
  them): n units cost n times it by sequential composition (PeGS, PMI).

The core splits the total in the same order for every method (:meth:`Budget.plan`): first what the
schema's private estimate spent (:mod:`..schema_estimate`: its steps are the release's too), then
the noisy row count when n is not declared (``count_share`` of what is left), then 1/m to each of m
implicates, then, per record, over the units. How a method shares its part over its targets (columns,
marginals) is stated in ``per_target`` and shown in the ledger's steps. After the run
:meth:`Budget.check` compares the steps with the plan: a mismatch is a bug, never user error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import constraints
from .accounting import compose, zcdp_epsilon, zcdp_rho

TOTAL, NONE, PER_RECORD = "total", "none", "per record"
KINDS = (TOTAL, NONE, PER_RECORD)


@dataclass(frozen=True)
class Plan:
    """The split of one run's total ε: what the row count, each implicate and each unit get."""

    requested: float | None  # the total ε asked for (None: a method spending none, with n declared)
    row_count: float         # ε of the noisy row count (0: n declared)
    implicates: int
    implicate_share: float   # the total's share of each implicate, requested / m (the ledger's figure)
    per_implicate: float     # ε one implicate's generation spends (0 for NONE)
    units: int | None = None     # PER_RECORD: uses of the per-unit ε in one implicate
    per_unit: float | None = None
    schema: float = 0.0          # ε the schema's private estimate spent, taken off the total first

    @property
    def generation_epsilon(self) -> float:
        """The ε handed to ``generate``: per unit for per-record methods, else the implicate's."""
        return self.per_unit if self.units is not None else self.per_implicate

    @property
    def total(self) -> float:
        """The ε of the schema's estimate, the row count and the implicates added up (for a zCDP budget with m > 1 implicates an
        upper bound: their ρ compose to less, see :class:`Budget`)."""
        return self.schema + self.row_count + self.implicates * self.per_implicate


@dataclass(frozen=True)
class Budget:
    """A synthesizer's declared way of spending ε (module docstring).

    ``unit``: what one per-record ε buys, formatted with the method's options
    ("block of {block} synthetic records"); ``unit_size``: the option holding the records per
    unit (None: one record per unit). ``needs_delta``: an (ε, δ) method, given the requested δ
    (the default δ when none is asked) split over the implicates. ``zcdp``: the method's steps are
    zCDP (needs ``needs_delta``); its m implicates share ρ, not ε: ρ = ρ(ε, δ) of what the row count
    left, ρ/m each, handed to each implicate as the ε that ρ/m has at the run's δ, so that the m
    implicates' ρ, summed and converted once, give back the total (sharing ε would leave part of it
    unspent: the conversion is not additive). ``count_share``: share of ε
    for a noisy row count (None: the app's share; all of ε for a method that spends none).
    ``fraction``: the part of its share a ``TOTAL`` method spends (1: all of it).
    """

    kind: str = TOTAL
    per_target: str = ""
    unit: str = "synthetic record"
    unit_size: str | None = None
    needs_delta: bool = False
    zcdp: bool = False
    count_share: float | None = None
    fraction: float = 1.0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"a budget is one of {KINDS}, got {self.kind!r}")
        if self.zcdp and not (self.needs_delta and self.kind == TOTAL):
            raise ValueError(f"a zCDP budget is a {TOTAL!r} budget with needs_delta")
        if not 0 < self.fraction <= 1 or (self.fraction != 1 and self.kind != TOTAL):
            raise ValueError(f"fraction is a share in (0, 1] of a {TOTAL!r} budget, got {self.fraction!r}")

    @property
    def row_count_share(self) -> float:
        """Share of ε a noisy row count takes when n is not declared."""
        if self.count_share is not None:
            return self.count_share
        return 1.0 if self.kind == NONE else constraints.ROW_COUNT_EPSILON_SHARE

    def units(self, n: int, params: dict) -> int:
        """How many times a per-record method spends its per-unit ε for ``n`` synthetic rows."""
        return n if self.unit_size is None else -(-n // params[self.unit_size])

    def row_count_epsilon(self, epsilon: float | None, schema: float = 0.0) -> float:
        """ε of the noisy row count released when n is not declared: its share of what the schema's
        private estimate (``schema``) left of ``epsilon``."""
        return 0.0 if epsilon is None else (epsilon - schema) * self.row_count_share

    def plan(self, epsilon: float | None, *, n: int, row_count: float = 0.0, implicates: int = 1,
             params: dict | None = None, delta: float | None = None, schema: float = 0.0) -> Plan:
        """The split of ``epsilon`` once the schema's estimate (``schema``) and the row count (``n`` rows, at ε
        ``row_count``) are taken off; ``delta``: the run's δ (:meth:`run_delta`; None: the default δ), which a
        ``zcdp`` budget's split needs.

        >>> Budget(PER_RECORD).plan(10.0, n=100, row_count=0.5).per_unit
        0.095
        >>> Budget(TOTAL).plan(1.0, n=100, row_count=0.045, schema=0.1).per_implicate
        0.855
        """
        share = 0.0 if epsilon is None else epsilon / implicates
        if self.kind == NONE:
            return Plan(epsilon, row_count, implicates, share, 0.0, schema=schema)
        each = (epsilon - schema - row_count) / implicates
        if self.zcdp and (implicates > 1 or self.fraction != 1):
            delta = self.run_delta(0.0) if delta is None else delta
            each = zcdp_epsilon(zcdp_rho(epsilon - schema - row_count, delta) * self.fraction / implicates, delta)
            return Plan(epsilon, row_count, implicates, share, each, schema=schema)
        if self.kind == TOTAL:
            return Plan(epsilon, row_count, implicates, share, each * self.fraction, schema=schema)
        units = self.units(n, params or {})
        return Plan(epsilon, row_count, implicates, share, each, units, each / units, schema=schema)

    def run_delta(self, delta: float) -> float | None:
        """The δ of an (ε, δ) method's whole run (``needs_delta``): the requested δ, or the default when
        none is asked; None for a method that spends no δ."""
        return (float(delta) or constraints.DEFAULT_DELTA) if self.needs_delta else None

    def implicate_delta(self, delta: float, implicates: int) -> float | None:
        """The δ one implicate's generation is given: 1/m of the run's, or all of it for a ``zcdp`` budget
        (its implicates' ρ are summed and converted once, at the run's δ)."""
        run = self.run_delta(delta)
        return None if run is None else run if self.zcdp else run / implicates

    def check(self, plan: Plan, count_steps: list, generated: list[list], *, implicate_delta: float | None = None) -> None:
        """Raise if the steps of a run (the row count's, then each implicate's) differ from ``plan``.

        An implicate's zCDP steps are converted at ``implicate_delta`` (:func:`.accounting.compose`).
        """
        spent = compose(count_steps).epsilon
        if not math.isclose(spent, plan.row_count, rel_tol=1e-9, abs_tol=1e-15):
            raise AssertionError(f"the row count spent ε={spent}, planned {plan.row_count}")
        for m, steps in enumerate(generated, 1):
            spent = compose(steps, implicate_delta).epsilon
            if not math.isclose(spent, plan.per_implicate, rel_tol=1e-9, abs_tol=1e-15):
                raise AssertionError(f"implicate {m} spent ε={spent}, its {self.kind} budget is {plan.per_implicate}")
