"""A synthesis configuration as JSON: what the app's settings download and the command line share.

The keys are the app's (``ui.state.SynthConfig``, also behind the share
link): ``method``, ``epsilon``, ``delta``, ``seed`` (null: fresh entropy),
``n`` (null: the method's own row count), ``implicates``, ``holdout``,
``columns`` (null: every modelled column) and ``params`` (method options
changed from their defaults). A run in the app can be repeated in batch with
``dpsynth synthesize --config settings.json`` and the other way round.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

from . import constraints
from .synth import SYNTHESIZERS

KEYS = ("method", "epsilon", "delta", "seed", "n", "implicates", "holdout", "columns", "params")
#: The values a missing key takes (the app's defaults; no seed, so a fresh draw).
DEFAULTS = {"method": "independent", "epsilon": constraints.EPSILON_DEFAULT, "delta": 0.0, "seed": None, "n": None,
            "implicates": 1, "holdout": 0.0, "columns": None, "params": ()}


def settings_json(config: Mapping) -> str:
    """``config`` (SynthConfig's fields; ``params`` as (name, value) pairs or a dict) as pretty JSON."""
    c = {**DEFAULTS, **{k: config[k] for k in KEYS if k in config}}
    out = {
        "method": c["method"],
        "epsilon": float(c["epsilon"]),
        "delta": float(c["delta"]),
        # the app's seed is written only when it is used: without it a run draws fresh entropy
        "seed": None if c["seed"] is None or config.get("fixed_seed") is False else int(c["seed"]),
        "n": None if c["n"] is None else int(c["n"]),
        "implicates": int(c["implicates"]),
        "holdout": float(c["holdout"]),
        "columns": None if c["columns"] is None else list(c["columns"]),
        "params": dict(sorted(dict(c["params"]).items())),
    }
    return json.dumps(out, indent=2, ensure_ascii=False) + "\n"


def parse_settings(obj: object) -> dict:
    """Settings from parsed JSON, checked; missing keys take :data:`DEFAULTS`.

    Returns SynthConfig's fields (``columns`` a tuple or None, ``params`` sorted
    (name, value) pairs). Raises ValueError with one sentence naming the bad key.
    """
    if not isinstance(obj, Mapping):
        raise ValueError("The settings must be a JSON object with keys such as method, epsilon and seed.")
    unknown = sorted(set(obj) - set(KEYS))
    if unknown:
        raise ValueError(f"Unknown settings {unknown}; the keys are {', '.join(KEYS)}.")
    c = {**DEFAULTS, **obj}
    if c["method"] not in SYNTHESIZERS:
        raise ValueError(f"Unknown method {c['method']!r}; choose one of {', '.join(sorted(SYNTHESIZERS))}.")

    def number(key, cast, lo, hi, *, optional=False):
        value = c[key]
        if value is None and optional:
            return None
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if ok and cast is int and float(value) != int(value):
            ok = False
        if not ok or math.isnan(float(value)) or not lo <= value <= hi:
            raise ValueError(f"Setting {key} must be a number from {lo:g} to {hi:g}"
                             f"{' or null' if optional else ''}, got {value!r}.")
        return cast(value)

    out = {
        "method": c["method"],
        "epsilon": number("epsilon", float, constraints.EPSILON_MIN, constraints.EPSILON_MAX),
        "delta": number("delta", float, 0.0, constraints.DELTA_MAX),
        "seed": number("seed", int, 0, constraints.SEED_MAX, optional=True),
        "n": number("n", int, 1, constraints.MAX_SYNTH_ROWS, optional=True),
        "implicates": number("implicates", int, 1, constraints.MAX_IMPLICATES),
        "holdout": number("holdout", float, 0.0, 0.9),
    }
    cols = c["columns"]
    if cols is not None and (not isinstance(cols, (list, tuple)) or not all(isinstance(x, str) for x in cols)):
        raise ValueError("Setting columns must be a list of column names or null.")
    out["columns"] = None if cols is None else tuple(cols)
    params = dict(c["params"]) if isinstance(c["params"], (list, tuple)) else c["params"]
    if not isinstance(params, Mapping) or not all(isinstance(v, (int, float, str, bool)) or v is None
                                                  for v in params.values()):
        raise ValueError("Setting params must be an object of option names to numbers, text or true/false.")
    try:  # each option against the method's declaration (its type and range)
        SYNTHESIZERS[out["method"]].resolve(params)
    except ValueError as err:
        raise ValueError(f"Setting params: {err}.") from None
    out["params"] = tuple(sorted(params.items()))
    out["fixed_seed"] = out["seed"] is not None  # SynthConfig's flag: a seed makes the run exploration, not DP
    return out
