"""Numbers are rounded to the declared precision once, in the core, where the synthetic frame is assembled
(issue 28, point 2): every path writes them so, and every statistic computed from the synthesis sees
the values that are released."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pandas as pd
import pytest

import dpsynth_core as core
from tests.conftest import ROOT
from tests.core.test_cli import run

DATA = ROOT / "data/penguins.csv"


@pytest.fixture(scope="module")
def declared():
    schema = json.loads((ROOT / "data/penguins.schema.json").read_text(encoding="utf-8"))
    schema["bill_length_mm"]["decimals"] = 1
    schema["bill_depth_mm"]["decimals"] = 0
    return schema


def _on_grid(values, decimals: int) -> bool:
    v = pd.to_numeric(pd.Series(values), errors="coerce").dropna().to_numpy()
    return len(v) > 0 and bool(np.all(np.abs(v * 10 ** decimals - np.round(v * 10 ** decimals)) < 1e-9))


@pytest.mark.parametrize("method", ["mst", "dp_seqreg", "cart"])
def test_the_synthesis_in_memory_holds_the_rounded_values(method, declared):
    df = pd.read_csv(DATA)
    s = core.synthesize(df, method, epsilon=1.0, schema=declared, seed=4, n=200)
    assert _on_grid(s.data["bill_length_mm"], 1) and _on_grid(s.data["bill_depth_mm"], 0)
    # a column without a declared precision keeps its digits (a value inside a bin, drawn uniformly)
    assert not _on_grid(core.synthesize(df, "mst", epsilon=1.0, schema={**declared, "bill_depth_mm": {
        k: v for k, v in declared["bill_depth_mm"].items() if k != "decimals"}}, seed=4, n=200).data["bill_depth_mm"], 2)
    # what the previews and reports compute from is what is written: the CSV read back gives the same means
    back = pd.read_csv(io.BytesIO(core.to_csv_bytes(s.data)))
    assert back["bill_length_mm"].mean() == pytest.approx(s.data["bill_length_mm"].mean(), rel=1e-12)


def test_the_command_line_writes_the_rounded_values(tmp_path, declared):
    (tmp_path / "schema.json").write_text(json.dumps(declared))
    code, _, err = run("synthesize", DATA, "--schema", "schema.json", "--method", "mst", "--epsilon", "1",
                       "--seed", "3", "-o", "s.csv", cwd=tmp_path)
    assert code == 0, err
    out = pd.read_csv(tmp_path / "s.csv")
    assert _on_grid(out["bill_length_mm"], 1) and _on_grid(out["bill_depth_mm"], 0)
    (tmp_path / "cfg.json").write_text(json.dumps({"method": "mst", "epsilon": 1}))
    code, _, err = run("release", DATA, "--schema", "schema.json", "--config", "cfg.json", "-o", "rel.zip",
                       cwd=tmp_path)
    assert code == 0, err
    z = zipfile.ZipFile(tmp_path / "rel.zip")
    csv = pd.read_csv(io.BytesIO(z.read(next(n for n in z.namelist() if n.endswith(".csv")))))
    assert _on_grid(csv["bill_length_mm"], 1) and _on_grid(csv["bill_depth_mm"], 0)
