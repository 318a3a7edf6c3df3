"""Limits shared by the core, the widgets and the tests.

Keeping them in one place means a slider's range, the check that rejects a
value and the test of that check cannot drift apart. A limit or default that
is one synthesizer's own lives on its class instead (``Dirichlet.max_cells``,
``MST.rho_shares``, an option's default), beside the code it bounds.
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
# Special values of a numeric column (0 hours worked, a code such as −8): point masses the
# marginal-based methods keep as cells of their own and release exactly. Inference (and the
# private estimate) suggests the exact values holding at least this share of a column, at most
# MAX_SPECIALS of them, most frequent first.
MAX_SPECIALS = 5
SPECIAL_MIN_SHARE = 0.1
# Values the private estimate always counts as candidate special values (0 comes from the bounds' own
# bucket): 1, and the codes surveys use for "refused", "don't know", "not applicable" or a top code.
# Public by construction, they need only a clear noisy count, not the thresholded histogram's δ.
COMMON_SPECIALS = (1, -1, -7, -8, -9, -99, -999, 9, 99, 999, 9999, 99999)

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

# Methods that spend ε as (ε, δ) (``Budget(needs_delta=True)``: MST, in zCDP) need δ > 0: a run asked for
# δ = 0 uses this one, and its ledger says so.
DEFAULT_DELTA = 1e-6
# Marginal-based methods keep every 2-way (MST) or 3-way (PrivBayes) count table between the
# measurement and the release: more cells than this in all are refused (synth/graphical.py).
MARGINAL_MAX_CELLS = 20_000_000

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
# The sweep's measures reported by default, in display order, and the map's default risk measure: DP points
# spread along the median DCR (exact copies are 0 for all of them). Here, not in rumap, so that the command
# line's help names the defaults without loading the numerical libraries.
RU_UTILITY_COLUMNS = ("pmse_ratio", "auc", "specks", "ks_mean")
RU_RISK_COLUMNS = ("exact_copy_share", "dcr_median")
RU_DEFAULT_RISK = "dcr_median"
# The sweep scores every point on samples, their sizes shown on the map (columns propensity_rows, dcr_rows):
# the headline discriminator's (PMSE_RATIO_ROWS) and the median DCR over this many confidential records, the
# same records for every point (0.4 s for diamonds' 53,940, 0.12 s for 10,000; bench/bench_sweep.py).
RU_DCR_ROWS = 10_000
# The R-U map's choices: replicates per point (1 to this many) and the shares of rows it may hold out.
RU_MAX_REPLICATES = 20
RU_HOLDOUT_SHARES = (0.0, 0.1, 0.2, 0.3)

# The holdout's shares (Synthesize's one setting): rows held out from the synthesizer; Risk proposes the default.
RISK_HOLDOUT_MIN = 0.05
RISK_HOLDOUT_MAX = 0.5
RISK_HOLDOUT_STEP = 0.05
RISK_HOLDOUT_DEFAULT = 0.2
# The Risk page proposes a holdout where the data allow, so its verdicts can compare the records the
# synthesizer saw with records it never saw (without them a synthesis that learned only the population beats
# the random-data baselines too, and the verdicts stay open). The rule: a table of at least
# RISK_HOLDOUT_MIN_ROWS rows is proposed a holdout of RISK_HOLDOUT_DEFAULT (at least 200 records: a held-out
# share's 95% Wilson interval is then at most ±7 points wide). The Risk page only proposes it (a button): the
# holdout changes the rows every synthesis reads, the release's too, so the steward sets it, on Synthesize.
RISK_HOLDOUT_MIN_ROWS = 1_000


def default_holdout(n_rows: int) -> float:
    """The share of rows the Risk page proposes to hold out for a table of ``n_rows`` rows (0: none).

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

# "pMSE ratio" is one figure on every page (issue 31): the headline discriminator, a logit with all pairwise
# interactions, fitted on at most this many rows of each table, drawn at random. The ratio of a synthesis that
# loses structure grows with the rows fitted (MST on diamonds at ε = 1: 4.7 on 1,000 + 1,000 rows, 7.8 on
# 2,500 + 2,500, 13.8 on 5,000 + 5,000), so one sample size keeps one verdict; 1,000 keeps a move of the ε
# slider fast (0.11 s of CPU for the fit on diamonds).
PMSE_RATIO_ROWS = 1_000
# Its reading: under PMSE_RATIO_GOOD the synthesis is hard to tell apart, under PMSE_RATIO_ACCEPTABLE usable,
# above it the discriminator sees clearly what the synthesis lost (thresholds for PMSE_RATIO_ROWS rows).
PMSE_RATIO_GOOD, PMSE_RATIO_ACCEPTABLE = 3.0, 10.0
# The Compare page's other discriminators (CART, main effects, held-out scoring) are fitted on at most this many
# stacked rows, drawn at random and shown; their figures carry the discriminator's name, not "pMSE ratio".
PROPENSITY_DETAIL_ROWS = 10_000

# Share of ε a DP synthesis spends on a noisy row count when the number of
# synthetic rows is not declared (the exact count is not public under
# add/remove-one neighbours).
ROW_COUNT_EPSILON_SHARE = 0.05

# Implicates: m synthetic datasets at ε/m each.
MAX_IMPLICATES = 20


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
    if eps == 0:
        return (f"ε = 0 would be the strongest guarantee, but a synthesis at ε = 0 learns nothing from the data: "
                f"ε must be at least {EPSILON_MIN:g} (type a value from {EPSILON_MIN:g} to {EPSILON_MAX:g}).")
    if eps < 0:
        return (f"ε = {eps:g} is no privacy budget (ε is never negative; smaller is more private): type a value "
                f"from {EPSILON_MIN:g} to {EPSILON_MAX:g}.")
    if eps < EPSILON_MIN:
        return (f"ε = {eps:g} is below the smallest ε this app allows, {EPSILON_MIN:g}: type a value from "
                f"{EPSILON_MIN:g} to {EPSILON_MAX:g}.")
    if eps > EPSILON_MAX:
        return (f"ε = {eps:g} is above the largest ε this app allows, {EPSILON_MAX:g} (e^ε would exceed 10^43, "
                f"which promises nothing): type a value from {EPSILON_MIN:g} to {EPSILON_MAX:g}.")
    return None


# The private estimate of a schema (schema_estimate.py): the share of a release's ε the Data page
# proposes for it (bench/bench_schema_estimate.py: at 0.2 of ε = 1, MST's TV2 on diamonds and randhie,
# cut at the data's deciles, is below its TV2 with the hand-declared domains; at 0.1 categories of
# under 2 % start to be lost),
# the δ it may spend in all (thresholded histograms), and how sure a bound or flag must be (the
# chance an empty cell passes its threshold).
SCHEMA_ESTIMATE_SHARE = 0.2
SCHEMA_ESTIMATE_DELTA = 1e-7
SCHEMA_RANGE_BETA = 0.01
SCHEMA_FLAG_BETA = 0.05
# A private estimate calls a numeric column whole-numbered only when its noisy counts show that values
# with decimals are at most this share of the whole ones (with the chance SCHEMA_FLAG_BETA of being wrong).
WHOLE_MAX_SHARE = 0.01
