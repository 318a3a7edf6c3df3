"""Argument checks shared by the demos: each raises with a sentence naming the argument."""

from __future__ import annotations

import math

import numpy as np


def check_int(name: str, value, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < low or (high is not None and value > high):
        upper = "∞" if high is None else str(high)
        raise ValueError(f"{name} must be in [{low}, {upper}], got {value!r}")
    return int(value)


def check_positive(name: str, value) -> float:
    value = float(value)
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return value


def check_unit(name: str, value, *, open_low: bool = False, open_high: bool = False) -> float:
    value = float(value)
    low_ok = value > 0 if open_low else value >= 0
    high_ok = value < 1 if open_high else value <= 1
    if not (low_ok and high_ok):
        raise ValueError(f"{name} must be in {'(' if open_low else '['}0, 1{')' if open_high else ']'}, "
                         f"got {value!r}")
    return value
