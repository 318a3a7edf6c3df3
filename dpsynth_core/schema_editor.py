"""The schema as the Data page edits it: one row per column, the edited table read back, and the
declaration of one value read off the data at a time.

Every field has a source (:mod:`.schema`): declared, estimated privately, or read off the data.
Typing a value declares it. A value read off the data is declared as it stands only one field at a
time, naming the exact value (:func:`declarable`, :func:`declaration_sentence`): a bulk "declare
everything shown" published one person's maximum as public in issue 27. The private estimate
(:mod:`.schema_estimate`) is the one-click path. The page only draws; the rules live here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from . import constraints
from .schema import FIELDS, ColumnSchema, Schema, relevant_fields

DERIVED_NOTE = "read off the data"  # the table's column listing each row's fields read off the data
ESTIMATED_NOTE = "estimated privately"  # ... and the fields a private estimate released, with their ε
# Sources first, then the values, then the data's own facts.
TABLE_COLUMNS = ["column", DERIVED_NOTE, ESTIMATED_NOTE, "kind", "categories", "lower", "upper", "specials",
                 "integer", "nullable", "decimals", "missing", "reason"]

#: What each field is called in a sentence.
FIELD_WORDS = {"kind": "kind", "categories": "list of categories", "lower": "lower bound", "upper": "upper bound",
               "specials": "special values", "integer": "whole-number flag", "nullable": "missing-values flag",
               "decimals": "precision (decimals)"}


def _number_text(value: float) -> str:
    """A number as typed: 18823 not 18823.0, 0.25, 1e-07."""
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else f"{value:.15g}"


def estimated_text(col: ColumnSchema) -> str:
    """The fields a private estimate released, each with its ε: ``lower (ε = 0.005), upper (ε = 0.005)``."""
    eps = col.estimated_epsilon
    return ", ".join(f"{f} (ε = {eps[f]:.2g})" for f in FIELDS if f in eps)


def schema_table(schema: Schema) -> pd.DataFrame:
    """One row per column, in the form the Data page edits.

    ``read off the data`` lists the row's values that are not public (yet);
    ``estimated privately`` those a private estimate released, with their ε;
    every other value of the row is declared.
    """
    rows = []
    for name, c in schema.columns.items():
        rows.append({
            "column": name,
            "kind": c.kind,
            "categories": ", ".join(str(v) for v in c.categories) if c.categories else "",
            "lower": c.bounds[0] if c.bounds else None,
            "upper": c.bounds[1] if c.bounds else None,
            "specials": ", ".join(_number_text(v) for v in c.specials),
            "integer": c.integer,
            "nullable": c.nullable,
            "decimals": c.decimals,
            DERIVED_NOTE: ", ".join(f for f in FIELDS if f in c.derived_fields),
            ESTIMATED_NOTE: estimated_text(c),
            "missing": c.n_missing,
            "reason": c.reason,
        })
    return pd.DataFrame(rows, columns=TABLE_COLUMNS)


def excluded_note(schema: Schema) -> str | None:
    """The columns no synthesis models, each with why, in words for the Data page; None when every column is
    modelled. An excluded column is written to the synthetic data with every value blank (the release's form
    depends on the schema only), which a user who uploads a blank column should read, not find out.

    >>> excluded_note(Schema.from_dict({"a": {"kind": "categorical", "categories": ["x"]}, "b": {"kind": "excluded"}}))
    'Not synthesized: b (declared). An excluded column is written to the synthetic data with every value blank; set its kind in the table to model it.'
    """
    out = [c for c in schema.columns.values() if c.kind == "excluded"]
    if not out:
        return None
    why = [(c.reason or "declared").removesuffix(" → excluded").removesuffix("; excluded") for c in out]
    return ("Not synthesized: " + ", ".join(f"{c.name} ({w})" for c, w in zip(out, why)) + ". An excluded column is "
            "written to the synthetic data with every value blank; set its kind in the table to model it.")


def _parse_categories(text: str, previous: tuple | None) -> tuple:
    """Categories typed as comma-separated text; keep the old values' types where they match."""
    items = tuple(t.strip() for t in str(text).split(",") if t.strip())
    by_text = {str(v): v for v in (previous or ())}
    return tuple(by_text.get(t, t) for t in items)


def _parse_specials(name: str, text, previous: tuple) -> tuple:
    """Special values typed as comma-separated numbers; the old values where the text did not change."""
    if _missing(text) or not str(text).strip():
        return ()
    if str(text) == ", ".join(_number_text(v) for v in previous):
        return previous
    try:
        values = tuple(float(t) for t in str(text).split(",") if t.strip())
    except ValueError:
        raise ValueError(f"Column {name!r}: special values are numbers separated by commas, such as 0, -8."
                         ) from None
    if not all(math.isfinite(v) for v in values):
        raise ValueError(f"Column {name!r}: special values must be finite numbers.")
    return values


def _missing(value) -> bool:
    return value is None or (not isinstance(value, str) and pd.isna(value))


def schema_from_table(table: pd.DataFrame, base: Schema, *, keys=(), sensitive=None) -> Schema:
    """Read an edited :func:`schema_table` back; raise ``ValueError`` naming the bad column.

    Public means declared, value by value: a value the user changed is
    declared (it is neither read off the data nor estimated any more).
    Values left as they were keep their source. A field that becomes
    relevant (a new kind's domain, a precision, special values) counts as
    read off the data until it is typed.
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
            if _missing(lo) or _missing(hi):
                raise ValueError(f"Column {name!r} is numeric: give it a lower and an upper bound.")
            bounds = (float(lo), float(hi))
        decimals = None if kind != "numeric" or _missing(row.get("decimals")) else row["decimals"]
        if decimals is not None and (not float(decimals).is_integer() or not 0 <= float(decimals) <= constraints.SCHEMA_DECIMALS_MAX):
            raise ValueError(f"Column {name!r}: decimals must be a whole number from 0 to "
                             f"{constraints.SCHEMA_DECIMALS_MAX}.")
        decimals = None if decimals is None else int(decimals)
        specials = _parse_specials(name, row.get("specials", ""), old.specials) if kind == "numeric" else ()
        new = {"kind": kind, "categories": cats, "lower": bounds[0] if bounds else None,
               "upper": bounds[1] if bounds else None, "specials": specials, "integer": bool(row["integer"]),
               "nullable": bool(row["nullable"]), "decimals": decimals}
        was = {"kind": old.kind, "categories": old.categories, "lower": old.bounds[0] if old.bounds else None,
               "upper": old.bounds[1] if old.bounds else None, "specials": old.specials, "integer": old.integer,
               "nullable": old.nullable, "decimals": old.decimals}
        changed = {f for f in FIELDS if new[f] != was[f]}
        relevant = relevant_fields(kind, decimals, specials)
        # A field that becomes relevant (a new kind's domain) counts as read off the data until typed.
        derived_fields = ((old.derived_fields | (relevant - old.relevant_fields)) - changed) & relevant
        reason = "declared on the Data page" if old.derived and not derived_fields else old.reason
        try:
            cols[name] = old.replace(kind=kind, categories=cats, bounds=bounds, integer=new["integer"],
                                     nullable=new["nullable"], decimals=decimals, specials=specials,
                                     derived_fields=derived_fields, reason=reason,
                                     estimated=tuple((f, e) for f, e in old.estimated if f not in changed))
        except ValueError as err:
            raise ValueError(str(err)[0].upper() + str(err)[1:] + ".") from None
    usable = [k for k in keys if k in cols and cols[k].kind != "excluded"]
    sens = sensitive if sensitive in cols and cols[sensitive].kind != "excluded" else None
    return Schema(cols, tuple(usable), sens)


# -- declaring one value read off the data ---------------------------------------------------------

@dataclass(frozen=True)
class Declarable:
    """One field of one column still read off the data, with its exact value in words."""

    column: str
    field: str
    value: str

    @property
    def label(self) -> str:
        return f"{self.column}: {FIELD_WORDS[self.field]} = {self.value}"


def field_value_text(col: ColumnSchema, field: str) -> str:
    """The exact value of ``field`` in ``col``, as a person reads it."""
    if field == "kind":
        return col.kind
    if field == "categories":
        return ", ".join(str(v) for v in col.categories or ())
    if field in ("lower", "upper"):
        return _number_text(col.bounds[0 if field == "lower" else 1])
    if field == "specials":
        return ", ".join(_number_text(v) for v in col.specials) or "none"
    if field == "integer":
        return "whole numbers" if col.integer else "not only whole numbers"
    if field == "nullable":
        return "may be missing" if col.nullable else "never missing"
    return "not rounded" if col.decimals is None else f"{col.decimals} decimal(s)"


def declarable(schema: Schema) -> list[Declarable]:
    """Every field still read off the data, column by column, each with its exact value."""
    return [Declarable(name, f, field_value_text(c, f))
            for name, c in schema.columns.items() for f in FIELDS if f in c.derived_fields]


def declaration_sentence(item: Declarable) -> str:
    """What declaring ``item`` as public means, in words, naming the exact value."""
    return (f"Declare the {FIELD_WORDS[item.field]} of {item.column!r} as public: {item.value}. This value was read "
            "off the data; declaring it is only right if it is already public (published before, or known "
            "without looking at this data). Otherwise estimate it privately.")
