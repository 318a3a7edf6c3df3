"""The Compare page (AppTest): every discriminator runs, the new elements show, gaps are said, user text stays inert."""

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import dpsynth_core as core
from dpsynth_core.utility import COMBINING_CAVEAT, DISCRIMINATORS
from tests.conftest import APP

pytestmark = pytest.mark.integration  # the page tier: run by scripts/test.sh and CI, not a plain pytest

PAGE = "pages/compare.py"


@pytest.fixture
def at():
    return AppTest.from_file(APP, default_timeout=90).run()


def _ok(at):
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _titles(at) -> list[str]:
    return [json.loads(c.proto.spec)["layout"].get("title", {}).get("text", "") for c in at.get("plotly_chart")]


def _charts(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _real_synth(at):
    """The data the page compares, rebuilt from the session as the page does."""
    ds, cfg = at.session_state["dataset"], at.session_state["synth_config"]
    res = core.synthesize(ds.df, cfg.method, epsilon=cfg.epsilon, schema=ds.schema, seed=cfg.seed,
                          implicates=cfg.implicates)
    return ds, cfg, ds.df[ds.schema.used], res.data[ds.schema.used]


@pytest.mark.parametrize("choice", list(DISCRIMINATORS))
def test_each_discriminator_runs_and_its_tiles_match_the_core(at, choice):
    at.switch_page(PAGE).run()
    at.radio(key="compare_discriminator").set_value(choice).run()
    _ok(at)
    ds, cfg, real, synth = _real_synth(at)
    cats = [c for c in ds.schema.used if ds.schema[c].kind == "categorical"]
    expected = core.utility.run_discriminator(real, synth, choice, seed=cfg.seed, permutations=10, categorical=cats)
    shown = _metrics(at)
    variant = core.utility.discriminator_variant(choice)
    for tile in core.utility.propensity_tiles(expected, variant=variant):
        assert shown[tile.label] == tile.text
    # Only the headline's figure is called plainly "pMSE ratio"; another discriminator's carries its name.
    assert ("pMSE ratio" in shown) == (variant is None)
    titles = _titles(at)
    assert any(t.startswith("Propensity scores") for t in titles)
    assert any(t.startswith("ROC of the discriminator") for t in titles)
    captions = " ".join(c.value for c in at.caption)
    # Each tile has its one-line reading on the page, the pMSE ratio's with its thresholds.
    assert "under 3 is good, under 10 acceptable" in captions
    blind = [w.value for w in at.warning if "blind to lost associations" in w.value]
    assert bool(blind) == (choice == "logit_main")


def test_new_elements_show(at):
    at.switch_page(PAGE).run()
    _ok(at)
    titles = _titles(at)
    for start in ("Missing values", "Difference of correlation matrices", "Difference of Cramér's V matrices",
                  "Confidence intervals", "What gives the synthesis away", "Distribution of"):
        assert any(t.startswith(start) for t in titles), (start, titles)
    shown = _metrics(at)
    for name in ("ks_mean", "tv_mean", "hellinger_mean", "corr_mae", "corr_rmse", "cramers_v_mae",
                 "pegs_marginal", "pegs_conditional", "ci_overlap_mean", "sso", "coef_distance"):
        assert core.METRICS[name].label in shown, name
    ds, cfg, real, synth = _real_synth(at)
    cats = [c for c in ds.schema.used if ds.schema[c].kind == "categorical"]
    fit = core.correlation_fit(real, synth, categorical=cats)
    assert shown[core.METRICS["corr_mae"].label] == f"{fit.mae:.4g}"
    frames = [d.value for d in at.dataframe]
    moments = [f for f in frames if "kurtosis" in f.columns]
    assert moments and moments[0].loc[("body_mass_g", "real"), "mean"] == pytest.approx(real["body_mass_g"].mean())
    distances = [f for f in frames if {"ks", "tv", "hellinger"} <= set(f.columns)]
    assert distances and distances[0].loc["species", "tv"] == pytest.approx(
        core.column_distances(real, synth, categorical=cats).loc["species", "tv"])


def test_small_multiples_and_held_out(at):
    at.switch_page(PAGE).run()
    at.toggle(key="compare_small_multiples").set_value(True).run()
    _ok(at)
    assert any(t.startswith("Every column") for t in _titles(at))
    at.toggle(key="compare_heldout").set_value(True).run()
    _ok(at)
    ds, cfg, real, synth = _real_synth(at)
    cats = [c for c in ds.schema.used if ds.schema[c].kind == "categorical"]
    expected = core.utility.run_discriminator(real, synth, "logit_interactions", seed=cfg.seed, holdout=0.3,
                                              categorical=cats)
    assert _metrics(at)[core.METRICS["auc"].label + " (held-out rows)"] == f"{expected.auc:.4g}"
    assert any("held-out rows" in c.value for c in at.caption)
    assert any(t.startswith("Propensity scores (held-out rows") for t in _titles(at))


def test_gaps_are_said_not_silent(at):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"age": rng.integers(18, 90, 60).astype(float), "flat": [2.5] * 60,
                       "g": rng.choice(list("abc"), 60)})
    at.file_uploader(key="uploader").set_value(("x.csv", core.to_csv_bytes(df), "text/csv")).run()
    at.switch_page(PAGE).run()
    _ok(at)
    warnings = " ".join(w.value for w in at.warning)
    assert "flat: moments" in warnings and "constant in the synthetic data" in warnings
    # One categorical column: Cramér's V cannot be computed, and the page says why.
    assert _metrics(at)[core.METRICS["cramers_v_mae"].label] == "not computed"
    assert "needs two categorical columns" in warnings


def test_implicates_are_combined_with_the_caveat(at):
    at.switch_page("pages/synthesize.py").run()
    at.number_input(key="implicates").set_value(3).run()
    at.switch_page(PAGE).run()
    _ok(at)
    infos = " ".join(i.value for i in at.info)
    assert "Charest" in infos and "fully synthetic" in infos
    assert any("implicate 1 of 3" in c.value for c in at.caption)
    assert any("between_b" in d.value.columns for d in at.dataframe)
    assert COMBINING_CAVEAT.startswith("Combined by Reiter")


def test_partial_synthesis_uses_the_partially_synthetic_rule(at):
    at.switch_page("pages/synthesize.py").run()
    at.multiselect(key="synth_columns").set_value(["body_mass_g", "sex"]).run()
    at.number_input(key="implicates").set_value(2).run()
    at.switch_page(PAGE).run()
    _ok(at)
    assert any("partially synthetic" in i.value for i in at.info)


def test_user_text_stays_inert_on_compare(at):
    link, tag = "[click](http://example.invalid)", "<img src=x onerror=alert(1)>"
    rng = np.random.default_rng(1)
    df = pd.DataFrame({link: rng.normal(size=40), tag: rng.choice(["x", "<b>y</b>"], 40),
                       "n": rng.normal(size=40)})
    at.file_uploader(key="uploader").set_value(("d.csv", core.to_csv_bytes(df), "text/csv")).run()
    at.switch_page(PAGE).run()
    at.toggle(key="compare_small_multiples").set_value(True).run()
    _ok(at)
    texts = [e.value for e in [*at.markdown, *at.warning, *at.info, *at.caption, *at.subheader, *at.error]]
    assert not any(link in t or tag in t or "<b>y</b>" in t for t in texts)
    specs = [chart.proto.spec for chart in at.get("plotly_chart")]
    assert not any("<img" in s or "<b>y</b>" in s or "u003cimg" in s for s in specs)
    # ...but the names and levels are there, escaped, so plotly shows them literally.
    assert any("&lt;img" in s for s in specs) and any("&lt;b&gt;y&lt;" in s for s in specs)


def test_tables_show_empty_cells_and_fit_and_plots_read_well(at):
    # Issue 20.6: no "None" in a table, the moments split so the percentiles are not scrolled away, the
    # categories in their declared order, a legend on the small multiples, the intervals on one scaled axis.
    at.switch_page(PAGE).run()
    _ok(at)
    import pyarrow as pa
    frames = [d.value for d in at.dataframe]
    distances = next(f for f in frames if {"ks", "tv"} <= set(f.columns))
    assert distances.isna().to_numpy().any()  # there are empty cells to show
    styled = [t for t in at.dataframe if {"ks", "kurtosis", "p50"} & set(t.value.columns)]
    assert len(styled) == 3
    for table in at.dataframe:  # the browser shows a missing cell as "None" unless the placeholder says ""
        assert table.proto.HasField("placeholder") and table.proto.placeholder == ""
    for table in styled:
        assert table.proto.arrow_data.HasField("styler")  # distances, moments, percentiles go through blank_na
        shown = pa.ipc.open_stream(table.proto.arrow_data.styler.display_values).read_all().to_pandas()
        cells = {str(v) for v in shown.to_numpy().ravel()}
        assert not cells & {"None", "nan", "NaN", "<NA>"}, cells
    shown = pa.ipc.open_stream(at.dataframe[0].proto.arrow_data.styler.display_values).read_all().to_pandas()
    assert shown.loc["species", "ks"] == "" and shown.loc["species", "tv"] == f"{distances.loc['species', 'tv']:.4g}"
    moments = next(f for f in frames if "kurtosis" in f.columns)
    percentiles = next(f for f in frames if "p50" in f.columns)
    assert "p50" not in moments.columns and "kurtosis" not in percentiles.columns
    assert list(percentiles.index) == list(moments.index)
    # A schema whose declared orders are not alphabetical: species reversed, years newest first.
    ds = at.session_state["dataset"]
    declared = ds.schema.to_dict()
    declared["species"]["categories"] = ["Gentoo", "Chinstrap", "Adelie"]
    declared["year"]["categories"] = [2009, 2008, 2007]
    at.session_state["dataset"] = dataclasses.replace(ds, schema=core.Schema.from_dict(declared))
    at.selectbox(key="compare_column").set_value("year").run()
    _ok(at)
    ds = at.session_state["dataset"]
    hist = next(c for c in _charts(at) if c["layout"]["title"]["text"].startswith("Distribution of year"))
    assert hist["data"][0]["x"] == ["2009", "2008", "2007"]
    at.toggle(key="compare_small_multiples").set_value(True).run()
    grid = next(c for c in _charts(at) if c["layout"]["title"]["text"].startswith("Every column"))
    assert [t["name"] for t in grid["data"] if t.get("showlegend")] == ["real", "synthetic"]
    species = [t for t in grid["data"] if t["xaxis"] == "x"][0]
    assert species["x"] == ["Gentoo", "Chinstrap", "Adelie"]
    ci = next(c for c in _charts(at) if c["layout"]["title"]["text"].startswith("Confidence intervals"))
    # One shared axis, each coefficient a labelled row, scaled by its real interval (tests/core: by hand).
    assert {t.get("xaxis", "x") for t in ci["data"]} == {"x"} and len(ci["layout"]["yaxis"]["ticktext"]) >= 2


def test_a_regression_beyond_the_cell_budget_says_its_subsample(at, monkeypatch):
    # A million rows × many coefficients passes the design budget: the regression is fitted on a random
    # subsample, and the page says how many rows. Here penguins' default model (body_mass_g on the next
    # three columns) with a budget of 100 rows' worth of cells.
    ds = at.session_state["dataset"]
    outcome = next(iter(core.utility.regression_outcomes(ds.schema, ds.schema.used)))
    predictors = [c for c in ds.schema.used if c != outcome][:3]
    terms = 1 + sum(1 if ds.schema[c].kind == "numeric" else len(ds.schema[c].categories) - 1
                    for c in predictors)
    monkeypatch.setattr(core.constraints, "REGRESSION_MAX_CELLS", 100 * terms)
    at.switch_page(PAGE).run()
    _ok(at)
    assert at.selectbox(key="reg_outcome").value == outcome and at.multiselect(key="reg_predictors").value == predictors
    notes = [c.value for c in at.caption if "random subsample of 100 rows of each dataset" in c.value]
    assert notes, [c.value for c in at.caption]


def test_the_verdict_comes_first_and_reads_the_headline_and_every_section(at):
    # Issue 31.10: the verdict on top, each section a tab a click away.
    at.switch_page(PAGE).run()
    _ok(at)
    ds, cfg, real, synth = _real_synth(at)
    cats = [c for c in ds.schema.used if ds.schema[c].kind == "categorical"]
    head = core.utility.headline_propensity(real, synth, seed=cfg.seed, categorical=cats)
    level = core.utility.pmse_ratio_level(head.pmse_ratio)
    alerts = {"good": at.success, "fair": at.info, "poor": at.warning}[level]
    verdict = next(a.value for a in alerts if "pMSE ratio" in a.value).replace("\\", "")  # plain() escapes markdown
    assert f"pMSE ratio {head.pmse_ratio:.3g} on {head.n_used:,} stacked rows" in verdict
    assert "Columns:" in verdict and "Regression of" in verdict
    assert [t.label for t in at.tabs][:4] == [core.metric_info.section_title(s)
                                              for s in ("propensity", "marginals", "bivariate", "regression")]


def test_special_values_show_their_shares_real_against_synthetic(at):
    at.selectbox(key="bundled_choice").set_value("randhie").run()
    at.switch_page(PAGE).run()
    _ok(at)
    ds, cfg, real, synth = _real_synth(at)
    shown = next(df.value for df in at.dataframe if list(getattr(df.value, "columns", [])) ==
                 ["column", "value", "real", "synthetic", "difference"])
    expected = core.utility.special_value_shares(real, synth, ds.schema)
    # randhie declares 0 for mdvis, lncoins, lpi and fmde, and 0 and 1 for physlm; the data's shares by hand
    assert list(zip(shown["column"], shown["value"])) == [("mdvis", 0.0), ("lncoins", 0.0), ("lpi", 0.0),
                                                          ("fmde", 0.0), ("physlm", 0.0), ("physlm", 1.0)]
    assert shown["real"].round(3).tolist() == [round((ds.df[c] == v).mean(), 3) for c, v in
                                               zip(shown["column"], shown["value"])]
    pd.testing.assert_frame_equal(shown.reset_index(drop=True), expected)
