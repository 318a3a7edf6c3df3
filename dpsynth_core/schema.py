"""What is public about a dataset: each column's kind and domain.

A differentially private synthesis may only clip and bin against bounds and
category lists that are public (METHODS.md §1). :func:`infer_schema` reads
them off the data so a user can start at once, but marks each one
``derived``: a synthesis that relies on a derived domain is labelled "not DP".
Declaring the domain (:meth:`Schema.from_dict`, or editing the table on the
Data page) makes it public.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Iterable, Literal

import numpy as np
import pandas as pd

from . import constraints
from .errors import DataError

Kind = Literal["categorical", "numeric", "excluded"]
KINDS: tuple[str, ...] = ("categorical", "numeric", "excluded")


@dataclass(frozen=True, kw_only=True)
class ColumnSchema:
    """The public description of one column.

    Parameters
    ----------
    name : str
        Column name.
    kind : {"categorical", "numeric", "excluded"}
        How synthesizers and metrics treat the column. Excluded columns (for
        example identifiers) are not modelled.
    categories : tuple or None
        The full list of possible values of a categorical column.
    bounds : tuple of float or None
        ``(lower, upper)`` for a numeric column; values outside are clipped.
    integer : bool
        Numeric values are whole numbers (synthetic values are rounded).
    nullable : bool
        The column may be missing; synthesizers then model missingness as
        one more category.
    derived : bool
        The categories or bounds were read off the data, so they are not
        public and no synthesis using them is DP.
    reason : str
        One line saying why the kind was chosen.
    n_missing : int
        Missing values counted in the data the schema was inferred from.
    """

    name: str
    kind: Kind
    categories: tuple | None = None
    bounds: tuple[float, float] | None = None
    integer: bool = False
    nullable: bool = False
    derived: bool = False
    reason: str = "declared"
    n_missing: int = 0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"column {self.name!r}: kind must be one of {KINDS}, got {self.kind!r}")
        if self.kind == "categorical" and not self.categories:
            raise ValueError(f"column {self.name!r}: a categorical column needs its list of categories")
        if self.kind == "numeric":
            if self.bounds is None or len(self.bounds) != 2:
                raise ValueError(f"column {self.name!r}: a numeric column needs bounds [lower, upper]")
            lo, hi = (float(b) for b in self.bounds)
            if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
                raise ValueError(
                    f"column {self.name!r}: bounds must be finite with lower <= upper, got {self.bounds!r}"
                )
            if max(abs(lo), abs(hi)) > constraints.MAX_ABS_VALUE:
                raise ValueError(
                    f"column {self.name!r}: bounds must lie within ±{constraints.MAX_ABS_VALUE:g}, got "
                    f"{self.bounds!r}; rescale the column (for example to thousands)"
                )
            object.__setattr__(self, "bounds", (lo, hi))

    def replace(self, **changes: Any) -> "ColumnSchema":
        """A copy with ``changes`` applied (validated again)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        out: dict[str, Any] = {"kind": self.kind}
        if self.categories is not None:
            out["categories"] = [_plain(c) for c in self.categories]
        if self.bounds is not None:
            out["bounds"] = list(self.bounds)
        for name in ("integer", "nullable", "derived"):
            if getattr(self, name):
                out[name] = True
        if self.reason != "declared":
            out["reason"] = self.reason
        if self.n_missing:
            out["n_missing"] = self.n_missing
        return out


@dataclass(frozen=True)
class Schema:
    """Public description of a table: its columns, key variables and sensitive column.

    Examples
    --------
    >>> s = Schema.from_dict({"sex": {"kind": "categorical", "categories": ["f", "m"]},
    ...                       "age": {"kind": "numeric", "bounds": [0, 100]}})
    >>> s.is_public
    True
    >>> Schema.from_dict(s.to_dict()) == s
    True
    """

    columns: dict[str, ColumnSchema]
    keys: tuple[str, ...] = ()
    sensitive: str | None = None

    def __post_init__(self) -> None:
        for k in (*self.keys, *([self.sensitive] if self.sensitive else [])):
            if k not in self.columns:
                raise ValueError(f"{k!r} is named as a key or sensitive column but is not in the schema")

    # -- views ---------------------------------------------------------------
    @property
    def used(self) -> list[str]:
        """Names of the columns that are modelled (not excluded), in order."""
        return [n for n, c in self.columns.items() if c.kind != "excluded"]

    @property
    def derived_columns(self) -> list[str]:
        """Used columns whose domain was read off the data."""
        return [n for n in self.used if self.columns[n].derived]

    @property
    def is_public(self) -> bool:
        """True when every used column's domain was declared, not derived."""
        return not self.derived_columns

    def __getitem__(self, name: str) -> ColumnSchema:
        return self.columns[name]

    def replace_column(self, name: str, **changes: Any) -> "Schema":
        cols = dict(self.columns)
        cols[name] = cols[name].replace(**changes)
        return dataclasses.replace(self, columns=cols)

    def with_roles(self, *, keys: Iterable[str] = (), sensitive: str | None = None) -> "Schema":
        return dataclasses.replace(self, keys=tuple(keys), sensitive=sensitive)

    # -- (de)serialisation ---------------------------------------------------
    def to_dict(self) -> dict:
        """Plain, JSON-ready mapping ``{column: {...}}``; :meth:`from_dict` reads it back."""
        out = {}
        for name, col in self.columns.items():
            d = col.to_dict()
            if name in self.keys:
                d["key"] = True
            if name == self.sensitive:
                d["sensitive"] = True
            out[name] = d
        return out

    @classmethod
    def from_dict(cls, spec: dict) -> "Schema":
        """Build a schema from declared public values.

        Each entry is ``{"kind": "categorical", "categories": [...]}`` or
        ``{"kind": "numeric", "bounds": [lower, upper]}`` (optionally
        ``integer``, ``nullable``, ``key``, ``sensitive``). Values given here
        count as public unless the entry says ``"derived": true``.
        """
        if not isinstance(spec, dict) or not spec:
            raise ValueError("a schema is a non-empty mapping from column name to its description")
        columns, keys, sensitive = {}, [], None
        for name, d in spec.items():
            if not isinstance(d, dict):
                raise ValueError(f"column {name!r}: expected a mapping, got {type(d).__name__}")
            cats = d.get("categories")
            bounds = d.get("bounds")
            columns[name] = ColumnSchema(
                name=name,
                kind=d.get("kind", "numeric" if bounds is not None else "categorical"),
                categories=tuple(cats) if cats is not None else None,
                bounds=tuple(bounds) if bounds is not None else None,
                integer=bool(d.get("integer", False)),
                nullable=bool(d.get("nullable", False)),
                derived=bool(d.get("derived", False)),
                reason=d.get("reason", "declared"),
                n_missing=int(d.get("n_missing", 0)),
            )
            if d.get("key"):
                keys.append(name)
            if d.get("sensitive"):
                if sensitive is not None:
                    raise ValueError("only one column can be the sensitive column")
                sensitive = name
        return cls(columns, tuple(keys), sensitive)

    def check_frame(self, df: pd.DataFrame) -> None:
        """Raise :class:`DataError` when ``df`` does not fit this schema."""
        missing = [c for c in self.used if c not in df.columns]
        if missing:
            raise DataError(
                f"The data has no column {missing[0]!r} that the schema describes; "
                "load the matching file or reset the schema."
            )


def _plain(value: Any) -> Any:
    """numpy scalars → Python scalars so the schema is JSON-ready."""
    return value.item() if isinstance(value, np.generic) else value


def _is_whole(values: np.ndarray) -> bool:
    return bool(np.all(np.mod(values, 1) == 0))


def infer_column(s: pd.Series) -> ColumnSchema:
    """Choose a kind and a (data-derived) domain for one column, with the reason."""
    name = str(s.name)
    n = len(s)
    observed = s.dropna()
    n_missing = int(n - len(observed))
    base = dict(name=name, n_missing=n_missing, nullable=n_missing > 0, derived=True)
    if observed.empty:
        return ColumnSchema(kind="excluded", reason="every value is missing → excluded", **base)
    distinct = observed.unique()
    k = len(distinct)
    looks_like_id = n >= constraints.ID_MIN_ROWS and k == n

    # pandas reads true/false with blanks, and whole numbers beyond 64 bits, as Python objects:
    # the categories must be those objects, or no value of the data would match them.
    if pd.api.types.is_bool_dtype(s) or all(isinstance(v, (bool, np.bool_)) for v in distinct):
        return ColumnSchema(kind="categorical", categories=(False, True),
                            reason="true/false values → categorical", **base)
    big_whole = s.dtype == object and all(isinstance(v, int) for v in distinct)

    if pd.api.types.is_numeric_dtype(s) or big_whole:
        values = observed.to_numpy(dtype=float)
        if not np.all(np.abs(values) <= constraints.MAX_ABS_VALUE):  # also inf, and ints past 1e308
            return ColumnSchema(
                kind="excluded",
                reason=(f"numbers beyond ±{constraints.MAX_ABS_VALUE:g} or infinite (inf) → too large to "
                        "compute with; excluded (rescale the column or blank those cells to use it)"),
                **base,
            )
        whole = _is_whole(values)
        if whole and looks_like_id and values.max() - values.min() + 1 == n:
            return ColumnSchema(
                kind="excluded",
                reason="a distinct consecutive whole number in every row → looks like an identifier; excluded",
                **base,
            )
        if whole and k <= constraints.INTEGER_CATEGORICAL_MAX:
            cats = tuple(sorted(_plain(v) for v in distinct))  # Python ints stay exact past 2**64
            return ColumnSchema(kind="categorical", categories=cats,
                                reason=f"whole numbers with {k} distinct values → categorical", **base)
        lo, hi = float(values.min()), float(values.max())
        beyond = " beyond 64 bits (as floating-point numbers, exact to about 16 digits)" if big_whole else ""
        return ColumnSchema(
            kind="numeric", bounds=(lo, hi), integer=whole,
            reason=f"{'whole numbers' if whole else 'numbers'}{beyond} with {k} distinct values → numeric",
            **base,
        )

    # Parse each distinct value once, weighted by how often it occurs.
    counts = observed.astype(str).value_counts()
    as_number = pd.to_numeric(pd.Series(counts.index), errors="coerce").to_numpy()
    share_numeric = float(counts.to_numpy()[~np.isnan(as_number)].sum() / counts.sum())
    if 0.5 <= share_numeric < 1.0:
        example = counts.index[np.isnan(as_number)][0]
        return ColumnSchema(
            kind="excluded",
            reason=f"mostly numbers but also text such as {example!r} → mixed types; excluded",
            **base,
        )
    if looks_like_id:
        return ColumnSchema(kind="excluded",
                            reason="a distinct value in every row → looks like an identifier; excluded",
                            **base)
    if k > constraints.MAX_CATEGORIES:
        return ColumnSchema(
            kind="excluded",
            reason=f"text with {k} distinct values (over {constraints.MAX_CATEGORIES}) → too many categories; excluded",
            **base,
        )
    cats = tuple(sorted(str(v) for v in distinct))
    return ColumnSchema(kind="categorical", categories=cats,
                        reason=f"text with {k} distinct values → categorical", **base)


def infer_schema(df: pd.DataFrame) -> Schema:
    """Infer each column's kind and domain from the data itself.

    Every domain found this way is marked ``derived`` (not public); missing
    values are counted per column and kept.

    Parameters
    ----------
    df : pandas.DataFrame
        The confidential table.

    Returns
    -------
    Schema
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"infer_schema expects a pandas DataFrame, got {type(df).__name__}")
    return Schema({str(c): infer_column(df[c]) for c in df.columns})


def merge_declared(inferred: Schema, declared: Schema) -> Schema:
    """Take declared (public) columns over inferred ones, keeping column order."""
    # The declared domain wins; the missing-value count is a fact about this data.
    cols = {n: declared.columns[n].replace(n_missing=c.n_missing) if n in declared.columns else c
            for n, c in inferred.columns.items()}
    keys = declared.keys or inferred.keys
    sensitive = declared.sensitive or inferred.sensitive
    return Schema(cols, tuple(k for k in keys if k in cols), sensitive if sensitive in cols else None)


# -- the schema as an editable table (Data page) ------------------------------

TABLE_COLUMNS = ["column", "kind", "categories", "lower", "upper", "integer", "nullable", "public",
                 "missing", "reason"]


def schema_table(schema: Schema) -> pd.DataFrame:
    """One row per column, in the form the Data page edits."""
    rows = []
    for name, c in schema.columns.items():
        rows.append({
            "column": name,
            "kind": c.kind,
            "categories": ", ".join(str(v) for v in c.categories) if c.categories else "",
            "lower": c.bounds[0] if c.bounds else None,
            "upper": c.bounds[1] if c.bounds else None,
            "integer": c.integer,
            "nullable": c.nullable,
            "public": not c.derived,
            "missing": c.n_missing,
            "reason": c.reason,
        })
    return pd.DataFrame(rows, columns=TABLE_COLUMNS)


def _parse_categories(text: str, previous: tuple | None) -> tuple:
    """Categories typed as comma-separated text; keep the old values' types where they match."""
    items = tuple(t.strip() for t in str(text).split(",") if t.strip())
    by_text = {str(v): v for v in (previous or ())}
    return tuple(by_text.get(t, t) for t in items)


def schema_from_table(table: pd.DataFrame, base: Schema, *, keys=(), sensitive=None) -> Schema:
    """Read an edited :func:`schema_table` back; raise ``ValueError`` naming the bad column.

    A row whose domain changed from ``base`` counts as declared public; a
    row left as it was keeps its ``public`` tick.
    """
    cols = {}
    for row in table.to_dict("records"):
        name = row["column"]
        old = base.columns[name]
        kind = row["kind"]
        cats = _parse_categories(row["categories"], old.categories) if kind == "categorical" else None
        bounds = None
        if kind == "numeric":
            lo, hi = row["lower"], row["upper"]
            if lo is None or hi is None or pd.isna(lo) or pd.isna(hi):
                raise ValueError(f"Column {name!r} is numeric: give it a lower and an upper bound.")
            bounds = (float(lo), float(hi))
        changed = (kind != old.kind) or (cats is not None and cats != old.categories) \
            or (bounds is not None and bounds != old.bounds)
        public = bool(row["public"]) or changed
        try:
            cols[name] = old.replace(kind=kind, categories=cats, bounds=bounds,
                                     integer=bool(row["integer"]), nullable=bool(row["nullable"]),
                                     derived=not public,
                                     reason=old.reason if not changed else "declared on the Data page")
        except ValueError as err:
            raise ValueError(str(err)[0].upper() + str(err)[1:] + ".") from None
    usable = [k for k in keys if k in cols and cols[k].kind != "excluded"]
    sens = sensitive if sensitive in cols and cols[sensitive].kind != "excluded" else None
    return Schema(cols, tuple(usable), sens)
