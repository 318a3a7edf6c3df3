"""Counts and sums of the measure step, on a pandas DataFrame or, partition by partition, a Dask DataFrame.

Count-based methods read the data only through sums over records (cell
counts, moment matrices), and a sum over a table is the sum of the sums over
its pieces. So their measure step runs unchanged on each partition of a Dask
DataFrame, on the cluster that holds it, and only the small sums travel back
to be added: a table larger than one machine's memory can be measured.
Counts are then identical to those of the whole table in memory; float sums
(dp_seqreg's moments) equal them up to the rounding of the order of addition.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from ..schema import Schema
from .encoding import OUTSIDE, column_domain, encode, encode_column


def is_dask(frame: Any) -> bool:
    """True for a Dask DataFrame (duck-typed: dask stays an optional dependency)."""
    return hasattr(frame, "npartitions") and hasattr(frame, "to_delayed")


def partition_sum(frame: Any, fn: Callable[[Any], Any], add: Callable[[Any, Any], Any] = operator.add) -> Any:
    """``fn(frame)`` for a pandas frame; for a Dask frame, ``fn`` of each partition, combined by ``add``.

    The partitions are measured and added on the cluster (a tree of ``add``),
    so only the combined result reaches this process.
    """
    if not is_dask(frame):
        return fn(frame)
    import dask

    parts = [dask.delayed(fn)(p) for p in frame.to_delayed()]
    while len(parts) > 1:
        parts = [dask.delayed(add)(a, b) for a, b in zip(parts[::2], parts[1::2])] + parts[len(parts) // 2 * 2:]
    return parts[0].compute()


def strides(shape: tuple[int, ...]) -> np.ndarray:
    """C-order strides of a table of ``shape`` (under the cell cap, so int64 holds them).

    Written out because numpy's ravel_multi_index stops at 64 dimensions, and a table of
    many one-level columns has few cells.
    """
    return np.array([math.prod(shape[j + 1:]) for j in range(len(shape))], dtype=np.int64)


def flat_counts(frame: Any, schema: Schema, columns: list[str], bins: int) -> np.ndarray:
    """The contingency table of :func:`counts`, flat in C order of its shape.

    Flat, it has no limit on the number of columns (numpy arrays have at most
    64 dimensions; a table of 199 one-category columns has one cell).
    """
    shape = tuple(column_domain(schema[c], bins).size for c in columns)

    def table(part) -> np.ndarray:
        codes, _ = encode(part, schema, columns, bins)
        codes = codes[(codes != OUTSIDE).all(axis=1)]
        flat = codes @ strides(shape) if len(codes) else np.empty(0, np.int64)
        return np.bincount(flat, minlength=math.prod(shape))

    return partition_sum(frame, table)


def counts(frame: Any, schema: Schema, columns: list[str], bins: int) -> np.ndarray:
    """Contingency table of ``columns`` over their public domains (numeric columns in ``bins`` bins).

    Shape: each column's domain size. A row with a value outside a column's
    declared domain is not counted. ``frame``: pandas or Dask DataFrame.
    """
    shape = tuple(column_domain(schema[c], bins).size for c in columns)
    return flat_counts(frame, schema, columns, bins).reshape(shape)


def marginals(frame: Any, schema: Schema, columns: list[str], bins: int) -> list[np.ndarray]:
    """One histogram per column (``counts`` of each column alone), in one pass over ``frame``."""
    domains = [column_domain(schema[c], bins) for c in columns]

    def histogram(codes: np.ndarray, size: int) -> np.ndarray:
        return np.bincount(codes[codes != OUTSIDE], minlength=size)

    def tables(part) -> list[np.ndarray]:
        # Column by column: no (rows × columns) array of codes is stacked (0.3 s on a million rows × 10).
        return [histogram(encode_column(part[c], d), d.size) for c, d in zip(columns, domains)]

    return partition_sum(frame, tables, add=lambda a, b: [x + y for x, y in zip(a, b)])
