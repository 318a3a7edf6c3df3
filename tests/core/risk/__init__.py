"""Risk tests; :func:`population` is the synthetic population both risk test files draw from."""

import numpy as np
import pandas as pd


def population(rng: np.random.Generator, n: int) -> pd.DataFrame:
    """Two numeric columns (normal, gamma) and a four-level categorical one."""
    return pd.DataFrame({
        "x": rng.normal(0, 1, n),
        "y": rng.gamma(2.0, 1.0, n),
        "g": rng.choice(["a", "b", "c", "d"], n, p=[0.4, 0.3, 0.2, 0.1]),
    })
