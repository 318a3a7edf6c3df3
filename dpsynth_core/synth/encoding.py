"""Discretise columns over their public domain, and back.

Methods that work on categories see every column as integer codes
0..size−1: a categorical column's declared categories, a numeric column's
equal-width bins over its declared bounds (one bin per value for a small
integer range), and, for a nullable column, one last code for "missing".
Decoding draws a numeric value uniformly inside its bin, so no real value is
ever copied.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..schema import ColumnSchema, Schema

OUTSIDE = -1  # code of a value outside the declared categories (not counted)


@dataclass(frozen=True)
class Domain:
    """The discretised domain of one column."""

    column: ColumnSchema
    labels: tuple            # category values, or bin intervals for numeric
    edges: np.ndarray | None  # numeric bin edges, len(labels) + 1

    @property
    def size(self) -> int:
        return len(self.labels) + int(self.column.nullable)

    @property
    def missing_code(self) -> int | None:
        return len(self.labels) if self.column.nullable else None


def column_domain(col: ColumnSchema, bins: int) -> Domain:
    """Domain of ``col``: its categories, or ``bins`` bins over its bounds."""
    if col.kind == "categorical":
        return Domain(col, tuple(col.categories), None)
    if col.kind != "numeric":
        raise ValueError(f"column {col.name!r} is excluded and has no domain")
    lo, hi = col.bounds
    if col.integer and hi - lo + 1 <= bins:
        # one bin per whole number: decoding then gives back exact integers
        edges = np.arange(np.floor(lo), np.floor(hi) + 2) - 0.5
    elif hi > lo:
        edges = np.linspace(lo, hi, bins + 1)
    else:
        edges = np.array([lo, hi], dtype=float)
    labels = tuple(zip(edges[:-1], edges[1:]))
    return Domain(col, labels, edges)


def encode_column(values: pd.Series, domain: Domain) -> np.ndarray:
    """Integer codes of ``values`` in ``domain`` (``OUTSIDE`` where not representable)."""
    col = domain.column
    missing = values.isna().to_numpy()
    if col.kind == "categorical":
        codes = pd.Categorical(values, categories=list(domain.labels)).codes.astype(np.int64)
    else:
        lo, hi = col.bounds
        x = np.clip(pd.to_numeric(values, errors="coerce").to_numpy(dtype=float), lo, hi)
        inner = domain.edges[1:-1]
        codes = np.searchsorted(inner, x, side="right").astype(np.int64)
    codes[missing] = domain.missing_code if col.nullable else OUTSIDE
    return codes


def decode_column(codes: np.ndarray, domain: Domain, rng: np.random.Generator) -> np.ndarray:
    """Values for ``codes``: categories, or uniform draws inside numeric bins."""
    col = domain.column
    n = len(codes)
    is_missing = codes == domain.missing_code if col.nullable else np.zeros(n, bool)
    safe = np.where(is_missing, 0, codes)
    if col.kind == "categorical":
        out = np.empty(n, dtype=object)
        out[:] = np.asarray(domain.labels, dtype=object)[safe]
        out[is_missing] = np.nan
        return out
    lo, hi = col.bounds
    left, right = domain.edges[safe], domain.edges[safe + 1]
    x = left + rng.random(n) * (right - left)
    x = np.clip(np.rint(x) if col.integer else x, lo, hi)
    x[is_missing] = np.nan
    return x


def keep_in_domain(values: np.ndarray, col: ColumnSchema) -> np.ndarray:
    """Real values of a column as a method that copies them releases: inside the declared domain.

    Numbers are clipped to the bounds; a category outside the declared list (or
    text in a numeric column) becomes missing, since an undeclared value must
    not be released. Values already inside come back as they are (whole
    numbers past 2**53 stay exact).
    """
    if col.kind == "categorical":
        known = pd.Series(values, dtype=object).isin(list(col.categories)).to_numpy() | pd.isna(values)
        if known.all():
            return values
        out = np.asarray(values, dtype=object).copy()
        out[~known] = np.nan
        return out
    if col.kind != "numeric":
        return values
    x = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype=float)
    lo, hi = col.bounds
    outside = (x < lo) | (x > hi) | (np.isnan(x) & pd.notna(values))
    return np.clip(x, lo, hi) if outside.any() else values


def encode(df: pd.DataFrame, schema: Schema, columns: list[str], bins: int) -> tuple[np.ndarray, list[Domain]]:
    """Codes of ``columns`` as an (n, len(columns)) array, with their domains."""
    domains = [column_domain(schema[c], bins) for c in columns]
    codes = np.column_stack([encode_column(df[c], d) for c, d in zip(columns, domains)]) if columns else np.empty((len(df), 0), np.int64)
    return codes, domains


def restore_dtypes(values: dict[str, np.ndarray], template: pd.DataFrame, n: int) -> pd.DataFrame:
    """Assemble a frame with ``template``'s column order and, where possible, dtypes.

    Columns absent from ``values`` (excluded ones) are released without
    their data: whole-number columns get fresh row numbers 1..n, others are
    left missing.
    """
    out = {}
    for c in template.columns:
        dtype = template[c].dtype
        if c in values:
            col = pd.Series(values[c])
        elif pd.api.types.is_integer_dtype(dtype):
            col = pd.Series(np.arange(1, n + 1))
        else:
            col = pd.Series(np.full(n, np.nan, dtype=object))
        try:
            col = col.astype(dtype)
        except (TypeError, ValueError):
            pass  # e.g. missing values drawn for a whole-number column: keep floats
        out[c] = col.reset_index(drop=True)
    return pd.DataFrame(out, columns=template.columns)
