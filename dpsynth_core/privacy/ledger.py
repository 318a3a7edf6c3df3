"""The privacy ledger of a synthesis and its statement in words, built here alone
(docs/methods.md#the-ledger-and-its-statement).

A synthesizer's ``generate`` returns the :class:`Step` s (mechanism runs) it made; :func:`build_ledger`
composes them with the row count's step, checks them against the method's declared budget
(:mod:`.budget`) and states what holds. What every synthesis on a dataset spent in all is kept by the
ledger store (:mod:`.store`), which the core writes as it computes; nothing else writes either.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..schema import Schema
from .accounting import Composition, compose
from .budget import NONE, PER_RECORD, Plan

NEIGHBOURING = "add or remove one record (unbounded DP)"

SEEDED_REASON = ("a fixed seed was given: reproducible exploration, not DP (the output is a fixed function of "
                 "the data and the seed; the mechanism itself is ε-DP only with fresh, secret randomness)")

#: Total ε up to which the statement is shown as a plain success, and above which as a warning.
STRONG_EPSILON, WEAK_EPSILON = 1.0, 10.0


@dataclass(frozen=True)
class Step:
    """One mechanism run during a generation, for the ledger.

    A step is costed either in ε (``epsilon``, with ``delta`` for an (ε, δ) mechanism) or, for a
    zCDP mechanism, in ρ (``rho`` set, ``epsilon`` None): a zCDP step has no (ε, δ) of its own, the
    run's ρ is converted once (:func:`.accounting.compose`). ``repeats`` counts identical runs on the
    same records (one per synthetic record for per-record methods): they compose sequentially, so the
    step costs ``epsilon * repeats`` (or ``rho * repeats``). ``sigma``: the noise scale of a Gaussian step.
    """

    mechanism: str
    target: str
    epsilon: float | None
    delta: float = 0.0
    sensitivity: float | None = None
    detail: str = ""
    repeats: int = 1
    implicate: int | None = None
    rho: float | None = None
    sigma: float | None = None

    def __post_init__(self) -> None:
        if (self.epsilon is None) == (self.rho is None):
            raise ValueError(f"a step is costed in ε or in ρ, not {'both' if self.rho is not None else 'neither'}")

    @property
    def total_epsilon(self) -> float | None:
        return None if self.epsilon is None else self.epsilon * self.repeats

    @property
    def total_delta(self) -> float:
        return self.delta * self.repeats

    @property
    def total_rho(self) -> float | None:
        return None if self.rho is None else self.rho * self.repeats

    def to_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if v not in (None, "")}
        if self.rho is None:
            out["epsilon_total"] = self.total_epsilon
        else:  # δ belongs to the run's conversion, not to a zCDP step
            out.pop("delta", None)
            out["rho_total"] = self.total_rho
        return out


def dp_but_for_seed(ledger: dict) -> bool:
    """True when the run's only reason not to be DP is its fixed seed: released with fresh
    randomness, the same settings would be DP (how the R-U map, which is exploration, labels points)."""
    return ledger["is_dp"] or ledger["not_dp_reasons"] == [SEEDED_REASON]


SEEDED_ESTIMATE_REASON = ("the schema's private estimate ran with a fixed seed (reproducible, not DP: its output is a "
                          "fixed function of the data)")


def _not_dp_reasons(synth, schema: Schema, *, targets, kept, seed, params, spent: float) -> list[str]:
    """Every reason the run is not DP; none: it is."""
    derived = [c for c in targets if schema[c].derived]
    undeclared = [c for c, col in schema.columns.items() if col.derived and c not in targets and c not in kept]
    reasons = []
    if not synth.is_dp:
        reasons.append(f"{synth.label} is not a differentially private method")
    if derived:
        reasons.append("data-derived bounds or categories for " + ", ".join(derived))
    if undeclared:
        reasons.append("no declared schema entry for " + ", ".join(undeclared)
                       + " (its kind was read off the data; declare every column, excluded ones too)")
    if kept:
        reasons.append("partial synthesis releases original values of " + ", ".join(kept))
    if any(st.get("seeded") for st in schema.estimate_steps):
        reasons.append(SEEDED_ESTIMATE_REASON)
    if synth.is_dp:
        reasons += synth.not_dp_reasons(**params)
        # A run that spent nothing read nothing of the data: its output is a function of the seed alone.
        if seed is not None and spent > 0:
            reasons.append(SEEDED_REASON)
    return reasons


def _public_columns(schema: Schema, targets: list[str]) -> dict:
    out = {}
    for c in targets:
        col = schema[c]
        domain = {"categories": list(col.to_dict().get("categories", []))} if col.kind == "categorical" \
            else {"bounds": list(col.bounds)}
        if col.specials:
            domain["specials"] = list(col.specials)
        out[c] = {"kind": col.kind, **domain, "source": column_source(col)}
    return out


def column_source(col) -> str:
    """Where a column's domain came from, in words: declared, estimated privately (with its ε), or read off
    the data (not public)."""
    if col.derived:
        return "read off the data (not public)"
    if col.estimated:
        eps = sorted(set(col.estimated_epsilon.values()))
        return ("declared public, and estimated privately" if col.declared_fields - {"kind"} else
                "estimated privately") + f" (ε = {', '.join(f'{e:.3g}' for e in eps)} per field)"
    return "declared public"


def schema_estimate_summary(schema: Schema) -> dict | None:
    """The schema's private estimate as the ledger states it: its ε and δ in all, and its steps; None
    without one."""
    steps = schema.estimate_steps
    if not steps:
        return None
    return {"epsilon": schema.estimate_epsilon, "delta": schema.estimate_delta, "steps": len(steps),
            "how": "spent once on the data to make the schema public; taken off this release's total first, "
                   "and listed first among the steps",
            "seeded": any(st.get("seeded") for st in steps)}


def build_ledger(synth, schema: Schema, *, plan: Plan | None, delta, n, implicates: int, row_count_source,
                 steps: list[Step], targets: list[str], kept: list[str], seed, params: dict,
                 holdout_share: float | None = None) -> dict:
    """The privacy ledger of one synthesis, JSON-ready (docs/methods.md#the-ledger-and-its-statement).

    ``plan``: the budget split the run followed (None for a method that is not DP); the steps
    have been checked against it (:meth:`.budget.Budget.check`).
    """
    dp_method = synth.is_dp
    budget = synth.spends
    composed = compose(steps, budget.run_delta(delta))
    total = composed.epsilon if dp_method else None
    delta_spent = composed.delta
    reasons = _not_dp_reasons(synth, schema, targets=targets, kept=kept, seed=seed, params=params,
                              spent=total or 0.0)
    is_dp = not reasons
    per_record = dp_method and budget.kind == PER_RECORD
    unit = budget.unit.format(**params)
    if is_dp:
        label = f"ε-DP with ε = {total:g}" if delta_spent == 0 else f"(ε, δ)-DP with ε = {total:g}, δ = {delta_spent:g}"
        if per_record:
            label += f" (ε = {plan.per_unit:.4g} per {unit}, {plan.units:,} × {implicates} implicate(s))" \
                if implicates > 1 else f" (ε = {plan.per_unit:.4g} per {unit} × {plan.units:,})"
        if composed.rho is not None:
            label += f", from ρ-zCDP with ρ = {composed.rho:.4g}"
    else:
        label = "not DP (" + "; ".join(reasons) + ")"
    composition = composition_sentence(composed) if steps else "none"
    if steps and implicates > 1:
        share = f"ρ/{implicates} of the ρ above" if budget.zcdp else f"ε/{implicates}"
        composition += (f"; {implicates} implicates: {implicates}·{n:,} = {implicates * n:,} records "
                        f"released, each implicate of {n:,} records at {share}")
    ledger = {
        "method": synth.name,
        "label": synth.label,
        "is_dp": is_dp,
        "dp_label": label,
        "not_dp_reasons": reasons,
        "spends": budget.kind if dp_method else None,
        # the split the core planned and checked the steps against (budget.py), in the order it is taken
        "budget_split": {"schema_estimate": plan.schema, "row_count": plan.row_count,
                         "each_implicate": plan.per_implicate,
                         "per_target": budget.per_target or None} if dp_method else None,
        "schema_estimate": schema_estimate_summary(schema),
        "epsilon_total": total,
        # zCDP steps: their ρ summed, and the δ at which that sum was converted once into (ε, δ)
        "rho_total": composed.rho,
        "rho_epsilon": composed.rho_epsilon,
        "rho_delta": composed.rho_delta,
        "epsilon_requested": plan.requested if dp_method else None,
        "epsilon_per_record": float(plan.per_unit) if per_record else None,
        "record_unit": unit if per_record else None,
        "epsilon_per_implicate": plan.implicate_share if dp_method else None,
        "implicates": implicates,
        "delta": float(delta_spent),
        "delta_requested": float(delta),
        "exp_epsilon": float(math.exp(total)) if total is not None and total < 700 else None,
        "neighbouring": NEIGHBOURING,
        "caveats": [synth.caveat] if dp_method and synth.caveat else [],
        "composition": composition,
        "steps": [s.to_dict() for s in steps],
        "public": {
            "row_count": {"value": n, "source": row_count_source},
            "columns": _public_columns(schema, targets),
        },
        "synthesized_columns": targets,
        "kept_columns": kept,
        "excluded_columns": [c for c, s in schema.columns.items() if s.kind == "excluded"],
        "n_rows": n,
        # None: fresh operating-system entropy, never stored, shown or returned.
        "seed": int(seed) if isinstance(seed, (int, np.integer)) else None if seed is None else "generator",
        "holdout": ({"taken": True, "share": float(holdout_share),
                     "how": "each record held out independently with this probability, by fresh secret "
                            "randomness; held-out records are not used by the synthesis"}
                    if holdout_share else {"taken": False}),
        "params": {k: v for k, v in params.items() if isinstance(v, (int, float, str, bool))},
    }
    ledger["statement"] = privacy_statement(ledger)
    return ledger


def composition_sentence(c: Composition) -> str:
    """How the run's total was obtained from its steps, in one sentence (:func:`.accounting.compose`)."""
    pure = "sequential: the total is the sum of the steps' ε (each step's ε × its repeats)"
    if c.rho is None:
        return pure
    text = (f"zCDP: the steps' ρ add up (each step's ρ × its repeats) to ρ = {c.rho:.6g}, converted once into "
            f"(ε, δ) = ({c.rho_epsilon:.6g}, {c.rho_delta:g}) by the bound of Canonne, Kamath and Steinke (2020); "
            "no step has an (ε, δ) of its own")
    if c.pure_epsilon > 0:
        text += (f"; the steps costed in ε add ε = {c.pure_epsilon:.6g}"
                 + (f", δ = {c.pure_delta:g}" if c.pure_delta else "")
                 + f" to it (sequential composition): ε = {c.epsilon:.6g} in all")
    return text


def strength_words(epsilon: float, ratio_text: str) -> str:
    """What e^ε means at this size, in one sentence."""
    if epsilon <= STRONG_EPSILON:
        return f"At e^ε = {ratio_text} the guarantee is strong."
    if epsilon <= WEAK_EPSILON:
        return (f"At e^ε = {ratio_text} the guarantee is moderate: an attacker's odds about any one person "
                "may grow by that factor.")
    return (f"e^ε = {ratio_text}: the guarantee is very weak; an attacker's odds about any one person may "
            "grow by that factor, so this output can reveal a great deal about individuals.")


def delta_warning(delta: float, n: int | None) -> str | None:
    """One sentence when δ is above 1/n, for ``n`` the declared or noisy number of records, else None.

    (ε, δ)-DP allows a mechanism that publishes each person's record whole with probability δ: above
    1/n that is more than one record expected in the output.

    >>> delta_warning(1e-6, 344) is None
    True
    """
    if not delta or not n or delta <= 1 / n:
        return None
    return (f"δ = {delta:g} is above 1/n = {1 / n:.3g} (n = {n:,}): an (ε, δ) guarantee allows a mechanism that "
            f"publishes each person's record whole with probability δ, about nδ = {n * delta:.3g} records here; "
            "choose δ well below 1/n.")


def statement_tone(ledger: dict) -> str:
    """How the statement is shown: "success" (DP, ε ≤ 1), "info" (DP, ε ≤ 10) or "warning"
    (not DP, ε above 10, or δ above 1/n: never a reassuring green box)."""
    if not ledger["is_dp"] or delta_warning(ledger["delta"], ledger.get("n_rows")):
        return "warning"
    eps = ledger["epsilon_total"]
    return "success" if eps <= STRONG_EPSILON else "info" if eps <= WEAK_EPSILON else "warning"


def ratio_text(ratio: float | None, epsilon: float) -> str:
    """e^ε as people read it: two decimals below 100, whole numbers with thousands separators below 10^12,
    then "3.04 × 10^34" (ε = 79.4 printed 35 digits, cut off in the ledger's tile); ``None`` (e^ε overflows a
    float, ε ≥ 700) is named by ε."""
    if ratio is None:
        return f"e^{epsilon:g}, more than 10^300"
    if ratio < 100:
        return f"{ratio:,.2f}"
    if ratio < 1e12:
        return f"{ratio:,.0f}"
    mantissa, exponent = f"{ratio:.2e}".split("e")
    return f"{float(mantissa):g} × 10^{int(exponent)}"


def privacy_statement(ledger: dict) -> str:
    """The ledger in plain words, for people."""
    if not ledger["is_dp"]:
        return (f"This synthesis is not differentially private: {'; '.join(ledger['not_dp_reasons'])}. "
                "It carries no formal privacy guarantee.")
    eps = ledger["epsilon_total"]
    ratio = ratio_text(ledger["exp_epsilon"], eps)
    text = (f"This synthesis satisfies {ledger['dp_label']} (neighbouring datasets: {ledger['neighbouring']}): "
            f"adding or removing any one person's record changes the probability of any output "
            f"by at most a factor e^ε = {ratio}. {strength_words(eps, ratio)}")
    if ledger.get("spends") == NONE and eps == 0:
        text += (" The method spent no ε: its output is drawn from the declared public domain and row count "
                 "alone, so it reveals nothing about the data, and keeps nothing of it either.")
    estimate = ledger.get("schema_estimate")
    if estimate:
        text += (f" The total includes ε = {estimate['epsilon']:.4g} that the schema's private estimate spent on the "
                 "data to release its bounds, categories and flags.")
    if ledger["delta"] > 0:
        text += f" The bound may fail with probability at most δ = {ledger['delta']:g}."
        text += "".join(f" {w}" for w in [delta_warning(ledger["delta"], ledger.get("n_rows"))] if w)
    for caveat in ledger.get("caveats", []):
        text += f" Caveat: {caveat}"
    return text


def ledger_steps_table(ledger: dict) -> pd.DataFrame:
    """The ledger's mechanism steps as a table, then the rows that compose them.

    A step costed in ε shows its ε (and δ); a zCDP step its ρ and σ, and no ε of its own. The rows
    after the steps: the ρ of the zCDP steps summed and converted once into (ε, δ), then (when steps
    costed in ε are there too, or none are in ρ) the total by sequential composition.
    """
    cols = ["implicate", "mechanism", "target", "rho", "sigma", "epsilon", "repeats", "rho_total", "epsilon_total",
            "delta", "sensitivity"]
    steps = pd.DataFrame(ledger["steps"]).reindex(columns=cols)
    if ledger.get("implicates", 1) == 1:
        steps = steps.drop(columns="implicate")
    if steps["repeats"].fillna(1).eq(1).all():
        steps = steps.drop(columns=["repeats", "rho_total", "epsilon_total"])
    rho, rows = ledger.get("rho_total"), []
    if rho is None:
        steps = steps.drop(columns=["rho", "sigma"] + (["rho_total"] if "rho_total" in steps else []))
    elif len(steps):
        rows.append({"mechanism": "zCDP steps: ρ adds up", "target": "", "rho": rho})
        rows.append({"mechanism": "that ρ converted once to (ε, δ) (Canonne, Kamath, Steinke 2020)", "target": "",
                     "epsilon": ledger["rho_epsilon"], "delta": ledger["rho_delta"]})
        if all(s.get("rho") is not None for s in ledger["steps"]):
            return pd.concat([steps, pd.DataFrame(rows)], ignore_index=True)
    if len(steps):
        rows.append({"mechanism": "total (sequential composition)", "target": "",
                     "epsilon": ledger["epsilon_total"], "delta": ledger["delta"]})
        steps = pd.concat([steps, pd.DataFrame(rows)], ignore_index=True)
    return steps
