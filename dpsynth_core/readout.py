"""The headline readout: a few utility and risk figures, fast enough to follow the ε slider.

The Synthesize page shows them beside the controls, so ε can be tuned on one screen. Each figure is
the same measure the Compare, Risk and R-U map pages show, computed on a subsample where the full table
would be too slow (the discriminator and the distances), and the readout says which sample it used.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .metric_info import METRICS, MetricContext, metrics, sections
from .risk import gower_dcr
from .schema import Schema
from .utility import propensity_metrics
from .utility.marginals import distances_of

#: Rows of each table the discriminator sees (stacked: twice this). pMSE ratio grows with the sample, so
#: the readout's figure is comparable between ε values of one table, not with the R-U map's 10,000 rows.
HEADLINE_PROPENSITY_ROWS = 1_000
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


def _sample(df: pd.DataFrame, k: int, rng: np.random.Generator) -> pd.DataFrame:
    if len(df) <= k:
        return df
    return df.iloc[np.sort(rng.choice(len(df), size=k, replace=False))]


def headline(real: pd.DataFrame, synth: pd.DataFrame, schema: Schema, seed: int | np.random.Generator, *,
             propensity_rows: int = HEADLINE_PROPENSITY_ROWS, dcr_rows: int = HEADLINE_DCR_ROWS) -> Headline:
    """The readout's figures for one synthesis of ``real`` (the rows the synthesizer saw).

    Parameters
    ----------
    real, synth : DataFrame
        Confidential rows and the synthetic data; the schema's used columns are compared.
    schema : Schema
        Column kinds and public bounds (the distances scale numeric columns by them).
    seed : int or Generator
        Draws the subsamples and seeds the discriminator; the same seed gives the same figures.
    propensity_rows, dcr_rows : int
        Subsample sizes (see :data:`HEADLINE_PROPENSITY_ROWS`, :data:`HEADLINE_DCR_ROWS`).
    """
    rng = np.random.default_rng(seed)
    used = schema.used
    r, s = real[used], synth[used]
    cats = [c for c in used if schema[c].kind == "categorical"]
    # The subsamples are drawn here and handed to the metrics through the shared context, so each figure is
    # the registered metric's, on the readout's sample.
    rs, ss = _sample(r, propensity_rows, rng), _sample(s, propensity_rows, rng)
    rd = _sample(r, dcr_rows, rng)
    prop_seed = int(rng.integers(2**63 - 1))
    # The discriminator runs beside the distances: each spends its time in BLAS or compiled loops that
    # release the GIL, so on two idle cores the readout takes the longer of the two, not their sum.
    with ThreadPoolExecutor(max_workers=1) as pool:
        fitting = pool.submit(propensity_metrics, rs, ss, interactions=True, seed=prop_seed, categorical=cats,
                              max_rows=len(rs) + len(ss))
        ctx = MetricContext(r, s, schema=schema, seed=rng, shared={"dcr": gower_dcr(rd, s, schema=schema)})
        d = distances_of(ctx)
        ctx.shared["propensity"] = prop = fitting.result()
    return Headline(
        values={m.name: m.value(ctx) for m in headline_metrics()},
        columns=d["ks"].fillna(d["tv"]).astype(float),
        n_propensity=int(prop.n_used), n_dcr=len(rd), n_real=len(r), n_synth=len(s),
    )
