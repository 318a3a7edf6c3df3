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

import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.tree import DecisionTreeClassifier
from threadpoolctl import threadpool_limits

from .. import constraints
from ..errors import DataError
from ..metric_info import MetricInfo, register
from .design import Design, column_kinds, propensity_design
from .univariate import ks_statistic

__all__ = ["PropensityResult", "propensity_metrics"]

_MODELS = ("logit", "cart")

# synthpop's utility.gen defaults for its CART discriminator (rpart).
_CART_CP = 1e-3
_CART_MAXDEPTH = 30  # rpart.control's maxdepth

register(
    MetricInfo(
        name="pmse",
        label="pMSE",
        kind="utility",
        goal="minimize",
        lower=0.0,
        upper=0.25,
        best=0.0,
        reading="Mean squared distance of the propensity scores from n_s/N; 0 means "
        "the discriminator cannot tell real from synthetic rows.",
    )
)
register(
    MetricInfo(
        name="pmse_ratio",
        label="pMSE ratio",
        kind="utility",
        goal="target",
        lower=0.0,
        upper=float("inf"),
        best=1.0,
        reading="pMSE divided by its value when real and synthetic come from the same "
        "distribution; near 1 is as good as it gets, large values mean distinguishable.",
    )
)
register(
    MetricInfo(
        name="specks",
        label="SPECKS",
        kind="utility",
        goal="minimize",
        lower=0.0,
        upper=1.0,
        best=0.0,
        reading="Kolmogorov-Smirnov distance between the propensity scores of real and "
        "synthetic rows; 0 means the same score distribution.",
    )
)
register(
    MetricInfo(
        name="auc",
        label="Propensity AUC",
        kind="utility",
        goal="target",
        lower=0.0,
        upper=1.0,
        best=0.5,
        reading="How often the discriminator ranks a synthetic row above a real one; "
        "0.5 is chance (indistinguishable), 1 is perfect separation.",
    )
)


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
        formula at c = ½; METHODS.md §3 says plain mean, so that is what is
        computed here.
    pmse_ratio : float
        ``pmse / pmse_null``. When the null is 0 (no usable column, or a
        tree that never splits permuted labels): inf if ``pmse > 0``, else
        NaN.
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
        False when the logit fit hit its iteration cap, which happens when
        the two datasets are (almost) perfectly separable; the scores are
        then still ordered correctly, so AUC and SPECKS stay meaningful.
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


def _fit_logit(X: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """Unpenalised logistic MLE: fitted probabilities, coefficients, converged."""
    if X.shape[1] == 0:
        # Intercept only: the MLE is the sample share, whatever the data.
        return np.full(len(t), t.mean()), np.zeros(0), True
    # C = inf is sklearn's spelling of "no penalty" since penalty=None was
    # deprecated (1.8). Newton-Cholesky converges in a handful of steps on a
    # few dozen columns; tol is tight because the null pMSE formula assumes
    # the exact MLE.
    model = LogisticRegression(C=np.inf, solver="newton-cholesky", tol=1e-8, max_iter=100)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, t)
    warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    converged = not warned and int(np.max(model.n_iter_)) < model.max_iter
    return model.predict_proba(X)[:, 1], model.coef_.ravel(), converged


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
) -> PropensityResult:
    """The work of :func:`propensity_metrics`, after its checks."""
    idx_real, idx_synth = _subsample(len(real), len(synth), max_rows, rng)
    stacked = pd.concat([real.iloc[idx_real], synth.iloc[idx_synth]], ignore_index=True)
    t = np.r_[np.zeros(len(idx_real), dtype=int), np.ones(len(idx_synth), dtype=int)]
    n_used = len(t)
    c = len(idx_synth) / n_used

    kinds = column_kinds([real, synth], list(real.columns), categorical=categorical)
    design: Design = propensity_design(
        stacked, kinds=kinds, interactions=interactions and model == "logit"
    )

    converged = True
    if model == "logit":
        scores, coef, converged = _fit_logit(design.X, t)
        n_params = design.n_columns + 1
        pmse_null = (n_params - 1) * (1.0 - c) ** 2 * c / n_used
        # Columns are standardised, so |coef| is comparable across terms.
        importance = pd.Series(np.abs(coef), index=list(design.names), dtype=float)
    else:
        alpha = _cart_alpha(c)
        min_leaf = constraints.CART_MIN_LEAF
        tree = _cart(min_leaf, alpha, int(rng.integers(2**31 - 1)))
        if design.n_columns:
            tree.fit(design.X, t)
            scores = tree.predict_proba(design.X)[:, 1]
            n_params = int(tree.get_n_leaves())
            importance = pd.Series(
                tree.feature_importances_, index=list(design.names), dtype=float
            )
        else:
            scores = np.full(n_used, c)
            n_params = 1
            importance = pd.Series(dtype=float)
        null = []
        for _ in range(permutations if design.n_columns else 0):
            shuffled = rng.permutation(t)
            perm_tree = _cart(min_leaf, alpha, int(rng.integers(2**31 - 1)))
            perm_tree.fit(design.X, shuffled)
            null.append(_pmse(perm_tree.predict_proba(design.X)[:, 1], c))
        pmse_null = float(np.mean(null)) if null else 0.0

    pmse = _pmse(scores, c)
    if pmse_null > 0:
        ratio = pmse / pmse_null
    else:
        # A zero null means no model could split permuted labels (or there
        # is no usable column): any structure found is infinitely above it.
        ratio = float("inf") if pmse > 0 else float("nan")
    real_scores, synth_scores = scores[t == 0], scores[t == 1]
    return PropensityResult(
        pmse=pmse,
        pmse_null=float(pmse_null),
        pmse_ratio=float(ratio),
        specks=ks_statistic(real_scores, synth_scores),
        auc=float(roc_auc_score(t, scores)),
        scores=scores,
        labels=t,
        n_params=int(n_params),
        n_used=int(n_used),
        model=model,
        terms=design.names,
        importance=importance.sort_values(ascending=False, kind="stable"),
        converged=bool(converged),
    )
