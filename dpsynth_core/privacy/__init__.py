"""Privacy in one package: the mechanisms (:mod:`.mechanisms`, sampled exactly by :mod:`.exact` from the
secret stream of :mod:`.randomness`), the budget a synthesizer declares (:mod:`.budget`), the zCDP
accounting (:mod:`.accounting`), and the ledger and its statement (:mod:`.ledger`), built nowhere else."""

from .budget import KINDS, NONE, PER_RECORD, TOTAL, Budget, Plan
from .ledger import (SEEDED_REASON, Step, build_ledger, dp_but_for_seed, ledger_steps_table, log_entry,
                     privacy_statement, ratio_text, statement_tone, sweep_log_entry)
from .mechanisms import DiscreteGaussian, ExponentialMechanism, Gaussian, Geometric, Laplace, Mechanism, Public

__all__ = ["KINDS", "NONE", "PER_RECORD", "TOTAL", "Budget", "Plan", "SEEDED_REASON", "Step", "build_ledger",
           "dp_but_for_seed", "ledger_steps_table", "log_entry", "privacy_statement", "ratio_text", "statement_tone",
           "sweep_log_entry", "DiscreteGaussian", "ExponentialMechanism", "Gaussian", "Geometric", "Laplace",
           "Mechanism", "Public"]
