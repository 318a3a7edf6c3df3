"""Utility of our marginal-based synthesizers against every public implementation (issue 30).

Ours (this venv): AIM, MST, PrivBayes, independent noisy marginals, at their default options, plus AIM at
10 bins (the peers' grid). Peers, each run by ``bench/_peers.py`` in a venv of its own outside the
repository (never a dependency of the project; ``--peer NAME=PYTHON``): smartnoise-synth's MST and AIM,
dpmm's MST, PrivBayes and AIM, OpenDP's MST and AIM. ``_peers.py`` says how each is called.

Data: every bundled table of ``--datasets`` (diamonds, penguins and randhie, the zero-inflated table), split
once into 80 % training rows and a 20 % holdout by a fixed seed (the tables are public;
``--holdout 0`` gives every method the whole table).
Every method gets the training rows, the total ε, δ = 1e-6 and n = the training rows, declared.
The peers get the training rows as integer codes on the evaluation grid (each column's declared
categories, or 10 equal bins over a numeric column's declared bounds) with the declared size of every
column's domain: none reads a domain off the data or spends ε on preprocessing. Their codes are decoded
as ours are (a numeric value uniformly inside its bin). Every sample is drawn i.i.d. from the fitted model.

Metrics, one code for every method, against the training rows:

* TV1, TV2, TV3: mean total variation over every 1-, 2- and 3-way marginal on the evaluation grid;
* pMSE ratio: the project's headline discriminator (logistic with all pairwise interactions on 1,000 rows
  of each table, ``headline_propensity``), and "pMSE 5k", the same on 5,000 rows of each (the measure of
  issue 18, whose figures issue 30 quotes);
* TV2 holdout: TV2 against the real holdout.

The row "real holdout" scores the holdout itself: the floor a synthesis of this many rows can reach.
Medians over ``--runs`` unseeded runs (``--peer-runs`` for the peers, which take minutes each). Time: fit +
sample, wall clock and CPU seconds (ours: a cold measurement cache; a peer's: what its own script measured
around fit + sample). A peer gets ``--timeout`` seconds (600) of CPU time, a limit the operating system
enforces, so a loaded machine does not cut it short; past it, it is "> 600 s" and not run again at that ε.
Every run is appended to ``--out`` as it ends, and ``--tables-from`` writes the tables of earlier runs (the
peers' runs and ours may be made apart and shown together). ``--markdown FILE`` writes the tables.

Small first: ``--datasets penguins --epsilons 1 --runs 1``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import resource
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from _common import machine  # noqa: E402  (also puts the project on sys.path)

import dpsynth_core as core  # noqa: E402
from dpsynth_core.datasets import BUNDLED  # noqa: E402
from dpsynth_core.privacy.accounting import zcdp_rho  # noqa: E402
from dpsynth_core.synth import base  # noqa: E402
from dpsynth_core.synth.encoding import assemble_frame, decode_column, encode  # noqa: E402
from dpsynth_core.utility.propensity import headline_propensity  # noqa: E402

EVAL_BINS = 10
EPSILONS = (0.3, 1.0, 3.0)
DELTA = 1e-6
HOLDOUT = 0.2
RUNS = 5
TIMEOUT = 600.0
OURS = {"AIM": ("aim", {}), "AIM (10 bins)": ("aim", {"bins": EVAL_BINS}), "MST": ("mst", {}),
        "PrivBayes": ("privbayes", {}), "independent": ("independent", {})}
PEERS = ("smartnoise MST", "smartnoise AIM", "dpmm MST", "dpmm PrivBayes", "dpmm AIM", "OpenDP MST", "OpenDP AIM")
PEER_SCRIPT = Path(__file__).with_name("_peers.py")
METRICS = ["TV1", "TV2", "TV3", "pMSE ratio", "pMSE 5k", "TV2 holdout"]


def split(df: pd.DataFrame, share: float = HOLDOUT) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The fixed split of a public table (seed 0): training rows and a holdout of about ``share``."""
    held = np.random.default_rng(0).random(len(df)) < share
    return df[~held].reset_index(drop=True), df[held].reset_index(drop=True)


def tv_scores(real: pd.DataFrame, synth: pd.DataFrame, schema) -> dict[str, float]:
    """Mean TV over every 1-, 2- and 3-way marginal on the evaluation grid."""
    cols = schema.used
    a, doms = encode(real, schema, cols, EVAL_BINS)
    b, _ = encode(synth, schema, cols, EVAL_BINS)
    sizes = [d.size for d in doms]

    def dist(codes, idx):
        keep = np.all(codes[:, idx] >= 0, axis=1)
        flat = np.ravel_multi_index(tuple(codes[keep][:, idx].T), [sizes[i] for i in idx])
        x = np.bincount(flat, minlength=int(np.prod([sizes[i] for i in idx])))
        return x / max(x.sum(), 1)

    out = {}
    for k in (1, 2, 3):
        sets = list(itertools.combinations(range(len(cols)), k))
        out[f"TV{k}"] = float(np.mean([0.5 * np.abs(dist(a, list(s)) - dist(b, list(s))).sum() for s in sets])) \
            if sets else float("nan")
    return out


def scores(train: pd.DataFrame, holdout: pd.DataFrame, synth: pd.DataFrame, schema) -> dict[str, float]:
    categorical = [c for c in schema.used if schema[c].kind == "categorical"]
    pmse = {f"pMSE {'ratio' if rows == 1000 else '5k'}":
            headline_propensity(train, synth, seed=0, categorical=categorical, rows_each=rows).pmse_ratio
            for rows in (1000, 5000)}
    held = tv_scores(holdout, synth, schema)["TV2"] if len(holdout) else float("nan")
    return {**tv_scores(train, synth, schema), **pmse, "TV2 holdout": held}


def run_ours(method: str, params: dict, train, schema, eps: float) -> tuple[pd.DataFrame, float, float]:
    """One unseeded synthesis at total ε with n declared, timed from a cold measurement cache."""
    base._measure_cache.clear()
    t, c = time.perf_counter(), time.process_time()
    s = core.synthesize(train, method, epsilon=eps, delta=DELTA, schema=schema, n=len(train), **params)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    assert s.ledger["is_dp"] and abs(s.ledger["epsilon_total"] - eps) < 1e-6 * eps, s.ledger["dp_label"]
    return s.data, wall, cpu


#: Wall-clock limit of a peer's run, as a multiple of its CPU limit: a safety net for a peer that waits
#: rather than computes (the CPU limit is the one that applies).
WALL_FACTOR = 6


def run_peer(peer: str, python: str, codes_path: Path, domain_path: Path, eps: float, n: int, workdir: Path,
             timeout: float) -> tuple[pd.DataFrame | None, dict]:
    """One fit + i.i.d. sample by a peer in its venv: its codes and what its script reported (None past the
    time limit: ``timeout`` seconds of CPU time, enforced by the operating system, so that the load of a
    shared machine does not count against the peer)."""
    out_path = workdir / "peer_out.csv"

    def cpu_limit():
        limit = int(timeout) + 1
        resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 5))  # SIGXCPU, then SIGKILL

    try:
        done = subprocess.run([python, str(PEER_SCRIPT), peer, str(codes_path), str(domain_path), repr(eps),
                               repr(DELTA), repr(zcdp_rho(eps, DELTA)), str(n), str(out_path)], capture_output=True,
                              text=True, timeout=WALL_FACTOR * timeout, preexec_fn=cpu_limit)
    except subprocess.TimeoutExpired:
        return None, {"seconds": float("inf"), "cpu": float("inf")}
    if done.returncode in (-signal.SIGXCPU, -signal.SIGKILL):  # past the CPU limit (soft, then hard)
        return None, {"seconds": float("inf"), "cpu": float("inf")}
    if done.returncode:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed")
    return pd.read_csv(out_path), json.loads(done.stdout.strip().splitlines()[-1])


def decoded(codes: pd.DataFrame, schema, columns, domains, n: int) -> pd.DataFrame:
    """A peer's codes as values, decoded as ours are; a code −1 (outside the declared domain) is missing."""
    rng = np.random.default_rng()
    values = {}
    for c, d in zip(schema.used, domains):
        got = codes[c].to_numpy(dtype=np.int64)
        v = decode_column(np.maximum(got, 0), d, rng)
        v[got < 0] = np.nan
        values[c] = v
    return assemble_frame(values, schema, columns, n)


class Records(list):
    """Every run's row, each also appended to ``path`` (a CSV) as it ends, so a long run keeps what it did."""

    def __init__(self, path: str | None):
        super().__init__()
        self.path = Path(path) if path else None

    def add(self, row: dict) -> None:
        self.append(row)
        if self.path is not None:
            pd.DataFrame([row], columns=COLUMNS).to_csv(self.path, mode="a", index=False,
                                                        header=not self.path.exists())


COLUMNS = ["data", "ε", "method", "run", *METRICS, "wall s", "CPU s", "note"]


def bench_dataset(name: str, args, peers: dict[str, str], records: Records) -> None:
    df, schema = core.load_bundled(name)
    train, holdout = split(df, args.holdout)
    if len(holdout) and args.ours:
        records.add({"data": name, "ε": float("nan"), "method": "real holdout", "run": 0,
                     **scores(train, holdout, holdout, schema), "wall s": float("nan"), "CPU s": float("nan")})
    tmp = tempfile.TemporaryDirectory(prefix="dp_utility_")  # public data only, removed at the end
    workdir = Path(tmp.name)
    codes, domains = encode(train, schema, schema.used, EVAL_BINS)
    codes_path, domain_path = workdir / "codes.csv", workdir / "domain.json"
    pd.DataFrame(codes, columns=schema.used).to_csv(codes_path, index=False)
    domain_path.write_text(json.dumps({c: d.size for c, d in zip(schema.used, domains)}))
    for eps in args.epsilons:
        for label in args.ours:
            method, params = OURS[label]
            for run in range(args.runs):
                synth, wall, cpu = run_ours(method, params, train, schema, eps)
                records.add({"data": name, "ε": eps, "method": label, "run": run,
                             **scores(train, holdout, synth, schema), "wall s": wall, "CPU s": cpu})
        for peer, python in peers.items():
            for run in range(args.peer_runs):
                row = {"data": name, "ε": eps, "method": peer, "run": run}
                try:
                    got, info = run_peer(peer, python, codes_path, domain_path, eps, len(train), workdir, args.timeout)
                except Exception as exc:  # a peer failing is a result to report, not a crash of the bench
                    records.add({**row, "note": f"failed: {type(exc).__name__}: {exc}"})
                    break
                row.update({"wall s": info["seconds"], "CPU s": info["cpu"]})
                if got is None:
                    records.add({**row, "note": f"past {args.timeout:g} s of CPU time"})
                    break  # past the limit once: the other runs would be too
                records.add({**row, **scores(train, holdout, decoded(got, schema, df.columns, domains, len(train)),
                                             schema), "note": info["call"]})
    tmp.cleanup()


def table(records: list) -> str:
    """Markdown tables of the medians, one per data set and ε; then how each peer was called, and what failed."""
    runs = pd.DataFrame(records).reindex(columns=COLUMNS)
    lines = []
    for (name, eps), group in runs.groupby(["data", "ε"], sort=False, dropna=False):
        med = group.groupby("method", sort=False)[METRICS + ["wall s", "CPU s"]].median()
        count = group.groupby("method", sort=False)["run"].count()
        lines += [f"### {name}, " + ("reference" if np.isnan(eps) else f"ε = {eps:g}"), "",
                  "| method | runs | " + " | ".join(METRICS) + " | fit + sample s | CPU s |",
                  "| --- " * (len(METRICS) + 4) + "|"]
        for method, row in med.iterrows():
            late = np.isinf(row["wall s"])
            failed = group[group["method"] == method]["note"].astype(str).str.startswith("failed").all()
            cells = ["—" if late or np.isnan(row[m]) else f"{row[m]:.4g}" for m in METRICS]
            time_cells = [f"> {TIMEOUT:g} s", "—"] if late else ["failed", "—"] if failed else \
                ["—" if np.isnan(row[t]) else f"{row[t]:.3g}" for t in ("wall s", "CPU s")]
            lines.append(f"| {method} | {count[method]} | " + " | ".join(cells + time_cells) + " |")
        lines.append("")
    notes = runs.dropna(subset=["note"]).astype({"note": str})  # (a column of no notes reads back as float)
    calls = notes[~notes["note"].str.startswith(("failed", "past"))].drop_duplicates("method")
    lines += ["How each peer was called:", ""] + [f"* {m}: {c}" for m, c in zip(calls["method"], calls["note"])]
    failures = notes[notes["note"].str.startswith("failed")]
    if len(failures):
        lines += ["", "Failed runs:", ""] + [f"* {r['method']} on {r['data']} at ε = {r['ε']:g}: {r['note']}"
                                             for _, r in failures.iterrows()]
    return "\n".join(lines)


def grid(records: list, metric: str) -> str:
    """One markdown table of ``metric``: a row per method, a column per data set and ε, each cell the median
    of that method's runs there ("> 600 s" past the time limit, "(k of n; 1 > 600 s)" when a run went past it
    after k finished; "(k)" when it has fewer runs than the row's most, in the second column). The row
    "real holdout" (the floor, TV metrics only) is the holdout scored against the training rows, at every ε."""
    runs = pd.DataFrame(records).reindex(columns=COLUMNS)
    cells = runs.dropna(subset=["ε"])[["data", "ε"]].drop_duplicates().sort_values(["data", "ε"], kind="stable")
    cells = [tuple(c) for c in cells.itertuples(index=False)]
    lines = ["| method | runs | " + " | ".join(f"{d} {e:g}" for d, e in cells) + " |",
             "| --- " * (len(cells) + 2) + "|"]
    real = runs[runs["method"] == "real holdout"]
    if len(real) and metric.startswith("TV"):
        floor = real.groupby("data")["TV2" if metric == "TV2 holdout" else metric].median()
        lines.append("| real holdout (the floor) | 1 | " + " | ".join(
            f"{floor[d]:.3g}" if d in floor else "" for d, _ in cells) + " |")
    for method, group in runs[runs["method"] != "real holdout"].groupby("method", sort=False):
        here = [group[(group["data"] == d) & (group["ε"] == e)] for d, e in cells]
        most = max(len(h) for h in here)
        row = []
        for h in here:
            past = h["note"].astype(str).str.startswith("past")
            done = h[metric].notna() & ~past
            fewer, value = f" ({len(h)})" if len(h) < most else "", f"{h.loc[done, metric].median():.3g}"
            if past.any() and done.any():  # runs finished, then one did not (the peer is not run again there)
                row.append(f"{value} ({done.sum()} of {len(h)}; {past.sum()} > {TIMEOUT:g} s)")
            elif past.any():
                row.append(f"> {TIMEOUT:g} s{fewer}")
            else:
                row.append(f"{value}{fewer}" if done.any() else "")
        lines.append(f"| {method} | {most} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def main() -> None:
    global TIMEOUT
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", nargs="*", default=[d for d in ("diamonds", "penguins", "randhie") if d in BUNDLED])
    ap.add_argument("--epsilons", nargs="*", type=float, default=list(EPSILONS))
    ap.add_argument("--runs", type=int, default=RUNS)
    ap.add_argument("--peer-runs", type=int, default=None, help="runs of each peer (default: --runs)")
    ap.add_argument("--ours", nargs="*", default=list(OURS), choices=list(OURS))
    ap.add_argument("--peer", action="append", default=[], metavar="NAME=PYTHON",
                    help=f"a peer and the python of its venv, e.g. 'dpmm AIM=/work/venvs/peers/bin/python'; "
                         f"peers: {', '.join(PEERS)}")
    ap.add_argument("--holdout", type=float, default=HOLDOUT,
                    help="share of rows held out (0: every method gets the whole table, as issue 30's 'Done when')")
    ap.add_argument("--timeout", type=float, default=TIMEOUT, help="CPU seconds before a peer is '> timeout'")
    ap.add_argument("--out", default=None, help="append every run to this CSV as it ends")
    ap.add_argument("--tables-from", nargs="*", default=None, metavar="CSV",
                    help="run nothing: write the tables of the runs in these CSVs (written by --out)")
    ap.add_argument("--markdown", default=None, help="write the tables to this file")
    ap.add_argument("--grid", nargs="*", default=None, metavar="METRIC", choices=METRICS + ["CPU s"],
                    help="one table per metric, a column per data set and ε, instead of a table per cell")
    args = ap.parse_args()
    TIMEOUT = args.timeout
    args.peer_runs = args.runs if args.peer_runs is None else args.peer_runs
    peers = dict(p.split("=", 1) for p in args.peer)
    unknown = sorted(set(peers) - set(PEERS))
    if unknown:
        raise SystemExit(f"unknown peer(s) {unknown}; peers: {', '.join(PEERS)}")
    if args.tables_from is not None:
        records = pd.concat([pd.read_csv(f) for f in args.tables_from]).to_dict("records")
        head = "Runs read from " + ", ".join(Path(f).name for f in args.tables_from) + "."
    else:
        records = Records(args.out)
        for name in args.datasets:
            bench_dataset(name, args, peers, records)
        head = machine()
    held = "" if args.tables_from is not None else f"holdout share {args.holdout:g}; "  # (not in the CSV)
    text = "\n".join([head, "", f"Medians of unseeded runs; δ = {DELTA:g}; {held}"
                      f"TV on {EVAL_BINS} bins per numeric column.", "",
                      table(records) if args.grid is None
                      else "\n\n".join(f"{m}:\n\n{grid(records, m)}" for m in args.grid)])
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
