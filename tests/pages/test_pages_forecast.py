"""Page tests (issue 18): the Synthesize page forecasts before any run; the R-U map names the best DP method."""

import pytest

import dpsynth_core as core
from tests.conftest import eps_input
from tests.conftest import no_errors as _no_errors

pytestmark = pytest.mark.integration  # the page tier: run by scripts/test.sh and CI, not a plain pytest




def test_synthesize_page_shows_the_forecast_and_the_suggestion(at):
    at.switch_page("pages/synthesize.py").run()
    _no_errors(at)
    method, eps = at.session_state["method"], float(eps_input(at).value)
    captions = [c.value for c in at.caption]
    df, schema = core.load_bundled("penguins")
    expected = core.forecast(method, schema, eps, None)
    assert "Forecast: " + expected.sentence in captions
    # PeGS with n declared: the per-record share leaves near-uniform output, shown as a warning,
    # with the suggested method under it.
    at.selectbox(key="method").set_value("pegs").run()
    at.checkbox(key="n_declared").check().run()
    assert at.number_input(key="n_rows").value is None  # empty until a public figure is typed (issue 15)
    at.number_input(key="n_rows").set_value(344).run()
    _no_errors(at)
    n = int(at.session_state["n_rows"])
    assert at.session_state["synth_config"].n == 344
    fc = core.forecast("pegs", schema, eps, n, **core.SYNTHESIZERS["pegs"].defaults)
    assert fc.level == "poor" and "Forecast: " + fc.sentence in [w.value for w in at.warning]
    assert core.suggest_method(schema, eps, n).sentence in [c.value for c in at.caption]


def test_ru_map_names_the_dp_method_that_keeps_the_most(at):
    at.switch_page("pages/ru_map.py").run()
    at.multiselect(key="ru_methods").set_value(["independent", "dp_seqreg"]).run()
    at.text_input(key="ru_grid").set_value("0.5, 5").run()
    at.button(key="ru_run").click().run()
    _no_errors(at)
    table = at.session_state["ru_result"][0]
    at.select_slider(key="ru_best_eps").set_value(5.0).run()
    best = core.frontier.best_dp_method(table, 5.0, at.session_state["ru_y"])
    assert best["sentence"] in [i.value for i in at.info]
