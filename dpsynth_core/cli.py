"""The ``dpsynth`` command line: schema, synthesize, sweep, release and audit without the browser, and the ledger.

Run as ``dpsynth …`` (installed by ``pip install .``) or ``python -m dpsynth_core …``.
Bad input ends with one sentence on stderr and exit code 2, never a traceback.

Every command writes what it computes on the data to the same ledger store as the app
(:mod:`dpsynth_core.privacy.store`; ``--ledger-db PATH`` or ``$DPSYNTH_LEDGER`` chooses the file) before
it writes any output; ``dpsynth ledger`` prints it and ``dpsynth cap`` sets a dataset's budget. ``dpsynth audit``
reads no data (its tables are public look-alikes) and records nothing.

The run settings (method, ε, δ, seed, rows, implicates, holdout, columns, options) are the core's
:class:`~dpsynth_core.settings.RunSettings`: their flags, their checks and the settings file a run writes
come from its declarations, as the app's settings download and share link do. ``synthesize`` writes the
files the app's downloads hold, byte for byte (:func:`dpsynth_core.release.synthesis_files`).

The numerical libraries are imported by the command that needs them, not by this module: ``dpsynth --help``
answers without loading them.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from . import constraints
from .errors import DataError, LedgerError, MethodRefused
from .settings import SETTINGS, RunSettings, from_flags

DATA, SCHEMA = "data/penguins.csv", "data/penguins.schema.json"
EXAMPLES = {
    "schema": f"dpsynth schema {DATA} -o penguins.schema.json",
    "synthesize": f"dpsynth synthesize {DATA} --schema {SCHEMA} --method independent --epsilon 1 -o synth.csv",
    "sweep": f"dpsynth sweep {DATA} --schema {SCHEMA} --methods independent,dp_seqreg --epsilons 0.1,1,10 "
             "-o sweep.csv --html sweep.html",
    "release": f"dpsynth release {DATA} --schema {SCHEMA} --method independent --epsilon 1 -o release.zip",
    "ledger": "dpsynth ledger --csv > ledger-CONFIDENTIAL.csv",
    "cap": f"dpsynth cap {DATA} --epsilon 5 --delta 1e-6",
    "methods": "dpsynth methods",
    "audit": "dpsynth audit --method mst --epsilon 1 --runs 2000",
}


class _Usage(ValueError):
    """Bad input the command line itself finds."""


class _BadArguments(Exception):
    """Arguments argparse refused (:meth:`_Parser.error`): the command's name and argparse's own words."""

    def __init__(self, prog: str, message: str):
        super().__init__(message)
        self.prog = prog


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad argument is one sentence and exit code 2, never the usage block."""

    def error(self, message: str):
        raise _BadArguments(self.prog, message)


def _argument_sentence(prog: str, message: str) -> str:
    """argparse's complaint as one sentence saying what to do (its choices listed without Python's quotes)."""
    choice = re.match(r"argument (\S+): invalid choice: '(.*)' \(choose from (.*)\)$", message)
    if choice:
        options = ", ".join(c.strip().strip("'") for c in choice[3].split(","))
        what = "command" if choice[1] == "COMMAND" else choice[1]
        return f"there is no {what} {choice[2]!r}; choose one of {options} (see {prog} --help)."
    missing = re.match(r"the following arguments are required: (.*)$", message)
    if missing and missing[1] == "COMMAND":
        return f"name a command: {', '.join(COMMANDS)} (see {prog} --help)."
    if missing:
        return f"the command needs {missing[1]}; add {'it' if ',' not in missing[1] else 'them'} (see {prog} --help)."
    number = re.match(r"argument (\S+): invalid (int|float) value: (.*)$", message)
    if number:
        what = "a whole number" if number[2] == "int" else "a number"
        return f"{number[1]} takes {what}, got {number[3]} (see {prog} --help)."
    unknown = re.match(r"unrecognized arguments: (.*)$", message)
    if unknown:
        return f"this command has no argument {unknown[1]} (see {prog} --help)."
    return f"{message} (see {prog} --help)."


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    command = _command_of(argv)
    try:
        args = _parser(command).parse_args(argv)
    except _BadArguments as err:
        # Arguments left over are refused by the top parser, though they were given to the command.
        prog = f"dpsynth {command}" if err.prog == "dpsynth" and command in COMMANDS else err.prog
        print(f"{prog}: error: {_argument_sentence(prog, str(err))}", file=sys.stderr)
        return 2
    try:
        args.run(args)
    except (DataError, MethodRefused, ValueError, LedgerError) as err:  # _Usage is a ValueError
        message = _batch_words(str(err)) if isinstance(err, DataError) else str(err)
        print(f"dpsynth {args.command}: error: {message}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"dpsynth {args.command}: error: cannot use {err.filename or 'a file'}: "
              f"{err.strerror or err}; check the path.", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"dpsynth {args.command}: cancelled.", file=sys.stderr)
        return 130
    return 0


def _command_of(argv: list[str]) -> str | None:
    """The command named in ``argv`` (its first word that is no option), whose arguments the parser needs."""
    return next((a for a in argv if not a.startswith("-")), None)


# -- inputs ------------------------------------------------------------------

def _batch_words(sentence: str) -> str:
    """A sentence about the data file, written for the app's upload, in the command line's words.

    :func:`~dpsynth_core.io.load_csv` tells a person at the Data page what to do ("upload the file again",
    "upload a smaller file"); here the file is a path on the command line.
    """
    sentence = re.sub(r"\bupload the (?:fixed )?file again\b", "run the command again", sentence)
    sentence = re.sub(r"\buploaded\b", "given", sentence)
    return re.sub(r"\b([Uu])pload\b", lambda m: "Give" if m[1] == "U" else "give", sentence)


def _read_data(path: str):
    from .io import load_csv

    with open(path, "rb") as fh:
        return load_csv(fh)


def _read_json(path: str, what: str):
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise _Usage(f"The {what} {path} is not valid JSON (line {err.lineno}); fix it or make a new one.") from None


def _read_schema(path: str | None, df):
    from .schema import Schema

    if path is None:
        print("dpsynth: note: no --schema, so every domain is read off the data and the result is not DP; "
              "make one with `dpsynth schema` and declare public values.", file=sys.stderr)
        return None
    try:
        declared = Schema.from_dict(_read_json(path, "schema"))
    except (TypeError, KeyError, AttributeError) as err:
        raise _Usage(f"The schema {path} is not in dpsynth's format ({err}); start from `dpsynth schema`.") from None
    missing = [c for c in declared.columns if c not in df.columns]
    if missing:
        raise _Usage(f"The schema names columns the data does not have ({', '.join(map(str, missing))}); "
                     "use the schema made for this file.")
    return declared


def _settings(args) -> RunSettings:
    """The run settings: the --config file if any, then the flags given on the command line, every value
    checked against the settings' declarations (and the method's options against its own)."""
    given = _read_json(args.config, "settings file") if args.config else {}
    if not isinstance(given, dict):
        raise _Usage(f"The settings file {args.config} must hold a JSON object.")
    return from_flags({s.name: getattr(args, s.name, None) for s in SETTINGS}, given)


def _store(args):
    """The ledger store: ``--ledger-db``, else ``$DPSYNTH_LEDGER``, else the user's data directory."""
    from .privacy import LedgerStore

    return LedgerStore(args.ledger_db)


def _use(args, df, purpose: str):
    """The data file as the ledger knows it: its name, its content, why it is read, by the command line."""
    from .privacy import Use
    from .synth import fingerprint

    return Use(Path(args.data).name, fingerprint(df), purpose=purpose, source="cli")


def _recorded(store, use) -> None:
    """Say on stderr where the command's uses of the data were recorded, and what the dataset's totals are now."""
    lines = store.totals(use.fingerprint, use.dataset).lines()
    print(f"dpsynth: recorded in the ledger {store.path}; on {use.dataset} in all: {lines[0]}; {lines[2]}.",
          file=sys.stderr)


def _synthesize(df, schema, cfg: RunSettings, *, use, store):
    """(rows synthesized, rows held out, the synthesis), recorded in ``store`` before it is returned.

    Each record is held out by a fresh secret coin, as the app does; the rest are synthesized as the app's
    runs are (:meth:`RunSettings.synthesize_kwargs`).
    """
    from .holdout import split_holdout
    from .synth import synthesize

    train, held = split_holdout(df, cfg.holdout)
    return train, held, synthesize(train, cfg.method, schema=schema, use=use, store=store,
                                   **cfg.synthesize_kwargs(cfg.run_seed))


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    print(f"wrote {path}", file=sys.stderr)


# -- the commands ------------------------------------------------------------

def _notes_path(output: str) -> Path:
    """Where the notes read off the data go, beside the schema file and named as confidential."""
    out = Path(output)
    stem = out.name.removesuffix(".json").removesuffix(".schema")
    return out.with_name(f"{stem}.CONFIDENTIAL-notes.json")


def _confidential_notes(schema) -> dict:
    """What the schema holds that was read off the data: each column's missing count, the reason for its
    kind (which may quote a value) and every value still read off the data."""
    from .schema_editor import field_value_text

    out = {}
    for name, col in schema.columns.items():
        note = {"n_missing": col.n_missing, "reason": col.reason}
        left = {f: field_value_text(col, f) for f in col.relevant_fields if f in col.derived_fields}
        if left:
            note["read_off_the_data"] = left
        out[name] = note
    return out


def cmd_schema(args) -> None:
    from .schema import infer_schema, merge_declared
    from .schema_estimate import estimate_and_record

    df = _read_data(args.data)
    base = _read_schema(args.schema, df) if args.schema else None
    if args.estimate_epsilon is not None:
        use, store = _use(args, df, "schema estimate"), _store(args)
        est = estimate_and_record(df, args.estimate_epsilon, base=base, use=use, store=store)
        _recorded(store, use)
        schema = est.schema
        text = json.dumps(schema.to_public_dict(), indent=2, ensure_ascii=False, default=str) + "\n"
        print(f"dpsynth: note: every value that was read off the data was estimated privately at ε = "
              f"{est.epsilon:g} (δ = {est.delta:g}, {len(est.steps)} steps, listed in the file); a synthesis with "
              "this schema takes that ε off its total and lists the steps in its ledger.", file=sys.stderr)
        for note in est.notes:
            print(f"dpsynth: note: {note}", file=sys.stderr)
    else:
        schema = infer_schema(df) if base is None else merge_declared(infer_schema(df), base)
        text = schema.to_json()
        print("dpsynth: note: the values marked \"derived\" were read off the data; declare values you can publish "
              "and delete \"derived\" before a DP synthesis, or estimate them privately with --estimate-epsilon.",
              file=sys.stderr)
    if args.output:
        _write(Path(args.output), text.encode("utf-8"))
        notes = json.dumps(_confidential_notes(schema), indent=2, ensure_ascii=False, default=str) + "\n"
        _write(_notes_path(args.output), notes.encode("utf-8"))
        print("dpsynth: note: the missing counts and notes read off the data are in the CONFIDENTIAL file: keep it "
              "with the data, never publish it.", file=sys.stderr)
    else:
        sys.stdout.write(text)
        print("dpsynth: note: with -o the missing counts and notes read off the data are also written, to a "
              "separate CONFIDENTIAL file.", file=sys.stderr)


def cmd_synthesize(args) -> None:
    """The synthetic CSV(s) and the ledger JSON, the bytes the app's downloads hold for the same synthesis, and
    the settings file that repeats the run."""
    from . import release

    cfg = _settings(args)  # a bad setting is said before a large file is read
    df = _read_data(args.data)
    schema = _read_schema(args.schema, df)
    use, store = _use(args, df, "exploration"), _store(args)
    _, _, result = _synthesize(df, schema, cfg, use=use, store=store)
    out = Path(args.output)
    for name, data in release.csv_files(result, out.stem).items():  # <stem>.csv, or <stem>-implicate1.csv, …
        _write(out.with_name(Path(name).stem + out.suffix), data)
    _write(Path(args.ledger) if args.ledger else out.with_suffix(".ledger.json"), release.ledger_file(result))
    _write(out.with_suffix(".settings.json"), cfg.to_json().encode("utf-8"))
    print(result.ledger["statement"], file=sys.stderr)
    _recorded(store, use)


def cmd_sweep(args) -> None:
    from . import plots
    from .cluster import on_scheduler
    from .io import to_csv_bytes
    from .frontier import default_methods
    from .rumap import RISK_COLUMNS, UTILITY_COLUMNS, ru_map
    from .schema import schema_of

    df = _read_data(args.data)
    schema = _read_schema(args.schema, df)
    public = schema_of(df, schema)
    if args.methods is None:  # the app's default: the DP methods it may suggest, less any that refuse the table
        methods = default_methods(public, len(df))
    else:
        methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    epsilons = constraints.parse_epsilon_grid(args.epsilons)
    metrics = list(dict.fromkeys([*UTILITY_COLUMNS, *RISK_COLUMNS, args.x, args.y]))
    use, store = _use(args, df, "sweep point"), _store(args)
    with on_scheduler(args.scheduler), _ProgressBar() as bar:
        table = ru_map(df, methods, epsilons, reps=args.reps, seed=args.seed, schema=schema, metrics=metrics,
                       holdout=args.holdout, progress=bar, n_jobs=args.n_jobs, use=use, store=store)
    out = Path(args.output)
    _write(out, to_csv_bytes(table))
    fig = plots.ru_figure(table, args.x, args.y)
    _write(Path(args.html) if args.html else out.with_suffix(".html"),
           fig.to_html(include_plotlyjs=True).encode("utf-8"))
    print("\n".join(_sweep_reports(table, args.x, args.y, public)))
    if args.seed is None:
        print("dpsynth: note: each point's seed is in the table; pass --seed to repeat this sweep exactly.",
              file=sys.stderr)
    _recorded(store, use)


def _sweep_reports(table, x: str, y: str, schema) -> list[str]:
    """What the R-U page answers from a sweep, in the core's words: the steward's question for the method the
    app suggests at ε = 1 (else the first DP method swept), at the threshold the page starts from; the DP method
    that keeps the most at the swept ε nearest 1; and the samples behind the measures."""
    from .frontier import best_dp_method, default_target, default_threshold, dp_methods, smallest_epsilon
    from .rumap import sample_note

    out = []
    swept = dp_methods(table)
    if swept:
        target = default_target(swept, schema, constraints.EPSILON_DEFAULT, None)
        threshold = default_threshold(table, target, y)
        if threshold == threshold:  # NaN: the method has no point with a value of y
            answer = smallest_epsilon(table, target, y, threshold, x)
            out.append(" ".join(filter(None, (answer["sentence"], answer.get("resolution")))))
        best = best_dp_method(table, constraints.EPSILON_DEFAULT, y)
        if best is not None:
            out.append(best["sentence"])
    note = sample_note(table)
    return out + ([note] if note else [])


def _not_dp_refusal(reasons: list[str]) -> _Usage:
    return _Usage(f"A release is published, and this one would not be differentially private ({'; '.join(reasons)}); "
                  "fix that, or pass --not-dp to publish it labelled not DP.")


def cmd_release(args) -> None:
    from . import report
    from .release import file_stem
    from .synth import SYNTHESIZERS

    cfg = _settings(args)
    if not args.not_dp:  # refused before the data are read, where the settings alone say it
        synth = SYNTHESIZERS[cfg.method]
        reasons = ([] if synth.is_dp else [f"{synth.label} is not a differentially private method"]) + \
            (["no --schema, so every domain would be read off the data"] if args.schema is None else [])
        if reasons:
            raise _not_dp_refusal(reasons)
    df = _read_data(args.data)
    schema = _read_schema(args.schema, df)
    if cfg.fixed_seed:
        print("dpsynth: note: a release always draws a fresh seed; the settings' seed is not used.", file=sys.stderr)
        cfg = cfg.replace(fixed_seed=False)
    use, store = _use(args, df, "release"), _store(args)
    train, held, result = _synthesize(df, schema, cfg, use=use, store=store)
    if not args.not_dp and not result.ledger["is_dp"]:  # reasons only the run finds (a value read off the data)
        raise _not_dp_refusal(result.ledger["not_dp_reasons"])
    totals = store.totals(use.fingerprint)  # this release included
    stem = file_stem(use.dataset, result.ledger) + "-release"
    package = report.release_package(dataset_name=use.dataset, synthesis=result, stem=stem, totals=totals)
    _write(Path(args.output) if args.output else Path(f"{stem}.zip"), package)
    if args.internal_report:
        _write(Path(args.internal_report), report.internal_report(
            dataset_name=use.dataset, fingerprint=use.fingerprint, real=train, synthesis=result, totals=totals,
            holdout=held))
    print(report.release_statement(result.ledger, totals), file=sys.stderr)
    _recorded(store, use)


def cmd_ledger(args) -> None:
    from .privacy.store import ledger_csv, ledger_json, ledger_view

    store = _store(args)
    if args.json:
        sys.stdout.write(json.dumps(ledger_json(store), indent=2, ensure_ascii=False) + "\n")
        return
    if args.csv:
        sys.stdout.write(ledger_csv(store).decode("utf-8"))
        return
    entries, _ = ledger_view(store)
    print(f"Ledger store: {store.path} (confidential: it says what was looked at, when and how often)")
    if entries.empty:
        print("No computation on any dataset is recorded yet.")
        return
    print(entries.to_string(index=False, na_rep=""))
    for number, totals in store.all_totals().items():
        print(f"\nDataset {number} ({totals.dataset}):\n  " + "\n  ".join(totals.lines()))


def cmd_cap(args) -> None:
    from .privacy import Cap

    df = _read_data(args.data)
    use, store = _use(args, df, "exploration"), _store(args)
    if args.remove:
        store.set_cap(use.fingerprint, use.dataset, None)
    elif args.epsilon is None:
        raise _Usage("Give the cap's --epsilon (and --delta for (ε, δ) methods), or --remove.")
    else:
        store.set_cap(use.fingerprint, use.dataset, Cap(args.epsilon, args.delta))
    print("\n".join(store.totals(use.fingerprint, use.dataset).lines()))


def cmd_methods(args) -> None:
    """Every synthesizer, in the app's order: its name (what --method takes), whether it is DP, its label."""
    from .synth import SYNTHESIZERS

    width = max(len(m) for m in SYNTHESIZERS)
    for m, s in SYNTHESIZERS.items():
        print(f"{m:<{width}}  {'DP    ' if s.is_dp else 'not DP'}  {s.label}")


def cmd_audit(args) -> None:
    from .privacy.audit import run_audit
    from .schema import Schema
    from .settings import parse_param

    schema = None
    if args.schema:
        try:
            schema = Schema.from_dict(_read_json(args.schema, "schema"))
        except (TypeError, KeyError, AttributeError) as err:
            raise _Usage(f"The schema {args.schema} is not in dpsynth's format ({err}); start from `dpsynth schema`.") \
                from None
    options = dict(parse_param(p) for p in args.param or [])
    with _ProgressBar() as bar:
        result = run_audit(args.method, which=args.design, schema=schema, epsilon=args.epsilon, delta=args.delta,
                           runs=args.runs, rows=args.rows, options=options, seed=args.seed, progress=bar,
                           n_jobs=args.n_jobs)
    print(audit_text(result))


def audit_text(result) -> str:
    """The audit as the command prints it: what was run, the table, each variant's event, the verdict."""
    from .privacy.audit import audit_table

    shown = audit_table(result)[["claimed ε", "ran at ε", "95 % lower bound on ε", "runs per dataset"]]
    shown.index = ["as released", "broken variant"]
    delta = f", δ = {result.delta:g}" if result.delta else ""
    lines = [f"{result.label}: ε claimed per {result.per}{delta}; D has {result.rows:,} rows, D′ one more "
             f"(the planted record); {result.n:,} synthetic rows a run",
             shown.to_string(), "",
             f"broken variant: {result.broken_text}"]
    for name, outcome in (("as released", result.honest), ("broken variant", result.broken)):
        hits = outcome.hits
        lines.append(f"event, {name}: {outcome.event} ({hits[0]:,} of {outcome.held_out:,} held-out runs on D, "
                     f"{hits[1]:,} on D′)")
    lines += ["", result.verdict()]
    return "\n".join(lines)


# -- helpers of the sweep ----------------------------------------------------

class _ProgressBar:
    """``[#####-----]  12/60  method, ε`` on stderr, redrawn in place after each point."""

    WIDTH = 30

    def __enter__(self):
        self.drawn = False
        return self

    def __call__(self, fraction: float, message: str) -> None:
        self.drawn = True
        done = int(round(fraction * self.WIDTH))
        sys.stderr.write(f"\r[{'#' * done}{'-' * (self.WIDTH - done)}] {fraction:4.0%}  {message[:60]:60s}")
        sys.stderr.flush()

    def __exit__(self, *exc):
        if self.drawn:
            sys.stderr.write("\n")
        return False


# -- the parser --------------------------------------------------------------

def _synthesis_arguments(p, *, seed: bool) -> None:
    """The schema, the settings file and one flag per run setting (``--<name>``; ``--param`` for an option)."""
    p.add_argument("--schema", help="declared public schema JSON (without it nothing is DP)")
    p.add_argument("--config", help="settings JSON, as the app's settings download or a previous run writes it; "
                                    "options given here override it")
    for s in SETTINGS:
        if s.name == "seed" and not seed:
            continue
        if s.kind == "params":
            p.add_argument("--param", dest="params", action="append", metavar="NAME=VALUE", help=s.help)
        else:  # text, checked by the settings' declaration: a bad value is the settings file's sentence
            p.add_argument(f"--{s.name}", metavar=s.name.upper(), help=s.help)


def _synthesize_arguments(p) -> None:
    _synthesis_arguments(p, seed=True)
    p.add_argument("-o", "--output", required=True, help="synthetic CSV to write")
    p.add_argument("--ledger", help="ledger JSON to write (default: beside the CSV, .ledger.json)")


def _schema_arguments(p) -> None:
    p.add_argument("-o", "--output", help="schema JSON to write (default: standard output); the notes read off the "
                                          "data go beside it, to <name>.CONFIDENTIAL-notes.json")
    p.add_argument("--estimate-epsilon", type=float, metavar="E",
                   help="estimate every value still read off the data privately at ε = E, and write only public "
                        "values (declared or estimated, with their ε and ledger steps)")
    p.add_argument("--schema", help="a declared schema to start from: its values are kept and cost nothing")


def _sweep_arguments(p) -> None:
    p.add_argument("--schema", help="declared public schema JSON (without it nothing is DP)")
    p.add_argument("--methods", help="comma-separated methods (default: the DP methods the app suggests, as the R-U "
                                     "map starts with, less any that refuse the table)")
    p.add_argument("--epsilons", default=", ".join(f"{e:g}" for e in constraints.RU_EPSILONS),
                   help="comma-separated ε grid (default %(default)s)")
    p.add_argument("--reps", type=int, default=1, help="replicates per point (default 1)")
    p.add_argument("--holdout", type=float, default=0.0, help="share of rows held out (default 0)")
    p.add_argument("--seed", type=int, help="base seed, to repeat a sweep exactly (default: fresh entropy)")
    p.add_argument("--x", default=constraints.RU_DEFAULT_RISK, help="risk measure on the map's x axis (default %(default)s, "
                                                      "as the app's R-U map)")
    p.add_argument("--y", default=constraints.RU_UTILITY_COLUMNS[0], help="utility measure on the y axis (default %(default)s)")
    p.add_argument("--n-jobs", type=int, help="local worker processes (default: every core)")
    p.add_argument("--scheduler", help="address of a Dask scheduler to run the points on (tcp://host:8786)")
    p.add_argument("-o", "--output", required=True, help="R-U table CSV to write")
    p.add_argument("--html", help="map HTML to write (default: beside the CSV, .html)")


def _release_arguments(p) -> None:
    _synthesis_arguments(p, seed=False)
    p.add_argument("-o", "--output", help="zip to write (default: <data>-<method>-eps<ε>-release.zip)")
    p.add_argument("--internal-report", metavar="HTML", help="also write the internal report (utility and risk "
                                                              "against the confidential data; never publish it)")
    p.add_argument("--not-dp", action="store_true",
                   help="publish even a synthesis that is not DP (a method that is not DP, no --schema, values read "
                        "off the data), labelled not DP; without it such a release is refused")


def _ledger_arguments(p) -> None:
    form = p.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="as JSON, for machines")
    form.add_argument("--csv", action="store_true", help="as one CSV: the entries, then a row of totals per dataset")


def _cap_arguments(p) -> None:
    p.add_argument("--epsilon", type=float, help="the cap on ε in all (the ledger's reported total)")
    p.add_argument("--delta", type=float, default=0.0, help="the cap on δ in all (default 0: no (ε, δ) method)")
    p.add_argument("--remove", action="store_true", help="remove the dataset's cap")


def _audit_arguments(p) -> None:
    p.add_argument("--method", required=True, help="a DP method's name, as `dpsynth methods` lists them")
    p.add_argument("--epsilon", type=float, help="the claimed ε to audit, per record (block) for PeGS and PMI "
                                                 "(default: the method's audit design's)")
    p.add_argument("--delta", type=float, help="δ for (ε, δ) methods (default: the design's)")
    p.add_argument("--runs", type=int, help="runs on each of the two tables, for each variant (default: the design's)")
    p.add_argument("--schema", help="build the look-alike from this public schema JSON instead of the design's")
    p.add_argument("--rows", type=int, help="rows of the look-alike table (default: the design's)")
    p.add_argument("--param", action="append", metavar="NAME=VALUE", help="a method option, e.g. bins=10")
    p.add_argument("--design", type=int, default=0,
                   help="which of the method's declared audits (default 0, its main one)")
    p.add_argument("--seed", type=int, help="fixed seed: the same runs again (default: fresh entropy in every run)")
    p.add_argument("--n-jobs", type=int, help="local worker processes (default: every core)")


#: Each command: its help, what runs it, whether it reads a data file, and its own arguments.
COMMANDS = {
    "schema": ("Infer a schema from a CSV, as JSON to edit (the format of data/*.schema.json), or estimate it "
               "privately (--estimate-epsilon): then every value in it is public.", cmd_schema, True,
               _schema_arguments),
    "synthesize": ("Synthesize a CSV: writes the synthetic CSV, its ledger JSON and its settings JSON, the files the "
                   "app's downloads hold.", cmd_synthesize, True, _synthesize_arguments),
    "sweep": ("Risk-utility sweep: the R-U table as CSV and the map as interactive HTML.", cmd_sweep, True,
              _sweep_arguments),
    "release": ("The public release package (zip: synthetic CSV, ledger, report), with a fresh seed; refused when "
                "it would not be DP, unless --not-dp.", cmd_release, True, _release_arguments),
    "ledger": ("Every computation recorded in the ledger store, and the totals per dataset (confidential: keep its "
               "output with the data).", cmd_ledger, False, _ledger_arguments),
    "cap": ("Set the most that DP runs may spend on a dataset in all; a run that would pass it is refused before "
            "the data are read.", cmd_cap, True, _cap_arguments),
    "methods": ("The synthesizers --method takes, in the app's order: name, whether it is DP, what it is.",
                cmd_methods, False, lambda p: None),  # --ledger-db only, like every command (it writes nothing)
    "audit": ("Empirical privacy audit of a DP method: runs it many times on a public look-alike table and its "
              "neighbour with one planted record, and bounds ε from below (docs/audit.md). Reads no data.",
              cmd_audit, False, _audit_arguments),
}


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; only ``command``'s own arguments are declared (they may need the method registry, which
    loads the numerical libraries: the top-level help and the other commands do without)."""
    parser = _Parser(
        prog="dpsynth", description="Differentially private synthetic data from the command line.",
        epilog="Examples:\n  " + "\n  ".join(EXAMPLES.values()), formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (help_text, run, data, arguments) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text, epilog=f"Example:\n  {EXAMPLES[name]}",
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        p.set_defaults(run=run)
        if name != command:
            continue
        if data:
            p.add_argument("data", help="the confidential table (CSV with one header row)")
        p.add_argument("--ledger-db", metavar="PATH",
                       help="the ledger store, shared with the app (default: $DPSYNTH_LEDGER, else "
                            "~/.local/share/dpsynth/ledger.sqlite3 under $XDG_DATA_HOME if set)")
        arguments(p)
    return parser
