"""Limits shared by the core, the widgets and the tests.

Keeping them in one place means a slider's range, the check that rejects a
value and the test of that check cannot drift apart.
"""

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
