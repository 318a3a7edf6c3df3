"""The Risk page (and the R-U map's risk axis) driven with AppTest: the numbers shown are the core's."""

import json

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import dpsynth_core as core
from tests.conftest import APP, no_errors as _no_errors

pytestmark = pytest.mark.integration  # the page tier: run by scripts/test.sh and CI, not a plain pytest

VERDICT_WORDS = ("no measurable disclosure beyond the baseline", "beyond the baseline")


@pytest.fixture
def at():
    return AppTest.from_file(APP, default_timeout=120).run()




def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _charts(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def _titles(at) -> list[str]:
    return [c["layout"]["title"]["text"] for c in _charts(at)]


def _texts(at) -> list[str]:
    return [e.value for e in [*at.markdown, *at.caption, *at.success, *at.info, *at.warning]]


def _expected_inputs(at):
    """The rows the synthesizer saw, the held-out rows and the synthesis, rebuilt from the core."""
    ds, cfg = at.session_state["dataset"], at.session_state["synth_config"]
    # The session keeps its holdout mask (fresh coins per record, issue 15), never a seed.
    mask = at.session_state["holdout_masks"][(ds.fingerprint, cfg.holdout)] if cfg.holdout else None
    train, held = core.holdout.split_holdout(ds.df, cfg.holdout, mask=mask)
    result = core.synthesize(train, cfg.method, epsilon=cfg.epsilon, schema=ds.schema, seed=cfg.seed,
                             columns=list(cfg.columns) if cfg.columns else None)
    used = ds.schema.used
    return ds, cfg, train[used], None if held is None else held[used], result.data[used]


def test_fully_synthetic_page_shows_key_match_measures_with_references(at):
    at.switch_page("pages/risk.py").run()
    _no_errors(at)
    assert any("fully synthetic" in t.value for t in at.markdown)
    ds, cfg, train, _, synth = _expected_inputs(at)
    keys, sensitive = list(ds.schema.keys), ds.schema.sensitive
    assert at.multiselect(key="risk_keys").value == keys and at.selectbox(key="risk_sensitive").value == sensitive
    stol = core.risk.default_sensitive_tolerance(sensitive, [train, synth], ds.schema)
    km = core.risk.key_match_disclosure(train, synth, keys, sensitive, schema=ds.schema, sensitive_tolerance=stol)
    shown = _metrics(at)
    assert shown["Key-match attribute disclosure"] == f"{km.share:.3f}"
    assert "Uniques reproduced" in shown and "Synthetic rows unique on the keys" in shown
    dr = core.risk.distance_risk(train, synth, schema=ds.schema, seed=cfg.seed)
    assert shown["Median DCR"] == f"{dr.estimates['dcr_median'].value:.4f}"
    ai = core.risk.attribute_inference(train, synth, keys, sensitive, schema=ds.schema, seed=cfg.seed)
    assert shown["Attribute inference RMSE"] == f"{ai.score:,.4g}"
    # No match rates on a fully synthetic release, and no membership attack without a holdout.
    assert "Expected match rate" not in shown and "Membership inference AUC" not in shown
    assert any("tick the holdout box" in i.value for i in at.info)
    # Every measure's sentence compares it with its baseline; each figure shows both references.
    verdicts = [t for t in _texts(at) if "baseline" in t and ":" in t]
    assert len(verdicts) >= 5 and all(any(w in v for w in VERDICT_WORDS) for v in verdicts)
    estimate_charts = [c for c in _charts(at) if len(c["data"]) >= 3 and c["data"][0]["y"] == ["this release"]]
    assert estimate_charts
    for chart in estimate_charts:
        rows = [t["y"][0] for t in chart["data"]]
        assert rows[-1] == "original data released as is" and any(r.startswith("baseline:") for r in rows)


def _hold_out(at, share: float = 0.2):
    """Hold out ``share`` of the rows on Synthesize (the one place it is set), then open Risk."""
    at.switch_page("pages/synthesize.py").run()
    at.selectbox(key="holdout").set_value(share).run()
    at.switch_page("pages/risk.py").run()


def test_holdout_control_reruns_synthesis_and_adds_membership_inference(at):
    _hold_out(at)
    _no_errors(at)
    assert at.session_state["synth_config"].holdout == 0.2
    ds, cfg, train, held, synth = _expected_inputs(at)
    # One coin per record (issue 15): the two sides partition the 344 penguins, and the held-out count is
    # Binomial(344, 0.2): mean 68.8, sd 7.4, so 4 sd = 30 rows of slack.
    assert len(train) + len(held) == 344 and abs(len(held) - 68.8) < 30
    dr = core.risk.distance_risk(train, synth, holdout=held, schema=ds.schema, seed=cfg.seed)
    assert _metrics(at)["Membership inference AUC"] == f"{dr.membership.auc:.3f}"
    assert any(t.startswith("Membership inference ROC") for t in _titles(at))
    dcr = next(c for c in _charts(at) if c["layout"]["title"]["text"].startswith("Distance to the closest"))
    assert [t["name"] for t in dcr["data"]] == ["records the synthesizer saw", "held-out records",
                                                 "baseline: random public-domain data"]
    assert any("held out" in t.value for t in at.markdown)  # the applicability sentence mentions the holdout
    # Another share, then off again.
    _hold_out(at, 0.3)
    _no_errors(at)
    assert at.session_state["synth_config"].holdout == 0.3
    assert any("30% of the rows are held out" in c.value for c in at.caption)
    _hold_out(at, 0.0)
    _no_errors(at)
    assert at.session_state["synth_config"].holdout == 0.0
    assert "Membership inference AUC" not in _metrics(at)


def test_partially_synthetic_with_holdout_shows_match_rates_and_per_record_table(at):
    at.switch_page("pages/synthesize.py").run()
    at.multiselect(key="synth_columns").set_value(["body_mass_g", "sex"]).run()
    _hold_out(at)
    _no_errors(at)
    assert any("partially synthetic" in t.value for t in at.markdown)
    ds, cfg, train, held, released = _expected_inputs(at)
    assert len(released) == len(train) == 344 - len(held)
    keys = list(ds.schema.keys)
    mr = core.risk.match_risk(train, released, keys, schema=ds.schema)
    shown = _metrics(at)
    assert shown["Expected match rate"] == f"{mr.rates.expected_share:.3f}"
    assert shown["True match rate"] == f"{mr.rates.true_rate:.3f}"
    assert "False match rate" in shown and "Membership inference AUC" in shown
    assert "Key-match attribute disclosure" not in shown
    table = at.dataframe[0].value
    assert list(table.columns[-3:]) == ["matches (c_j)", "own row among them (T_j)", "risk (T_j / c_j)"]
    assert table["matches (c_j)"].tolist() == mr.table["matches (c_j)"].tolist()


def test_categorical_sensitive_column_is_scored_by_accuracy(at):
    at.switch_page("pages/risk.py").run()
    at.multiselect(key="risk_keys").set_value(["island", "sex"]).run()
    at.selectbox(key="risk_sensitive").set_value("species").run()
    _no_errors(at)
    ds, cfg, train, _, synth = _expected_inputs(at)
    ai = core.risk.attribute_inference(train, synth, ["island", "sex"], "species", schema=ds.schema, seed=cfg.seed)
    assert ai.measure == "accuracy"
    assert _metrics(at)["Attribute inference accuracy"] == f"{ai.score:.3f}"
    assert any("majority class" in t for t in _texts(at))


def test_without_keys_only_distances_are_shown(at):
    at.switch_page("pages/risk.py").run()
    at.multiselect(key="risk_keys").set_value([]).run()
    _no_errors(at)
    assert any("Pick at least one key variable" in i.value for i in at.info)
    shown = _metrics(at)
    assert "Median DCR" in shown and "Key-match attribute disclosure" not in shown


def test_user_text_reaches_risk_page_only_escaped(at):
    link, tag = "[click](http://example.invalid)", "<img src=x onerror=alert(1)>"
    # 400 rows: the default synthesis releases a noisy row count (ε = 0.05 of it, scale 20), which on a table
    # of 40 rows can leave a single synthetic row, too few for the inference model
    df = pd.DataFrame({link: [1.5, 2.5, 3.5, 4.5] * 100, tag: list("xyzw") * 100, "k": list("ab") * 200})
    at.file_uploader(key="uploader").set_value(("<b>name</b>.csv", core.to_csv_bytes(df), "text/csv")).run()
    at.switch_page("pages/risk.py").run()
    at.multiselect(key="risk_keys").set_value(["k", link]).run()
    at.selectbox(key="risk_sensitive").set_value(tag).run()
    _no_errors(at)
    assert "Attribute inference accuracy" in _metrics(at)
    for text in _texts(at):
        assert link not in text and tag not in text
    assert any(r"\[click\]\(http://example\.invalid\)" in t for t in _texts(at))
    # Plotly renders HTML, not Markdown: the tag must arrive escaped in every figure.
    for chart in _charts(at):
        assert "<img" not in json.dumps(chart)
    assert any("&lt;img src=x onerror=alert(1)&gt;" in t for t in _titles(at))


@pytest.mark.parametrize("x, holdout", [("key_match_disclosure", 0.0), ("attribute_rmse", 0.0), ("mia_auc", 0.2)])
def test_ru_map_plots_the_new_risk_measures(at, x, holdout):
    at.switch_page("pages/ru_map.py").run()
    at.text_input(key="ru_grid").set_value("1").run()
    at.multiselect(key="ru_methods").set_value(["independent"]).run()
    at.selectbox(key="ru_x").set_value(x).run()
    at.select_slider(key="ru_holdout").set_value(holdout).run()
    at.button(key="ru_run").click().run()
    _no_errors(at)
    table, _, swept_holdout = at.session_state["ru_result"]
    assert swept_holdout == holdout and table[x].notna().all()
    assert json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]["xaxis"]["title"]["text"] == \
        f"{core.METRICS[x].label} (risk)"


def test_distance_measures_on_a_subsample_say_its_size(at, monkeypatch):
    # A million-row table took 17 s to measure: above the cap, a random subsample of the real records is
    # measured against every synthetic record, and the page says how many (penguins under a cap of 100).
    monkeypatch.setattr(core.constraints, "RISK_DISTANCE_MAX_ROWS", 100)
    at.switch_page("pages/risk.py").run()
    _no_errors(at)
    ds, cfg, train, _, synth = _expected_inputs(at)
    full = core.risk.distance_risk(train, synth, schema=ds.schema, seed=cfg.seed)
    sub = core.risk.distance_risk(train, synth, schema=ds.schema, seed=cfg.seed, max_rows=100)
    assert sub.measured == (100, 344) and full.measured is None and len(sub.dcr_train) == 100
    # Each measured record's DCR is exact: the subsample's distances are some of the full run's.
    assert np.isin(sub.dcr_train, full.dcr_train).all()
    assert _metrics(at)["Median DCR"] == f"{np.median(sub.dcr_train):.4f}"
    assert any("random subsample of 100 of the 344 records" in c.value
               and f"all {len(synth):,} synthetic" in c.value for c in at.caption)
    # At or above the table's size, max_rows changes nothing.
    same = core.risk.distance_risk(train, synth, schema=ds.schema, seed=cfg.seed, max_rows=344)
    assert same.measured is None and np.array_equal(same.dcr_train, full.dcr_train)


def test_page_opens_with_one_line_on_every_verdict_and_no_alarm_without_a_holdout(at):
    # An ε = 1 DP synthesis of the penguins, no rows held out (issue 20.4).
    at.switch_page("pages/risk.py").run()
    _no_errors(at)
    ds, cfg, train, _, synth = _expected_inputs(at)
    keys, sensitive = list(ds.schema.keys), ds.schema.sensitive
    stol = core.risk.default_sensitive_tolerance(sensitive, [train, synth], ds.schema)
    kw = dict(schema=ds.schema, sensitive_tolerance=stol)
    estimates = [core.risk.key_match_disclosure(train, synth, keys, sensitive, **kw).estimate,
                 core.risk.unique_reproduction(train, synth, keys, sensitive, **kw).estimate,
                 *[core.risk.distance_risk(train, synth, schema=ds.schema, seed=cfg.seed).estimates[m]
                   for m in ("exact_copy_share", "dcr_median")],
                 core.risk.attribute_inference(train, synth, keys, sensitive, schema=ds.schema, seed=cfg.seed).estimate]
    line = core.risk.verdict_summary(estimates)
    boxes = [*at.success, *at.info, *at.warning]
    first = next(b for b in boxes if b.value.startswith("Verdicts on"))
    assert first.value.startswith(line)
    # Nothing on this page calls an ε = 1 synthesis "measurable disclosure" without held-out records.
    assert not any("measurable disclosure." in b.value for b in boxes), [b.value for b in at.warning]
    # The summary is drawn right after the title, above the formal guarantee.
    texts = [e.value for e in at.main if hasattr(e, "value") and isinstance(e.value, str)]
    assert texts.index(first.value) < texts.index("Formal guarantee")
