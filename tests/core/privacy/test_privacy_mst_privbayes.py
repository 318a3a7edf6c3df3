"""Empirical DP audits of MST and PrivBayes (issue 18), each with a broken variant caught.

Neighbouring datasets: D has 30 records over three categorical columns with
three values each, and never the third value; D′ adds one record
(a2, b2, c2). Each release draws n_s = 2000 synthetic rows (declared, public).
Events: "at least k synthetic rows in the cell (a2, b2)" and "… in
(a2, b2, c2)" for k ∈ {1, 5, 20, 50}; the audit (tests/privacy_tools.py)
bounds the log ratio of their probabilities from below, family-wise at 95%.

MST claims (ε, δ) = (2, 10⁻⁶) through zCDP; that conversion is loose, so the
honest bound lands far below 2 (0.04 with these seeds; −0.17 with another
1000-run trial). The broken variant divides every noise scale by 10 (ρ × 100;
the exponential mechanism's ε₀ × 10) while the claim stays the same; its
bound comes out at 3.8 (3.1 in the trial), well above 2.

PrivBayes claims pure ε = 1: its one noisy table costs 0.7 (the other 0.3
chooses the network), so the honest bound lands near 0.4 (the events see the
table's ratio e^0.7 diluted by sampling; 0.42 with these seeds). Broken:
noise for 10ε (scale ÷ 10), bound 5.4. Each release takes about a millisecond: the four audits run in
about 15 s.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

from dpsynth_core.privacy.accounting import zcdp_epsilon, zcdp_rho
from dpsynth_core.privacy.randomness import streams
from dpsynth_core.privacy import dp_but_for_seed
from dpsynth_core.schema import Schema
from dpsynth_core.synth import SYNTHESIZERS, synthesize

from tests.core.privacy.privacy_tools import audits, epsilon_lower_bound

DELTA = 1e-6
N_SYNTH = 2000
KS = np.array([1, 5, 20, 50])
COLUMNS = ["a", "b", "c"]
SCHEMA = Schema.from_dict({c: {"kind": "categorical", "categories": [f"{c}0", f"{c}1", f"{c}2"]} for c in COLUMNS})
D = pd.DataFrame({"a": ["a0"] * 15 + ["a1"] * 15, "b": ["b0", "b1"] * 15, "c": ["c0"] * 10 + ["c1"] * 20})
D_PRIME = pd.concat([D, pd.DataFrame({"a": ["a2"], "b": ["b2"], "c": ["c2"]})], ignore_index=True)
CLAIM = {"mst": 2.0, "privbayes": 1.0}
RUNS = {"mst": 2000, "privbayes": 1500}


def _extra(method: str) -> dict:
    return {"delta": DELTA} if method == "mst" else {}


def _broken_epsilon(method: str) -> float:
    """The ε whose noise is a tenth of the claimed one's."""
    eps = CLAIM[method]
    return zcdp_epsilon(100 * zcdp_rho(eps, DELTA), DELTA) if method == "mst" else 10 * eps


def _hits(method: str, df: pd.DataFrame, release_epsilon: float, first_seed: int) -> np.ndarray:
    synth = SYNTHESIZERS[method]
    measured = synth.measure(df, SCHEMA, COLUMNS, bins=20)
    counts = np.empty((RUNS[method], 2), dtype=np.int64)
    for r in range(RUNS[method]):
        values, _ = synth.generate(measured, epsilon=release_epsilon, n=N_SYNTH,
                                   rng=np.random.default_rng(first_seed + r), bins=20, **_extra(method))
        pair = (values["a"] == "a2") & (values["b"] == "b2")
        counts[r] = pair.sum(), (pair & (values["c"] == "c2")).sum()
    return np.concatenate([(counts[:, [0]] >= KS).sum(axis=0), (counts[:, [1]] >= KS).sum(axis=0)])


def _bound(method: str, release_epsilon: float, first_seed: int) -> float:
    runs = RUNS[method]
    hits_d = _hits(method, D, release_epsilon, first_seed)
    hits_d2 = _hits(method, D_PRIME, release_epsilon, first_seed + runs)
    return epsilon_lower_bound(hits_d, runs, hits_d2, runs, alpha=0.05)


@pytest.mark.parametrize("method", ["mst", "privbayes"])
def test_audit_runs_the_public_path(method):
    # release() driven by hand equals synthesize() with the same seed (δ as synthesize passes it).
    synth = SYNTHESIZERS[method]
    for df in (D, D_PRIME):
        result = synthesize(df, method, epsilon=CLAIM[method], delta=DELTA if method == "mst" else 0.0,
                            schema=SCHEMA, n=N_SYNTH, seed=77)
        # seeded to compare outputs, so labelled exploration: DP but for the seed (issue 15)
        assert dp_but_for_seed(result.ledger) and result.ledger["epsilon_total"] == pytest.approx(CLAIM[method])
        values, _ = synth.generate(synth.measure(df, SCHEMA, COLUMNS, bins=20), epsilon=CLAIM[method], n=N_SYNTH,
                                   **dict(zip(("rng", "noise"), streams(77))), bins=20, **_extra(method))
        for c in COLUMNS:
            pdt.assert_series_equal(pd.Series(values[c], name=c).astype(result.data[c].dtype), result.data[c])


def test_broken_variants_are_a_tenth_of_the_noise():
    rho = zcdp_rho(CLAIM["mst"], DELTA)
    assert zcdp_rho(_broken_epsilon("mst"), DELTA) == pytest.approx(100 * rho, rel=1e-9)  # σ ∝ 1/√ρ: ÷ 10


@pytest.mark.slow
@audits("mst", "privbayes")
@pytest.mark.parametrize("method", ["mst", "privbayes"])
def test_passes_the_empirical_dp_audit(method):
    bound = _bound(method, CLAIM[method], first_seed=0)
    assert bound <= CLAIM[method], bound


@pytest.mark.slow
@pytest.mark.parametrize("method", ["mst", "privbayes"])
def test_the_audit_flags_a_tenth_of_the_noise(method):
    bound = _bound(method, _broken_epsilon(method), first_seed=10 * RUNS[method])
    assert bound > CLAIM[method], bound
