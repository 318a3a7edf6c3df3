"""The settings of one run: one type for the app's state, the settings file, the share link and the command line.

:class:`RunSettings` holds them (the app keeps one in its session state), and :data:`SETTINGS` declares
each once: its name (the field, and the settings file's key), its type and range, its query parameter
in the share link and its help on the command line, where its flag is ``--<name>``. Reading any of the
forms, checking and writing back all go through the declarations, so a new setting is one field here
and one declaration. The forms:

* the settings file, JSON (the app's settings download, ``dpsynth synthesize --config``, the file a
  run writes beside its CSV): every key; ``seed`` is null when the run draws fresh randomness, and a
  missing key takes the default (no seed). Strict: a bad value raises ValueError with one sentence.
* the share link's query parameters (:mod:`dpsynth_core.share` adds the dataset): a setting left at
  its default is left out. Lenient: a value that does not check is dropped with a note, since anyone
  can type a link.
* the command line: one flag per setting (``--param NAME=VALUE`` for a method option), each checked
  as the file's value is.

A method option (``params``) is checked against the method's own declaration
(:mod:`dpsynth_core.synth.options`) in every form.

This module imports no numerical library at import time (the synthesizers' registry is read when a
value is checked), so the command line's help stays quick.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import constraints

#: The query parameter of a method option in the share link: ``opt.bins=10``.
OPTION_PREFIX = "opt."


@dataclass(frozen=True)
class RunSettings:
    """What one synthesis runs with, besides the data and its schema (the module docstring says where)."""

    method: str = "independent"
    epsilon: float = constraints.EPSILON_DEFAULT
    delta: float = 0.0
    seed: int = 2026
    #: exploration with ``seed`` (reproducible, not DP); False: fresh randomness, never stored
    fixed_seed: bool = True
    n: int | None = None
    columns: tuple[str, ...] | None = None  # None: all modelled columns
    holdout: float = 0.0  # share of rows kept away from the synthesizer, for holdout-based risk
    implicates: int = 1
    params: tuple = ()  # method options changed from their defaults, as sorted (name, value) pairs

    def replace(self, **changes) -> RunSettings:
        return dataclasses.replace(self, **changes)

    @property
    def run_seed(self) -> int | None:
        """The seed a run at these settings uses; None: fresh entropy."""
        return self.seed if self.fixed_seed else None

    def synthesize_kwargs(self, seed: int | None) -> dict:
        """The keyword arguments of :func:`dpsynth_core.synthesize` (after the data and ``method``) for a run at
        these settings with ``seed`` (the app's and the command line's runs are made alike)."""
        return dict(epsilon=self.epsilon, delta=self.delta, n=self.n, seed=seed, implicates=self.implicates,
                    columns=list(self.columns) if self.columns is not None else None,
                    holdout_share=self.holdout or None, **dict(self.params))

    # -- the settings file -------------------------------------------------------------------------------

    def to_json(self) -> str:
        """The settings file: pretty JSON, every key in :data:`KEYS`' order, ``seed`` null unless it is used."""
        out = {s.name: s.to_json(getattr(self, s.name)) for s in SETTINGS}
        out["seed"] = self.run_seed  # without a fixed seed a run draws fresh entropy: no seed to write
        return json.dumps(out, indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, obj: object) -> RunSettings:
        """Settings from a parsed settings file, every value checked; a missing key takes its default, and
        a missing or null ``seed`` means fresh randomness. Raises ValueError with one sentence."""
        if not isinstance(obj, Mapping):
            raise ValueError("The settings must be a JSON object with keys such as method, epsilon and seed.")
        unknown = [k for k in obj if k not in KEYS]
        if unknown:
            raise ValueError(f"Unknown setting{'s' if len(unknown) > 1 else ''} {', '.join(map(str, unknown))}; "
                             f"the keys are {', '.join(KEYS)}.")
        values = {s.name: s.check(obj[s.name]) for s in SETTINGS if s.name in obj}
        method = values.get("method", cls.method)
        values["params"] = check_params(method, values.get("params", {}))
        seed = values.pop("seed", None)
        return cls(**values, **({"seed": seed, "fixed_seed": True} if seed is not None else {"fixed_seed": False}))

    # -- the share link ----------------------------------------------------------------------------------

    def to_query(self) -> dict[str, str]:
        """Query parameters for these settings: method, ε and the seed always, the others where they differ
        from the default, and each changed method option as ``opt.<name>``."""
        out = {}
        for s in SETTINGS:
            value = getattr(self, s.name)
            if s.link is not None and (s.always or value != getattr(RunSettings, s.name)):
                out[s.link] = s.to_text(value)
        for name, value in self.params:
            out[f"{OPTION_PREFIX}{name}"] = json.dumps(list(value) if isinstance(value, tuple) else value)
        return out

    @staticmethod
    def from_query(params: Mapping[str, str]) -> tuple[dict, list[str]]:
        """The settings a link names (field → value, only those it names), and one note per value dropped.

        A value that does not check (out of range, not a number, no such method or option) is dropped and
        noted rather than trusted.
        """
        out, notes = {}, []
        for s in SETTINGS:
            if s.link is None or s.link not in params or (s.kind == "columns" and not params[s.link]):
                continue
            try:
                out[s.name] = s.check(s.from_text(params[s.link]))
            except ValueError:
                reason = "no such method" if s.kind == "method" else "not a valid value"
                notes.append(f"ignored {s.link}={params[s.link]!r} from the link: {reason}")
        options = _link_options(params, out.get("method"), notes)
        if options:
            out["params"] = options
        return out, notes


@dataclass(frozen=True)
class Setting:
    """One run setting: a field of :class:`RunSettings` and how each form writes and checks it."""

    name: str
    kind: str  # "method", "float", "int", "columns" or "params"
    help: str  # on the command line
    low: float | None = None
    high: float | None = None
    optional: bool = False  # None allowed (null in the file; left out of the link)
    link: str | None = None  # query parameter in the share link (None: a form of its own, or none)
    always: bool = False  # in every link, even at its default

    def check(self, value: Any) -> Any:
        """``value`` in the field's own type if it is allowed, else ValueError with one sentence."""
        if self.kind == "method":
            from .synth import SYNTHESIZERS
            if not isinstance(value, str) or value not in SYNTHESIZERS:
                raise ValueError(f"Unknown method {value!r}; choose one of {', '.join(sorted(SYNTHESIZERS))}.")
            return value
        if self.kind == "columns":
            if value is not None and (not isinstance(value, (list, tuple)) or not all(isinstance(x, str)
                                                                                       for x in value)):
                raise ValueError("Setting columns must be a list of column names or null.")
            return None if value is None else tuple(value)
        if self.kind == "params":
            return _params_mapping(value)
        return self._number(value)

    def _number(self, value: Any) -> float | int | None:
        if value is None and self.optional:
            return None
        whole = self.kind == "int"
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)
        if ok and whole and float(value) != int(value):
            ok = False
        if not ok or not self.low <= value <= self.high:
            raise ValueError(f"Setting {self.name} must be {'a whole number' if whole else 'a number'} from "
                             f"{self.range_text}{' or null' if self.optional else ''}, got {value!r}.")
        return int(value) if whole else float(value)

    @property
    def range_text(self) -> str:
        """``low to high`` as typed: every digit of a whole bound (4294967295, not 4.29497e+09)."""
        return " to ".join(str(int(b)) if float(b).is_integer() else f"{b:g}" for b in (self.low, self.high))

    def from_text(self, text: str) -> Any:
        """The value typed as ``text`` (a flag's argument, a link's parameter), to be checked."""
        if self.kind in ("float", "int"):
            try:  # a whole number as typed stays one (the check casts it), so a sentence quotes it as typed
                return int(text)
            except ValueError:
                pass
            try:
                number = float(text)
            except ValueError:
                what = "a whole number" if self.kind == "int" else "a number"
                raise ValueError(f"Setting {self.name} must be {what} from {self.range_text}, got {text!r}.") from None
            return int(number) if self.kind == "int" and number.is_integer() else number
        if self.kind == "columns":
            return tuple(c.strip() for c in text.split(",") if c.strip())
        return text

    def to_text(self, value: Any) -> str:
        """``value`` in a link."""
        if self.kind == "float":
            return f"{value:g}"
        if self.kind == "columns":
            return ",".join(value)
        return str(value)

    def to_json(self, value: Any) -> Any:
        """``value`` in the settings file."""
        if value is None:
            return None
        if self.kind == "columns":
            return list(value)
        if self.kind == "params":
            return dict(sorted(dict(value).items()))
        return {"float": float, "int": int}.get(self.kind, str)(value)


C = constraints
#: Every run setting, in the settings file's order. ``fixed_seed`` has no form of its own: a run is seeded
#: when the file, the link or the flags give a seed.
SETTINGS: tuple[Setting, ...] = (
    Setting("method", "method", "a synthesizer's name, as `dpsynth methods` lists them (default independent)",
            link="method", always=True),
    Setting("epsilon", "float", "total privacy budget ε (default 1)", C.EPSILON_MIN, C.EPSILON_MAX,
            link="eps", always=True),
    Setting("delta", "float", "δ for (ε, δ) methods (default 0)", 0.0, C.DELTA_MAX, link="delta"),
    Setting("seed", "int", "fixed seed: reproducible exploration, NOT a DP release (default: fresh entropy)",
            0, C.SEED_MAX, optional=True, link="seed", always=True),
    Setting("n", "int", "synthetic rows, declared public (default: a noisy count)", 1, C.MAX_SYNTH_ROWS,
            optional=True, link="n"),
    Setting("implicates", "int", "number of synthetic datasets m (default 1)", 1, C.MAX_IMPLICATES, link="m"),
    Setting("holdout", "float", "share of rows kept away from the synthesizer (default 0)", 0.0, 0.9,
            link="holdout"),
    Setting("columns", "columns", "synthesize only these columns (comma-separated), keep the others",
            link="cols"),
    Setting("params", "params", "a method option, e.g. bins=10 (repeat for more)"),
)
del C
KEYS = tuple(s.name for s in SETTINGS)
BY_NAME = {s.name: s for s in SETTINGS}


def _params_mapping(value: Any) -> dict:
    """Method options as given in a file (an object, or (name, value) pairs), before the method checks them."""
    params = dict(value) if isinstance(value, (list, tuple)) else value
    if not isinstance(params, Mapping) or not all(isinstance(v, (int, float, str, bool, list, tuple)) or v is None
                                                  for v in params.values()):
        raise ValueError("Setting params must be an object of option names to numbers, text or true/false.")
    return dict(params)


def check_params(method: str, params: Mapping) -> tuple:
    """``params`` as sorted (name, value) pairs, each checked against ``method``'s declared options (a list
    given in JSON becomes a tuple). Raises ValueError with one sentence."""
    from .synth import SYNTHESIZERS

    given = {k: tuple(v) if isinstance(v, list) else v for k, v in dict(params).items()}
    try:
        SYNTHESIZERS[method].resolve(given)
    except ValueError as err:
        raise ValueError(f"Setting params: {err}.") from None
    return tuple(sorted(given.items()))


def _link_options(params: Mapping[str, str], method: str | None, notes: list[str]) -> tuple:
    """The method options a link names, each checked against the method's declaration (others noted)."""
    from .synth import SYNTHESIZERS
    from .synth.options import option_table, parse_text

    declared = option_table(SYNTHESIZERS[method].options) if method is not None else {}
    kept = {}
    for key, text in params.items():
        if not key.startswith(OPTION_PREFIX):
            continue
        name = key[len(OPTION_PREFIX):]
        try:
            kept[name] = declared[name].check(parse_text(text))
        except (KeyError, ValueError):
            notes.append(f"ignored {key}={text!r} from the link: not an option of this method with a valid value")
    return tuple(sorted(kept.items()))


def from_flags(given: Mapping[str, Any], base: Mapping | None = None) -> RunSettings:
    """Settings from the command line: ``base`` (a parsed settings file, or nothing) with each flag given
    (setting name → its text; ``params``: a list of ``NAME=VALUE``) on top, every value checked."""
    obj = dict(base or {})
    for name, text in given.items():
        if text is None:
            continue
        if name == "params":
            obj["params"] = {**_params_mapping(obj.get("params") or {}), **dict(parse_param(p) for p in text)}
        else:
            obj[name] = BY_NAME[name].from_text(text)
    return RunSettings.from_json(obj)


def parse_param(text: str) -> tuple[str, Any]:
    """``NAME=VALUE`` (``--param bins=10``) as (name, value), the value read as :func:`parse_text` reads it."""
    from .synth.options import parse_text

    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise ValueError(f"--param takes name=value (for example bins=10), got {text!r}.")
    return name.strip(), parse_text(value)
