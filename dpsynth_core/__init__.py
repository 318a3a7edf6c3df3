"""dpsynth_core: differentially private synthetic data, its utility and its risk.

Pure Python (numpy, pandas, scipy, scikit-learn, plotly figures); never
imports Streamlit. Every number the app shows is computed here.

The names below are imported on first use (PEP 562), so ``import dpsynth_core`` alone, and with it
``dpsynth --help``, loads no numerical library: a submodule is imported when it is asked for, and the
first other name asked for brings in the whole API and every registry (synthesizers, metrics) at once, as
the eager import did. :func:`load` does that at once: the app calls it, since its modules reach submodules
of submodules by attribute (``core.privacy.audit``), which only a module that imported them has set.
"""

import importlib
import importlib.util

__all__ = [
    "BUNDLED", "KINDS", "METRICS", "SYNTHESIZERS",
    "BudgetExceeded", "ColumnSchema", "DataError", "LedgerError", "MethodRefused", "Metric", "MetricContext",
    "Schema", "Synthesis",
    "attribute_inference", "distance_risk", "formal_risk", "key_match_disclosure", "match_risk",
    "sample_uniqueness", "unique_reproduction", "wilson_interval",
    "ci_overlap", "ecdf_data", "exact_copy_share", "fingerprint", "gower_dcr", "histogram_data",
    "infer_schema", "ks_statistic", "ledger_steps_table", "load_bundled", "load_csv", "match_rates",
    "membership_inference", "parse_epsilon_grid", "privacy_statement", "propensity_metrics", "statement_tone",
    "regression_ci_overlap", "ru_map", "schema_from_table", "schema_table", "synthesize", "to_csv_bytes",
    "association_fit", "column_distances", "combine_implicates", "correlation_fit", "cramers_v",
    "hellinger_distance", "missing_shares", "moments_table", "pegs_distances", "tv_distance", "utility_summary",
    "forecast", "suggest_method",
]


def _load() -> dict:
    """The whole public API, imported; its names (and the submodules they come from) go into the package."""
    from . import (cluster, constraints, frontier, holdout, parallel, plots, readout, release, report,  # noqa: F401
                   rumap, schema_editor, schema_estimate, settings, share, teaching)
    from .constraints import parse_epsilon_grid
    from .datasets import BUNDLED, load_bundled
    from .errors import BudgetExceeded, DataError, LedgerError, MethodRefused
    from .forecast import forecast, suggest_method
    from .io import load_csv, to_csv_bytes
    from .metric_info import METRICS, Metric, MetricContext
    from .privacy import ledger_steps_table, privacy_statement, statement_tone
    from .risk import exact_copy_share, gower_dcr, match_rates, membership_inference
    from .risk import (attribute_inference, distance_risk, formal_risk, key_match_disclosure, match_risk,
                       sample_uniqueness, unique_reproduction, wilson_interval)
    from .rumap import ru_map
    from .schema import KINDS, ColumnSchema, Schema, infer_schema
    from .schema_editor import schema_from_table, schema_table
    from .synth import SYNTHESIZERS, Synthesis, fingerprint, synthesize
    from .utility import (ci_overlap, ecdf_data, histogram_data, ks_statistic, propensity_metrics,
                          regression_ci_overlap)
    from .utility import (association_fit, column_distances, combine_implicates, correlation_fit, cramers_v,
                          hellinger_distance, missing_shares, moments_table, pegs_distances, tv_distance,
                          utility_summary)
    return {k: v for k, v in locals().items()}


def load() -> None:
    """Import the whole API and every registry now, as ``import dpsynth_core`` did before it was lazy."""
    globals().update(_load())


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    if importlib.util.find_spec(f"{__name__}.{name}") is not None:  # a submodule: that module alone (an import
        return importlib.import_module(f"{__name__}.{name}")     # such as `from . import constraints` asks here)
    load()
    if name in globals():
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})

