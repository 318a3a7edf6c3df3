"""A synthesis configuration as URL query parameters, and back, never the data.

The settings' own parameters are :meth:`RunSettings.to_query <dpsynth_core.settings.RunSettings.to_query>`'s;
this module adds which data they are for. The dataset is named by its bundled name or, for an upload, by a
keyed hash (HMAC-SHA-256) of its content under a secret drawn once per server process that never leaves the
server: the link restores the settings only on the same data uploaded to the same running server, and
carries no fingerprint of the data that anyone without the secret could compare against a guess.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from .settings import RunSettings

TOKEN_CHARS = 16
_LINK_SECRET = secrets.token_bytes(32)  # per server process; never written, logged or sent


def config_params(settings: RunSettings, *, dataset: str) -> dict[str, str]:
    """Query parameters for ``settings`` on ``dataset`` (a :func:`dataset_token`)."""
    return {"data": dataset, **settings.to_query()}


def dataset_token(source: str, name: str, fingerprint: str) -> str:
    """``bundled:<name>`` or ``upload:<keyed hash>``: which data a link is for, never a hash of the data."""
    if source == "bundled":
        return f"bundled:{name}"
    tag = hmac.new(_LINK_SECRET, fingerprint.encode("utf-8"), hashlib.sha256).hexdigest()
    return f"upload:{tag[:TOKEN_CHARS]}"


def parse_config_params(params: dict[str, str]) -> tuple[dict, list[str]]:
    """Settings read from query parameters (only those named, as :class:`RunSettings` fields), and one note
    per value that was ignored: anything malformed or out of range is dropped (and noted) rather than trusted."""
    return RunSettings.from_query(params)
