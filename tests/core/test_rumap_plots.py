"""The R-U sweep and the plot builders."""

import json
import math

import numpy as np
import pandas as pd
import plotly.io as pio
import pytest

import dpsynth_core as core
from dpsynth_core import plots
from dpsynth_core.rumap import RISK_COLUMNS, UTILITY_COLUMNS, point_seed, score


@pytest.fixture(scope="module")
def penguins():
    return core.load_bundled("penguins")


@pytest.fixture(scope="module")
def sweep(penguins):
    df, schema = penguins
    return core.ru_map(df, ["independent", "cart"], [0.5, 4.0], reps=2, seed=11, schema=schema)


def test_one_row_per_method_epsilon_rep_plus_references(sweep):
    # independent: 2 ε × 2 reps; cart (not DP): 2 reps with ε NaN; bootstrap: 2 reps; original: 1.
    counts = sweep.groupby("method").size().to_dict()
    assert counts == {"independent": 4, "cart": 2, "bootstrap": 2, "original": 1}
    dp = sweep[sweep.method == "independent"]
    assert sorted(zip(dp.epsilon, dp.rep)) == [(0.5, 0), (0.5, 1), (4.0, 0), (4.0, 1)]
    assert sweep[sweep.method != "independent"]["epsilon"].isna().all()
    assert list(sweep.columns[:7]) == ["method", "label", "is_dp", "epsilon", "rep", "seed", "reference"]
    assert set(UTILITY_COLUMNS + RISK_COLUMNS) <= set(sweep.columns)
    assert sweep.loc[sweep.method == "independent", "is_dp"].all()
    assert not sweep.loc[sweep.method != "independent", "is_dp"].any()


def test_each_point_is_reproducible_from_its_seed(sweep, penguins):
    df, schema = penguins
    row = sweep[(sweep.method == "independent") & (sweep.epsilon == 4.0) & (sweep.rep == 1)].iloc[0]
    assert row.seed == point_seed(11, "independent", 4.0, 1)
    again = core.synthesize(df, "independent", epsilon=4.0, schema=schema, seed=int(row.seed))
    expected = score(df, again.data, schema=again.schema, seed=int(row.seed))
    for k, v in expected.items():
        assert row[k] == pytest.approx(v, rel=1e-12), k


def test_scores_against_independent_computations(sweep, penguins):
    df, schema = penguins
    original = sweep[sweep.method == "original"].iloc[0]
    # The data against itself: every row copied, every distance zero, nothing to tell apart.
    assert original.exact_copy_share == 1.0 and original.dcr_median == 0.0
    assert original.ks_mean == 0.0 and original.auc == pytest.approx(0.5)
    # A bootstrap sample holds about 1 − (1 − 1/n)^n ≈ 63% of the distinct rows;
    # with 342 distinct rows among 344 the share of real rows copied is ≈ 0.632 ± 3·0.026.
    boot = sweep[sweep.method == "bootstrap"]
    assert np.all(np.abs(boot.exact_copy_share - (1 - (1 - 1 / 344) ** 344)) < 0.08)
    # Independent marginals never copy a record: numeric values are drawn inside bins.
    assert (sweep.loc[sweep.method == "independent", "exact_copy_share"] == 0).all()


def test_seed_point_depends_only_on_its_own_coordinates():
    assert point_seed(1, "independent", 1.0, 0) == point_seed(1, "independent", 1.0, 0)
    assert len({point_seed(1, m, e, r) for m in ("independent", "cart") for e in (0.1, 1.0) for r in (0, 1)}) == 8
    assert point_seed(1, "cart", math.nan, 0) == point_seed(1, "cart", math.nan, 0)


def test_bad_arguments_are_refused(penguins):
    df, schema = penguins
    with pytest.raises(ValueError, match="^Unknown method nope; choose among aim, bootstrap, "):
        core.ru_map(df, ["nope"], [1.0], schema=schema)
    with pytest.raises(ValueError, match="^A sweep needs at least 1 replicate per point, got 0.$"):
        core.ru_map(df, ["independent"], [1.0], reps=0, schema=schema)


@pytest.mark.parametrize("text,expected", [("0.1, 1,10", [0.1, 1.0, 10.0]), ("3;1; 1", [1.0, 3.0])])
def test_parse_epsilon_grid(text, expected):
    assert core.parse_epsilon_grid(text) == expected


@pytest.mark.parametrize("text", ["", "a, 1", "0.001", "1000"])
def test_parse_epsilon_grid_refuses(text):
    with pytest.raises(ValueError):
        core.parse_epsilon_grid(text)


def test_ru_figure_orients_axes_and_carries_point_ids(sweep):
    fig = plots.ru_figure(sweep, "exact_copy_share", "pmse_ratio")
    names = [t.name for t in fig.data]
    assert names[0] == "Original data (not DP)" and "Bootstrap (not DP)" in names
    # pMSE ratio: lower is better, so the axis is reversed to put better up.
    assert fig.layout.yaxis.autorange == "reversed" and fig.layout.xaxis.autorange is None
    ind = fig.data[names.index("Independent noisy marginals")]
    # Mean of the two replicates at each ε, in ε order.
    part = sweep[sweep.method == "independent"]
    assert list(ind.y) == pytest.approx(list(part.groupby("epsilon")["pmse_ratio"].mean()))
    assert [row[0] for row in ind.customdata] == ["independent", "independent"]
    assert [float(row[1]) for row in ind.customdata] == [0.5, 4.0]


def test_user_text_is_never_html_in_figures():
    evil = "<b onmouseover=alert(1)>x</b>"
    real = pd.DataFrame({evil: ["<i>a</i>", "b", "b"]})
    hist = core.histogram_data(real, real, evil, categorical=True)
    fig = plots.histogram_figure(hist, evil)
    text = pio.to_json(fig)
    assert "<b onmouseover" not in text and "<i>a</i>" not in text
    assert "&lt;b onmouseover=alert(1)&gt;x&lt;/b&gt;" in json.loads(text)["layout"]["title"]["text"]
    assert "&lt;i&gt;a&lt;/i&gt;" in [str(x) for x in fig.data[0].x]


@pytest.mark.integration  # starts Chromium
def test_figure_png_renders_with_the_machines_chromium(sweep):
    # Debian's Chromium is installed for the browser tests, so kaleido can render here.
    png = plots.figure_png(plots.ru_figure(sweep, "exact_copy_share", "pmse_ratio"), scale=1)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_png_export_says_beforehand_when_it_cannot_work(monkeypatch):
    from choreographer.browsers.chromium import Chromium
    import shutil
    assert shutil.which("chromium")  # this machine has one, as the browser tests need
    assert plots.png_unavailable() is None
    monkeypatch.setattr(Chromium, "find_browser", staticmethod(lambda **kw: None))  # a server without one
    assert plots.png_unavailable() == plots.base.PNG_UNAVAILABLE
    assert "camera button" in plots.base.PNG_UNAVAILABLE


def _drawn(trace, at: np.ndarray) -> np.ndarray:
    """Height of a step line (shape "hv") at each point: that of the last drawn point at or left of it."""
    return np.asarray(trace.y)[np.searchsorted(np.asarray(trace.x), at, side="right") - 1]


def test_ecdf_figure_draws_a_short_curve_exactly():
    # Real 1,1,2,3,3,3 and synthetic 2,4; by hand, at 1, 2, 3, 4: real 2/6, 3/6, 1, 1; synthetic 0, 1/2, 1/2, 1.
    real, synth = pd.DataFrame({"v": [1, 1, 2, 3, 3, 3]}), pd.DataFrame({"v": [2, 4]})
    fig = plots.ecdf_figure(core.ecdf_data(real, synth, "v"), "v")
    at = np.array([1, 1.5, 2, 3, 3.9, 4])
    np.testing.assert_allclose(_drawn(fig.data[0], at), [2 / 6, 2 / 6, 3 / 6, 1, 1, 1])
    np.testing.assert_allclose(_drawn(fig.data[1], at), [0, 0, 1 / 2, 1 / 2, 1 / 2, 1])
    assert "drawn to within" not in fig.layout.title.text


def test_ecdf_figure_thins_a_long_curve_to_within_its_resolution():
    # 20,000 distinct real values 0..19,999, so F(x) = (floor(x) + 1) / 20,000 on [0, 19,999]; the synthetic
    # values are 5,000 of them plus a shift. Tolerance: step_points promises less than 1/2000 everywhere.
    rng = np.random.default_rng(5)
    real = pd.DataFrame({"v": np.arange(20_000.0)})
    synth = pd.DataFrame({"v": rng.choice(20_000, 5_000, replace=False) + 0.5})
    ecdf = core.ecdf_data(real, synth, "v")
    fig = plots.ecdf_figure(ecdf, "v")
    x = ecdf.table["x"].to_numpy()
    drawn_real = _drawn(fig.data[0], x)
    truth = np.minimum(np.floor(x) + 1, 20_000) / 20_000
    assert len(fig.data[0].x) <= plots.ECDF_LEVELS + 2 < len(x)
    assert np.abs(drawn_real - truth).max() < 1 / plots.ECDF_LEVELS
    kept = np.asarray(fig.data[0].x)  # every drawn point is a point of the true curve
    np.testing.assert_allclose(fig.data[0].y, (np.floor(kept) + 1) / 20_000)
    assert np.abs(_drawn(fig.data[1], x) - ecdf.table["synth"].to_numpy()).max() < 1 / plots.ECDF_LEVELS
    assert "drawn to within 0.05% of the height" in fig.layout.title.text
    # The KS distance still uses every value: scipy's two-sample statistic on the raw samples.
    from scipy.stats import ks_2samp
    assert ecdf.ks == pytest.approx(ks_2samp(real["v"], synth["v"]).statistic, abs=1e-12)
    assert abs(fig.data[2].y[0] - fig.data[2].y[1]) == pytest.approx(ecdf.ks, abs=1e-12)


def test_ru_figure_labels_line_ends_only_says_not_dp_and_rings_the_answer(penguins):
    grid = core.ru_map(penguins[0], ["independent", "cart"], [0.3, 1.0, 3.0], seed=3, schema=penguins[1],
                       metrics=["ks_mean", "dcr_median"])
    answer = core.frontier.smallest_epsilon(grid, "independent", "ks_mean", 1.0, "dcr_median")
    fig = plots.ru_figure(grid, "dcr_median", "ks_mean", answer=answer)
    by_name = {t.name: t for t in fig.data}
    # Three ε on the line, text only on its two ends; the middle one says its ε on hover.
    assert list(by_name["Independent noisy marginals"].text) == ["ε=0.3", "", "ε=3"]
    assert "ε = 1<br>" in by_name["Independent noisy marginals"].hovertext[1]
    cart = next(t for n, t in by_name.items() if n.startswith("Sequential CART"))
    assert cart.name.endswith("(not DP)") and "<br>not DP<br>" in cart.hovertext[0] and list(cart.text) == [""]
    assert "nan" not in pio.to_json(fig)
    # Every trace has its own label position, so labels of two lines do not stack.
    positions = [t.textposition for t in fig.data if t.mode and "text" in t.mode]
    assert len(positions) == len(set(positions))
    ring = by_name[f"answer: smallest ε = {answer['epsilon']:g}"]
    assert (ring.x[0], ring.y[0]) == (answer["risk"], answer["utility"])
    assert fig.layout.annotations[0].text == f"smallest ε = {answer['epsilon']:g}"
