"""The public release package holds the synthetic data and public facts, nothing computed on the confidential data.

Two checks. (1) The package is a function of the synthetic data, the
declared schema and the ledger store's totals alone: given the same synthetic
data, two confidential tables that differ in one record (a new maximum in an
undeclared column, one more missing value) give byte-identical files. (2) A
scan of every file for the data's fingerprint, the store's keyed fingerprint
of it, its missing-value counts, inferred reasons and the exact minimum and
maximum of an undeclared column finds none of them, and the internal report
is not in the zip.
"""

import datetime as dt
import hashlib
import hmac
import io
import json
import sqlite3
import zipfile

import numpy as np
import pandas as pd

import dpsynth_core as core
from dpsynth_core.release import format_number, public_ledger, tidy_number
from dpsynth_core.report import internal_report, release_package
from dpsynth_core.schema import infer_schema, merge_declared
from dpsynth_core.synth import Synthesis

CREATED = dt.datetime(2026, 1, 2, 3, 4, tzinfo=dt.timezone.utc)


def _data():
    """Penguins with a distinctive undeclared income column (values with six decimals)."""
    df, declared = core.load_bundled("penguins")
    df = df.copy()
    rng = np.random.default_rng(7)
    df["income"] = np.round(rng.lognormal(10.5, 0.4, len(df)), 6)
    return df, declared


def _schema(df, declared):
    # Declared penguin columns; income left as read off the data (its bounds are the data's min and max).
    return merge_declared(infer_schema(df), declared)


def _files(package: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(package)) as z:
        return {n: z.read(n) for n in z.namelist()}


def _package(df, schema, synth_data=None, seed=None):
    result = core.synthesize(df, "independent", epsilon=1.0, schema=schema, seed=seed)
    if synth_data is not None:
        # The same synthetic data and ledger, described by this table's schema.
        result = Synthesis(data=synth_data.data, method=synth_data.method, ledger=synth_data.ledger, schema=schema,
                           implicates=synth_data.implicates)
    totals = core.privacy.LedgerStore().totals(core.fingerprint(df))  # the synthesis above, recorded
    return result, release_package(dataset_name="survey.csv", synthesis=result, stem="survey-independent-eps1-release",
                                   totals=totals, created=CREATED)


def test_one_record_more_changes_nothing_in_the_package_but_through_the_synthetic_data():
    df, declared = _data()
    neighbour = df.copy()
    neighbour.loc[0, "income"] = 987654.321987  # a new maximum of the undeclared column
    neighbour.loc[1, "sex"] = None  # one more missing value
    schema, schema2 = _schema(df, declared), _schema(neighbour, declared)
    assert schema["income"].bounds != schema2["income"].bounds
    assert schema["sex"].n_missing + 1 == schema2["sex"].n_missing
    result, package = _package(df, schema)
    _, package2 = _package(neighbour, schema2, synth_data=result)
    files, files2 = _files(package), _files(package2)
    assert sorted(files) == sorted(files2) == ["survey-independent-eps1-release.csv",
                                               "survey-independent-eps1-release.ledger.json",
                                               "survey-independent-eps1-release.report.html"]
    for name in files:
        assert files[name] == files2[name], name


def test_no_fingerprint_count_reason_or_undeclared_statistic_in_any_file(ledger_store):
    df, declared = _data()
    schema = _schema(df, declared)
    result, package = _package(df, schema, seed=3)  # seeded: the scan must not depend on luck
    fp = core.fingerprint(df)
    # The store knows the data by HMAC-SHA-256 of its fingerprint under the key it keeps: computed here by hand.
    with sqlite3.connect(ledger_store) as con:
        secret = bytes.fromhex(con.execute("SELECT value FROM meta WHERE name = 'key'").fetchone()[0])
        stored = [k for (k,) in con.execute("SELECT key FROM datasets")]
    keyed = hmac.new(secret, fp.encode(), hashlib.sha256).hexdigest()
    assert stored == [keyed]
    files = _files(package)
    text = {n: b.decode("utf-8") for n, b in files.items()}
    income = df["income"]
    lo, hi = income.min(), income.max()
    n_missing = {c: int(df[c].isna().sum()) for c in df.columns}
    assert n_missing["sex"] == 11 and n_missing["bill_length_mm"] == 2  # counted by pandas, independently
    for name, body in text.items():
        for k in range(0, 64 - 12 + 1, 13):
            assert fp[k:k + 12] not in body, (name, "fingerprint")
            assert keyed[k:k + 12] not in body, (name, "keyed fingerprint")
        assert "n_missing" not in body and "SHA-256" not in body and "CONFIDENTIAL" not in body
        assert "distinct values" not in body and "→" not in body  # no inferred reason
        if name.endswith(".csv"):
            continue  # the synthetic data itself: released by the mechanism, not a statistic of the real data
        for stat in (lo, hi):
            # Six significant digits and more: shorter numbers occur by chance in plotly.js's code.
            for shown in (repr(float(stat)), f"{stat:.6g}", format_number(stat), f"{stat:.8g}"):
                assert shown not in body, (name, shown)
    ledger = json.loads(text["survey-independent-eps1-release.ledger.json"])
    # The ledger says what was withheld instead of giving it; missing counts nowhere.
    assert ledger["public"]["columns"]["income"] == {
        "withheld": ["kind", "lower", "upper", "integer", "nullable", "decimals"],
        "source": "partly read off the data: those values are withheld"}
    assert ledger["public"]["columns"]["bill_length_mm"]["bounds"] == [30.0, 60.0]
    # The seeded run is the one use of these data: a look without a guarantee, no DP computation.
    spent = ledger["spent_on_this_data"]
    assert (spent["dp_computations"], spent["epsilon"], spent["looks_without_guarantee"]) == (0, 0, 1)
    # The internal report is separate, confidential, and carries what the public one must not.
    internal = internal_report(dataset_name="survey.csv", fingerprint=fp, real=df, synthesis=result,
                               totals=core.privacy.Totals(None), seed=1).decode("utf-8")
    assert fp in internal and "CONFIDENTIAL" in internal and "Disclosure risk" in internal
    assert not any("internal" in n for n in files)


def test_public_ledger_prints_epsilon_as_people_write_it():
    df, declared = core.load_bundled("penguins")
    result = core.synthesize(df, "independent", epsilon=1.0, schema=declared, seed=None)
    ledger = dict(result.ledger, epsilon_total=0.9999999999999999)  # a sum of ten steps of 0.1
    assert public_ledger(ledger, declared)["epsilon_total"] == 1.0
    assert tidy_number(0.1 + 0.2) == 0.3 and format_number(0.9999999999999999) == "1"
    assert format_number(2200.0) == "2200" and format_number(0.05) == "0.05" and format_number(None) == "n/a"


def test_csv_values_are_written_to_the_declared_precision():
    df, declared = core.load_bundled("penguins")
    schema = declared.replace_column("bill_length_mm", decimals=1, derived=False)
    result = core.synthesize(df, "independent", epsilon=1.0, schema=schema, seed=None)
    files = core.release.release_files(result, "p", ledger=result.ledger)
    back = pd.read_csv(io.BytesIO(files["p.csv"]))
    v = back["bill_length_mm"].dropna().to_numpy()
    assert len(v) and np.all(np.abs(v * 10 - np.round(v * 10)) < 1e-9)  # one decimal at most
    # The core rounds where it assembles the frame: the synthesis in memory already holds the released
    # values, and a column without a declared precision keeps its digits.
    mem = result.data["bill_length_mm"].dropna().to_numpy()
    assert np.all(np.abs(mem * 10 - np.round(mem * 10)) < 1e-9)
    other = result.data["bill_depth_mm"].dropna().to_numpy()
    assert np.any(np.abs(other * 10 - np.round(other * 10)) > 1e-6)


def test_public_report_prints_epsilon_as_people_write_it_and_the_schema_as_a_table():
    df, declared = core.load_bundled("penguins")
    result = core.synthesize(df, "independent", epsilon=1.0, schema=declared, seed=None)
    odd = Synthesis(data=result.data, method=result.method, schema=result.schema, implicates=result.implicates,
                    ledger=dict(result.ledger, epsilon_total=0.9999999999999999))
    totals = core.privacy.Totals(None, dp_computations=3, epsilon=2.9999999999999996)
    html_text = core.report.public_report_html(dataset_name="p", synthesis=odd, statement="S.", totals=totals,
                                               created=CREATED)
    assert "0.9999999999999999" not in html_text and "2.9999999999999996" not in html_text
    assert "<td>ε (total)</td>\n      <td>1</td>" in html_text
    assert "<td>all DP computations: ε spent in all</td>\n      <td>3 (basic composition" in html_text
    assert "<pre>" not in html_text  # the schema is a table, not raw JSON
    assert "<td>bill_length_mm</td>\n      <td>numeric</td>\n      <td></td>\n      <td>30</td>\n      <td>60</td>" \
        in html_text
