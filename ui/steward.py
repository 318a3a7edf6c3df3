"""The R-U map's words around the steward's question: where the utility threshold starts and what this app calls
acceptable, for the page (the answers themselves, numbers with their reports, are :mod:`dpsynth_core.frontier`'s)."""

from __future__ import annotations

import dpsynth_core as core

def threshold_note(utility: str) -> str:
    """Where the steward's threshold starts (:func:`dpsynth_core.frontier.default_threshold`), in words."""
    info = core.METRICS.get(utility)
    label = info.label if info is not None else utility
    if info is not None and info.acceptable is not None:
        return (f"The threshold starts at {info.acceptable:g}, the {label} this app calls acceptable "
                f"({acceptable_text(info)}): type a stricter value if you need one.")
    return (f"This app states no acceptable level of {label}, so the threshold starts halfway between the "
            "method's best and worst point in this sweep, a split of the sweep rather than a standard: type the "
            "value you would accept. An answer on this measure is never marked acceptable (green).")


def acceptable_text(info) -> str:
    """The acceptable side of a measure's stated level in words: "under 10", "over 0.8"."""
    above = info.goal == "maximize" or (info.goal == "target" and info.acceptable < info.best)
    return f"{'over' if above else 'under'} {info.acceptable:g}"
