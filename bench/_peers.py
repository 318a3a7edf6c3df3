"""Peers for bench_dp_utility.py, each run in a venv of its own (never imported by the project).

Usage: ``python _peers.py PEER CODES.csv DOMAIN.json EPSILON DELTA RHO N OUT.csv``. CODES.csv holds the
training rows as integer codes (every column categorical on the benchmark's grid) and DOMAIN.json the
declared number of values of each column; RHO is ρ of (ε, δ) (for a peer released in zCDP). The peer
fits once at (ε, δ) with that domain declared (no
preprocessing ε, nothing read off the data), draws N records i.i.d. from its fitted model, writes their
codes to OUT.csv (−1 for a value outside the declared domain: OpenDP adds a null key to every column) and
prints one JSON line: the wall and CPU seconds of fit + sample and how it was called.

Where a peer's default sampler rounds counts (mbi's ``synthetic_data(method="round")``, which ties the
columns drawn from one parent), the same fitted model is sampled with ``method="sample"`` instead.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

import pandas as pd


def dpmm(algorithm: str, codes: pd.DataFrame, domain: dict, eps: float, delta: float, rho: float, n: int):
    """dpmm 0.1.9: its pipeline with processing disabled (no binning, no preprocessing ε) and the domain
    declared; its model sampled i.i.d. as its ``generate`` would, but with mbi's ``method="sample"``."""
    from dpmm.pipelines import AIMPipeline, MSTPipeline, PrivBayesPipeline

    pipeline = {"MST": MSTPipeline, "AIM": AIMPipeline, "PrivBayes": PrivBayesPipeline}[algorithm]
    pipe = pipeline(epsilon=eps, delta=delta, disable_processing=True, n_jobs=1)
    pipe.fit(codes, domain=domain)
    mechanism = pipe.gen.generator
    synth = mechanism.model.synthetic_data(rows=n, method="sample")
    if mechanism.compress:
        synth = mechanism.compressor.reverse(synth)
    call = (f"dpmm {algorithm}Pipeline(epsilon, delta, disable_processing=True, n_jobs=1).fit(codes, "
            "domain={column: size}); defaults otherwise (compression on); sampled by the fitted mbi model's "
            "synthetic_data(method='sample')")
    return synth.df[codes.columns], call


def smartnoise(algorithm: str, codes: pd.DataFrame, domain: dict, eps: float, delta: float, rho: float, n: int):
    """smartnoise-synth 1.0.8: MST or AIM on the codes, its transformer fitted beforehand on the declared
    values alone (so no value is read off the data and no preprocessor ε is spent); the fitted mbi model
    sampled with ``method="sample"``, then decoded as its own ``sample`` does."""
    from snsynth import Synthesizer
    from snsynth.transform import LabelTransformer, TableTransformer

    transformer = TableTransformer([LabelTransformer(nullable=False) for _ in codes.columns])
    transformer.fit(_all_values(domain, codes.columns))  # public: one row per declared value, no record
    synth = Synthesizer.create(algorithm.lower(), epsilon=eps, delta=delta)
    synth.fit(codes, transformer=transformer, preprocessor_eps=0.0)
    data = synth.synthesizer.synthetic_data(rows=n, method="sample")
    if algorithm == "MST":
        data = synth.undo_compress_fn(data)
    ordered = data.df[[f"col{i}" for i in range(len(codes.columns))]]
    out = pd.DataFrame(transformer.inverse_transform([tuple(r[1:]) for r in ordered.itertuples()]),
                       columns=codes.columns)
    call = (f"snsynth Synthesizer.create('{algorithm.lower()}', epsilon, delta).fit(codes, transformer=a "
            "TableTransformer of LabelTransformer(nullable=False) fitted on the declared values, "
            "preprocessor_eps=0); defaults otherwise; sampled by the fitted mbi model's "
            "synthetic_data(method='sample')")
    return out, call


def _all_values(domain: dict, columns) -> pd.DataFrame:
    """One row per value of the widest domain, each column cycling through its own declared values."""
    widest = max(domain[c] for c in columns)
    return pd.DataFrame({c: np.arange(widest) % domain[c] for c in columns})


def opendp(algorithm: str, codes, domain: dict, eps: float, delta: float, rho: float, n: int):
    """OpenDP 0.16: a contingency table released by its MST or AIM algorithm with every column's keys
    declared. Declared keys make the release ρ-zCDP with no δ of its own, so it gets the ρ that the other
    methods convert (ε, δ) to (Canonne–Kamath–Steinke); records drawn with ``synthesize(method="sample")``."""
    import opendp.prelude as dp
    import polars as pl

    dp.enable_features("contrib")
    keys = {c: list(range(domain[c])) for c in codes.columns}

    def release(budget: float):
        context = dp.Context.compositor(data=pl.LazyFrame(codes), privacy_unit=dp.unit_of(contributions=1),
                                        privacy_loss=dp.loss_of(rho=budget), split_evenly_over=1)
        algo = {"MST": dp.mbi.MST, "AIM": dp.mbi.AIM}[algorithm]()
        return context.query().contingency_table(keys=keys, algorithm=algo).release()

    # Its own split of ρ can overshoot ρ by a rounding error ("insufficient budget"), for about half the
    # values of ρ: then ρ·(1 − j·1e-12) for j = 1 … 8, the first that its arithmetic accepts.
    retried = ""
    for j in range(9):
        budget = rho * (1 - j * 1e-12)
        try:
            table = release(budget)
            break
        except dp.OpenDPException as exc:
            if "insufficient budget" not in str(exc) or j == 8:
                raise
            retried = f" (at ρ its split of ρ overshot by a rounding error: run at ρ·(1 − {j + 1}e-12))"
    out = table.synthesize(rows=n, method="sample").to_pandas()[list(codes.columns)]
    call = (f"opendp Context.compositor(privacy_unit=unit_of(contributions=1), privacy_loss=loss_of(rho=ρ)) "
            f".query().contingency_table(keys=every declared value, algorithm=dp.mbi.{algorithm}()).release()"
            ".synthesize(rows=n, method='sample'); ρ from (ε, δ) by Canonne–Kamath–Steinke; the null key it adds "
            "to every column is released as a missing value" + retried)
    return out, call


PEERS = {"smartnoise MST": (smartnoise, "MST"), "smartnoise AIM": (smartnoise, "AIM"),
         "dpmm MST": (dpmm, "MST"), "dpmm PrivBayes": (dpmm, "PrivBayes"), "dpmm AIM": (dpmm, "AIM"),
         "OpenDP MST": (opendp, "MST"), "OpenDP AIM": (opendp, "AIM")}


def main() -> None:
    peer, codes_path, domain_path, eps, delta, rho, n, out_path = sys.argv[1:9]
    run, algorithm = PEERS[peer]
    if run is opendp:
        import polars as pl
        codes = pl.read_csv(codes_path)
    else:
        codes = pd.read_csv(codes_path)
    domain = json.loads(open(domain_path, encoding="utf-8").read())
    t, c = time.perf_counter(), time.process_time()
    out, call = run(algorithm, codes, domain, float(eps), float(delta), float(rho), int(n))
    seconds, cpu = time.perf_counter() - t, time.process_time() - c
    out.fillna(-1).astype(np.int64).to_csv(out_path, index=False)  # -1: a value outside the declared domain
    print(json.dumps({"seconds": seconds, "cpu": cpu, "call": call}))


if __name__ == "__main__":
    main()
