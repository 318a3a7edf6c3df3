"""One run-settings type (issue 29.3): the app's state, the settings file, the share link and the command line's
flags are the one RunSettings and its declarations, so each form carries every setting and checks it alike."""

import dataclasses
import json

import pytest

from dpsynth_core import cli
from dpsynth_core.settings import KEYS, SETTINGS, RunSettings, from_flags

#: Every setting away from its default (a seed, so fixed_seed True as every form reads a given seed).
CHANGED = RunSettings(method="pegs", epsilon=0.25, delta=1e-6, seed=99, fixed_seed=True, n=120, columns=("a", "b"),
                      holdout=0.3, implicates=4, params=(("ranking", "data"), ("top", 2)))


def test_every_field_is_declared_once_and_every_form_has_it():
    fields = [f.name for f in dataclasses.fields(RunSettings)]
    # fixed_seed has no form of its own: a seed given is a fixed seed, none is fresh entropy.
    assert sorted(s.name for s in SETTINGS) == sorted(f for f in fields if f != "fixed_seed")
    assert set(KEYS) == set(json.loads(CHANGED.to_json()))  # the settings file
    assert {s.name for s in SETTINGS if s.link} | {"params"} == set(KEYS)  # the link (params as opt.<name>)
    flags = {a.dest for a in cli._parser("synthesize")._subparsers._group_actions[0].choices["synthesize"]._actions}
    assert set(KEYS) <= flags  # the command line


def test_each_form_gives_back_the_settings_it_was_given():
    assert RunSettings.from_json(json.loads(CHANGED.to_json())) == CHANGED
    changes, notes = RunSettings.from_query(CHANGED.to_query())
    assert notes == [] and RunSettings().replace(**changes) == CHANGED
    # The flags are the link's texts under the settings' names (a method option as NAME=VALUE).
    texts = {s.name: CHANGED.to_query()[s.link] for s in SETTINGS if s.link}
    texts["params"] = [f"{k}={json.dumps(v)}" for k, v in CHANGED.params]
    assert from_flags(texts) == CHANGED
    # Fresh entropy: no seed written, and none read back.
    fresh = CHANGED.replace(fixed_seed=False)
    assert json.loads(fresh.to_json())["seed"] is None and RunSettings.from_json(json.loads(fresh.to_json())) == \
        fresh.replace(seed=RunSettings.seed)


@pytest.mark.parametrize("name, value, text", [
    ("epsilon", 1000, "Setting epsilon must be a number from 0.01 to 100, got 1000."),
    ("implicates", 0, "Setting implicates must be a whole number from 1 to 20, got 0."),
    ("holdout", 0.95, "Setting holdout must be a number from 0 to 0.9, got 0.95."),
    ("seed", -1, "Setting seed must be a whole number from 0 to 4294967295 or null, got -1."),
])
def test_a_bad_value_is_refused_alike_in_the_file_and_the_flags_and_dropped_from_a_link(name, value, text):
    with pytest.raises(ValueError) as file_error:
        RunSettings.from_json({name: value})
    with pytest.raises(ValueError) as flag_error:
        from_flags({name: str(value)})
    assert str(file_error.value) == str(flag_error.value) == text
    setting = next(s for s in SETTINGS if s.name == name)
    changes, notes = RunSettings.from_query({setting.link: str(value)})
    assert changes == {} and notes == [f"ignored {setting.link}={str(value)!r} from the link: not a valid value"]


def test_a_method_option_is_checked_against_the_methods_declaration_in_every_form():
    with pytest.raises(ValueError, match="^Setting params: top must be a whole number ≥ 0, got -1.$"):
        RunSettings.from_json({"method": "pegs", "params": {"top": -1}})
    with pytest.raises(ValueError, match="^Setting params: top must be a whole number ≥ 0, got -1.$"):
        from_flags({"method": "pegs", "params": ["top=-1"]})
    changes, notes = RunSettings.from_query({"method": "pegs", "opt.top": "-1"})
    assert changes == {"method": "pegs"} and len(notes) == 1
