"""A synthesizer's options, declared on its class: name, type, range or choices, default and help.

The Synthesize page draws one widget per declaration, and the core, the command line and the
settings file check a value against the same declaration, so a new option appears everywhere
from its one line. Types:

* ``int`` / ``float`` — a number in [low, high] (``high`` None: no upper limit); ``optional``
  allows None (the method then chooses, e.g. one chain per 200 records);
* ``choice`` — one of ``choices``;
* ``bool`` — true or false;
* ``columns`` — an order of the modelled columns (None: the schema's order), checked by the
  method's ``refuse`` against the schema.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

TYPES = ("int", "float", "choice", "bool", "columns")


@dataclass(frozen=True)
class Option:
    """One method option (module docstring)."""

    name: str
    type: str
    default: Any
    help: str
    low: float | None = None
    high: float | None = None
    choices: tuple = ()
    optional: bool = False

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"option type must be one of {TYPES}, got {self.type!r}")
        if self.type == "choice" and self.default not in self.choices:
            raise ValueError(f"option {self.name}: default {self.default!r} is not one of its choices")

    def range_text(self) -> str:
        high = "" if self.high is None else f" and ≤ {self.high:g}"
        return f"≥ {self.low:g}{high}" if self.low is not None else f"≤ {self.high:g}"

    def check(self, value: Any) -> Any:
        """``value`` if it is allowed, else ValueError with one sentence naming the option."""
        if value is None and (self.optional or self.type == "columns"):
            return None
        if self.type == "bool":
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{self.name} must be true or false, got {value!r}")
        elif self.type == "choice":
            if value not in self.choices:
                raise ValueError(f"{self.name} must be one of {', '.join(map(repr, self.choices))}, got {value!r}")
        elif self.type == "columns":
            pass  # checked by the method against the schema (``refuse``), which a declaration cannot see
        else:
            whole = self.type == "int"
            kinds = (int, np.integer) if whole else (int, float, np.integer, np.floating)
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, kinds) or not math.isfinite(value) \
                    or (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
                what = "a whole number" if whole else "a number"
                raise ValueError(f"{self.name} must be {what} {self.range_text()}, got {value!r}")
        return value


def parse_text(text: str) -> Any:
    """An option's value typed as text (``--param bins=10``, a link's ``opt.bins=10``): JSON if it reads
    as JSON (numbers, true/false, lists), else the text itself (a choice such as ``public``)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return text
    return tuple(value) if isinstance(value, list) else value


def option_table(options: tuple[Option, ...]) -> dict[str, Option]:
    return {o.name: o for o in options}


def resolve(options: tuple[Option, ...], given: Mapping[str, Any], method: str) -> dict[str, Any]:
    """The options a run uses: each declared default, overridden by ``given``, every value checked.

    Raises ValueError naming an option ``method`` does not have, or a value out of its declaration.
    """
    table = option_table(options)
    unknown = sorted(set(given) - set(table))
    if unknown:
        known = ", ".join(table) or "none"
        raise ValueError(f"{method} has no option {', '.join(unknown)}; its options: {known}")
    return {name: table[name].check(given[name]) if name in given else o.default for name, o in table.items()}


# Options several methods share, with each method's own default.

def bins(default: int) -> Option:
    return Option("bins", "int", default, "Bins per numeric column (over its declared bounds).", low=1)


def max_iter(default: int) -> Option:
    return Option("max_iter", "int", default, "Iterations of each logistic-regression fit.", low=1)


def inverse_penalty(default: float) -> Option:
    return Option("C", "float", default, "Inverse strength of the logistic regressions' L2 penalty.", low=1e-6)
