"""The privacy package's objects: mechanisms with their costs and variances, the budget a synthesizer
declares and the check of a run against it (the ledger store's entries: tests/core/privacy/test_store.py)."""

import math

import numpy as np
import pytest

from dpsynth_core.privacy import NONE, PER_RECORD, TOTAL, Budget, Gaussian, Geometric, Laplace, Public, Step
from dpsynth_core.privacy.mechanisms import geometric_noise
from dpsynth_core.synth import SYNTHESIZERS


def test_geometric_object_is_the_geometric_mechanism():
    g = Geometric(math.log(2), sensitivity=1.0)
    # α = e^−ε = 1/2: variance 2α/(1 − α)² = 4.
    assert g.variance == pytest.approx(4.0)
    draws = g.sample(np.random.default_rng(4), (3, 5))
    assert np.array_equal(draws, geometric_noise((3, 5), math.log(2), np.random.default_rng(4)))
    step = g.step("histogram of x", detail="d")
    assert step == Step("two-sided geometric", "histogram of x", math.log(2), sensitivity=1.0, detail="d")
    with pytest.raises(ValueError):
        Geometric(0.0)


def test_laplace_and_gaussian_variances_by_hand_and_by_sampling():
    lap = Laplace(0.5, sensitivity=2.0)  # b = 2/0.5 = 4, variance 2b² = 32
    assert lap.scale == 4.0 and lap.variance == 32.0
    gauss = Gaussian(0.5, sensitivity=1.0, delta=1e-5)  # σ = √(2 ln 125000)/0.5
    assert gauss.sigma == pytest.approx(math.sqrt(2 * math.log(1.25e5)) / 0.5)
    rng = np.random.default_rng(11)
    # 200,000 draws: the sample variance's relative SD is √(2/n)·(kurtosis factor) < 1 %; 3 % tolerance.
    assert lap.sample(rng, 200_000).var() == pytest.approx(32.0, rel=0.03)
    assert gauss.sample(rng, 200_000).var() == pytest.approx(gauss.variance, rel=0.03)
    noisy = lap.noisy(np.array([10.0, 20.0]), np.random.default_rng(1))
    assert np.allclose(noisy - [10.0, 20.0], Laplace(0.5, 2.0).sample(np.random.default_rng(1), 2))


def test_public_draw_costs_nothing():
    draw = Public(size=4)
    assert (draw.epsilon, draw.delta, draw.sensitivity) == (0.0, 0.0, 0.0)
    assert draw.variance == pytest.approx((16 - 1) / 12)
    codes = draw.sample(np.random.default_rng(2), 10_000)
    assert set(np.unique(codes)) == {0, 1, 2, 3}
    assert draw.step("x").epsilon == 0.0


def test_budget_plans_the_split_by_hand():
    # TOTAL: ε = 2 with a noisy count at 5 % (0.1), 2 implicates: (2 − 0.1)/2 = 0.95 each.
    total = Budget(TOTAL).plan(2.0, n=100, row_count=Budget(TOTAL).row_count_epsilon(2.0), implicates=2)
    assert total.row_count == pytest.approx(0.1) and total.per_implicate == pytest.approx(0.95)
    assert total.generation_epsilon == pytest.approx(0.95) and total.total == pytest.approx(2.0)
    # PER_RECORD in blocks of 7: 100 rows are ⌈100/7⌉ = 15 blocks, each 1.9/15.
    blocks = Budget(PER_RECORD, unit_size="block").plan(2.0, n=100, row_count=0.1, params={"block": 7})
    assert blocks.units == 15 and blocks.per_unit == pytest.approx(1.9 / 15)
    assert blocks.generation_epsilon == blocks.per_unit
    # NONE: the whole ε goes to the count; nothing to the generation.
    none = Budget(NONE)
    assert none.row_count_share == 1.0 and none.row_count_epsilon(2.0) == 2.0
    plan = none.plan(2.0, n=100, row_count=2.0)
    assert plan.per_implicate == 0.0 and plan.total == 2.0
    assert none.plan(None, n=100).total == 0.0


def test_budget_check_refuses_steps_that_differ_from_the_plan():
    budget = Budget(TOTAL)
    plan = budget.plan(1.0, n=10, implicates=2)
    half = [Step("m", "t", 0.25), Step("m", "u", 0.25)]
    budget.check(plan, [], [half, half])  # 0.5 per implicate: as planned
    with pytest.raises(AssertionError, match="implicate 2 spent"):
        budget.check(plan, [], [half, half[:1]])
    with pytest.raises(AssertionError, match="row count"):
        budget.check(plan, [Step("geometric", "number of rows", 0.05)], [half, half])
    with pytest.raises(ValueError, match="a budget is one of"):
        Budget("some")


def test_a_method_may_spend_a_declared_part_of_its_share_and_the_ledger_shows_what_it_spent():
    # By hand: ε = 2 with a noisy count at 0.1 and 2 implicates leaves 0.95 each; half of it is 0.475.
    assert Budget(TOTAL, fraction=0.5).plan(2.0, n=10, row_count=0.1, implicates=2).per_implicate == \
        pytest.approx(0.475)
    with pytest.raises(ValueError, match="fraction"):
        Budget(PER_RECORD, fraction=0.5)
    import dpsynth_core as core
    from dpsynth_core.synth.base import register
    from dpsynth_core.synth.independent import Independent

    @register
    class HalfIndependent(Independent):
        name = "_half_independent"
        spends = Budget(TOTAL, fraction=0.5)

    try:
        df, schema = core.load_bundled("penguins")
        ledger = core.synthesize(df, "_half_independent", epsilon=2.0, schema=schema, n=50).ledger
        per_column = 1.0 / len(schema.used)  # half of ε = 2, split equally over the columns
        assert all(math.isclose(s["epsilon"], per_column) for s in ledger["steps"])
        assert ledger["epsilon_total"] == pytest.approx(1.0) and ledger["epsilon_requested"] == 2.0
        assert ledger["dp_label"] == "ε-DP with ε = 1"  # fresh randomness: DP at what it spent
    finally:
        SYNTHESIZERS.pop("_half_independent")
