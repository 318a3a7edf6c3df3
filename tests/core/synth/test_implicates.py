"""Implicates, per-record accounting, refusals and holdout splits in the shared synthesis path."""

import math

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

import dpsynth_core as core
from dpsynth_core.holdout import holdout_mask, split_holdout
from dpsynth_core.privacy import PER_RECORD, Budget, Step
from dpsynth_core.synth.base import SYNTHESIZERS, Synthesizer


@pytest.fixture(scope="module")
def penguins():
    return core.load_bundled("penguins")


def test_m_implicates_share_the_budget(penguins):
    df, schema = penguins
    r = core.synthesize(df, "independent", epsilon=3.0, schema=schema, n=100, seed=4, implicates=3)
    assert len(r.implicates) == 3 and r.data is r.implicates[0]
    assert all(list(d.columns) == list(df.columns) and len(d) == 100 for d in r.implicates)
    assert not r.implicates[0].equals(r.implicates[1])
    led = r.ledger
    # 3 implicates × 8 histograms, each at (3/3)/8 = 0.125; the total is the declared 3.
    assert led["implicates"] == 3 and led["epsilon_per_implicate"] == 1.0
    assert sorted({s["implicate"] for s in led["steps"]}) == [1, 2, 3]
    assert [s["epsilon"] for s in led["steps"]] == pytest.approx([0.125] * 24)
    assert led["epsilon_total"] == pytest.approx(3.0) and "3 implicates" in led["composition"]
    table = core.ledger_steps_table(led)
    assert list(table["implicate"].iloc[:-1]) == [1] * 8 + [2] * 8 + [3] * 8
    assert table["epsilon"].iloc[-1] == pytest.approx(3.0)


def test_undeclared_row_count_is_bought_once_for_all_implicates(penguins):
    df, schema = penguins
    led = core.synthesize(df, "independent", epsilon=2.0, schema=schema, seed=4, implicates=2).ledger
    counts = [s for s in led["steps"] if s["target"] == "number of rows"]
    assert len(counts) == 1 and counts[0]["epsilon"] == pytest.approx(0.1)  # 5% of 2
    others = [s["epsilon"] for s in led["steps"] if s["target"] != "number of rows"]
    assert others == pytest.approx([(2.0 - 0.1) / 2 / 8] * 16)


def test_implicates_are_reproducible_and_validated(penguins):
    df, schema = penguins
    a = core.synthesize(df, "cart", schema=schema, seed=9, implicates=2)
    b = core.synthesize(df, "cart", schema=schema, seed=9, implicates=2)
    for x, y in zip(a.implicates, b.implicates):
        pdt.assert_frame_equal(x, y)
    for bad in (0, 21, 1.5, True):
        with pytest.raises(ValueError, match="implicates"):
            core.synthesize(df, "cart", schema=schema, seed=9, implicates=bad)


class _PerRecord(Synthesizer):
    """A toy per-record method (not private at all): it resamples rows; only its accounting is tested."""

    name, label, is_dp, description, spends = "toy_per_record", "Toy", True, "test only", Budget(PER_RECORD)

    def measure(self, df, schema, columns):
        return df[columns]

    def generate(self, measured, *, epsilon, n, rng, noise):
        rows = noise.integers(0, len(measured), n)
        return ({c: measured[c].to_numpy()[rows] for c in measured.columns},
                [Step("toy", "each synthetic record", epsilon, repeats=n)])

    def refuse(self, schema, columns, n, **params):
        return "Toy refuses more than 500 rows; ask for fewer." if n > 500 else None


@pytest.fixture
def toy():
    SYNTHESIZERS["toy_per_record"] = _PerRecord()
    yield
    del SYNTHESIZERS["toy_per_record"]


def test_per_record_methods_compose_over_records(toy, penguins):
    df, schema = penguins
    # ε is the total (issue 15): 40 records share ε = 20, 0.5 each by sequential composition.
    led = core.synthesize(df, "toy_per_record", epsilon=20.0, schema=schema, n=40).ledger
    assert led["epsilon_per_record"] == 0.5 and led["epsilon_total"] == pytest.approx(20.0)
    assert led["dp_label"] == "ε-DP with ε = 20 (ε = 0.5 per synthetic record × 40)"
    assert led["exp_epsilon"] == pytest.approx(math.exp(20.0))
    assert led["steps"][0]["epsilon_total"] == pytest.approx(20.0)


def test_refusal_comes_before_any_work(toy, penguins, monkeypatch):
    df, schema = penguins
    monkeypatch.setattr(_PerRecord, "measure", lambda *a, **k: pytest.fail("measure ran"))
    with pytest.raises(core.MethodRefused, match="Toy refuses more than 500 rows"):
        core.synthesize(df, "toy_per_record", epsilon=0.5, schema=schema, n=501, seed=1)


def test_split_holdout_partitions_rows():
    df = pd.DataFrame({"x": np.arange(100)})
    mask = holdout_mask(100, 0.2, np.random.default_rng(3))
    train, held = split_holdout(df, 0.2, mask=mask)
    assert list(held.x) == list(np.flatnonzero(mask)) and list(train.x) == list(np.flatnonzero(~mask))
    assert sorted(np.concatenate([train.x, held.x])) == list(range(100))
    assert split_holdout(df, 0.0) == (df, None)
    with pytest.raises(ValueError, match="no rows on one side"):
        split_holdout(df, 0.2, mask=np.zeros(100, bool))


def test_holdout_is_an_independent_coin_per_record_not_a_function_of_the_data():
    # Issue 15: the split was a permutation seeded by the data's hash, so one added record moved
    # thousands of records between train and holdout. Now each record has its own Bernoulli(share)
    # coin from fresh randomness: with the same coins, D′ = D + one record keeps every membership of D.
    n = 10_000
    d = pd.DataFrame({"x": np.arange(n)})
    d2 = pd.concat([d, pd.DataFrame({"x": [-1]})], ignore_index=True)
    m = holdout_mask(len(d), 0.2, np.random.default_rng(11))
    m2 = holdout_mask(len(d2), 0.2, np.random.default_rng(11))
    assert (m2[:n] == m).all()  # only the added record's own membership is new
    _, held = split_holdout(d, 0.2, mask=m)
    _, held2 = split_holdout(d2, 0.2, mask=m2)
    assert len(set(held.x) ^ set(held2.x)) <= 1
    # The mask depends on n and the coins only, never on the values.
    assert (holdout_mask(n, 0.2, np.random.default_rng(11)) == m).all()
    # Binomial(10,000, 0.2) held out: sd 40, so 4 sd = 160 rows of slack.
    assert abs(m.sum() - 2000) < 160
    # Without an rng the coins are fresh: two draws differ (P(equal) = 0.8^n + ... ≈ 0).
    assert (holdout_mask(n, 0.2) != holdout_mask(n, 0.2)).any()


def test_sweep_with_holdout_reports_membership_inference(penguins):
    df, schema = penguins
    t = core.ru_map(df, ["independent"], [1.0], seed=2, schema=schema, holdout=0.25,
                    holdout_mask=holdout_mask(len(df), 0.25, np.random.default_rng(2)),
                    metrics=["mia_auc", "exact_copy_share"])
    boot = t[t.method == "bootstrap"].iloc[0]
    ind = t[t.method == "independent"].iloc[0]
    # A bootstrap of the training rows copies ~63% of them exactly (DCR 0) and no holdout row,
    # so the attacker's AUC is about 0.5 + 0.63/2 ≈ 0.82; independent marginals copy nothing.
    assert 0.72 < boot.mia_auc < 0.92
    assert abs(ind.mia_auc - 0.5) < 0.1
    assert t[t.method == "original"].iloc[0].mia_auc == pytest.approx(1.0)
