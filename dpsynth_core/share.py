"""A synthesis configuration as URL query parameters, and back, never the data.

The settings' own parameters are :meth:`RunSettings.to_query <dpsynth_core.settings.RunSettings.to_query>`'s
(read back by :meth:`RunSettings.from_query <dpsynth_core.settings.RunSettings.from_query>`, which drops and
notes any value malformed or out of range); this module adds which data they are for. The dataset is named
by its bundled name or, for an upload, by a keyed hash (HMAC-SHA-256) of its content under a secret drawn
once per server process that never leaves the server: the link restores the settings only on the same data
uploaded to the same running server, and carries no fingerprint of the data that anyone without the secret
could compare against a guess.

An upload's token also carries a check, a keyed hash of the first part under the same secret, so the server
can tell without the data whether one of its links was made by this very process: one that fails was made
before the server restarted, or by another server (:func:`made_here`).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from .settings import RunSettings

TOKEN_CHARS = 16
CHECK_CHARS = 8
_LINK_SECRET = secrets.token_bytes(32)  # per server process; never written, logged or sent


def config_params(settings: RunSettings, *, dataset: str) -> dict[str, str]:
    """Query parameters for ``settings`` on ``dataset`` (a :func:`dataset_token`)."""
    return {"data": dataset, **settings.to_query()}


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

