"""Choices the pages used to make themselves, now in the core: the regression outcomes and families
offered on Compare, and how the R-U map's points carry and give back their settings ("no ε" included)."""

import json
import math

import numpy as np
import pandas as pd
import plotly.io as pio

import dpsynth_core as core
from dpsynth_core import frontier, plots, rumap


def test_regression_outcomes_are_numeric_columns_then_two_level_ones_with_their_family():
    n = 30  # more distinct integers than a categorical integer column may have
    df = pd.DataFrame({"sex": ["f", "m"] * (n // 2), "size": np.arange(n) + 0.5, "island": list("abc") * (n // 3),
                       "yes": ["y", "n"] * (n // 2), "age": np.tile(np.arange(20, 20 + n // 2), 2)})
    schema = core.infer_schema(df)
    assert [schema[c].kind for c in df.columns] == ["categorical", "numeric", "categorical", "categorical",
                                                    "numeric"]
    got = core.utility.regression_outcomes(schema, list(df.columns))
    # numeric first (linear), then the two-level categorical ones (logistic); the 3-level "island" is none
    assert list(got.items()) == [("size", "linear"), ("age", "linear"), ("sex", "logistic"), ("yes", "logistic")]
    # only the columns asked about, in their order
    assert list(core.utility.regression_outcomes(schema, ["yes", "age", "island"]).items()) == \
        [("age", "linear"), ("yes", "logistic")]
    assert core.utility.regression_outcomes(schema, ["island"]) == {}


def _points():
    rows = [("independent", 0.5, 0, 101, 0.2, 0.9), ("independent", 4.0, 0, 102, 0.1, 0.95),
            ("cart", math.nan, 0, 103, 0.05, 0.99), ("original", math.nan, 0, 0, 0.0, 1.0)]
    return pd.DataFrame([dict(method=m, label=core.SYNTHESIZERS[m].label if m in core.SYNTHESIZERS else m,
                              is_dp=m == "independent", epsilon=e, rep=r, seed=s, reference=m == "original",
                              dcr_median=x, ks_mean=y) for m, e, r, s, x, y in rows])


def test_a_clicked_point_gives_back_its_settings_through_the_figure():
    fig = plots.ru_figure(_points(), "dcr_median", "ks_mean")
    # The browser receives the figure as JSON (no NaN there) and sends a point's customdata back.
    sent = json.loads(pio.to_json(fig))
    custom = {tuple(c[:1] + c[2:]): c for trace in sent["data"] if "customdata" in trace
              for c in trace["customdata"]}
    dp = rumap.point_settings(custom[("independent", 102)], 0.2)
    assert dp == dict(method="independent", seed=102, fixed_seed=True, n=None, columns=None, holdout=0.2,
                      epsilon=4.0)
    # A method without ε (NaN in the table) comes back without one: the settings keep their own ε.
    not_dp = rumap.point_settings(custom[("cart", 103)], 0.0)
    assert not_dp == dict(method="cart", seed=103, fixed_seed=True, n=None, columns=None, holdout=0.0)
    assert rumap.point_settings(custom[("original", 0)], 0.0) is None  # the data itself is no synthesis


def test_no_epsilon_reads_as_none_and_in_words():
    assert rumap.epsilon_from_point(rumap.NO_EPSILON) is None
    assert rumap.epsilon_from_point("0.01") == 0.01 and rumap.epsilon_from_point(np.float64(3)) == 3.0
    assert [rumap.epsilon_text(e) for e in [math.nan, 0.5, 10.0, 0.125]] == ["not DP", "0.5", "10", "0.125"]


def test_dp_methods_of_a_sweep_in_order_without_references():
    points = _points()
    assert frontier.dp_methods(points) == ["independent"]
    both = pd.concat([points.assign(method=points["method"].replace({"cart": "mst"})), points])
    assert frontier.dp_methods(both) == ["independent", "mst"]
    assert [core.SYNTHESIZERS[m].is_dp for m in ("independent", "mst", "cart")] == [True, True, False]
