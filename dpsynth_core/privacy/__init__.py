"""Privacy in one package: the mechanisms (:mod:`.mechanisms`, sampled exactly by :mod:`.exact` from the
secret stream of :mod:`.randomness`), the budget a synthesizer declares (:mod:`.budget`), the zCDP
accounting (:mod:`.accounting`), the ledger and its statement (:mod:`.ledger`), built nowhere else, and
the ledger store (:mod:`.store`) that every computation on a dataset writes before it is shown."""

from .budget import KINDS, NONE, PER_RECORD, TOTAL, Budget, Plan
from .ledger import (SEEDED_REASON, Step, build_ledger, delta_warning, dp_but_for_seed, ledger_steps_table,
                     privacy_statement, ratio_text, statement_tone)
from .mechanisms import DiscreteGaussian, ExponentialMechanism, Gaussian, Geometric, Laplace, Mechanism, Public
from .store import PURPOSES, Cap, Entry, LedgerStore, Totals, Use, default_path

__all__ = ["KINDS", "NONE", "PER_RECORD", "TOTAL", "Budget", "Plan", "SEEDED_REASON", "Step", "build_ledger",
           "delta_warning", "dp_but_for_seed", "ledger_steps_table", "privacy_statement", "ratio_text",
           "statement_tone", "DiscreteGaussian", "ExponentialMechanism", "Gaussian", "Geometric", "Laplace",
           "Mechanism", "Public", "PURPOSES", "Cap", "Entry", "LedgerStore", "Totals", "Use", "default_path"]
