"""Special values in the marginal-based synthesizers: each is a cell of its own, released exactly.

A table with hours worked that are 0 for 30 % of the rows and the code −8 ("refused") for 5 %, beside
a category correlated with them. Every method that discretises through ``synth.encoding`` (independent,
MST, PrivBayes) must give each special value the share of its noisy cell: at ε = 10 on 4,000 rows the
noise on a cell's count has sd of a few records, so the share is within 0.02 of the real one (about
6 binomial sd of a 4,000-row sample at 0.3 plus the noise; the seed is fixed).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpsynth_core.schema import Schema
from dpsynth_core.synth import synthesize

N = 4000


def _table() -> tuple[pd.DataFrame, Schema]:
    rng = np.random.default_rng(11)
    job = rng.choice(["none", "part", "full"], size=N, p=[0.3, 0.3, 0.4])
    hours = np.where(job == "none", 0.0, np.where(job == "part", rng.integers(5, 30, N), rng.integers(30, 60, N)))
    hours[rng.random(N) < 0.05] = -8.0
    df = pd.DataFrame({"job": job, "hours": hours})
    schema = Schema.from_dict({"job": {"kind": "categorical", "categories": ["none", "part", "full"]},
                               "hours": {"kind": "numeric", "bounds": [0, 80], "integer": True,
                                         "specials": [0, -8]}})
    return df, schema


@pytest.mark.parametrize("method", ["independent", "mst", "privbayes"])
def test_each_special_value_keeps_its_share(method):
    df, schema = _table()
    out = synthesize(df, method, epsilon=10.0, schema=schema, n=N, seed=5).data
    hours = out["hours"].astype(float).to_numpy()
    for value in (0.0, -8.0):
        real, synth = (df["hours"] == value).mean(), (hours == value).mean()
        assert abs(synth - real) < 0.02, (method, value, real, synth)
    # every other value is drawn inside the bounds, never on a special value
    rest = hours[~np.isin(hours, [0.0, -8.0])]
    assert rest.min() >= 1 and rest.max() <= 80


def test_mst_keeps_the_association_of_a_special_value():
    # "none" ⇔ 0 hours in the data: MST's tree joins the two columns, so nearly every synthetic 0 is "none".
    df, schema = _table()
    out = synthesize(df, "mst", epsilon=10.0, schema=schema, n=N, seed=6).data
    zero = out["hours"].astype(float) == 0
    real_share = (df.loc[df["hours"] == 0, "job"] == "none").mean()  # 1 bar the −8 overwrites: 1.0
    assert real_share == 1.0 and (out.loc[zero, "job"] == "none").mean() > 0.95
