"""What is public about a dataset: each column's kind and domain, and where each value came from.

A differentially private synthesis may only clip and bin against bounds and
category lists that are public (docs/methods.md#neighbours-and-what-is-public). Every field of a column has one
of three sources, kept field by field (``kind``, ``categories``, ``lower``,
``upper``, ``specials``, ``integer``, ``nullable``, ``decimals``):

* **declared**: typed or loaded from a schema file (:meth:`Schema.from_dict`): public by an act on
  that value;
* **estimated privately**: released by a DP mechanism (:mod:`.schema_estimate`), with the ε of the
  step that released it; the column keeps that estimate's ledger steps, so every synthesis using the
  schema lists and pays for them;
* **read off the data** (``derived``): :func:`infer_schema` reads kinds and domains off the data so a
  user can start at once; a synthesis that relies on such a value is labelled "not DP".

``derived`` on a column means that some part of its description was read off the data.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from typing import Any, Iterable, Literal

import numpy as np
import pandas as pd

from . import constraints
from .errors import DataError

Kind = Literal["categorical", "numeric", "excluded"]
KINDS: tuple[str, ...] = ("categorical", "numeric", "excluded")
FIELDS: tuple[str, ...] = ("kind", "categories", "lower", "upper", "specials", "integer", "nullable", "decimals")
MAX_DECIMALS = 6  # inferred precision stops here: a column with more decimals is not rounded


def relevant_fields(kind: str, decimals: int | None = None, specials: tuple = ()) -> frozenset:
    """The fields that describe a column of this kind (``decimals`` only when a precision is set,
    ``specials`` only when there are special values: none is the safe public default)."""
    if kind == "excluded":
        return frozenset({"kind"})
    if kind == "categorical":
        return frozenset({"kind", "categories", "nullable"})
    return frozenset({"kind", "lower", "upper", "integer", "nullable"} | ({"decimals"} if decimals is not None else set())
                     | ({"specials"} if specials else set()))


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
    decimals : int or None
        Declared precision of a numeric column: synthetic values are written
        rounded to this many decimals. ``None``: not rounded.
    specials : tuple of float
        Special values of a numeric column (0 hours worked, a code such as
        −8 or 99999): each is a cell of its own for the methods that
        discretise (:mod:`.synth.encoding`) and is released exactly. They
        may lie outside the bounds.
    derived : bool
        Some part of the column's description (kind, categories, bounds,
        flags or precision) was read off the data, so it is not public and
        no synthesis using the column is DP. Computed from
        ``derived_fields`` when that is given.
    derived_fields : frozenset of str or None
        The fields (of :data:`FIELDS`) still read off the data. ``None`` at
        construction means all of the kind's fields when ``derived``, else
        none; it is always a frozenset afterwards.
    estimated : mapping of field to float
        The fields released by a private estimate, each with the ε of the
        step that released it (stored as sorted ``(field, ε)`` pairs). A
        field read off the data or declared since is not in it.
    estimate_steps : tuple of dict
        The ledger steps of the private estimates made on this column
        (:meth:`dpsynth_core.privacy.Step.to_dict`). They stay when a value
        is declared later: the ε was spent, and the declaration may have
        been guided by the estimate.
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
    decimals: int | None = None
    specials: tuple = ()
    derived: bool = False
    derived_fields: frozenset | None = None
    estimated: Any = ()
    estimate_steps: tuple = ()
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
        if self.decimals is not None:
            if isinstance(self.decimals, bool) or not float(self.decimals).is_integer() \
                    or not 0 <= int(self.decimals) <= constraints.SCHEMA_DECIMALS_MAX:
                raise ValueError(f"column {self.name!r}: decimals must be a whole number from 0 to "
                                 f"{constraints.SCHEMA_DECIMALS_MAX}, "
                                 f"got {self.decimals!r}")
            object.__setattr__(self, "decimals", int(self.decimals) if self.kind == "numeric" else None)
        object.__setattr__(self, "specials", _checked_specials(self.name, self.specials) if self.kind == "numeric" else ())
        relevant = self.relevant_fields
        if self.derived_fields is None:
            fields = relevant if self.derived else frozenset()
        else:
            unknown = set(self.derived_fields) - set(FIELDS)
            if unknown:
                raise ValueError(f"column {self.name!r}: unknown field(s) {sorted(unknown)}; fields are {FIELDS}")
            fields = frozenset(self.derived_fields) & relevant
        object.__setattr__(self, "derived_fields", fields)
        object.__setattr__(self, "derived", bool(fields))
        estimated = dict(self.estimated)
        unknown = set(estimated) - set(FIELDS)
        if unknown:
            raise ValueError(f"column {self.name!r}: unknown estimated field(s) {sorted(unknown)}; fields are {FIELDS}")
        object.__setattr__(self, "estimated", tuple(sorted((f, float(e)) for f, e in estimated.items()
                                                           if f in relevant - fields)))
        object.__setattr__(self, "estimate_steps", tuple(dict(st) for st in self.estimate_steps))

    @property
    def relevant_fields(self) -> frozenset:
        return relevant_fields(self.kind, self.decimals, self.specials)

    @property
    def estimated_epsilon(self) -> dict[str, float]:
        """Each privately estimated field and the ε of the step that released it."""
        return dict(self.estimated)

    @property
    def estimated_fields(self) -> frozenset:
        """The fields released by a private estimate (public, with the estimate's ε)."""
        return frozenset(f for f, _ in self.estimated)

    @property
    def declared_fields(self) -> frozenset:
        """The fields declared public: the kind's fields neither read off the data nor estimated."""
        return self.relevant_fields - self.derived_fields - self.estimated_fields

    @property
    def public_fields(self) -> frozenset:
        """The fields that may be published: declared or estimated privately."""
        return self.relevant_fields - self.derived_fields

    def source(self, field: str) -> str:
        """Where ``field`` came from, in words: declared, estimated privately (its ε) or read off the data."""
        if field in self.derived_fields:
            return "read off the data (not DP)"
        if field in self.estimated_fields:
            return f"estimated privately (ε = {self.estimated_epsilon[field]:.4g})"
        return "declared"

    def replace(self, **changes: Any) -> "ColumnSchema":
        """A copy with ``changes`` applied (validated again).

        ``derived=...`` without ``derived_fields`` marks the whole column; a
        field that becomes relevant (a new kind's domain, a precision) counts
        as read off the data unless ``derived_fields`` says otherwise.
        """
        if "derived_fields" not in changes:
            if "derived" in changes:
                changes["derived_fields"] = None
            else:
                new = relevant_fields(changes.get("kind", self.kind), changes.get("decimals", self.decimals),
                                      changes.get("specials", self.specials))
                changes["derived_fields"] = self.derived_fields | (new - self.relevant_fields)
        return dataclasses.replace(self, **changes)

    def declare(self, fields: Iterable[str]) -> "ColumnSchema":
        """A copy with ``fields`` declared public (an explicit act on those values): no longer read off
        the data, nor counted as estimated (the estimate's steps stay)."""
        fields = set(fields)
        left = self.derived_fields - fields
        reason = "declared on the Data page" if self.derived and not left else self.reason
        return self.replace(derived_fields=left, reason=reason,
                            estimated=tuple((f, e) for f, e in self.estimated if f not in fields))

    def to_dict(self) -> dict:
        out: dict[str, Any] = {"kind": self.kind}
        if self.categories is not None:
            out["categories"] = [_plain(c) for c in self.categories]
        if self.bounds is not None:
            out["bounds"] = list(self.bounds)
        for name in ("integer", "nullable"):
            if getattr(self, name):
                out[name] = True
        if self.decimals is not None:
            out["decimals"] = self.decimals
        if self.specials:
            out["specials"] = list(self.specials)
        if self.derived:
            # The whole column read off the data: true; part of it: the fields still read off the data.
            out["derived"] = True if self.derived_fields == self.relevant_fields else sorted(self.derived_fields)
        out.update(self._estimate_dict())
        if self.reason != "declared":
            out["reason"] = self.reason
        if self.n_missing:
            out["n_missing"] = self.n_missing
        return out

    def _estimate_dict(self) -> dict:
        out: dict[str, Any] = {}
        if self.estimated:
            out["estimated"] = dict(self.estimated)
        if self.estimate_steps:
            out["estimate_steps"] = [dict(st) for st in self.estimate_steps]
        return out

    def to_public_dict(self) -> dict:
        """Only what is public (declared or estimated privately, with the estimate's ε and steps): no value
        read off the data, no count, no inferred reason."""
        out: dict[str, Any] = {}
        declared = self.public_fields
        if "kind" in declared:
            out["kind"] = self.kind
        if self.categories is not None and "categories" in declared:
            out["categories"] = [_plain(c) for c in self.categories]
        if self.bounds is not None:
            if {"lower", "upper"} <= declared:
                out["bounds"] = list(self.bounds)
            else:
                out.update({f: b for f, b in zip(("lower", "upper"), self.bounds) if f in declared})
        if self.specials and "specials" in declared:
            out["specials"] = list(self.specials)
        for name in ("integer", "nullable", "decimals"):
            if name in declared:
                out[name] = getattr(self, name)
        out.update(self._estimate_dict())
        if self.derived:
            out["withheld"] = [f for f in FIELDS if f in self.derived_fields]
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

    @property
    def undeclared_columns(self) -> list[str]:
        """Every column, excluded ones included, with some part read off the data."""
        return [n for n, c in self.columns.items() if c.derived]

    @property
    def estimate_steps(self) -> list[dict]:
        """The ledger steps of every private estimate made on this schema's columns, column by column."""
        return [dict(st) for c in self.columns.values() for st in c.estimate_steps]

    @property
    def estimate_epsilon(self) -> float:
        """ε the private estimates of this schema spent in all (sequential composition)."""
        return math.fsum(st["epsilon"] * st.get("repeats", 1) for st in self.estimate_steps)

    @property
    def estimate_delta(self) -> float:
        """δ the private estimates of this schema spent in all."""
        return math.fsum(st.get("delta", 0.0) * st.get("repeats", 1) for st in self.estimate_steps)

    def declare(self, fields: Iterable[str], *, kinds: Iterable[str] = KINDS) -> "Schema":
        """Declare ``fields`` public in every column of one of ``kinds`` (a bulk act on the values shown)."""
        kinds = set(kinds)
        cols = {n: c.declare(fields) if c.kind in kinds else c for n, c in self.columns.items()}
        return dataclasses.replace(self, columns=cols)

    def __getitem__(self, name: str) -> ColumnSchema:
        return self.columns[name]

    def declare_field(self, name: str, field: str) -> "Schema":
        """Declare one field of one column public as it stands (an explicit act on that one value)."""
        return dataclasses.replace(self, columns={**self.columns, name: self.columns[name].declare({field})})

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

    def to_json(self) -> str:
        """The schema as the user keeps it (the format of ``data/*.schema.json``, read by :meth:`from_dict`).

        Declarations and roles, with each value still read off the data
        marked ``derived``; no missing-value counts or inferred reasons.
        """
        spec = {name: {k: v for k, v in d.items() if k not in ("n_missing", "reason")}
                for name, d in self.to_dict().items()}
        return json.dumps(spec, indent=1, ensure_ascii=False, default=str) + "\n"

    def to_public_dict(self) -> dict:
        """The schema as it may be published: declared values only (:meth:`ColumnSchema.to_public_dict`)."""
        return {name: col.to_public_dict() for name, col in self.columns.items()}

    @classmethod
    def from_dict(cls, spec: dict) -> "Schema":
        """Build a schema from declared public values.

        Each entry is ``{"kind": "categorical", "categories": [...]}`` or
        ``{"kind": "numeric", "bounds": [lower, upper]}`` (optionally
        ``integer``, ``nullable``, ``decimals``, ``key``, ``sensitive``).
        Values given here count as public unless the entry says
        ``"derived": true`` (all of them) or ``"derived": [fields]``;
        ``"estimated": {field: ε}`` and ``"estimate_steps": [...]`` keep a
        private estimate's provenance and ledger steps; ``"specials"`` lists
        a numeric column's special values.
        """
        if not isinstance(spec, dict) or not spec:
            raise ValueError("a schema is a non-empty mapping from column name to its description")
        columns, keys, sensitive = {}, [], None
        for name, d in spec.items():
            if not isinstance(d, dict):
                raise ValueError(f"column {name!r}: expected a mapping, got {type(d).__name__}")
            cats = d.get("categories")
            bounds = d.get("bounds")
            derived = d.get("derived", False)
            if not isinstance(derived, (bool, list)):
                raise ValueError(f"column {name!r}: derived must be true, false or a list of fields")
            estimated, steps = d.get("estimated", {}), d.get("estimate_steps", [])
            if not isinstance(estimated, dict) or not isinstance(steps, list) \
                    or not all(isinstance(st, dict) and "epsilon" in st for st in steps):
                raise ValueError(f"column {name!r}: estimated must map fields to ε, and estimate_steps list "
                                 "ledger steps")
            if d.get("withheld"):
                raise ValueError(f"column {name!r}: its {', '.join(map(str, d['withheld']))} were withheld (read off "
                                 "the data, not public); declare them, or estimate them privately")
            specials = d.get("specials", [])
            if not isinstance(specials, list):
                raise ValueError(f"column {name!r}: specials must be a list of numbers")
            columns[name] = ColumnSchema(
                name=name,
                kind=d.get("kind", "numeric" if bounds is not None else "categorical"),
                categories=tuple(cats) if cats is not None else None,
                bounds=tuple(bounds) if bounds is not None else None,
                integer=bool(d.get("integer", False)),
                nullable=bool(d.get("nullable", False)),
                decimals=d.get("decimals"),
                specials=tuple(specials),
                derived=bool(derived),
                derived_fields=frozenset(derived) if isinstance(derived, list) else None,
                estimated=estimated,
                estimate_steps=tuple(steps),
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


def _checked_specials(name: str, specials) -> tuple:
    """Special values as distinct finite floats, most frequent (given) order kept; ValueError naming the column."""
    out = []
    for v in specials:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise ValueError(f"column {name!r}: special values must be numbers, got {v!r}")
        v = float(v)
        if not math.isfinite(v) or abs(v) > constraints.MAX_ABS_VALUE:
            raise ValueError(f"column {name!r}: special values must be finite numbers within "
                             f"±{constraints.MAX_ABS_VALUE:g}, got {v!r}")
        if v not in out:
            out.append(v)
    if len(out) > constraints.MAX_SPECIALS:
        raise ValueError(f"column {name!r}: at most {constraints.MAX_SPECIALS} special values, got {len(out)}")
    return tuple(out)


def frequent_values(values: np.ndarray) -> tuple:
    """The exact values holding at least ``SPECIAL_MIN_SHARE`` of ``values`` (most frequent first, at most
    ``MAX_SPECIALS``): the special values inference suggests, read off the data."""
    if not len(values):
        return ()
    uniq, counts = np.unique(values, return_counts=True)
    order = np.argsort(-counts, kind="stable")[:constraints.MAX_SPECIALS]
    return tuple(float(uniq[i]) for i in order if counts[i] >= constraints.SPECIAL_MIN_SHARE * len(values))


def _is_whole(values: np.ndarray) -> bool:
    return bool(np.all(np.mod(values, 1) == 0))


def _decimals(values: np.ndarray) -> int | None:
    """The fewest decimals that write every value exactly (up to :data:`MAX_DECIMALS`), else None.

    "Exactly" is relative to each value (one part in a billion, for the binary representation of a
    decimal), so a tiny value such as 3e-27 needs its own digits instead of rounding to 0."""
    scale = np.abs(values) * 1e-9
    for d in range(MAX_DECIMALS + 1):
        if np.all(np.abs(values - np.round(values, d)) <= scale):
            return d
    return None


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
            kind="numeric", bounds=(lo, hi), integer=whole, decimals=None if whole else _decimals(values),
            specials=frequent_values(values),
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


def schema_for_data(text: str | bytes, current: Schema) -> Schema:
    """A schema file (JSON) read onto the current data's schema; ``ValueError`` in one sentence if it does not fit.

    Columns the file describes take its declarations; columns it leaves out
    keep their current state. A column the data does not have is refused.
    """
    try:
        spec = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"The schema file is not valid JSON ({err}); upload a file saved from this page "
                         "or written like data/penguins.schema.json.") from None
    try:
        declared = Schema.from_dict(spec)
    except (TypeError, ValueError) as err:
        raise ValueError(f"The schema file does not describe a schema: {str(err).rstrip('.')}.") from None
    unknown = [c for c in declared.columns if c not in current.columns]
    if unknown:
        raise ValueError(f"The schema file describes a column {unknown[0]!r} that this data does not have; "
                         "upload the schema made for this file.")
    return merge_declared(current, declared)


def merge_declared(inferred: Schema, declared: Schema) -> Schema:
    """Take declared (public) columns over inferred ones, keeping column order."""
    # The declared domain wins; the missing-value count is a fact about this data.
    cols = {n: declared.columns[n].replace(n_missing=c.n_missing) if n in declared.columns else c
            for n, c in inferred.columns.items()}
    keys = declared.keys or inferred.keys
    sensitive = declared.sensitive or inferred.sensitive
    return Schema(cols, tuple(k for k in keys if k in cols), sensitive if sensitive in cols else None)


def schema_of(df: pd.DataFrame, declared: Schema | None) -> Schema:
    """``merge_declared(infer_schema(df), declared)``, reading off ``df`` only what the declaration leaves out.

    When ``declared`` describes every column of ``df`` (the app's session schema always does), inferring
    each column's kind and domain again would be thrown away: only the missing-value counts, a fact about
    this data, are read (0.4 s saved on a million rows of ten columns). Otherwise every column is inferred
    and the declared ones win, as in :func:`merge_declared`. ``declared`` None: :func:`infer_schema`.
    """
    if declared is None:
        return infer_schema(df)
    if not all(str(c) in declared.columns for c in df.columns):
        return merge_declared(infer_schema(df), declared)
    cols = {str(c): declared.columns[str(c)].replace(n_missing=int(df[c].isna().sum())) for c in df.columns}
    return Schema(cols, tuple(k for k in declared.keys if k in cols),
                  declared.sensitive if declared.sensitive in cols else None)
