"""Limits shared by the core, the widgets and the tests.

Keeping them in one place means a slider's range, the check that rejects a
value and the test of that check cannot drift apart.
"""

import math

# Privacy budget the app offers (log-scale slider).
EPSILON_MIN = 0.01
EPSILON_MAX = 100.0
EPSILON_DEFAULT = 1.0
DELTA_MAX = 0.1

# Input files.
# The upload limit, one number in one unit: 50 MB = 50,000,000 bytes. Streamlit's server.maxUploadSize
# (.streamlit/config.toml) holds the same 50: its browser side refuses above 50 × 10**6 bytes, its
# server side above 50 × 2**20; the loader refuses above MAX_UPLOAD_BYTES, so 50,000,000 holds everywhere.
MAX_UPLOAD_MB = 50
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 1_000_000
MAX_ROWS = 1_000_000
MAX_COLUMNS = 200

# Schema inference.
# Numbers larger than this in absolute value (and inf) cannot be computed with
# reliably: a range, a variance or a float32 model input overflows. A column
# holding one is excluded at inference, and declared bounds must lie within it.
MAX_ABS_VALUE = 1e100
# scikit-learn's trees compare float32 inputs: numbers are clipped to this before they
# enter one (past float32's 3.4e38 they would become inf; values inside keep their splits).
FLOAT32_SAFE = 1e38
MAX_CATEGORIES = 100        # a text column with more distinct values is excluded
INTEGER_CATEGORICAL_MAX = 10  # an integer column with at most this many values is categorical
ID_MIN_ROWS = 20            # below this, "a distinct value per row" says nothing

# Synthesis.
DEFAULT_BINS = 20           # bins per numeric column for methods that need categories
MAX_SYNTH_ROWS = 1_000_000
CART_MIN_LEAF = 5           # synthpop's minbucket

# Memory one request may use for a computation whose size grows with the data
# (design matrices, contingency tables, trees, distance searches). Each such
# computation estimates its cost first and reduces its input by a stated, shown
# reduction (pooling rare levels, capping interactions, subsampling rows) or
# refuses in a sentence.
MEMORY_BUDGET_BYTES = 1_000_000_000


def over_memory_budget(what: str, need: float, remedy: str) -> str | None:
    """One sentence refusing ``what`` when ``need`` bytes pass the budget, or None."""
    if need <= MEMORY_BUDGET_BYTES:
        return None
    return (f"{what} would need about {need / 1e9:.3g} GB of memory, over the {MEMORY_BUDGET_BYTES / 1e9:g} GB "
            f"a request may use; {remedy}.")

# Marginal-based methods that work in zCDP (MST) need δ > 0: a run asked for
# δ = 0 uses this one, and its ledger says so.
DEFAULT_DELTA = 1e-6
# Their default bins per numeric column (chosen by bench/bench_dp_utility.py
# for the best mean 2-way total variation on diamonds at ε = 1).
MST_DEFAULT_BINS = 20
# MST's shares of ρ: 1-way marginals, choosing the tree, the tree's 2-way marginals (which carry the
# associations; see synth/mst.py). The generic marginal forecast reads the last one.
MST_RHO_SHARES = (0.20, 0.05, 0.75)
PRIVBAYES_DEFAULT_BINS = 10
# They keep every 2-way (MST) or 3-way (PrivBayes) count table between the
# measurement and the release: more cells than this in all are refused.
MARGINAL_MAX_CELLS = 20_000_000
# AIM (synth/aim.py): bins per numeric column (20: on diamonds at ε = 1, 10 bins gave a pMSE ratio near 30
# whatever the model, the within-bin spread alone; 40 spread the noise too thin for the 2-way TV), the most cells its model's junction tree may hold (its
# memory and the time of each inference pass), the most columns (each round scores every pair and
# triple), and the most cells of a triple in its workload (larger triples are left out of it).
AIM_DEFAULT_BINS = 20
AIM_MAX_MODEL_CELLS = 200_000
AIM_MAX_COLUMNS = 40
AIM_TRIPLE_MAX_CELLS = 10_000
# PrivBayes scores every (column, pair of parents) at each step: Σ (d − k)·C(k, 2) ≈ d⁴/24 choices.
PRIVBAYES_MAX_COLUMNS = 40

# Propensity discriminators.
PROPENSITY_MAX_ROWS = 200_000  # above this the discriminator is fitted on a shown subsample
# Most model terms (design columns) a discriminator fits: rare levels are pooled and
# pairwise interactions capped beyond it. Time grows with rows × terms², and a logit
# with about as many terms as rows separates any two datasets (6 text columns of 20
# levels gave 2,005 terms on 2,000 rows: 11 s and a meaningless fit); diamonds needs 259.
PROPENSITY_MAX_TERMS = 400

# Regression on the Compare page: most design cells (rows × coefficients) one fit uses; a dataset with
# more rows is fitted on a random subsample of MAX_CELLS // coefficients rows, its size shown. The
# default model on a million rows (10 coefficients) stays exact; 20 million cells of the design and its
# working copies stay within the memory budget.
REGRESSION_MAX_CELLS = 20_000_000

# Distance-based risk on the Risk page: at most this many real records are measured (a random subsample,
# its size shown); every synthetic record is searched. A million records took 17 s, 50,000 about 2 s.
RISK_DISTANCE_MAX_ROWS = 50_000


# Log-scale ε slider: 10 steps per decade from EPSILON_MIN to EPSILON_MAX,
# rounded to 3 significant digits so the labels read cleanly.
EPSILON_STEPS = tuple(float(f"{10 ** (k / 10):.3g}") for k in range(-20, 21))


def nearest_epsilon_step(epsilon: float) -> float:
    """The slider step closest to ``epsilon`` on the log scale (an exact ε typed in moves the slider there)."""
    return min(EPSILON_STEPS, key=lambda s: abs(math.log(s) - math.log(epsilon)))


# The Learn page's ε slider: round values read well in front of a class.
LEARN_EPSILONS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)
# Its δ choices for the Gaussian mechanism (1e-10 … 1e-2), and the columns its composition demo offers.
LEARN_DELTAS = tuple(10.0 ** -k for k in range(10, 1, -1))
LEARN_COMPOSITION_COLUMNS = (("diamonds", "carat"), ("diamonds", "price"), ("penguins", "body_mass_g"),
                             ("penguins", "flipper_length_mm"))

# Default ε grid of the risk-utility sweep (log-spaced).
RU_EPSILONS = (0.1, 0.3, 1.0, 3.0, 10.0)
# The sweep scores every point on samples, their sizes shown on the map (columns propensity_rows, dcr_rows):
# the propensity fit on this many stacked rows (half PROPENSITY_HEADLINE_ROWS: the fit was 0.7 s of a 1.2 s
# point on diamonds, 0.45 s at 5,000) and the median DCR over this many confidential records, the same
# records for every point (0.4 s for diamonds' 53,940, 0.12 s for 10,000). Together they halve a point's
# measures (bench/bench_sweep.py, figures in the README).
RU_PROPENSITY_ROWS = 5_000
RU_DCR_ROWS = 10_000
# The R-U map's choices: replicates per point (1 to this many) and the shares of rows it may hold out.
RU_MAX_REPLICATES = 20
RU_HOLDOUT_SHARES = (0.0, 0.1, 0.2, 0.3)

# The Risk page's holdout slider: shares of rows held out from the synthesizer (default when first ticked).
RISK_HOLDOUT_MIN = 0.05
RISK_HOLDOUT_MAX = 0.5
RISK_HOLDOUT_STEP = 0.05
RISK_HOLDOUT_DEFAULT = 0.2
# The Risk page holds rows out by default where the data allow, so its verdicts compare the records the
# synthesizer saw with records it never saw (without them a synthesis that learned only the population beats
# the random-data baselines too, and the verdicts stay open). The rule: a table of at least
# RISK_HOLDOUT_MIN_ROWS rows holds out RISK_HOLDOUT_DEFAULT of them (at least 200 records: a held-out share's
# 95% Wilson interval is then at most ±7 points wide); a smaller one holds out nothing unless the user asks.
RISK_HOLDOUT_MIN_ROWS = 1_000


def default_holdout(n_rows: int) -> float:
    """The share of rows the Risk page holds out by default for a table of ``n_rows`` rows (0: none).

    Examples
    --------
    >>> default_holdout(53_940), default_holdout(344)
    (0.2, 0.0)
    """
    return RISK_HOLDOUT_DEFAULT if n_rows >= RISK_HOLDOUT_MIN_ROWS else 0.0

# The Compare page's discriminator: the share of rows scored, not fitted, when the held-out option is on,
# and the label permutations the CART null pMSE averages (1 to the maximum).
COMPARE_HELD_OUT_SHARE = 0.3
CART_PERMUTATIONS_MAX = 100
CART_PERMUTATIONS_DEFAULT = 10

# Seeds a user may type: 0 to this (numpy's legacy seed range, as the share link and settings files accept).
SEED_MAX = 2**32 - 1
# The Learn page's demo seeds: 0 to this.
LEARN_SEED_MAX = 10_000

# Decimals a column may declare (the schema refuses more).
SCHEMA_DECIMALS_MAX = 15


def parse_epsilon_grid(text: str) -> list[float]:
    """ε values typed as comma-separated text, checked against the app's range, sorted."""
    values = []
    for part in str(text).replace(";", ",").split(","):
        part = part.strip()
        if not part:
            continue
        try:
            eps = float(part)
        except ValueError:
            raise ValueError(f"{part!r} in the ε grid is not a number; type numbers separated by commas.") from None
        if not EPSILON_MIN <= eps <= EPSILON_MAX:
            raise ValueError(f"ε = {eps:g} is outside {EPSILON_MIN:g}–{EPSILON_MAX:g}; keep the grid in that range.")
        values.append(eps)
    if not values:
        raise ValueError("The ε grid is empty; type at least one value, such as 0.1, 1, 10.")
    return sorted(set(values))

# The headline discriminator (logit with all pairwise interactions) is fitted
# on at most this many stacked rows, drawn at random and shown to the user,
# so a slider move stays under a second on the diamonds table.
PROPENSITY_HEADLINE_ROWS = 10_000

# Share of ε a DP synthesis spends on a noisy row count when the number of
# synthetic rows is not declared (the exact count is not public under
# add/remove-one neighbours).
ROW_COUNT_EPSILON_SHARE = 0.05

# Implicates: m synthetic datasets at ε/m each.
MAX_IMPLICATES = 20

# Dirichlet–multinomial synthesis works on the full contingency table: more
# cells than this are refused before any work (memory, and a prior of
# n_s/(e^ε − 1) per cell would drown the data anyway).
DIRICHLET_MAX_CELLS = 1_000_000
# Its default bins per numeric column: coarse, because every cell gets the
# same prior weight; 3 keeps the bundled diamonds table (7 numeric and 3
# categorical columns) at 3⁷·5·7·8 = 612,360 cells, under the cap.
DIRICHLET_DEFAULT_BINS = 3

# PeGS: the number m of most informative features whose exact values key each
# conditional (the rest enter as a 1-bit hash), and block PeGS's block size.
# 1, not 2: with two exact keys, a sweep often reaches a pair of key values the
# data never holds together, the conditional there is uniform, and the chain
# drifts off the data's support. At α ≈ 0 (ε per record 10⁴) on diamonds,
# TV1/TV2 (10 bins per numeric column) were 0.028/0.124 with 2 and
# 0.003/0.099 with 1; on penguins 0.083/0.239 and 0.013/0.144 (issue 18).
PEGS_TOP_FEATURES = 1
PEGS_BLOCK = 10


def epsilon_input_error(value) -> str | None:
    """Why a typed ε cannot be used, in one sentence; None when it can.

    The exact-ε box does not clamp: a value outside the range is refused with this sentence and the
    settings keep their earlier ε.

    >>> epsilon_input_error(0.001)
    'ε = 0.001 is below the smallest ε this app allows, 0.01: type a value from 0.01 to 100.'
    >>> epsilon_input_error(2.5) is None
    True
    """
    try:
        eps = float(value)
    except (TypeError, ValueError):
        return f"{value!r} is not a number: type ε as a number from {EPSILON_MIN:g} to {EPSILON_MAX:g}."
    if eps != eps:
        return f"ε must be a number: type a value from {EPSILON_MIN:g} to {EPSILON_MAX:g}."
    if eps <= 0:
        return (f"ε = {eps:g} promises nothing (ε must be positive; smaller is more private): type a value "
                f"from {EPSILON_MIN:g} to {EPSILON_MAX:g}.")
    if eps < EPSILON_MIN:
        return (f"ε = {eps:g} is below the smallest ε this app allows, {EPSILON_MIN:g}: type a value from "
                f"{EPSILON_MIN:g} to {EPSILON_MAX:g}.")
    if eps > EPSILON_MAX:
        return (f"ε = {eps:g} is above the largest ε this app allows, {EPSILON_MAX:g} (e^ε would exceed 10^43, "
                f"which promises nothing): type a value from {EPSILON_MIN:g} to {EPSILON_MAX:g}.")
    return None


# Gibbs chains run side by side by the per-record samplers (pegs, pegs_rs,
# pmi): each record (block) is seeded by the previous synthetic record of its
# chain, the first of a chain by a uniform draw over the public domain. Fewer
# chains mean fewer records drawn from a uniform seed (one sweep from such a
# seed lands on keys the data never showed: issue 18) but more sequential
# sweeps. By default a chain holds this many records (sweeps): on diamonds at
# α = 0, TV1 0.0029 with 100 chains (540 records each), 0.0032 with 300, 0.0034
# with 1,000 (pmi 0.020, 0.021, 0.039), and 300 chains ran 1.6× faster than
# 100. Chains ≥ records gives the paper's one-uniform-seed-per-record sampler.
PER_RECORD_CHAIN_LENGTH = 200
