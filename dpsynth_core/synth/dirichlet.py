"""Perturbed Dirichlet–multinomial posterior on the full contingency table.

Machanavajjhala et al. (2008), Abowd & Vilhuber (2008), Charest (2011).
Cells are the cross-product of the columns' public domains (numeric columns
binned over their declared bounds, see :mod:`.encoding`); X counts the
records in each of the p cells. Each generation draws

    π̃ ~ Dirichlet(α + X),   X̃ ~ Multinomial(n_s, π̃),

with the same prior α = n_s / (e^ε − 1) in every cell, the smallest that gives
ε-DP, and turns the cell counts X̃ back into n_s rows (numeric values drawn
uniformly inside their bin).

Neighbouring notion. Machanavajjhala et al. state their guarantee for tables
that differ in one entry, i.e. one record's value changed with n fixed
(bounded DP); there the condition α_i ≥ n_s/(e^ε − 1) is necessary and
sufficient. This app's notion is adding or removing one record. The same α
covers it: with A = pα + n and a_k = α + x_k for the cell k the record falls
in, the probability of any output X̃ changes by the factor

    P(X̃ | D) / P(X̃ | D + record) = (A + n_s)/A · a_k/(a_k + x̃_k),

which lies between α/(α + n_s) = e^−ε (all n_s rows in cell k, a_k = α) and
1 + n_s/(pα) ≤ e^ε (no row in cell k). ``n_s`` must be public: declared, or a
noisy count released first (the base class does that).

Bias (for users). The prior is centred on the uniform table and weighs
p·α = p·n_s/(e^ε − 1) pseudo-records against the n real ones: the expected
synthetic share of a cell is (α + x_k)/(pα + n). With n_s = n the data's share
of that mix is 1/(1 + p/(e^ε − 1)): the pull toward uniform grows as ε falls
and does not vanish as n grows (Charest 2011). Use few columns and coarse bins.

The Dirichlet draw uses floating-point gamma variates, like every sampler of
it; the guarantee is proved for exact arithmetic.

References
----------
Machanavajjhala, Kifer, Abowd, Gehrke, Vilhuber (2008). Privacy: theory meets
practice on the map. ICDE.
Abowd & Vilhuber (2008). How protective are synthetic data? PSD.
Charest (2011). How can we analyze differentially-private synthetic datasets?
Journal of Privacy and Confidentiality 2(2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..privacy import TOTAL, Budget, Step
from ..privacy.audit import Audit, Neighbours, three_columns
from ..privacy.mechanisms import dirichlet_alpha
from . import options as opt
from .base import Synthesizer, register
from .counting import flat_counts
from .counting import strides as _strides
from .encoding import Domain, column_domain, decode_column
from .forecasting import VERDICT, Forecast, domain_sizes, level_of, ratio_text, spendable


@dataclass(frozen=True)
class Table:
    """The measured contingency table: the only thing generate sees of the data."""

    columns: list[str]
    domains: list[Domain]
    counts: np.ndarray  # X, flat over the cells in C order of ``shape``

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(d.size for d in self.domains)


@register
class Dirichlet(Synthesizer):
    """Dirichlet–multinomial posterior sample of the full contingency table (module docstring)."""

    name = "dirichlet"
    label = "Dirichlet–multinomial (full table)"
    caveat = ("the Dirichlet draw uses floating-point gamma variates: a cell whose probability falls below "
              "about 1e-308 gets none, so ε-DP holds up to that rounding.")
    is_dp = True
    description = ("Samples the whole contingency table (every column's categories and bins crossed) "
                   "from a Dirichlet posterior with a prior of n_s/(e^ε − 1) pseudo-records in every cell. "
                   "Keeps every association the bins can show, but the prior pulls the table toward "
                   "uniform: the pull grows as ε falls and does not shrink with more data (Charest). "
                   "Only for small tables (few columns, coarse bins).")
    # Bins per numeric column: coarse, because every cell gets the same prior weight; 3 keeps the bundled
    # diamonds table (7 numeric and 3 categorical columns) at 3⁷·5·7·8 = 612,360 cells, under max_cells.
    options = (opt.bins(3),)
    spends = Budget(TOTAL, per_target="all of it on one posterior sample of the full table")
    partitioned = True
    rank = 90
    #: The full table has more cells than this: refused before any work (memory, and a prior of
    #: n_s/(e^ε − 1) per cell would drown the data anyway).
    max_cells = 1_000_000
    audits = (Audit(three_columns(3, "ab"), pair=Neighbours(rows=10), epsilon=1.0, n=20, options={"bins": 3},
                    runs=1000, quick_runs=50,
                    note="With n_s = 20 synthetic rows (declared) the count of the planted cell is beta-binomial, "
                         "BetaBin(n_s, α, A − α) on D and BetaBin(n_s, α + 1, A − α) on D′, α = n_s/(e^ε − 1) in "
                         "each of the 9 cells, A = 9α + rows. With a tenth of the noise α is tiny: the cell gets "
                         "rows on D′ only. (n_s = 2 would come closer to ε, but only over some 40,000 runs.)"),)

    def forecast(self, schema, epsilon, n=None, *, bins, **params):
        """Prior α = n_s/(e^ε − 1) in each of p cells against n/p rows per cell: ratio p/(e^ε − 1) when n_s = n.

        Level by that ratio: good < 0.1, fair < 1, poor from 1 (the prior outweighs the data).
        """
        cells = math.prod(domain_sizes(schema, bins).values())
        eps = spendable(epsilon, n)
        ratio = cells / math.expm1(eps) if eps < 700 else 0.0
        alpha = ratio_text(n / math.expm1(eps)) if n is not None and eps < 700 else "n_s/(e^ε − 1)"
        level = level_of(ratio, 0.1, 1.0)
        return Forecast(f"At ε = {epsilon:g} the Dirichlet prior puts α = {alpha} pseudo-records in each of the "
                        f"{cells:,} cells of the full table, so it outweighs the data about {ratio_text(ratio)} : 1 "
                        f"per cell (with as many synthetic rows as real ones): {VERDICT[level]}.", level)

    def refuse(self, schema, columns, n, *, bins, **params):
        domains = [column_domain(schema[c], bins) for c in columns]
        cells = math.prod(d.size for d in domains)  # Python int: no overflow
        if cells <= self.max_cells:
            return None
        numeric = any(d.column.kind == "numeric" for d in domains)
        remedy = (f"bin numeric columns more coarsely (bins below {bins}) or synthesize fewer columns"
                  if numeric else "synthesize fewer columns or merge categories")
        count = f"{cells:,}" if cells < 10 ** 15 else f"about 10^{len(str(cells)) - 1}"
        return (f"The full table of these {len(columns)} columns has {count} cells, over the "
                f"Dirichlet–multinomial cap of {self.max_cells:,}; {remedy}.")

    def measure(self, df, schema, columns, *, bins):
        domains = [column_domain(schema[c], bins) for c in columns]
        # A value outside the public domain cannot be placed in a cell: such rows are not counted.
        # pandas or, partition by partition, Dask (see .counting)
        return Table(list(columns), domains, flat_counts(df, schema, list(columns), bins))

    def generate(self, measured: Table, *, epsilon, n, rng, bins, noise=None):
        noise = rng if noise is None else noise
        cells = measured.counts.size
        alpha = dirichlet_alpha(n, epsilon)
        # The posterior draw and the multinomial are the mechanism: from the secret noise stream. Dirichlet(α + X)
        # as normalised gamma variates (shape 0, possible when α underflows at huge ε, gives 0: empty cells then
        # get no rows).
        g = noise.standard_gamma(measured.counts + alpha)
        total = g.sum()
        pi = g / total if total > 0 else np.full(cells, 1.0 / cells)
        synthetic_counts = noise.multinomial(n, pi)
        cell_of_row = rng.permutation(np.repeat(np.arange(cells), synthetic_counts))
        codes = [(cell_of_row // stride) % size for stride, size in zip(_strides(measured.shape), measured.shape)]
        values = {c: decode_column(codes[j], d, rng) for j, (c, d) in enumerate(zip(measured.columns, measured.domains))}
        step = Step(
            "Dirichlet–multinomial posterior sample",
            f"full table of {len(measured.columns)} columns ({cells:,} cells)",
            epsilon,
            detail=(f"π̃ ~ Dirichlet(α + X), X̃ ~ Multinomial(n_s = {n:,}, π̃), α = n_s/(e^ε − 1) = {alpha:.6g} "
                    "in every cell. Machanavajjhala et al. (2008) prove ε-DP for tables differing in one "
                    "record's value (n fixed); for adding or removing one record the same α bounds the "
                    "ratio by e^ε too, since (A + n_s)/A · (α + x_k)/(α + x_k + x̃_k) with A = pα + n lies "
                    "in [e^−ε, 1 + n_s/(pα)]. The prior pulls every cell toward uniform."),
        )
        return values, [step]
