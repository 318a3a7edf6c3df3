"""The schema as the Data page edits it: one row per column, and the edited table read back.

Public means declared, value by value (:mod:`.schema`): the table shows which values of each row
are still read off the data, and :func:`schema_from_table` declares exactly the values a user typed
or ticked. The page only draws the table; the rules live here, where they are tested.
"""

from __future__ import annotations

import pandas as pd

from . import constraints
from .schema import FIELDS, Schema, relevant_fields

# Status first (public, what is still read off the data), then the values, then the data's own facts.
TABLE_COLUMNS = ["column", "public", "read off the data", "kind", "categories", "lower", "upper", "integer",
                 "nullable", "decimals", "missing", "reason"]
DERIVED_NOTE = "read off the data"  # the table's column listing each row's fields not yet declared


def schema_table(schema: Schema) -> pd.DataFrame:
    """One row per column, in the form the Data page edits.

    ``public`` is ticked when every value of the row is declared; ``read off
    the data`` lists the row's values that are not (yet).
    """
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
            "decimals": c.decimals,
            "public": not c.derived,
            DERIVED_NOTE: ", ".join(f for f in FIELDS if f in c.derived_fields),
            "missing": c.n_missing,
            "reason": c.reason,
        })
    return pd.DataFrame(rows, columns=TABLE_COLUMNS)


def _parse_categories(text: str, previous: tuple | None) -> tuple:
    """Categories typed as comma-separated text; keep the old values' types where they match."""
    items = tuple(t.strip() for t in str(text).split(",") if t.strip())
    by_text = {str(v): v for v in (previous or ())}
    return tuple(by_text.get(t, t) for t in items)


def _missing(value) -> bool:
    return value is None or (not isinstance(value, str) and pd.isna(value))


def schema_from_table(table: pd.DataFrame, base: Schema, *, keys=(), sensitive=None) -> Schema:
    """Read an edited :func:`schema_table` back; raise ``ValueError`` naming the bad column.

    Public means declared, value by value: a value the user changed is
    declared; ticking ``public`` declares every value of the row as shown;
    unticking it marks the row's values as read off the data again. Values
    left as they were keep their provenance.
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
        new = {"kind": kind, "categories": cats, "lower": bounds[0] if bounds else None,
               "upper": bounds[1] if bounds else None, "integer": bool(row["integer"]),
               "nullable": bool(row["nullable"]), "decimals": decimals}
        was = {"kind": old.kind, "categories": old.categories, "lower": old.bounds[0] if old.bounds else None,
               "upper": old.bounds[1] if old.bounds else None, "integer": old.integer, "nullable": old.nullable,
               "decimals": old.decimals}
        changed = {f for f in FIELDS if new[f] != was[f]}
        relevant = relevant_fields(kind, decimals)
        if bool(row["public"]) and old.derived:
            derived_fields = frozenset()  # ticked: every value of the row declared as shown
        elif not bool(row["public"]) and not old.derived:
            derived_fields = relevant - changed  # unticked: back to "read off the data", bar what was typed now
        else:
            # A field that becomes relevant (a new kind's domain) counts as read off the data until typed.
            derived_fields = (old.derived_fields | (relevant - old.relevant_fields)) - changed
        derived_fields &= relevant
        reason = "declared on the Data page" if old.derived and not derived_fields else old.reason
        try:
            cols[name] = old.replace(kind=kind, categories=cats, bounds=bounds, integer=new["integer"],
                                     nullable=new["nullable"], decimals=decimals, derived_fields=derived_fields,
                                     reason=reason)
        except ValueError as err:
            raise ValueError(str(err)[0].upper() + str(err)[1:] + ".") from None
    usable = [k for k in keys if k in cols and cols[k].kind != "excluded"]
    sens = sensitive if sensitive in cols and cols[sensitive].kind != "excluded" else None
    return Schema(cols, tuple(usable), sens)
