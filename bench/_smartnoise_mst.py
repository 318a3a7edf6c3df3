"""Peer for bench_dp_utility.py: smartnoise-synth's MST, run in its own venv.

Usage: ``python _smartnoise_mst.py CODES.csv EPSILON DELTA SEED OUTDIR``. Reads
the bundled table already discretised to integer codes (the same bins as
ours, written by the benchmark), fits smartnoise-synth's MST once, and writes
two samples of as many rows: as shipped (``sample()``, mbi's "round" method)
and i.i.d. from the same fitted model (mbi's ``method="sample"``). Prints one
JSON line with their paths and the seconds of fit + shipped sample. Never
imported by the project: smartnoise-synth is not a dependency.
"""

import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from snsynth import Synthesizer


def main() -> None:
    codes_path, eps, delta, seed, outdir = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), Path(sys.argv[5])
    codes = pd.read_csv(codes_path)
    np.random.seed(seed)  # smartnoise and mbi draw from numpy's global generator
    t = time.perf_counter()
    synth = Synthesizer.create("mst", epsilon=eps, delta=delta)
    synth.fit(codes, categorical_columns=list(codes.columns), preprocessor_eps=0.0)
    shipped = synth.sample(len(codes))
    seconds = time.perf_counter() - t
    model = synth.synthesizer
    iid = model.synthetic_data(rows=len(codes), method="sample")
    rows = [tuple(r[1:]) for r in synth.undo_compress_fn(iid).df.itertuples()]
    iid = synth._transformer.inverse_transform(rows)
    out = {}
    for kind, frame in (("shipped", shipped), ("iid", iid)):
        path = outdir / f"{kind}_{eps:g}_{seed}.csv"
        pd.DataFrame(frame, columns=codes.columns).to_csv(path, index=False)
        out[kind] = str(path)
    print(json.dumps({**out, "seconds": seconds}))


if __name__ == "__main__":
    main()
