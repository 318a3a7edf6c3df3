"""The ``dpsynth`` command line: schema, synthesize, sweep, release and audit without the browser, and the ledger.

Run as ``dpsynth …`` (installed by ``pip install .``) or ``python -m dpsynth_core …``.
Bad input ends with one sentence on stderr and exit code 2, never a traceback.

Every command writes what it computes on the data to the same ledger store as the app
(:mod:`dpsynth_core.privacy.store`; ``--ledger-db PATH`` or ``$DPSYNTH_LEDGER`` chooses the file) before
it writes any output; ``dpsynth ledger`` prints it and ``dpsynth cap`` sets a dataset's budget. ``dpsynth audit``
reads no data (its tables are public look-alikes) and records nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import constraints, plots, release, report
from .cluster import on_scheduler
from .errors import DataError, LedgerError, MethodRefused
from .io import load_csv, to_csv_bytes
from .privacy import Cap, LedgerStore, Use
from .privacy.store import ledger_csv, ledger_json, ledger_view
from .privacy.audit import audit_table, run_audit
from .rumap import RISK_COLUMNS, UTILITY_COLUMNS, ru_map, split_holdout
from .schema import Schema, infer_schema, merge_declared
from .schema_editor import field_value_text
from .schema_estimate import estimate_and_record
from .settings import parse_settings, settings_json
from .synth import SYNTHESIZERS, fingerprint, synthesize
from .synth.options import parse_text

DATA, SCHEMA = "data/penguins.csv", "data/penguins.schema.json"
EXAMPLES = {
    "schema": f"dpsynth schema {DATA} -o penguins.schema.json",
    "synthesize": f"dpsynth synthesize {DATA} --schema {SCHEMA} --method independent --epsilon 1 -o synth.csv",
    "sweep": f"dpsynth sweep {DATA} --schema {SCHEMA} --methods independent,dp_seqreg --epsilons 0.1,1,10 "
             "-o sweep.csv --html sweep.html",
    "release": f"dpsynth release {DATA} --schema {SCHEMA} --method independent --epsilon 1 -o release.zip",
    "ledger": "dpsynth ledger --csv > ledger-CONFIDENTIAL.csv",
    "cap": f"dpsynth cap {DATA} --epsilon 5 --delta 1e-6",
    "audit": "dpsynth audit --method mst --epsilon 1 --runs 2000",
}


class _Usage(ValueError):
    """Bad input the command line itself finds."""


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        args.run(args)
    except (DataError, MethodRefused, ValueError, LedgerError) as err:  # _Usage is a ValueError
        print(f"dpsynth {args.command}: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"dpsynth {args.command}: error: cannot use {err.filename or 'a file'}: "
              f"{err.strerror or err}; check the path.", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"dpsynth {args.command}: cancelled.", file=sys.stderr)
        return 130
    return 0


# -- inputs ------------------------------------------------------------------

def _read_data(path: str):
    with open(path, "rb") as fh:
        return load_csv(fh)


def _read_json(path: str, what: str):
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise _Usage(f"The {what} {path} is not valid JSON (line {err.lineno}); fix it or make a new one.") from None


def _read_schema(path: str | None, df) -> Schema | None:
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


def _settings(args) -> dict:
    """The configuration: the --config file if any, then the options given on the command line."""
    given = _read_json(args.config, "settings file") if args.config else {}
    if not isinstance(given, dict):
        raise _Usage(f"The settings file {args.config} must hold a JSON object.")
    for key in ("method", "epsilon", "delta", "n", "implicates", "holdout"):
        if getattr(args, key, None) is not None:
            given[key] = getattr(args, key)
    if getattr(args, "columns", None) is not None:
        given["columns"] = [c.strip() for c in args.columns.split(",") if c.strip()]
    if hasattr(args, "seed"):
        given["seed"] = args.seed if args.seed is not None else given.get("seed")
    if getattr(args, "param", None):
        given["params"] = {**dict(given.get("params") or {}), **dict(_param(p) for p in args.param)}
    return parse_settings(given)


def _param(text: str) -> tuple[str, object]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise _Usage(f"--param takes name=value (for example bins=10), got {text!r}.")
    return name.strip(), parse_text(value)


def _store(args) -> LedgerStore:
    """The ledger store: ``--ledger-db``, else ``$DPSYNTH_LEDGER``, else the user's data directory."""
    return LedgerStore(args.ledger_db)


def _use(args, df, purpose: str) -> Use:
    """The data file as the ledger knows it: its name, its content, why it is read, by the command line."""
    return Use(Path(args.data).name, fingerprint(df), purpose=purpose, source="cli")


def _recorded(store: LedgerStore, use: Use) -> None:
    """Say on stderr where the command's uses of the data were recorded, and what the dataset's totals are now."""
    lines = store.totals(use.fingerprint, use.dataset).lines()
    print(f"dpsynth: recorded in the ledger {store.path}; on {use.dataset} in all: {lines[0]}; {lines[2]}.",
          file=sys.stderr)


def _split(df, holdout: float):
    """(rows synthesized, rows held out): each record held out by a fresh secret coin, as the app does."""
    return split_holdout(df, holdout)


def _synthesize(df, schema, cfg: dict, *, use: Use, store: LedgerStore):
    """(rows synthesized, rows held out, the synthesis), recorded in ``store`` before it is returned."""
    train, held = _split(df, cfg["holdout"])
    return train, held, synthesize(train, cfg["method"], epsilon=cfg["epsilon"], delta=cfg["delta"], schema=schema,
                                   n=cfg["n"], seed=cfg["seed"], implicates=cfg["implicates"],
                                   columns=list(cfg["columns"]) if cfg["columns"] is not None else None,
                                   holdout_share=cfg["holdout"] or None, use=use, store=store,
                                   **dict(cfg["params"]))


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


def _confidential_notes(schema: Schema) -> dict:
    """What the schema holds that was read off the data: each column's missing count, the reason for its
    kind (which may quote a value) and every value still read off the data."""
    out = {}
    for name, col in schema.columns.items():
        note = {"n_missing": col.n_missing, "reason": col.reason}
        left = {f: field_value_text(col, f) for f in col.relevant_fields if f in col.derived_fields}
        if left:
            note["read_off_the_data"] = left
        out[name] = note
    return out


def cmd_schema(args) -> None:
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
    df = _read_data(args.data)
    schema = _read_schema(args.schema, df)
    cfg = _settings(args)
    use, store = _use(args, df, "exploration"), _store(args)
    _, _, result = _synthesize(df, schema, cfg, use=use, store=store)
    out = Path(args.output)
    if len(result.implicates) == 1:
        _write(out, to_csv_bytes(result.data))
    else:
        for i, frame in enumerate(result.implicates):
            _write(out.with_name(f"{out.stem}-implicate{i + 1}{out.suffix}"), to_csv_bytes(frame))
    _write(Path(args.ledger) if args.ledger else out.with_suffix(".ledger.json"), release.ledger_bytes(result.ledger))
    _write(out.with_suffix(".settings.json"), settings_json(cfg).encode("utf-8"))
    print(result.ledger["statement"], file=sys.stderr)
    _recorded(store, use)


def cmd_sweep(args) -> None:
    df = _read_data(args.data)
    schema = _read_schema(args.schema, df)
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
    if args.seed is None:
        print("dpsynth: note: each point's seed is in the table; pass --seed to repeat this sweep exactly.",
              file=sys.stderr)
    _recorded(store, use)


def cmd_release(args) -> None:
    df = _read_data(args.data)
    schema = _read_schema(args.schema, df)
    cfg = _settings(args)
    if cfg["seed"] is not None:
        print("dpsynth: note: a release always draws a fresh seed; the settings' seed is not used.", file=sys.stderr)
        cfg["seed"] = None
    use, store = _use(args, df, "release"), _store(args)
    train, held, result = _synthesize(df, schema, cfg, use=use, store=store)
    totals = store.totals(use.fingerprint)  # this release included
    stem = release.file_stem(use.dataset, result.ledger) + "-release"
    package = report.release_package(dataset_name=use.dataset, synthesis=result, stem=stem, totals=totals)
    _write(Path(args.output) if args.output else Path(f"{stem}.zip"), package)
    if args.internal_report:
        _write(Path(args.internal_report), report.internal_report(
            dataset_name=use.dataset, fingerprint=use.fingerprint, real=train, synthesis=result, totals=totals,
            holdout=held))
    print(report.release_statement(result.ledger, totals), file=sys.stderr)
    _recorded(store, use)


def cmd_ledger(args) -> None:
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
    df = _read_data(args.data)
    use, store = _use(args, df, "exploration"), _store(args)
    if args.remove:
        store.set_cap(use.fingerprint, use.dataset, None)
    elif args.epsilon is None:
        raise _Usage("Give the cap's --epsilon (and --delta for (ε, δ) methods), or --remove.")
    else:
        store.set_cap(use.fingerprint, use.dataset, Cap(args.epsilon, args.delta))
    print("\n".join(store.totals(use.fingerprint, use.dataset).lines()))


def cmd_audit(args) -> None:
    schema = None
    if args.schema:
        try:
            schema = Schema.from_dict(_read_json(args.schema, "schema"))
        except (TypeError, KeyError, AttributeError) as err:
            raise _Usage(f"The schema {args.schema} is not in dpsynth's format ({err}); start from `dpsynth schema`.") \
                from None
    options = dict(_param(p) for p in args.param or [])
    with _ProgressBar() as bar:
        result = run_audit(args.method, which=args.design, schema=schema, epsilon=args.epsilon, delta=args.delta,
                           runs=args.runs, rows=args.rows, options=options, seed=args.seed, progress=bar,
                           n_jobs=args.n_jobs)
    print(audit_text(result))


def audit_text(result) -> str:
    """The audit as the command prints it: what was run, the table, each variant's event, the verdict."""
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

def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dpsynth", description="Differentially private synthetic data from the command line.",
        epilog="Examples:\n  " + "\n  ".join(EXAMPLES.values()), formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name, help_text, run, *, data=True):
        p = sub.add_parser(name, help=help_text, description=help_text, epilog=f"Example:\n  {EXAMPLES[name]}",
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        if data:
            p.add_argument("data", help="the confidential table (CSV with one header row)")
        p.add_argument("--ledger-db", metavar="PATH",
                       help="the ledger store, shared with the app (default: $DPSYNTH_LEDGER, else "
                            "~/.local/share/dpsynth/ledger.sqlite3 under $XDG_DATA_HOME if set)")
        p.set_defaults(run=run)
        return p

    p = command("schema", "Infer a schema from a CSV, as JSON to edit (the format of data/*.schema.json), or "
                          "estimate it privately (--estimate-epsilon): then every value in it is public.", cmd_schema)
    p.add_argument("-o", "--output", help="schema JSON to write (default: standard output); the notes read off the "
                                          "data go beside it, to <name>.CONFIDENTIAL-notes.json")
    p.add_argument("--estimate-epsilon", type=float, metavar="E",
                   help="estimate every value still read off the data privately at ε = E, and write only public "
                        "values (declared or estimated, with their ε and ledger steps)")
    p.add_argument("--schema", help="a declared schema to start from: its values are kept and cost nothing")

    def synthesis_options(p, *, seed: bool):
        p.add_argument("--schema", help="declared public schema JSON (without it nothing is DP)")
        p.add_argument("--config", help="settings JSON, as the app's settings download or a previous run writes it; "
                                        "options given here override it")
        p.add_argument("--method", help=f"one of {', '.join(SYNTHESIZERS)} (default independent)")
        p.add_argument("--epsilon", type=float, help="total privacy budget ε (default 1)")
        p.add_argument("--delta", type=float, help="δ for (ε, δ) methods (default 0)")
        p.add_argument("--n", type=int, help="synthetic rows, declared public (default: a noisy count)")
        p.add_argument("--implicates", type=int, help="number of synthetic datasets m (default 1)")
        p.add_argument("--holdout", type=float, help="share of rows kept away from the synthesizer (default 0)")
        p.add_argument("--columns", help="synthesize only these columns (comma-separated), keep the others")
        p.add_argument("--param", action="append", metavar="NAME=VALUE", help="a method option, e.g. bins=10")
        if seed:
            p.add_argument("--seed", type=int, help="fixed seed: reproducible exploration, NOT a DP release "
                                                    "(default: fresh entropy)")

    p = command("synthesize", "Synthesize a CSV: writes the synthetic CSV, its ledger JSON and its settings JSON.",
                cmd_synthesize)
    synthesis_options(p, seed=True)
    p.add_argument("-o", "--output", required=True, help="synthetic CSV to write")
    p.add_argument("--ledger", help="ledger JSON to write (default: beside the CSV, .ledger.json)")

    p = command("sweep", "Risk-utility sweep: the R-U table as CSV and the map as interactive HTML.", cmd_sweep)
    p.add_argument("--schema", help="declared public schema JSON (without it nothing is DP)")
    p.add_argument("--methods", default="independent,cart", help="comma-separated methods (default independent,cart)")
    p.add_argument("--epsilons", default=", ".join(f"{e:g}" for e in constraints.RU_EPSILONS),
                   help="comma-separated ε grid (default %(default)s)")
    p.add_argument("--reps", type=int, default=1, help="replicates per point (default 1)")
    p.add_argument("--holdout", type=float, default=0.0, help="share of rows held out (default 0)")
    p.add_argument("--seed", type=int, help="base seed, to repeat a sweep exactly (default: fresh entropy)")
    p.add_argument("--x", default=RISK_COLUMNS[0], help="risk measure on the map's x axis (default %(default)s)")
    p.add_argument("--y", default=UTILITY_COLUMNS[0], help="utility measure on the y axis (default %(default)s)")
    p.add_argument("--n-jobs", type=int, help="local worker processes (default: every core)")
    p.add_argument("--scheduler", help="address of a Dask scheduler to run the points on (tcp://host:8786)")
    p.add_argument("-o", "--output", required=True, help="R-U table CSV to write")
    p.add_argument("--html", help="map HTML to write (default: beside the CSV, .html)")

    p = command("release", "The public release package (zip: synthetic CSV, ledger, report), with a fresh seed.",
                cmd_release)
    synthesis_options(p, seed=False)
    p.add_argument("-o", "--output", help="zip to write (default: <data>-<method>-eps<ε>-release.zip)")
    p.add_argument("--internal-report", metavar="HTML", help="also write the internal report (utility and risk "
                                                              "against the confidential data; never publish it)")

    p = command("ledger", "Every computation recorded in the ledger store, and the totals per dataset "
                          "(confidential: keep its output with the data).", cmd_ledger, data=False)
    form = p.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="as JSON, for machines")
    form.add_argument("--csv", action="store_true", help="as one CSV: the entries, then a row of totals per dataset")

    p = command("cap", "Set the most that DP runs may spend on a dataset in all; a run that would pass it is "
                       "refused before the data are read.", cmd_cap)
    p.add_argument("--epsilon", type=float, help="the cap on ε in all (the ledger's reported total)")
    p.add_argument("--delta", type=float, default=0.0, help="the cap on δ in all (default 0: no (ε, δ) method)")
    p.add_argument("--remove", action="store_true", help="remove the dataset's cap")

    help_text = ("Empirical privacy audit of a DP method: runs it many times on a public look-alike table and its "
                 "neighbour with one planted record, and bounds ε from below (docs/audit.md). Reads no data.")
    p = command("audit", help_text, cmd_audit, data=False)
    p.add_argument("--method", required=True,
                   help=f"a DP method: {', '.join(m for m, s in SYNTHESIZERS.items() if s.is_dp)}")
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
    return parser
