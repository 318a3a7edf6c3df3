"""CONTRIBUTING.md's worked metric, copied under a new name as a contributor would copy it: one file and
its import line (tests/contributing.py) make a metric that passes the common checks and that the R-U map,
the Compare page's sections, the report and the CLI all know, with no other edit (issue 29)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpsynth_core import cli, report
from dpsynth_core.metric_info import METRICS, MetricContext, metrics, section_title, unregister
from dpsynth_core.rumap import metric_options, score
from dpsynth_core.synth import synthesize
from dpsynth_core.utility import section_tiles
from tests.conftest import DATA
from tests.contributing import example_module
from tests.core.test_metrics_common import check_metric, penguins_split

NAME, LABEL = "column_mean_gap", "Column mean gap (a copy)"
RENAMES = {"utility/means.py": "utility/column_means.py", "mean_gap": NAME, '"Mean gap of column means"': f'"{LABEL}"'}


@pytest.fixture(scope="module")
def copied():
    """The copy's module, its metric registered for this module's tests and removed after them."""
    with example_module("dpsynth_core/utility/means.py", RENAMES) as module:
        try:
            yield module
        finally:
            unregister(NAME)
    assert NAME not in METRICS


@pytest.fixture(scope="module")
def data():
    return penguins_split()


def _by_hand(real: pd.DataFrame, synth: pd.DataFrame) -> float:
    """The example's formula: the mean over the columns stored as numbers (penguins' year included, which
    the schema declares categorical) of |mean(real) − mean(synthetic)|."""
    numeric = [c for c in real.columns if real[c].dtype.kind in "iuf" or str(real[c].dtype) in ("Int64", "Float64")]
    return float(np.mean([abs(real[c].mean() - synth[c].mean()) for c in numeric]))


def test_the_copy_passes_every_common_check(copied, data):
    check_metric(NAME, data)


def test_the_copy_computes_its_formula(copied):
    real = pd.DataFrame({"a": [1.0, 2.0, 3.0, 6.0], "b": [0, 0, 10, 10], "c": list("xyxy")})
    synth = pd.DataFrame({"a": [2.0, 2.0, 2.0, 2.0], "b": [1, 1, 1, 1], "c": list("xxxx")})
    # by hand: |3 − 2| = 1 for a, |5 − 1| = 4 for b, the text column ignored: (1 + 4) / 2
    assert METRICS[NAME].value(MetricContext(real, synth)) == pytest.approx(2.5)
    assert METRICS[NAME].value(MetricContext(real, real)) == METRICS[NAME].best == 0.0
    assert math.isnan(getattr(copied, NAME)(real[["c"]], synth[["c"]]))


def test_the_map_the_sections_and_the_report_know_it(copied, data):
    train, hold, synth, roles = data
    expected = _by_hand(train, synth)
    # The R-U map: an axis choice, and a column of the sweep's table.
    assert NAME in metric_options("utility")
    assert score(train, synth, schema=roles[0], seed=0, metrics=[NAME])[NAME] == pytest.approx(expected)
    # The Compare page's section tiles (it is registered last in its section).
    assert METRICS[NAME] in metrics("utility", "marginals")
    tiles = section_tiles("marginals", MetricContext(train, synth, schema=roles[0]))
    assert tiles[-1].label == LABEL and tiles[-1].value == pytest.approx(expected)
    # The internal report's table of the section.
    result = synthesize(train, "independent", epsilon=1.0, schema=roles[0], seed=3)
    section = report.utility_section(train, result, seed=0)
    table = dict(section.tables)[section_title("marginals")]
    row = table[table["measure"] == LABEL]
    assert float(row["value"].iloc[0]) == pytest.approx(_by_hand(train, result.data))


def test_the_cli_sweep_puts_it_on_the_map(copied, tmp_path):
    out = tmp_path / "sweep.csv"
    assert cli.main(["sweep", str(DATA / "penguins.csv"), "--schema", str(DATA / "penguins.schema.json"),
                     "--methods", "independent", "--epsilons", "1", "--seed", "4", "--y", NAME, "--n-jobs", "1",
                     "-o", str(out)]) == 0
    table = pd.read_csv(out)
    assert NAME in table.columns and table[NAME].between(0, math.inf).all()
    assert LABEL in out.with_suffix(".html").read_text(encoding="utf-8")  # the map's y axis
