"""The command line end to end: ``python -m dpsynth_core …`` on the bundled data, in a temporary folder."""

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tomllib
import zipfile

import numpy as np
import pandas as pd
import pytest

import dpsynth_core as core
from dpsynth_core import cli
from dpsynth_core.privacy.audit import bound_text, run_audit
from dpsynth_core.settings import RunSettings
from tests.conftest import ROOT, entries

DATA, SCHEMA = str(ROOT / "data/penguins.csv"), str(ROOT / "data/penguins.schema.json")


def run(*args, cwd):
    """(exit code, stdout, stderr) of ``dpsynth args`` in the folder ``cwd``.

    The command's own function, :func:`cli.main`, as the console script calls it, in this process: a new
    Python process importing the libraries cost about 1 s of CPU a call. That ``python -m dpsynth_core``
    as a process of its own reaches it, and exits with its code, is tested once, by :func:`run_process`.
    """
    out, err, here = io.StringIO(), io.StringIO(), os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main([str(a) for a in args])
            except SystemExit as stop:  # argparse's own usage errors and --help
                code = stop.code
    finally:
        os.chdir(here)
    return code, out.getvalue(), err.getvalue()


def run_process(*args, cwd):
    """(exit code, stdout, stderr) of ``python -m dpsynth_core args``, a process of its own."""
    proc = subprocess.run([sys.executable, "-m", "dpsynth_core", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def penguins():
    df = pd.read_csv(DATA)
    return df, core.Schema.from_dict(json.loads(open(SCHEMA, encoding="utf-8").read()))


def test_schema_writes_the_inferred_schema_as_json(tmp_path, penguins):
    code, out, err = run("schema", DATA, cwd=tmp_path)
    assert code == 0 and "derived" in err and "CONFIDENTIAL" in err
    assert json.loads(out) == json.loads(core.infer_schema(penguins[0]).to_json())  # no counts, no notes
    # Its output is a schema the other commands read back (bar the counts and notes, which it leaves out).
    inferred = core.infer_schema(penguins[0])
    back = core.Schema.from_dict(json.loads(out))
    assert all(back[c].replace(reason=col.reason, n_missing=col.n_missing) == col for c, col in inferred.columns.items())
    assert "n_missing" not in out and "reason" not in out
    # With -o, the counts and notes go to a file of their own, named as confidential.
    code, _, err = run("schema", DATA, "-o", "birds.schema.json", cwd=tmp_path)
    notes = json.loads((tmp_path / "birds.CONFIDENTIAL-notes.json").read_text(encoding="utf-8"))
    assert code == 0 and notes["sex"]["n_missing"] == int(penguins[0]["sex"].isna().sum()) == 11
    assert notes["body_mass_g"]["read_off_the_data"]["upper"] == "6300"


def test_schema_estimated_privately_holds_only_public_values(tmp_path):
    rng = np.random.default_rng(12)
    n = 4000
    df = pd.DataFrame({"hours": np.where(rng.random(n) < 0.3, 0, rng.integers(5, 60, n)),
                       "income": np.round(rng.uniform(1500, 9000, n), 2),
                       "job": rng.choice(["clerk", "nurse", "cook"], n)})
    df.loc[:40, "income"] = np.nan
    (tmp_path / "staff.csv").write_bytes(core.to_csv_bytes(df))
    # Unseeded, as a user runs it: at 0.1 a column every threshold is a few hundred records against thousands,
    # so what is asserted fails with probability below 1e−6.
    code, _, err = run("schema", "staff.csv", "--estimate-epsilon", "0.3", "-o", "staff.schema.json", cwd=tmp_path)
    assert code == 0, err
    text = (tmp_path / "staff.schema.json").read_text(encoding="utf-8")
    spec = json.loads(text)
    # Only public values: nothing read off the data, no count, no note; the estimate's ε and steps.
    assert not any("derived" in c or "withheld" in c or "n_missing" in c or "reason" in c for c in spec.values())
    assert str(df["income"].max()) not in text and str(df["income"].min()) not in text
    schema = core.Schema.from_dict(spec)
    assert schema.is_public and schema.estimate_epsilon == pytest.approx(0.3)
    notes = json.loads((tmp_path / "staff.CONFIDENTIAL-notes.json").read_text(encoding="utf-8"))
    assert notes["income"]["n_missing"] == 41
    # A release with it lists the estimate's steps and takes their ε off its total.
    code, _, err = run("release", "staff.csv", "--schema", "staff.schema.json", "--epsilon", "1", "-o", "r.zip",
                       cwd=tmp_path)
    assert code == 0, err
    with zipfile.ZipFile(tmp_path / "r.zip") as z:
        ledger = json.loads(next(z.read(f) for f in z.namelist() if f.endswith(".ledger.json")))
    assert ledger["is_dp"] and ledger["epsilon_total"] == 1.0 and ledger["schema_estimate"]["epsilon"] == 0.3
    assert ledger["steps"][0]["target"] == "schema estimate: kind and missing values of hours"
    # A public file with a withheld value is refused in a sentence, not read as a declaration.
    spec["job"]["withheld"] = ["nullable"]
    (tmp_path / "w.json").write_text(json.dumps(spec), encoding="utf-8")
    code, _, err = run("release", "staff.csv", "--schema", "w.json", "--epsilon", "1", cwd=tmp_path)
    assert code == 2 and "'job': its nullable were withheld" in err and "Traceback" not in err


def test_synthesize_with_a_seed_is_the_library_call_and_its_settings_repeat_it(tmp_path, penguins):
    df, schema = penguins
    code, _, err = run("synthesize", DATA, "--schema", SCHEMA, "--method", "dp_seqreg", "--epsilon", "2",
                       "--seed", "7", "--param", "bins=10", "-o", "out/s.csv", cwd=tmp_path)
    assert code == 0, err
    want = core.synthesize(df, "dp_seqreg", epsilon=2.0, schema=schema, seed=7, bins=10)
    got = pd.read_csv(tmp_path / "out/s.csv")
    pd.testing.assert_frame_equal(got, pd.read_csv(io.BytesIO(core.to_csv_bytes(want.data))))
    # The ledger is the one the app's download holds: the declared schema's view of each column.
    ledger = json.loads((tmp_path / "out/s.ledger.json").read_text())
    assert ledger == json.loads(core.release.ledger_bytes(core.release.public_ledger(want.ledger, want.schema)))
    settings = json.loads((tmp_path / "out/s.settings.json").read_text())
    assert settings == {"method": "dp_seqreg", "epsilon": 2.0, "delta": 0.0, "seed": 7, "n": None,
                        "implicates": 1, "holdout": 0.0, "columns": None, "params": {"bins": 10}}
    # The settings file alone repeats the run.
    code, _, err = run("synthesize", DATA, "--schema", SCHEMA, "--config", "out/s.settings.json", "-o", "again.csv",
                       cwd=tmp_path)
    assert code == 0, err
    assert (tmp_path / "again.csv").read_bytes() == (tmp_path / "out/s.csv").read_bytes()


def test_the_apps_settings_repeat_the_apps_synthesis_in_batch(tmp_path, penguins):
    df, schema = penguins
    # No holdout: the app's holdout is a secret coin per record that neither side can repeat (issue 15).
    cfg = RunSettings(method="independent", epsilon=0.5, seed=11, holdout=0.0, implicates=2, params=(("bins", 8),))
    (tmp_path / "app.json").write_text(cfg.to_json())
    code, _, err = run("synthesize", DATA, "--schema", SCHEMA, "--config", "app.json", "-o", "s.csv", cwd=tmp_path)
    assert code == 0, err
    # What the app computes for this configuration (ui.runs.synthesize).
    want = core.synthesize(df, "independent", epsilon=0.5, schema=schema, seed=11, implicates=2, bins=8)
    for i, frame in enumerate(want.implicates):
        assert (tmp_path / f"s-implicate{i + 1}.csv").read_bytes() == core.to_csv_bytes(frame)
    assert RunSettings.from_json(json.loads((tmp_path / "s.settings.json").read_text())) == cfg


def test_synthesize_without_a_seed_draws_fresh_entropy(tmp_path):
    for name in ("a.csv", "b.csv"):
        code, _, err = run("synthesize", DATA, "--schema", SCHEMA, "--epsilon", "1", "-o", name, cwd=tmp_path)
        assert code == 0, err
    assert json.loads((tmp_path / "a.ledger.json").read_text())["seed"] is None
    assert (tmp_path / "a.csv").read_bytes() != (tmp_path / "b.csv").read_bytes()


def test_sweep_writes_the_ru_table_and_the_map(tmp_path, penguins):
    df, schema = penguins
    code, _, err = run("sweep", DATA, "--schema", SCHEMA, "--methods", "independent,dp_seqreg", "--epsilons",
                       "0.5,4", "--seed", "5", "--n-jobs", "1", "-o", "sweep.csv", cwd=tmp_path)
    assert code == 0, err
    assert f"[{'#' * 30}] 100%" in err and err.count("%  ") == 5  # the bar, redrawn after each of the 5 points
    # Computed serially, as the command was asked to (test_sweep_parallel.py: local processes give this table).
    want = core.ru_map(df, ["independent", "dp_seqreg"], [0.5, 4.0], seed=5, schema=schema, n_jobs=1)
    assert (tmp_path / "sweep.csv").read_bytes() == core.to_csv_bytes(want)
    html = (tmp_path / "sweep.html").read_text()
    assert "plotly" in html and "Independent noisy marginals" in html


@pytest.mark.integration  # a Dask cluster
def test_sweep_runs_on_a_dask_scheduler(tmp_path, penguins):
    from dask import distributed  # a dependency (requirements.txt): missing, this fails rather than skips

    df, schema = penguins
    with distributed.LocalCluster(n_workers=2, processes=False, protocol="tcp", dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        code, _, err = run("sweep", DATA, "--schema", SCHEMA, "--methods", "independent", "--epsilons", "1,2",
                           "--seed", "5", "--scheduler", cluster.scheduler_address, "-o", "sweep.csv", cwd=tmp_path)
        assert code == 0, err
        ran = client.run_on_scheduler(lambda dask_scheduler: [k for k in dask_scheduler.task_prefixes])
    assert any("_point" in k for k in ran)  # the points ran on this cluster
    want = core.ru_map(df, ["independent"], [1.0, 2.0], seed=5, schema=schema, n_jobs=1)
    assert (tmp_path / "sweep.csv").read_bytes() == core.to_csv_bytes(want)


def test_release_writes_the_package_with_a_fresh_seed(tmp_path):
    (tmp_path / "cfg.json").write_text(json.dumps({"method": "independent", "epsilon": 1, "seed": 3}))
    code, _, err = run("release", DATA, "--schema", SCHEMA, "--config", "cfg.json", "-o", "rel.zip",
                       "--internal-report", "internal.html", cwd=tmp_path)
    assert code == 0, err
    assert "fresh seed" in err
    assert "<title>CONFIDENTIAL dpsynth internal report: penguins.csv" in (tmp_path / "internal.html").read_text()
    names = zipfile.ZipFile(tmp_path / "rel.zip").namelist()
    ledger_name = next(n for n in names if n.endswith(".ledger.json"))
    ledger = json.loads(zipfile.ZipFile(tmp_path / "rel.zip").read(ledger_name))
    assert ledger["seed"] is None and ledger["is_dp"] and ledger["epsilon_total"] == pytest.approx(1.0)
    assert any(n.endswith(".csv") for n in names) and any(n.endswith(".html") for n in names)


def test_three_runs_and_a_release_publish_every_dp_synthesis_recorded(tmp_path, ledger_store, capsys):
    # Issue 26: three unseeded runs, then a release, published "1 synthesis, ε = 1 in all" where ε = 4 was spent.
    db = tmp_path / "mine.sqlite3"
    for i in range(3):
        code, _, err = run("synthesize", DATA, "--schema", SCHEMA, "--epsilon", "1", "-o", f"s{i}.csv",
                           "--ledger-db", db, cwd=tmp_path)
        assert code == 0, err
    code, _, err = run("release", DATA, "--schema", SCHEMA, "--epsilon", "1", "-o", "rel.zip", "--ledger-db", db,
                       cwd=tmp_path)
    assert code == 0, err
    said = ("4 DP computations (3 explorations, 1 release) spending ε = 4, δ = 0 in all (basic composition: the ε "
            "and the δ add up); 0 looks at the data without a guarantee.")
    assert said in err
    with zipfile.ZipFile(tmp_path / "rel.zip") as z:
        ledger = json.loads(z.read("penguins-independent-eps1-release.ledger.json"))
        report = z.read("penguins-independent-eps1-release.report.html").decode("utf-8")
    spent = ledger["spent_on_this_data"]
    assert (spent["dp_computations"], spent["dp_computations_by_purpose"], spent["epsilon"], spent["delta"],
            spent["composition"], spent["looks_without_guarantee"]) == (4, {"exploration": 3, "release": 1}, 4, 0,
                                                                        "basic", 0)
    assert said in report
    assert entries(ledger_store) == []  # --ledger-db chose the store: the default one got nothing
    # `dpsynth ledger` reads the same store back, in each of its forms, without any fingerprint.
    fp = core.fingerprint(core.load_csv(open(DATA, "rb")))
    assert cli.main(["ledger", "--json", "--ledger-db", str(db)]) == 0
    out = capsys.readouterr().out
    [dataset] = json.loads(out)["datasets"]
    assert (dataset["name"], dataset["totals"]["epsilon"], dataset["totals"]["dp_computations"]) == (
        "penguins.csv", 4, 4)
    assert [(e["purpose"], e["epsilon"], e["is_dp"], e["source"]) for e in dataset["entries"]] == \
        [("exploration", 1.0, True, "cli")] * 3 + [("release", 1.0, True, "cli")]
    assert cli.main(["ledger", "--csv", "--ledger-db", str(db)]) == 0
    out += capsys.readouterr().out
    table = pd.read_csv(io.StringIO(out[out.index("row,"):]))
    assert table["row"].tolist() == ["entry"] * 4 + ["total"]
    assert table.loc[4, "epsilon"] == 4 and table.loc[4, "DP computations"] == 4
    assert cli.main(["ledger", "--ledger-db", str(db)]) == 0
    text = capsys.readouterr().out
    out += text
    assert "Dataset 1 (penguins.csv):\n  4 DP computations: ε = 4, δ = 0 in all" in text
    assert fp not in out and fp[:12] not in out


def test_a_cap_refuses_a_run_in_one_sentence_and_nothing_is_written(tmp_path, ledger_store, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    synth = ["synthesize", DATA, "--schema", SCHEMA, "--epsilon", "1"]
    assert cli.main(["cap", DATA, "--epsilon", "1.5"]) == 0
    assert "cap: ε = 1.5, δ = 0 (ε = 1.5 left)" in capsys.readouterr().out
    assert cli.main([*synth, "-o", "a.csv"]) == 0
    capsys.readouterr()
    assert cli.main([*synth, "-o", "b.csv"]) == 2
    assert capsys.readouterr().err == (
        "dpsynth synthesize: error: Refused before reading the data: this run would bring what is spent on "
        "penguins.csv to ε = 2, δ = 0, past its cap of ε = 1.5, δ = 0 (ε = 1, δ = 0 spent so far); lower ε or δ, or "
        "raise the cap if the data's owners allow it.\n")
    assert not list(tmp_path.glob("b*")) and len(entries(ledger_store)) == 1
    # A seeded look is no DP run: not refused, counted apart.
    assert cli.main([*synth, "--seed", "3", "-o", "c.csv"]) == 0
    assert cli.main(["cap", DATA]) == 2 and "--remove" in capsys.readouterr().err
    assert cli.main(["cap", DATA, "--remove"]) == 0
    assert cli.main([*synth, "-o", "d.csv"]) == 0
    assert [(e["epsilon"], e["is_dp"]) for e in entries(ledger_store)] == [(1.0, True), (1.0, False), (1.0, True)]


def test_a_ledger_that_cannot_be_written_stops_the_command_before_any_output(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")
    assert cli.main(["synthesize", DATA, "--schema", SCHEMA, "--seed", "1", "-o", "a.csv",
                     "--ledger-db", "afile/ledger.sqlite3"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpsynth synthesize: error: The privacy ledger afile/ledger.sqlite3 could not be opened")
    assert "Traceback" not in err and err.count("\n") == 1 and not list(tmp_path.glob("a.*"))


@pytest.mark.parametrize("args, says", [
    (["synthesize", DATA, "--method", "nope", "-o", "x.csv"], "Unknown method 'nope'"),
    (["synthesize", DATA, "--schema", SCHEMA, "--epsilon", "1000", "-o", "x.csv"], "epsilon must be a number"),
    (["synthesize", "missing.csv", "-o", "x.csv"], "missing.csv"),
    (["synthesize", DATA, "--schema", "bad.json", "-o", "x.csv"], "not valid JSON"),
    (["synthesize", DATA, "--param", "bins", "-o", "x.csv"], "--param takes name=value"),
    (["synthesize", "bad.json", "-o", "x.csv"], "at least two columns"),
    (["sweep", DATA, "--epsilons", "1,abc", "-o", "x.csv"], "ε"),
    (["sweep", DATA, "--methods", "independent", "--epsilons", "1", "--x", "nope", "-o", "x.csv"],
     "Unknown measure nope; choose among "),
    (["audit", "--method", "cart"], "Sequential CART is not differentially private: there is no ε to audit."),
    (["audit", "--method", "independent", "--runs", "2"], "an audit needs at least 4 runs"),
    (["audit", "--method", "mst", "--design", "1"], "declares 1 audit(s), numbered from 0"),
    (["audit", "--method", "independent", "--schema", "bad.json"], "not valid JSON"),
    (["audit", "--method", "independent", "--param", "bins=0"], "bins"),
])
def test_bad_input_is_one_sentence_and_exit_code_2(tmp_path, args, says, capsys, monkeypatch):
    (tmp_path / "bad.json").write_text("{not json")
    monkeypatch.chdir(tmp_path)
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
    assert err.strip().count("\n") <= err.count("note:")  # one error line (and notes)
    assert not (tmp_path / "x.csv").exists()


def test_audit_prints_the_cores_table_and_verdict(capsys):
    args = dict(runs=30, seed=4, n_jobs=1)
    assert cli.main(["audit", "--method", "independent", "--runs", "30", "--seed", "4", "--n-jobs", "1"]) == 0
    out = capsys.readouterr().out
    result = run_audit("independent", **args)  # the same seeded runs, from the library
    for outcome in (result.honest, result.broken):
        assert bound_text(outcome.bound) in out and outcome.event in out
    assert "ε claimed per release" in out and "D has 30 rows" in out and result.verdict() in out
    rows = [line.split() for line in out.splitlines() if line.startswith(("as released ", "broken variant "))]
    assert [r[-4:] for r in rows] == [["1", "1", bound_text(result.honest.bound), "30"],
                                      ["1", "10", bound_text(result.broken.bound), "30"]]


def test_audit_builds_its_tables_from_a_given_schema(capsys):
    assert cli.main(["audit", "--method", "independent", "--schema", SCHEMA, "--rows", "50",
                     "--runs", "6", "--seed", "1", "--n-jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "D has 50 rows" in out and "species = Gentoo and island = Torgersen" in out


@pytest.mark.integration  # the command as a process of its own
def test_bad_input_through_the_process_is_one_line_on_stderr_and_exit_code_2(tmp_path):
    code, out, err = run_process("synthesize", DATA, "--schema", SCHEMA, "--method", "pegs", "--epsilon", "0.001",
                         "-o", "x.csv", cwd=tmp_path)
    assert (code, out) == (2, "")
    assert err == "dpsynth synthesize: error: Setting epsilon must be a number from 0.01 to 100, got 0.001.\n"


def test_help_shows_an_example_for_each_command(capsys):
    for name, example in cli.EXAMPLES.items():
        with pytest.raises(SystemExit) as stop:
            cli.main([name, "--help"])
        assert stop.value.code == 0 and example in capsys.readouterr().out


def test_pyproject_installs_the_package_and_the_console_script():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["scripts"] == {"dpsynth": "dpsynth_core.cli:main"}
    assert meta["tool"]["setuptools"]["packages"]["find"]["include"] == ["dpsynth_core", "dpsynth_core.*"]
    # Every runtime library the package imports is a dependency.
    deps = {d.split(">")[0].split("=")[0].split("[")[0].lower() for d in meta["project"]["dependencies"]}
    assert {"numpy", "pandas", "scipy", "scikit-learn", "plotly", "joblib", "threadpoolctl"} <= deps
    # The script's target is the function `python -m dpsynth_core` runs.
    assert callable(cli.main) and "main()" in (ROOT / "dpsynth_core/__main__.py").read_text()


def test_settings_json_rejects_bad_values_in_one_sentence():
    with pytest.raises(ValueError, match="^Unknown setting eps; the keys are method, epsilon, "):
        RunSettings.from_json({"eps": 1})
    with pytest.raises(ValueError, match="seed must be a whole number"):
        RunSettings.from_json({"seed": 1.5})
    with pytest.raises(ValueError, match="columns must be a list"):
        RunSettings.from_json({"columns": "a,b"})
    assert RunSettings.from_json({}) == RunSettings(fixed_seed=False)  # no seed: fresh entropy
    assert RunSettings.from_json({"seed": 7}) == RunSettings(seed=7, fixed_seed=True)  # reproducible exploration
    assert json.loads(RunSettings(seed=7, fixed_seed=False).to_json())["seed"] is None  # an unused seed is not written


# -- issue 31.8: the command line's rough edges, each through the process as a user meets it --------------------

def _one_sentence(err: str) -> str:
    """The one line a refused command prints, checked to be no usage block and no traceback."""
    assert "usage:" not in err and "Traceback" not in err and err.count("\n") == 1, err
    return err.strip()


@pytest.mark.parametrize("args, says", [
    (["synthesize", DATA, "--schema", SCHEMA, "--epsilon", "abc", "-o", "x.csv"],
     "dpsynth synthesize: error: Setting epsilon must be a number from 0.01 to 100, got 'abc'."),
    (["synthesize", "huge.csv", "--epsilon", "abc", "-o", "x.csv"],  # said before a (large) data file is read
     "dpsynth synthesize: error: Setting epsilon must be a number from 0.01 to 100, got 'abc'."),
    (["release", "huge.csv", "--implicates", "0"],
     "dpsynth release: error: Setting implicates must be a whole number from 1 to 20, got 0."),
    (["release", DATA, "--seed", "2"],  # a release draws a fresh seed: it has no --seed
     "dpsynth release: error: this command has no argument --seed 2 (see dpsynth release --help)."),
    (["synthesize", DATA, "--schema", SCHEMA, "--n", "many", "-o", "x.csv"],
     "dpsynth synthesize: error: Setting n must be a whole number from 1 to 1000000, got 'many'."),
    (["synthesize", DATA, "--schema", SCHEMA],
     "dpsynth synthesize: error: the command needs -o/--output; add it (see dpsynth synthesize --help)."),
    (["frobnicate"], "dpsynth: error: there is no command 'frobnicate'; choose one of schema, synthesize, sweep, "
                     "release, ledger, cap, methods, audit (see dpsynth --help)."),
    ([], "dpsynth: error: name a command: schema, synthesize, sweep, release, ledger, cap, methods, audit "
         "(see dpsynth --help)."),
    (["synthesize", DATA, "--bogus", "-o", "x.csv"],  # left over, refused by the top parser: named for the command
     "dpsynth synthesize: error: this command has no argument --bogus (see dpsynth synthesize --help)."),
    (["sweep", DATA, "--reps", "two", "-o", "x.csv"],
     "dpsynth sweep: error: --reps takes a whole number, got 'two' (see dpsynth sweep --help)."),
    (["cap", DATA, "--epsilon", "lots"],
     "dpsynth cap: error: --epsilon takes a number, got 'lots' (see dpsynth cap --help)."),
    (["sweep", DATA, "--schema", SCHEMA, "--reps", "0", "-o", "x.csv"],
     "dpsynth sweep: error: A sweep needs at least 1 replicate per point, got 0."),
    (["sweep", DATA, "--schema", SCHEMA, "--holdout", "5", "-o", "x.csv"],
     "dpsynth sweep: error: The share held out must be at least 0 and below 1, got 5."),
    # joblib said "n_jobs == 0 in Parallel has no meaning"
    (["sweep", DATA, "--schema", SCHEMA, "--epsilons", "1", "--n-jobs", "0", "-o", "x.csv"],
     "dpsynth sweep: error: The number of worker processes must be at least 1 (or -1 for every core), got 0."),
    # was a Python list: ['nope', 'bad']
    (["sweep", DATA, "--schema", SCHEMA, "--methods", "nope,mst,bad", "-o", "x.csv"],
     "dpsynth sweep: error: Unknown methods nope, bad; choose among " + ", ".join(sorted(core.SYNTHESIZERS)) + "."),
])
def test_a_bad_argument_is_one_sentence_not_the_usage_block(tmp_path, args, says):
    code, out, err = run(*args, cwd=tmp_path)
    assert (code, out) == (2, "") and _one_sentence(err) == says
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.parametrize("content", [b"a,b\n1,2\n\"x\n", b"", b"\xff\xfe\x00garbage", b"a\n1\n2\n"])
def test_a_bad_data_file_is_described_in_the_command_lines_words(tmp_path, content):
    (tmp_path / "bad.csv").write_bytes(content)
    code, _, err = run("synthesize", "bad.csv", "-o", "x.csv", cwd=tmp_path)
    sentence = _one_sentence(err.replace(err[:err.index("dpsynth synthesize: error")], "", 1))
    assert code == 2 and sentence.startswith("dpsynth synthesize: error: ")
    assert "upload" not in sentence.lower()  # there is no upload here: the file is a path on the command line


def test_an_unknown_column_is_named_in_words_not_as_a_python_list(tmp_path):
    code, _, err = run("synthesize", DATA, "--schema", SCHEMA, "--columns", "nope,sex", "-o", "x.csv", cwd=tmp_path)
    assert code == 2 and _one_sentence(err) == (
        "dpsynth synthesize: error: Cannot synthesize nope: the schema models no such column; choose among species, "
        "island, bill_length_mm, bill_depth_mm, flipper_length_mm, body_mass_g, sex, year.")


def test_a_release_that_is_not_dp_needs_the_explicit_flag(tmp_path, ledger_store):
    code, _, err = run("release", DATA, "--schema", SCHEMA, "--method", "cart", "-o", "rel.zip", cwd=tmp_path)
    assert code == 2 and _one_sentence(err) == (
        "dpsynth release: error: A release is published, and this one would not be differentially private "
        "(Sequential CART is not a differentially private method); fix that, or pass --not-dp to publish it "
        "labelled not DP.")
    assert not (tmp_path / "rel.zip").exists() and entries(ledger_store) == []  # refused before the data were read
    code, _, err = run("release", DATA, "--method", "independent", "-o", "rel.zip", cwd=tmp_path)  # no --schema
    assert code == 2 and "no --schema, so every domain would be read off the data" in err
    # The settings alone refuse it: a data file that does not exist is never opened.
    code, _, err = run("release", tmp_path / "absent.csv", "--schema", SCHEMA, "--method", "cart", cwd=tmp_path)
    assert code == 2 and "would not be differentially private" in err and "absent.csv" not in err
    code, _, err = run("release", DATA, "--schema", SCHEMA, "--method", "cart", "--not-dp", "-o", "rel.zip",
                       cwd=tmp_path)
    assert code == 0, err
    with zipfile.ZipFile(tmp_path / "rel.zip") as z:
        ledger = json.loads(z.read(next(n for n in z.namelist() if n.endswith(".ledger.json"))))
    assert ledger["is_dp"] is False and ledger["not_dp_reasons"] == ["Sequential CART is not a differentially private "
                                                                     "method"]


def test_a_release_with_values_read_off_the_data_is_refused_after_the_run(tmp_path, ledger_store):
    schema = json.loads(open(SCHEMA, encoding="utf-8").read())
    schema["body_mass_g"]["derived"] = True  # bounds read off the data: only the run finds it out
    (tmp_path / "s.json").write_text(json.dumps(schema))
    code, _, err = run("release", DATA, "--schema", "s.json", "--epsilon", "1", "-o", "rel.zip", cwd=tmp_path)
    assert code == 2 and "data-derived bounds or categories for body_mass_g" in _one_sentence(err)
    assert not (tmp_path / "rel.zip").exists()


def test_the_sweep_plots_the_median_dcr_and_sweeps_the_suggested_methods_as_the_app_does(tmp_path):
    from dpsynth_core import frontier, rumap

    code, out, err = run("sweep", DATA, "--schema", SCHEMA, "--epsilons", "1", "--seed", "3", "--n-jobs", "1",
                         "-o", "sweep.csv", cwd=tmp_path)
    assert code == 0, err
    html = (tmp_path / "sweep.html").read_text()
    assert core.METRICS[rumap.DEFAULT_RISK].label in html and rumap.DEFAULT_RISK == "dcr_median"
    assert core.METRICS["exact_copy_share"].label not in html
    df, schema = core.load_bundled("penguins")
    swept = pd.read_csv(tmp_path / "sweep.csv")
    assert [m for m in dict.fromkeys(swept["method"]) if m not in ("original", "bootstrap")] == \
        frontier.default_methods(schema, len(df))  # the R-U page's default methods
    # It prints what the R-U page answers, read here from the table it wrote: the steward's question for the
    # suggested method (MST) at the level the app calls acceptable, and the DP method that keeps the most at ε = 1.
    answer = frontier.smallest_epsilon(swept, "mst", "pmse_ratio", 10.0, "dcr_median")
    best = frontier.best_dp_method(swept, 1.0, "pmse_ratio")
    assert out.splitlines()[:2] == [" ".join(filter(None, (answer["sentence"], answer.get("resolution")))),
                                    best["sentence"]]
    assert out.splitlines()[2] == rumap.sample_note(swept)


def test_the_ledger_keeps_the_declared_integer_nullable_and_decimals_fields(tmp_path):
    # Issue 31.3: the command's ledger dropped them (it wrote the synthesis's own ledger, not the public one).
    schema = json.loads(open(SCHEMA, encoding="utf-8").read())
    schema["bill_length_mm"]["decimals"] = 1
    (tmp_path / "s.json").write_text(json.dumps(schema))
    code, _, err = run("synthesize", DATA, "--schema", "s.json", "--epsilon", "1", "-o", "x.csv", cwd=tmp_path)
    assert code == 0, err
    columns = json.loads((tmp_path / "x.ledger.json").read_text())["public"]["columns"]
    assert {k: columns["bill_length_mm"][k] for k in ("nullable", "decimals")} == {"nullable": True, "decimals": 1}
    assert columns["flipper_length_mm"]["integer"] is True and columns["bill_length_mm"]["integer"] is False


def test_methods_lists_every_synthesizer_in_the_apps_order_with_whether_it_is_dp(tmp_path):
    from dpsynth_core.synth import SYNTHESIZERS
    code, out, err = run("methods", cwd=tmp_path)
    assert code == 0, err
    rows = [line.split(None, 1) for line in out.strip().splitlines()]
    assert [r[0] for r in rows] == list(SYNTHESIZERS)
    for name, rest in rows:
        dp = SYNTHESIZERS[name].is_dp
        assert rest.startswith("DP " if dp else "not DP") and rest.endswith(SYNTHESIZERS[name].label)


@pytest.mark.parametrize("command", list(cli.COMMANDS))
def test_every_command_takes_the_ledger_store_path(command):
    # Issue 26: the app and every command use one store, chosen by --ledger-db (or $DPSYNTH_LEDGER).
    parser = cli._parser(command)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    assert "--ledger-db" in {s for a in sub._actions for s in a.option_strings}
