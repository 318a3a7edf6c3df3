"""The laws the declared audits of `dirichlet` and `pegs` rely on, against hand formulas.

The audits themselves (declared on the classes) run in test_audit_common.py. Here: the Dirichlet
design's event rates follow the beta-binomial law its note states, and PeGS's design is near the worst
case (exact log ratio 0.832 of the claimed 1) with the sampler drawing what the formula says.
Statistical checks fix their seed and allow 5 binomial standard errors (a false alarm < 1e-6).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpsynth_core.privacy.audit import declared_audits
from dpsynth_core.schema import Schema
from dpsynth_core.synth import SYNTHESIZERS

COLUMNS = ["a", "b"]


def _pair(method: str):
    design = declared_audits(method)[0]
    bins = SYNTHESIZERS[method].resolve(design.options)["bins"]
    return design, design.pair.make(Schema.from_dict(design.schema), bins)


def _in_rare(values) -> np.ndarray:
    return (np.asarray(values["a"]) == "a2") & (np.asarray(values["b"]) == "b2")


# --- dirichlet ----------------------------------------------------------------------------
#
# With α = n_s/(e^ε − 1) in all p = 9 cells, the synthetic count of the planted cell (a2, b2) is
# beta-binomial: BetaBin(n_s, α + x, A − α − x) with x = 0 on D and 1 on D′, A = pα + n.

@pytest.mark.slow  # 4,000 syntheses a side (the short audit covers the method)
@pytest.mark.parametrize("factor", [1, 10])  # the release as declared, and the broken variant's ε
def test_dirichlet_design_counts_are_beta_binomial(factor):
    design, pair = _pair("dirichlet")
    synth = SYNTHESIZERS["dirichlet"]
    eps, n_s, runs = factor * design.epsilon, design.n, 4000
    for x, df in ((0, pair.data), (1, pair.neighbour)):
        measured = synth.measure(df, pair.schema, COLUMNS, bins=3)
        counts = np.array([np.count_nonzero(_in_rare(synth.generate(measured, epsilon=eps, n=n_s,
                                                                    rng=np.random.default_rng(1000 * x + r),
                                                                    bins=3)[0]))
                           for r in range(runs)])
        alpha = n_s / math.expm1(eps)
        big_a = 9 * alpha + len(df)
        for k in (1, 5):
            p = stats.betabinom.sf(k - 1, n_s, alpha + x, big_a - alpha - x)
            assert abs(np.mean(counts >= k) - p) < 5 * math.sqrt(p * (1 - p) / runs) + 1e-12, (x, k, p)


# --- pegs ------------------------------------------------------------------------------------
#
# M = 2 features, so each conditional is keyed by the other feature's exact value and α = 1/(e^(ε/2) − 1).
# The sweep draws a given the seed's b, then b given the new a, so
#   P(record = (a2, b2)) = (1/3) Σ_s P(a2 | b_s) · P(b2 | a2),  P(j | h) = (n_hj + α)/(N_h + 3α).

def _pegs_exact(df: pd.DataFrame, epsilon: float) -> float:
    """P(one record lands in (a2, b2)) by the formula above, from pandas counts."""
    alpha = 1 / math.expm1(epsilon / 2)
    n = pd.crosstab(df["a"], df["b"]).reindex(index=["a0", "a1", "a2"], columns=["b0", "b1", "b2"], fill_value=0)
    p_a2 = [(n.loc["a2", s] + alpha) / (n[s].sum() + 3 * alpha) for s in ["b0", "b1", "b2"]]
    p_b2 = (n.loc["a2", "b2"] + alpha) / (n.loc["a2"].sum() + 3 * alpha)
    return float(np.mean(p_a2) * p_b2)


def test_pegs_design_is_near_the_worst_case_and_the_sampler_draws_it():
    design, pair = _pair("pegs")
    # The declared pair is the design of the module's note: exact log ratio 0.832 of the claimed 1.
    assert math.log(_pegs_exact(pair.neighbour, 1.0) / _pegs_exact(pair.data, 1.0)) == pytest.approx(0.832, abs=1e-3)
    synth, runs = SYNTHESIZERS["pegs"], 200_000
    for df in (pair.data, pair.neighbour):
        values, _ = synth.generate(synth.measure(df, pair.schema, COLUMNS, bins=3, top=2), epsilon=design.epsilon,
                                   n=runs, rng=np.random.default_rng(11), bins=3, top=2, chains=runs)
        p = _pegs_exact(df, design.epsilon)
        assert abs(_in_rare(values).mean() - p) < 5 * math.sqrt(p * (1 - p) / runs), p
