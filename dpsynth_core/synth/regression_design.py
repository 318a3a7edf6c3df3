"""Regression designs over the public domain, shared by ``dp_seqreg`` and ``parametric``.

A design row u for "the variables before this one" is built from the
public schema alone, so that every entry is bounded whatever the data:

* an intercept, 1;
* a numeric predictor scaled to [−1, 1] over its declared bounds (values
  outside are clipped); when the column is nullable, the value is 0 for a
  missing entry and one more column flags the gap (1 when missing);
* a categorical predictor coded against its first declared category (one
  column per other category, 0 or 1); a nullable one gets a column for
  "missing"; a value outside the declared list codes as the reference.

Each predictor therefore puts at most one non-zero entry, of absolute value
at most 1, into u: a design row has at most q = 1 + (number of predictors)
non-zero entries. ``dp_seqreg`` derives its sensitivities from that fact.

:func:`check_options` checks the options ``pmi``, ``dp_seqreg`` and ``parametric`` share.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .. import constraints
from ..schema import ColumnSchema, Schema
from .encoding import column_domain, encode_column


def to_unit(values, col: ColumnSchema) -> np.ndarray:
    """Numeric values mapped to [−1, 1] over the declared bounds (clipped; NaN stays NaN)."""
    lo, hi = col.bounds
    x = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype=float)
    if hi <= lo:  # a constant column: every value sits at the midpoint
        return np.where(np.isnan(x), np.nan, 0.0)
    return np.clip(2.0 * (x - lo) / (hi - lo) - 1.0, -1.0, 1.0)


def from_unit(s: np.ndarray, col: ColumnSchema) -> np.ndarray:
    """Inverse of :func:`to_unit` after clipping to [−1, 1]; whole numbers rounded."""
    lo, hi = col.bounds
    x = lo + (np.clip(s, -1.0, 1.0) + 1.0) * (hi - lo) / 2.0
    # Clipped after the arithmetic: rounding can land one ulp past a bound.
    return np.clip(np.rint(x) if col.integer else x, lo, hi)


def column_features(values, col: ColumnSchema) -> np.ndarray:
    """A column as the design reads it: numeric → [−1, 1] (NaN when missing); categorical → codes.

    Categorical codes are those of :mod:`encoding`: the index in the declared
    categories, ``len(categories)`` for missing in a nullable column, −1
    otherwise (a value outside the list, or a gap the schema does not allow).
    Synthesizers that draw codes can pass them as they are and skip this step.
    """
    if col.kind == "numeric":
        return to_unit(values, col)
    return encode_column(pd.Series(values, dtype=object), column_domain(col, 1))


def block_width(col: ColumnSchema) -> int:
    """Columns one predictor takes in the design."""
    if col.kind == "numeric":
        return 1 + int(col.nullable)
    return len(col.categories) - 1 + int(col.nullable)


def design_matrix(features: dict, schema: Schema, predictors, n: int, *, intercept: bool = True) -> np.ndarray:
    """The design U (n × p) of ``predictors`` from their :func:`column_features`."""
    blocks = [np.ones((n, 1))] if intercept else []
    for p in predictors:
        col = schema[p]
        block = np.zeros((n, block_width(col)))
        f = features[p]
        if col.kind == "numeric":
            missing = np.isnan(f)
            block[:, 0] = np.where(missing, 0.0, f)
            if col.nullable:
                block[:, 1] = missing
        else:
            # code 0 (the first category) and −1 (outside) are the reference: all zeros;
            # code c ≥ 1 sets column c − 1, and the missing code (k) the last column.
            rows = np.flatnonzero(f >= 1)
            block[rows, f[rows] - 1] = 1.0
        blocks.append(block)
    return np.hstack(blocks) if blocks else np.empty((n, 0))


def design_chunk_rows(schema: Schema, predictors) -> int:
    """Rows of a design of ``predictors`` built at once, so that the design, its copy on the observed rows
    and one more column-block alive with them (three matrices of 8-byte floats) stay within the memory
    budget whatever the number of rows: from the schema alone, never from the data."""
    width = 1 + sum(block_width(schema[c]) for c in predictors)
    return max(1, constraints.MEMORY_BUDGET_BYTES // (3 * 8 * width))


def design_chunks(features: dict, schema: Schema, predictors, n: int):
    """``(rows, U)`` for consecutive slices of the n rows: :func:`design_matrix` in pieces of
    :func:`design_chunk_rows` rows (the sums a regression needs add up over the pieces)."""
    step = design_chunk_rows(schema, predictors)
    for start in range(0, n, step):
        rows = slice(start, min(n, start + step))
        yield rows, design_matrix({p: features[p][rows] for p in predictors}, schema, predictors,
                                  rows.stop - rows.start)


def design_refusal(label: str, schema: Schema, columns, rows: int) -> str | None:
    """One sentence refusing a regression design of ``rows`` × every column's block past the memory budget.

    The design, its copy on the observed rows and the column added for Y (or
    the solver's copy) are alive at once: three matrices of 8-byte floats.
    """
    width = 1 + sum(block_width(schema[c]) for c in columns)
    return constraints.over_memory_budget(
        f"{label} on {rows:,} rows with {width:,} design columns (one per category)", 3 * 8 * rows * width,
        "exclude columns with many categories on the Data page or synthesize fewer rows")


def check_options(**options) -> str | None:
    """One sentence naming the first option out of its range, or None.

    Whole-number options (``bins``, ``fit_rows``, ``max_iter``, ``cat_bins``, ``max_cells``) must be
    integers ≥ 1; ``C`` a number > 0.
    """
    for name, value in options.items():
        if name == "C":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (value > 0 and math.isfinite(value)):
                return f"C must be a positive number, got {value!r}."
        elif isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            return f"{name} must be a whole number of at least 1, got {value!r}."
    return None
