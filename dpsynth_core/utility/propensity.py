"""Propensity-score utility: pMSE, its null, SPECKS and AUC.

Real rows (t = 0) and synthetic rows (t = 1) are stacked and a discriminator
estimates p̂ = P(t = 1 | x). If the synthesis were perfect no model could do
better than the constant c = n_s / N.

References
----------
Woo, M.-J., Reiter, J. P., Oganian, A. and Karr, A. F. (2009). Global
measures of data utility for microdata masked for disclosure limitation.
Journal of Privacy and Confidentiality 1(1).

Snoke, J., Raab, G. M., Nowok, B., Dibben, C. and Slavkovic, A. (2018).
General and specific utility measures for synthetic data. JRSS A 181(3).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.special import expit
from sklearn.metrics import roc_auc_score, roc_curve
from sklearn.tree import DecisionTreeClassifier
from threadpoolctl import threadpool_limits

from .. import constraints
from ..errors import DataError
from ..metric_info import Metric, register
from .design import Design, column_kinds, independent_columns, main_effect_count, propensity_design
from .univariate import ks_statistic

__all__ = ["PropensityResult", "headline_propensity", "propensity_metrics", "sample_rows"]

_MODELS = ("logit", "cart")

# synthpop's utility.gen defaults for its CART discriminator (rpart).
_CART_CP = 1e-3
_CART_MAXDEPTH = 30  # rpart.control's maxdepth

register(
    Metric(
        name="pmse",
        label="pMSE",
        kind="utility",
        goal="minimize",
        lower=0.0,
        upper=0.25,
        best=0.0,
        reading="Mean squared distance of the propensity scores from n_s/N; 0 means "
        "the discriminator cannot tell real from synthetic rows.",
        section="propensity",
        compute=lambda ctx: fitted(ctx).pmse,
    )
)
register(
    Metric(
        name="pmse_ratio",
        label="pMSE ratio",
        kind="utility",
        goal="target",
        lower=0.0,
        upper=float("inf"),
        best=1.0,
        reading=f"pMSE ratio 1 means indistinguishable; under {constraints.PMSE_RATIO_GOOD:g} is good, under "
        f"{constraints.PMSE_RATIO_ACCEPTABLE:g} acceptable (pMSE over its expected value when the synthesis keeps "
        f"all the model can see; logistic with pairwise interactions on {constraints.PMSE_RATIO_ROWS:,} rows of "
        "each table).",
        section="propensity",
        compute=lambda ctx: fitted(ctx).pmse_ratio,
        # A ratio of 1 read off a 0/0 (no split anywhere) carries its note beside the value.
        note=lambda ctx, value: fitted(ctx).ratio_note,
        headline=True,
        on_copy=0.0,  # identical rows: every propensity is n_s/N, so pMSE is 0, below its null expectation
        acceptable=constraints.PMSE_RATIO_ACCEPTABLE,
    )
)
register(
    Metric(
        name="specks",
        label="SPECKS",
        kind="utility",
        goal="minimize",
        lower=0.0,
        upper=1.0,
        best=0.0,
        reading="Kolmogorov-Smirnov distance between the propensity scores of real and "
        "synthetic rows; 0 means the same score distribution.",
        section="propensity",
        compute=lambda ctx: fitted(ctx).specks,
    )
)
register(
    Metric(
        name="auc",
        label="Propensity AUC",
        kind="utility",
        goal="target",
        lower=0.0,
        upper=1.0,
        best=0.5,
        reading="How often the discriminator ranks a synthetic row above a real one; "
        "0.5 is chance (indistinguishable), 1 is perfect separation.",
        section="propensity",
        compute=lambda ctx: fitted(ctx).auc,
    )
)


def fitted(ctx) -> "PropensityResult":
    """The propensity fit the four metrics share: the headline discriminator (:func:`headline_propensity`),
    on at most ``ctx.options["propensity_rows_each"]`` rows of each table (default
    ``constraints.PMSE_RATIO_ROWS``), columns entered by dtype. A caller holding another fit (the Compare
    page's chosen discriminator) puts it in ``ctx.shared["propensity"]``. Columns are categorical as the
    schema declares them (by dtype without a schema)."""
    rows = ctx.options.get("propensity_rows_each", constraints.PMSE_RATIO_ROWS)
    return ctx.cached("propensity", lambda: headline_propensity(ctx.real, ctx.synth, seed=ctx.seed,
                                                                categorical=ctx.categorical, rows_each=rows))


def sample_rows(df: pd.DataFrame, k: int, rng: np.random.Generator) -> pd.DataFrame:
    """At most ``k`` rows of ``df``, drawn at random without replacement, in their original order."""
    if len(df) <= k:
        return df
    return df.iloc[np.sort(rng.choice(len(df), size=k, replace=False))]


def headline_propensity(real: pd.DataFrame, synth: pd.DataFrame, *, seed: int | np.random.Generator | None,
                        categorical: Iterable[str] | None = None,
                        rows_each: int = constraints.PMSE_RATIO_ROWS) -> "PropensityResult":
    """The discriminator behind every figure called "pMSE ratio" (the Synthesize readout, Compare's headline,
    the R-U map, the reports): logistic with all pairwise interactions on at most ``rows_each`` rows of each
    table, drawn at random by ``seed`` (the same seed, tables and ``categorical`` give the same figure on every
    page; the pages pass the schema's categorical columns).

    >>> import pandas as pd
    >>> real = pd.DataFrame({"a": [0.0, 1, 2, 3] * 50, "b": list("xyxy") * 50})
    >>> headline_propensity(real, real, seed=0, rows_each=100).n_used  # 100 rows of each table
    200
    """
    rng = np.random.default_rng(seed)
    rs, ss = sample_rows(real, rows_each, rng), sample_rows(synth, rows_each, rng)
    return propensity_metrics(rs, ss, interactions=True, seed=rng, categorical=categorical,
                              max_rows=len(rs) + len(ss))


@dataclass(frozen=True)
class PropensityResult:
    """Propensity-score utility of one synthetic dataset.

    Attributes
    ----------
    pmse : float
        (1/N) Σ (p̂ − c)², c = n_s / N.
    pmse_null : float
        Reference pMSE of a synthesis that keeps what the model can see:
        (k − 1)(1 − c)² c / N for ``"logit"`` (Snoke et al. 2018), the mean
        pMSE over label permutations for ``"cart"``. The two are not the same
        null: the logit formula is the expectation when the synthetic rows
        are drawn from a distribution fitted to the real data (a bootstrap
        of them, say), whereas two independent samples of one distribution
        (which is what permuting labels mimics) score (k − 1) c (1 − c) / N,
        a logit ratio of about 1/(1 − c), 2 for equal sizes. synthpop
        divides its permutation null by 2, which lines it up with the logit
        formula at c = ½; docs/methods.md#propensity says plain mean, so that is what is
        computed here.
    pmse_ratio : float
        ``pmse / pmse_null``. When the null is 0 (no usable column, or a
        tree that never splits permuted labels): 1 for a CART tree that
        does not split the true labels either (indistinguishable, with a
        note), otherwise inf if ``pmse > 0``, else NaN.
    specks : float
        KS distance between the scores of real rows and of synthetic rows.
    auc : float
        ROC AUC of the scores against the labels.
    scores : ndarray of float
        p̂ for the rows used, real rows first, then synthetic rows.
    labels : ndarray of int
        0 for real rows, 1 for synthetic rows, aligned with ``scores``.
    n_params : int
        ``"logit"``: k, the number of design columns fitted plus the
        intercept. ``"cart"``: the number of leaves of the fitted tree.
    n_used : int
        Rows used (N); less than ``len(real) + len(synth)`` when the data
        were subsampled to ``max_rows``.
    model : str
        ``"logit"`` or ``"cart"``.
    terms : tuple of str
        Names of the design columns the model saw.
    importance : Series
        Per term: |coefficient| on the standardised scale for ``"logit"``,
        impurity importance for ``"cart"``; sorted, largest first. Shows
        which variables give the synthesis away.
    converged : bool
        False when the logit fit stopped short of its tolerance, which
        happens when the two datasets are almost perfectly separable; the
        scores are then still ordered correctly, so AUC and SPECKS stay
        meaningful. Rows a hyperplane separates completely have no finite
        MLE: the scores are then the labels, the fit's limit (converged).
    interactions : bool
        Whether the logit saw pairwise interactions.
    holdout : float
        Share of the rows held out of the fit and scored (0: the model is
        scored on the rows it was fitted on, as in Snoke et al.).
    n_fit : int
        Rows the model was fitted on (``n_used`` without the held-out rows).
    score_rows : ndarray of int or None
        With ``holdout``: positions of the scored rows among the ``n_used``
        stacked rows (real subsample first, then synthetic), aligned with
        ``scores``; None when every row is scored.
    reductions : tuple of str
        Sentences stating how the input was cut to stay within the term cap
        and the memory budget (levels pooled, interactions capped, rows
        subsampled); empty when nothing was cut. Part of :attr:`notes`.
    """

    pmse: float
    pmse_null: float
    pmse_ratio: float
    specks: float
    auc: float
    scores: np.ndarray = field(repr=False)
    labels: np.ndarray = field(repr=False)
    n_params: int
    n_used: int
    model: str
    terms: tuple[str, ...] = field(default=(), repr=False)
    importance: pd.Series | None = field(default=None, repr=False)
    converged: bool = True
    interactions: bool = False
    holdout: float = 0.0
    n_fit: int = 0
    score_rows: np.ndarray | None = field(default=None, repr=False)
    reductions: tuple[str, ...] = ()

    @property
    def ratio_note(self) -> str | None:
        """Why the pMSE ratio has no finite value, in words; None when it has one.

        A CART null of 0 is common on large data: no tree fitted to permuted
        labels finds a split worth cp, so every permutation scores pMSE 0. A
        tree's pMSE equals half its weighted Gini decrease, and a split is
        only made when that decrease is at least cp·2c(1 − c), so any tree
        that splits at all has pMSE ≥ cp·c(1 − c): the figure reported is
        how many times the fitted tree's pMSE exceeds that floor.
        """
        if self.model == "cart" and self.pmse_null == 0 and self.n_params == 1:
            return (
                "Indistinguishable: no split found. The tree found no split on the true labels nor on "
                "permuted ones, so real and synthetic rows look alike to it; the pMSE ratio is 1 "
                "(its 0/0 read as the best case)."
            )
        if np.isfinite(self.pmse_ratio):
            return None
        if self.model == "cart" and self.pmse_null == 0 and self.pmse > 0:
            c = self.n_synth / len(self.labels) if len(self.labels) else 0.5
            floor = _CART_CP * c * (1.0 - c)
            return (
                f"The pMSE ratio is not defined here: none of the trees fitted to permuted labels "
                f"found a split (null pMSE 0 at {self.n_fit:,} rows), while the tree on the true labels "
                f"did ({self.n_params} leaves). The synthetic rows are distinguishable beyond chance: "
                f"their pMSE is {self.pmse / floor:,.0f} times the smallest pMSE a tree that splits "
                f"can reach (cp·c(1 − c) = {floor:.2g}). Read pMSE, SPECKS and AUC instead."
            )
        if self.pmse_null == 0:
            return "The pMSE ratio is not defined: the model has no usable column, so its null pMSE is 0."
        return None

    @property
    def ratio_ceiling(self) -> float:
        """The largest pMSE ratio this logistic fit could report: pMSE is at most c(1 − c) (every score 0 or
        1 on the right side), and the null is (k − 1)(1 − c)²c/N, so the ratio is at most N/((k − 1)(1 − c))
        for N rows fitted and k parameters. On few rows with many terms it falls below the levels the pages
        read the ratio by: 638 stacked rows and 86 parameters (penguins) cap it near 15, a synthesis of 5
        rows beside 344 real ones near 4. Infinite for CART and for a fit scored on held-out rows (no such
        bound applies)."""
        if self.model != "logit" or self.holdout > 0 or self.n_params <= 1 or self.n_fit <= 0:
            return math.inf
        c = self.n_synth / len(self.labels) if len(self.labels) else 0.5
        return self.n_fit / ((self.n_params - 1) * (1.0 - c)) if c < 1 else math.inf

    @property
    def capped(self) -> bool:
        """Whether :attr:`ratio_ceiling` is below the acceptable level: the ratio could not read poor here."""
        return self.ratio_ceiling < constraints.PMSE_RATIO_ACCEPTABLE

    @property
    def notes(self) -> tuple[str, ...]:
        """Sentences the app shows beside the figures."""
        out = list(self.reductions)
        if self.ratio_note:
            out.append(self.ratio_note)
        if self.capped:
            out.append(f"On {self.n_fit:,} stacked rows ({self.n_synth:,} synthetic) with {self.n_params} "
                       f"parameters the pMSE ratio cannot exceed {self.ratio_ceiling:.3g}, below the "
                       f"{constraints.PMSE_RATIO_ACCEPTABLE:g} this app calls unacceptable: it cannot show poor "
                       "utility here. Read SPECKS and AUC, or compare more rows.")
        if not self.converged:
            out.append("The logistic fit did not converge: real and synthetic rows are (almost) perfectly "
                       "separable. pMSE is then near its maximum; AUC and SPECKS still rank correctly.")
        return tuple(out)

    def roc_curve(self) -> pd.DataFrame:
        """ROC curve of the scores against the labels: ``fpr``, ``tpr``, ``threshold``."""
        fpr, tpr, thr = roc_curve(self.labels, self.scores)
        return pd.DataFrame({"fpr": fpr, "tpr": tpr, "threshold": thr})

    @property
    def n_real(self) -> int:
        """Number of real rows used."""
        return int(np.sum(self.labels == 0))

    @property
    def n_synth(self) -> int:
        """Number of synthetic rows used."""
        return int(np.sum(self.labels == 1))


def _check_frames(real: pd.DataFrame, synth: pd.DataFrame) -> pd.DataFrame:
    for name, frame in (("real", real), ("synth", synth)):
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"{name} must be a pandas DataFrame, got {type(frame).__name__}")
        if len(frame) == 0:
            raise DataError(f"The {name} data have no rows; a propensity score needs both.")
    if set(real.columns) != set(synth.columns):
        only_real = sorted(map(str, set(real.columns) - set(synth.columns)))
        only_synth = sorted(map(str, set(synth.columns) - set(real.columns)))
        raise DataError(
            "Real and synthetic data must have the same columns; "
            f"only in real: {only_real}, only in synthetic: {only_synth}."
        )
    return synth[list(real.columns)]


def _subsample(
    n_real: int, n_synth: int, max_rows: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Row indices to keep from each group, proportional to the group sizes."""
    total = n_real + n_synth
    if total <= max_rows:
        return np.arange(n_real), np.arange(n_synth)
    keep_real = int(round(max_rows * n_real / total))
    # Both groups must stay represented, however lopsided the sizes.
    keep_real = min(max(keep_real, 1), max_rows - 1)
    keep_synth = max_rows - keep_real
    # Sorted so the subsample keeps the original row order.
    idx_real = np.sort(rng.choice(n_real, size=keep_real, replace=False))
    idx_synth = np.sort(rng.choice(n_synth, size=keep_synth, replace=False))
    return idx_real, idx_synth


def _fit_logit(
    X: np.ndarray, t: np.ndarray, X_score: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Unpenalised logistic MLE: probabilities at ``X_score`` (default: the rows fitted), coefficients, converged.

    When a hyperplane separates the groups there is no finite MLE: the likelihood tends to 1 along it and
    the fitted probabilities to the labels themselves. For the rows fitted that limit is returned as soon
    as a step separates them, where Newton's steps would only approach it (20-odd steps rather than 5);
    at other rows the limit depends on which separating direction is taken, so the steps go on.
    """
    in_sample = X_score is None or X_score is X
    if X.shape[1] == 0:
        # Intercept only: the MLE is the sample share, whatever the data.
        return np.full(len(X if in_sample else X_score), t.mean()), np.zeros(0), True
    t = np.asarray(t, dtype=float)
    intercept, coef, status = _newton_logit(X, t, stop_if_separated=in_sample)
    if status == "separated":
        return t, coef, True
    return expit(intercept + (X if in_sample else X_score) @ coef), coef, status == "converged"


#: Stop when every component of the mean log-loss gradient is below this (sklearn's scale for its tol).
#: Tight because the null pMSE formula assumes the exact MLE.
_LOGIT_TOL = 1e-8
_LOGIT_MAX_ITER = 100


def _newton_logit(X: np.ndarray, t: np.ndarray, *, stop_if_separated: bool = False) -> tuple[float, np.ndarray, str]:
    """Logistic MLE by Newton's method with a backtracking line search: intercept, coefficients and how it
    ended: ``"converged"`` (gradient within tolerance), ``"separated"`` (with ``stop_if_separated``: the
    linear predictor separates the labels, see :func:`_fit_logit`) or ``"stopped"`` short of both.

    The same algorithm as scikit-learn's ``newton-cholesky`` solver (tests check the fit against
    statsmodels), written out because this fit is most of the Synthesize page's readout
    and of each R-U map point: a step is one BLAS product for the Hessian, and the line search reuses
    X·d, so a trial step costs O(n) where scikit-learn evaluates the loss and gradient afresh (half the
    time in all). Where a quasi-separated design leaves the Hessian singular, the step is damped
    (Levenberg) rather than handed to L-BFGS, which scikit-learn stops after 100 steps short of the MLE.
    """
    n = len(t)
    c = float(t.mean())
    intercept, coef = float(np.log(c / (1.0 - c))), np.zeros(X.shape[1])  # the intercept-only MLE
    eta = np.full(n, intercept)
    loss = _log_loss(eta, t)
    hessian = np.empty((X.shape[1] + 1,) * 2)
    for _ in range(_LOGIT_MAX_ITER):
        if stop_if_separated and _separates(eta, t):
            return intercept, coef, "separated"
        prob = expit(eta)
        residual = prob - t
        gradient = np.r_[residual.mean(), residual @ X / n]
        if np.max(np.abs(gradient)) <= _LOGIT_TOL:
            return intercept, coef, "converged"
        w = prob * (1.0 - prob)
        z = X * np.sqrt(w)[:, None]
        hessian[0, 0], hessian[0, 1:] = w.mean(), w @ X / n
        hessian[1:, 1:] = z.T @ z / n  # cho_factor reads the upper triangle only
        step = -_damped_solve(hessian, gradient)
        d_eta = step[0] + X @ step[1:]
        slope = float(gradient @ step)
        size = 1.0
        for _ in range(40):  # Armijo backtracking on the mean log-loss
            trial = eta + size * d_eta
            trial_loss = _log_loss(trial, t)
            if trial_loss <= loss + 1e-4 * size * slope:
                break
            size /= 2.0
        else:
            return intercept, coef, "stopped"  # no descent left in floating point short of the tolerance
        intercept, coef = intercept + size * step[0], coef + size * step[1:]
        eta, loss = trial, trial_loss
    return intercept, coef, "separated" if stop_if_separated and _separates(eta, t) else "stopped"


def _separates(eta: np.ndarray, t: np.ndarray) -> bool:
    """Whether the linear predictor puts every synthetic row above 0 and every real row below."""
    return bool(np.array_equal(eta > 0, t == 1))


def _log_loss(eta: np.ndarray, t: np.ndarray) -> float:
    return float(np.mean(np.logaddexp(0.0, eta) - t * eta))


def _damped_solve(hessian: np.ndarray, gradient: np.ndarray) -> np.ndarray:
    """H⁻¹g by Cholesky; if H is singular in floating point, (H + μ·mean(diag H)·I)⁻¹g with the smallest μ
    that works."""
    scale = float(np.mean(np.diag(hessian)))
    for damping in (0.0, *(10.0 ** -k for k in range(12, 0, -2))):
        try:
            factor = cho_factor(hessian + damping * scale * np.eye(len(hessian)), lower=False, check_finite=False)
        except LinAlgError:
            continue
        return cho_solve(factor, gradient, check_finite=False)
    raise LinAlgError("the logistic Hessian is not positive definite even when damped")


def _cart(min_leaf: int, alpha: float, seed: int) -> DecisionTreeClassifier:
    # rpart's control: minbucket = 5, minsplit = 3 * minbucket (its default when
    # only minbucket is given), maxdepth = 30. cp acts twice in rpart: as a
    # screen while growing ("a split that does not decrease the overall lack
    # of fit by a factor of cp is not attempted") and as cost-complexity
    # pruning. min_impurity_decrease is the screen, ccp_alpha the pruning,
    # both in the units of _cart_alpha. The screen also keeps permuted-label
    # trees from growing thousands of noise leaves only to be pruned away.
    return DecisionTreeClassifier(
        min_samples_leaf=min_leaf,
        min_samples_split=3 * min_leaf,
        max_depth=_CART_MAXDEPTH,
        min_impurity_decrease=alpha,
        ccp_alpha=alpha,
        random_state=seed,
    )


def _cart_alpha(c: float) -> float:
    # rpart's cp is relative: a split must lower the tree's lack of fit by at
    # least cp times the lack of fit of the root. sklearn states the same rule
    # in absolute units of Σ_leaves (N_t/N)·Gini_t (per split for
    # min_impurity_decrease, per extra leaf for ccp_alpha). The root's
    # weighted Gini is 2c(1 − c), so alpha = cp · 2c(1 − c) is the same
    # relative threshold. Close, not exact: rpart measures lack of fit for
    # pruning by misclassification, which sklearn cannot, so this tree may
    # keep a few more splits than synthpop's.
    return _CART_CP * 2.0 * c * (1.0 - c)


# Copies of the design matrix alive at once while fitting (see _propensity's cost check).
_COPIES = 4


def _pmse(scores: np.ndarray, c: float) -> float:
    return float(np.mean((scores - c) ** 2))


def propensity_metrics(
    real: pd.DataFrame,
    synth: pd.DataFrame,
    *,
    model: str = "logit",
    interactions: bool = False,
    seed: int | np.random.Generator | None = None,
    categorical: Iterable[str] | None = None,
    max_rows: int = constraints.PROPENSITY_MAX_ROWS,
    permutations: int = 20,
    holdout: float = 0.0,
) -> PropensityResult:
    """Propensity-score utility (pMSE, pMSE ratio, SPECKS, AUC).

    Parameters
    ----------
    real, synth : DataFrame
        Confidential and synthetic data with the same columns. Numeric
        columns may hold NaN (mean-imputed, with a missing indicator);
        categorical NaN is a level of its own.
    model : {"logit", "cart"}, default "logit"
        Discriminator. ``"logit"``: logistic regression by unpenalised
        maximum likelihood. ``"cart"``: a classification tree regularised
        as synthpop's (cp = 0.001, at least 5 rows per leaf).
    interactions : bool, default False
        ``"logit"``: add all pairwise products of main-effect columns (a
        main-effects model cannot see associations the synthesis lost).
        Ignored for ``"cart"``, whose splits find interactions themselves.
    seed : int, Generator or None, default None
        Seeds the subsample, the CART tie-breaking and the label
        permutations.
    categorical : iterable of str, optional
        Numeric columns to treat as categorical (integer codes).
    max_rows : int, default constraints.PROPENSITY_MAX_ROWS
        Cap on N. Above it each group is subsampled in proportion to its
        size; ``n_used`` reports the rows used. Must be at least 2.
    permutations : int, default 20
        ``"cart"`` only: label permutations averaged for the null pMSE.
        Must be at least 1.
    holdout : float, default 0
        Share of the rows (after ``max_rows``) held out of the fit, drawn
        within each group so c is kept; the model is fitted on the rest and
        pMSE, SPECKS and AUC are computed on the held-out rows only, so a
        discriminator that memorises rows gains nothing. The logit null
        then uses N = rows fitted (the fitted probabilities' spread is set
        by them, and at new rows from the same distribution it is the same
        to first order); the CART null permutes the training labels and
        scores the held-out rows. 0 (default) scores the rows fitted, as
        Snoke et al. do. Must be in [0, 0.9].

    Returns
    -------
    PropensityResult

    Raises
    ------
    TypeError
        If ``real`` or ``synth`` is not a DataFrame.
    ValueError
        For an unknown ``model`` or out-of-range options; a
        :class:`~dpsynth_core.errors.DataError` when the frames are empty
        or their columns differ.

    References
    ----------
    Snoke, J., Raab, G. M., Nowok, B., Dibben, C. and Slavkovic, A. (2018).
    General and specific utility measures for synthetic data. JRSS A 181(3).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> real = pd.DataFrame({"x": rng.normal(size=500)})
    >>> synth = pd.DataFrame({"x": rng.normal(1.0, size=500)})
    >>> res = propensity_metrics(real, synth, seed=0)
    >>> res.n_params, res.n_used
    (2, 1000)
    >>> bool(res.auc > 0.7)
    True
    """
    if model not in _MODELS:
        raise ValueError(f"model must be one of {_MODELS}, got {model!r}")
    if isinstance(max_rows, bool) or not isinstance(max_rows, (int, np.integer)):
        raise TypeError(f"max_rows must be an int, got {type(max_rows).__name__}")
    if max_rows < 2:
        raise ValueError(f"max_rows must be at least 2, got {max_rows}")
    if isinstance(permutations, bool) or not isinstance(permutations, (int, np.integer)):
        raise TypeError(f"permutations must be an int, got {type(permutations).__name__}")
    if permutations < 1:
        raise ValueError(f"permutations must be at least 1, got {permutations}")
    if isinstance(holdout, bool) or not isinstance(holdout, (int, float, np.floating)):
        raise TypeError(f"holdout must be a float, got {type(holdout).__name__}")
    if not 0.0 <= holdout <= 0.9:
        raise ValueError(f"holdout must be a share in [0, 0.9], got {holdout}")
    synth = _check_frames(real, synth)
    # One BLAS thread: on 10^5 x 25 products synchronisation costs more than
    # a second core saves, and when the app serves several sessions on two
    # cores oversubscribed threads made a 0.2 s fit take seconds.
    with threadpool_limits(limits=1, user_api="blas"):
        return _propensity(
            real,
            synth,
            model=model,
            interactions=interactions,
            rng=np.random.default_rng(seed),
            categorical=categorical,
            max_rows=int(max_rows),
            permutations=int(permutations),
            holdout=float(holdout),
        )


def _propensity(
    real: pd.DataFrame,
    synth: pd.DataFrame,
    *,
    model: str,
    interactions: bool,
    rng: np.random.Generator,
    categorical: Iterable[str] | None,
    max_rows: int,
    permutations: int,
    holdout: float = 0.0,
) -> PropensityResult:
    """The work of :func:`propensity_metrics`, after its checks: the stacked design, the model's scores and
    its null pMSE, then the measures. ``rng`` is drawn in that order (subsample, holdout, trees)."""
    interactions = interactions and model == "logit"
    rows = _stacked_rows(real, synth, model=model, interactions=interactions, rng=rng, categorical=categorical,
                         max_rows=max_rows, holdout=holdout)
    design, t = rows.design, rows.labels
    if holdout > 0:
        fit_rows, score_rows = _holdout_split(t, holdout, rng)
        # A rare dummy can be constant among the rows fitted.
        design = design.take(independent_columns(design.X[fit_rows]))
        X_fit, t_fit, X_score, t_score = design.X[fit_rows], t[fit_rows], design.X[score_rows], t[score_rows]
    else:
        X_fit = X_score = design.X
        t_fit = t_score = t
        score_rows = None
    c = float(t_fit.mean())
    if model == "logit":
        scores, coef, converged = _fit_logit(X_fit, t_fit, X_score)
        n_params = design.n_columns + 1
        pmse_null = (n_params - 1) * (1.0 - c) ** 2 * c / len(t_fit)
        # Columns are standardised, so |coef| is comparable across terms.
        importance = pd.Series(np.abs(coef), index=list(design.names), dtype=float)
    else:
        scores, n_params, importance, pmse_null = _cart_scores(design, X_fit, t_fit, X_score, c, rng, permutations)
        converged = True
    pmse = _pmse(scores, c)
    real_scores, synth_scores = scores[t_score == 0], scores[t_score == 1]
    return PropensityResult(
        pmse=pmse,
        pmse_null=float(pmse_null),
        pmse_ratio=_pmse_ratio(pmse, pmse_null, model=model, n_params=n_params),
        specks=ks_statistic(real_scores, synth_scores),
        auc=float(roc_auc_score(t_score, scores)),
        scores=scores,
        labels=t_score,
        n_params=int(n_params),
        n_used=len(t),
        model=model,
        terms=design.names,
        importance=importance.sort_values(ascending=False, kind="stable"),
        converged=bool(converged),
        interactions=bool(interactions),
        holdout=float(holdout),
        n_fit=len(t_fit),
        score_rows=score_rows,
        reductions=rows.reductions,
    )


@dataclass(frozen=True)
class _Stacked:
    """The rows the discriminator sees: their design, their labels (0 real, 1 synthetic) and the
    sentences saying how the data were reduced to them."""

    design: Design
    labels: np.ndarray
    reductions: tuple[str, ...]


def _stacked_rows(real: pd.DataFrame, synth: pd.DataFrame, *, model: str, interactions: bool,
                  rng: np.random.Generator, categorical: Iterable[str] | None, max_rows: int,
                  holdout: float) -> _Stacked:
    """Real and synthetic rows stacked (a random subsample of each beyond ``max_rows``, or beyond what
    the memory budget allows) and their design."""
    kinds = column_kinds([real, synth], list(real.columns), categorical=categorical)
    max_terms = constraints.PROPENSITY_MAX_TERMS
    reductions = []
    # Cost check before any matrix is built: the design and its copies (the column list, the
    # stacked matrix, the centred one, the solver's) take about _COPIES × 8 bytes a cell.
    terms = max_terms if interactions else min(main_effect_count(pd.concat([real, synth]), kinds), max_terms)
    budget_rows = max(int(constraints.MEMORY_BUDGET_BYTES // (_COPIES * 8 * max(terms, 1))), 2)
    if budget_rows < min(max_rows, len(real) + len(synth)):
        max_rows = budget_rows
        reductions.append(f"Rows subsampled: the model is fitted on {budget_rows:,} rows drawn at random, so its "
                          f"{terms:,} terms stay within the {constraints.MEMORY_BUDGET_BYTES / 1e9:g} GB memory "
                          "budget of one request.")
    idx_real, idx_synth = _subsample(len(real), len(synth), max_rows, rng)
    stacked = pd.concat([real.iloc[idx_real], synth.iloc[idx_synth]], ignore_index=True)
    labels = np.r_[np.zeros(len(idx_real), dtype=int), np.ones(len(idx_synth), dtype=int)]
    design = propensity_design(stacked, kinds=kinds, interactions=interactions, max_terms=max_terms)
    return _Stacked(design, labels, tuple(design.reductions) + tuple(reductions))


def _cart_scores(design: Design, X_fit, t_fit, X_score, c: float, rng: np.random.Generator,
                 permutations: int) -> tuple[np.ndarray, int, pd.Series, float]:
    """A CART discriminator's scores, leaves and importances, and its null pMSE: the mean pMSE of trees
    grown on ``permutations`` shufflings of the labels."""
    alpha = _cart_alpha(c)
    min_leaf = constraints.CART_MIN_LEAF
    tree = _cart(min_leaf, alpha, int(rng.integers(2**31 - 1)))
    if design.n_columns:
        tree.fit(X_fit, t_fit)
        scores = tree.predict_proba(X_score)[:, 1]
        n_params = int(tree.get_n_leaves())
        importance = pd.Series(tree.feature_importances_, index=list(design.names), dtype=float)
    else:
        scores = np.full(len(X_score), c)
        n_params = 1
        importance = pd.Series(dtype=float)
    null = []
    for _ in range(permutations if design.n_columns else 0):
        shuffled = rng.permutation(t_fit)
        perm_tree = _cart(min_leaf, alpha, int(rng.integers(2**31 - 1)))
        perm_tree.fit(X_fit, shuffled)
        null.append(_pmse(perm_tree.predict_proba(X_score)[:, 1], c))
    return scores, n_params, importance, float(np.mean(null)) if null else 0.0


def _pmse_ratio(pmse: float, pmse_null: float, *, model: str, n_params: int) -> float:
    """pMSE over its null; the limits where the null is zero (:attr:`PropensityResult.ratio_note` words them)."""
    if pmse_null > 0:
        return float(pmse / pmse_null)
    if model == "cart" and n_params == 1:
        # No split on the true labels nor on permuted ones: the tree sees the two datasets as
        # one, the best case, so the ratio is what "indistinguishable" means (ratio_note says so).
        return 1.0
    # A zero null means no model could split permuted labels (or there is no usable column): any
    # structure found is infinitely above it.
    return float("inf") if pmse > 0 else float("nan")


def _holdout_split(t: np.ndarray, share: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(rows to fit, rows to score): ``share`` of each group held out, at least one row each side."""
    fit, score = [], []
    for label in (0, 1):
        rows = np.flatnonzero(t == label)
        if rows.size < 2:
            raise DataError("Too few rows to hold some out: each of real and synthetic needs at least 2.")
        k = min(max(int(round(share * rows.size)), 1), rows.size - 1)
        held = np.zeros(rows.size, dtype=bool)
        held[rng.choice(rows.size, size=k, replace=False)] = True
        fit.append(rows[~held])
        score.append(rows[held])
    return np.concatenate(fit), np.concatenate(score)
