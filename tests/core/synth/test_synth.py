"""Tests for dpsynth_core.synth: every method's contract, the ledger, and what each
method keeps or loses of the data's distribution.

Reference values are computed here from the real data with pandas/scipy
(value counts, histograms over the declared bounds, chi-square tables) or
written out by hand; statistical checks use fixed seeds and state their slack.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest
from scipy import stats

from dpsynth_core.datasets import load_bundled
from dpsynth_core.schema import Schema
from dpsynth_core.privacy import TOTAL
from dpsynth_core.privacy.randomness import streams
from dpsynth_core.synth import SYNTHESIZERS, synthesize

METHODS = sorted(SYNTHESIZERS)
DP_METHODS = [m for m in METHODS if SYNTHESIZERS[m].is_dp]
NON_DP_METHODS = [m for m in METHODS if not SYNTHESIZERS[m].is_dp]
PENGUIN_COLUMNS = ["species", "island", "bill_length_mm", "bill_depth_mm", "flipper_length_mm",
                   "body_mass_g", "sex", "year"]


def _mixed_frame() -> pd.DataFrame:
    """60 rows of every kind the inference knows, with gaps, from a fixed seed."""
    rng = np.random.default_rng(7)
    n = 60
    income = rng.lognormal(10, 0.5, n).round(2)
    income[rng.choice(n, 6, replace=False)] = np.nan
    sex = rng.choice(["f", "m"], n).astype(object)
    sex[[3, 17]] = None
    return pd.DataFrame({
        "id": np.arange(1, n + 1),                       # excluded: identifier
        "age": rng.integers(18, 90, n),                   # numeric, whole numbers
        "income": income,                                 # numeric with gaps
        "sex": pd.Series(sex, dtype="str"),               # categorical with gaps
        "grade": rng.integers(1, 4, n),                   # whole numbers, 3 values: categorical
        "member": rng.random(n) < 0.3,                    # booleans: categorical
        "note": [f"free text {i}" for i in range(n)],     # excluded: one value per row
    })


MIXED = _mixed_frame()
MIXED_SCHEMA = {  # declared public domain of the mixed frame
    "id": {"kind": "excluded"},
    "age": {"kind": "numeric", "bounds": [18, 95], "integer": True},
    "income": {"kind": "numeric", "bounds": [0, 100_000], "nullable": True},
    "sex": {"kind": "categorical", "categories": ["f", "m"], "nullable": True},
    "grade": {"kind": "categorical", "categories": [1, 2, 3]},
    "member": {"kind": "categorical", "categories": [False, True]},
    "note": {"kind": "excluded"},
}


@pytest.fixture(scope="module")
def penguins():
    return load_bundled("penguins")


def _case(name, penguins):
    df, schema = penguins
    if name == "penguins_public":
        return df, schema
    if name == "penguins_inferred":
        return df, None
    return MIXED, MIXED_SCHEMA


CASES = ["penguins_public", "penguins_inferred", "mixed"]


def fast_on(*fast):
    """The grid of every method on ``CASES`` with the cases not in ``fast`` marked slow: the fast loop runs
    every method on the mixed frame (every kind of column: integer, float, text, flag, excluded), CI every case.
    Each synthesis of penguins costs up to 0.2 s of CPU (AIM), and the grids below hold a few hundred."""
    return [c if c in fast else pytest.param(c, marks=pytest.mark.slow) for c in CASES]


def _run(df, method, **kw):
    kw.setdefault("epsilon", 1.0)
    return synthesize(df, method, **kw)


# Output dtype of each kind of schema entry (the table of issue 15, point 1).
_KIND_DTYPE = {("numeric", True): "Int64", ("numeric", False): "float64", ("excluded", False): "object"}
_CATEGORY_DTYPE = {bool: "boolean", int: "Int64", str: "str", float: "float64"}


def _schema_dtypes(schema) -> dict:
    out = {}
    for name, col in schema.columns.items():
        if col.kind == "categorical":
            types = {type(c) for c in col.categories}
            out[name] = _CATEGORY_DTYPE[types.pop()] if len(types) == 1 else "object"
        else:
            out[name] = _KIND_DTYPE[(col.kind, col.integer and col.kind == "numeric")]
    return out


def test_mixed_frame_dtypes_by_hand():
    out = synthesize(MIXED, "independent", epsilon=1.0, schema=MIXED_SCHEMA, seed=1).data
    assert {c: str(t) for c, t in out.dtypes.items()} == {
        "id": "object", "age": "Int64", "income": "float64", "sex": "str", "grade": "Int64",
        "member": "boolean", "note": "object"}
    assert out["id"].isna().all() and out["note"].isna().all()  # excluded: nothing of the data


# --- the contract every method keeps -----------------------------------------

def test_registry_has_the_documented_methods():
    assert {"independent", "cart", "bootstrap"} <= set(METHODS)
    assert "independent" in DP_METHODS
    assert {"cart", "bootstrap"} <= set(NON_DP_METHODS)


@pytest.mark.parametrize("n", [None, 57, 1000])
@pytest.mark.parametrize("case", fast_on("mixed"))
@pytest.mark.parametrize("method", METHODS)
def test_same_columns_dtypes_and_row_count(method, case, n, penguins):
    df, schema = _case(case, penguins)
    result = _run(df, method, schema=schema, n=n, seed=3)
    out = result.data
    assert list(out.columns) == list(df.columns)
    # Dtypes come from the schema alone (issue 15): never copied from the confidential frame.
    assert {c: str(t) for c, t in out.dtypes.items()} == _schema_dtypes(result.schema)
    if n is not None:
        assert len(out) == n
    elif SYNTHESIZERS[method].is_dp:
        # Undeclared row count: a noisy count with 5% of ε = 1 (geometric, α = e^-0.05).
        # P(|noise| > 150) = 2α^151/(1+α) ≈ 5e-4, so 150 rows is a safe band.
        assert abs(len(out) - len(df)) <= 150
    else:
        assert len(out) == len(df)
    assert list(out.index) == list(range(len(out)))


@pytest.mark.parametrize("case", fast_on("mixed"))
@pytest.mark.parametrize("method", METHODS)
def test_same_seed_same_frame_other_seed_other_frame(method, case, penguins):
    df, schema = _case(case, penguins)
    a = _run(df, method, schema=schema, seed=11).data
    b = _run(df, method, schema=schema, seed=11).data
    c = _run(df, method, schema=schema, seed=12).data
    pdt.assert_frame_equal(a, b)
    assert not a.equals(c)


@pytest.mark.parametrize("method", METHODS)
def test_seed_none_draws_fresh_entropy(method, penguins):
    df, schema = penguins
    a = _run(df, method, schema=schema, seed=None)
    b = _run(df, method, schema=schema, seed=None)
    assert a.data.shape[1] == b.data.shape[1] == df.shape[1]
    assert a.ledger["seed"] is None
    # 344 rows drawn afresh twice: equal frames would need every draw to repeat.
    assert not a.data.equals(b.data)


@pytest.mark.parametrize("seed", [-1, 1.5, "3", True])
def test_bad_seed_is_refused(seed, penguins):
    df, schema = penguins
    with pytest.raises(ValueError, match="seed"):
        _run(df, "bootstrap", schema=schema, seed=seed)


@pytest.mark.parametrize("method", DP_METHODS)
def test_dp_method_needs_epsilon(method, penguins):
    df, schema = penguins
    with pytest.raises(ValueError, match="epsilon"):
        synthesize(df, method, schema=schema, seed=0)


def test_unknown_method():
    with pytest.raises(ValueError, match="unknown method 'magic'.*independent"):
        synthesize(MIXED, "magic", epsilon=1.0)


def test_n_out_of_range_and_empty_frame(penguins):
    df, schema = penguins
    for n in (0, -5):
        with pytest.raises(ValueError, match="n must be"):
            synthesize(df, "bootstrap", schema=schema, n=n)
    with pytest.raises(ValueError, match="no rows"):
        synthesize(df.iloc[:0], "bootstrap")


# --- the ledger ---------------------------------------------------------------

@pytest.mark.parametrize("method", METHODS)
def test_no_schema_is_not_dp_and_says_why(method, penguins):
    df, _ = penguins
    ledger = _run(df, method, seed=0).ledger
    assert ledger["is_dp"] is False
    assert any(r.startswith("data-derived bounds") for r in ledger["not_dp_reasons"])
    assert ledger["dp_label"].startswith("not DP (")
    assert "not differentially private" in ledger["statement"]
    assert all(c["source"] == "read off the data (not public)" for c in ledger["public"]["columns"].values())


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 8.0])
def test_independent_ledger_with_the_bundled_public_schema(epsilon, penguins):
    df, schema = penguins
    # seed=None: only fresh-entropy runs are DP (issue 15); seeded runs are exploration.
    ledger = synthesize(df, "independent", epsilon=epsilon, schema=schema, seed=None).ledger
    assert ledger["is_dp"] is True and ledger["not_dp_reasons"] == []
    assert ledger["dp_label"] == f"ε-DP with ε = {epsilon:g}"
    assert ledger["epsilon_total"] == epsilon
    assert ledger["delta"] == 0.0
    # No declared row count: 5% of ε buys a noisy count, then all 8 penguin
    # columns are modelled, so each histogram gets 0.95·ε/8.
    m = len(PENGUIN_COLUMNS)
    assert ledger["synthesized_columns"] == PENGUIN_COLUMNS
    assert len(ledger["steps"]) == m + 1
    assert ledger["steps"][0]["target"] == "number of rows"
    assert ledger["steps"][0]["epsilon"] == pytest.approx(0.05 * epsilon, rel=1e-12)
    assert [s["epsilon"] for s in ledger["steps"][1:]] == pytest.approx([0.95 * epsilon / m] * m, rel=1e-12)
    assert math.fsum(s["epsilon"] for s in ledger["steps"]) == pytest.approx(epsilon, rel=1e-12)
    assert ledger["exp_epsilon"] == pytest.approx(math.e ** epsilon, rel=1e-12)
    assert (f"{math.e ** epsilon:,.2f}" if epsilon < 4.6 else f"{math.e ** epsilon:,.0f}") in ledger["statement"]
    assert ledger["public"]["row_count"]["value"] == ledger["n_rows"]
    assert ledger["public"]["row_count"]["source"] == f"released with noise (ε = {0.05 * epsilon:.4g})"
    assert ledger["public"]["columns"]["island"] == {
        "kind": "categorical", "categories": ["Biscoe", "Dream", "Torgersen"], "source": "declared public"}
    assert ledger["public"]["columns"]["body_mass_g"]["bounds"] == [2500.0, 6500.0]
    assert json.loads(json.dumps(ledger)) == ledger


def test_ledger_counts_only_modelled_columns_and_declared_row_count():
    # mixed frame: id and note are excluded, so M = 5 columns share ε.
    ledger = synthesize(MIXED, "independent", epsilon=2.0, schema=MIXED_SCHEMA, n=123, seed=None).ledger
    assert ledger["is_dp"] is True
    assert ledger["excluded_columns"] == ["id", "note"]
    assert [s["epsilon"] for s in ledger["steps"]] == pytest.approx([0.4] * 5)  # 2.0 / 5
    assert ledger["public"]["row_count"] == {"value": 123, "source": "declared by the user (public)"}
    json.dumps(ledger)


def test_ledger_is_json_ready_for_numpy_seeds_and_huge_epsilon(penguins):
    # Regression: a numpy integer seed broke json.dumps, and ε ≥ 700 (e^ε overflows)
    # crashed the plain-words statement.
    df, schema = penguins
    result = synthesize(df, "independent", epsilon=1e6, schema=schema, seed=np.int64(5))
    assert result.ledger["seed"] == 5
    assert result.ledger["exp_epsilon"] is None
    json.dumps(result.ledger)
    fresh = synthesize(df, "independent", epsilon=1e6, schema=schema).ledger  # seeded runs are not DP
    assert "e^1e+06" in fresh["statement"] and "very weak" in fresh["statement"]
    json.dumps(fresh)
    pdt.assert_frame_equal(result.data, synthesize(df, "independent", epsilon=1e6, schema=schema,
                                                   seed=5).data)


@pytest.mark.parametrize("method", NON_DP_METHODS)
def test_non_dp_methods_stay_not_dp_with_a_public_schema(method, penguins):
    df, schema = penguins
    ledger = synthesize(df, method, epsilon=1.0, schema=schema, seed=0).ledger
    assert ledger["is_dp"] is False
    assert ledger["not_dp_reasons"] == [f"{SYNTHESIZERS[method].label} is not a differentially private method"]
    assert ledger["epsilon_total"] is None and ledger["steps"] == []
    json.dumps(ledger)


# --- partial synthesis ----------------------------------------------------------

@pytest.mark.parametrize("method", METHODS)
def test_partial_synthesis_keeps_other_columns_row_for_row(method, penguins):
    df, schema = penguins
    targets = ["bill_length_mm", "body_mass_g"]
    result = synthesize(df, method, epsilon=1.0, schema=schema, columns=targets, seed=4)
    kept = [c for c in PENGUIN_COLUMNS if c not in targets]
    for c in kept:
        # Same values row for row; the dtype is the schema's (issue 15), e.g. Int64 for a whole-number column.
        pdt.assert_series_equal(result.data[c], df[c], check_names=True, check_dtype=False)
    assert not result.data[targets].equals(df[targets])
    ledger = result.ledger
    assert ledger["is_dp"] is False
    assert ledger["kept_columns"] == kept
    assert ledger["synthesized_columns"] == targets
    assert any("partial synthesis" in r and "species" in r for r in ledger["not_dp_reasons"])
    if SYNTHESIZERS[method].conditional:
        # Row for row: the trees condition on the kept columns (flipper length among them), so the
        # synthetic body mass follows each row's real one (Pearson r ≈ 0.87 between flipper length
        # and body mass in the data). Over seeds 0–4 the row-wise r is 0.91–0.92 for cart, while
        # the unconditional methods give |r| < 0.1 (SD of r under no link: 1/√342 ≈ 0.054).
        both = result.data["body_mass_g"].notna() & df["body_mass_g"].notna()
        assert np.corrcoef(result.data["body_mass_g"][both], df["body_mass_g"][both])[0, 1] > 0.6
    if SYNTHESIZERS[method].is_dp and SYNTHESIZERS[method].spends.kind == TOTAL:
        # Kept columns cost nothing: the whole ε = 1 goes to the synthesized columns, whether the
        # method spends it per column (independent: 0.5 + 0.5), in one step (dirichlet) or in ρ (mst).
        assert ledger["epsilon_total"] == pytest.approx(1.0)
        assert ledger["synthesized_columns"] == targets


def test_partial_synthesis_refuses_other_row_counts_and_unknown_columns(penguins):
    df, schema = penguins
    with pytest.raises(ValueError, match="n must equal"):
        synthesize(df, "cart", schema=schema, columns=["sex"], n=100)
    with pytest.raises(ValueError, match="weight"):
        synthesize(df, "cart", schema=schema, columns=["sex", "weight"])


# --- domains, whole numbers, gaps ---------------------------------------------------

def _check_within_schema(out: pd.DataFrame, schema: Schema):
    for name in schema.used:
        col, values = schema[name], out[name]
        present = values.dropna()
        if not col.nullable:
            assert values.notna().all(), name
        if col.kind == "categorical":
            assert set(present) <= set(col.categories), name
        else:
            lo, hi = col.bounds
            assert present.between(lo, hi).all(), (name, present.min(), present.max())


@pytest.mark.parametrize("epsilon", [0.05, 1.0, 1e6])
def test_independent_stays_inside_declared_bounds_and_categories(epsilon, penguins):
    df, schema = penguins
    out = synthesize(df, "independent", epsilon=epsilon, schema=schema, n=3000, seed=2).data
    _check_within_schema(out, schema)


def test_independent_clips_to_bounds_narrower_than_the_data(penguins):
    df, schema = penguins
    narrow = schema.replace_column("bill_length_mm", bounds=(40.0, 45.0))
    assert df["bill_length_mm"].min() < 40 and df["bill_length_mm"].max() > 45
    out = synthesize(df, "independent", epsilon=1e6, schema=narrow, n=3000, seed=2).data
    _check_within_schema(out, narrow)
    # Mass piles up in the two edge bins: at least the real share below 40 (plus one bin).
    real_below = (df["bill_length_mm"] < 40).mean()
    assert (out["bill_length_mm"] < 40.25).mean() > real_below - 0.05


@pytest.mark.parametrize("case", fast_on("mixed"))
@pytest.mark.parametrize("method", METHODS)
def test_integer_columns_stay_whole(method, case, penguins):
    df, schema = _case(case, penguins)
    result = _run(df, method, schema=schema, n=2000, seed=9)
    integer_cols = [c for c in result.schema.used
                    if result.schema[c].kind == "numeric" and result.schema[c].integer]
    assert integer_cols  # penguins: flipper length and body mass; mixed: age
    for c in integer_cols:
        v = result.data[c].dropna().to_numpy(dtype=float)
        assert np.array_equal(v, np.round(v)), c


def test_missing_values_at_the_real_rate_with_large_epsilon(penguins):
    df, schema = penguins
    n = 20_000
    out = synthesize(df, "independent", epsilon=1e6, schema=schema, n=n, seed=5).data
    for c in PENGUIN_COLUMNS:
        p = df[c].isna().mean()  # sex 11/344, the four measurements 2/344, others 0
        share = out[c].isna().mean()
        if not schema[c].nullable:
            assert share == 0, c
            continue
        # ε/8 = 125,000 per histogram: the noise is exactly 0 (α = e^-125000 underflows), so the
        # missing share is Binomial(n, p)/n. 5 standard errors: false alarm < 1e-6 per column.
        se = math.sqrt(p * (1 - p) / n)
        assert abs(share - p) < 5 * se, (c, share, p)


# --- independent: what it keeps and what it loses -----------------------------------

def _tv(p, q) -> float:
    return 0.5 * float(np.abs(np.asarray(p) - np.asarray(q)).sum())


def _shares(values: pd.Series, categories) -> np.ndarray:
    return values.value_counts(normalize=True).reindex(list(categories), fill_value=0).to_numpy()


def _cramers_v(a: pd.Series, b: pd.Series) -> tuple[float, float, int]:
    table = pd.crosstab(a, b)
    chi2, _, dof, _ = stats.chi2_contingency(table, correction=False)
    return math.sqrt(chi2 / (table.to_numpy().sum() * (min(table.shape) - 1))), chi2, dof


@pytest.fixture(scope="module")
def diamonds():
    return load_bundled("diamonds")


@pytest.fixture(scope="module")
def diamonds_large_eps(diamonds):
    df, schema = diamonds
    return synthesize(df, "independent", epsilon=1e6, schema=schema, seed=2024, bins=20).data


# TV tolerance at ε = 1e6 (no noise: ε/10 per column underflows α): the synthetic marginal is a
# multinomial sample of n = 53,940 rows from the real one, so E[TV] ≈ ½·√(2/π)·Σ√(p(1−p)/n),
# at most 0.0042 over these columns (clarity, price), with SD ≈ 0.0013. 0.01 is > 4 SD above
# the mean (a multinomial simulation puts P(TV > 0.01) near 5e-5 per column).
TV_TOL = 0.01


def test_independent_keeps_categorical_marginals(diamonds, diamonds_large_eps):
    df, schema = diamonds
    for c in ["cut", "color", "clarity"]:
        cats = schema[c].categories
        real, syn = _shares(df[c], cats), _shares(diamonds_large_eps[c], cats)
        expected_tv = 0.5 * math.sqrt(2 / math.pi) * np.sqrt(real * (1 - real) / len(df)).sum()
        assert expected_tv < 0.0045
        assert _tv(real, syn) < TV_TOL, c


def test_independent_keeps_binned_numeric_marginals(diamonds, diamonds_large_eps):
    df, schema = diamonds
    for c in ["carat", "depth", "table", "price", "x", "y", "z"]:
        lo, hi = schema[c].bounds
        # 10 equal bins over the declared bounds: each is two of the synthesizer's 20 bins, so
        # drawing uniformly inside a bin cannot move mass across these edges.
        edges = np.linspace(lo, hi, 11)
        real = np.histogram(df[c].clip(lo, hi), edges)[0] / len(df)
        syn = np.histogram(diamonds_large_eps[c], edges)[0] / len(diamonds_large_eps)
        assert _tv(real, syn) < TV_TOL, c


def test_independent_loses_associations(diamonds, diamonds_large_eps):
    df, syn = diamonds[0], diamonds_large_eps
    # Columns are drawn independently, so Pearson's statistic of cut × color is χ² with
    # (5−1)(7−1) = 24 degrees of freedom: below its 0.999 quantile except 1 time in 1000.
    v_real, chi2_real, dof = _cramers_v(df["cut"], df["color"])
    v_syn, chi2_syn, dof_syn = _cramers_v(syn["cut"], syn["color"])
    limit = stats.chi2.ppf(0.999, 24)
    assert dof == dof_syn == 24
    assert chi2_real > 5 * limit          # the real data do associate cut and colour (χ² ≈ 310)
    assert chi2_syn < limit
    assert v_syn < math.sqrt(limit / (len(syn) * 4)) < v_real / 2  # V from the same quantile: 0.0154
    # The strongest real association, cut × clarity (V ≈ 0.14), is gone too.
    assert _cramers_v(df["cut"], df["clarity"])[0] > 0.1
    assert _cramers_v(syn["cut"], syn["clarity"])[0] < math.sqrt(stats.chi2.ppf(0.999, 28) / (len(syn) * 4))
    # carat and price are nearly monotone in the data; independent draws have Spearman ρ with
    # SD 1/√(n−1) ≈ 0.0043, so |ρ| < 5 SD.
    assert stats.spearmanr(df["carat"], df["price"])[0] > 0.9
    assert abs(stats.spearmanr(syn["carat"], syn["price"])[0]) < 5 / math.sqrt(len(syn) - 1)


@pytest.mark.slow  # 200 releases of the diamonds' histograms (about 2 s of CPU); CI runs it
def test_independent_small_epsilon_pulls_marginals_toward_uniform(diamonds):
    """ε = 1e-3 over M = 10 columns: ε/10 = 1e-4 per histogram, geometric noise with SD
    √(2α)/(1−α) ≈ 14,142 against counts of at most 21,551. A single release is then mostly noise
    (its TV to the real marginal is large); on average over releases the clipped noisy counts
    E[max(0, c + Z)] ≈ c + (b/2)e^(−c/b), b ≈ 10⁴, lift small cells more than large ones, so
    the mean synthetic marginal moves toward uniform. (Each single release is typically
    *farther* from uniform than the data: a random clipped vector, not a flat one.)

    The release step runs via the registry (measure once, release per seed) because every
    synthesize() call re-infers the 53,940-row schema; the first seed is checked against
    synthesize() so the two paths are the same computation.
    """
    df, schema = diamonds
    eps, n_syn, seeds = 1e-3, 500, 200
    ind = SYNTHESIZERS["independent"]
    measured = ind.measure(df, schema, schema.used, bins=20)
    first = synthesize(df, "independent", epsilon=eps, schema=schema, n=n_syn, seed=0, bins=20).data
    shares = {c: [] for c in ["cut", "color", "clarity"]}
    for s in range(seeds):
        rng, noise = streams(s)  # the two generators synthesize(seed=s) uses
        values, _ = ind.generate(measured, epsilon=eps, n=n_syn, rng=rng, noise=noise, bins=20)
        if s == 0:
            for c in schema.used:
                pdt.assert_series_equal(pd.Series(values[c], name=c).astype(first[c].dtype), first[c])
        for c in shares:
            shares[c].append(_shares(pd.Series(values[c]), schema[c].categories))

    ref_rng = np.random.default_rng(99)
    for c, per_seed in shares.items():
        per_seed = np.array(per_seed)
        cats = schema[c].categories
        k = len(cats)
        uniform = np.full(k, 1 / k)
        real = _shares(df[c], cats)
        mean = per_seed.mean(axis=0)
        # Single releases are dominated by noise: mean TV to the real marginal > 0.2 (at ε = 1e6
        # it is below 0.01).
        assert np.mean([_tv(p, real) for p in per_seed]) > 0.2, c
        # Toward uniform: clearly below the data's TV to uniform (0.28, 0.15, 0.29).
        assert _tv(mean, uniform) < 0.85 * _tv(real, uniform), c
        # Quantitatively: the mean marginal matches E[noisy distribution] from a reference
        # implementation (scipy's discrete Laplace at a = ε/10 = 1e-4, clip, normalise, uniform if
        # all cells vanish), within 4 standard errors of the 200-seed mean per cell.
        counts = df[c].value_counts().reindex(list(cats)).to_numpy()
        z = stats.dlaplace.rvs(eps / 10, size=(40_000, k), random_state=ref_rng)
        noisy = np.clip(counts + z, 0, None).astype(float)
        totals = noisy.sum(axis=1, keepdims=True)
        ref = np.where(totals > 0, noisy / np.where(totals > 0, totals, 1), 1 / k).mean(axis=0)
        se = per_seed.std(axis=0, ddof=1) / math.sqrt(seeds)
        assert np.all(np.abs(mean - ref) < 4 * se), (c, mean, ref, se)


# --- cart and bootstrap ---------------------------------------------------------

def test_cart_keeps_the_species_island_association(penguins):
    df, schema = penguins
    out = synthesize(df, "cart", schema=schema, seed=17).data
    v_real = _cramers_v(df["species"], df["island"])[0]
    v_syn = _cramers_v(out["species"], out["island"])[0]
    # Real V ≈ 0.66. The island tree splits on species into pure leaves, so the synthetic
    # table differs from the real one only by sampling 344 rows: V's SD over seeds is about
    # 0.02, and 0.15 is about 7 SD.
    assert v_real > 0.6
    assert abs(v_syn - v_real) < 0.15
    # Cells empty in the data (Gentoo off Biscoe, Chinstrap off Dream) stay empty: every island
    # is drawn from real donors of the same species.
    real_table = pd.crosstab(df["species"], df["island"])
    syn_table = pd.crosstab(out["species"], out["island"]).reindex_like(real_table).fillna(0)
    assert ((real_table == 0) <= (syn_table == 0)).all().all()
    # The independent baseline loses it at any ε: its V is the sampling noise of independence,
    # below √(χ²_{4, 0.999} / (344·2)) ≈ 0.16.
    ind = synthesize(df, "independent", epsilon=1e6, schema=schema, seed=17).data
    assert _cramers_v(ind["species"], ind["island"])[0] < math.sqrt(stats.chi2.ppf(0.999, 4) / (344 * 2))


@pytest.mark.parametrize("case", CASES)
def test_bootstrap_rows_are_real_rows(case, penguins):
    df, schema = _case(case, penguins)
    out = synthesize(df, "bootstrap", schema=schema, n=500, seed=8).data
    used = [c for c in df.columns if c not in ("id", "note")]  # excluded columns are not released

    def rows(frame):
        return set(frame[used].astype(object).where(frame[used].notna(), None).itertuples(index=False))

    assert rows(out) <= rows(df)
    # 500 draws from 344 (or 60) rows: a real row is missed with probability (1 − 1/N)^500,
    # so about 81 (or 0) distinct rows are absent; many distinct rows appear.
    assert len(rows(out)) > 0.5 * len(rows(df))
