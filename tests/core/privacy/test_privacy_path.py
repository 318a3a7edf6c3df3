"""The path a user takes, end to end (issue 15): what leaves synthesize() and to_csv_bytes depends on
the declared schema and fresh randomness only, never on the confidential data's form, a stored seed
or a hash of the data; and the numerical edges keep every positive probability positive.

D and D′ below differ by one added record that changes the confidential frame's dtypes the way real
files do (a missing value and a 40.5 in a whole-number column turn int64 into float64), or by an
undeclared column. Statistical checks fix their seed and state their tolerance.
"""

from __future__ import annotations

import io
import json
import math
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import dpsynth_core.privacy.mechanisms as mech
from dpsynth_core.privacy import exact
from dpsynth_core import release, to_csv_bytes
from dpsynth_core.rumap import ru_map
from dpsynth_core.schema import Schema
from dpsynth_core.privacy import ratio_text, statement_tone
from dpsynth_core.synth import SYNTHESIZERS, synthesize
from dpsynth_core.privacy import NONE, SEEDED_REASON
from dpsynth_core.synth.encoding import column_domain, encode_column

DP_METHODS = sorted(m for m, s in SYNTHESIZERS.items() if s.is_dp)
SCHEMA = Schema.from_dict({
    "age": {"kind": "numeric", "bounds": [0, 100], "integer": True, "nullable": True},
    "income": {"kind": "numeric", "bounds": [0, 1000]},
    "sex": {"kind": "categorical", "categories": ["f", "m"]},
    "year": {"kind": "categorical", "categories": [2007, 2008]},
})


def _d() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    n = 60
    return pd.DataFrame({"age": rng.integers(18, 90, n), "income": rng.uniform(0, 1000, n).round(2),
                         "sex": rng.choice(["f", "m"], n), "year": rng.choice([2007, 2008], n)})


D = _d()
# One added record with a missing age, another world's record with age 40.5: both make age float64.
D_MISSING = pd.concat([D, pd.DataFrame({"age": [np.nan], "income": [10.0], "sex": ["f"], "year": [2007]})],
                      ignore_index=True)
D_FRACTION = pd.concat([D, pd.DataFrame({"age": [40.5], "income": [10.0], "sex": ["f"], "year": [2007]})],
                       ignore_index=True)
PARAMS = {"dirichlet": {"bins": 3}}
INTEGER_FIELD = re.compile(r"^-?\d+$")


def _form(csv: bytes) -> tuple:
    """What a reader sees of a CSV file's form: its header and, per column, how every value is written."""
    table = pd.read_csv(io.BytesIO(csv), dtype=str, keep_default_na=False)
    kinds = {}
    for c in table.columns:
        filled = [v for v in table[c] if v != ""]
        kinds[c] = ("whole" if all(INTEGER_FIELD.match(v) for v in filled)
                    else "decimal" if all(re.match(r"^-?\d+(\.\d+)?$", v) for v in filled) else "text")
    return csv.split(b"\n", 1)[0], kinds


@pytest.mark.parametrize("method", DP_METHODS)
def test_output_form_is_the_schemas_whatever_the_added_record(method):
    # Issue 15 point 1: restore_dtypes copied the confidential dtypes, so D′'s file wrote 68.0 where
    # D's wrote 68 and could be told apart with certainty whatever ε.
    forms, dtypes = [], []
    for df in (D, D_MISSING, D_FRACTION):
        assert df["age"].dtype == ("int64" if df is D else "float64")  # the data's form does differ
        out = synthesize(df, method, epsilon=1.0, schema=SCHEMA, n=40, **PARAMS.get(method, {})).data
        dtypes.append({c: str(t) for c, t in out.dtypes.items()})
        forms.append(_form(to_csv_bytes(out, SCHEMA)))
    assert dtypes[0] == dtypes[1] == dtypes[2] == {"age": "Int64", "income": "float64", "sex": "str",
                                                   "year": "Int64"}
    assert forms[0] == forms[1] == forms[2]
    header, kinds = forms[0]
    assert header == b"age,income,sex,year" and kinds["age"] == "whole" and kinds["year"] == "whole"


def test_to_csv_bytes_writes_whole_number_columns_without_decimals_from_the_schema():
    frame = pd.DataFrame({"age": [68.0, np.nan, 3.0], "income": [1.5, 2.0, np.nan], "sex": ["f", None, "m"],
                          "year": [2007.0, 2008.0, 2007.0]})
    assert to_csv_bytes(frame, SCHEMA) == b"age,income,sex,year\n68,1.5,f,2007\n,2.0,,2008\n3,,m,2007\n"
    assert to_csv_bytes(frame) == frame.to_csv(index=False, lineterminator="\n").encode()  # unchanged without


def test_an_undeclared_column_makes_the_run_not_dp_whatever_its_content():
    base = synthesize(D, "independent", epsilon=1.0, schema=SCHEMA, n=40).ledger
    assert base["is_dp"] and base["not_dp_reasons"] == []
    # An id-like column is inferred excluded: not modelled, yet its kind was read off the data.
    led = synthesize(D.assign(note=np.arange(len(D))), "independent", epsilon=1.0, schema=SCHEMA, n=40).ledger
    assert not led["is_dp"] and led["dp_label"].startswith("not DP (")
    assert any(r.startswith("no declared schema entry for note") for r in led["not_dp_reasons"])
    # A constant text column is inferred categorical and modelled with its data-derived category.
    led = synthesize(D.assign(note="x"), "independent", epsilon=1.0, schema=SCHEMA, n=40).ledger
    assert not led["is_dp"] and led["not_dp_reasons"] == ["data-derived bounds or categories for note"]
    # Declared as excluded, the same column is public and the run is DP; its output is all missing.
    declared = Schema.from_dict({**SCHEMA.to_dict(), "note": {"kind": "excluded"}})
    result = synthesize(D.assign(note=np.arange(len(D))), "independent", epsilon=1.0, schema=declared, n=40)
    assert result.ledger["is_dp"] and result.data["note"].isna().all() and str(result.data["note"].dtype) == "object"


def test_text_coerced_to_nan_in_a_numeric_column_is_missing_not_the_top_bin():
    domain = column_domain(SCHEMA["age"], 10)  # nullable: the missing code is the last one
    codes = encode_column(pd.Series(["abc", 95, None], dtype=object), domain)
    assert list(codes) == [domain.missing_code, 9, domain.missing_code]
    strict = column_domain(SCHEMA["income"], 10)  # not nullable: a missing value is outside the domain
    assert list(encode_column(pd.Series(["abc", 999.0], dtype=object), strict)) == [-1, 9]


# --- seeds ---------------------------------------------------------------------------------------

def _seed_values(obj, path=""):
    """Every (path, value) in the ledger whose key mentions a seed."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if "seed" in str(k).lower():
                yield f"{path}/{k}", v
            yield from _seed_values(v, f"{path}/{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _seed_values(v, f"{path}/{i}")


@pytest.mark.parametrize("method", DP_METHODS)
def test_seeded_runs_are_exploration_and_fresh_runs_carry_no_seed(method):
    params = PARAMS.get(method, {})
    # A method that spends no ε reads the data only through a row count that is not declared.
    n_seeded = None if SYNTHESIZERS[method].spends.kind == NONE else 40
    seeded = synthesize(D, method, epsilon=1.0, schema=SCHEMA, n=n_seeded, seed=7, **params).ledger
    assert seeded["is_dp"] is False and seeded["not_dp_reasons"] == [SEEDED_REASON]
    assert "reproducible exploration, not DP" in seeded["dp_label"] and seeded["seed"] == 7
    assert statement_tone(seeded) == "warning"
    fresh = synthesize(D, method, epsilon=1.0, schema=SCHEMA, n=40, **params).ledger
    assert fresh["is_dp"] is True
    assert all(v is None for _, v in _seed_values(fresh)), list(_seed_values(fresh))
    assert "seed" not in release.file_stem("d", fresh) and "seed" not in fresh["statement"]
    # Fresh entropy each time: two runs give different data (P(equal) is negligible for 40 rows).
    a = synthesize(D, method, epsilon=1.0, schema=SCHEMA, n=40, **params).data
    b = synthesize(D, method, epsilon=1.0, schema=SCHEMA, n=40, **params).data
    assert not a.equals(b)


# --- one meaning of ε ----------------------------------------------------------------------------

@pytest.mark.parametrize("method, units", [("pegs", 40), ("pmi", 40), ("pegs_rs", 4)])
def test_per_record_methods_spend_the_total_epsilon(method, units):
    params = {"block": 10} if method == "pegs_rs" else {}
    led = synthesize(D, method, epsilon=2.0, schema=SCHEMA, n=40, **params).ledger
    assert led["epsilon_total"] == pytest.approx(2.0, rel=1e-12) and led["epsilon_requested"] == 2.0
    assert led["epsilon_per_record"] == pytest.approx(2.0 / units, rel=1e-12)
    assert led["exp_epsilon"] == pytest.approx(math.exp(2.0))


def test_the_map_plots_total_epsilon_for_every_method():
    table = ru_map(D, ["pegs", "independent"], [0.5, 2.0], seed=3, schema=SCHEMA, references=False,
                   metrics=["ks_mean"])
    for row in table.itertuples():
        led = synthesize(D, row.method, epsilon=row.epsilon, schema=SCHEMA, seed=int(row.seed)).ledger
        assert led["epsilon_total"] == pytest.approx(row.epsilon, rel=1e-12)
        assert row.is_dp  # DP if released with fresh randomness; the map's own points are seeded


def test_statement_grades_its_tone_and_says_what_e_to_the_epsilon_means():
    tones = {}
    for eps in (0.5, 5.0, 10.5, 20.0):
        led = synthesize(D, "independent", epsilon=eps, schema=SCHEMA, n=40).ledger
        tones[eps] = statement_tone(led)
        if eps > 10:
            assert f"e^ε = {math.exp(eps):,.0f}: the guarantee is very weak" in led["statement"]
    assert tones == {0.5: "success", 5.0: "info", 10.5: "warning", 20.0: "warning"}
    assert statement_tone({"is_dp": False, "epsilon_total": None}) == "warning"


def test_e_to_the_epsilon_is_written_as_people_read_it():
    # By hand: e^0.5 = 1.6487 → 1.65; e^5 = 148.41 → 148; e^20 = 485,165,195.4 → 485,165,195;
    # e^79.4 = 10^(79.4 / ln 10) = 10^34.483 = 3.04 × 10^34 (35 digits in the ledger's tile before);
    # past ε ≈ 709 e^ε overflows a float and the ledger holds None.
    assert [ratio_text(math.exp(e), e) for e in (0.5, 5.0, 20.0, 79.4)] == \
        ["1.65", "148", "485,165,195", "3.04 × 10^34"]
    assert ratio_text(None, 800.0) == "e^800, more than 10^300"


def test_implicates_wording_says_m_times_n_records_at_epsilon_over_m():
    led = synthesize(D, "independent", epsilon=1.0, schema=SCHEMA, n=40, implicates=3).ledger
    assert "3·40 = 120 records released, each implicate of 40 records at ε/3" in led["composition"]


# --- numerical edges ----------------------------------------------------------------------------

class _Scripted:
    """A Generator whose random() returns scripted values first (then defers to a real one)."""

    def __init__(self, values, seed=0):
        self.values, self.real = list(values), np.random.default_rng(seed)

    def random(self, size=None):
        n = 1 if size is None else int(np.prod(size))
        out = np.array([self.values.pop(0) if self.values else self.real.random() for _ in range(n)])
        return out if size is not None else float(out[0])

    def integers(self, *a, **k):
        return self.real.integers(*a, **k)


def test_geometric_noise_is_not_zero_where_one_minus_exp_rounds_to_one(monkeypatch):
    # ε/Δ = 40: 1 − e^−40 == 1.0 in floating point, and a float sampler returns 0 with certainty. The exact
    # sampler decides |k| by integer coins: 40 successes of the exp(−1) coin in a row (probability e^−40)
    # make X = U + b·40 ≥ a = 40·b, so k = ±1. Scripted here: every geometric draw is 40.
    assert 1.0 - math.exp(-40.0) == 1.0
    monkeypatch.setattr(exact, "geometric_exp1", lambda size, noise: np.full(size, 40, dtype=np.int64))
    z = mech.geometric_noise(1000, 40.0, np.random.default_rng(0))
    assert set(np.abs(z).tolist()) == {1} and (z > 0).any() and (z < 0).any()


def test_bernoulli_exp_has_the_law_exp_minus_t_across_pieces(monkeypatch):
    # With factors of at most e^−0.5, t = 3 takes 6 coins: the AND must still come up with P = e^−3.
    monkeypatch.setattr(mech, "_PIECE", 0.5)
    n = 200_000
    hits = mech.bernoulli_exp(3.0, np.random.default_rng(1), size=n).sum()
    se = math.sqrt(math.exp(-3) * (1 - math.exp(-3)) / n)
    assert abs(hits / n - math.exp(-3)) < 5 * se  # 5 binomial standard errors
    assert not mech.bernoulli_exp(math.inf, np.random.default_rng(1), size=3).any()
    assert mech.bernoulli_exp(0.0, np.random.default_rng(1), size=3).all()


def test_perturbed_draw_keeps_rare_categories_at_huge_epsilon():
    # Weights 1000 and 0 with α = e^−1000 (ε' = 1000): α + 1000 == 1000 in floating point, so the
    # old sampler never drew category 1; the mixture reaches it through the α part (here forced by
    # zero uniforms on every factor of the coin), with probability e^−1000·2/1000 > 0 in law.
    log_alpha = mech.log_perturbation_alpha(1000.0)
    assert math.exp(log_alpha) == 0.0 and log_alpha == pytest.approx(-1000.0)
    use_uniform, _, _ = mech.perturbed_plan(np.array([1000]), 2, log_alpha, _Scripted([0.0] * 100))
    assert use_uniform.tolist() == [True]
    use_uniform, _, _ = mech.perturbed_plan(np.array([1000]), 2, log_alpha, _Scripted([0.5]))
    assert use_uniform.tolist() == [False]


@pytest.mark.parametrize("integer", [True, False])
def test_perturbed_draw_has_the_law_of_the_perturbed_conditional(integer):
    # (n_j + α)/(N + Cα) with counts (6, 3, 1, 0) and α = 1/(e^0.5 − 1) = 1.5415 (C = 4, N = 10).
    counts = np.array([6, 3, 1, 0])
    weights = counts if integer else counts / 10.0  # PMI passes probabilities: (g + α)/(1 + Cα)
    alpha = 1 / math.expm1(0.5)
    total = weights.sum()
    expected = (weights + alpha) / (total + 4 * alpha)
    n = 100_000
    draws = mech.perturbed_draw(np.tile(weights, (n, 1)), mech.log_perturbation_alpha(0.5),
                                np.random.default_rng(3))
    observed = np.bincount(draws, minlength=4)
    chi2 = np.sum((observed - n * expected) ** 2 / (n * expected))
    assert chi2 < stats.chi2.ppf(0.999, 3)  # Pearson's χ² below its 0.999 quantile


@pytest.mark.parametrize("epsilon", [1e-5, 0.5, 60.0])  # coins of one factor of e^−20; at 60 several (t > 20)
def test_perturbed_counts_draws_what_perturbed_draw_draws(epsilon):
    # PeGS's table sampler must be perturbed_draw on the gathered rows of counts: same law, and from
    # the same generator state the same categories (a row of zeros: an unseen key, always uniform).
    rng = np.random.default_rng(4)
    counts = rng.integers(0, 50, (30, 6))
    counts[3] = 0
    rows = rng.integers(0, 30, 5000)
    uniform = rng.random(5000) < 0.1
    log_alpha = mech.log_perturbation_alpha(epsilon)
    table = mech.PerturbedCounts(counts, log_alpha)
    expected = mech.perturbed_draw(counts[rows], log_alpha, np.random.default_rng(9), uniform)
    assert np.array_equal(table.draw(rows, np.random.default_rng(9), uniform.copy()), expected)
    assert len(np.unique(expected[rows == 3])) == 6  # the zeros row draws every category
    # Finding only the rows its coins leave open draws the same (PeGS hashes keys for those alone).
    asked = []
    drawn = table.draw_rows_of(len(rows), lambda idx: (asked.append(len(idx)), rows[idx])[1], np.random.default_rng(9))
    assert np.array_equal(drawn, mech.perturbed_draw(counts[rows], log_alpha, np.random.default_rng(9)))
    # At ε = 1e−5 a row goes to its counts with chance ≤ 300/(300 + 6α) ≈ 5e−4 (α ≈ 1e5): a few of 5,000.
    assert sum(asked) < 50 if epsilon < 1e-3 else sum(asked) > 1000


@pytest.mark.parametrize("epsilon", [1e-6, 2.0, 60.0])  # nearly every row uniform; about half; coins of 3 factors
def test_perturbed_draw_probabilities_draws_what_perturbed_draw_draws(epsilon):
    # PMI's sampler asks for the probabilities of the rows its coins leave to them, and must draw what
    # perturbed_draw draws from every row's probabilities, from the same generator state.
    rng = np.random.default_rng(6)
    p = np.exp(3 * rng.normal(size=(4000, 5)))
    p /= p.sum(axis=1, keepdims=True)
    asked = []
    log_alpha = mech.log_perturbation_alpha(epsilon)
    expected = mech.perturbed_draw(p, log_alpha, np.random.default_rng(9))
    drawn = mech.perturbed_draw_probabilities(lambda rows: (asked.append(len(rows)), p[rows])[1], len(p), 5,
                                              log_alpha, np.random.default_rng(9))
    assert np.array_equal(drawn, expected)
    if epsilon < 1:  # a row goes to its probabilities with chance 1/(1 + 5α) ≈ 2e−7: none of 4,000 needed
        assert sum(asked) == 0
    else:
        assert sum(asked) > 1000


def test_pegs_runs_at_an_epsilon_where_alpha_underflows():
    led = synthesize(D, "pegs", epsilon=1e9, schema=SCHEMA, n=20).ledger  # ε/M per conditional ≫ 745
    assert led["is_dp"] and led["epsilon_total"] == pytest.approx(1e9, rel=1e-12)
    json.dumps(led)


def test_dp_seqreg_states_its_floating_point_caveat():
    led = synthesize(D, "dp_seqreg", epsilon=1.0, schema=SCHEMA, n=40).ledger
    assert any("floating point" in c and "Mironov" in c for c in led["caveats"])
    assert "Caveat: the Laplace noise on the moment matrices" in led["statement"]


@pytest.mark.parametrize("method, words", [("pegs", "mixing coin"), ("pegs_rs", "mixing coin"), ("pmi", "2^−53/p"),
                                           ("dirichlet", "gamma variates")])
def test_a_method_whose_draws_use_floating_point_says_so_in_its_ledger_and_statement(method, words):
    # Their noise is not drawn by integer coins (docs/noise.md): the guarantee holds up to the rounding stated.
    led = synthesize(D, method, epsilon=1.0, schema=SCHEMA, n=40).ledger
    assert len(led["caveats"]) == 1 and words in led["caveats"][0]
    assert "Caveat: " + led["caveats"][0] in led["statement"]


@pytest.mark.parametrize("method", ["independent", "mst", "privbayes", "aim"])
def test_a_method_with_exact_noise_has_no_floating_point_caveat(method):
    assert synthesize(D, method, epsilon=1.0, schema=SCHEMA, n=40).ledger["caveats"] == []


def test_the_ledger_says_a_holdout_was_taken_and_its_share():
    from dpsynth_core.holdout import holdout_mask, split_holdout

    train, _ = split_holdout(D, 0.25, mask=holdout_mask(len(D), 0.25, np.random.default_rng(4)))
    led = synthesize(train, "independent", epsilon=1.0, schema=SCHEMA, n=40, holdout_share=0.25).ledger
    assert led["holdout"]["taken"] is True and led["holdout"]["share"] == 0.25
    assert "fresh secret randomness" in led["holdout"]["how"]
    assert synthesize(D, "independent", epsilon=1.0, schema=SCHEMA, n=40).ledger["holdout"] == {"taken": False}
