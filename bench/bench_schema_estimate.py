"""Utility of MST with privately estimated domains against hand-declared ones (issue 27).

At a total ε of 1 (the schema's private estimate included: it takes ``--share`` of the total, MST
the rest), on diamonds, penguins and the zero-inflated randhie table, with the row count declared
public (n = the data's rows, as in bench_dp_utility.py). For each dataset and share, medians of
``--runs`` unseeded runs (fresh entropy for the estimate and the synthesis) of:

* TV2: mean total variation over all 2-way marginals, on one discretisation for every run, two ways:
  ``TV2 deciles`` cuts each numeric column at the real data's deciles (ties merged), a cut neither
  schema's bins are built on; ``TV2 declared`` is bench_dp_utility's (EVAL_BINS bins over the
  hand-declared bounds, its special values as cells of their own), on which the hand-declared runs
  have an edge: MST's 20 bins over the same bounds nest exactly inside the evaluation's 10, so no
  synthetic value drawn inside a bin crosses an evaluation edge, while any other bounds' bins do;
  ``TV2 declared 7|13`` is the same over 7 and over 13 bins (their mean), which nothing nests in;
  a control row, the hand-declared schema with its numeric bounds widened by 1 % of their span on each side
  (the same information, bins that no longer nest), shows how much of ``TV2 declared`` is that nesting;
* the ratio of each TV2 to the hand-declared runs' median (the target: at most 1.15);
* on randhie, the largest gap over the declared special values between a special value's share in
  MST's output and in the data (the target: at most 0.02);
* how many runs left a field read off the data (the estimate could not place it at that ε: the run
  is then not DP) and the estimate's CPU seconds.

Three starting points for the estimate: ``none`` (nothing declared: every field, kinds included, is
estimated); ``kinds`` (the steward declares which columns are numbers and which are categories, and
which numbers are whole, as the hand-declared schema has them; lists, bounds, the other flags and
special values are estimated); ``steward`` (as ``kinds``, and the steward also gives each
categorical column's list, the hand-declared one, each numeric column a coarse range, from 0 (or
minus the same) to the power of ten above its hand-declared bounds, and its hand-declared special
values as candidates; the estimate keeps the listed categories and special values with a clear
noisy count, and finds the bounds inside the range, or uses the range when the data are too few).

Run: ``.venv/bin/python bench/bench_schema_estimate.py`` (about 10 minutes of CPU).
"""

from __future__ import annotations

import argparse
import itertools
import math
import statistics
import time

import numpy as np
import pandas as pd

from _common import machine  # noqa: E402  (also puts the project on sys.path)
import bench_dp_utility  # noqa: E402
from bench_dp_utility import EVAL_BINS, tv_scores  # noqa: E402

import dpsynth_core as core  # noqa: E402
from dpsynth_core.schema import Schema, infer_schema  # noqa: E402
from dpsynth_core.schema_estimate import estimate_schema  # noqa: E402

DATASETS = ("diamonds", "penguins", "randhie")
EPSILON = 1.0
WIDEN = 0.01  # the control row's widening of the hand-declared bounds, a share of their span on each side


def kinds_declared(df: pd.DataFrame, declared: Schema) -> Schema:
    """The inferred schema with each column's kind (and a numeric column's whole-number flag) declared as the
    hand-declared schema has it, and nothing else: bounds and lists are the data's, still read off it."""
    inferred = infer_schema(df)
    cols = {}
    for name, col in inferred.columns.items():
        kind = declared[name].kind
        if kind == col.kind:
            col = col.replace(integer=declared[name].integer) if kind == "numeric" else col
            cols[name] = col.replace(derived_fields=col.derived_fields - {"kind", "integer"})
            continue
        values = df[name].dropna()
        if kind == "numeric":
            x = values.to_numpy(dtype=float)
            new = col.replace(kind="numeric", categories=None, bounds=(float(x.min()), float(x.max())),
                              integer=declared[name].integer)
        else:
            new = col.replace(kind="categorical", categories=tuple(sorted(values.unique().tolist())), bounds=None,
                              specials=())
        cols[name] = new.replace(derived_fields=new.relevant_fields - {"kind", "integer"})
    return Schema(cols, declared.keys, declared.sensitive)


def steward_gives(declared: Schema) -> dict:
    """What the ``steward`` start gives the estimate: each categorical column's declared list and each
    numeric column's coarse range (0, or minus the same, to the power of ten above its declared bounds)."""
    ranges, candidates, specials = {}, {}, {}
    for name in declared.used:
        col = declared[name]
        if col.kind == "categorical":
            candidates[name] = list(col.categories)
        else:
            top = 10.0 ** math.ceil(math.log10(max(abs(b) for b in col.bounds) or 1.0))
            ranges[name] = (0.0 if col.bounds[0] >= 0 else -top, top)
            specials[name] = list(col.specials)
    return {"ranges": ranges, "candidates": candidates, "specials": specials}


def widened(declared: Schema, share: float = WIDEN) -> Schema:
    """The control: the hand-declared schema with each numeric column's bounds moved out by ``share`` of
    their span on each side. It holds the same information, but MST's bins no longer nest in the
    evaluation's bins over the hand-declared bounds."""
    cols = {}
    for name, col in declared.columns.items():
        if col.kind == "numeric" and col.bounds is not None:
            lo, hi = col.bounds
            col = col.replace(bounds=(lo - share * (hi - lo), hi + share * (hi - lo)))
        cols[name] = col
    return Schema(cols, declared.keys, declared.sensitive)


def decile_codes(real: pd.DataFrame, frames: list[pd.DataFrame], declared: Schema) -> list[np.ndarray]:
    """Each frame's columns as codes: a numeric column cut at the real data's deciles (ties merged), a
    categorical one by its value; a missing value is a code of its own."""
    out = [np.empty((len(f), len(declared.used)), dtype=np.int64) for f in frames]
    for j, c in enumerate(declared.used):
        if declared[c].kind == "numeric":
            cuts = np.unique(np.nanquantile(real[c].to_numpy(dtype=float), np.arange(1, 10) / 10))
            for f, codes in zip(frames, out):
                x = pd.to_numeric(f[c], errors="coerce").to_numpy(dtype=float)
                codes[:, j] = np.where(np.isnan(x), len(cuts) + 1, np.searchsorted(cuts, x, side="right"))
        else:
            levels = {v: k for k, v in enumerate(pd.unique(pd.concat([f[c] for f in frames]).dropna()))}
            for f, codes in zip(frames, out):
                codes[:, j] = f[c].map(levels).fillna(len(levels)).to_numpy(dtype=np.int64)
    return out


def tv2_deciles(real: pd.DataFrame, synth: pd.DataFrame, declared: Schema) -> float:
    a, b = decile_codes(real, [real, synth], declared)
    tv = []
    for i, j in itertools.combinations(range(a.shape[1]), 2):
        size = max(a[:, i].max(), b[:, i].max()) + 1, max(a[:, j].max(), b[:, j].max()) + 1
        p, q = (np.bincount(np.ravel_multi_index((x[:, i], x[:, j]), size), minlength=size[0] * size[1]) / len(x)
                for x in (a, b))
        tv.append(0.5 * np.abs(p - q).sum())
    return float(np.mean(tv))


def tv2_declared_bins(real: pd.DataFrame, synth: pd.DataFrame, declared: Schema, bins: int) -> float:
    """bench_dp_utility's TV2 over ``bins`` bins per numeric column instead of its EVAL_BINS."""
    saved, bench_dp_utility.EVAL_BINS = bench_dp_utility.EVAL_BINS, bins
    try:
        return tv_scores(real, synth, declared)["TV2"]
    finally:
        bench_dp_utility.EVAL_BINS = saved


def special_gap(real: pd.DataFrame, synth: pd.DataFrame, declared: Schema) -> float:
    """The largest |share in the synthesis − share in the data| over the declared special values."""
    gaps = [abs((synth[c].astype(float) == v).mean() - (real[c].astype(float) == v).mean())
            for c in declared.used for v in declared[c].specials]
    return max(gaps) if gaps else float("nan")


def run(df, declared, schema) -> tuple[float, ...]:
    """(TV2 deciles, TV2 declared, TV2 declared 7|13, special gap) of one unseeded MST run; NaNs if the run
    is refused (no column left to synthesize)."""
    try:
        out = core.synthesize(df, "mst", epsilon=EPSILON, schema=schema, n=len(df)).data
    except (core.DataError, core.MethodRefused):
        return math.nan, math.nan, math.nan, math.nan
    odd = (tv2_declared_bins(df, out, declared, 7) + tv2_declared_bins(df, out, declared, 13)) / 2
    return tv2_deciles(df, out, declared), tv_scores(df, out, declared)["TV2"], odd, special_gap(df, out, declared)


def medians(results: list[tuple]) -> list[float]:
    return [statistics.median(r[k] for r in results) for k in range(len(results[0]))]


def row(data: str, start: str, share: float, med: list[float], hand: list[float], not_dp: int = 0,
        cpu: float = 0.0) -> dict:
    """One line of the table: a schema's medians (:func:`run`'s order) and each TV2's ratio to the
    hand-declared schema's."""
    return {"data": data, "start": start, "share": share, "TV2 deciles": med[0], "ratio": med[0] / hand[0],
            "TV2 declared": med[1], "ratio declared": med[1] / hand[1], "TV2 declared 7|13": med[2],
            "ratio 7|13": med[2] / hand[2], "special gap": med[3], "runs not DP": not_dp, "estimate CPU s": cpu}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--datasets", nargs="*", default=list(DATASETS))
    ap.add_argument("--shares", nargs="*", type=float, default=[0.1, 0.2])
    ap.add_argument("--starts", nargs="*", default=["none", "kinds", "steward"])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    rows = []
    cpu0 = time.process_time()
    for name in args.datasets:
        df, declared = core.load_bundled(name)
        hand = medians([run(df, declared, declared) for _ in range(args.runs)])
        rows.append(row(name, "hand-declared", 0.0, hand, hand))
        control = medians([run(df, declared, widened(declared)) for _ in range(args.runs)])
        rows.append(row(name, f"hand-declared, widened {WIDEN:.0%}", 0.0, control, hand))
        starts = {"none": (infer_schema(df), {}), "kinds": (kinds_declared(df, declared), {}),
                  "steward": (kinds_declared(df, declared), steward_gives(declared))}
        for start in args.starts:
            for share in args.shares:
                results, not_dp, cpu = [], 0, []
                for _ in range(args.runs):
                    c = time.process_time()
                    base, given = starts[start]
                    est = estimate_schema(df, share * EPSILON, base=base, **given)
                    cpu.append(time.process_time() - c)
                    not_dp += bool(est.schema.undeclared_columns)
                    results.append(run(df, declared, est.schema))
                rows.append(row(name, start, share, medians(results), hand, not_dp, statistics.median(cpu)))
    table = pd.DataFrame(rows)
    print(machine())
    print(f"MST at total ε = {EPSILON:g}, n declared; medians of {args.runs} unseeded runs; TV2 on {EVAL_BINS} bins "
          "per numeric column over the hand-declared bounds; special gap: the largest |share(synthetic) − "
          "share(real)| over the hand-declared special values (randhie); this process's CPU "
          f"{time.process_time() - cpu0:.0f} s")
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.round(4).to_string(index=False))


if __name__ == "__main__":
    main()
