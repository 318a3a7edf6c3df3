"""Specific utility: does a regression fitted on the synthetic data agree?

The same model is fitted on both datasets and each coefficient's confidence
intervals are compared by their overlap (Karr et al. 2006), by sign,
significance and overlap together (SSO, Barrientos et al. 2021) and by the
PeGS paper's regression distance Σ |(β_s − β_o)/β_o| (Park & Ghosh 2014).
Given m synthetic implicates, the synthetic estimate and interval come from
the combining rules of :mod:`.combining`.

References
----------
Karr, A. F., Kohnen, C. N., Oganian, A., Reiter, J. P. and Sanil, A. P.
(2006). A framework for evaluating the utility of data altered to protect
confidentiality. The American Statistician 60(3), 224-232.

Barrientos, A. F., Williams, A. R., Snoke, J. and Bowen, C. M. K. (2021).
A feasibility study of differentially private summary statistics and
regression analyses with evaluations on administrative and survey data.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import linalg, special, stats
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

from .. import constraints
from ..errors import DataError
from ..metric_info import Metric, register
from .combining import COMBINING_CAVEAT, combine_implicates
from .design import column_kinds, factorize_labels, factorized_once, independent_columns, level_codes

__all__ = ["RegressionOverlap", "ci_overlap", "regression_ci_overlap"]

_FAMILIES = ("linear", "logistic")
INTERCEPT = "(Intercept)"

register(
    Metric(
        name="ci_overlap_mean",
        label="Mean CI overlap",
        kind="utility",
        goal="maximize",
        lower=float("-inf"),
        upper=1.0,
        best=1.0,
        reading="Average overlap of the coefficients' confidence intervals fitted on "
        "real and on synthetic data; 1 identical, 0 touching, negative a gap.",
        section="regression",
        compute=lambda ctx: _fit_of(ctx, "mean_overlap"),
        note=lambda ctx, value: _model_note(ctx, value),
    )
)
register(
    Metric(
        name="sso",
        label="SSO share",
        kind="utility",
        goal="maximize",
        lower=0.0,
        upper=1.0,
        best=1.0,
        reading="Share of coefficients with the same sign, the same significance and "
        "overlapping intervals on real and synthetic data (Barrientos et al. 2021); 1 all agree.",
        section="regression",
        compute=lambda ctx: _fit_of(ctx, "sso"),
        note=lambda ctx, value: _model_note(ctx, value),
    )
)
register(
    Metric(
        name="coef_distance",
        label="Regression distance (PeGS)",
        kind="utility",
        goal="minimize",
        lower=0.0,
        upper=float("inf"),
        best=0.0,
        reading="Sum over coefficients of |synthetic − real| / |real| (Park & Ghosh); 0 same "
        "coefficients, 1 per coefficient is a 100% error.",
        section="regression",
        compute=lambda ctx: _fit_of(ctx, "coef_distance"),
        note=lambda ctx, value: _model_note(ctx, value, "No coefficient is estimable and non-zero on the real data."),
    )
)


def ci_overlap(lo_a, hi_a, lo_b, hi_b):
    """Confidence-interval overlap of Karr et al. (2006).

    With L = max(lo_a, lo_b) and U = min(hi_a, hi_b),
    J = ½ [(U − L)/(hi_a − lo_a) + (U − L)/(hi_b − lo_b)].

    Parameters
    ----------
    lo_a, hi_a : float or array-like
        Interval from the confidential data (lo ≤ hi).
    lo_b, hi_b : float or array-like
        Interval from the synthetic data (lo ≤ hi). Arrays broadcast.

    Returns
    -------
    float or ndarray
        1 for identical intervals, 0 when they touch, negative when there
        is a gap between them (unbounded below). A float when every input
        is a scalar. NaN where an input is NaN or an interval has zero width.

    Raises
    ------
    ValueError
        If a lower end is above its upper end.

    Examples
    --------
    >>> ci_overlap(0.0, 2.0, 1.0, 3.0)
    0.5
    >>> ci_overlap(0.0, 1.0, 2.0, 3.0)
    -1.0
    """
    lo_a, hi_a, lo_b, hi_b = np.broadcast_arrays(
        *(np.asarray(v, dtype=float) for v in (lo_a, hi_a, lo_b, hi_b))
    )
    # NaN compares False, so it passes this check and comes out as NaN.
    if np.any(lo_a > hi_a) or np.any(lo_b > hi_b):
        raise ValueError("each interval needs lo <= hi; got an interval with lo > hi")
    lower = np.maximum(lo_a, lo_b)
    upper = np.minimum(hi_a, hi_b)
    with np.errstate(divide="ignore", invalid="ignore"):
        j = 0.5 * ((upper - lower) / (hi_a - lo_a) + (upper - lower) / (hi_b - lo_b))
    # A zero-width interval gives ±inf or 0/0; neither is an overlap.
    j = np.where(np.isfinite(j), j, np.nan)
    return float(j) if j.ndim == 0 else j


@dataclass(frozen=True)
class RegressionOverlap:
    """One regression fitted on both datasets, coefficient by coefficient.

    Attributes
    ----------
    table : DataFrame
        One row per coefficient (intercept first): ``term``, ``est_real``,
        ``lo_real``, ``hi_real``, ``est_synth``, ``lo_synth``,
        ``hi_synth``, ``overlap`` (:func:`ci_overlap`), ``sign_match`` and
        ``sig_match`` (nullable booleans: NA when a coefficient cannot be
        estimated on one dataset). Significant means the interval excludes 0.
    mean_overlap : float
        Mean of ``overlap`` over the coefficients estimable on both sides.
    sso : float
        Share of all coefficients with the same sign, the same significance
        and overlapping intervals (overlap > 0); a coefficient not estimable
        on one side counts as a failure.
    family : str
        ``"linear"`` or ``"logistic"``.
    level : float
        Confidence level of the intervals.
    n_real, n_synth : int
        Rows fitted from each dataset (complete cases, or a random subsample
        of them beyond ``max_cells``); with m implicates, ``n_synth`` is the
        mean over them, rounded.
    notes : tuple of str
        Sentences for the user about rows dropped or fits in trouble.
    coef_distance : float
        Σ |(β_s − β_o)/β_o| over the coefficients estimable on both sides
        with β_o ≠ 0 (the PeGS paper's regression distance; intercept
        included). Per coefficient in the table's ``rel_diff``.
    m : int
        Number of synthetic implicates.
    combining : DataFrame or None
        With m ≥ 2, the combination per term (``estimate``, ``between_b``,
        ``within_v``, ``raw_variance``, ``variance``, ``df``, ``adjusted``,
        ``lo``, ``hi``); see :func:`~dpsynth_core.utility.combining.combine_implicates`.
    rule : str or None
        ``"fully"`` or ``"partially"`` with m ≥ 2.
    """

    table: pd.DataFrame
    mean_overlap: float
    sso: float
    family: str
    level: float
    n_real: int
    n_synth: int
    notes: tuple[str, ...] = field(default=())
    coef_distance: float = float("nan")
    m: int = 1
    combining: pd.DataFrame | None = field(default=None, repr=False)
    rule: str | None = None


@dataclass(frozen=True)
class _Fit:
    est: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    note: str | None = None
    se: np.ndarray | None = None


def _nan_fit(p: int, note: str | None) -> _Fit:
    nan = np.full(p, np.nan)
    return _Fit(nan, nan.copy(), nan.copy(), note, nan.copy())


def _standardise(X: np.ndarray, y: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Z = [1, (X − m)/s] (then y, when given) in Fortran order, and A with β = A b (b fitted on Z, β on [1, X]).

    Fitting on Z keeps the least squares and the Newton steps well
    conditioned when columns are on very different scales (grams vs
    millimetres); the coefficients and their covariance are mapped back
    exactly. Fortran order lets LAPACK factorise Z in place, without a copy
    of a million-row design.
    """
    n, p = X.shape
    mean = X.mean(axis=0)
    Z = np.empty((n, p + 1 + (y is not None)), order="F")
    Z[:, 0] = 1.0
    centred = Z[:, 1:p + 1]
    np.subtract(X, mean, out=centred)
    # X.std(axis=0) from the centred columns already written (the same deviations, squared and summed
    # column by column in the same order), rather than from a second n × p array of deviations.
    sd = np.sqrt(np.array([np.sum(z * z) for z in centred.T]) / n)
    sd = np.where(sd > 0, sd, 1.0)
    centred /= sd
    if y is not None:
        Z[:, -1] = y
    A = np.eye(p + 1)
    A[0, 1:] = -mean / sd
    A[1:, 1:] = np.diag(1.0 / sd)
    return Z, A


# Estimates, their standard errors, a note for the user, and the quantile of
# the reference distribution (t or normal) for the interval.
_Estimates = tuple[np.ndarray, np.ndarray, str | None, float]


def _fit_linear(X: np.ndarray, y: np.ndarray, level: float) -> _Estimates:
    """OLS by a Householder QR of [Z, y] that forms R alone, never Q (the n × p factor a full QR builds).

    R's last column holds Qᵀy and its corner |residual|: b = R⁻¹ Qᵀy and the residual sum of squares
    come from the triangle, as stable as a full QR at a fraction of its time and memory.
    """
    Zy, A = _standardise(X, y)
    n, p = Zy.shape[0], Zy.shape[1] - 1
    df = n - p
    # LAPACK's geqrf itself: scipy's qr(mode="r") would also copy the n-row upper triangle out of the
    # factorised matrix, which cost 4 times the factorisation on a million rows.
    geqrf = linalg.get_lapack_funcs("geqrf", (Zy,))
    r = np.triu(geqrf(Zy, overwrite_a=True)[0][:p + 1])
    b = linalg.solve_triangular(r[:p, :p], r[:p, p])
    if df <= 0:
        return A @ b, np.full(p, np.nan), "fewer rows than coefficients: no interval", np.nan
    sigma2 = r[p, p] ** 2 / df
    r_inv = linalg.solve_triangular(r[:p, :p], np.eye(p))
    cov = A @ (sigma2 * r_inv @ r_inv.T) @ A.T
    return A @ b, np.sqrt(np.diag(cov)), None, stats.t.ppf(0.5 + level / 2.0, df)


def _fit_logistic(X: np.ndarray, y: np.ndarray, level: float) -> _Estimates:
    Z, A = _standardise(X)
    p = Z.shape[1]
    if np.unique(y).size < 2:
        return np.full(p, np.nan), np.full(p, np.nan), "the outcome takes one value only", np.nan
    note = None
    if p == 1:
        # Intercept only: the MLE is the logit of the sample share.
        share = y.mean()
        b = np.array([np.log(share / (1.0 - share))])
    else:
        # C = inf: unpenalised MLE (penalty=None is deprecated since 1.8).
        model = LogisticRegression(C=np.inf, solver="newton-cholesky", tol=1e-10, max_iter=200)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model.fit(Z[:, 1:], y)
        if any(issubclass(w.category, ConvergenceWarning) for w in caught):
            note = "the logistic fit did not converge (outcome almost perfectly predicted?)"
        b = np.r_[model.intercept_, model.coef_.ravel()]
    # expit, not 1/(1 + exp(-η)): separated data push |η| past exp's range.
    prob = special.expit(Z @ b)
    info = Z.T @ (Z * (prob * (1.0 - prob))[:, None])
    try:
        cov_z = linalg.inv(info)
    except linalg.LinAlgError:
        return A @ b, np.full(p, np.nan), "singular information matrix: no interval", np.nan
    cov = A @ cov_z @ A.T
    return A @ b, np.sqrt(np.diag(cov)), note, stats.norm.ppf(0.5 + level / 2.0)


def _fit(X: np.ndarray, y: np.ndarray, family: str, level: float) -> _Fit:
    """Fit on [1, X]; coefficients of columns dependent on others are NaN."""
    p = X.shape[1] + 1
    if len(y) == 0:
        return _nan_fit(p, "no complete rows")
    keep = independent_columns(X)
    fitter = _fit_linear if family == "linear" else _fit_logistic
    est_k, se_k, note, quantile = fitter(X if keep.size == X.shape[1] else X[:, keep], y, level)  # no copy
    cols = np.r_[0, keep + 1]
    est, se = np.full(p, np.nan), np.full(p, np.nan)
    est[cols], se[cols] = est_k, se_k
    half = quantile * se
    return _Fit(est, est - half, est + half, note, se)


def _row_budget(data: dict[str, pd.DataFrame], n_terms: int, max_cells: int, seed: int | None,
                notes: list[str]) -> dict[str, np.ndarray]:
    """The rows of each dataset a fit uses: all of them, or a random subsample when rows × coefficients
    would pass ``max_cells`` (memory and time grow with both), with a note saying so in ``notes``."""
    cap = max(max_cells // n_terms, 1)
    rng = np.random.default_rng(seed)
    rows = {name: np.sort(rng.choice(len(frame), cap, replace=False)) if len(frame) > cap else np.arange(len(frame))
            for name, frame in data.items()}
    over = [f"{len(frame):,} {name}" for name, frame in data.items() if len(frame) > cap]
    if over:
        notes.append(f"Fitted on a random subsample of {cap:,} rows of each dataset with more (of {', '.join(over)} "
                     f"rows): {n_terms} coefficients on every row would pass the {max_cells:,} design cells "
                     "(rows × coefficients) one fit may use.")
    return rows


def regression_outcomes(schema, columns: Sequence[str]) -> dict[str, str]:
    """The columns of ``columns`` a regression can explain, each with the family fitted to it: the numeric
    columns (``"linear"``), then the categorical columns of two declared levels (``"logistic"``), each
    group in the order of ``columns``. A column of more levels is no outcome."""
    numeric = {c: "linear" for c in columns if schema[c].kind == "numeric"}
    binary = {c: "logistic" for c in columns
              if schema[c].kind == "categorical" and len(schema[c].categories) == 2}
    return {**numeric, **binary}


def regression_ci_overlap(
    real: pd.DataFrame,
    synth: pd.DataFrame | Sequence[pd.DataFrame],
    outcome: str,
    predictors: Sequence[str] | str,
    *,
    family: str = "linear",
    level: float = 0.95,
    categorical: Iterable[str] | None = None,
    partially_synthetic: bool = False,
    max_cells: int = constraints.REGRESSION_MAX_CELLS,
    seed: int | None = None,
) -> RegressionOverlap:
    """Compare one regression fitted on real and on synthetic data.

    Parameters
    ----------
    real : DataFrame
        Confidential data.
    synth : DataFrame or sequence of DataFrame
        Synthetic data, or m synthetic implicates (``Synthesis.implicates``).
        With m ≥ 2 the model is fitted on each implicate and the synthetic
        estimate and interval come from the combining rules
        (:func:`~dpsynth_core.utility.combining.combine_implicates`): Reiter
        (2002) for fully synthetic data, Reiter (2003) with
        ``partially_synthetic``.
    outcome : str
        Response column. Numeric for ``"linear"``. For ``"logistic"``:
        numeric coded 0/1, or categorical with two levels in the real data
        (the second in sorted order is 1).
    predictors : sequence of str or str
        Explanatory columns. Categorical ones enter as dummies for the
        levels seen in the real data, the first in sorted order dropped.
    family : {"linear", "logistic"}, default "linear"
        OLS with t intervals, or logistic regression by unpenalised maximum
        likelihood with Wald intervals from the inverse Fisher information.
    level : float, default 0.95
        Confidence level. Must be in (0, 1).
    categorical : iterable of str, optional
        Numeric predictors (or outcome) to treat as categorical.
    partially_synthetic : bool, default False
        The implicates keep some columns of the real data row for row (the
        ledger's ``kept_columns`` is not empty): use T_p. Ignored for m = 1.

    Returns
    -------
    RegressionOverlap

    Notes
    -----
    Rows with a missing value in the outcome or a predictor are dropped
    (complete cases), as are synthetic rows whose categorical value never
    occurs in the real data (no coefficient exists to compare them with);
    ``n_real``, ``n_synth`` and ``notes`` report it. A coefficient that
    cannot be estimated on one dataset (a level absent from the synthetic
    data, a predictor constant there) gets NaN estimates and overlap; with
    implicates, a coefficient not estimable on one of them is NaN.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=200)
    >>> real = pd.DataFrame({"x": x, "y": 1 + 2 * x + rng.normal(size=200)})
    >>> res = regression_ci_overlap(real, real, "y", ["x"])
    >>> res.mean_overlap, res.sso, res.coef_distance
    (1.0, 1.0, 0.0)
    """
    # One BLAS thread, as in propensity_metrics: a QR of 10^5 x 20 gains nothing
    # from a second core, and on a busy two-core server threads made it 5x slower.
    # A real categorical column is coded for its levels, then for its rows: hashed once for both.
    with threadpool_limits(limits=1, user_api="blas"), factorized_once():
        return _regression_ci_overlap(real, synth, outcome, predictors, family=family, level=level,
                                      categorical=categorical, partially_synthetic=partially_synthetic,
                                      max_cells=max_cells, seed=seed)


def _regression_ci_overlap(real, synth, outcome, predictors, *, family, level, categorical,
                           partially_synthetic, max_cells, seed) -> RegressionOverlap:
    """The work of :func:`regression_ci_overlap`, step by step: inputs checked, complete cases, the
    outcome's and the predictors' levels (from the real data), the design, one fit per dataset, the
    synthetic estimate (combined over implicates), and the comparison."""
    frames, predictors = _checked_frames(real, synth, outcome, predictors, family, level)
    names, m = list(frames), len(frames) - 1
    used = [outcome, *predictors]
    kinds = column_kinds(frames.values(), used, categorical=categorical)
    notes: list[str] = []
    data = _complete_cases(frames, used, kinds, notes)
    model = _Model.of(data, outcome, predictors, kinds, family)
    codes = model.codes_in_real_levels(data, notes)
    rows = _row_budget(data, len(model.terms), max_cells, seed, notes)
    fits = {}
    for name in names:
        X, y = model.design(data[name], codes[name], rows[name])
        fits[name] = _fit(X, y, family, level)
        _note_fit(fits[name], name, model.terms, len(y), notes)
    n_synth = int(round(np.mean([len(rows[name]) for name in names[1:]])))
    if m == 1:
        fs, combining, rule = fits["synth"], None, None
    else:
        fs, combining, rule = _combined(fits, names[1:], model.terms, partially_synthetic=partially_synthetic,
                                        n_real=len(rows["real"]), n_synth=n_synth, level=level, notes=notes)
    return _compared(fits["real"], fs, model.terms, family=family, level=level, n_real=len(rows["real"]),
                     n_synth=n_synth, notes=notes, m=m, combining=combining, rule=rule)


def _checked_frames(real, synth, outcome, predictors, family, level) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """The datasets by name ("real", then "synth" or "synth implicate i"), and the predictors as a list;
    raises for an argument no fit accepts."""
    synths = [synth] if isinstance(synth, pd.DataFrame) else list(synth) if synth is not None else []
    if not isinstance(real, pd.DataFrame):
        raise TypeError(f"real must be a pandas DataFrame, got {type(real).__name__}")
    if not synths:
        raise ValueError("synth must be a DataFrame or a non-empty sequence of DataFrames")
    for frame in synths:
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"synth must be a pandas DataFrame, got {type(frame).__name__}")
    if family not in _FAMILIES:
        raise ValueError(f"family must be one of {_FAMILIES}, got {family!r}")
    if isinstance(level, bool) or not isinstance(level, (int, float, np.floating)):
        raise TypeError(f"level must be a float, got {type(level).__name__}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    predictors = [predictors] if isinstance(predictors, str) else list(predictors)
    if outcome in predictors:
        raise ValueError(f"outcome {outcome!r} is also among the predictors")
    m = len(synths)
    names = ["real"] + (["synth"] if m == 1 else [f"synth implicate {i + 1}" for i in range(m)])
    frames = dict(zip(names, [real, *synths]))
    for name, frame in frames.items():
        missing = [c for c in [outcome, *predictors] if c not in frame.columns]
        if missing:
            raise ValueError(f"columns {missing} are not in the {name} data")
    return frames, predictors


def _complete_cases(frames: dict[str, pd.DataFrame], used: list[str], kinds: dict[str, str],
                    notes: list[str]) -> dict[str, pd.DataFrame]:
    """Each dataset's rows with every used column present, with a note per dataset that lost rows.

    A categorical NaN is missing here (unlike in the propensity model), since a regression on a
    "(missing)" level would not be the model the user asked for.
    """
    def complete(frame: pd.DataFrame) -> pd.DataFrame:
        ok = np.ones(len(frame), dtype=bool)
        for col in used:
            if kinds[col] == "numeric":
                ok &= np.isfinite(frame[col].to_numpy(dtype=float, na_value=np.nan))
            else:
                ok &= frame[col].notna().to_numpy()
        return frame[used] if ok.all() else frame.loc[ok, used]  # no copy of a million complete rows

    data = {name: complete(frame) for name, frame in frames.items()}
    for col in used:
        # Means and sums of squares of such numbers overflow: no fit is computable.
        if kinds[col] == "numeric" and any((f[col].abs() > constraints.MAX_ABS_VALUE).any() for f in data.values()):
            raise DataError(f"Column {col!r} holds numbers beyond ±{constraints.MAX_ABS_VALUE:g}, too large to fit "
                            "a regression on; rescale the column or choose other columns.")
    for name, frame in frames.items():
        dropped = len(frame) - len(data[name])
        if dropped:
            notes.append(f"{dropped} {name} rows with missing values were left out.")
    return data


@dataclass(frozen=True)
class _Model:
    """The regression's terms, with the levels of its categorical outcome and predictors read off the
    real data, so that every dataset's fit has the same terms."""

    outcome: str
    predictors: list[str]
    kinds: dict[str, str]
    y_levels: np.ndarray | None  # None: a numeric outcome (linear, or logistic coded 0/1)
    levels: dict[str, np.ndarray]  # each categorical predictor's levels, the first the reference
    terms: list[str]

    @classmethod
    def of(cls, data: dict[str, pd.DataFrame], outcome: str, predictors: list[str], kinds: dict[str, str],
           family: str) -> _Model:
        y_levels = _outcome_levels(data, outcome, kinds[outcome], family)
        levels = {col: factorize_labels(data["real"][col], missing=None)[1]
                  for col in predictors if kinds[col] == "categorical"}
        terms = [INTERCEPT]
        for col in predictors:
            if kinds[col] == "numeric":
                terms.append(col)
            else:
                terms.extend(f"{col}[T.{lev}]" for lev in levels[col][1:])
        return cls(outcome, predictors, kinds, y_levels, levels, terms)

    def codes_in_real_levels(self, data: dict[str, pd.DataFrame], notes: list[str]) -> dict[str, dict]:
        """Each categorical column of each dataset as codes into its real levels, found once; rows with a
        category the real data lacks are dropped from ``data`` (in place) with a note."""
        checks = dict(self.levels)
        if self.y_levels is not None:
            checks[self.outcome] = self.y_levels
        codes = {name: {col: level_codes(data[name][col], lev) for col, lev in checks.items()} for name in data}
        for name in data:
            ok = np.ones(len(data[name]), dtype=bool)
            for col in checks:
                ok &= codes[name][col] >= 0
            if not ok.all():
                notes.append(f"{int((~ok).sum())} {name} rows with categories absent from the real data were left out.")
                data[name] = data[name].loc[ok]
                codes[name] = {col: c[ok] for col, c in codes[name].items()}
        return codes

    def design(self, frame: pd.DataFrame, codes: dict[str, np.ndarray],
               kept: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The design without intercept of the rows ``kept``, written column by column in Fortran order
        (as the fit reads it), and the outcome."""
        X = np.empty((len(kept), len(self.terms) - 1), order="F")
        j = 0
        for col in self.predictors:
            if self.kinds[col] == "numeric":
                X[:, j] = frame[col].to_numpy(dtype=float)[kept]
                j += 1
            else:  # 0/1 indicators of every level but the first, the reference
                level_of_row = codes[col][kept]
                for level in range(1, len(self.levels[col])):
                    X[:, j] = level_of_row == level
                    j += 1
        if self.y_levels is None:
            y = frame[self.outcome].to_numpy(dtype=float)[kept]
        else:
            y = (codes[self.outcome][kept] == 1).astype(float)
        return X, y


def _outcome_levels(data: dict[str, pd.DataFrame], outcome: str, kind: str, family: str) -> np.ndarray | None:
    """The two levels of a categorical outcome of a logistic fit (the second is 1), None for a numeric
    outcome; raises for an outcome the family cannot fit."""
    if family == "linear":
        if kind != "numeric":
            raise DataError(f"A linear regression needs a numeric outcome; {outcome!r} is not.")
        return None
    if kind == "numeric":
        values = np.concatenate([f[outcome].to_numpy(dtype=float) for f in data.values()])
        if not np.isin(values, [0.0, 1.0]).all():
            raise DataError(f"A logistic regression needs a 0/1 or two-level outcome; {outcome!r} has other values. "
                            "Declare it categorical or recode it.")
        return None
    y_levels = factorize_labels(data["real"][outcome], missing=None)[1]
    if len(y_levels) != 2:
        raise DataError(f"A logistic regression needs an outcome with two levels; {outcome!r} has "
                        f"{len(y_levels)} in the real data.")
    return y_levels


def _note_fit(fit: _Fit, name: str, terms: list[str], rows: int, notes: list[str]) -> None:
    """A dataset's fit in words: its trouble, and the coefficients it cannot estimate."""
    label = name[0].upper() + name[1:]
    if fit.note:
        notes.append(f"{label} data: {fit.note}.")
    dropped = [t for t, e in zip(terms, fit.est) if np.isnan(e)]
    if dropped and rows:
        notes.append(f"{label} data cannot estimate {', '.join(dropped)} (level absent, constant or collinear).")


def _combined(fits: dict[str, _Fit], names: list[str], terms: list[str], *, partially_synthetic: bool, n_real: int,
              n_synth: int, level: float, notes: list[str]) -> tuple[_Fit, pd.DataFrame, str]:
    """The synthetic estimate and interval from m ≥ 2 implicates' fits by the combining rules."""
    est = np.vstack([fits[name].est for name in names])
    se = np.vstack([fits[name].se for name in names])
    comb = combine_implicates(est, se**2, partially_synthetic=partially_synthetic, n_real=n_real,
                              n_synth=max(n_synth, 1), level=level)
    notes.append(f"Synthetic estimates and intervals combine {len(names)} implicates "
                 f"({'partially' if partially_synthetic else 'fully'} synthetic rule, Reiter "
                 f"{'2003' if partially_synthetic else '2002'}). {COMBINING_CAVEAT}")
    if comb.adjusted.any():
        notes.append(f"T_f < 0 for {int(comb.adjusted.sum())} coefficient(s): the adjusted T_f* "
                     "with a normal reference was used.")
    fit = _Fit(comb.estimate, comb.lo, comb.hi, None, np.sqrt(comb.variance))
    return fit, comb.table(index=pd.Index(terms, name="term")), comb.rule


def _compared(fr: _Fit, fs: _Fit, terms: list[str], **fields) -> RegressionOverlap:
    """The real and synthetic fits compared coefficient by coefficient (the table and its summaries)."""
    overlap = np.atleast_1d(ci_overlap(fr.lo, fr.hi, fs.lo, fs.hi))
    defined = ~(np.isnan(fr.est) | np.isnan(fs.est))
    sig_real = (fr.lo > 0) | (fr.hi < 0)
    sig_synth = (fs.lo > 0) | (fs.hi < 0)
    sign_match = pd.array(np.sign(fr.est) == np.sign(fs.est), dtype="boolean")
    sig_match = pd.array(sig_real == sig_synth, dtype="boolean")
    sign_match[~defined] = pd.NA
    sig_match[~defined] = pd.NA
    # A missing interval (e.g. too few rows) leaves significance undefined.
    sig_match[np.isnan(overlap) & defined] = pd.NA
    with np.errstate(divide="ignore", invalid="ignore"):
        rel_diff = np.abs(fs.est - fr.est) / np.abs(fr.est)
    rel_diff = np.where(np.isfinite(rel_diff), rel_diff, np.nan)
    table = pd.DataFrame({"term": pd.array(terms, dtype="str"), "est_real": fr.est, "lo_real": fr.lo,
                          "hi_real": fr.hi, "est_synth": fs.est, "lo_synth": fs.lo, "hi_synth": fs.hi,
                          "overlap": overlap, "sign_match": sign_match, "sig_match": sig_match, "rel_diff": rel_diff})
    finite = overlap[np.isfinite(overlap)]
    success = (sign_match.fillna(False).to_numpy(dtype=bool) & sig_match.fillna(False).to_numpy(dtype=bool)
               & (np.nan_to_num(overlap, nan=-1.0) > 0))
    distance = rel_diff[~np.isnan(rel_diff)]
    return RegressionOverlap(table=table, mean_overlap=float(finite.mean()) if finite.size else float("nan"),
                             sso=float(success.mean()), notes=tuple(fields.pop("notes")),
                             coef_distance=float(distance.sum()) if distance.size else float("nan"),
                             level=float(fields.pop("level")), **fields)


# ------------------------------------------------------------ metric context


def default_model(columns: Sequence[str], schema) -> tuple[str, list[str], str] | None:
    """The regression the Compare page opens on: ``(outcome, predictors, family)``, or None.

    The first outcome of :func:`regression_outcomes`, explained by the first three other columns.
    """
    outcomes = regression_outcomes(schema, columns)
    if not outcomes or len(columns) < 2:
        return None
    outcome = next(iter(outcomes))
    return outcome, [c for c in columns if c != outcome][:3], outcomes[outcome]


def regression_of(ctx) -> RegressionOverlap | None:
    """The regression the three regression metrics of one metric context read: the Compare page's
    (in ``ctx.shared["regression"]``), else :func:`default_model` of the schema; None without one."""
    def fit():
        model = default_model(list(ctx.real.columns), ctx.schema) if ctx.schema is not None else None
        if model is None:
            return None
        outcome, predictors, family = model
        try:
            return regression_ci_overlap(ctx.real, ctx.synth, outcome, predictors, family=family,
                                         categorical=ctx.categorical, seed=ctx.seed)
        except DataError as err:
            return err
    return ctx.cached("regression", fit)


def _fit_of(ctx, attr: str) -> float:
    reg = regression_of(ctx)
    return getattr(reg, attr) if isinstance(reg, RegressionOverlap) else float("nan")


def _model_note(ctx, value: float, missing: str | None = None) -> str | None:
    if value is not None and math.isfinite(value):
        return None
    reg = regression_of(ctx)
    if isinstance(reg, DataError):
        return str(reg)
    if reg is None:
        return "No numeric or two-level column to use as an outcome (a schema declares them)."
    return missing
