"""Helpers shared by the risk measures: column kinds and value codes.

Both matching and distances need "is this value equal to that one" across two
or more frames, with a missing value equal to a missing value. Coding every
column on one dictionary shared by all frames gives that as integer equality.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..errors import DataError


def check_frame(frame: object, name: str) -> pd.DataFrame:
    """Raise TypeError unless ``frame`` is a DataFrame; return it."""
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{name} must be a pandas DataFrame, got {type(frame).__name__}")
    return frame


def is_numeric(series: pd.Series) -> bool:
    """True for int/float columns; bool and category count as categorical."""
    dtype = series.dtype
    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


def as_float(series: pd.Series, column: str) -> np.ndarray:
    """Values of a numeric column as float64, missing values as NaN."""
    try:
        return series.to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError):
        raise DataError(
            f"Column {column!r} is declared numeric but holds values that are not numbers; "
            "declare it categorical or clean it."
        ) from None


def shared_codes(parts: Sequence[pd.Series]) -> list[np.ndarray]:
    """Integer codes of the values of several series on one shared dictionary.

    Equal values get equal codes across all ``parts``, and every missing value
    (NaN, None, NA) gets one code of its own, so a missing value equals a
    missing value, as in a group-by with ``dropna=False``.
    """
    series = [pd.Series(p, copy=False) for p in parts]
    if len({s.dtype for s in series}) == 1 and isinstance(series[0].dtype, np.dtype) \
            and series[0].dtype.kind in "biufcmM":  # numbers of one dtype: joined as they are, fast to hash
        codes, uniques = pd.factorize(pd.concat(series, ignore_index=True))
        codes = codes.astype(np.int64, copy=False)
        codes[codes < 0] = len(uniques)
        return np.split(codes, np.cumsum([len(s) for s in series])[:-1])
    # Text, or parts of different dtypes (text and Python objects, Int64 and int64) that would be joined
    # as Python objects, slow to hash: each part is factorised alone and only their distinct values are
    # joined and factorised again. Numbered in order of first appearance either way: the same codes.
    found, distinct = zip(*(pd.factorize(s) for s in series))
    shared, uniques = pd.factorize(pd.concat([pd.Series(d, copy=False) for d in distinct], ignore_index=True))
    offsets = np.cumsum([0, *(len(d) for d in distinct)])
    # A missing value (code -1) takes the last code, len(uniques).
    return [np.append(shared[start:stop], len(uniques)).astype(np.int64)[codes]
            for codes, start, stop in zip(found, offsets[:-1], offsets[1:])]


def combine_codes(columns: Sequence[np.ndarray], size: int) -> np.ndarray:
    """One id per row such that rows share an id exactly when all codes agree, numbered in order of
    first appearance (below the row count).

    The codes are packed as digits of a mixed-radix number, ``id * k + code``, re-factorised only when
    the next column would overflow int64 (a factorisation keeps ids below the row count), so a table of
    few-valued columns is factorised once rather than once per column.
    """
    ids, span = np.zeros(size, dtype=np.int64), 1
    for codes in columns:
        k = int(codes.max()) + 1 if size else 1
        if span * k >= 2 ** 62:  # Python ints: the test itself cannot overflow
            ids = pd.factorize(ids)[0].astype(np.int64)
            span = int(ids.max()) + 1 if size else 1
        ids, span = ids * k + codes, span * k
    return pd.factorize(ids)[0].astype(np.int64)
