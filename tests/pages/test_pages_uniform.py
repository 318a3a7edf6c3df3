"""The uniform baseline on the pages: added as one file and one import line, it is in the method picker,
spends ε only on a noisy row count, none with a declared one, and is released like any method."""

import io
import json
import zipfile

import pytest

from tests.conftest import entries, eps_input
from tests.conftest import no_errors as _no_errors

pytestmark = pytest.mark.integration  # the page tier: run by scripts/test.sh and CI, not a plain pytest


def test_uniform_is_picked_on_synthesize_and_its_ledger_follows_its_declaration(at, ledger_store):
    at.switch_page("pages/synthesize.py").run()
    at.selectbox(key="method").set_value("uniform").run()
    eps_input(at).set_value(2.0).run()
    _no_errors(at)
    # No row count declared: the whole ε = 2 pays for the noisy count; seeded, so exploration.
    entry = entries(ledger_store)[-1]
    assert (entry["method"], entry["epsilon"], entry["is_dp"], entry["seeded"]) == ("uniform", 2.0, False, True)
    assert not [e for e in at.expander if e.label == "Method options"]  # it declares no option
    at.checkbox(key="n_declared").check().run()
    at.number_input(key="n_rows").set_value(120).run()
    _no_errors(at)
    # A declared count: nothing of the data is read, so the run is DP at ε = 0 even with its seed.
    entry = entries(ledger_store)[-1]
    assert (entry["method"], entry["epsilon"], entry["is_dp"], entry["rows"]) == ("uniform", 0.0, True, 344)
    statements = [s.value.replace("\\", "") for s in at.success]  # markdown-escaped on screen
    assert any("ε-DP with ε = 0" in s and "spent no ε" in s for s in statements), statements


def test_uniform_is_on_the_map_and_released(at):
    at.switch_page("pages/ru_map.py").run()
    assert "Uniform over the public domain" in at.multiselect(key="ru_methods").options  # labels
    at.switch_page("pages/synthesize.py").run()
    at.selectbox(key="method").set_value("uniform").run()
    at.checkbox(key="n_declared").check().run()
    at.number_input(key="n_rows").set_value(90).run()
    # AppTest drops the sidebar after switch_page, so set the mode as its radio's callback would.
    at.session_state["mode"] = at.session_state["mode_choice"] = "release"
    at.switch_page("pages/synthesize.py").run()
    at.button(key="run_release").click().run()
    _no_errors(at)
    release = at.session_state["release"]
    stem = "penguins-uniform-release"  # no ε in the name: none was asked for or spent
    assert release.zip_name == f"{stem}.zip"
    with zipfile.ZipFile(io.BytesIO(release.package)) as z:
        ledger = json.loads(z.read(f"{stem}.ledger.json"))
        report = z.read(f"{stem}.report.html").decode("utf-8")
        rows = z.read(f"{stem}.csv").decode("utf-8").strip().splitlines()
    assert ledger["is_dp"] and ledger["epsilon_total"] == 0 and ledger["spends"] == "none"
    assert ledger["epsilon_requested"] is None and len(rows) == 1 + 90
    assert "Uniform over the public domain" in report
