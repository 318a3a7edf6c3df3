"""Release files: names, the implicates' CSVs and the companion ledger, zipped in memory."""

import io
import json
import zipfile

import pandas as pd

import dpsynth_core as core
from dpsynth_core.release import file_stem, release_files, zip_bytes


def test_file_stem_is_safe_and_says_what_it_holds():
    ledger = {"method": "independent", "epsilon_requested": 0.5, "seed": 7}
    assert file_stem("my data.csv", ledger) == "my data-independent-eps0.5-seed7"
    assert file_stem("../../etc/passwd", ledger) == "passwd-independent-eps0.5-seed7"
    assert file_stem("..", ledger) == "data-independent-eps0.5-seed7"
    assert file_stem("a<b>|c.csv", ledger) == "a_b_c-independent-eps0.5-seed7"
    assert file_stem("x.csv", {"method": "cart", "epsilon_requested": None, "seed": None}) == "x-cart"


def test_implicates_zip_round_trips():
    df, schema = core.load_bundled("penguins")
    result = core.synthesize(df, "independent", epsilon=2.0, schema=schema, n=50, seed=3, implicates=2)
    files = release_files(result, "p", ledger=result.ledger)
    assert sorted(files) == ["p-implicate1.csv", "p-implicate2.csv", "p.ledger.json"]
    with zipfile.ZipFile(io.BytesIO(zip_bytes(files))) as z:
        assert sorted(z.namelist()) == sorted(files)
        for i in (1, 2):
            back = pd.read_csv(z.open(f"p-implicate{i}.csv"))
            assert list(back.columns) == list(df.columns) and len(back) == 50
        ledger = json.loads(z.read("p.ledger.json"))
    assert ledger == json.loads(json.dumps(result.ledger))
    assert ledger["implicates"] == 2 and ledger["epsilon_total"] == 2.0
