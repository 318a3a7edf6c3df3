"""Benchmark of the utility metrics (issue 4) on the bundled diamonds table (53,940 rows).

Targets: every utility measure the Compare page computes for one synthesis,
except the CART permutation null, in ≤ 2 s; logistic pMSE/SPECKS/AUC in
≤ 0.5 s. Measured beside a peer library's equivalent in the same run:
SynthEval's propensity mean squared error (``p_mse``: logistic regression
on main effects, 5-fold cross-validated), against our logistic pMSE on main
effects over all rows.

The peer is not a dependency of dpsynth. To include it::

    .venv/bin/pip install syntheval        # 1.7.3 adds lightgbm, matplotlib, seaborn, rich, ...

(SDMetrics' LogisticDetection would be the other candidate, but SDMetrics
0.32 pins pandas < 3 and would downgrade the app's pandas.) Without it the
peer rows are skipped with that hint.

Run: ``.venv/bin/python bench/bench_utility.py [--repeat 5]``. Prints the
machine, its load, and the median of ``--repeat`` runs per step.
"""

from __future__ import annotations

import argparse
import contextlib
import io

from _common import flag, machine, timed  # noqa: E402  (also puts the project on sys.path)

import dpsynth_core as core  # noqa: E402
from dpsynth_core import constraints  # noqa: E402
from dpsynth_core.utility import run_discriminator, utility_summary  # noqa: E402


def compare_page(real, synths, cats, seed=1):
    """Every measure of the Compare page for one synthesis: the headline discriminator and CART
    (a single permutation: the null's permutations are what the 2 s leave out), the column and
    pair summaries, every histogram and ECDF, and the regression over the implicates given."""
    synth = synths[0]
    run_discriminator(real, synth, "logit_interactions", seed=seed)
    run_discriminator(real, synth, "cart", seed=seed, permutations=1)
    utility_summary(real, synth, categorical=cats)
    for c in real.columns:
        core.histogram_data(real, synth, c, categorical=c in cats)
        if c not in cats:
            core.ecdf_data(real, synth, c)
    core.regression_ci_overlap(real, list(synths), "price", ["carat", "cut", "color"], categorical=cats)


def peer_syntheval(real, synth, cats, nums):
    """SynthEval's p_mse (its own preprocessing included), or None when it is not installed."""
    try:
        from syntheval.metrics.utility.metric_propensity_mse import PropensityMeanSquaredError
    except ImportError:
        return None
    with contextlib.redirect_stdout(io.StringIO()):
        metric = PropensityMeanSquaredError(real, synth, cat_cols=cats, num_cols=nums, verbose=False,
                                            plot_figures=False)
        return metric.evaluate()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    df, schema = core.load_bundled("diamonds")
    used = schema.used
    cats = [c for c in used if schema[c].kind == "categorical"]
    nums = [c for c in used if c not in cats]
    res = core.synthesize(df, "independent", epsilon=1.0, schema=schema, seed=1, implicates=3)
    real, synths = df[used], [d[used] for d in res.implicates]
    synth = synths[0]
    rows = []

    def add(name, fn, target=None):
        sec, out = timed(fn, args.repeat)
        rows.append((name, sec, target))
        return out

    add("every Compare measure but CART permutations (1 synthetic set)",
        lambda: compare_page(real, synths[:1], cats), 2.0)
    add("every Compare measure but CART permutations (3 implicates)",
        lambda: compare_page(real, synths, cats), 2.0)
    add("  logistic, interactions, 10,000 rows, 30% held out (option)",
        lambda: run_discriminator(real, synth, "logit_interactions", seed=1, holdout=0.3))
    add("  logistic, main effects, 10,000 rows (option)",
        lambda: run_discriminator(real, synth, "logit_main", seed=1))
    add("  utility_summary (distances, moments, corr, Cramér's V, PeGS)",
        lambda: utility_summary(real, synth, categorical=cats))
    add("  regression CI overlap + PeGS distance, 1 synthetic set",
        lambda: core.regression_ci_overlap(real, synth, "price", ["carat", "cut", "color"]))
    add("  regression CI overlap, 3 implicates combined",
        lambda: core.regression_ci_overlap(real, synths, "price", ["carat", "cut", "color"]))
    ours = add("logistic pMSE/SPECKS/AUC, main effects, all rows",
               lambda: core.propensity_metrics(real, synth, seed=1), 0.5)
    add(f"logistic pMSE/SPECKS/AUC, interactions, {constraints.PROPENSITY_DETAIL_ROWS:,} rows",
        lambda: run_discriminator(real, synth, "logit_interactions", seed=1), 0.5)
    held = add("logistic, main effects, all rows, 20% held out",
               lambda: core.propensity_metrics(real, synth, seed=1, holdout=0.2), 0.5)
    cart = add(f"CART, {constraints.PROPENSITY_DETAIL_ROWS:,} rows, 10 permutations (not in the 2 s)",
               lambda: run_discriminator(real, synth, "cart", seed=1, permutations=10))
    cart_all = add("CART, all rows, 5 permutations (not in the 2 s)",
                   lambda: core.propensity_metrics(real, synth, model="cart", seed=1, permutations=5))
    peer = peer_syntheval(real, synth, cats, nums)
    if peer is not None:
        add("SynthEval p_mse (logistic, main effects, 5-fold CV)",
            lambda: peer_syntheval(real, synth, cats, nums))

    print(machine())
    print(f"data: diamonds, {len(df):,} rows × {len(used)} columns vs an 'independent' synthesis "
          f"(ε = 1, 3 implicates of {len(synth):,} rows); median of {args.repeat} runs\n")
    print(f"{'step':66s} {'seconds':>8s}  target")
    for name, sec, target in rows:
        print(f"{name:66s} {sec:8.3f}  {flag(sec, target)}")
    print(f"\nlogistic, main effects: pMSE {ours.pmse:.5f}, ratio {ours.pmse_ratio:.4g}, AUC {ours.auc:.4f}; "
          f"held out: pMSE {held.pmse:.5f}, AUC {held.auc:.4f}")
    print(f"CART (10k rows): pMSE {cart.pmse:.4f}, AUC {cart.auc:.4f}; all rows: pMSE {cart_all.pmse:.4f}, "
          f"null {cart_all.pmse_null:g} → {cart_all.ratio_note or 'ratio ' + format(cart_all.pmse_ratio, '.4g')}")
    if peer is None:
        print("\nPeer not installed: .venv/bin/pip install syntheval  (then run again for the ratio)")
    else:
        t_ours = next(sec for name, sec, _ in rows if name.startswith("logistic pMSE/SPECKS/AUC, main"))
        t_peer = rows[-1][1]
        print(f"\nSynthEval p_mse: avg pMSE {peer['avg pMSE']:.5f} (± {peer['pMSE err']:.5f}), "
              f"accuracy {peer['avg acc']:.4f}")
        print(f"time ratio SynthEval / dpsynth (logistic pMSE, main effects, all rows): {t_peer / t_ours:.1f}×"
              f"  (SynthEval fits 5 folds on 80% each; per fit: {t_peer / 5 / t_ours:.1f}×)")


if __name__ == "__main__":
    main()
