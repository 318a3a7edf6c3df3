"""Demo 1: ε as the bound e^ε on the ratio of an output's probabilities on neighbouring datasets."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..privacy.mechanisms import check_epsilon
from ._checks import check_int, check_unit

RATIO_TABLE_EPSILONS = (0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0)


def probability_ratio_table(epsilons=RATIO_TABLE_EPSILONS, *, base_probability: float = 0.01,
                            percent: bool = False) -> pd.DataFrame:
    """What ε promises: the bound e^ε on the ratio of an outcome's probabilities.

    For ε-DP, any outcome's probability with one person's record in the data is
    at most e^ε times (and at least e^−ε times) its probability without it.

    Parameters
    ----------
    epsilons : sequence of float, default (0.01, 0.1, 0.5, 1, 2, 5, 10)
        Privacy parameters, each > 0.
    base_probability : float, default 0.01
        An outcome's probability without the record, in [0, 1], to turn the
        ratio into a range of probabilities.
    percent : bool, default False
        Give the two probabilities in percent (× 100), as the Learn page shows them.

    Returns
    -------
    pandas.DataFrame
        Columns ``epsilon``, ``exp_epsilon`` (e^ε), ``lowest_probability``
        (base·e^−ε) and ``highest_probability`` (min(1, base·e^ε)).

    Examples
    --------
    >>> t = probability_ratio_table([1.0, 10.0])
    >>> [round(v, 2) for v in t["exp_epsilon"]]
    [2.72, 22026.47]
    """
    base = check_unit("base_probability", base_probability)
    eps = np.array([check_epsilon(e) for e in epsilons], dtype=float)
    ratio = np.exp(eps)
    unit = 100.0 if percent else 1.0
    return pd.DataFrame({
        "epsilon": eps,
        "exp_epsilon": ratio,
        "lowest_probability": unit * base * np.exp(-eps),
        "highest_probability": unit * np.minimum(1.0, base * ratio),
    })


def exp_epsilon_curve(lower: float = 0.01, upper: float = 10.0, points: int = 200) -> pd.DataFrame:
    """e^ε on a log-spaced grid of ε from ``lower`` to ``upper`` (columns ``epsilon``, ``exp_epsilon``)."""
    lower, upper = check_epsilon(lower), check_epsilon(upper)
    if upper <= lower:
        raise ValueError(f"upper must exceed lower, got lower={lower!r}, upper={upper!r}")
    eps = np.geomspace(lower, upper, check_int("points", points, 2))
    return pd.DataFrame({"epsilon": eps, "exp_epsilon": np.exp(eps)})
