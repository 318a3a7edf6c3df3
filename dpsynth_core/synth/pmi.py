"""Perturbed multiple imputation (Park & Ghosh, §3.5): PeGS with logistic conditionals.

Every column is categorical here (numeric columns binned over their public
bounds, missing as one more code; :mod:`encoding`). For each feature i a
multinomial logistic regression of x_i on the other features (one-hot) is
fitted once (*measure*). A synthetic record starts from a public seed
(never a real record) and is swept once, i = 1..M, drawing x_i from the
fitted probabilities g given the record's current other values, perturbed to

    g̃ = (g + α) / (1 + C_i α),   α = 1 / (exp(ε/M) − 1),

with C_i the number of codes of feature i. Every perturbed probability lies
in [α/(1 + C_i α), (1 + α)/(1 + C_i α)] whatever the data, so for any two
datasets the probability of each draw changes by at most a factor
(1 + α)/α = exp(ε/M), and of the record's M draws by at most exp(ε): each
synthetic record costs ε, whatever its seed. Records are drawn in
``chains`` Gibbs chains as in :mod:`.pegs`: the first record of a chain from
a seed uniform over the public domain, every later one from the previous
synthetic record of its chain (post-processing of a released record; one
sweep from a uniform seed alone lost the marginals, issue 18). So n_s records
cost n_s·ε by adaptive sequential composition; the ledger shows one step per
feature (ε/M per record, repeated n_s times).

Neighbouring datasets: add or remove one record (the bound above holds for
any two datasets).

The fits read the data, so they live in :meth:`PMI.measure` and are cached:
a new ε or seed only perturbs and samples. To keep the first run fast on
large tables the models are fitted on at most ``fit_rows`` rows (a fixed,
seeded subsample, so *measure* stays deterministic), with at most
``max_iter`` L-BFGS iterations; neither choice affects the guarantee, which
holds for any fitted model.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

from .. import constraints
from ..privacy import PER_RECORD, Budget, Step
from ..privacy.audit import Audit, CellCounts, three_columns
from ..privacy.mechanisms import log_perturbation_alpha, perturbed_draw_probabilities
from . import options as opt
from .base import Synthesizer, register
from .encoding import column_domain, decode_column, encode
from .options import Option
from .pegs import CHAINS, _chain_note, per_record_forecast, run_chains
from .regression_design import check_options

DEFAULT_FIT_ROWS = 10_000
DEFAULT_MAX_ITER = 100
DEFAULT_C = 1.0


def pmi_alpha(epsilon: float, n_features: int) -> float:
    """α = 1 / (exp(ε/M) − 1), 0 when exp(ε/M) overflows (no perturbation)."""
    x = epsilon / n_features
    return 0.0 if x > 700 else 1.0 / math.expm1(x)


def perturb(g: np.ndarray, alpha: float) -> np.ndarray:
    """(g + α) / (1 + C α) over the last axis, C its length: still sums to 1."""
    return (g + alpha) / (1.0 + g.shape[-1] * alpha)


@dataclass(frozen=True)
class _Conditional:
    """log-odds of x_i given the others: intercept + Σ_j W_j[code of x_j] (one-hot)."""

    intercept: np.ndarray      # (C_i,); −inf for a code the data never show
    weights: np.ndarray        # (Σ_j≠i C_j, C_i), rows stacked in feature order without i
    others: tuple[int, ...]    # the features j ≠ i, in order
    offsets: np.ndarray        # start row of each other feature's block in ``weights``


def _one_hot(codes: np.ndarray, sizes, features) -> sparse.csr_matrix:
    """One-hot (CSR) of ``codes[:, features]`` with blocks of the given sizes."""
    n = len(codes)
    offsets = np.concatenate([[0], np.cumsum([sizes[j] for j in features])[:-1]]).astype(np.int64)
    cols = (codes[:, list(features)] + offsets).ravel()
    width = int(sum(sizes[j] for j in features))
    k = len(features)
    return sparse.csr_matrix((np.ones(n * k), cols, np.arange(0, n * k + 1, k)), shape=(n, width))


def _fit_conditional(codes: np.ndarray, sizes, i: int, *, max_iter: int, C: float) -> _Conditional:
    others = tuple(j for j in range(len(sizes)) if j != i)
    offsets = np.concatenate([[0], np.cumsum([sizes[j] for j in others])[:-1]]).astype(np.int64)
    width = int(sum(sizes[j] for j in others))
    y = codes[:, i]
    seen = np.unique(y)
    intercept = np.full(sizes[i], -np.inf)
    weights = np.zeros((width, sizes[i]))
    if len(seen) == 1 or not others:
        # One code only, or nothing to condition on: the model is the observed shares.
        shares = np.bincount(y, minlength=sizes[i]) / len(y)
        with np.errstate(divide="ignore"):
            intercept = np.log(shares)
        return _Conditional(intercept, weights, others, offsets)
    model = LogisticRegression(C=C, max_iter=max_iter, solver="lbfgs")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # iterations are capped on purpose
        model.fit(_one_hot(codes, sizes, others), y)
    classes = model.classes_
    if len(classes) == 2:  # sklearn keeps one log-odds vector: the first class sits at 0
        intercept[classes] = [0.0, model.intercept_[0]]
        weights[:, classes[1]] = model.coef_[0]
        weights[:, classes[0]] = 0.0
    else:
        intercept[classes] = model.intercept_
        weights[:, classes] = model.coef_.T
    return _Conditional(intercept, weights, others, offsets)


class _Logits:
    """One conditional's log-odds as one gather: row 0 of ``table`` the intercept, then the weight rows
    of every other feature's codes.

    A Gibbs sweep asks for the probabilities of a few hundred chains at a time, thousands of times,
    so a call is a handful of array operations rather than one per feature.
    """

    def __init__(self, cond: _Conditional):
        self.table = np.vstack([cond.intercept, cond.weights])  # (1 + Σ_j≠i C_j, C_i)
        self.features = np.array(cond.others, dtype=np.intp)
        self.starts = (cond.offsets + 1)[:, None]

    def probabilities(self, codes: np.ndarray) -> np.ndarray:
        """Fitted P(x_i = · | current others) (n × C_i) for the chains' codes (M × n, a feature a row).

        The one-hot product is a sum of one weight row per other feature, gathered directly and
        added in feature order after the intercept (a sum along the first axis adds term by term).
        """
        rows = np.zeros((len(self.features) + 1, codes.shape[1]), dtype=np.intp)
        rows[1:] = codes[self.features] + self.starts
        logits = self.table.take(rows, axis=0).sum(axis=0)
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits, out=logits)
        return p / p.sum(axis=1, keepdims=True)


@register
class PMI(Synthesizer):
    """Perturbed multiple imputation: ε-DP per synthetic record.

    Parameters (keywords of :func:`~dpsynth_core.synth.synthesize`)
    ----------------------------------------------------------------
    epsilon : float
        Total budget of the release, > 0; each of the n_s records gets its share
        (ε/n_s, after the noisy row count if n is not declared).
    bins : int, default 20
        Equal-width bins per numeric column over its declared bounds. Must be ≥ 1.
    fit_rows : int, default 10,000
        Rows the logistic regressions are fitted on (a fixed subsample above that). Must be ≥ 1.
    max_iter : int, default 100
        L-BFGS iterations per regression. Must be ≥ 1.
    C : float, default 1
        Inverse L2 penalty of the regressions (scikit-learn's ``C``). Must be > 0.

    References
    ----------
    Park, Y. & Ghosh, J. (2013). Perturbed Gibbs samplers for synthetic data release.
    arXiv:1312.5370 (§3.5, perturbed multiple imputation).
    """

    name = "pmi"
    label = "Perturbed multiple imputation (PMI)"
    caveat = ("the perturbed draws from the model's probabilities use floating point (a 53-bit uniform against "
              "the mixing coin's exp(−t) and against cumulative probabilities), so a category of probability p "
              "is drawn with a relative error up to about 2^−53/p; ε-DP holds up to that rounding.")
    is_dp = True
    spends = Budget(PER_RECORD, per_target="the per-record ε in equal shares over the columns' conditionals")
    description = ("Each record is one sweep from a seed (the previous synthetic record of its chain, the "
                   "first of a chain a uniform draw), every column drawn from a logistic model of it given "
                   "the others, with probabilities pulled toward uniform. ε is the release's total, shared "
                   "over the records: each of n records gets ε/n (Park & Ghosh's per-record ε).")
    options = (opt.bins(constraints.DEFAULT_BINS),
               Option("fit_rows", "int", DEFAULT_FIT_ROWS,
                      "Rows the per-column models are fitted on (a fixed subsample above it).", low=1),
               opt.max_iter(DEFAULT_MAX_ITER), opt.inverse_penalty(DEFAULT_C), CHAINS)
    rank = 60
    audits = (Audit(three_columns(3, "ab"), CellCounts(((0, 1), (0,), (1,))), epsilon=2.0, options={"C": 1e4},
                    fixed={"chains": constraints.MAX_SYNTH_ROWS}, runs=40_000, quick_runs=5_000,
                    note="ε per record, a uniform seed per record: each record is a run. A weak penalty "
                         "(C = 1e4) lets the one record in (a2, b2) move the fitted P(a2 | b2) and P(b2 | a2) "
                         "from about 0 to about 1, the worst case; the default C = 1 shrinks its pull."),)

    def forecast(self, schema, epsilon, n=None, *, bins, **params):
        return per_record_forecast(schema, epsilon, n, bins=bins, method="pmi")

    def refuse(self, schema, columns, n, *, bins, fit_rows, max_iter, C, chains=None):
        bad = check_options(bins=bins, fit_rows=fit_rows, max_iter=max_iter, C=C,
                            **({} if chains is None else {"chains": chains}))
        if bad:
            return bad
        # Each column's model keeps a weight per (code of another column, own code): S² − Σ s² floats.
        sizes = [column_domain(schema[c], bins).size for c in columns]
        weights = sum(sizes) ** 2 - sum(s * s for s in sizes)
        return constraints.over_memory_budget(
            f"PMI's models of {len(columns)} columns with {sum(sizes):,} codes in all", 8 * weights,
            "exclude columns with many categories on the Data page or use fewer bins")

    def measure(self, df, schema, columns, *, bins, fit_rows, max_iter, C, chains=None):
        codes, domains = encode(df, schema, columns, bins)
        codes = codes[(codes >= 0).all(axis=1)]  # a value outside the public domain drops its row
        if len(codes) > fit_rows:
            # A fixed subsample keeps measure deterministic (and cacheable).
            codes = codes[np.sort(np.random.default_rng(0).choice(len(codes), fit_rows, replace=False))]
        sizes = [d.size for d in domains]
        if len(codes) == 0:
            conditionals = [_Conditional(np.zeros(s), np.zeros((0, s)), (), np.zeros(0, np.int64)) for s in sizes]
        else:
            # One thread: the L-BFGS loss runs OpenMP/BLAS threads that spin-wait when the cores are
            # shared (a server with several sessions); on a loaded 2-core machine one thread was 5×
            # faster than the default.
            with threadpool_limits(limits=1):
                conditionals = [_fit_conditional(codes, sizes, i, max_iter=max_iter, C=C) for i in range(len(sizes))]
        return columns, domains, conditionals

    def generate(self, measured, *, epsilon, n, rng, bins, fit_rows, max_iter, C,
                 chains=None, noise=None):
        noise = rng if noise is None else noise  # every draw of a code is the mechanism; rng only decodes
        columns, domains, conditionals = measured
        sizes = [d.size for d in domains]
        m = len(columns)
        alpha, log_alpha = pmi_alpha(epsilon, m), log_perturbation_alpha(epsilon / m)

        logits = [_Logits(cond) for cond in conditionals]

        def sweep(x):
            codes = x.T.copy()  # a feature a row: one gather picks every feature's code
            for i, model in enumerate(logits):
                # (g + α)/(1 + Cα), drawn as a mixture in log space: no code's probability rounds to zero
                codes[i] = perturbed_draw_probabilities(lambda rows, model=model: model.probabilities(codes[:, rows]),
                                                        codes.shape[1], sizes[i], log_alpha, noise)
            x[:] = codes.T
            return x[:, None].copy()

        # Seeds: the previous synthetic record of the chain, the first uniform; never a real record.
        x = run_chains(sizes, n, chains, noise, sweep)[:n]
        values = {c: decode_column(x[:, j], d, rng) for j, (c, d) in enumerate(zip(columns, domains))}
        bound = f"e^(ε/M) = {math.exp(epsilon / m):.4g}" if epsilon / m < 700 else "e^(ε/M)"
        steps = [Step("perturbed conditional draw (PMI)", f"{c} given the other {m - 1} columns ({d.size} codes)",
                      epsilon / m, repeats=n,
                      detail=f"α = 1/(exp(ε/M) − 1) = {alpha:.4g} with M = {m}; every probability in "
                             f"[α/(1 + Cα), (1 + α)/(1 + Cα)], ratio ≤ (1 + α)/α = {bound}; once per record; "
                             f"{_chain_note(n, chains)}")
                 for c, d in zip(columns, domains)]
        return values, steps
