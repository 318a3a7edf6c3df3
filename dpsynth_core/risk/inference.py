"""Attribute disclosure by prediction: a model fitted on the synthetic data guesses a sensitive column.

The intruder fits a model of the sensitive column on the key columns of the
synthetic data and applies it to the keys of confidential records
(docs/methods.md#attribute-inference). Its accuracy (categorical) or RMSE (numeric) is compared
with a model trained on nothing: the synthetic data's majority class or
mean. The intruder is sensible: a regularised decision tree is kept only if
it beats that constant guess on a validation quarter of the synthetic data,
so a release whose keys say nothing about the sensitive column scores the
baseline itself instead of an overfitted tree's noise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from .. import constraints
from ..errors import DataError
from ..metric_info import Metric, register
from ._base import as_float, shared_codes
from .estimate import CONFIDENCE, RiskEstimate, _z, wilson_interval
from .keymatch import _check_roles, _is_categorical

__all__ = ["AttributeInference", "attribute_inference"]

_MAX_ONEHOT = 64  # categorical keys with more levels enter the tree as integer codes
_VALIDATION_SHARE = 0.25


@dataclass(frozen=True, kw_only=True, eq=False)
class AttributeInference:
    """Result of :func:`attribute_inference`.

    Attributes
    ----------
    measure : {"accuracy", "rmse"}
        Accuracy for a categorical sensitive column (higher = more
        disclosure), RMSE for a numeric one (lower = more disclosure).
    score : float
        The measure of the model fitted on the synthetic data, on the
        confidential records.
    baseline : float
        The same for the no-information guess (majority class or mean of the
        synthetic data).
    original : float
        The same procedure fitted on the confidential data itself.
    holdout : float or None
        The synthetic-data model on held-out records.
    model : str
        What the intruder ended up using, in words.
    n : int
        Confidential records scored (those with a known sensitive value).
    estimate : RiskEstimate
        The score with its interval, the paired interval of its excess over
        the baseline, and the references.
    """

    measure: str
    score: float
    baseline: float
    original: float
    holdout: float | None
    model: str
    n: int
    estimate: RiskEstimate


class _Design:
    """Key columns as model inputs, coded alike for every frame."""

    def __init__(self, frames: Sequence[pd.DataFrame], keys: list[str], schema: Any):
        self.blocks: list[list[np.ndarray]] = [[] for _ in frames]
        for k in keys:
            if _is_categorical(k, frames, schema):
                parts = shared_codes([f[k] for f in frames])
                levels = int(max(p.max(initial=-1) for p in parts)) + 1
                for out, p in zip(self.blocks, parts):
                    out.append((p[:, None] == np.arange(levels)).astype(np.float32) if levels <= _MAX_ONEHOT
                               else p[:, None].astype(np.float32))
            else:
                for out, f in zip(self.blocks, frames):
                    # trees split on NaN natively, and compare float32: huge values (and inf) are clipped
                    out.append(np.clip(as_float(f[k], k), -constraints.FLOAT32_SAFE, constraints.FLOAT32_SAFE)[:, None])

    def matrix(self, i: int) -> np.ndarray:
        return np.hstack(self.blocks[i]).astype(np.float64)


def _finite_or_nan(x: np.ndarray) -> np.ndarray:
    """Numbers clipped to float32's range, infinite ones made missing."""
    return np.where(np.isfinite(x), np.clip(x, -constraints.FLOAT32_SAFE, constraints.FLOAT32_SAFE), np.nan)


def _constant(y: np.ndarray, categorical: bool) -> float:
    if categorical:
        return float(np.bincount(y).argmax())  # ties: the smallest code
    return float(y.mean())


def _loss(pred: np.ndarray, y: np.ndarray, categorical: bool) -> float:
    return float(np.mean(pred != y)) if categorical else float(np.mean((pred - y) ** 2))


def _fit(x: np.ndarray, y: np.ndarray, categorical: bool, rng: np.random.Generator):
    """A predictor fitted on (x, y) and its description: the tree, or the constant if the tree loses."""
    n = len(y)
    leaf = max(5, n // 1000)
    seed = int(rng.integers(2**31 - 1))

    def tree():
        cls = DecisionTreeClassifier if categorical else DecisionTreeRegressor
        return cls(min_samples_leaf=leaf, random_state=seed)

    order = rng.permutation(n)
    k = int(n * _VALIDATION_SHARE)
    if k >= 10 and n - k >= 2 * leaf:
        val, fit = order[:k], order[k:]
        model = tree().fit(x[fit], y[fit])
        const = _constant(y[fit], categorical)
        if _loss(model.predict(x[val]), y[val], categorical) >= _loss(np.full(k, const), y[val], categorical):
            c = _constant(y, categorical)
            return (lambda z: np.full(len(z), c)), "the no-information guess (a tree did not beat it on validation)"
    model = tree().fit(x, y)
    return model.predict, f"a decision tree on the keys (at least {leaf} rows per leaf)"


def attribute_inference(
    confidential: pd.DataFrame,
    synth: pd.DataFrame,
    keys: Sequence[str] | str,
    sensitive: str,
    *,
    schema: Any = None,
    holdout: pd.DataFrame | None = None,
    seed: int | np.random.Generator | None = None,
    confidence: float = CONFIDENCE,
) -> AttributeInference:
    """Predict ``sensitive`` of confidential records from their ``keys`` with a model fitted on ``synth``.

    Parameters
    ----------
    confidential : pandas.DataFrame
        Records whose protection is measured (the rows the synthesizer saw).
    synth : pandas.DataFrame
        The synthetic data the intruder fits the model on.
    keys : str or sequence of str
        Columns the intruder knows; the model's inputs.
    sensitive : str
        The column predicted; not a key. Categorical (per the schema, or
        non-numeric dtype): accuracy, a missing value being one more class.
        Numeric: RMSE over records with a known value.
    schema : Schema or None, default=None
        Column kinds; without it they follow the dtypes.
    holdout : pandas.DataFrame or None, default=None
        Held-out records: the same model on them is the holdout reference.
    seed : int, Generator or None, default=None
        Seeds the validation split and the tree; same seed, same result.
    confidence : float, default=0.95
        Level of the intervals.

    Returns
    -------
    AttributeInference

    Examples
    --------
    >>> conf = pd.DataFrame({"g": ["a", "b"] * 50, "y": ["x", "z"] * 50})
    >>> r = attribute_inference(conf, conf, ["g"], "y", seed=0)  # the release reveals y from g
    >>> r.measure, r.score, r.baseline
    ('accuracy', 1.0, 0.5)
    """
    frames = [("confidential", confidential), ("synth", synth)]
    if holdout is not None:
        frames.append(("holdout", holdout))
    keys = _check_roles(keys, sensitive, frames)
    data = [f for _, f in frames]
    categorical = _is_categorical(sensitive, data, schema)
    rng = np.random.default_rng(seed)
    xs, ys = _known_rows(frames, keys, sensitive, schema, categorical)

    predict, description = _fit(xs[1], ys[1], categorical, rng)
    x_conf, y_conf = xs[0], ys[0]
    pred, base = predict(x_conf), np.full(len(y_conf), _constant(ys[1], categorical))
    own, _ = _fit(x_conf, y_conf, categorical, rng)
    score_of = _accuracy_scores if categorical else _rmse_scores
    scores = score_of(pred, base, own(x_conf), y_conf, confidence)

    held, held_value = {}, None
    if holdout is not None:
        hp, hy = predict(xs[2]), ys[2]
        if categorical:
            held_value = float(np.mean(hp == hy))
            h_int = wilson_interval(int(np.sum(hp == hy)), len(hy), confidence=confidence)
        else:
            held_value, *h_int = _rmse_interval((hp - hy) ** 2, _z(confidence))
        held = dict(holdout=held_value, holdout_lower=h_int[0], holdout_upper=h_int[1])
    n = len(y_conf)
    estimate = RiskEstimate(
        metric="attribute_accuracy" if categorical else "attribute_rmse",
        baseline_label="the synthetic data's " + ("majority class" if categorical else "mean") + " (no keys)",
        n=n, confidence=confidence, **scores, **held,
    )
    return AttributeInference(measure="accuracy" if categorical else "rmse", score=scores["value"],
                              baseline=scores["baseline"], original=scores["original"], holdout=held_value,
                              model=description, n=n, estimate=estimate)


def _known_rows(frames, keys, sensitive, schema, categorical) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Each frame's key design matrix and sensitive values, over its records whose value is known (every
    record for a categorical column, where missing is one more class)."""
    data = [f for _, f in frames]
    design = _Design(data, keys, schema)
    if categorical:
        targets = shared_codes([f[sensitive] for f in data])
    else:
        # An infinite value cannot be predicted or scored: it counts as unknown, like a missing one;
        # huge ones are clipped so the tree's squared errors stay finite.
        targets = [_finite_or_nan(as_float(f[sensitive], sensitive)) for f in data]
    known = [np.ones(len(t), bool) if categorical else ~np.isnan(t) for t in targets]
    xs = [design.matrix(i)[ok] for i, ok in enumerate(known)]
    ys = [t[ok] for t, ok in zip(targets, known)]
    for (name, _), y in zip(frames, ys):
        if len(y) < 2:
            raise DataError(f"The {name} data have fewer than two known values of {sensitive!r}, so no model can "
                            "be scored; choose another sensitive column.")
    return xs, ys


def _accuracy_scores(pred, base, own, y, confidence: float) -> dict:
    """Accuracy of the synthetic data's model, of the majority class and of a model fitted on the confidential
    records themselves; Wilson intervals, and the paired excess over the baseline (a normal interval on the
    per-record differences of hits)."""
    n = len(y)
    hit, hit_base = (pred == y).astype(float), (base == y).astype(float)
    lower, upper = wilson_interval(int(hit.sum()), n, confidence=confidence)
    b_lower, b_upper = wilson_interval(int(hit_base.sum()), n, confidence=confidence)
    d = hit - hit_base
    half = _z(confidence) * d.std(ddof=1) / math.sqrt(n) if n > 1 else 0.0
    return dict(value=float(hit.mean()), lower=lower, upper=upper, interval="Wilson",
                baseline=float(hit_base.mean()), baseline_lower=b_lower, baseline_upper=b_upper,
                original=float(np.mean(own == y)),
                excess_lower=float(d.mean() - half), excess_upper=float(d.mean() + half))


def _rmse_scores(pred, base, own, y, confidence: float) -> dict:
    """RMSE of the synthetic data's model, of the mean and of a model fitted on the confidential records; the
    excess paired on the same records (the difference of squared errors), turned back into RMSE."""
    z = _z(confidence)
    n = len(y)
    score, lower, upper = _rmse_interval((pred - y) ** 2, z)
    baseline, b_lower, b_upper = _rmse_interval((base - y) ** 2, z)
    d = (pred - y) ** 2 - (base - y) ** 2
    half = z * d.std(ddof=1) / math.sqrt(n) if n > 1 else 0.0
    excess = tuple(math.sqrt(max(baseline ** 2 + v, 0.0)) - baseline for v in (d.mean() - half, d.mean() + half))
    return dict(value=score, lower=lower, upper=upper, interval="normal (CLT on squared errors)",
                baseline=baseline, baseline_lower=b_lower, baseline_upper=b_upper,
                original=float(np.sqrt(np.mean((own - y) ** 2))),
                excess_lower=excess[0], excess_upper=excess[1])


def _rmse_interval(squared: np.ndarray, z: float) -> tuple[float, float, float]:
    """RMSE and an interval: the MSE's normal interval, square-rooted."""
    mse = float(squared.mean())
    half = z * float(squared.std(ddof=1)) / math.sqrt(len(squared)) if len(squared) > 1 else 0.0
    return math.sqrt(mse), math.sqrt(max(mse - half, 0.0)), math.sqrt(mse + half)


register(Metric(
    name="attribute_accuracy", label="Attribute inference accuracy", kind="risk", goal="minimize",
    lower=0.0, upper=1.0, best=0.0,
    reading="Accuracy of a model fitted on the synthetic data predicting the sensitive column from the keys; "
            "compare with the majority-class baseline.",
    section="inference", needs={"keys", "sensitive"},
    compute=lambda ctx: _score(ctx, "accuracy"), estimate=lambda ctx: _estimate(ctx, "accuracy"),
    note=lambda ctx, value: _note(ctx, value, "accuracy"),
))
register(Metric(
    name="attribute_rmse", label="Attribute inference RMSE", kind="risk", goal="maximize",
    lower=0.0, upper=math.inf, best=math.inf,
    reading="Error of a model fitted on the synthetic data predicting the numeric sensitive column from the "
            "keys; larger is safer, compare with the mean-only baseline.",
    section="inference", needs={"keys", "sensitive"},
    compute=lambda ctx: _score(ctx, "rmse"), estimate=lambda ctx: _estimate(ctx, "rmse"),
    note=lambda ctx, value: _note(ctx, value, "rmse"), value_format="{:,.4g}",
))


def inference_of(ctx) -> AttributeInference:
    """Attribute inference on a metric context's roles and holdout (shared as ``"inference"``)."""
    return ctx.cached("inference", lambda: attribute_inference(ctx.real, ctx.synth, list(ctx.keys), ctx.sensitive,
                                                              schema=ctx.schema, holdout=ctx.holdout, seed=ctx.seed))


# One model, two metrics: accuracy for a categorical sensitive column, RMSE for a numeric one.
def _score(ctx, measure: str) -> float:
    r = inference_of(ctx)
    return r.score if r.measure == measure else math.nan


def _estimate(ctx, measure: str) -> RiskEstimate | None:
    r = inference_of(ctx)
    return r.estimate if r.measure == measure else None


def _note(ctx, value: float, measure: str) -> str | None:
    if value == value:
        return None
    other = "numeric" if measure == "accuracy" else "categorical"
    return f"The sensitive column {ctx.sensitive} is {other}; see the other attribute-inference measure."
