"""No-information references: the public domain, random guesses and random data.

A disclosure measure means little alone: an intruder learns something from
any data, even from random values inside the public domain (the declared
categories and bounds). These helpers give what such an intruder gets: the
probability that a value drawn uniformly from a column's public domain
equals (or falls within a tolerance of) a record's value, and random data
drawn that way. Without a schema the domain is read off the data compared,
and the result says so.

A nullable column's domain holds "missing" too: as one more category of a
categorical column (as the synthesizers model it), and as one more of
:data:`~dpsynth_core.constraints.DEFAULT_BINS` + 1 equally likely bins of a
numeric one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..constraints import DEFAULT_BINS
from ._base import as_float, is_numeric

__all__ = ["Domain", "column_domain", "hit_probability", "random_public_data"]


@dataclass(frozen=True)
class Domain:
    """Public domain of one column: its categories, or numeric bounds."""

    kind: str  # "categorical" or "numeric"
    categories: tuple | None = None
    lower: float = 0.0
    upper: float = 0.0
    integer: bool = False
    nullable: bool = False
    declared: bool = True  # False: read off the data

    @property
    def missing_probability(self) -> float:
        """Probability that a uniform draw from the domain is a missing value."""
        if not self.nullable:
            return 0.0
        return 1.0 / (len(self.categories) + 1) if self.kind == "categorical" else 1.0 / (DEFAULT_BINS + 1)

    @property
    def size(self) -> float:
        """Number of values a uniform draw can take, missing included (inf for a continuous range)."""
        if self.kind == "categorical":
            return float(len(self.categories) + self.nullable)
        if self.integer:
            return float(max(math.floor(self.upper) - math.ceil(self.lower) + 1, 1) + self.nullable)
        return math.inf if self.upper > self.lower else 1.0 + self.nullable


def column_domain(name: str, frames: Sequence[pd.DataFrame], schema: Any = None) -> Domain:
    """The public domain of column ``name``: declared in ``schema``, else read off ``frames``."""
    col = None if schema is None else getattr(schema, "columns", {}).get(name)
    series = [f[name] for f in frames if name in f.columns]
    if col is not None and col.kind in ("categorical", "numeric"):
        nullable = bool(getattr(col, "nullable", False))
        declared = not getattr(col, "derived", False)
        if col.kind == "categorical" and getattr(col, "categories", None):
            return Domain("categorical", tuple(col.categories), nullable=nullable, declared=declared)
        if col.kind == "numeric" and getattr(col, "bounds", None) is not None:
            lo, hi = (float(b) for b in col.bounds)
            return Domain("numeric", lower=lo, upper=hi, integer=bool(getattr(col, "integer", False)),
                          nullable=nullable, declared=declared)
    nullable = any(s.isna().any() for s in series)
    if series and all(is_numeric(s) for s in series):
        values = np.concatenate([as_float(s, name) for s in series])
        values = values[~np.isnan(values)]
        lo, hi = (float(values.min()), float(values.max())) if values.size else (0.0, 0.0)
        integer = all(pd.api.types.is_integer_dtype(s.dtype) for s in series)
        return Domain("numeric", lower=lo, upper=hi, integer=integer, nullable=nullable, declared=False)
    values = pd.concat(series, ignore_index=True).dropna().unique() if series else []
    return Domain("categorical", tuple(values) if len(values) else ("",), nullable=nullable, declared=False)


def hit_probability(values: pd.Series, domain: Domain, tolerance: float = 0.0) -> np.ndarray:
    """Probability that a uniform draw from ``domain`` equals each value (within ``tolerance``).

    Categorical: 1/K for a listed category, 0 otherwise. Numeric: the share
    of the range within ``tolerance`` of the value (whole numbers counted
    for an integer column); with no tolerance, 1 over the number of whole
    numbers for an integer column and 0 for a continuous one. In a nullable
    domain a missing value is one more category or bin (see the module
    notes), and the values share the rest; elsewhere it is never drawn.

    Examples
    --------
    >>> d = Domain("numeric", lower=0.0, upper=10.0)
    >>> hit_probability(pd.Series([5.0, 0.0, None]), d, tolerance=1.0).tolist()
    [0.2, 0.1, 0.0]
    """
    series = pd.Series(values, copy=False)
    missing = series.isna().to_numpy()
    p_missing = domain.missing_probability
    if domain.kind == "categorical":
        listed = series.isin(list(domain.categories)).to_numpy()
        return np.where(listed, 1.0 / domain.size, np.where(missing, p_missing, 0.0))
    x = as_float(series, str(getattr(values, "name", "column")))
    lo, hi = domain.lower, domain.upper
    with np.errstate(invalid="ignore"):
        a, b = np.maximum(lo, x - tolerance), np.minimum(hi, x + tolerance)
        if domain.integer:
            hits = np.floor(b + 1e-9) - np.ceil(a - 1e-9) + 1
            p = np.clip(hits, 0, None) / max(math.floor(hi) - math.ceil(lo) + 1, 1)
        elif hi > lo:
            p = np.clip(b - a, 0, None) / (hi - lo)
        else:
            p = (np.abs(x - lo) <= tolerance).astype(float)
    return np.where(np.isnan(x), p_missing, np.clip(p, 0.0, 1.0) * (1.0 - p_missing))


def random_public_data(columns: Sequence[str], domains: dict[str, Domain], n: int,
                       rng: np.random.Generator) -> pd.DataFrame:
    """``n`` rows drawn uniformly and independently from each column's public domain."""
    out = {}
    for c in columns:
        d = domains[c]
        if d.kind == "categorical":
            # Drawn as codes of a pandas Categorical, not a million labels: equal categories (1 and True)
            # share one code, and a nullable domain's last draw is missing.
            codes, distinct = pd.factorize(pd.Series(list(d.categories), dtype=object))
            draws = np.append(codes, -1)[rng.integers(0, len(d.categories) + d.nullable, n)]
            out[c] = pd.Categorical.from_codes(draws, categories=distinct)
            continue
        if d.integer and max(abs(d.lower), abs(d.upper)) < 2.0 ** 62:  # numpy draws whole numbers in int64
            lo = math.ceil(d.lower)
            values = rng.integers(lo, max(math.floor(d.upper), lo) + 1, n).astype(float)
        else:
            # Drawn over half the range and doubled (exact): a range near ±1.8e308 overflows a float.
            values = 2.0 * rng.uniform(d.lower / 2.0, d.upper / 2.0, n)
            if d.integer:
                values = np.clip(np.rint(values), d.lower, d.upper)
        out[c] = np.where(rng.random(n) < d.missing_probability, np.nan, values)
    return pd.DataFrame(out)
