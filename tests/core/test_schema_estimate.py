"""The private estimate of a schema (dpsynth_core.schema_estimate): its budget, what it releases, and a
synthesis that uses it.

The budget is checked against the split the module docstring states, computed by hand. What it
releases is checked at an ε so large that the noise is 0 but with negligible probability (two-sided
geometric at ε = 13 per step: P(Z ≠ 0) = 2e^−13/(1 + e^−13) ≈ 5e−6 per count), where every value must
be the one a hand count of the small frames gives; and at a small ε, where the thresholds exceed the
data and the fields must stay read off the data, named in the notes. Estimates are seeded (so not
DP) but where a test needs a DP synthesis; there the ε is large enough that the estimate's outcome
does not depend on its noise but with probability below 1e−4. The privacy audits of the mechanisms
are in tests/core/privacy/test_privacy_domain.py.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpsynth_core import constraints, report
from dpsynth_core.datasets import load_bundled
from dpsynth_core.errors import BudgetExceeded, MethodRefused
from dpsynth_core.privacy import Cap, LedgerStore, Use
from dpsynth_core.privacy.domain import ThresholdedHistogram
from dpsynth_core.release import public_ledger
from dpsynth_core.rumap import ru_map
from dpsynth_core.schema import Schema, infer_schema
from dpsynth_core.schema_estimate import WEIGHTS, decimal_counts, estimate_and_record, estimate_schema
from dpsynth_core.forecast import forecast
from dpsynth_core.synth import SYNTHESIZERS, synthesize
from dpsynth_core.synth import fingerprint as core_fingerprint
from tests.conftest import entries

LARGE = 400.0  # ε of the whole estimate in the exact checks: at least 40 per step in the frames below


def _frame(n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    hours = np.where(rng.random(n) < 0.4, 0.0, rng.integers(5, 60, n).astype(float))
    income = np.round(rng.uniform(1200, 9000, n), 2)
    income[:7] = np.nan
    return pd.DataFrame({"hours": hours, "income": income,
                         "job": rng.choice(["clerk", "nurse", "cook"], n, p=[0.5, 0.3, 0.2])})


def test_the_budget_is_split_over_the_columns_and_their_steps():
    df = _frame()
    est = estimate_schema(df, 3.0, delta=3e-7, seed=1)
    assert est.epsilon == pytest.approx(3.0, rel=1e-12) and est.delta == pytest.approx(3e-7, rel=1e-12)
    # Each of the 3 columns gets 1; the kind is estimated, so presence takes 1/10 of it, and the numeric path
    # decimals 1/10, range 6/10, specials 2/10 (the categorical path: categories 9/10); δ goes to the thresholded
    # step of each column.
    by_target = {s.target: s for s in est.steps}
    assert by_target["schema estimate: kind and missing values of hours"].epsilon == pytest.approx(0.1)
    assert by_target["schema estimate: precision of income"].epsilon == pytest.approx(0.1)
    assert by_target["schema estimate: bounds of income"].epsilon == pytest.approx(0.6)
    assert by_target["schema estimate: special values of hours"].epsilon == pytest.approx(0.2)
    assert by_target["schema estimate: special values of hours"].delta == pytest.approx(1e-7)
    assert by_target["schema estimate: categories of job"].epsilon == pytest.approx(0.9)
    assert WEIGHTS["presence"] + WEIGHTS["categories"] == WEIGHTS["presence"] + WEIGHTS["decimals"] \
        + WEIGHTS["range"] + WEIGHTS["specials"] == 10
    for col in ("hours", "income", "job"):
        assert math.fsum(s.epsilon for s in est.steps if s.target.endswith(f"of {col}")
                         or s.target.endswith(f": {col} (budget of the steps this column skipped)")) \
            == pytest.approx(1.0)


def test_at_a_large_epsilon_every_field_is_the_datas_own():
    df = _frame()
    est = estimate_schema(df, LARGE, seed=2)
    s = est.schema
    assert est.notes == () and s.undeclared_columns == []
    hours, income, job = s["hours"], s["income"], s["job"]
    assert (hours.kind, income.kind, job.kind) == ("numeric", "numeric", "categorical")
    assert job.categories == ("clerk", "cook", "nurse") and not job.nullable
    # hours: whole numbers from 0 to 59 with 40 % zeros: 0 is special; its bounds are the bucket edges around
    # 0 (the bucket {0}) and 59 ([50, 63)), rounded outward to whole numbers.
    assert hours.integer and hours.decimals is None and hours.specials == (0.0,)
    assert hours.bounds == (0.0, 63.0) and not hours.nullable
    # income: two decimals, 7 missing values, from about 1,200 to 9,000: buckets [1000, 1250) and [8000, 10000).
    assert not income.integer and income.decimals == 2 and income.nullable and income.specials == ()
    assert income.bounds == (1000.0, 10000.0)
    assert hours.source("upper").startswith("estimated privately (ε = ")
    assert hours.estimated_epsilon["upper"] == pytest.approx(LARGE / 3 * 0.6)


def test_decimal_counts_by_hand():
    values = np.array([1.0, 2.5, 2.25, 1 / 3, 7.125, 100.0, 0.1 + 0.2])
    # 1 and 100: 0 decimals; 2.5 and 0.1 + 0.2 (0.30000000000000004, within 1e−9): 1; 2.25: 2; 7.125: 3; 1/3: more.
    assert decimal_counts(values).tolist() == [2, 2, 1, 1, 0, 0, 0, 1]


def _zeros_ones_and_fractions(n: int = 20_000, fractions: float = 0.03) -> pd.DataFrame:
    """randhie's physlm in small: mostly 0, some 1, and a share of values with many decimals."""
    rng = np.random.default_rng(5)
    x = np.where(rng.random(n) < 0.85, 0.0, 1.0)
    few = rng.random(n) < fractions
    x[few] = rng.uniform(0.01, 0.99, few.sum())
    return pd.DataFrame({"limit": x})


def test_whole_numbers_only_on_evidence_so_hidden_fractions_are_not_rounded_away():
    # The column's ε is 0.05; its precision step (weight 1 of 10) 0.005. 600 values (3 %) need more than six
    # decimals: below the 877 a clear count needs, so the largest clear count is the whole numbers'. Called
    # whole-numbered, every synthesis would round those values onto 0 and 1. The noisy count of values with
    # decimals (600, noise σ ≈ 750 over 7 cells) plus the 95 % bound of an empty sum (1,228) is far above
    # 1 % of the whole ones (194): left unrounded, with a sentence. (Seed fixed; the other outcome needs the
    # noise below −1,634, about 1.5 % of seeds.)
    est = estimate_schema(_zeros_ones_and_fractions(), 0.05, seed=4)
    limit = est.schema["limit"]
    assert not limit.integer and limit.decimals is None
    assert est.schema["limit"].source("integer").startswith("estimated privately")
    assert any(n.startswith("limit: at this ε the noisy counts cannot show that it holds whole numbers") for n in est.notes)


def test_common_codes_need_only_a_clear_count_to_be_special_values():
    # At a total ε of 0.02 the special-value step has 0.004 (weight 2 of 10) and δ = 1e-7: a value nobody
    # listed needs a noisy count of 3,858 to be published (1 + ln(1/(δ(1 + α)))/ε), and the 2,941 ones here
    # are short of it. 1 is one of the public common codes: counted with the same noise, it needs only the
    # clear threshold of 12 noisy counts, 1,198, and holds 15 % of the column (kept from 10 %). The noise's
    # scale is 250, so 2,941 falls short of 1,198 only if the noise is below −1,743: e^(−1743/250)/2 ≈ 5e-4.
    est = estimate_schema(_zeros_ones_and_fractions(), 0.02, seed=0)
    assert est.schema["limit"].specials == (0.0, 1.0)
    step = next(s for s in est.steps if s.target == "schema estimate: special values of limit")
    assert step.epsilon == pytest.approx(0.004) and step.delta == pytest.approx(1e-7)
    assert "common codes" in step.detail and "kept past 1198" in step.detail and "reaches 3858" in step.detail


def test_a_whole_numbered_column_is_called_so_once_the_counts_show_it():
    # The same table with its fractions rounded: at ε 2 the precision step has 0.2; the bound of an empty sum
    # of 7 counts is 32, well under 1 % of 20,000 values (200), so the column is whole-numbered.
    df = _zeros_ones_and_fractions(fractions=0.0)
    est = estimate_schema(df, 2.0, seed=4)
    assert est.schema["limit"].integer and not any("whole numbers" in n for n in est.notes)
    # With 3 % fractions at the same ε they are clearly counted: two decimals or more, never whole.
    est = estimate_schema(_zeros_ones_and_fractions(), 2.0, seed=4)
    assert not est.schema["limit"].integer


def test_too_few_records_for_the_epsilon_leave_fields_read_off_the_data_and_say_so():
    df = _frame(60)
    inferred = infer_schema(df)
    base = Schema({**inferred.columns, "job": inferred["job"].declare({"kind"})})  # job's kind declared
    est = estimate_schema(df, 0.3, base=base, seed=3)
    assert est.epsilon == pytest.approx(0.3)
    notes = " ".join(est.notes)
    # At 0.1 per column job's categories (9/10 of it, with the presence step) need hundreds of records.
    threshold = ThresholdedHistogram(0.09, delta=constraints.SCHEMA_ESTIMATE_DELTA / 3).threshold
    assert threshold > 60 and f"job: no category reaches the {threshold} records" in notes
    assert not est.schema.is_public and "categories" in est.schema["job"].derived_fields
    assert est.schema["job"].categories == ("clerk", "cook", "nurse")  # the data's, still read off it
    # hours' kind needs more values than 60 at ε = 0.01: excluded, and said so
    assert est.schema["hours"].kind == "excluded" and "hours: fewer than the" in notes


def test_declared_values_are_kept_and_cost_nothing():
    df = _frame()
    declared = Schema.from_dict({"hours": {"kind": "numeric", "bounds": [0, 80], "integer": True, "specials": [0]},
                                 "income": {"kind": "numeric", "bounds": [0, 10000], "decimals": 2,
                                            "nullable": True},
                                 "job": {"kind": "categorical", "categories": ["clerk", "nurse", "cook"],
                                         "derived": ["categories"]}})
    est = estimate_schema(df, 0.5, base=declared, seed=4)
    # Only job's categories are read off the data: the whole budget goes to them (one step, no presence step).
    assert [s.target for s in est.steps] == ["schema estimate: categories of job"]
    assert est.steps[0].epsilon == pytest.approx(0.5)
    assert est.schema["hours"] == declared["hours"] and est.schema["income"].bounds == (0.0, 10000.0)
    again = estimate_schema(df, 0.5, base=est.schema, seed=5)
    assert again.steps == () and "nothing to estimate" in again.notes[0]


def test_a_field_no_step_releases_is_named():
    # Bounds and the whole-number flag declared, special values read off the data: the estimate does not run
    # a special-values step for them alone (whether the data have any is not public), and says so.
    df = _frame()
    inferred = infer_schema(df)
    hours = inferred["hours"].replace(bounds=(0.0, 80.0), derived_fields=frozenset({"specials"}))
    est = estimate_schema(df[["hours"]], 0.5, base=Schema({"hours": hours}), seed=15)
    assert est.steps == () and len(est.notes) == 1 and est.notes[0].startswith("hours: its specials are still read")


def test_the_plan_follows_the_declarations_not_the_data():
    # Two tables with the same declarations but unlike data get the same steps at the same ε.
    declared = {"x": {"kind": "numeric", "bounds": [0, 1], "derived": ["lower", "upper", "nullable"]}}
    a = pd.DataFrame({"x": [0.0] * 50 + [None] * 50})
    b = pd.DataFrame({"x": np.linspace(-5, 5, 100)})
    steps = [[(s.target, s.epsilon, s.delta) for s in estimate_schema(d, 0.2, base=Schema.from_dict(declared), seed=6).steps]
             for d in (a, b)]
    # missing values, precision (whole numbers are not declared), bounds and special values
    assert steps[0] == steps[1] and len(steps[0]) == 4


def test_the_stewards_lists_and_ranges_spend_no_delta():
    df = _frame()
    numeric = ["lower", "upper", "integer", "nullable"]  # everything but the kind read off the data
    base = Schema.from_dict({"hours": {"kind": "numeric", "bounds": [0, 1], "integer": True, "derived": numeric},
                             "income": {"kind": "numeric", "bounds": [0, 1], "derived": numeric},
                             "job": {"kind": "categorical", "categories": ["x"], "derived": ["categories", "nullable"]}})
    est = estimate_schema(df, LARGE, base=base, seed=7, ranges={"income": (0, 20000)},
                          candidates={"job": ["clerk", "cook", "nurse", "pilot"]}, specials={"hours": [0, -8], "income": []})
    assert est.delta == 0.0  # no thresholded histogram ran
    s = est.schema
    assert s["job"].categories == ("clerk", "cook", "nurse")  # pilot: no record, dropped by its noisy count
    # 100 buckets of 200 over the range; income lies in [1200, 9000): buckets [1200, 1400) … [8800, 9000]
    assert df["income"].min() >= 1200 and df["income"].max() < 9000 and s["income"].bounds == (1200.0, 9000.0)
    assert s["hours"].specials == (0.0,)
    with pytest.raises(ValueError, match="ranges names a column 'nope'"):
        estimate_schema(df, 1.0, ranges={"nope": (0, 1)})


def test_a_range_too_thin_for_the_epsilon_falls_back_to_the_stewards_range():
    df = _frame(60)
    base = Schema.from_dict({"income": {"kind": "numeric", "bounds": [0, 1], "decimals": 2, "nullable": True,
                                        "derived": ["lower", "upper"]}})
    est = estimate_schema(df[["income"]], 0.05, base=base, ranges={"income": (0, 20000)}, seed=8)
    col = est.schema["income"]
    assert col.bounds == (0.0, 20000.0) and {"lower", "upper"} <= col.declared_fields and est.schema.is_public


def test_a_kind_estimated_as_excluded_reserves_the_column_budget():
    df = pd.DataFrame({"empty": [None] * 30, "x": np.linspace(0, 1, 30)})
    est = estimate_schema(df, 20.0, seed=9)
    assert est.schema["empty"].kind == "excluded"
    empty = [s for s in est.steps if "empty" in s.target]
    assert [s.mechanism for s in empty] == ["two-sided geometric", "reserved"]
    assert math.fsum(s.epsilon for s in empty) == pytest.approx(10.0)
    assert empty[1].delta == pytest.approx(constraints.SCHEMA_ESTIMATE_DELTA / 2)


# --- a synthesis with an estimated schema --------------------------------------------------------------------

def test_a_synthesis_lists_and_pays_for_the_estimate():
    # Unseeded (a DP synthesis needs it) at 10 per column: every field of the 20,190 rows is found but with
    # probability far below 1e−4 (the thresholds are a few records).
    df, _ = load_bundled("randhie")
    est = estimate_schema(df, 100.0)
    assert est.notes == ()
    result = synthesize(df, "mst", epsilon=101.0, schema=est.schema, n=1000)
    ledger = result.ledger
    assert ledger["is_dp"], ledger["not_dp_reasons"]
    assert ledger["epsilon_total"] == pytest.approx(101.0)
    assert ledger["budget_split"]["schema_estimate"] == pytest.approx(100.0)
    assert ledger["budget_split"]["each_implicate"] == pytest.approx(1.0)
    steps = ledger["steps"]
    assert [s["target"] for s in steps[:len(est.steps)]] == [s.target for s in est.steps]
    assert ledger["delta"] == pytest.approx(est.delta + constraints.DEFAULT_DELTA)
    assert ledger["schema_estimate"]["epsilon"] == pytest.approx(100.0)
    assert "the schema's private estimate spent" in ledger["statement"]
    # The public ledger of a release keeps the steps and says where each column's domain came from.
    public = public_ledger(ledger, result.schema)
    assert [s["target"] for s in public["steps"][:len(est.steps)]] == [s.target for s in est.steps]
    assert public["public"]["columns"]["mdvis"]["source"].startswith("estimated privately (ε = ")
    assert "estimate_steps" not in public["public"]["columns"]["mdvis"]
    # The public report's schema table names each estimated field with its ε (ε = 10 a column, split 1:1:6:2).
    table = report.public_schema_table(result.schema).set_index("column")
    assert table.loc["mdvis", "estimated privately (ε)"].startswith("kind (ε = 1), lower (ε = 6), upper (ε = 6)")
    assert table.loc["mdvis", "special values"].split(", ")[0] == "0"


def test_the_row_count_takes_its_share_of_what_the_estimate_left():
    df = _frame()
    est = estimate_schema(df, 3.0, seed=10)
    ledger = synthesize(df, "independent", epsilon=4.0, schema=est.schema).ledger
    count = [s for s in ledger["steps"] if s["target"] == "number of rows"][0]
    assert count["epsilon"] == pytest.approx(1.0 * constraints.ROW_COUNT_EPSILON_SHARE)
    assert ledger["epsilon_total"] == pytest.approx(4.0)


def test_a_release_budget_below_the_estimate_is_refused_in_a_sentence():
    df = _frame()
    est = estimate_schema(df, 0.5, seed=11)
    with pytest.raises(MethodRefused, match="spent ε = 0.5 .* choose a total ε above it"):
        synthesize(df, "independent", epsilon=0.5, schema=est.schema, n=100)


def test_the_store_counts_the_estimate_once(ledger_store):
    # Recorded when made; each synthesis with the schema leaves the estimate's share out of its own entry.
    df = _frame()
    store = LedgerStore(ledger_store)
    use = Use("staff", core_fingerprint(df), purpose="schema estimate")
    est = estimate_and_record(df, 3.0, use=use, store=store, delta=2e-7)
    for eps in (4.0, 5.0):
        synthesize(df, "independent", epsilon=eps, schema=est.schema, n=100, use=Use("staff", use.fingerprint),
                   store=store)
    got = [(e["purpose"], round(e["epsilon"], 12), e["delta"]) for e in entries(ledger_store)]
    assert got == [("schema estimate", 3.0, 2e-7), ("exploration", 1.0, 0.0), ("exploration", 2.0, 0.0)]
    assert store.totals(use.fingerprint).epsilon == pytest.approx(6.0)  # 3 + 1 + 2, not 3 + 4 + 5
    assert entries(ledger_store)[0]["rho"] is None  # thresholded steps spend δ: no ρ is stated


def test_an_estimate_past_the_datasets_cap_is_refused_before_it_reads_the_data(ledger_store):
    df = _frame()
    store = LedgerStore(ledger_store)
    use = Use("staff", core_fingerprint(df), purpose="schema estimate")
    store.set_cap(use.fingerprint, "staff", Cap(epsilon=0.5, delta=1e-6))
    with pytest.raises(BudgetExceeded):
        estimate_and_record(df, 0.6, use=use, store=store)
    assert entries(ledger_store) == []


def test_a_sweep_with_an_epsilon_the_estimate_used_up_is_refused_before_it_runs():
    df = _frame()
    est = estimate_schema(df, 0.5, seed=13)
    with pytest.raises(ValueError, match="spent ε = 0.5, which every total ε of the sweep must cover"):
        ru_map(df, ["independent"], [0.3, 1.0], schema=est.schema, seed=1, n_jobs=1)
    table = ru_map(df, ["independent"], [1.0], schema=est.schema, seed=1, n_jobs=1, references=False)
    assert table["epsilon"].tolist() == [1.0]


def test_the_forecast_is_made_at_what_the_estimate_left():
    df = _frame()
    est = estimate_schema(df, 0.5, seed=14)
    mst = SYNTHESIZERS["mst"]
    assert forecast("mst", est.schema, 1.5) == mst.forecast(est.schema, 1.0, None, **mst.resolve({}))
    assert forecast("mst", est.schema, 0.5).level == "poor"


def test_a_seeded_estimate_makes_the_synthesis_not_dp():
    df = _frame()
    est = estimate_schema(df, 3.0, seed=4)
    assert est.seeded and all(st.get("seeded") for st in est.schema.estimate_steps)
    ledger = synthesize(df, "independent", epsilon=4.0, schema=est.schema, n=100).ledger
    assert not ledger["is_dp"] and any("fixed seed" in r for r in ledger["not_dp_reasons"])


def test_the_estimate_survives_the_schema_file():
    df = _frame()
    est = estimate_schema(df, 0.2, seed=12)
    back = Schema.from_dict(est.schema.to_dict())
    assert back == est.schema and back.estimate_epsilon == pytest.approx(0.2)
    # inferred specials read off the data are not what the estimate publishes
    assert infer_schema(df)["hours"].specials == (0.0,)
