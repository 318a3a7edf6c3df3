"""Tests of the `dirichlet`, `pegs` and `pegs_rs` synthesizers: their formulas, ledgers and refusals,
and what each keeps or loses of the data at large and small ε.

Reference values are computed here by hand or independently (pandas counts, scipy/sklearn, closed
forms); statistical checks use fixed seeds and state their tolerance.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest
from sklearn.metrics import mutual_info_score

import dpsynth_core as core
from dpsynth_core.errors import MethodRefused
from dpsynth_core.schema import Schema
from dpsynth_core.synth import SYNTHESIZERS, base, synthesize
from dpsynth_core.privacy.mechanisms import dirichlet_alpha
from dpsynth_core.synth.encoding import encode
from dpsynth_core.synth.pegs import hash_bit, pegs_alpha

LN2 = math.log(2)


@pytest.fixture(scope="module")
def penguins():
    return core.load_bundled("penguins")


@pytest.fixture(scope="module")
def diamonds():
    return core.load_bundled("diamonds")


def _abc_frame() -> tuple[pd.DataFrame, Schema]:
    """a, b independent on {0, 1, 2} (every pair 20 times) and c = (a + b) mod 3."""
    pairs = np.array(list(itertools.product(range(3), range(3))) * 20)
    df = pd.DataFrame({"a": pairs[:, 0], "b": pairs[:, 1], "c": (pairs[:, 0] + pairs[:, 1]) % 3})
    schema = Schema.from_dict({c: {"kind": "categorical", "categories": [0, 1, 2]} for c in "abc"})
    return df, schema


# --- α and the budget -----------------------------------------------------------------

def test_alpha_formulas_by_hand():
    # dirichlet: α = n_s/(e^ε − 1). ε = ln 2: 100/(2 − 1) = 100; ε = ln 3: 100/2 = 50; ε = ln 5, n_s = 8: 2.
    assert dirichlet_alpha(100, LN2) == pytest.approx(100.0, rel=1e-12)
    assert dirichlet_alpha(100, math.log(3)) == pytest.approx(50.0, rel=1e-12)
    assert dirichlet_alpha(8, math.log(5)) == pytest.approx(2.0, rel=1e-12)
    # pegs: α = 1/(e^(ε/M) − 1). ε = M ln 2: 1/(2 − 1) = 1 for any M; ε = 2 ln 3, M = 2: 1/2.
    for m in (1, 3, 8):
        assert pegs_alpha(m * LN2, m) == pytest.approx(1.0, rel=1e-12)
    assert pegs_alpha(2 * math.log(3), 2) == pytest.approx(0.5, rel=1e-12)
    # Huge ε: e^−ε underflows, α = 0 exactly instead of an overflow.
    assert dirichlet_alpha(100, 1e6) == 0.0 and pegs_alpha(1e6, 3) == 0.0


def test_dirichlet_ledger_states_alpha_and_neighbouring(penguins):
    df, schema = penguins
    led = synthesize(df, "dirichlet", epsilon=LN2, schema=schema, n=100).ledger  # fresh entropy: DP
    assert led["is_dp"] and led["epsilon_total"] == pytest.approx(LN2, rel=1e-12)
    (step,) = led["steps"]
    # Default 3 bins: species 3 · island 3 · four nullable measurements (3 bins + missing)⁴ · sex 3 · year 3.
    assert step["target"] == f"full table of 8 columns ({3 * 3 * 4 ** 4 * 3 * 3:,} cells)"
    assert "α = n_s/(e^ε − 1) = 100 in every cell" in step["detail"]
    assert "one record's value (n fixed)" in step["detail"] and "adding or removing" in step["detail"]
    assert led["dp_label"] == f"ε-DP with ε = {LN2:g}"


def test_pegs_ledger_composes_over_records(penguins):
    df, schema = penguins
    cols = ["species", "island", "sex"]
    # ε is the release's total (issue 15): 40 records share 40·3·ln 2, so 3 ln 2 per record.
    led = synthesize(df[cols], "pegs", epsilon=40 * 3 * LN2, schema=schema, n=40).ledger
    # M = 3 conditionals at ε/3 = ln 2 each (α = 1), each used once by each of the 40 records.
    assert [s["repeats"] for s in led["steps"]] == [40] * 3
    assert [s["epsilon"] for s in led["steps"]] == pytest.approx([LN2] * 3, rel=1e-12)
    assert all("α = 1/(e^(ε/M) − 1) = 1," in s["detail"] for s in led["steps"])
    assert led["epsilon_per_record"] == pytest.approx(3 * LN2)
    assert led["epsilon_total"] == pytest.approx(40 * 3 * LN2)           # n_s · ε = 83.18
    assert led["dp_label"] == f"ε-DP with ε = {40 * 3 * LN2:g} (ε = {3 * LN2:.4g} per synthetic record × 40)"
    # Default ranking is public (column order); ranking by mutual information on the data is not.
    assert led["is_dp"] and all("ranking='public'" in s["detail"] for s in led["steps"])
    led = synthesize(df[cols], "pegs", epsilon=40 * 3 * LN2, schema=schema, n=40, ranking="data").ledger
    assert not led["is_dp"] and "mutual information on the data" in led["dp_label"]


def test_pegs_rs_ledger_counts_blocks(penguins):
    df, schema = penguins
    cols = ["species", "island", "sex"]
    led = synthesize(df[cols], "pegs_rs", epsilon=7.5, schema=schema, n=45, block=10).ledger
    # Total ε = 7.5 over 45 records in blocks of 10: ceil(45/10) = 5 blocks at ε = 1.5 each.
    assert [s["repeats"] for s in led["steps"]] == [5] * 3
    assert [s["epsilon"] for s in led["steps"]] == pytest.approx([0.5] * 3, rel=1e-12)
    assert led["epsilon_total"] == pytest.approx(7.5)
    assert led["epsilon_per_record"] == pytest.approx(1.5) and led["record_unit"] == "block of 10 synthetic records"
    assert led["dp_label"] == "ε-DP with ε = 7.5 (ε = 1.5 per block of 10 synthetic records × 5)"
    assert "ε per block of 10 records (5 blocks for 45 records)" in led["steps"][0]["detail"]


def test_per_record_total_with_a_noisy_row_count(penguins):
    df, schema = penguins
    led = synthesize(df, "pegs", epsilon=0.5, schema=schema, seed=1).ledger
    # ε = 0.5 is the total (issue 15): the count costs 5% of it once; the n_s records share the rest.
    assert led["steps"][0]["target"] == "number of rows" and led["steps"][0]["epsilon"] == pytest.approx(0.025)
    assert led["epsilon_total"] == pytest.approx(0.5, rel=1e-12)
    assert led["epsilon_per_record"] == pytest.approx(0.475 / led["n_rows"], rel=1e-12)
    led = synthesize(df, "pegs_rs", epsilon=0.5, schema=schema, seed=1, block=7).ledger
    assert led["epsilon_total"] == pytest.approx(0.5, rel=1e-12)
    assert led["epsilon_per_record"] == pytest.approx(0.475 / math.ceil(led["n_rows"] / 7), rel=1e-12)


def test_measure_runs_once_for_every_epsilon_and_seed(penguins, monkeypatch):
    df, schema = penguins
    for method in ("dirichlet", "pegs", "pegs_rs"):
        synth = SYNTHESIZERS[method]
        calls = []
        original = type(synth).measure
        monkeypatch.setattr(type(synth), "measure",
                            lambda self, *a, calls=calls, original=original, **k:
                            calls.append(1) or original(self, *a, **k))
        base._measure_cache.clear()
        for eps, seed in [(1.0, 1), (0.3, 1), (5.0, 2)]:
            synthesize(df, method, epsilon=eps, schema=schema, n=50, seed=seed)
        assert len(calls) == 1, method


# --- refusals ---------------------------------------------------------------------------

def test_dirichlet_refuses_too_many_cells_before_measuring(diamonds, monkeypatch):
    df, schema = diamonds
    monkeypatch.setattr(type(SYNTHESIZERS["dirichlet"]), "measure", lambda *a, **k: pytest.fail("measure ran"))
    # 5 bins: 7 numeric columns × 5 bins, cut 5, colour 7, clarity 8 → 5⁷·5·7·8 = 21,875,000 cells.
    with pytest.raises(MethodRefused) as info:
        synthesize(df, "dirichlet", epsilon=1.0, schema=schema, seed=0, bins=5)
    assert str(info.value) == ("The full table of these 10 columns has 21,875,000 cells, over the "
                               "Dirichlet–multinomial cap of 1,000,000; bin numeric columns more coarsely "
                               "(bins below 5) or synthesize fewer columns.")


def test_dirichlet_cell_cap_is_inclusive():
    synth = SYNTHESIZERS["dirichlet"]
    ten = {f"c{i}": {"kind": "categorical", "categories": list(range(10))} for i in range(6)}
    schema = Schema.from_dict(ten)
    assert synth.max_cells == 10 ** 6
    assert synth.refuse(schema, list(ten), 100, bins=3) is None        # 10⁶ cells: at the cap, allowed
    bigger = Schema.from_dict({**ten, "c6": {"kind": "categorical", "categories": [0, 1]}})
    message = synth.refuse(bigger, [*ten, "c6"], 100, bins=3)          # 2·10⁶: refused; nothing to bin
    assert message == ("The full table of these 7 columns has 2,000,000 cells, over the Dirichlet–multinomial "
                       "cap of 1,000,000; synthesize fewer columns or merge categories.")


@pytest.mark.parametrize("method, bad, match", [("pegs", {"top": -1}, "top must be a whole number ≥ 0"),
                                                 ("pegs", {"top": 1.5}, "top must be"),
                                                 ("pegs_rs", {"block": 0}, "block must be a whole number ≥ 1"),
                                                 ("dirichlet", {"bins": 0}, "bins must be a whole number ≥ 1")])
def test_bad_parameters_are_refused_before_work(method, bad, match, penguins, monkeypatch):
    df, schema = penguins
    monkeypatch.setattr(type(SYNTHESIZERS[method]), "measure", lambda *a, **k: pytest.fail("measure ran"))
    with pytest.raises(ValueError, match=match):
        synthesize(df, method, epsilon=1.0, schema=schema, seed=0, **bad)


# --- dirichlet: the prior's bias, the posterior draw, the extremes -----------------------------

def test_dirichlet_mean_share_is_the_posterior_mean_biased_toward_uniform():
    # 2 × 2 table, counts x = (6, 3, 1, 0) in cells (a0 b0, a0 b1, a1 b0, a1 b1), n = 10; n_s = 20,
    # ε = ln 3 → α = 20/2 = 10 per cell. E[q] = (α + x)/(4α + n) = (16, 13, 11, 10)/50, far from the
    # data's shares (0.6, 0.3, 0.1, 0) and close to uniform. X̃ is Dirichlet–multinomial with
    # A = 50: Var(X̃_i) = n_s p(1 − p)(A + n_s)/(A + 1), so Var(q_i) = p(1 − p)·70/(20·51).
    # Tolerance: 5 standard errors of the mean over 4,000 runs (≤ 0.0097).
    df = pd.DataFrame({"a": ["a0"] * 9 + ["a1"], "b": ["b0"] * 6 + ["b1"] * 3 + ["b0"]})
    schema = Schema.from_dict({"a": {"kind": "categorical", "categories": ["a0", "a1"]},
                               "b": {"kind": "categorical", "categories": ["b0", "b1"]}})
    synth = SYNTHESIZERS["dirichlet"]
    measured = synth.measure(df, schema, ["a", "b"], bins=3)
    assert list(measured.counts) == [6, 3, 1, 0]
    runs, n_s = 4000, 20
    counts = np.empty((runs, 4))
    for r in range(runs):
        v, _ = synth.generate(measured, epsilon=math.log(3), n=n_s, rng=np.random.default_rng(r), bins=3)
        cell = (v["a"] == "a1").astype(int) * 2 + (v["b"] == "b1").astype(int)
        counts[r] = np.bincount(cell, minlength=4)
    expected = np.array([16, 13, 11, 10]) / 50
    var_q = expected * (1 - expected) * 70 / (20 * 51)
    assert np.all(np.abs(counts.mean(0) / n_s - expected) < 5 * np.sqrt(var_q / runs))
    # The draw is a posterior sample, not a plain multinomial from the posterior mean: the variance
    # of X̃ for the first cell is 20·0.2176·70/51 = 5.97 (multinomial: 4.35). Sample variance of
    # 4,000 runs has a relative SE near √(2/4000) = 2.2 %; 10 % tolerance, the multinomial is 27 % off.
    assert counts[:, 0].var(ddof=1) == pytest.approx(20 * expected[0] * (1 - expected[0]) * 70 / 51, rel=0.10)


def test_dirichlet_with_huge_epsilon_keeps_the_full_joint(diamonds):
    df, schema = diamonds
    n = len(df)
    out = synthesize(df, "dirichlet", epsilon=1e6, schema=schema, n=n, seed=2024).data
    # α underflows to 0: π̃ ~ Dirichlet(X), X̃ ~ Multinomial(n, π̃). Each cell share then has variance
    # p(1 − p)(1/n_s + 1/(n + 1)), and by Jensen E[TV] ≤ ½ Σ √Var over the cut × colour × clarity
    # cells (0.042). Over seeds 0–5 the TV was 0.031–0.037 (SD ≈ 0.002); 1.25 × the bound is far above.
    cols = ["cut", "color", "clarity"]
    real = df.groupby(cols).size() / n
    syn = out.groupby(cols).size().reindex(real.index, fill_value=0) / n
    assert out.groupby(cols).size().index.isin(real.index).all()  # no cell the data leave empty
    bound = 0.5 * np.sqrt(real * (1 - real) * (1 / n + 1 / (n + 1))).sum()
    tv = 0.5 * np.abs(syn - real).sum()
    assert bound < 0.045 and tv < 1.25 * bound
    # Independent marginals would be 0.125 away from the real joint (product of real marginals):
    indep = pd.Series([np.prod([(df[c] == v).mean() for c, v in zip(cols, key)]) for key in real.index],
                      index=real.index)
    assert 0.5 * np.abs(real - indep).sum() + 0.5 * (1 - indep.sum()) > 2 * 1.25 * bound
    # Binned numeric columns too: 3 bins over the declared bounds, so the bin of a synthetic value is
    # its cell's bin. Every numeric marginal within TV 0.01 (multinomial + Dirichlet noise: E[TV] < 0.004).
    codes_real, domains = encode(df, schema, schema.used, 3)
    codes_syn, _ = encode(out, schema, schema.used, 3)
    for j, d in enumerate(domains):
        p = np.bincount(codes_real[:, j], minlength=d.size) / n
        q = np.bincount(codes_syn[:, j], minlength=d.size) / n
        assert 0.5 * np.abs(p - q).sum() < 0.01, schema.used[j]


def test_dirichlet_with_tiny_epsilon_is_uniform_over_cells(penguins):
    df, schema = penguins
    n_s = 20_000
    out = synthesize(df, "dirichlet", epsilon=0.01, schema=schema, n=n_s, seed=5).data
    # α = n_s/(e^0.01 − 1) ≈ 1.99e6 per cell against n = 344 rows: the data weigh
    # n/(pα + n) < 1e−8 of E[q], so every cell (and every column's bin) is uniform in expectation,
    # and with Σα ≈ 4e10 the Dirichlet draw barely varies. Tolerance: 5 multinomial SEs per share.
    codes, domains = encode(out, schema, schema.used, SYNTHESIZERS["dirichlet"].defaults["bins"])
    for j, d in enumerate(domains):
        share = np.bincount(codes[:, j], minlength=d.size) / n_s
        p = 1 / d.size
        assert np.all(np.abs(share - p) < 5 * math.sqrt(p * (1 - p) / n_s)), (schema.used[j], share)


# --- pegs: measurement ----------------------------------------------------------------------------

def test_mutual_information_ranking_matches_sklearn(penguins):
    df, schema = penguins
    model = SYNTHESIZERS["pegs"].measure(df, schema, schema.used, bins=20, top=2, ranking="data")
    codes, _ = encode(df, schema, schema.used, 20)
    m = len(schema.used)
    mi = np.array([[mutual_info_score(codes[:, i], codes[:, j]) if i != j else 0.0 for j in range(m)]
                   for i in range(m)])
    np.testing.assert_allclose(model.mutual_information, mi, rtol=1e-9, atol=1e-12)
    for i, cond in enumerate(model.conditionals):
        ranked = sorted((j for j in range(m) if j != i), key=lambda j: (-mi[i, j], j))
        assert cond.top == tuple(ranked[:2]) and cond.rest == tuple(sorted(ranked[2:]))
    # e.g. species is best told by flipper length and bill length (binned).
    assert [schema.used[t] for t in model.conditionals[0].top] == ["flipper_length_mm", "bill_length_mm"]


def test_count_tables_match_pandas_counts(penguins):
    df, schema = penguins
    model = SYNTHESIZERS["pegs"].measure(df, schema, schema.used, bins=20, top=2)
    codes, domains = encode(df, schema, schema.used, 20)
    for cond in model.conditionals:
        t1, t2 = cond.top
        frame = pd.DataFrame({"t1": codes[:, t1], "t2": codes[:, t2], "bit": hash_bit(codes[:, list(cond.rest)]),
                              "x": codes[:, cond.target]})
        expected = frame.groupby(["t1", "t2", "bit", "x"]).size()
        s1, s2 = domains[t1].size, domains[t2].size
        for (a, b, bit, x), count in expected.items():
            key = (a * s2 + b) * 2 + bit
            row = np.searchsorted(cond.keys, key)
            assert cond.keys[row] == key and cond.counts[row, x] == count
        assert cond.counts.sum() == len(df) and cond.n_keys == s1 * s2 * 2


def test_hash_bit_is_fixed_balanced_and_uses_every_column():
    grid = np.array(list(itertools.product(range(20), range(20), range(20))))
    bit = hash_bit(grid)
    assert set(np.unique(bit)) == {0, 1}
    assert np.array_equal(bit, hash_bit(grid.copy()))  # a function of the codes only
    # Balanced: 8,000 rows; a fair bit would give 0.5 ± 0.0056 (SD), so 0.45–0.55 is ~9 SD wide.
    assert 0.45 < bit.mean() < 0.55
    for j in range(3):  # changing one column's code flips the bit for about half the rows
        moved = grid.copy()
        moved[:, j] = (moved[:, j] + 1) % 20
        assert 0.4 < np.mean(hash_bit(moved) != bit) < 0.6
    assert np.array_equal(hash_bit(np.empty((4, 0), np.int64)), np.zeros(4))


def _splitmix_bit(codes) -> int:
    """hash_bit of one row in Python integers, written from its definition: fold each code in
    (h + code + golden)·c1 then h ^= h >> 31, finish with splitmix64's mixer; the top bit."""
    mask, golden, c1, c2 = 2 ** 64 - 1, 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
    h = 0
    for code in codes:
        h = (h + int(code) + golden) * c1 & mask
        h ^= h >> 31
    h = (h ^ (h >> 30)) * c1 & mask
    h = (h ^ (h >> 27)) * c2 & mask
    return (h ^ (h >> 31)) >> 63


def test_hash_bit_is_splitmix_of_the_codes():
    rows = np.random.default_rng(5).integers(0, 40, (300, 7))
    assert hash_bit(rows).tolist() == [_splitmix_bit(r) for r in rows]


# --- pegs: sampling at the extremes -----------------------------------------------------------------

def test_pegs_with_huge_epsilon_draws_the_data_conditional_given_the_top_features():
    df, schema = _abc_frame()
    out = synthesize(df, "pegs", epsilon=1e6, schema=schema, n=5000, seed=1, top=2).data
    # c is swept last, keyed by the exact (a, b) (top 2 of 2 others): α = 0 and c = (a + b) mod 3 in
    # every real row, so every synthetic row obeys it exactly.
    assert np.array_equal(out["c"], (out["a"] + out["b"]) % 3)


def test_pegs_with_huge_epsilon_on_penguins(penguins):
    df, schema = penguins
    sub = df[["island", "sex", "species"]]   # the sweep goes island, sex, species
    n_s = 20_000
    out = synthesize(sub, "pegs", epsilon=1e6, schema=schema, n=n_s, seed=3, top=2).data
    # What PeGS keeps: species is swept last, keyed by the exact (island, sex) of the finished record,
    # with α = 0, so P(species | island, sex) is the data's. The real structural zeros (no Gentoo on
    # Dream or Torgersen, Chinstrap only on Dream) stay exactly zero ...
    real_tab = pd.crosstab(sub["island"], sub["species"])
    syn_tab = pd.crosstab(out["island"], out["species"]).reindex_like(real_tab).fillna(0)
    assert ((real_tab == 0) == (syn_tab == 0)).all().all()
    # ... and each conditional is within 5 binomial SEs of the data's (exactly equal where the data's
    # conditional is degenerate, e.g. every Torgersen penguin is an Adelie).
    key = ["island", "sex"]
    real_cond = sub.fillna({"sex": "NA"}).groupby(key)["species"].value_counts(normalize=True).unstack(fill_value=0)
    syn = out.fillna({"sex": "NA"})
    for k, row in real_cond.iterrows():
        picked = syn[(syn["island"] == k[0]) & (syn["sex"] == k[1])]["species"]
        share = picked.value_counts(normalize=True).reindex(row.index, fill_value=0)
        se = np.sqrt(row * (1 - row) / len(picked))
        assert len(picked) > 0 and np.all(np.abs(share - row) <= 5 * se + 1e-12), k
    # What the paper's sampler (chains = n_s: every record one sweep from its own uniform seed) does
    # not keep, even at ε = ∞: island, swept first, is drawn given the uniform seed's (sex, species),
    # so its marginal is the average of the data's conditionals over the 3 × 3 seed keys, each unseen
    # key giving the uniform 1/3 (limit of (n_hj + α)/(N_h + Cα) as α → 0).
    one_seed_each = synthesize(sub, "pegs", epsilon=1e6, schema=schema, n=n_s, seed=3, top=2, chains=n_s).data
    cond = sub.fillna({"sex": "NA"}).groupby(["sex", "species"])["island"].value_counts(normalize=True)
    cond = cond.unstack(fill_value=0).reindex(columns=["Biscoe", "Dream", "Torgersen"], fill_value=0)
    seeds = pd.MultiIndex.from_product([["female", "male", "NA"], ["Adelie", "Chinstrap", "Gentoo"]])
    expected = cond.reindex(seeds).fillna(1 / 3).mean()
    share = one_seed_each["island"].value_counts(normalize=True).reindex(expected.index)
    assert np.all(np.abs(share - expected) < 5 * np.sqrt(expected * (1 - expected) / n_s))
    real_share = sub["island"].value_counts(normalize=True).reindex(expected.index)
    assert abs(expected["Torgersen"] - real_share["Torgersen"]) > 0.04  # 0.197 against the real 0.151
    # The default chains seed each record with the previous synthetic record of its chain (issue 18),
    # so island is drawn given a (sex, species) the data holds and its marginal is the data's: within
    # 0.02 of each real share (the chains' records are dependent, so binomial SEs (0.0035) understate
    # the spread; 0.02 is still under half the 0.046 the uniform seeds lose on Torgersen).
    chained = out["island"].value_counts(normalize=True).reindex(expected.index)
    assert np.all(np.abs(chained - real_share) < 0.02), (chained, real_share)


def test_pegs_with_tiny_epsilon_is_near_uniform(penguins):
    df, schema = penguins
    sub = df[["island", "sex", "species"]]
    n_s = 20_000
    # ε = 0.001 per record, M = 3: α = 1/(e^(0.001/3) − 1) ≈ 2999.5. Every conditional is then within
    # N_h(1 − 1/C)/(N_h + Cα) ≤ 344·(2/3)/(344 + 3·2999.5) = 0.0245 of 1/3, and so is every marginal
    # (a mixture of conditionals). Tolerance: that bound plus 5 multinomial SEs (0.0167).
    bound = 344 * (2 / 3) / (344 + 3 * pegs_alpha(0.001, 3))
    assert bound == pytest.approx(0.0245, abs=1e-4)
    for method in ("pegs", "pegs_rs"):
        out = synthesize(sub, method, epsilon=0.001, schema=schema, n=n_s, seed=4).data
        for c in ("island", "species"):
            share = out[c].value_counts(normalize=True).to_numpy()
            assert len(share) == 3 and np.all(np.abs(share - 1 / 3) < bound + 5 * math.sqrt(2 / 9 / n_s)), (method, c)
        sex = out["sex"].fillna("NA").value_counts(normalize=True)  # nullable: missing is a third category
        assert np.all(np.abs(sex - 1 / 3) < bound + 5 * math.sqrt(2 / 9 / n_s))


# --- pegs_rs ----------------------------------------------------------------------------------------

def test_pegs_rs_with_blocks_of_one_is_pegs(penguins):
    df, schema = penguins
    # B = 1: one sweep per seed and nothing to reset; the random draws come in the same order.
    a = synthesize(df, "pegs", epsilon=2.0, schema=schema, n=120, seed=8).data
    b = synthesize(df, "pegs_rs", epsilon=2.0, schema=schema, n=120, seed=8, block=1).data
    pdt.assert_frame_equal(a, b)


def test_pegs_rs_resets_a_used_conditional_to_uniform():
    # a = b in every real row (3 values, 30 rows each). At ε = 10⁶ (α = 0) the first sweep copies the
    # seed's b into a and then b = a: record 1 is always on the diagonal. Sweep 2 asks for a given
    # the same key b: already used, so a is uniform; then b given the new a is reset too when
    # a equals the old value (probability 1/3), else exact. P(record 2 on the diagonal) =
    # 2/3 + 1/3 · 1/3 = 7/9 (without the reset it would be 1). 30,000 blocks: SE 0.0024; 5 SE.
    df = pd.DataFrame({"a": np.repeat([0, 1, 2], 30), "b": np.repeat([0, 1, 2], 30)})
    schema = Schema.from_dict({c: {"kind": "categorical", "categories": [0, 1, 2]} for c in "ab"})
    blocks = 30_000
    out = synthesize(df, "pegs_rs", epsilon=1e6, schema=schema, n=2 * blocks, seed=6, block=2).data
    diag = (out["a"] == out["b"]).to_numpy().reshape(blocks, 2)
    assert diag[:, 0].all()
    assert abs(diag[:, 1].mean() - 7 / 9) < 5 * math.sqrt(7 / 9 * 2 / 9 / blocks)


def test_pegs_rs_first_records_keep_what_pegs_keeps(penguins):
    df, schema = penguins
    sub = df[["island", "sex", "species"]]
    out = synthesize(sub, "pegs_rs", epsilon=1e6, schema=schema, n=20_000, seed=3, block=10, top=2).data
    # Record 1 of each block is a PeGS record, so the real structural zeros hold there exactly;
    # later records draw from reset (uniform) conditionals and break them: the utility cost of B.
    first, later = out.iloc[::10], out.drop(index=out.index[::10])
    real_tab = pd.crosstab(sub["island"], sub["species"])
    first_tab = pd.crosstab(first["island"], first["species"]).reindex_like(real_tab).fillna(0)
    assert ((real_tab == 0) == (first_tab == 0)).all().all()
    assert ((later["island"] == "Torgersen") & (later["species"] == "Gentoo")).sum() > 0


def test_pegs_rs_drops_the_rows_past_n():
    df, schema = _abc_frame()
    out = synthesize(df, "pegs_rs", epsilon=1.0, schema=schema, n=23, seed=0, block=10)
    assert len(out.data) == 23 and out.ledger["steps"][0]["repeats"] == 3
