"""Hostile inputs after a file loads: each one works or gets one sentence (issue 16).

Every test here started as a one-line reproducer of a raw exception (or of a
value written outside its declared domain) found with generated CSV files.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from dpsynth_core import constraints, load_csv, to_csv_bytes
from dpsynth_core.errors import DataError, MethodRefused
from dpsynth_core.schema import Schema, infer_schema
from dpsynth_core.synth import SYNTHESIZERS, regression_design, synthesize
from dpsynth_core.synth.regression_design import from_unit
from dpsynth_core.utility import histogram_data, propensity_metrics, utility_summary

METHODS = sorted(SYNTHESIZERS)


def out_of_domain(frame: pd.DataFrame, schema: Schema) -> list[str]:
    """Descriptions of the values of ``frame`` that lie outside ``schema``'s declared domain."""
    bad = []
    for name in schema.used:
        col = schema[name]
        values = frame[name]
        missing = values.isna().to_numpy()
        if missing.any() and not col.nullable:
            bad.append(f"{name}: missing values in a column that is not nullable")
        observed = values[~missing]
        if col.kind == "categorical":
            allowed = set(col.categories)
            outside = [v for v in observed.unique() if v not in allowed]
            if outside:
                bad.append(f"{name}: {outside[:3]!r} not among {col.categories!r}")
        else:
            x = pd.to_numeric(observed, errors="coerce").to_numpy(dtype=float)
            lo, hi = col.bounds
            if np.isnan(x).any() or (x < lo).any() or (x > hi).any():
                bad.append(f"{name}: values outside [{lo!r}, {hi!r}]: {x[(x < lo) | (x > hi)][:3]!r}")
    return bad


def _csv(text: str) -> pd.DataFrame:
    return load_csv(io.BytesIO(text.encode()))


# -- 1. no raw exception ---------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["inf", "-inf", "1e400", "-1e300", "1e101"])
def test_infer_schema_excludes_a_column_of_numbers_too_large_to_compute_with(value):
    df = _csv(f"a,b\n1,x\n{value},y\n2,x\n")
    schema = infer_schema(df)
    assert schema["a"].kind == "excluded"
    assert "too large" in schema["a"].reason
    assert schema["b"].kind == "categorical"


def test_numbers_at_the_limit_stay_numeric():
    df = pd.DataFrame({"a": [-constraints.MAX_ABS_VALUE, 0.5, 1.5, 2.5] * 5})
    assert infer_schema(df)["a"].bounds == (-1e100, 2.5)


def test_declared_bounds_beyond_the_limit_are_refused_with_a_remedy():
    with pytest.raises(ValueError, match=r"within ±1e\+100.*rescale"):
        Schema.from_dict({"a": {"kind": "numeric", "bounds": [0, 1e300]}})


def test_cart_clips_huge_values_to_declared_bounds_before_its_float32_trees():
    # sklearn's trees read float32: -1e300 became -inf and the fit raised.
    df = pd.DataFrame({"a": [-1e300, 1.5, 2.0, 3.0, 4.0, 5.0] * 4, "b": [1.5, 2, 3, 4, 5, 6] * 4})
    schema = Schema.from_dict({"a": {"kind": "numeric", "bounds": [-1e100, 10]},
                               "b": {"kind": "numeric", "bounds": [0, 1e60]}})
    out = synthesize(df, "cart", schema=schema, seed=1).data
    assert out_of_domain(out, schema) == []
    assert (out["a"] == -1e100).any()  # the clipped donor is handed out, at the bound
    # In the trees the bound is clipped to float32's range; ordinary values are left as they are.
    from dpsynth_core.synth.cart import as_feature
    assert as_feature(np.array([-1e300, 1.5, np.nan, 1e5]), schema["a"]).tolist()[:2] == [-1e38, 1.5]
    assert np.isnan(as_feature(np.array([np.nan]), schema["a"])[0])


def test_parametric_with_a_constant_categorical_before_another():
    df = _csv("a,b,c\n" + "\n".join(f"k,{'uv'[i % 2]},{i % 3}" for i in range(30)) + "\n")
    res = synthesize(df, "parametric", seed=1)
    assert out_of_domain(res.data, res.schema) == []
    # With nothing to regress on, b is drawn from its shares (half u, half v).
    assert set(res.data["b"]) == {"u", "v"}


def test_dirichlet_on_more_columns_than_numpy_has_dimensions():
    df = pd.DataFrame({f"c{i}": ["a"] * 10 for i in range(199)})  # one cell
    out = synthesize(df, "dirichlet", epsilon=1.0, n=10, seed=1).data
    assert (out == "a").all().all()


def test_dirichlet_refusal_states_a_huge_cell_count_readably():
    df = pd.DataFrame({f"c{i}": ["a", "b"] * 5 for i in range(199)})
    with pytest.raises(MethodRefused, match=r"about 10\^59 cells"):
        synthesize(df, "dirichlet", epsilon=1.0, n=10, seed=1)


def test_propensity_standardises_numbers_near_the_float_limit():
    # (x − mean)/sd overflowed to NaN at −1e308. Scaling every value by 2^-1000 leaves the
    # standardised design, hence every figure, unchanged; at that scale nothing overflows.
    real = pd.DataFrame({"a": [-1e308, 1.0, 2.0, 3.0] * 5, "b": list("xyzw") * 5})
    synth = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0] * 5, "b": list("xyzw") * 5})
    scale = 2.0 ** -1000
    res = propensity_metrics(real, synth, seed=0)
    small = propensity_metrics(real.assign(a=real["a"] * scale), synth.assign(a=synth["a"] * scale), seed=0)
    assert np.isfinite(res.pmse)
    assert res.pmse == pytest.approx(small.pmse, rel=1e-9)
    assert res.auc == pytest.approx(small.auc, rel=1e-12)


def test_histograms_over_a_range_wider_than_the_largest_float():
    real = pd.DataFrame({"a": [1.797e308, -1.797e308, 0.0, 1.0]})
    h = histogram_data(real, real, "a", bins=2)
    # Edges −1.797e308, 0, 1.797e308: one value in [lo, 0), three in [0, hi].
    assert h["real_count"].tolist() == [1, 3]
    summary = utility_summary(real, real)
    assert summary.columns.distances.loc["a", "ks"] == 0.0


def test_from_unit_never_lands_past_a_bound():
    # lo + 2·(hi − lo)/2 can round one ulp above hi; find such bounds, then check the clip.
    rng = np.random.default_rng(0)
    pairs = np.sort(rng.uniform(-10, 10, size=(2000, 2)), axis=1)
    raw = pairs[:, 0] + 2.0 * (pairs[:, 1] - pairs[:, 0]) / 2.0
    over = pairs[raw > pairs[:, 1]]
    assert len(over) > 0  # the arithmetic does overshoot, so the check below can fail
    for lo, hi in over[:50]:
        col = Schema.from_dict({"y": {"kind": "numeric", "bounds": [lo, hi]}})["y"]
        assert from_unit(np.array([1.0, 5.0]), col).max() <= hi


# -- 2. data never lost in translation --------------------------------------------------------------

ROUND_TRIP_CSV = (
    "flag,big,small,x\n"
    + "\n".join(
        f"{['True', 'False', ''][i % 3]},{[18446744073709551616, 3, 18446744073709551617][i % 3]},"
        f"{i % 4},{(i * 7) % 13 + 0.5}"
        for i in range(30)
    )
    + "\n"
)


def test_booleans_with_blanks_and_integers_past_64_bits_get_categories_that_match_the_data():
    df = _csv(ROUND_TRIP_CSV)
    assert df["flag"].dtype == object and df["big"].dtype == object  # what pandas gives
    schema = infer_schema(df)
    assert schema["flag"].categories == (False, True) and schema["flag"].nullable
    assert schema["big"].categories == (3, 18446744073709551616, 18446744073709551617)


@pytest.mark.parametrize("method", METHODS)
def test_every_method_writes_values_inside_the_declared_domain_and_they_read_back(method):
    df = _csv(ROUND_TRIP_CSV)
    res = synthesize(df, method, epsilon=5.0, n=40, seed=3)
    assert out_of_domain(res.data, res.schema) == []
    # Through the CSV and back: still the same domain (big ints exact, booleans booleans).
    back = load_csv(io.BytesIO(to_csv_bytes(res.data)))
    assert out_of_domain(back, res.schema) == []
    if method in ("bootstrap", "cart", "independent"):
        # these draw from what they saw, so every category that occurs in the data comes out
        assert set(back["big"]) == {3, 18446744073709551616, 18446744073709551617}


# -- 5. CSV injection ---------------------------------------------------------------------------------

# OWASP's CSV injection payloads, and what a spreadsheet must show instead (a leading quote).
FORMULAS = ["=1+1", "=cmd|' /C calc'!A0", "+1+1", "@SUM(1+1)", "-2+3", "-x", "\t=1+1", "\r=1+1",
            '=HYPERLINK("http://x.example","click")', "-", "+", "="]


def _written(frame: pd.DataFrame) -> list[list[str]]:
    import csv
    return list(csv.reader(io.StringIO(to_csv_bytes(frame).decode("utf-8"), newline="")))


@pytest.mark.parametrize("payload", FORMULAS)
def test_formula_cells_and_headers_are_written_as_text(payload):
    frame = pd.DataFrame({payload: [payload, "ok"], "n": [1.0, -2.0]})
    header, first, second = _written(frame)
    # A carriage return is written as a line feed: Python 3.11's csv writer would leave it
    # unquoted and a reader would start a new row there, right before "=1+1".
    shown = "'" + payload.replace("\r", "\n")
    assert header == [shown, "n"]
    assert first == [shown, "1.0"]
    assert second == ["ok", "-2.0"]
    assert frame.columns[0] == payload and frame.iloc[0, 0] == payload  # the caller's frame is untouched


@pytest.mark.parametrize("number", ["-3.5", "-1e-5", "-.5", "-7", "-2.", "-1E+10"])
def test_negative_numbers_written_as_text_are_untouched(number):
    assert _written(pd.DataFrame({"a": [number, "b"]}))[1] == [number]


def test_numbers_booleans_missing_and_inner_signs_are_untouched():
    frame = pd.DataFrame({"x": [-3.5, np.nan], "k": [-4, 5], "t": [True, False], "s": ["a=b", None],
                          "m": pd.Series(["-1", "x-"], dtype="str")})
    assert _written(frame) == [["x", "k", "t", "s", "m"], ["-3.5", "-4", "True", "a=b", "-1"],
                               ["", "5", "False", "", "x-"]]


# -- 6. a metric defined at its best case -------------------------------------------------------------

def test_cart_pmse_ratio_of_two_halves_of_the_same_data_is_one_with_its_note():
    from dpsynth_core.utility import propensity_tiles
    rng = np.random.default_rng(5)
    n = 20_000
    data = pd.DataFrame({"x": rng.normal(size=n), "g": rng.choice(list("abc"), n)})
    # At 2·10^4 rows no split of one sample's two halves gains cp, nor (with this seed) any
    # split of permuted labels: a chance split would give a null > 0 and a ratio of 0 instead.
    res = propensity_metrics(data.iloc[: n // 2], data.iloc[n // 2:], model="cart", seed=0, permutations=3)
    assert res.n_params == 1 and res.pmse == 0.0 and res.pmse_null == 0.0  # 0/0: no tree split
    assert res.pmse_ratio == 1.0
    assert res.ratio_note.startswith("Indistinguishable: no split found") and res.ratio_note in res.notes
    tile = {t.name: t for t in propensity_tiles(res)}["pmse_ratio"]
    assert tile.value == 1.0 and tile.text == "1" and tile.note == res.ratio_note


def test_a_logit_with_no_usable_column_keeps_its_undefined_ratio():
    frame = pd.DataFrame({"c": ["k"] * 10})
    res = propensity_metrics(frame, frame, seed=0)
    assert np.isnan(res.pmse_ratio) and "not defined" in res.ratio_note


# -- 3. bounded memory --------------------------------------------------------------------------------

def test_pooling_keeps_each_columns_most_frequent_levels_and_says_so():
    from dpsynth_core.utility import propensity_design
    g = ["a"] * 50 + ["b"] * 30 + ["c"] * 15 + ["d"] * 5
    data = pd.DataFrame({"g": g, "x": np.arange(100.0)})
    design = propensity_design(data, kinds={"g": "categorical", "x": "numeric"}, max_terms=3)
    # x takes one term, so g keeps 2 dummies: its two most frequent levels against the pooled rest.
    assert design.names == ("g[T.a]", "g[T.b]", "x")
    assert design.X[:, 0].sum() == 50 and design.X[:, 1].sum() == 30
    assert design.reductions == ("Rare levels pooled: 1 categorical column with more than 3 levels keep their 2 "
                                 "most frequent and pool the rest as '(other levels)', so the main effects take at "
                                 "most 3 terms.",)
    assert propensity_design(data, kinds={"g": "categorical", "x": "numeric"}).reductions == ()


def test_interactions_are_capped_in_column_order_and_counted():
    from dpsynth_core.utility import propensity_design
    rng = np.random.default_rng(0)
    data = pd.DataFrame({c: rng.normal(size=50) for c in "abcde"})  # 5 main effects, 10 products
    design = propensity_design(data, kinds={c: "numeric" for c in "abcde"}, interactions=True, max_terms=40)
    # A quarter (10) for the main effects: all 5 fit; 35 left for products: all 10 fit.
    assert design.n_columns == 15 and design.reductions == ()
    capped = propensity_design(data, kinds={c: "numeric" for c in "abcde"}, interactions=True, max_terms=8)
    assert capped.names == ("a", "b", "c", "d", "e", "a:b", "a:c", "a:d")
    assert capped.reductions == ("Interactions capped: 3 of the 10 possible pairwise products kept (the first in "
                                 "column order), so the model fits at most 8 terms.",)


def test_the_interaction_discriminator_on_many_text_levels_stays_within_the_memory_budget():
    # 1,000 rows × 10 text columns × 60 levels: the logit with every pairwise interaction tried
    # to allocate 29 GiB (177,000 products) before this cap.
    import tracemalloc

    from dpsynth_core.utility import run_discriminator
    rng = np.random.default_rng(0)
    levels = [f"level{j}" for j in range(60)]
    real, synth = (pd.DataFrame({f"c{i}": rng.choice(levels, 1000) for i in range(10)}) for _ in range(2))
    tracemalloc.start()
    try:
        res = run_discriminator(real, synth, "logit_interactions", seed=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < constraints.MEMORY_BUDGET_BYTES
    assert res.n_params <= constraints.PROPENSITY_MAX_TERMS + 1  # + the intercept
    assert any(n.startswith("Rare levels pooled: 10 categorical columns") for n in res.notes)
    assert any(n.startswith("Interactions capped: ") for n in res.notes)


def test_rows_are_subsampled_when_the_design_would_pass_the_memory_budget(monkeypatch):
    # A budget of 1.6 MB at 400 terms and 4 copies of 8 bytes leaves room for 125 rows.
    monkeypatch.setattr(constraints, "MEMORY_BUDGET_BYTES", 1_600_000)
    rng = np.random.default_rng(1)
    real, synth = (pd.DataFrame({c: rng.normal(size=300) for c in "abc"}) for _ in range(2))
    res = propensity_metrics(real, synth, interactions=True, seed=0)
    assert res.n_used == 125
    assert any(n.startswith("Rows subsampled: the model is fitted on 125 rows") for n in res.notes)


def test_a_distance_search_past_the_memory_budget_is_refused_before_it_starts(monkeypatch):
    from dpsynth_core.risk import distance_risk
    monkeypatch.setattr(constraints, "MEMORY_BUDGET_BYTES", 1_000_000)
    rng = np.random.default_rng(2)
    levels = [f"v{j}" for j in range(100)]
    real, synth = (pd.DataFrame({c: rng.permutation(levels * 3) for c in "abc"}) for _ in range(2))
    # Column a (100 levels) splits the synthetic records into groups; a×b would pass 256 groups,
    # so b and c stay coordinates: 200 per record, for 300 real + 300 synthetic + 300 random
    # records, held twice at 8 bytes: 16 · 900 · 200 = 2.88 MB.
    with pytest.raises(DataError, match=r"^Measuring distances on 900 records × 200 coordinates \(one per category\) "
                                        r"would need about 0\.00288 GB of memory, over the 0\.001 GB a request may "
                                        r"use; exclude columns"):
        distance_risk(real, synth, seed=0)
    monkeypatch.setattr(constraints, "MEMORY_BUDGET_BYTES", 2_880_000)
    assert distance_risk(real, synth, seed=0).dcr_train.shape == (300,)  # exactly at the budget: measured


@pytest.mark.parametrize("method, message", [
    # 1 + 3 × 99 dummies = 298 design columns, three matrices of 100 rows at 8 bytes: 715,200 bytes.
    ("parametric", r"^Parametric synthesis on 100 rows with 298 design columns \(one per category\) would need "
                   r"about 0\.000715 GB of memory, over the 0\.0004 GB a request may use; exclude columns"),
    # Weights for every (other column's code, own code): 300² − 3 · 100² = 60,000 floats, 480,000 bytes.
    ("pmi", r"^PMI's models of 3 columns with 300 codes in all would need about 0\.00048 GB of memory"),
])
def test_model_based_synthesizers_refuse_a_design_past_the_memory_budget(monkeypatch, method, message):
    monkeypatch.setattr(constraints, "MEMORY_BUDGET_BYTES", 400_000)
    levels = [f"v{j:02d}" for j in range(100)]
    df = pd.DataFrame({c: levels for c in "abc"})
    schema = Schema.from_dict({c: {"kind": "categorical", "categories": levels} for c in "abc"})
    with pytest.raises(MethodRefused, match=message):
        synthesize(df, method, epsilon=1.0, n=100, schema=schema, seed=0)
    monkeypatch.setattr(constraints, "MEMORY_BUDGET_BYTES", 800_000)
    assert len(synthesize(df, method, epsilon=1.0, n=100, schema=schema, seed=0).data) == 100


def test_dp_seqreg_builds_a_design_past_the_memory_budget_in_pieces(monkeypatch):
    # y regressed on a and b: 1 + 99 + 99 = 199 design columns, 477,600 bytes for 100 rows at once, over a
    # 400 kB budget. dp_seqreg does not refuse (a refusal that depended on the data's row count would leak
    # it, issue 28): it builds the design 83 rows at a time (400,000 // (3 · 8 · 199)), within the budget.
    monkeypatch.setattr(constraints, "MEMORY_BUDGET_BYTES", 400_000)
    levels = [f"v{j:02d}" for j in range(100)]
    df = pd.DataFrame({"a": levels, "b": levels, "y": np.linspace(0, 1, 100)})
    schema = Schema.from_dict({"a": {"kind": "categorical", "categories": levels},
                               "b": {"kind": "categorical", "categories": levels},
                               "y": {"kind": "numeric", "bounds": [0, 1]}})
    pieces = []
    real = regression_design.design_matrix
    monkeypatch.setattr(regression_design, "design_matrix", lambda *a, **k: pieces.append(a[3]) or real(*a, **k))
    assert len(synthesize(df, "dp_seqreg", epsilon=1.0, n=100, schema=schema, seed=0).data) == 100
    assert pieces == [83, 17, 83, 17]  # measure, then generate


def test_attribute_inference_with_a_key_near_the_limit_of_the_data():
    # 1e100 is a number the schema keeps, but float32 trees saw it as inf and raised.
    from dpsynth_core.risk import attribute_inference
    rng = np.random.default_rng(3)
    key = np.r_[rng.normal(size=199), 1e100]
    sensitive = np.where(key > 0, "hi", "lo")
    real = pd.DataFrame({"k": key, "s": sensitive})
    synth = real.sample(frac=1.0, random_state=0).reset_index(drop=True)
    res = attribute_inference(real, synth, ["k"], "s", seed=0)
    # Clipped to float32's range the huge key is still the largest, so every split is kept:
    # the same score as with that key at 1e30.
    tame = attribute_inference(real.assign(k=np.r_[key[:-1], 1e30]), synth.assign(k=synth["k"].clip(upper=1e30)),
                               ["k"], "s", seed=0)
    assert res.score == tame.score and res.score > 0.9


def test_attribute_inference_counts_an_infinite_sensitive_value_as_unknown():
    from dpsynth_core.risk import attribute_inference
    real = pd.DataFrame({"k": ["a", "b"] * 10, "s": [1.0, 2.0] * 9 + [-np.inf, 2.0]})
    res = attribute_inference(real, real.iloc[:18], ["k"], "s", seed=0)
    assert res.n == 19  # the record whose value is -inf is not scored
    finite = attribute_inference(real.iloc[[*range(18), 19]], real.iloc[:18], ["k"], "s", seed=0)
    assert res.score == finite.score


def test_default_sensitive_tolerance_of_a_range_wider_than_the_largest_float():
    from dpsynth_core.risk import default_sensitive_tolerance
    frame = pd.DataFrame({"s": [1e308, -1e308, 0.0]})
    # 5% of the range 2e308 (which overflows a float) is 1e307.
    assert default_sensitive_tolerance("s", [frame, frame]) == pytest.approx(1e307)


def test_random_public_data_over_whole_numbers_past_int64_and_the_widest_float_range():
    from dpsynth_core.risk.reference import Domain, random_public_data
    rng = np.random.default_rng(0)
    big = Domain(kind="numeric", lower=2.0 ** 64, upper=2.0 ** 64 + 2.0 ** 20, integer=True)
    wide = Domain(kind="numeric", lower=-1.7e308, upper=1.7e308)
    out = random_public_data(["big", "wide"], {"big": big, "wide": wide}, 2000, rng)
    assert out["big"].between(big.lower, big.upper).all() and (out["big"] % 1 == 0).all()
    assert np.isfinite(out["wide"]).all() and out["wide"].between(wide.lower, wide.upper).all()
    # Uniform over the range: about half the draws are negative (binomial sd ≈ 22 of 2,000; 5 sd slack).
    assert abs((out["wide"] < 0).sum() - 1000) < 112


def test_a_constant_column_of_huge_numbers_still_gets_bins():
    frame = pd.DataFrame({"a": [1e308] * 5})
    h = histogram_data(frame, frame, "a", bins=4)
    assert h["real_count"].sum() == 5 and h["real_count"].max() == 5
    assert utility_summary(frame, frame).columns.distances.loc["a", "ks"] == 0.0


def test_a_regression_on_numbers_too_large_to_fit_is_refused_in_a_sentence():
    from dpsynth_core.utility import regression_ci_overlap
    frame = pd.DataFrame({"y": [1e308, 1.0, 2.0, 3.0, 4.0], "x": [1.0, 2.0, 3.0, 4.0, 6.0]})
    with pytest.raises(DataError, match=r"^Column 'y' holds numbers beyond ±1e\+100, too large to fit a regression"):
        regression_ci_overlap(frame, frame, "y", ["x"])


# -- 6. numeric domains that floating point cannot split (issue 31.12) ------------------------------

# Whole numbers past 2**53 with too many distinct values to be categorical: as floats they are all
# 2.0**64, so the inferred (and any declared) bounds are one value; the methods that bin crashed on it.
COLLAPSED_CSV = "big,g\n" + "".join(f"{2**64 + i},{'ab'[i % 2]}\n" for i in range(120))


@pytest.mark.parametrize("method", METHODS)
def test_every_method_synthesizes_a_column_whose_bounds_are_one_float(method):
    df = _csv(COLLAPSED_CSV)
    schema = infer_schema(df)
    assert schema["big"].kind == "numeric" and schema["big"].bounds == (2.0 ** 64, 2.0 ** 64)
    res = synthesize(df, method, epsilon=1.0, schema=schema, n=50, seed=0)
    assert len(res.data) == 50 and out_of_domain(res.data, schema) == []
    if method not in ("bootstrap", "cart"):  # these copy real values; the others draw from the domain
        # a domain of one value has one thing to say: that value
        assert (pd.to_numeric(res.data["big"]).astype(float) == 2.0 ** 64).all()


def test_bins_past_2_to_the_53_merge_the_edges_floating_point_made_equal():
    from dpsynth_core.synth.encoding import numeric_edges
    # Integers 2**53 .. 2**53 + 10: only the even ones are floats, so no bin per whole number; the 20 bins'
    # edges fall on the six floats in the range.
    lo = 2.0 ** 53
    assert numeric_edges(lo, lo + 10, integer=True, bins=20).tolist() == [lo + 2 * k for k in range(6)]
    # 20 equal-width bins over 1,000 at 2**60 (floats 256 apart): the five distinct multiples of 256 in reach.
    lo = 2.0 ** 60
    edges = numeric_edges(lo, lo + 1024, integer=False, bins=20)
    assert edges.tolist() == [lo + 256 * k for k in range(5)]
