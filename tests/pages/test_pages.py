"""Page tests with Streamlit's AppTest: each page runs, reads the core, and reacts to widgets."""

import json
import math

import numpy as np
import pandas as pd
import pytest

import dpsynth_core as core
from tests.conftest import entries, eps_input, eps_slider
from tests.conftest import no_errors as _no_errors
from dpsynth_core.settings import RunSettings

pytestmark = pytest.mark.integration  # the page tier: run by scripts/test.sh and CI, not a plain pytest

PAGES = ["pages/data.py", "pages/synthesize.py", "pages/compare.py", "pages/risk.py", "pages/ru_map.py",
         "pages/ledger.py"]


def _csv(df: pd.DataFrame) -> bytes:
    return core.to_csv_bytes(df)


def test_changing_epsilon_changes_ledger(at):
    at.switch_page("pages/synthesize.py").run()
    at.checkbox(key="fixed_seed").uncheck().run()  # fresh randomness: the run can be DP (issue 15)
    eps_input(at).set_value(4.0).run()
    _no_errors(at)
    assert at.session_state["synth_config"].epsilon == 4.0
    assert eps_slider(at).value == pytest.approx(3.98)  # nearest step of the log slider
    # 1 < ε ≤ 10: a DP run shown as information, not as a green success (statement_tone).
    statements = [s.value.replace("\\", "") for s in at.info]  # drop Markdown escapes
    # e^4 = 54.598...: the ledger states the probability-ratio bound for the new ε.
    assert any("ε = 4" in s and "e^ε = 54.60" in s for s in statements), statements
    assert not at.success


def test_the_ledger_store_records_the_total_epsilon_of_a_per_record_method(at, ledger_store):
    # Issue 15: the session ledger logged "pegs 0.1" for a synthesis whose own ledger said ε ≈ 2,200.
    at.switch_page("pages/synthesize.py").run()
    at.selectbox(key="method").set_value("pegs").run()
    eps_input(at).set_value(2.0).run()
    _no_errors(at)
    entry = entries(ledger_store)[-1]
    assert (entry["method"], entry["epsilon"]) == ("pegs", pytest.approx(2.0, rel=1e-12))
    # Beside the slider: about (2 − 0.1)/344 per record before the noisy count (344 penguins).
    assert any(f"ε = {1.9 / 344:.3g} per synthetic record" in c.value for c in at.caption)


def test_statement_tone_follows_seed_and_epsilon(at):
    # Issue 15: a seeded run is exploration, not DP; a DP run with ε above 10 is never a green success.
    at.switch_page("pages/synthesize.py").run()
    assert at.session_state["synth_config"].fixed_seed is True  # exploration keeps a seed by default
    assert any("reproducible exploration, not DP" in w.value.replace("\\", "") for w in at.warning)
    assert not at.success
    at.checkbox(key="fixed_seed").uncheck().run()
    eps_input(at).set_value(20.0).run()
    _no_errors(at)
    assert not at.success
    text = [w.value.replace("\\", "") for w in at.warning]
    assert any(f"e^ε = {math.exp(20):,.0f}: the guarantee is very weak" in t for t in text), text
    eps_input(at).set_value(0.5).run()
    assert any(f"e^ε = {math.exp(0.5):,.2f}" in s.value.replace("\\", "") for s in at.success)
    # The seed is nowhere in the link of a fresh-randomness run.
    assert "seed" not in at.query_params


def test_synthesize_widgets_default_to_the_session_values(at):
    # A browser that draws a widget only after a later rerun starts it from the element's default and sends
    # that back: under a class's load this once replaced a session's method, seed and columns.
    at.switch_page("pages/synthesize.py").run()
    at.number_input(key="seed").set_value(7).run()
    at.selectbox(key="method").set_value("dirichlet").run()
    at.multiselect(key="synth_columns").set_value(["species", "sex"]).run()
    at.number_input(key="implicates").set_value(3).run()
    _no_errors(at)
    assert at.number_input(key="seed").proto.default == 7
    assert at.number_input(key="implicates").proto.default == 3
    assert at.selectbox(key="method").proto.default == list(core.SYNTHESIZERS).index("dirichlet")
    columns = at.session_state["dataset"].schema.used
    assert [columns[i] for i in at.multiselect(key="synth_columns").proto.default] == ["species", "sex"]


def test_slider_moves_exact_input(at):
    at.switch_page("pages/synthesize.py").run()
    eps_slider(at).set_value(10.0).run()
    _no_errors(at)
    assert eps_input(at).value == 10.0
    assert at.session_state["synth_config"].epsilon == 10.0


def test_non_dp_method_says_not_dp(at):
    at.switch_page("pages/synthesize.py").run()
    at.selectbox(key="method").set_value("cart").run()
    _no_errors(at)
    assert any("not differentially private" in w.value for w in at.warning)


def test_compare_tiles_match_core(at):
    at.switch_page("pages/compare.py").run()
    _no_errors(at)
    ds, cfg = at.session_state["dataset"], at.session_state["synth_config"]
    synth = core.synthesize(ds.df, cfg.method, epsilon=cfg.epsilon, schema=ds.schema, seed=cfg.seed)
    cats = [c for c in ds.schema.used if ds.schema[c].kind == "categorical"]  # year is declared categorical
    prop = core.utility.headline_propensity(ds.df[ds.schema.used], synth.data[ds.schema.used], seed=cfg.seed,
                                            categorical=cats)
    shown = {m.label: m.value for m in at.metric}
    assert shown[core.METRICS["pmse_ratio"].label] == f"{prop.pmse_ratio:.4g}"
    assert shown[core.METRICS["auc"].label] == f"{prop.auc:.4g}"
    charts = at.get("plotly_chart")
    assert charts, "histogram missing"
    spec = json.loads(charts[0].proto.spec)
    assert [t["name"] for t in spec["data"]] == ["real", "synthetic"]


def test_partial_synthesis_shows_match_rates(at):
    at.switch_page("pages/synthesize.py").run()
    at.multiselect(key="synth_columns").set_value(["body_mass_g", "sex"]).run()
    at.switch_page("pages/risk.py").run()
    _no_errors(at)
    labels = [m.label for m in at.metric]
    assert "Expected match rate" in labels and "True match rate" in labels


def test_ru_map_sweep_records_its_syntheses_and_answers_the_threshold(at, ledger_store):
    at.switch_page("pages/ru_map.py").run()
    at.multiselect(key="ru_methods").set_value(["independent", "cart"]).run()
    at.text_input(key="ru_grid").set_value("0.5, 5").run()
    assert "ru_cancel" not in [b.key for b in at.button]  # nothing runs: no Cancel
    at.button(key="ru_run").click().run()
    _no_errors(at)
    assert "ru_cancel" not in [b.key for b in at.button]  # the sweep has ended: Cancel is gone again
    table, public, holdout = at.session_state["ru_result"]
    assert not public and holdout == 0.0
    dp = table[table["method"] == "independent"]
    assert sorted(dp["epsilon"]) == [0.5, 5.0]
    assert {"original", "bootstrap", "cart"} <= set(table["method"])
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert spec["layout"]["xaxis"]["title"]["text"].endswith("(risk)")
    # The page states the samples the measures used, as the table records them.
    assert {"propensity_rows", "dcr_rows"} <= set(table.columns)
    assert core.rumap.sample_note(table) in [c.value for c in at.caption]
    # Every synthesis of the confidential data in the sweep is recorded: 2 DP points + cart + bootstrap.
    sweep_log = [e for e in entries(ledger_store) if e["purpose"] == "sweep point"]
    assert sorted((e["method"], e["epsilon"]) for e in sweep_log) == [
        ("bootstrap", None), ("cart", None), ("independent", 0.5), ("independent", 5.0)]
    assert not any(e["is_dp"] for e in sweep_log) and all(e["seeded"] for e in sweep_log)  # exploration (issue 15)
    # The steward's question, answered by the core from this sweep.
    # The risk axis defaults to the median DCR (issue 20.3); the threshold's key names measure and method.
    at.number_input(key="ru_q_threshold_pmse_ratio_independent").set_value(1e6).run()
    expected = core.frontier.smallest_epsilon(table, "independent", "pmse_ratio", 1e6, "dcr_median")
    assert expected["epsilon"] == 0.5
    # Green only at a pMSE ratio the app calls acceptable (under 10); a warning says so otherwise.
    boxes = at.success if expected["acceptable"] else at.warning
    assert any(s.value.startswith(expected["sentence"]) and "0.5 is the lowest ε in this grid" in s.value
               for s in boxes)
    labels = [b.label for b in at.get("download_button")]
    assert "Figure (interactive HTML)" in labels and "Sweep table (CSV)" in labels


def test_ru_map_on_a_public_lookalike_is_not_recorded(at, ledger_store):
    public = pd.read_csv(core.datasets.DATA_DIR / "penguins.csv").sample(150, random_state=1)
    at.switch_page("pages/ru_map.py").run()
    at.radio(key="ru_source").set_value("a public look-alike file").run()
    at.file_uploader(key="ru_public_file").set_value(("public.csv", _csv(public), "text/csv")).run()
    at.text_input(key="ru_grid").set_value("1").run()
    at.button(key="ru_run").click().run()
    _no_errors(at)
    table, swept_public, _ = at.session_state["ru_result"]
    # original + every DP method the suggestion may name (the registry's facts, picker order) at ε = 1 + bootstrap
    suggestible = [m for m, s in core.SYNTHESIZERS.items() if s.is_dp and s.suggest_priority is not None]
    assert swept_public and list(table["method"]) == ["original", *suggestible, "bootstrap"]
    assert entries(ledger_store) == []


def test_user_text_reaches_markdown_only_escaped(at):
    link, tag = "[click](http://example.invalid)", "<img src=x onerror=alert(1)>"
    df = pd.DataFrame({link: [1.5, 2.5, 3.5] * 10, tag: list("xyz") * 10})
    at.file_uploader(key="uploader").set_value(("<b>name</b>.csv", _csv(df), "text/csv")).run()
    _no_errors(at)
    texts = [e.value for e in [*at.markdown, *at.warning, *at.subheader, *at.caption, *at.error, *at.success]]
    for raw in (link, tag, "<b>name</b>"):
        assert not any(raw in t for t in texts), raw
    # ...but the names are there, escaped, so Markdown shows them literally.
    assert any(r"\[click\]\(http://example\.invalid\)" in t for t in texts)
    for page in PAGES[1:4]:
        at.switch_page(page).run()
        _no_errors(at)
        texts = [e.value for e in [*at.markdown, *at.warning, *at.subheader, *at.caption, *at.success]]
        assert not any(link in t or tag in t for t in texts), page


def test_method_options_reach_the_synthesis(at):
    at.switch_page("pages/synthesize.py").run()
    at.selectbox(key="method").set_value("pegs_rs").run()
    _no_errors(at)
    # The slider is the release's total ε for every method (issue 15); the per-record unit follows the
    # method in the caption beside it: a block of B records for block PeGS.
    assert eps_slider(at).label == "Total privacy budget ε of the release (log scale)"
    assert any("per block of 10 synthetic records" in c.value for c in at.caption)
    at.number_input(key="opt_pegs_rs_block").set_value(5).run()
    _no_errors(at)
    assert at.session_state["synth_config"].params == (("block", 5),)
    assert any("per block of 5 synthetic records" in c.value for c in at.caption)
    at.selectbox(key="opt_pegs_rs_ranking").set_value("data").run()
    assert any("mutual information on the data" in w.value.replace("\\\\", "") for w in at.warning)


def test_data_page_sets_key_variables_and_the_sensitive_column(at):
    fp = at.session_state["dataset"].fingerprint[:12]
    at.multiselect(key=f"keys_{fp}").set_value(["island", "year"]).run()
    at.selectbox(key=f"sensitive_{fp}").set_value("sex").run()
    _no_errors(at)
    schema = at.session_state["dataset"].schema
    assert schema.keys == ("island", "year") and schema.sensitive == "sex"
    # Roles change no domain: the bundled schema stays public, so DP stays possible.
    assert schema.is_public


def test_a_refused_synthesis_says_why_and_the_page_recovers(at):
    # Dirichlet on penguins' full table with 100 bins per numeric column: billions of cells, over the
    # method's cap of 10⁶, so the core refuses it with one sentence.
    at.switch_page("pages/synthesize.py").run()
    at.selectbox(key="method").set_value("dirichlet").run()
    _no_errors(at)
    at.number_input(key="opt_dirichlet_bins").set_value(100).run()
    assert not at.exception and len(at.error) == 1
    assert "over the Dirichlet–multinomial cap of 1,000,000" in at.error[0].value
    assert not at.get("download_button")  # the page stops at the sentence: nothing to download
    at.number_input(key="opt_dirichlet_bins").set_value(3).run()
    _no_errors(at)
    assert [b.label for b in at.get("download_button")] == ["Download synthetic CSV", "Download ledger (JSON)",
                                                            "Download settings (JSON, for the dpsynth command)"]


def test_switching_datasets_keeps_method_epsilon_and_seed_where_they_apply(at):
    # Issue 31.9: choosing another table reset method, ε and seed. They carry over; the columns and the declared
    # row count were the last table's and start afresh.
    at.switch_page("pages/synthesize.py").run()
    at.selectbox(key="method").set_value("mst").run()
    eps_input(at).set_value(2.0).run()
    at.number_input(key="seed").set_value(7).run()
    at.checkbox(key="n_declared").check().run()
    at.number_input(key="n_rows").set_value(100).run()
    _no_errors(at)
    cfg = at.session_state["synth_config"]
    assert (cfg.method, cfg.epsilon, cfg.seed, cfg.columns, cfg.n) == ("mst", 2.0, 7, None, 100)
    at.switch_page("pages/data.py").run()
    at.selectbox(key="bundled_choice").set_value("diamonds").run()
    cfg = at.session_state["synth_config"]
    assert at.session_state["dataset"].name == "diamonds"
    assert (cfg.method, cfg.epsilon, cfg.seed, cfg.columns, cfg.n) == ("mst", 2.0, 7, None, None)
    at.switch_page("pages/synthesize.py").run()
    _no_errors(at)
    assert at.selectbox(key="method").value == "mst" and eps_input(at).value == 2.0
    assert at.number_input(key="seed").value == 7 and not at.checkbox(key="n_declared").value
    assert at.session_state["synth_config"].method == "mst"  # the widgets drawn did not put anything back
    # A method that refuses the new table gives way to the default; ε and seed still carry over. Dirichlet keeps
    # the full table: 5 columns of 20 categories are 3.2 million cells, over its million.
    at.selectbox(key="method").set_value("dirichlet").run()
    at.multiselect(key="synth_columns").set_value(["cut", "price"]).run()
    _no_errors(at)
    assert at.session_state["synth_config"].columns == ("cut", "price")
    rng = np.random.default_rng(0)
    wide = pd.DataFrame({f"c{j}": rng.choice([f"v{k}" for k in range(20)], 400) for j in range(5)})
    assert math.prod(len(set(wide[c])) for c in wide) > core.SYNTHESIZERS["dirichlet"].max_cells
    at.switch_page("pages/data.py").run()
    at.file_uploader(key="uploader").set_value(("wide.csv", _csv(wide), "text/csv")).run()
    cfg = at.session_state["synth_config"]
    assert (cfg.method, cfg.epsilon, cfg.seed, cfg.columns) == (RunSettings().method, 2.0, 7, None)


def test_ru_map_defaults_sweep_the_suggested_dp_methods_and_never_answer_green_at_a_poor_utility(at):
    # Issue 31.2: the map swept Independent and Sequential CART (not DP) by default, and its threshold (halfway
    # between the best and worst point) made "smallest ε = 1" the green answer at a pMSE ratio the app calls poor.
    ds = at.session_state["dataset"]
    at.switch_page("pages/ru_map.py").run()
    _no_errors(at)
    suggestible = [m for m, s in core.SYNTHESIZERS.items() if s.is_dp and s.suggest_priority is not None]
    assert {"mst", "independent"} <= set(suggestible) and "cart" not in suggestible  # DP methods only
    assert at.multiselect(key="ru_methods").value == suggestible
    assert core.suggest_method(ds.schema, 1.0).method in suggestible
    # A sweep of the suggested method whose pMSE ratios are all poor (the 24.5 among them), as the page
    # would hold it: the answer may not be green, whatever threshold is typed.
    table = core.ru_map(ds.df, ["mst"], [0.1, 1.0, 10.0], schema=ds.schema, seed=1, references=False,
                        metrics=["pmse_ratio", "dcr_median"])
    table["pmse_ratio"] = [40.0, 24.5, 12.0]
    at.session_state["ru_result"] = (table, False, 0.0)
    at.run()
    _no_errors(at)
    assert at.selectbox(key="ru_q_method").value == "mst"  # the suggested method is asked first
    box = at.number_input(key="ru_q_threshold_pmse_ratio_mst")
    assert box.value == core.constraints.PMSE_RATIO_ACCEPTABLE == 10.0
    assert any("starts at 10, the pMSE ratio this app calls acceptable" in c.value for c in at.caption)
    assert not at.success
    assert any(w.value.startswith("MST (spanning tree of noisy 2-way marginals) does not reach pMSE ratio 10")
               for w in at.warning)
    box.set_value(30.0).run()  # a looser threshold is answered, in a warning that names the level
    assert not at.success
    assert any(w.value.startswith("The smallest ε at which MST") and "pMSE ratio 24.5 is not what this app calls "
               "acceptable (under 10)" in w.value for w in at.warning)
    table["pmse_ratio"] = [40.0, 8.0, 2.0]  # an acceptable answer is green
    at.session_state["ru_result"] = (table, False, 0.0)
    at.run()
    assert any(s.value.startswith("The smallest ε at which MST") and "(pMSE ratio 8)" in s.value for s in at.success)
