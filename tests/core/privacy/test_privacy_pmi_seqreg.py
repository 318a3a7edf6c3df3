"""The premises the declared audits of `pmi` and `dp_seqreg` rely on, checked by hand.

The audits themselves (declared on the classes) run in test_audit_common.py. Here: a PMI release with a
uniform seed per record is a batch of independent runs (so one synthesis of R records is R runs of the
per-record mechanism), and dp_seqreg's regression design plants a record that uses the moment matrix's
whole sensitivity.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpsynth_core.privacy.audit import declared_audits
from dpsynth_core.schema import Schema
from dpsynth_core.synth import SYNTHESIZERS


def _pair(method: str, which: int = 0):
    design = declared_audits(method)[which]
    schema = Schema.from_dict(design.schema)
    return design, design.pair.make(schema, SYNTHESIZERS[method].resolve(design.options)["bins"])


# --- pmi: ε per synthetic record ---------------------------------------------------------
#
# Every record of a release is an independent run of the per-record mechanism when every record has its own
# uniform seed (chains ≥ records; by default a record is seeded by the previous synthetic record of its chain,
# issue 18, and the guarantee per record holds for any seed): the fitted models are fixed by measure, and each
# record has its own draws (no noise is shared between records).

def _in_cell_share(measured, params, epsilon: float, seed: int, n: int) -> float:
    values, steps = SYNTHESIZERS["pmi"].generate(measured, epsilon=epsilon, n=n, rng=np.random.default_rng(seed),
                                                 **params)
    assert math.fsum(s.epsilon for s in steps) == pytest.approx(epsilon)  # per record
    return float(np.mean((values["a"] == "a2") & (values["b"] == "b2")))


def test_pmi_records_are_independent_runs():
    # 2000 single-record releases, each with its own seed, against one release of 40,000 records on the
    # declared design's D′: the rate of (a2, b2) must agree (two-proportion z-test, |z| < 4: false alarm < 1e-4).
    design, pair = _pair("pmi")
    records = 40_000
    params = SYNTHESIZERS["pmi"].resolve({**design.options, "chains": records})
    measured = SYNTHESIZERS["pmi"].measure(pair.neighbour, pair.schema, ["a", "b"], **params)
    single = np.mean([_in_cell_share(measured, params, design.epsilon, 10_000 + s, 1) for s in range(2000)])
    batch = _in_cell_share(measured, params, design.epsilon, 99, records)
    se = math.sqrt(batch * (1 - batch) * (1 / 2000 + 1 / records))
    assert abs(single - batch) < 4 * se, (single, batch)


# --- dp_seqreg, linear regression ----------------------------------------------------------------------
#
# Order (a, y): a is a noisy histogram (ε/2), y | a a noisy moment matrix Z′Z (Laplace, ε/2). The planted
# record (a2, y = 10, the upper bound) has design row u = (1, 0, 1) (intercept, a = a1, a = a2) and scaled
# y = 1, so z = (1, 0, 1, 1) and Z′Z gains z z′: +1 on the 6 upper-triangle entries not involving a1, an L1
# change of exactly Δ = (q + 1)(q + 2)/2 = 6 (q = 2): the whole sensitivity.

def _moments_by_hand(df: pd.DataFrame) -> np.ndarray:
    """Z′Z with Z = (1, a = a1, a = a2, (y − 5)/5) over rows with y observed, built here."""
    rows = df.dropna()
    Z = np.column_stack([np.ones(len(rows)), rows["a"] == "a1", rows["a"] == "a2", (rows["y"] - 5) / 5])
    return Z.T @ Z


def test_the_regression_design_uses_the_whole_sensitivity():
    design, pair = _pair("dp_seqreg", 2)
    assert pair.planted == {"a": "a2", "y": 10.0}
    seq = SYNTHESIZERS["dp_seqreg"]
    params = seq.resolve(design.options)
    for df in (pair.data, pair.neighbour):
        lin = seq.measure(df, pair.schema, ["a", "y"], **params)[2][1]
        assert lin.moments == pytest.approx(_moments_by_hand(df))
        assert lin.sensitivity == 6.0
    shift = (_moments_by_hand(pair.neighbour) - _moments_by_hand(pair.data))[np.triu_indices(4)]
    assert np.abs(shift).sum() == pytest.approx(6.0)
    assert np.count_nonzero(shift) == 6 and np.all(shift[shift != 0] == pytest.approx(1.0))
