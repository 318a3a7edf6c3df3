"""Files a release is made of: the synthetic CSV(s) and the companion ledger.

What a release writes is the synthetic data and facts that are public: the
ledger's schema is the declared view (:meth:`Schema.to_public_dict`), never
a value read off the data, a missing-value count or an inferred reason.
"""

from __future__ import annotations

import copy
import io
import json
import os
import re
import zipfile


from .io import to_csv_bytes
from .privacy import Totals
from .privacy.ledger import column_source
from .schema import Schema
from .synth import Synthesis

SIGNIFICANT_DIGITS = 12  # printed ε: 0.9999999999999999 (a sum of steps) is written as people write it, 1


def tidy_number(value: float) -> float:
    """``value`` to :data:`SIGNIFICANT_DIGITS` significant digits (float noise of a sum removed)."""
    return float(f"{float(value):.{SIGNIFICANT_DIGITS}g}")


def format_number(value) -> str:
    """A number as people write it: ``1`` not ``0.9999999999999999``, ``0.5``, ``2200``; None → "n/a"."""
    if value is None or (isinstance(value, float) and value != value):
        return "n/a"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    tidy = tidy_number(value)
    return str(int(tidy)) if tidy.is_integer() and abs(tidy) < 1e15 else f"{tidy:.6g}"


def _tidy(obj):
    if isinstance(obj, float):
        return tidy_number(obj) if obj == obj and abs(obj) != float("inf") else obj
    if isinstance(obj, dict):
        return {k: _tidy(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_tidy(v) for v in obj]
    return obj


def safe_name(dataset_name: str) -> str:
    """The dataset's file name without folders, extension or unsafe characters (``data`` if nothing is left)."""
    name = os.path.splitext(os.path.basename(dataset_name.replace("\\", "/")))[0]
    return re.sub(r"[^A-Za-z0-9._ -]+", "_", name).strip(" .") or "data"


def file_stem(dataset_name: str, ledger: dict) -> str:
    """A safe file name stem: dataset, method, ε and seed (``penguins-independent-eps1-seed7``)."""
    parts = [safe_name(dataset_name), ledger["method"]]
    if ledger.get("epsilon_requested") is not None:
        parts.append(f"eps{tidy_number(ledger['epsilon_requested']):g}")
    if isinstance(ledger.get("seed"), int):
        parts.append(f"seed{ledger['seed']}")
    return "-".join(parts)


def ledger_bytes(ledger: dict) -> bytes:
    """The ledger as pretty UTF-8 JSON (``<stem>.ledger.json``)."""
    return json.dumps(ledger, indent=2, ensure_ascii=False).encode("utf-8")


def public_ledger(ledger: dict, schema: Schema, *, totals: Totals | None = None) -> dict:
    """The ledger as a release publishes it.

    Each column's domain is the declared view of ``schema``: a value read off
    the data is withheld (named, not given). ``totals`` (what the ledger store
    recorded on the same data: every DP computation, their ε and δ in all, the
    looks without a guarantee) is added as ``spent_on_this_data``, without the
    steward's cap; numbers are written to 12 significant digits.
    """
    out = copy.deepcopy(ledger)
    public = schema.to_public_dict()
    columns = out.get("public", {}).get("columns")
    if columns is not None:
        # Each column's estimate steps are the ledger's own steps already: not repeated per column.
        out["public"]["columns"] = {c: {**{k: v for k, v in public[c].items() if k != "estimate_steps"},
                                        "source": column_source(schema[c]) if not schema[c].derived
                                        else "partly read off the data: those values are withheld"}
                                    for c in columns}
    if totals is not None:
        spent = totals.to_dict()
        spent.pop("cap")  # the steward's own setting, not a fact of the release
        out["spent_on_this_data"] = {
            "recorded_by": "the steward's ledger store: every computation on the same data, from every session "
                           "and command, this release included", **spent}
    return _tidy(out)


def csv_files(synthesis: Synthesis, stem: str) -> dict[str, bytes]:
    """``{file name: bytes}``: the synthetic CSV (``<stem>.csv``), or one per implicate
    (``<stem>-implicate1.csv``, …).

    Values are already at the precision the schema gives each numeric column (the core rounds them
    where it assembles the frame), and each column is written in its schema's form
    (:func:`~dpsynth_core.io.to_csv_bytes`), so the bytes depend on the synthesis and its schema alone.
    """
    frames = list(synthesis.implicates)
    if len(frames) == 1:
        return {f"{stem}.csv": to_csv_bytes(frames[0], synthesis.schema)}
    return {f"{stem}-implicate{i + 1}.csv": to_csv_bytes(f, synthesis.schema) for i, f in enumerate(frames)}


def ledger_file(synthesis: Synthesis) -> bytes:
    """The ledger JSON a synthesis is downloaded or written with: :func:`public_ledger` (declared schema only)."""
    return ledger_bytes(public_ledger(synthesis.ledger, synthesis.schema))


def synthesis_files(synthesis: Synthesis, stem: str) -> dict[str, bytes]:
    """Everything a synthesis is saved as, by the app's downloads and by ``dpsynth synthesize`` alike: its CSV(s)
    (:func:`csv_files`) and ``<stem>.ledger.json`` (:func:`ledger_file`). The same synthesis gives the same bytes."""
    return {**csv_files(synthesis, stem), f"{stem}.ledger.json": ledger_file(synthesis)}


def release_files(synthesis: Synthesis, stem: str, *, ledger: dict) -> dict[str, bytes]:
    """``{file name: bytes}``: the CSV(s) (:func:`csv_files`) and ``ledger`` beside them (a release writes
    :func:`public_ledger` with what the ledger store recorded on the data). The ledger is always given: no
    default may write a synthesis's own, unfiltered one."""
    return {**csv_files(synthesis, stem), f"{stem}.ledger.json": ledger_bytes(ledger)}


def zip_bytes(files: dict[str, bytes]) -> bytes:
    """The files in one zip archive, built in memory."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return buf.getvalue()
