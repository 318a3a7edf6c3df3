"""The two random streams of a synthesis: secret privacy noise, and the sampling of records.

A synthesis draws from two generators that share no state:

* **noise** — every draw a privacy mechanism makes (noise on counts, a private selection, the
  perturbed draws of a per-record method) comes from ChaCha20, a stream cipher used as a
  cryptographically secure generator (``randomgen.ChaCha`` with 20 rounds: a numpy bit generator,
  so the mechanisms keep numpy's ``Generator`` interface and speed). Its 256-bit key is drawn
  from the operating system's entropy (:func:`secrets.randbits`) and never stored or shown.
* **records** — the sampling that only post-processes released quantities (a record drawn from a
  fitted model, a value placed inside its bin) comes from numpy's PCG64, seeded from the
  operating system's entropy on its own.

Why two: released values carry many bits of their generator's output (a value drawn uniformly
inside a bin, written at full precision, carries about 50). PCG64 is fast but not cryptographic,
so its state, and every draw before and after, can in principle be recovered from enough of its
output. Had the noise come from the same stream, the release would give the noise away, and with
it the exact counts. Now the records' stream says nothing about the noise: the two are seeded by
independent draws of the operating system's generator, and ChaCha20's output reveals nothing of
its key or of its other output.

With a ``seed`` both streams derive from it (records: ``numpy.random.default_rng(seed)``; noise:
a key hashed from the seed with SHA-256), so a seeded exploration reproduces exactly; such a run
is labelled not DP anyway (its output is a fixed function of the data and a known seed).
"""

from __future__ import annotations

import hashlib
import secrets

import numpy as np
from randomgen import ChaCha

#: ChaCha's rounds: 20 is the cipher's standard, security-grade setting (8 and 12 trade margin for speed).
ROUNDS = 20
_LABEL = b"dpsynth privacy noise, key from a seed\x00"


def noise_key(seed: int | np.random.Generator | None) -> int:
    """The 256-bit key of the noise stream: fresh operating-system entropy when ``seed`` is None."""
    if seed is None:
        return secrets.randbits(256)
    if isinstance(seed, np.random.Generator):  # a caller's generator: its next 32 bytes
        return int.from_bytes(seed.bytes(32), "little")
    return int.from_bytes(hashlib.sha256(_LABEL + str(int(seed)).encode()).digest(), "little")


def noise_generator(seed: int | np.random.Generator | None = None) -> np.random.Generator:
    """A numpy ``Generator`` over ChaCha20 keyed by :func:`noise_key` (module docstring)."""
    return np.random.Generator(ChaCha(key=noise_key(seed), counter=0, rounds=ROUNDS))


def streams(seed: int | np.random.Generator | None) -> tuple[np.random.Generator, np.random.Generator]:
    """``(records, noise)``: the two generators of one synthesis (module docstring).

    ``seed`` is None (fresh entropy for each), a non-negative integer (both derived from it) or a
    numpy ``Generator`` (used for the records; the noise key is drawn from it first).
    """
    if isinstance(seed, np.random.Generator):
        noise = noise_generator(seed)
        return seed, noise
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")
    return np.random.default_rng(seed), noise_generator(seed)
