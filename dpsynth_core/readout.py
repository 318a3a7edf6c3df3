"""The headline readout: a few utility and risk figures, fast enough to follow the ε slider.

The Synthesize page shows them beside the controls, so ε can be tuned on one screen. Each figure is
the same measure the Compare, Risk and R-U map pages show: the pMSE ratio is the headline discriminator's on
its sample, as everywhere (:func:`.utility.headline_propensity`); the closest-record distances are measured
for a subsample of the real records; the readout says which samples it used.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .metric_info import METRICS, MetricContext, metrics, sections
from .risk import gower_dcr
from .schema import Schema
from .utility.propensity import headline_propensity, sample_rows
from .utility.marginals import distances_of

#: Real records whose distance to the closest synthetic record is measured (against every synthetic row).
HEADLINE_DCR_ROWS = 1_000


def headline_metrics() -> list:
    """The registered metrics marked ``headline``: utility first, then risk, each by section."""
    return [m for kind in ("utility", "risk") for sec in sections(kind) for m in metrics(kind, sec) if m.headline]


@dataclass(frozen=True)
class Headline:
    """The readout's figures and the samples behind them.

    Attributes
    ----------
    values : dict
        Metric name to value, for every :func:`headline_metrics` metric (pMSE ratio, mean KS and TV,
        exact copies, median DCR today); also readable as attributes (``h.pmse_ratio``).
    columns : pandas.Series
        Per column: its KS (numeric) or TV (categorical) distance, for the readout's bars (:meth:`by_column`).
    n_propensity : int
        Stacked rows the discriminator used (real and synthetic subsamples together).
    n_dcr : int
        Real records whose closest-record distance was measured.
    n_real, n_synth : int
        Rows of each table (the marginals and the copies use all of them).
    """

    values: dict
    columns: pd.Series
    n_propensity: int
    n_dcr: int
    n_real: int
    n_synth: int

    def __getattr__(self, name: str) -> float:
        values = self.__dict__.get("values", {})
        if name in values:
            return values[name]
        raise AttributeError(name)

    def figures(self) -> list[tuple[str, str, float]]:
        """(metric name, label, value) in display order: utility first, then risk."""
        return [(n, METRICS[n].label, float(v)) for n, v in self.values.items()]

    def by_column(self) -> pd.DataFrame:
        """The per-column distances as the readout's bar table shows them: ``column`` and ``distance``, largest
        first; a column with no distance (none applies to it) is left out."""
        d = self.columns.dropna().sort_values(ascending=False, kind="stable")
        return pd.DataFrame({"column": d.index.astype(str), "distance": d.to_numpy(dtype=float)})

    def sample_note(self) -> str:
        """Which rows each figure used, in one sentence."""
        return (f"pMSE ratio (logistic, pairwise interactions) on {self.n_propensity:,} stacked rows "
                f"(subsamples of both tables); median DCR for {self.n_dcr:,} of the {self.n_real:,} real records "
                f"against all {self.n_synth:,} synthetic rows; KS, TV and exact copies on every row.")


def headline(real: pd.DataFrame, synth: pd.DataFrame, schema: Schema, seed: int, *,
             dcr_rows: int = HEADLINE_DCR_ROWS) -> Headline:
    """The readout's figures for one synthesis of ``real`` (the rows the synthesizer saw).

    Parameters
    ----------
    real, synth : DataFrame
        Confidential rows and the synthetic data; the schema's used columns are compared.
    schema : Schema
        Column kinds and public bounds (the distances scale numeric columns by them).
    seed : int
        Draws the subsamples and seeds the discriminator; the same seed gives the same figures, and the same
        pMSE ratio as the Compare page's and the R-U map's for the same synthesis.
    dcr_rows : int
        Real records whose closest-record distance is measured (see :data:`HEADLINE_DCR_ROWS`).
    """
    rng = np.random.default_rng([seed, 1])  # the DCR sample's stream, apart from the discriminator's (seed)
    used = schema.used
    r, s = real[used], synth[used]
    cats = [c for c in used if schema[c].kind == "categorical"]
    rd = sample_rows(r, dcr_rows, rng)
    # The discriminator runs beside the distances: each spends its time in BLAS or compiled loops that
    # release the GIL, so on two idle cores the readout takes the longer of the two, not their sum. Its result
    # is handed to the metrics through the shared context, so each figure is the registered metric's.
    with ThreadPoolExecutor(max_workers=1) as pool:
        fitting = pool.submit(headline_propensity, r, s, seed=seed, categorical=cats)
        ctx = MetricContext(r, s, schema=schema, seed=rng, shared={"dcr": gower_dcr(rd, s, schema=schema)})
        d = distances_of(ctx)
        ctx.shared["propensity"] = prop = fitting.result()
    return Headline(
        values={m.name: m.value(ctx) for m in headline_metrics()},
        columns=d["ks"].fillna(d["tv"]).astype(float),
        n_propensity=int(prop.n_used), n_dcr=len(rd), n_real=len(r), n_synth=len(s),
    )
