"""Parametric sequential synthesis (the Urban Institute course's approach). Not DP.

Columns are synthesized in schema order, each from a model fitted on the
columns before it:

* a categorical column: its observed proportions when it comes first,
  otherwise a multinomial logistic regression on the previous columns;
  missing is one more category;
* a numeric column: a linear regression (least squares) on the previous
  columns, drawn as the prediction plus N(0, σ̂²) noise, σ̂² = SSE/(n − p),
  clipped to the declared bounds (whole numbers rounded). A nullable
  numeric column is first drawn missing or not, from a logistic regression
  of its missingness on the previous columns (its proportion when first);
  the regression is fitted on the rows where it is observed.

Previous columns enter the design as in :mod:`regression_design` (numeric
scaled over the bounds, categorical as 0/1 columns against the first
category, a flag for a missing value). The fitted parameters are plugged in
(no posterior draw), as in the course. With kept columns (partial
synthesis) the models condition on their real values row for row.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

from ..errors import MethodRefused
from . import options as opt
from .base import Synthesizer, register
from .encoding import Domain, column_domain, decode_column
from .regression_design import check_options, column_features, design_matrix, design_refusal, to_unit

DEFAULT_MAX_ITER = 200
DEFAULT_C = 1.0


@dataclass(frozen=True)
class _Categorical:
    """P(code | previous columns): fixed shares, or a fitted logistic regression."""

    predictors: tuple[str, ...]
    size: int
    shares: np.ndarray | None          # used when ``model`` is None
    model: LogisticRegression | None

    def probabilities(self, features, schema, n) -> np.ndarray:
        if self.model is None:
            return np.broadcast_to(self.shares, (n, self.size))
        p = np.zeros((n, self.size))
        p[:, self.model.classes_] = self.model.predict_proba(
            design_matrix(features, schema, self.predictors, n, intercept=False))
        return p

    def draw(self, features, schema, n, rng) -> np.ndarray:
        cdf = np.cumsum(self.probabilities(features, schema, n), axis=1)
        u = rng.random(n) * cdf[:, -1]
        return np.minimum((cdf <= u[:, None]).sum(axis=1), self.size - 1)


def _fit_categorical(features, schema, predictors, y: np.ndarray, size: int, *, max_iter: int, C: float) -> _Categorical:
    """Shares or multinomial logistic regression of codes ``y`` (−1: not counted)."""
    ok = y >= 0
    shares = np.bincount(y[ok], minlength=size) / max(np.count_nonzero(ok), 1)
    if not ok.any():
        shares = np.full(size, 1.0 / size)
    if not predictors or len(np.unique(y[ok])) < 2:
        return _Categorical(tuple(predictors), size, shares, None)
    X = design_matrix(features, schema, predictors, len(y), intercept=False)[ok]
    if X.shape[1] == 0:  # the previous columns are constant categoricals: nothing to regress on
        return _Categorical(tuple(predictors), size, shares, None)
    model = LogisticRegression(C=C, max_iter=max_iter, solver="lbfgs")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # iterations are capped on purpose
        model.fit(X, y[ok])
    return _Categorical(tuple(predictors), size, None, model)


@dataclass(frozen=True)
class _Step:
    column: str
    domain: Domain | None              # categorical columns
    categorical: _Categorical | None   # the column itself, or its missingness (numeric)
    beta: np.ndarray | None = None     # numeric: least-squares coefficients (intercept first)
    sigma: float = 0.0
    predictors: tuple[str, ...] = ()


@register
class Parametric(Synthesizer):
    """Sequential parametric models; not DP (a non-DP reference).

    Parameters (keywords of :func:`~dpsynth_core.synth.synthesize`)
    ----------------------------------------------------------------
    max_iter : int, default 200
        L-BFGS iterations of each logistic regression. Must be ≥ 1.
    C : float, default 1
        Inverse L2 penalty of the logistic regressions (scikit-learn's ``C``). Must be > 0.

    References
    ----------
    Urban Institute, *Synthetic data* course materials (sequential parametric synthesis);
    Raghunathan, T. E., Reiter, J. P. & Rubin, D. B. (2003). Multiple imputation for
    statistical disclosure limitation. Journal of Official Statistics 19(1).
    """

    name = "parametric"
    label = "Parametric sequential (regression)"
    is_dp = False
    conditional = True
    description = ("Each column drawn from a regression on the columns before it: logistic for categories, "
                   "linear plus normal noise for numbers (the Urban Institute course's approach). "
                   "No formal privacy.")
    options = (opt.max_iter(DEFAULT_MAX_ITER), opt.inverse_penalty(DEFAULT_C))
    rank = 120

    def refuse(self, schema, columns, n, *, max_iter, C):
        return check_options(max_iter=max_iter, C=C) or design_refusal("Parametric synthesis", schema, columns, n)

    def measure(self, df, schema, columns, *, max_iter, C, targets=None):
        refusal = design_refusal("Parametric synthesis", schema, columns, len(df))  # refuse() saw n_s rows
        if refusal:
            raise MethodRefused(refusal)
        # One thread: the L-BFGS loss and least squares run OpenMP/BLAS threads that spin-wait
        # when the cores are shared (a server with several sessions); on a loaded 2-core
        # machine one thread was 5× faster than the default.
        with threadpool_limits(limits=1):
            return self._fit(df, schema, columns, max_iter=max_iter, C=C, targets=targets)

    def _fit(self, df, schema, columns, *, max_iter, C, targets):
        targets = columns if targets is None else targets
        order = [c for c in columns if c not in targets] + list(targets)
        features = {c: column_features(df[c].to_numpy(), schema[c]) for c in order}
        n = len(df)
        steps = []
        for i, c in enumerate(order):
            if c not in targets:
                continue
            col, previous = schema[c], order[:i]
            if col.kind == "categorical":
                d = column_domain(col, 1)
                steps.append(_Step(c, d, _fit_categorical(features, schema, previous, features[c], d.size,
                                                          max_iter=max_iter, C=C)))
                continue
            raw = pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=float)
            seen = ~np.isnan(raw)
            missing = None
            if col.nullable and not seen.all():
                missing = _fit_categorical(features, schema, previous, (~seen).astype(np.int64), 2,
                                           max_iter=max_iter, C=C)
            U = design_matrix(features, schema, previous, n)[seen]
            target = np.clip(raw[seen], *col.bounds)
            if len(target) == 0:
                beta, sigma = np.zeros(U.shape[1]), 0.0
                beta[0] = np.mean(col.bounds)
            else:
                beta, _, rank, _ = np.linalg.lstsq(U, target, rcond=None)
                resid = target - U @ beta
                sigma = float(np.sqrt(resid @ resid / max(len(target) - rank, 1)))
            steps.append(_Step(c, None, missing, beta, sigma, tuple(previous)))
        return schema, steps

    def generate(self, measured, *, epsilon, n, rng, max_iter, C, keep=None):
        schema, steps = measured
        features: dict[str, np.ndarray] = {}
        if keep is not None:
            features.update({c: column_features(keep[c].to_numpy(), schema[c]) for c in keep.columns})
        out = {}
        for st in steps:
            col = schema[st.column]
            if st.domain is not None:
                codes = st.categorical.draw(features, schema, n, rng)
                out[st.column], features[st.column] = decode_column(codes, st.domain, rng), codes
                continue
            U = design_matrix(features, schema, st.predictors, n)
            v = np.clip(U @ st.beta + st.sigma * rng.standard_normal(n), *col.bounds)
            if col.integer:
                v = np.clip(np.rint(v), *col.bounds)
            if st.categorical is not None:
                v[st.categorical.draw(features, schema, n, rng) == 1] = np.nan
            out[st.column], features[st.column] = v, to_unit(v, col)
        return out, []
