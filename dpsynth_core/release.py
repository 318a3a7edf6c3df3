"""Files a release is made of: the synthetic CSV(s) and the companion ledger."""

from __future__ import annotations

import io
import json
import os
import re
import zipfile

from .io import to_csv_bytes
from .synth import Synthesis


def file_stem(dataset_name: str, ledger: dict) -> str:
    """A safe file name stem: dataset, method, ε and seed (``penguins-independent-eps1-seed7``)."""
    name = os.path.splitext(os.path.basename(dataset_name.replace("\\", "/")))[0]
    base = re.sub(r"[^A-Za-z0-9._ -]+", "_", name).strip(" .") or "data"
    parts = [base, ledger["method"]]
    if ledger.get("epsilon_requested") is not None:
        parts.append(f"eps{ledger['epsilon_requested']:g}")
    if isinstance(ledger.get("seed"), int):
        parts.append(f"seed{ledger['seed']}")
    return "-".join(parts)


def ledger_bytes(ledger: dict) -> bytes:
    """The ledger as pretty UTF-8 JSON (``<stem>.ledger.json``)."""
    return json.dumps(ledger, indent=2, ensure_ascii=False).encode("utf-8")


def release_files(synthesis: Synthesis, stem: str) -> dict[str, bytes]:
    """``{file name: bytes}``: one CSV per implicate and the ledger beside them."""
    frames = synthesis.implicates
    if len(frames) == 1:
        files = {f"{stem}.csv": to_csv_bytes(frames[0])}
    else:
        files = {f"{stem}-implicate{i + 1}.csv": to_csv_bytes(f) for i, f in enumerate(frames)}
    files[f"{stem}.ledger.json"] = ledger_bytes(synthesis.ledger)
    return files


def zip_bytes(files: dict[str, bytes]) -> bytes:
    """The files in one zip archive, built in memory."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return buf.getvalue()
