"""Empirical DP audit of AIM (issue 30), with a broken variant caught.

The neighbouring datasets, the events and the bound are those of the MST and PrivBayes audits
(test_privacy_mst_privbayes.py): D has 30 records over three categorical columns with three values
each, never the third value; D′ adds one record (a2, b2, c2); each release draws n_s = 2000 rows
(declared, public); the events are "at least k synthetic rows in (a2, b2)" and "… in (a2, b2, c2)",
k ∈ {1, 5, 20, 50}, bounded family-wise at 95 % (tests/core/privacy/privacy_tools.py).

AIM claims (ε, δ) = (2, 10⁻⁶) through zCDP (ρ = 0.088). Every round's selection and noise read the
data; the model fit between rounds does not (post-processing), and the audit runs the whole release as
shipped. The honest bound lands far below 2 (−0.04 with these seeds: the conversion is loose and the
events are diluted by the model and the sampling). The broken variant keeps the claim but runs at
100 ρ (every σ ÷ 10, every ε₀ × 10); its bound comes out at 4.2, well above 2. A release takes about
25 ms here, so the two audits take about three minutes of CPU (marked slow).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

from dpsynth_core.privacy import dp_but_for_seed
from dpsynth_core.privacy.accounting import zcdp_epsilon, zcdp_rho
from dpsynth_core.privacy.randomness import streams
from dpsynth_core.synth import SYNTHESIZERS, synthesize
from tests.core.privacy.privacy_tools import audits, epsilon_lower_bound
from tests.core.privacy.test_privacy_mst_privbayes import COLUMNS, D, D_PRIME, DELTA, KS, N_SYNTH, SCHEMA

CLAIM = 2.0
RUNS = 1500


def _release(df: pd.DataFrame, epsilon: float, seed: int, both_streams: bool = False) -> dict:
    """One release driven by hand: one generator for noise and records (as the MST audit), or the two
    streams ``synthesize`` derives from the seed."""
    synth = SYNTHESIZERS["aim"]
    options = synth.defaults
    generators = dict(zip(("rng", "noise"), streams(seed))) if both_streams else {"rng": np.random.default_rng(seed)}
    values, _ = synth.generate(synth.measure(df, SCHEMA, COLUMNS, **options), epsilon=epsilon, n=N_SYNTH,
                               delta=DELTA, **generators, **options)
    return values


def _hits(df: pd.DataFrame, epsilon: float, first_seed: int) -> np.ndarray:
    counts = np.empty((RUNS, 2), dtype=np.int64)
    for r in range(RUNS):
        values = _release(df, epsilon, first_seed + r)
        pair = (values["a"] == "a2") & (values["b"] == "b2")
        counts[r] = pair.sum(), (pair & (values["c"] == "c2")).sum()
    return np.concatenate([(counts[:, [0]] >= KS).sum(axis=0), (counts[:, [1]] >= KS).sum(axis=0)])


def _bound(epsilon: float, first_seed: int) -> float:
    return epsilon_lower_bound(_hits(D, epsilon, first_seed), RUNS, _hits(D_PRIME, epsilon, first_seed + RUNS), RUNS,
                               alpha=0.05)


def test_audit_runs_the_public_path():
    # the release driven by hand equals synthesize() with the same seed and δ
    for df in (D, D_PRIME):
        result = synthesize(df, "aim", epsilon=CLAIM, delta=DELTA, schema=SCHEMA, n=N_SYNTH, seed=77)
        assert dp_but_for_seed(result.ledger) and result.ledger["epsilon_total"] == pytest.approx(CLAIM)
        values = _release(df, CLAIM, 77, both_streams=True)
        for c in COLUMNS:
            pdt.assert_series_equal(pd.Series(values[c], name=c).astype(result.data[c].dtype), result.data[c])


@pytest.mark.slow
@audits("aim")
def test_aim_passes_the_empirical_dp_audit():
    bound = _bound(CLAIM, first_seed=0)
    assert bound <= CLAIM, bound


@pytest.mark.slow
def test_the_audit_flags_aim_with_a_tenth_of_the_noise():
    broken = zcdp_epsilon(100 * zcdp_rho(CLAIM, DELTA), DELTA)
    bound = _bound(broken, first_seed=10 * RUNS)
    assert bound > CLAIM, bound
