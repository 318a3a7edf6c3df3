"""A synthesis configuration as URL query parameters, and back, never the data.

The dataset is named by its bundled name or, for an upload, by a keyed hash
(HMAC-SHA-256) of its content under a secret drawn once per server process
that never leaves the server: the link restores the settings only on the
same data uploaded to the same running server, and carries no fingerprint of
the data that anyone without the secret could compare against a guess.

An upload's token also carries a check, a keyed hash of the first part under
the same secret, so the server can tell without the data whether one of its
links was made by this very process: one that fails was made before the
server restarted, or by another server (:func:`made_here`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import secrets

from . import constraints
from .synth import SYNTHESIZERS
from .synth.options import option_table, parse_text

TOKEN_CHARS = 16
CHECK_CHARS = 8
OPTION_PREFIX = "opt."  # a method option's query parameter: opt.bins=10
_LINK_SECRET = secrets.token_bytes(32)  # per server process; never written, logged or sent


def config_params(config: dict, *, dataset: str) -> dict[str, str]:
    """Query parameters for ``config`` (keys of the app's SynthConfig) on ``dataset``."""
    out = {"data": dataset, "method": config["method"], "eps": f"{config['epsilon']:g}",
           "seed": str(config["seed"])}
    if config.get("delta"):
        out["delta"] = f"{config['delta']:g}"
    if config.get("n") is not None:
        out["n"] = str(config["n"])
    if config.get("implicates", 1) != 1:
        out["m"] = str(config["implicates"])
    if config.get("holdout"):
        out["holdout"] = f"{config['holdout']:g}"
    if config.get("columns") is not None:
        out["cols"] = ",".join(config["columns"])
    for name, value in config.get("params", ()):  # method options changed from their defaults
        out[f"{OPTION_PREFIX}{name}"] = json.dumps(list(value) if isinstance(value, tuple) else value)
    return out


def _keyed(text: str) -> str:
    return hmac.new(_LINK_SECRET, text.encode("utf-8"), hashlib.sha256).hexdigest()


def dataset_token(source: str, name: str, fingerprint: str) -> str:
    """``bundled:<name>`` or ``upload:<keyed hash>.<check>``: which data a link is for, never a hash of the data."""
    if source == "bundled":
        return f"bundled:{name}"
    tag = _keyed(fingerprint)[:TOKEN_CHARS]
    return f"upload:{tag}.{_keyed('link ' + tag)[:CHECK_CHARS]}"


def made_here(token: str) -> bool:
    """Whether an upload's token was made by this server process (its check verifies under this process's secret).

    False for one made before the server restarted (its secret is gone with it) or by another server: the
    upload it names is not in this process. Tokens are compared in constant time, as any keyed hash.
    """
    tag, _, check = token.removeprefix("upload:").partition(".")
    return hmac.compare_digest(check, _keyed("link " + tag)[:CHECK_CHARS])


def parse_config_params(params: dict[str, str]) -> tuple[dict, list[str]]:
    """Settings read from query parameters, and one note per value that was ignored.

    Only keys of the app's configuration are returned; anything malformed
    or out of range is dropped (and noted) rather than trusted.
    """
    out, notes = {}, []

    def number(key, cast, lo, hi, field):
        if key not in params:
            return
        try:
            value = cast(params[key])
            if not (lo <= value <= hi) or (isinstance(value, float) and math.isnan(value)):
                raise ValueError
        except (TypeError, ValueError):
            notes.append(f"ignored {key}={params[key]!r} from the link: not a valid value")
        else:
            out[field] = value

    if "method" in params:
        if params["method"] in SYNTHESIZERS:
            out["method"] = params["method"]
        else:
            notes.append(f"ignored method={params['method']!r} from the link: no such method")
    number("eps", float, constraints.EPSILON_MIN, constraints.EPSILON_MAX, "epsilon")
    number("delta", float, 0.0, constraints.DELTA_MAX, "delta")
    number("seed", int, 0, constraints.SEED_MAX, "seed")
    number("n", int, 1, constraints.MAX_SYNTH_ROWS, "n")
    number("m", int, 1, constraints.MAX_IMPLICATES, "implicates")
    number("holdout", float, 0.0, 0.9, "holdout")
    if params.get("cols"):
        out["columns"] = tuple(c for c in params["cols"].split(",") if c)
    options = _options(params, out.get("method"), notes)
    if options:
        out["params"] = options
    return out, notes


def _options(params: dict[str, str], method: str | None, notes: list[str]) -> tuple:
    """The method options a link names, each checked against the method's declaration (others noted)."""
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
