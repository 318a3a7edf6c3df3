"""Discretise columns over their public domain, and back.

Methods that work on categories see every column as integer codes
0..size−1: a categorical column's declared categories, a numeric column's
equal-width bins over its declared bounds (one bin per value for a small
integer range) followed by one cell per special value, and, for a nullable
column, one last code for "missing". Decoding draws a numeric value
uniformly inside its bin, so no real value is ever copied; a special value's
cell decodes to that value exactly (it is public: declared or estimated
privately), and a bin never decodes to a special value of a whole-number
column, so each special value's share is its cell's.

The special-value cells are kept in their own functions (:func:`with_specials`,
:func:`encode_specials`, :func:`decode_specials`), apart from the binning of
the numeric range, so the two can change independently.

A numeric column may be modelled on a fine grid and measured through coarser
views of it (:func:`view_codes`): adjacent bins merged, its special-value and
missing cells kept their own in every view.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..schema import ColumnSchema, Schema

OUTSIDE = -1  # code of a value outside the declared categories (not counted)
_EXACT_INTEGERS = 2.0 ** 53  # below it every whole number is a float of its own


@dataclass(frozen=True)
class Domain:
    """The discretised domain of one column."""

    column: ColumnSchema
    labels: tuple            # category values, or bin intervals then special values for numeric
    edges: np.ndarray | None  # numeric bin edges, one more than the bins
    specials: tuple = ()     # a numeric column's special values, coded after its bins

    @property
    def size(self) -> int:
        return len(self.labels) + int(self.column.nullable)

    @property
    def n_bins(self) -> int:
        """Codes of the numeric range's bins (0 … n_bins − 1); every label for a categorical column."""
        return len(self.labels) - len(self.specials)

    @property
    def missing_code(self) -> int | None:
        return len(self.labels) if self.column.nullable else None


def column_domain(col: ColumnSchema, bins: int) -> Domain:
    """Domain of ``col``: its categories, or ``bins`` bins over its bounds and its special values."""
    if col.kind == "categorical":
        return Domain(col, tuple(col.categories), None)
    if col.kind != "numeric":
        raise ValueError(f"column {col.name!r} is excluded and has no domain")
    edges = numeric_edges(*col.bounds, integer=col.integer, bins=bins)
    labels = tuple(zip(edges[:-1], edges[1:]))
    return with_specials(Domain(col, labels, edges))


def numeric_edges(lo: float, hi: float, *, integer: bool, bins: int) -> np.ndarray:
    """Bin edges over the bounds [lo, hi]: one bin per whole number for a small integer range, else ``bins``
    equal-width bins; a single-value domain (lo = hi) is one bin of width 0, which decodes to that value.

    Floating point cannot always draw those grids: past 2**53 neighbouring whole numbers share one float, so
    there a small integer range gets equal-width bins instead of one per whole number, repeated edges are
    merged, and bounds that collapse to one float (integers such as 2**64 and 2**64 + 1, both
    1.8446744073709552e19) get the single-value bin: every domain has at least one bin (issue 31.12: an
    empty one crashed every method that bins). The edges depend on the declared bounds only, never on the data.

    >>> numeric_edges(0.0, 3.0, integer=True, bins=20).tolist()
    [-0.5, 0.5, 1.5, 2.5, 3.5]
    >>> numeric_edges(2.0**64, 2.0**64 + 1, integer=True, bins=20).tolist()  # one float: one bin
    [1.8446744073709552e+19, 1.8446744073709552e+19]
    """
    if integer and hi - lo + 1 <= bins and max(abs(lo), abs(hi)) < _EXACT_INTEGERS:
        # one bin per whole number: decoding then gives back exact integers
        edges = np.arange(np.floor(lo), np.floor(hi) + 2) - 0.5
    elif hi > lo:
        edges = np.linspace(lo, hi, bins + 1)
    else:
        edges = np.array([lo, hi], dtype=float)
    edges = np.unique(edges)  # sorted already; merges the edges floating point made equal
    return edges if len(edges) > 1 else np.array([lo, hi], dtype=float)


def view_codes(domain: Domain, merge: int) -> np.ndarray:
    """The code, in a coarser view of ``domain``, of each of its codes: a numeric column's bins merged
    ``merge`` at a time (adjacent ones, in order; the last cell may hold fewer), each special value's cell
    and the missing cell their own cells after them. Categories are not merged (they have no order).

    The views depend on the declared domain alone, so a table measured over a view is a marginal like any
    other: one record adds 1 to one of its cells.

    >>> col = ColumnSchema(name="x", kind="numeric", bounds=(0.0, 10.0), specials=(0.0,), nullable=True)
    >>> view_codes(column_domain(col, 5), 2).tolist()  # 5 bins, the special 0, missing
    [0, 0, 1, 1, 2, 3, 4]
    """
    if domain.column.kind != "numeric" or merge <= 1:
        return np.arange(domain.size)
    merged = np.arange(domain.n_bins) // merge
    return np.concatenate([merged, merged[-1] + 1 + np.arange(domain.size - domain.n_bins)])


# -- special values: one cell each, released exactly -------------------------------------------------

def with_specials(domain: Domain) -> Domain:
    """``domain`` with a cell for each of its column's special values, after the bins."""
    specials = domain.column.specials
    if not specials:
        return domain
    return Domain(domain.column, domain.labels + tuple(specials), domain.edges, tuple(specials))


def encode_specials(raw: np.ndarray, codes: np.ndarray, domain: Domain) -> np.ndarray:
    """``codes`` with each value equal to a special value (exactly, before any clipping) in its cell."""
    for k, value in enumerate(domain.specials):
        codes[raw == value] = domain.n_bins + k
    return codes


#: Draws of a whole-number bin that land on a special value are drawn again, at most this many times
#: (a bin [0, 2.5) with 0 special: (1/5)^50 of a draw is left on 0; a bin that holds only special
#: whole numbers keeps them).
SPECIAL_REDRAWS = 50


def decode_specials(codes: np.ndarray, x: np.ndarray, domain: Domain, draw_bin) -> np.ndarray:
    """``x`` (values drawn inside the bins of ``codes``) with the special cells set to their values, and the
    bins' draws moved off the special values by drawing again (``draw_bin(rows)`` draws those rows afresh):
    a whole-number draw equal to one, or a draw that the column's declared precision (the synthetic frame
    is written rounded to it) would round onto one."""
    if not domain.specials:
        return x
    col = domain.column
    specials = np.asarray(domain.specials, dtype=float)

    def on_special(values: np.ndarray) -> np.ndarray:
        if col.integer:
            return np.isin(values, specials)
        if col.decimals is not None:
            return np.isin(np.round(values, col.decimals), specials)
        return np.zeros(len(values), bool)  # a continuous draw equals a given value with probability 0

    again = np.flatnonzero((codes < domain.n_bins) & on_special(x))
    for _ in range(SPECIAL_REDRAWS):
        if not len(again):
            break
        x[again] = draw_bin(again)
        again = again[on_special(x[again])]
    special = (codes >= domain.n_bins) & (codes < domain.n_bins + len(specials))
    x[special] = specials[codes[special] - domain.n_bins]
    return x


def encode_column(values: pd.Series, domain: Domain) -> np.ndarray:
    """Integer codes of ``values`` in ``domain`` (``OUTSIDE`` where not representable)."""
    col = domain.column
    missing = values.isna().to_numpy()
    if col.kind == "categorical":
        # Each distinct value is looked up among the categories once, not each of a million labels
        # (a third of the time), by the lookup pd.Categorical(values, categories) makes.
        found, distinct = pd.factorize(values)
        lookup = pd.CategoricalDtype(list(domain.labels)).categories.get_indexer_for(distinct).astype(np.int64)
        codes = np.append(lookup, OUTSIDE)[found]  # a missing value (-1) is coded just below
    else:
        lo, hi = col.bounds
        raw = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
        missing = np.isnan(raw)  # text coerced to NaN is missing, never the top bin
        x = np.clip(np.where(missing, lo, raw), lo, hi)
        inner = domain.edges[1:-1]
        codes = encode_specials(raw, np.searchsorted(inner, x, side="right").astype(np.int64), domain)
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
    bin_of = np.minimum(safe, domain.n_bins - 1)  # a special cell's draw is replaced by its value below
    left, right = domain.edges[bin_of], domain.edges[bin_of + 1]

    def draw(rows) -> np.ndarray:
        x = left[rows] + rng.random(len(rows)) * (right[rows] - left[rows])
        return np.clip(np.rint(x) if col.integer else x, lo, hi)

    x = decode_specials(safe, draw(np.arange(n)), domain, draw)
    x[is_missing] = np.nan
    return x


def keep_in_domain(values: np.ndarray, col: ColumnSchema) -> np.ndarray:
    """Real values of a column as a method that copies them releases: inside the declared domain.

    Numbers are clipped to the bounds, bar the special values; a category outside the declared list (or
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
    special = np.isin(x, np.asarray(col.specials, dtype=float))
    outside = (((x < lo) | (x > hi)) & ~special) | (np.isnan(x) & pd.notna(values))
    return np.where(special, x, np.clip(x, lo, hi)) if outside.any() else values


def encode(df: pd.DataFrame, schema: Schema, columns: list[str], bins: int) -> tuple[np.ndarray, list[Domain]]:
    """Codes of ``columns`` as an (n, len(columns)) array, with their domains."""
    domains = [column_domain(schema[c], bins) for c in columns]
    codes = np.column_stack([encode_column(df[c], d) for c, d in zip(columns, domains)]) if columns else np.empty((len(df), 0), np.int64)
    return codes, domains


def schema_dtype(col: ColumnSchema):
    """The pandas dtype of ``col``'s synthetic values, from the schema alone (never the data).

    Whole-number numeric columns get the nullable ``Int64`` (68, not 68.0, with
    room for missing values); other numeric columns ``float64``; categorical
    columns the type of their declared categories (nullable integer or boolean,
    text, float), ``object`` when they mix types; excluded columns ``object``.
    """
    if col.kind == "numeric":
        return "Int64" if col.integer else "float64"
    if col.kind != "categorical":
        return "object"
    cats = list(col.categories)
    if all(isinstance(c, (bool, np.bool_)) for c in cats):
        return "boolean"
    if all(isinstance(c, (int, np.integer)) and not isinstance(c, (bool, np.bool_)) for c in cats):
        # whole numbers past int64 (a CSV may hold 2**64) stay Python ints
        return "Int64" if all(-2**63 <= int(c) < 2**63 for c in cats) else "object"
    if all(isinstance(c, str) for c in cats):
        return "str"
    if all(isinstance(c, (float, np.floating)) for c in cats):
        return "float64"
    return "object"


def in_schema_dtype(values, col: ColumnSchema) -> pd.Series:
    """``values`` in :func:`schema_dtype`, numbers rounded to the column's declared precision (``decimals``);
    values that do not fit (only kept or non-DP columns can hold them) are left as they are.

    The rounding happens here, where every synthetic frame is assembled, so that every path (the app,
    the command line, a release) and every statistic computed from a synthesis (previews, reports)
    sees the values that are released; digits past the declared precision would only carry more of
    the record generator's output."""
    if col.kind == "categorical" and isinstance(values, np.ndarray) and values.dtype == object:
        typed = _labels_as(values, schema_dtype(col))
        if typed is not None:
            return typed
    s = pd.Series(values).reset_index(drop=True)
    if col.kind == "excluded":
        return s
    dtype = schema_dtype(col)
    try:
        if col.kind == "numeric":
            x = pd.to_numeric(s, errors="coerce").astype(float)
            decimals = 0 if col.integer else col.decimals
            if decimals is None:
                return x
            rounded = _round_within(x.to_numpy(), decimals, col.bounds)
            out = pd.Series(rounded, name=s.name)
            return out.astype("Int64") if col.integer else out
        return s.astype(dtype)
    except (TypeError, ValueError, OverflowError):
        return s


def _round_within(x: np.ndarray, decimals: int, bounds) -> np.ndarray:
    """``x`` rounded to ``decimals``; a value inside the bounds stays inside them (a bound off the
    grid, such as an upper bound 0.97 at one decimal, rounds inward to 0.9, not out to 1.0). Where no
    grid point lies between the bounds the values are rounded plainly; values already outside the
    bounds (kept columns of a non-DP method) are rounded and left where they are."""
    rounded = np.round(x, decimals)
    if bounds is None:
        return rounded
    lo, hi = (float(b) for b in bounds)
    scale = 10.0 ** decimals
    with np.errstate(over="ignore", invalid="ignore"):
        lo_grid, hi_grid = np.ceil(lo * scale) / scale, np.floor(hi * scale) / scale
    if not (np.isfinite(lo_grid) and np.isfinite(hi_grid) and lo_grid <= hi_grid):
        return rounded
    inside = (x >= lo) & (x <= hi)
    return np.where(inside, np.clip(rounded, lo_grid, hi_grid), rounded)


def _labels_as(values: np.ndarray, dtype) -> pd.Series | None:
    """``pd.Series(values).astype(dtype)`` for a column of a few labels as Python objects (what decoding
    gives), each distinct label converted once and then taken row by row: a million labels in a fifth
    of the time. None where that way does not apply (the caller then converts row by row).

    Equal labels of different types (1, 1.0, True) are one distinct value; they convert alike to a
    number or a boolean, but not to text, so text goes this way only when every label is a string.
    """
    found, distinct = pd.factorize(values)
    if dtype == "object" or (dtype == "str" and not all(isinstance(v, str) for v in distinct)):
        return None
    try:
        typed = pd.Series(distinct, dtype=object).astype(dtype).array
    except (TypeError, ValueError, OverflowError):
        return None
    return pd.Series(typed.take(found, allow_fill=True))


def assemble_frame(values: dict[str, np.ndarray], schema: Schema, columns, n: int) -> pd.DataFrame:
    """The synthetic frame: ``columns`` in order, each column's dtype from ``schema`` alone.

    Nothing of the confidential frame but its column names (public: they are
    the schema's) reaches the output's form. Columns absent from ``values``
    (excluded ones) are released all missing: their content and dtype depend
    on the schema only.
    """
    out = {}
    for c in columns:
        col = schema[c] if c in schema.columns else ColumnSchema(str(c), "excluded")
        if c in values:
            out[c] = in_schema_dtype(values[c], col)
        else:
            out[c] = pd.Series(np.full(n, None, dtype=object), dtype=object)
    return pd.DataFrame(out, columns=list(columns))
