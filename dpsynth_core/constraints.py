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
MAX_UPLOAD_MB = 50          # also server.maxUploadSize in .streamlit/config.toml
MAX_ROWS = 1_000_000
MAX_COLUMNS = 200

# Schema inference.
MAX_CATEGORIES = 100        # a text column with more distinct values is excluded
INTEGER_CATEGORICAL_MAX = 10  # an integer column with at most this many values is categorical
ID_MIN_ROWS = 20            # below this, "a distinct value per row" says nothing

# Synthesis.
DEFAULT_BINS = 20           # bins per numeric column for methods that need categories
MAX_SYNTH_ROWS = 1_000_000
CART_MIN_LEAF = 5           # synthpop's minbucket

# Propensity discriminators.
PROPENSITY_MAX_ROWS = 200_000  # above this the discriminator is fitted on a shown subsample

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
