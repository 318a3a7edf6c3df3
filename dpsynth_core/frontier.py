"""The steward's analysis of an R-U sweep's table (:func:`dpsynth_core.rumap.ru_map`): the means over replicates,
the Pareto frontier, the smallest ε at which a method reaches a utility threshold and the threshold it starts
from, the DP method that keeps the most at an ε, and the methods a sweep starts with.

Each answer is a number with its report in words (``sentence``), the same on the R-U page and wherever a
sweep's table is read; "better" follows each measure's goal in :data:`~dpsynth_core.metric_info.METRICS`.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from . import risk as _risk, utility as _utility  # noqa: F401  (importing them registers their metrics)
from . import constraints
from .metric_info import METRICS
from .schema import Schema
from .synth import SYNTHESIZERS
from .forecast import suggest_method


def summarise(points: pd.DataFrame, x: str, y: str) -> pd.DataFrame:
    """Mean and standard deviation of measures ``x`` and ``y`` over replicates, per (method, ε).

    Columns: ``method``, ``label``, ``epsilon`` (NaN for methods without ε),
    ``x``, ``y``, ``x_sd``, ``y_sd``, ``seed`` (of the first replicate),
    ``is_dp``, ``reference``, ``reps``, and ``pareto`` (on the frontier; never
    a point whose pMSE ratio could not read unacceptable, :func:`capped_points`).
    """
    keys = ["method", "label", "epsilon"]
    g = points.assign(epsilon=points["epsilon"].fillna(-1.0)).groupby(keys, sort=False)
    out = g.agg(x=(x, "mean"), y=(y, "mean"), x_sd=(x, "std"), y_sd=(y, "std"), seed=("seed", "first"),
                is_dp=("is_dp", "first"), reference=("reference", "first"), reps=("rep", "count")).reset_index()
    out["epsilon"] = out["epsilon"].where(out["epsilon"] >= 0, np.nan)
    # A point whose pMSE ratio could not read unacceptable on its rows is on no frontier (its low value says nothing).
    capped = capped_points(points, y)
    ys = out["y"].where([(m, e) not in capped for m, e in zip(out["method"], out["epsilon"])], np.nan)
    out["pareto"] = pareto_mask(out["x"].to_numpy(float), ys.to_numpy(float), x, y)
    return out


def _loss(values: np.ndarray, metric: str, kind: str) -> np.ndarray:
    """Values turned so that smaller is better (less risk, more utility)."""
    info = METRICS.get(metric)
    if info is None:
        return values if kind == "risk" else -values
    if info.goal == "target":
        return np.abs(values - info.best)
    return -values if info.goal == "maximize" else values


def pareto_mask(x: np.ndarray, y: np.ndarray, x_metric: str, y_metric: str) -> np.ndarray:
    """True for points no other point beats on both risk (x) and utility (y).

    A point is dominated when another is at least as good on both measures
    and strictly better on one; "better" follows each metric's goal.
    """
    rx, uy = _loss(np.asarray(x, float), x_metric, "risk"), _loss(np.asarray(y, float), y_metric, "utility")
    ok = ~(np.isnan(rx) | np.isnan(uy))
    a, b = rx[:, None], uy[:, None]
    dominated = ((rx[None, :] <= a) & (uy[None, :] <= b) & ((rx[None, :] < a) | (uy[None, :] < b)) & ok[None, :])
    return ok & ~dominated.any(axis=1)


def reaches(value: float, threshold: float, metric: str) -> bool:
    """Whether a utility ``value`` is at least as good as ``threshold`` for ``metric``."""
    return bool(_loss(np.array([value]), metric, "utility")[0] <= _loss(np.array([threshold]), metric, "utility")[0])


def smallest_epsilon(points: pd.DataFrame, method: str, utility: str, threshold: float, risk: str) -> dict | None:
    """The steward's question: the smallest ε at which ``method`` reaches ``threshold``, and its risk there.

    Works on the means over replicates. Returns a dict with ``epsilon``, ``utility``, ``risk`` (None
    when no ε of the grid reaches the threshold) and ``sentence``; when one does, ``resolution`` (how
    close the grid pins it) and ``acceptable``: whether the utility there is what the app calls
    acceptable (:meth:`Metric.is_acceptable`; None for a measure with no stated level).
    """
    s = summarise(points[points["method"] == method], risk, utility).dropna(subset=["epsilon"])
    s = s.sort_values("epsilon")
    capped = {e: c for (m, e), c in capped_points(points, utility, threshold).items() if m == method}
    hit = [i for i, e, v in zip(s.index, s["epsilon"], s["y"]) if reaches(v, threshold, utility) and e not in capped]
    label = SYNTHESIZERS[method].label if method in SYNTHESIZERS else method
    ulabel, rlabel = (METRICS[m].label if m in METRICS else m for m in (utility, risk))
    caveat = "" if not capped else (" Not counted: " + "; ".join(
        f"ε = {e:g}, where on so few rows the {ulabel} could not exceed {c:.3g}" for e, c in sorted(capped.items()))
        + ".")
    if not hit:
        top = s["epsilon"].max() if len(s) else float("nan")
        return {"epsilon": None, "utility": None, "risk": None,
                "sentence": f"{label} does not reach {ulabel} {threshold:g} at any ε up to {top:g} in this sweep."
                            + caveat}
    row = s.loc[hit[0]]
    lower = s.loc[s["epsilon"] < row["epsilon"], "epsilon"]
    if len(lower):
        resolution = (f"Smallest ε in this grid: {row['epsilon']:g}; the next lower grid point, {lower.max():g}, "
                      f"does not reach it, so the true smallest ε lies between {lower.max():g} and "
                      f"{row['epsilon']:g}: add grid points there to narrow it.")
    else:
        resolution = (f"{row['epsilon']:g} is the lowest ε in this grid: a smaller ε may reach the threshold "
                      "too; add lower grid points to find out.")
    info = METRICS.get(utility)
    return {"epsilon": float(row["epsilon"]), "utility": float(row["y"]), "risk": float(row["x"]),
            "resolution": resolution,
            "acceptable": None if info is None else info.is_acceptable(float(row["y"])),
            "sentence": (f"The smallest ε at which {label} reaches {ulabel} {threshold:g} is {row['epsilon']:g} "
                         f"({ulabel} {row['y']:.3g}); its risk there: {rlabel} {row['x']:.3g}." + caveat)}


def capped_points(points: pd.DataFrame, utility: str, threshold: float = math.inf) -> dict[tuple, float]:
    """(method, ε) → the pMSE ratio's ceiling on the rows it was fitted on (``pmse_ratio_ceiling``, the smallest
    over replicates), for the points whose ratio could not have exceeded ``threshold``, or the level this app
    calls unacceptable if that is lower: a value below the threshold there says nothing (a synthesis of a
    handful of rows scores low whatever it holds). Empty for another measure, or a table without the column."""
    if utility != "pmse_ratio" or "pmse_ratio_ceiling" not in points:
        return {}
    bar = min(threshold, constraints.PMSE_RATIO_ACCEPTABLE)
    ceiling = points.dropna(subset=["epsilon"]).groupby(["method", "epsilon"])["pmse_ratio_ceiling"].min()
    return {(m, float(e)): float(c) for (m, e), c in ceiling.items() if c <= bar}


def dp_methods(points: pd.DataFrame) -> list[str]:
    """The DP methods of a sweep, in their order of appearance (reference points are no synthesizer)."""
    return [m for m in dict.fromkeys(points["method"]) if m in SYNTHESIZERS and SYNTHESIZERS[m].is_dp]


def default_methods(schema: Schema, n_rows: int) -> list[str]:
    """The methods the R-U map sweeps by default: the DP methods the method suggestion may name (those that
    declare a ``suggest_priority``: :func:`dpsynth_core.suggest_method`), in picker order, less any that
    refuse this table (its schema and row count). The reference points (the original data, the bootstrap)
    are always on the map; a method that is not DP is the user's choice, not a default."""
    out = []
    for name, synth in SYNTHESIZERS.items():
        if synth.is_dp and synth.suggest_priority is not None and schema.used \
                and not synth.refuse(schema, schema.used, n_rows, **synth.resolve({})):
            out.append(name)
    return out


def default_threshold(points: pd.DataFrame, method: str, utility: str) -> float:
    """The utility threshold the steward's question starts from.

    A measure whose level of "acceptable" the app states (:attr:`Metric.acceptable`: the pMSE ratio's
    ``constraints.PMSE_RATIO_ACCEPTABLE``) starts there: the answer is then the smallest ε at which the
    method reaches what a steward is told is acceptable. Any other measure has no such level, so its
    default only splits ``method``'s grid: halfway between its best and worst mean values (halfway in
    distance from the ideal for a measure with a target), so the best ε reaches it and the worst does not,
    unless all points are equal (the R-U page says which it is). NaN when the method has no point
    with a value and the measure states no level.
    """
    info = METRICS.get(utility)
    if info is not None and info.acceptable is not None:
        return float(info.acceptable)
    s = summarise(points[points["method"] == method], utility, utility).dropna(subset=["epsilon", "y"])
    if not len(s):
        return float("nan")
    loss = _loss(s["y"].to_numpy(float), utility, "utility")
    half = float((loss.min() + loss.max()) / 2)  # halfway in "loss" (smaller is better), then back to values
    if info is None or info.goal == "maximize":
        value = -half
    else:
        value = info.best + half if info.goal == "target" else half
    return float(f"{value:.3g}")  # a number a person would type; the grid's points are far coarser


def best_dp_method(points: pd.DataFrame, epsilon: float, utility: str) -> dict | None:
    """Which DP method keeps the most at ε = ``epsilon`` on the swept data, by the measure ``utility``.

    Compares the DP methods of the sweep (methods whose synthesizer is DP;
    reference points left out) at the grid ε nearest to ``epsilon`` (on the
    log scale), by their mean over replicates, "most" following the
    measure's goal (:data:`METRICS`). Returns None when the sweep has no DP
    method with a value of ``utility``; else a dict with ``method``,
    ``epsilon`` (the grid value used), ``utility``, ``ranking`` (method →
    mean, best first) and ``sentence``.
    """
    dp = points[points["method"].map(lambda m: m in SYNTHESIZERS and SYNTHESIZERS[m].is_dp)
                & ~points["reference"].astype(bool) & points["epsilon"].notna()]
    dp = dp[dp[utility].notna()] if utility in dp.columns else dp.iloc[0:0]
    if dp.empty:
        return None
    grid = np.array(sorted(dp["epsilon"].unique()))
    used = float(grid[np.argmin(np.abs(np.log(grid) - math.log(epsilon)))])
    at = dp[dp["epsilon"] == used]
    # methods whose pMSE ratio could not read unacceptable here, with its ceiling: they rank nothing
    unranked = {m: c for (m, _), c in capped_points(at, utility).items()}
    if len(unranked) < at["method"].nunique():
        at = at[~at["method"].isin(unranked)]
    else:
        unranked = {}
    means = at.groupby("method", sort=False)[utility].mean()
    order = np.argsort(_loss(means.to_numpy(float), utility, "utility"), kind="stable")
    ranking = {m: float(means.iloc[i]) for i, m in ((i, means.index[i]) for i in order)}
    best, value = next(iter(ranking.items()))
    ulabel = METRICS[utility].label if utility in METRICS else utility
    where = f"ε = {used:g}" if math.isclose(used, epsilon, rel_tol=1e-9) else \
        f"ε = {used:g}, the swept ε nearest to {epsilon:g}"
    reps = int((at["method"] == best).sum())
    sentence = (f"At {where}, {SYNTHESIZERS[best].label} keeps the most by {ulabel}: {value:.3g} "
                f"(mean of {reps} replicate{'s' if reps != 1 else ''})")
    others = [f"{SYNTHESIZERS[m].label} {v:.3g}" for m, v in list(ranking.items())[1:]]
    sentence += (", against " + ", ".join(others) + ".") if others else "; it is the only DP method in this sweep."
    if unranked:
        sentence += (" Not ranked: " + ", ".join(f"{SYNTHESIZERS[m].label} (on so few rows its {ulabel} could not "
                                                  f"exceed {c:.3g})" for m, c in unranked.items()) + ".")
    if not at.loc[at["method"] == best, "is_dp"].all():
        sentence += " These runs are not DP as run (see their ledgers: e.g. bounds read off the data)."
    return {"method": best, "epsilon": used, "utility": value, "ranking": ranking, "sentence": sentence}


def default_target(swept: list[str], schema: Schema, epsilon: float, n: int | None) -> str:
    """The DP method the steward's question asks of first, among the ``swept`` ones: the one the app
    suggests at (ε, n) when it was swept, else the first swept."""
    suggested = suggest_method(schema, epsilon, n)
    return suggested.method if suggested is not None and suggested.method in swept else swept[0]
