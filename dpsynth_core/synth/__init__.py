"""Synthesizers: the registry and the single entry point :func:`synthesize`.

A synthesizer is one module here plus its line below (``synth/uniform.py`` is the smallest).
"""

from . import aim, bootstrap, cart, dirichlet, dp_seqreg, independent, mst, parametric, pegs, pmi, privbayes  # noqa: F401  (registers the methods)
from . import uniform  # noqa: F401
from .base import SYNTHESIZERS, Synthesis, Synthesizer, fingerprint, make_rng, synthesize
from .options import Option

__all__ = ["SYNTHESIZERS", "Option", "Synthesis", "Synthesizer", "fingerprint", "make_rng", "synthesize"]
