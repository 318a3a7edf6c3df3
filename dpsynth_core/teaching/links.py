"""A demo's settings read back from a shared link's query parameters."""

from __future__ import annotations

import math

import numpy as np


def link_value(text: str, default, *, options=None, low=None, high=None):
    """A demo control's value read from a link's query parameter, or None if it is not a valid one.

    The text is read as the type of ``default`` (bool from "true"/"false", int, float, or str) and must
    be one of ``options`` or lie in [``low``, ``high``]; a link is user input, so anything else is
    dropped and the control keeps its default.

    Examples
    --------
    >>> link_value("0.5", 1.0, options=[0.1, 0.5, 1.0]), link_value("7", 3, low=0, high=5)
    (0.5, None)
    """
    try:
        if isinstance(default, bool):
            value = {"true": True, "false": False}[str(text).lower()]
        elif isinstance(default, (int, np.integer)):
            value = int(text)
        elif isinstance(default, float):
            value = float(text)
            if not math.isfinite(value):
                return None
        else:
            value = str(text)
    except (KeyError, TypeError, ValueError):
        return None
    if options is not None:
        return next((o for o in options if o == value or (isinstance(o, float) and math.isclose(o, value))), None)
    if (low is not None and value < low) or (high is not None and value > high):
        return None
    return value
