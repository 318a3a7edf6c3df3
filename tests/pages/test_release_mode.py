"""Release mode: one synthesis with a fresh seed, the ledger store's account of the data, and a package that matches
the settings."""

import io
import json
import zipfile

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import dpsynth_core as core
from dpsynth_core.privacy import Totals
from dpsynth_core.privacy.store import compose
from dpsynth_core.report import internal_report_html, public_report_html, release_statement
from tests.conftest import APP, entries, eps_input
from ui.audit import runs_choices

pytestmark = pytest.mark.integration  # the page tier: run by scripts/test.sh and CI, not a plain pytest


@pytest.fixture
def at():
    return AppTest.from_file(APP, default_timeout=120).run()


def test_release_mode_computes_nothing_until_the_release_is_run(at, ledger_store):
    at.radio(key="mode_choice").set_value("release").run()
    at.switch_page("pages/compare.py").run()
    assert not at.exception
    assert any("run the release" in i.value for i in at.info)
    assert entries(ledger_store) == []  # no synthesis of the confidential data yet


def test_release_run_records_spending_and_package_matches_settings(at, ledger_store):
    # Explore twice first (ε = 1, then ε = 2), then release at ε = 2 with a declared row count.
    at.switch_page("pages/synthesize.py").run()
    eps_input(at).set_value(2.0).run()
    at.checkbox(key="n_declared").check().run()
    at.number_input(key="n_rows").set_value(120).run()
    # AppTest drops the sidebar after switch_page, so set the mode as its radio's callback would.
    at.session_state["mode"] = at.session_state["mode_choice"] = "release"
    at.switch_page("pages/synthesize.py").run()
    at.button(key="run_release").click().run()
    assert not at.exception, [e.message for e in at.exception]
    # Each setting looked at is a synthesis: ε=1; ε=2 with a noisy count; ε=2 with 120 rows; then the
    # release. Ticking the box changes nothing until a figure is typed: the box never offers the data's
    # exact row count (issue 15). The explorations ran with the fixed seed: looks without a guarantee.
    assert [(e["purpose"], e["epsilon"], e["is_dp"], e["seeded"]) for e in entries(ledger_store)] == [
        ("exploration", 1.0, False, True), ("exploration", 2.0, False, True), ("exploration", 2.0, False, True),
        ("release", 2.0, True, False)]
    release = at.session_state["release"]
    led = release.synthesis.ledger
    assert led["seed"] is None and led["epsilon_total"] == 2.0 and led["n_rows"] == 120
    # One DP computation, the release at ε = 2, and three seeded looks, which no ε covers.
    assert ("1 DP computation (1 release) spending ε = 2, δ = 0 in all" in release.statement
            and "3 looks at the data without a guarantee (3 with a fixed seed)" in release.statement)
    assert release.tone == "info"  # ε = 2 is "info" on its own; after looks even a small ε would not be green

    with zipfile.ZipFile(io.BytesIO(release.package)) as z:
        names = sorted(z.namelist())
        stem = "penguins-independent-eps2-release"
        assert names == [f"{stem}.csv", f"{stem}.ledger.json", f"{stem}.report.html"]
        data = pd.read_csv(z.open(f"{stem}.csv"))
        ledger = json.loads(z.read(f"{stem}.ledger.json"))
        report = z.read(f"{stem}.report.html").decode("utf-8")
    assert release.zip_name == f"{stem}.zip"  # one ".release", not "-release.release.zip"
    ds = at.session_state["dataset"]
    assert list(data.columns) == list(ds.df.columns) and len(data) == 120
    assert ledger["method"] == "independent" and ledger["epsilon_total"] == 2.0 and ledger["seed"] is None
    # What the store holds on the data travels with the release: the release, and the three looks.
    spent = ledger["spent_on_this_data"]
    assert (spent["dp_computations"], spent["epsilon"], spent["delta"], spent["looks_without_guarantee"]) == \
        (1, 2, 0, 3)
    assert "cap" not in spent
    # The public report names the method and the spend, but no fingerprint of the confidential data.
    assert ds.fingerprint not in report and ds.fingerprint[:12] not in report and "SHA-256" not in report
    assert "Independent noisy marginals" in report
    assert "spending ε = 2, δ = 0 in all" in report and "plotly" in report.lower()
    # The internal report is a separate file, marked confidential, with the fingerprint and the risk measures.
    internal = release.internal().decode("utf-8")
    assert release.internal_name == "penguins-independent-eps2-internal-report-CONFIDENTIAL.html"
    assert release.internal_name not in names
    assert ds.fingerprint in internal and internal.count("CONFIDENTIAL") >= 5
    assert "Disclosure risk" in internal and "Median DCR" in internal and "Exact copies" in internal
    # Done at these settings: the button waits for a change; a change enables it again.
    assert at.button(key="run_release").disabled
    eps_input(at).set_value(1.0).run()
    assert not at.button(key="run_release").disabled


def test_release_statement_states_the_dp_total_and_the_looks_apart():
    def entry(purpose, eps, is_dp, seeded=False, delta=0.0):
        rho = None if delta or eps is None else eps ** 2 / 2
        return {"purpose": purpose, "epsilon": eps, "delta": delta, "rho": rho, "is_dp": is_dp, "seeded": seeded}

    totals = compose([entry("exploration", 1.0, True), entry("exploration", 3.0, False, seeded=True),
                      entry("exploration", None, False), entry("release", 0.5, True, delta=1e-7)])
    # By hand: DP entries 1 + 0.5 = 1.5, δ = 1e-7; one of them has no ρ, so basic composition; two looks.
    text = release_statement({"statement": "S.", "n_rows": 300}, totals)
    assert text == ("S. Every computation on the same data in the steward's ledger, this release included: 2 DP "
                    "computations (1 exploration, 1 release) spending ε = 1.5, δ = 1e-07 in all (basic composition: "
                    "the ε and the δ add up); 2 looks at the data without a guarantee (1 with a fixed seed), which no "
                    "ε covers: results looked at while tuning are a use of the data that the release's own ε does "
                    "not cover.")
    assert release_statement({"statement": "S.", "n_rows": 300}, Totals(None)).endswith(
        "this release included: 0 DP computations; 0 looks at the data without a guarantee.")


def test_reports_escape_user_text():
    df = pd.DataFrame({"<script>alert(1)</script>": ["<b>x</b>", "y"] * 20, "v": range(40)})
    result = core.synthesize(df, "bootstrap", seed=1)
    for html_text in (
        public_report_html(dataset_name="<img src=x>.csv", synthesis=result, statement="ok", totals=Totals(None)),
        internal_report_html(dataset_name="<img src=x>.csv", fingerprint="f" * 64, synthesis=result,
                             statement="ok", sections=[], totals=Totals(None)),
    ):
        assert "<script>alert(1)</script>" not in html_text and "<img src=x>" not in html_text
        assert "&lt;img src=x&gt;.csv" in html_text


def test_a_shared_link_restores_the_settings_on_the_same_dataset():
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in {"data": "bundled:diamonds", "method": "cart", "eps": "0.3", "seed": "99", "n": "500"}.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception
    ds, cfg = at.session_state["dataset"], at.session_state["synth_config"]
    assert ds.name == "diamonds" and (cfg.method, cfg.epsilon, cfg.seed, cfg.n) == ("cart", 0.3, 99, 500)


def test_a_link_for_an_uploaded_file_waits_for_that_file():
    df = pd.DataFrame({"g": list("abcab") * 8, "v": range(40)})
    payload = core.to_csv_bytes(df)
    # The token is the keyed hash this server process gives the file (AppTest runs in this process).
    token = core.share.dataset_token("upload", "mine.csv", core.fingerprint(core.load_csv(io.BytesIO(payload))))
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in {"data": token, "method": "bootstrap", "seed": "5"}.items():
        at.query_params[k] = v
    at.run()
    assert at.session_state["dataset"].name == "penguins"  # the data never travels in the link
    assert any("upload the same file" in i.value for i in at.info)
    at.file_uploader(key="uploader").set_value(("mine.csv", payload, "text/csv")).run()
    cfg = at.session_state["synth_config"]
    assert at.session_state["dataset"].name == "mine.csv" and (cfg.method, cfg.seed) == ("bootstrap", 5)


# Slow: its runs of MST on the look-alike (the fewest the page offers, 30 a side) cost about 10 s of CPU. The
# audit section's wiring (a click runs the core's audit, whose bound the page shows) is also tried, quicker, by
# the Learn page's audit (tests/pages/test_pages_learn.py::test_the_audit_runs_from_its_tab).
@pytest.mark.slow
def test_the_release_shows_an_audit_of_its_method_on_a_look_alike(at, ledger_store):
    # Release with MST at ε = 1: the audit beside it claims the release's ε and δ, runs on a look-alike of the
    # declared schema with the release's options, and adds nothing to the ledger store.
    at.switch_page("pages/synthesize.py").run()
    at.session_state["mode"] = at.session_state["mode_choice"] = "release"
    at.selectbox(key="method").set_value("mst").run()
    at.switch_page("pages/synthesize.py").run()
    at.button(key="run_release").click().run()
    assert not at.exception, [e.message for e in at.exception]
    recorded = entries(ledger_store)
    fewest = runs_choices("mst")[0]
    at.select_slider(key="release_audit_runs_mst").set_value(fewest).run()
    at.button(key="release_audit_run").click().run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    result = at.session_state["audit_results"]["release_audit"][1]
    led = at.session_state["release"].synthesis.ledger
    assert (result.method, result.claim, result.delta, result.runs) == ("mst", led["epsilon_total"], led["delta"],
                                                                        fewest)
    ds = at.session_state["dataset"]
    assert ds.schema.used[0] in result.honest.statistic  # the pair was built from the dataset's schema
    assert entries(ledger_store) == recorded
    assert {m.label: m.value for m in at.metric}["Lower bound on ε, 95 %"] == \
        core.privacy.audit.bound_text(result.honest.bound)


def _risk_holdout_words(at) -> tuple[list[str], str]:
    """The Risk page's sentences on the holdout: its captions that say which rows were used, and the sentence
    on which measures apply (which names held-out rows only when the page has them)."""
    captions = [c.value for c in at.caption if "held out" in c.value or "every row" in c.value]
    applies = next(m.value for m in at.markdown if "fully synthetic" in m.value)
    return captions, applies


@pytest.mark.parametrize("held_out", [True, False])
def test_release_mode_risk_measures_the_release_on_the_rows_it_was_made_from(held_out):
    # Issue 31.7: a release made with 20% held out, then the holdout set to none for the next one: Risk said
    # "every row is used" (and measured against every row) while the ledger said 20% was held out. And the
    # other way round: a release from every row, then 20% set: "the release too uses the other 80%".
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"g": rng.choice(list("abc"), 1200), "v": rng.integers(0, 50, 1200)})
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.file_uploader(key="uploader").set_value(("big.csv", core.to_csv_bytes(df), "text/csv")).run()
    at.switch_page("pages/synthesize.py").run()
    at.selectbox(key="holdout").set_value(0.2 if held_out else 0.0).run()
    at.session_state["mode"] = at.session_state["mode_choice"] = "release"
    at.switch_page("pages/synthesize.py").run()
    at.button(key="run_release").click().run()
    held = at.session_state["release"].synthesis.ledger["holdout"]
    assert held["taken"] == held_out and held.get("share", 0.2) == 0.2
    at.selectbox(key="holdout").set_value(0.0 if held_out else 0.2).run()  # the next release's holdout
    at.switch_page("pages/risk.py").run()
    assert not at.exception and not at.error
    captions, applies = _risk_holdout_words(at)
    if held_out:
        assert captions == ["The release held out 20% of the rows, as its ledger says: the verdicts compare the "
                            "records it was made from with records it never saw. The holdout set on Synthesize "
                            "(none) applies to the next release: run it again there."]
        assert "rows held out before synthesis show" in applies  # measured with the held-out rows
    else:
        assert captions == ["The release was made from every row, as its ledger says, so verdicts beyond the "
                            "random-data baselines stay open. The holdout set on Synthesize (20% of the rows) "
                            "applies to the next release: run it again there."]
        assert "hold out rows before synthesis to tell" in applies  # no held-out rows: none were
