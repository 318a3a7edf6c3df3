"""The real datasets shipped in ``data/``, each with a declared public schema.

The schema files state the domain a data steward would publish before any
release (category lists, plausible bounds), so a synthesis of a bundled
dataset can be DP; ``data/README.md`` says where each value comes from.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .schema import Schema, infer_schema, merge_declared

DATA_DIR = Path(__file__).resolve().parent.parent / "data"


@dataclass(frozen=True)
class Bundled:
    name: str
    title: str
    description: str

    @property
    def csv(self) -> Path:
        return DATA_DIR / f"{self.name}.csv"

    @property
    def schema_file(self) -> Path:
        return DATA_DIR / f"{self.name}.schema.json"


BUNDLED: dict[str, Bundled] = {
    b.name: b
    for b in (
        Bundled("penguins", "Palmer penguins (344 rows)",
                "Size measurements of three penguin species on three islands, 2007–2009 (CC0)."),
        Bundled("diamonds", "Diamonds (53,940 rows)",
                "Price, carat, cut, colour, clarity and dimensions of round diamonds (ggplot2)."),
        Bundled("randhie", "RAND Health Insurance Experiment (20,190 rows)",
                "Doctor visits, coinsurance and health of the experiment's participants: a third of the visit "
                "counts, and half the coinsurance values, are 0 (public domain, via statsmodels)."),
    )
}


def load_bundled(name: str) -> tuple[pd.DataFrame, Schema]:
    """The bundled dataset ``name`` with its declared public schema."""
    if name not in BUNDLED:
        raise ValueError(f"unknown bundled dataset {name!r}; choose one of {sorted(BUNDLED)}")
    b = BUNDLED[name]
    df = pd.read_csv(b.csv)
    declared = Schema.from_dict(json.loads(b.schema_file.read_text(encoding="utf-8")))
    return df, merge_declared(infer_schema(df), declared)
