"""The peer benchmark's grid table: medians per data set and ε, the run counts, the time limit, the floor."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))  # the bench's scripts import their _common
import bench_dp_utility as bench  # noqa: E402


def rows(method, data, eps, values, note=None):
    return [{"data": data, "ε": eps, "method": method, "run": i, "TV2": v, "note": note} for i, v in enumerate(values)]


def test_grid_gives_medians_their_run_counts_and_the_time_limit():
    records = (rows("real holdout", "a", float("nan"), [0.5])
               + rows("ours", "a", 1.0, [0.3, 0.1, 0.2]) + rows("ours", "a", 3.0, [0.4])
               + rows("peer", "a", 1.0, [float("nan")], note="past 600 s of CPU time")
               + rows("peer", "a", 3.0, [0.7, 0.9])
               + rows("slow", "a", 1.0, [0.6]) + rows("slow", "a", 1.0, [float("nan")], note="past 600 s of CPU time"))
    lines = bench.grid(records, "TV2").splitlines()
    assert lines[0] == "| method | runs | a 1 | a 3 |"
    assert lines[2] == "| real holdout (the floor) | 1 | 0.5 | 0.5 |"
    assert lines[3] == "| ours | 3 | 0.2 | 0.4 (1) |"          # the median of 0.3, 0.1, 0.2; one run at ε = 3
    assert lines[4] == "| peer | 2 | > 600 s (1) | 0.8 |"      # the median of 0.7 and 0.9
    assert lines[5] == "| slow | 2 | 0.6 (1 of 2; 1 > 600 s) |  |"  # one run finished, the next did not
