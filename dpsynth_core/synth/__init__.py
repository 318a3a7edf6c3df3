"""Synthesizers: the registry and the single entry point :func:`synthesize`."""

from . import bootstrap, cart, dirichlet, dp_seqreg, independent, mst, parametric, pegs, pmi, privbayes  # noqa: F401  (registers the methods)
from .base import (OPTION_HELP, SYNTHESIZERS, Step, Synthesis, Synthesizer, fingerprint, ledger_steps_table, make_rng,
                   privacy_statement, statement_tone, synthesize)

__all__ = ["OPTION_HELP", "SYNTHESIZERS", "Step", "Synthesis", "Synthesizer", "fingerprint", "make_rng",
           "privacy_statement", "statement_tone", "synthesize", "ledger_steps_table"]
