"""The Pareto frontier and the steward's "smallest ε" answer on constructed sweeps."""

import math

import numpy as np
import pandas as pd
import pytest

from dpsynth_core.frontier import pareto_mask, reaches, smallest_epsilon, summarise


def _sweep(rows):
    df = pd.DataFrame(rows, columns=["method", "epsilon", "rep", "exact_copy_share", "ks_mean", "pmse_ratio"])
    return df.assign(label=df["method"], seed=0, is_dp=True, reference=False,
                     auc=0.5 + (df["pmse_ratio"] - 1) / 20)  # a target measure with no stated level: 0.9, 0.6, 0.475


def test_pareto_mask_follows_each_metrics_goal():
    # risk exact_copy_share (minimise), utility ks_mean (minimise).
    x = np.array([0.0, 0.1, 0.1, 0.5, 0.05])
    y = np.array([0.30, 0.10, 0.20, 0.05, 0.30])
    # point 2 is beaten by 1 (same risk, lower KS); point 4 by 0 (less risk, same KS).
    assert pareto_mask(x, y, "exact_copy_share", "ks_mean").tolist() == [True, True, False, True, False]
    # dcr_median is a risk measure where larger is safer: the orientation flips, and point 3
    # (largest distance 0.5, lowest KS 0.05) now beats every other point on both.
    assert pareto_mask(x, y, "dcr_median", "ks_mean").tolist() == [False, False, False, True, False]


def test_pareto_ignores_missing_values():
    assert pareto_mask(np.array([0.1, np.nan]), np.array([0.2, 0.0]), "exact_copy_share", "ks_mean").tolist() == [
        True, False]


def test_reaches_by_goal():
    assert reaches(0.04, 0.05, "ks_mean") and not reaches(0.06, 0.05, "ks_mean")   # minimise
    assert reaches(1.2, 1.5, "pmse_ratio") and reaches(0.9, 1.5, "pmse_ratio")     # target 1: |0.1| ≤ |0.5|
    assert not reaches(2.0, 1.5, "pmse_ratio")


def test_smallest_epsilon_on_a_constructed_sweep():
    rows = []
    # ks_mean means over two replicates: ε=0.1 → 0.30, ε=1 → 0.09, ε=10 → 0.02.
    for eps, ks, risk in [(0.1, (0.28, 0.32), 0.0), (1.0, (0.08, 0.10), 0.01), (10.0, (0.01, 0.03), 0.2)]:
        for rep, k in enumerate(ks):
            rows.append(("independent", eps, rep, risk, k, 1.0))
    sweep = _sweep(rows)
    ans = smallest_epsilon(sweep, "independent", "ks_mean", 0.1, "exact_copy_share")
    assert ans["epsilon"] == 1.0 and ans["utility"] == pytest.approx(0.09) and ans["risk"] == pytest.approx(0.01)
    assert ans["sentence"] == ("The smallest ε at which Independent noisy marginals reaches Mean KS 0.1 is 1 (Mean KS 0.09); "
                               "its risk there: Exact copies 0.01.")
    strict = smallest_epsilon(sweep, "independent", "ks_mean", 0.01, "exact_copy_share")
    assert strict["epsilon"] is None and "does not reach" in strict["sentence"] and "up to 10" in strict["sentence"]


def test_summarise_means_and_sd_over_replicates():
    sweep = _sweep([("a", 1.0, 0, 0.1, 0.2, 1.0), ("a", 1.0, 1, 0.3, 0.4, 1.0), ("b", math.nan, 0, 0.5, 0.6, 1.0)])
    s = summarise(sweep, "exact_copy_share", "ks_mean")
    a = s[s.method == "a"].iloc[0]
    assert a.x == pytest.approx(0.2) and a.y == pytest.approx(0.3)
    assert a.x_sd == pytest.approx(np.std([0.1, 0.3], ddof=1)) and a.reps == 2
    assert math.isnan(s[s.method == "b"].iloc[0].epsilon)


def _three_point_sweep():
    # ks_mean (minimise) over a grid 0.3, 1, 3: 0.30, 0.09, 0.02; pmse_ratio (target 1): 9.0, 3.0, 0.5.
    return _sweep([("independent", 0.3, 0, 0.0, 0.30, 9.0), ("independent", 1.0, 0, 0.0, 0.09, 3.0),
                   ("independent", 3.0, 0, 0.0, 0.02, 0.5)])


def test_default_threshold_splits_the_grid_halfway_in_distance_from_the_ideal():
    from dpsynth_core.frontier import default_threshold
    sweep = _three_point_sweep()
    # Minimise: halfway between 0.02 and 0.30 is 0.16, which ε = 1 and 3 reach and ε = 0.3 does not.
    assert default_threshold(sweep, "independent", "ks_mean") == pytest.approx(0.16)
    assert smallest_epsilon(sweep, "independent", "ks_mean", 0.16, "exact_copy_share")["epsilon"] == 1.0
    # AUC, target 0.5: |0.9 − 0.5| = 0.4 and |0.475 − 0.5| = 0.025, halfway 0.2125 from 0.5, so the threshold is
    # 0.7125 (the value halfway, 0.6875, would not do: 0.475 is the best point and it must reach).
    assert default_threshold(sweep, "independent", "auc") == pytest.approx(0.713)  # to 3 digits, as typed
    assert smallest_epsilon(sweep, "independent", "auc", 0.713, "exact_copy_share")["epsilon"] == 1.0
    assert math.isnan(default_threshold(sweep, "cart", "ks_mean"))  # no point of that method


def test_the_pmse_ratio_threshold_starts_at_the_level_the_app_calls_acceptable():
    # Issue 31.2: halfway between the best and worst point (here 5.25) is no standard; on the sweep it
    # made the green answer a pMSE ratio of 24.5, which the same app calls poor. The default is now the stated
    # level, 10 ("under 10 acceptable"), whatever the sweep holds.
    from dpsynth_core.frontier import default_threshold
    from ui.steward import threshold_note
    sweep = _three_point_sweep()
    assert default_threshold(sweep, "independent", "pmse_ratio") == 10.0
    assert default_threshold(sweep, "cart", "pmse_ratio") == 10.0  # no point needed
    assert "starts at 10, the pMSE ratio this app calls acceptable (under 10)" in threshold_note("pmse_ratio")
    assert threshold_note("ks_mean").startswith("This app states no acceptable level of Mean KS, so the threshold "
                                                "starts halfway between the method's best and worst point")


def test_an_answer_says_whether_its_utility_is_acceptable():
    sweep = _three_point_sweep()  # pMSE ratios 9.0, 3.0, 0.5
    assert smallest_epsilon(sweep, "independent", "pmse_ratio", 10.0, "exact_copy_share")["acceptable"] is True
    high = _sweep([("independent", 0.3, 0, 0.0, 0.3, 24.5), ("independent", 3.0, 0, 0.0, 0.1, 10.0)])
    loose = smallest_epsilon(high, "independent", "pmse_ratio", 30.0, "exact_copy_share")
    assert loose["epsilon"] == 0.3 and loose["acceptable"] is False  # reaches 30, but 24.5 is poor
    # 10.0 itself is not acceptable ("under 10"), as pmse_ratio_level reads it.
    assert smallest_epsilon(high, "independent", "pmse_ratio", 10.0, "exact_copy_share")["acceptable"] is False
    assert smallest_epsilon(sweep, "independent", "ks_mean", 0.5, "exact_copy_share")["acceptable"] is None


def test_the_answer_states_the_grid_resolution():
    sweep = _three_point_sweep()
    ans = smallest_epsilon(sweep, "independent", "ks_mean", 0.1, "exact_copy_share")
    assert ans["resolution"] == ("Smallest ε in this grid: 1; the next lower grid point, 0.3, does not reach it, so "
                                 "the true smallest ε lies between 0.3 and 1: add grid points there to narrow it.")
    low = smallest_epsilon(sweep, "independent", "ks_mean", 0.5, "exact_copy_share")
    assert low["epsilon"] == 0.3 and low["resolution"].startswith("0.3 is the lowest ε in this grid")


def test_a_point_whose_pmse_ratio_could_not_exceed_the_threshold_does_not_answer():
    # ε = 0.1 scores pMSE ratio 4 (under the threshold 10), but its fit's ceiling is 4.2 (a handful of synthetic
    # rows): it could not have read 10, so it says nothing; the answer is ε = 1 (ratio 6, ceiling 15).
    rows = [("independent", 0.1, 0, 0.0, 0.1, 4.0), ("independent", 1.0, 0, 0.0, 0.1, 6.0),
            ("independent", 10.0, 0, 0.0, 0.1, 5.0)]
    sweep = _sweep(rows).assign(pmse_ratio_ceiling=[4.2, 15.0, 15.0], dcr_median=0.1)
    answer = smallest_epsilon(sweep, "independent", "pmse_ratio", 10.0, "dcr_median")
    assert answer["epsilon"] == 1.0
    assert "Not counted: ε = 0.1, where on so few rows the pMSE ratio could not exceed 4.2." in answer["sentence"]
    # Without the column (a sweep table written before it), every point counts as before.
    old = sweep.drop(columns="pmse_ratio_ceiling")
    assert smallest_epsilon(old, "independent", "pmse_ratio", 10.0, "dcr_median")["epsilon"] == 0.1
    # Another measure is not concerned.
    assert smallest_epsilon(sweep, "independent", "ks_mean", 0.2, "dcr_median")["epsilon"] == 0.1


def test_the_maps_note_names_the_points_whose_ratio_could_not_read_unacceptable():
    from dpsynth_core.rumap import sample_note
    table = pd.DataFrame({"method": ["independent", "independent", "mst"], "epsilon": [0.1, 1.0, 0.1],
                          "propensity_rows": [349, 688, 688], "pmse_ratio_ceiling": [4.21, 15.9, 16.0]})
    note = sample_note(table)
    assert "could not reach 10" in note and "Independent noisy marginals at ε = 0.1 (at most 4.21)" in note
    assert "ε = 1 " not in note and "MST" not in note
    assert "could not reach" not in sample_note(table.assign(pmse_ratio_ceiling=20.0))


def test_a_method_whose_pmse_ratio_could_not_read_unacceptable_is_not_ranked():
    from dpsynth_core.frontier import best_dp_method
    rows = [("independent", 0.1, 0, 0.0, 0.1, 4.9), ("mst", 0.1, 0, 0.0, 0.1, 19.0)]
    sweep = _sweep(rows).assign(pmse_ratio_ceiling=[4.87, 16.0])
    best = best_dp_method(sweep, 0.1, "pmse_ratio")
    assert best["method"] == "mst" and list(best["ranking"]) == ["mst"]
    assert "Not ranked: Independent noisy marginals (on so few rows its pMSE ratio could not exceed 4.87)." \
        in best["sentence"]
    # Every method capped: ranked as measured (nothing better to say), and no other measure is concerned.
    assert best_dp_method(sweep.assign(pmse_ratio_ceiling=4.0), 0.1, "pmse_ratio")["method"] == "independent"
    assert best_dp_method(sweep, 0.1, "ks_mean")["ranking"].keys() == {"independent", "mst"}


def test_the_map_draws_a_point_whose_ratio_could_not_read_unacceptable_hollow():
    from dpsynth_core.plots.base import ru_figure
    rows = [("independent", 0.1, 0, 0.0, 0.1, 4.9), ("independent", 1.0, 0, 0.0, 0.1, 13.0)]
    sweep = _sweep(rows).assign(pmse_ratio_ceiling=[4.87, 16.0], dcr_median=[0.5, 0.1])
    [trace] = [t for t in ru_figure(sweep, "dcr_median", "pmse_ratio").data if t.name == "independent"]
    assert list(trace.marker.symbol) == ["circle-open", "circle"]
    assert "could not exceed 4.87" in trace.hovertext[0] and "could not" not in trace.hovertext[1]


def test_a_point_whose_ratio_could_not_read_unacceptable_is_on_no_frontier():
    rows = [("independent", 0.1, 0, 0.0, 0.1, 4.9), ("independent", 1.0, 0, 0.0, 0.1, 13.0),
            ("mst", 1.0, 0, 0.0, 0.1, 8.0)]
    sweep = _sweep(rows).assign(pmse_ratio_ceiling=[4.87, 16.0, 16.0], dcr_median=[0.5, 0.1, 0.05])
    s = summarise(sweep, "dcr_median", "pmse_ratio").set_index(["method", "epsilon"])
    # Without the ceiling, ε = 0.1 (safest, and its 4.9 closest to 1) would be on the frontier.
    assert summarise(sweep.drop(columns="pmse_ratio_ceiling"), "dcr_median", "pmse_ratio") \
        .set_index(["method", "epsilon"]).loc[("independent", 0.1), "pareto"]
    assert not s.loc[("independent", 0.1), "pareto"] and s.loc[("mst", 1.0), "pareto"]
