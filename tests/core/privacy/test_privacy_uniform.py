"""Empirical privacy audit of the uniform baseline: it claims ε = 0 with a declared row count.

Neighbours D (30 records, none with a = "a2") and D′ = D plus one record ("a2", "b2"). Event E_k:
at least k of the 30 synthetic rows are ("a2", "b2"). A method that reads nothing of the data has
the same law on D and D′, so the audit's lower confidence bound on the privacy loss must not exceed
the claimed 0. The audit has power: a variant that draws from the data's own rows (as bootstrap
does) never produces "a2" on D and often does on D′, and is flagged far above 0.
"""

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

from dpsynth_core.schema import Schema
from dpsynth_core.synth import SYNTHESIZERS, synthesize
from tests.core.privacy.privacy_tools import audits, epsilon_lower_bound

SCHEMA = Schema.from_dict({"a": {"kind": "categorical", "categories": ["a0", "a1", "a2"]},
                           "b": {"kind": "categorical", "categories": ["b0", "b1", "b2"]}})
D = pd.DataFrame({"a": ["a0"] * 15 + ["a1"] * 15, "b": ["b0", "b1"] * 15})
D_PRIME = pd.concat([D, pd.DataFrame({"a": ["a2"], "b": ["b2"]})], ignore_index=True)
N_SYNTH, RUNS = 30, 2000
# P(a row is (a2, b2)) = 1/9: at least k = 1, 3, 5 of 30 rows with probability ≈ 0.97, 0.64, 0.21.
KS = np.array([1, 3, 5])


def _hits(draw, df: pd.DataFrame, first_seed: int) -> np.ndarray:
    counts = np.array([np.count_nonzero((v["a"] == "a2") & (v["b"] == "b2"))
                       for v in (draw(df, np.random.default_rng(first_seed + r)) for r in range(RUNS))])
    return (counts[:, None] >= KS).sum(axis=0)


def _uniform(df, rng):
    synth = SYNTHESIZERS["uniform"]
    values, steps = synth.generate(synth.measure(df, SCHEMA, ["a", "b"]), epsilon=0.0, n=N_SYNTH, rng=rng)
    assert all(s.epsilon == 0 for s in steps)
    return values


def _from_the_data(df, rng):
    rows = rng.integers(0, len(df), N_SYNTH)
    return {c: df[c].to_numpy()[rows] for c in df.columns}


def test_audit_runs_the_public_path():
    # generate() driven by hand equals synthesize() with the same seed and declared n; the ledger
    # claims ε = 0, and the run is DP though seeded (nothing of the data is read).
    for df in (D, D_PRIME):
        result = synthesize(df, "uniform", schema=SCHEMA, n=N_SYNTH, seed=9)
        assert result.ledger["is_dp"] and result.ledger["epsilon_total"] == 0
        values = _uniform(df, np.random.default_rng(9))
        for c in ("a", "b"):
            pdt.assert_series_equal(pd.Series(values[c], name=c).astype(result.data[c].dtype), result.data[c])


@pytest.mark.slow
@audits("uniform")
def test_uniform_passes_the_empirical_dp_audit_at_epsilon_zero():
    hits_d, hits_d2 = _hits(_uniform, D, 0), _hits(_uniform, D_PRIME, RUNS)
    bound = epsilon_lower_bound(hits_d, RUNS, hits_d2, RUNS, alpha=0.05)
    assert bound <= 0.0, (bound, hits_d, hits_d2)


@pytest.mark.slow
def test_the_audit_flags_draws_from_the_data():
    hits_d, hits_d2 = _hits(_from_the_data, D, 0), _hits(_from_the_data, D_PRIME, RUNS)
    # On D no row is ever ("a2", "b2"); on D′ at least one of 30 is with probability 1 − (30/31)^30 ≈ 0.63.
    assert hits_d[0] == 0 and hits_d2[0] > 1000
    assert epsilon_lower_bound(hits_d, RUNS, hits_d2, RUNS, alpha=0.05) > 3.0
