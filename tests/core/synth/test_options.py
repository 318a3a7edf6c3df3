"""Method options declared on the class: one declaration checks them in the core, the settings file
and the share link, and gives the page its widgets."""

import pytest

from dpsynth_core import settings, share
from dpsynth_core.synth import SYNTHESIZERS
from dpsynth_core.synth.options import Option, parse_text


def test_check_by_type_and_range():
    whole = Option("bins", "int", 10, "help", low=1, high=50)
    assert whole.check(1) == 1 and whole.check(50) == 50
    for bad in (0, 51, 2.5, True, "3", None):
        with pytest.raises(ValueError, match="bins must be a whole number ≥ 1 and ≤ 50"):
            whole.check(bad)
    number = Option("C", "float", 1.0, "help", low=1e-6)
    assert number.check(3) == 3 and number.check(0.5) == 0.5
    for bad in (0.0, float("nan"), float("inf"), False):
        with pytest.raises(ValueError, match="C must be a number ≥ 1e-06"):
            number.check(bad)
    choice = Option("ranking", "choice", "public", "help", choices=("public", "data"))
    assert choice.check("data") == "data"
    with pytest.raises(ValueError, match="ranking must be one of 'public', 'data'"):
        choice.check("mi")
    optional = Option("chains", "int", None, "help", low=1, optional=True)
    assert optional.check(None) is None and optional.check(4) == 4
    with pytest.raises(ValueError, match="true or false"):
        Option("log_scale", "bool", True, "help").check(1)


def test_a_declaration_refuses_a_default_outside_its_choices_or_an_unknown_type():
    with pytest.raises(ValueError, match="not one of its choices"):
        Option("ranking", "choice", "mi", "help", choices=("public", "data"))
    with pytest.raises(ValueError, match="option type"):
        Option("x", "text", "", "help")


def test_resolve_fills_defaults_and_names_unknown_options():
    pegs = SYNTHESIZERS["pegs"]
    assert pegs.resolve({"top": 2}) == {**pegs.defaults, "top": 2}
    with pytest.raises(ValueError, match="has no option blocks; its options: bins, top, ranking, chains"):
        pegs.resolve({"blocks": 3})


def test_parse_text_reads_json_or_keeps_the_text():
    assert parse_text("10") == 10 and parse_text("0.5") == 0.5 and parse_text("true") is True
    assert parse_text("public") == "public" and parse_text('["b", "a"]') == ("b", "a")


def test_the_settings_file_checks_options_against_the_declaration():
    ok = settings.RunSettings.from_json({"method": "pegs", "params": {"top": 2, "ranking": "data"}})
    assert ok.params == (("ranking", "data"), ("top", 2))
    with pytest.raises(ValueError, match="Setting params: top must be a whole number ≥ 0"):
        settings.RunSettings.from_json({"method": "pegs", "params": {"top": -1}})
    with pytest.raises(ValueError, match="has no option top"):
        settings.RunSettings.from_json({"method": "independent", "params": {"top": 2}})


def test_the_share_link_carries_options_and_drops_bad_ones():
    cfg = settings.RunSettings(method="pegs", epsilon=1.0, seed=3, params=(("ranking", "data"), ("top", 2)))
    params = share.config_params(cfg, dataset="bundled:penguins")
    assert params["opt.top"] == "2" and params["opt.ranking"] == '"data"'
    back, notes = settings.RunSettings.from_query(params)
    assert notes == [] and back["params"] == (("ranking", "data"), ("top", 2))
    back, notes = settings.RunSettings.from_query({"method": "pegs", "opt.top": "-1", "opt.nope": "1", "opt.bins": "8"})
    assert back["params"] == (("bins", 8),) and len(notes) == 2
    assert all(n.startswith("ignored opt.") for n in notes)
