"""Release reports: a PUBLIC one that goes in the release package, and an INTERNAL one that never does.

What leaves the machine in a release is the synthetic data and facts that
are public: :func:`release_package` zips the synthetic CSV(s), the public
ledger (:func:`dpsynth_core.release.public_ledger`) and
:func:`public_report_html`, built from the synthetic data, the declared
schema and the ledger only. Nothing in it is computed on the confidential
data: no real histogram or metric, no missing-value count, no inferred
reason, no hash of the data.

:func:`internal_report_html` compares the release with the confidential
data (utility, and the Risk page's disclosure measures). It is marked
confidential in every section and downloaded on its own, never zipped with
the release.

Every piece of user text is HTML-escaped; the figures are embedded with
plotly.js inline so each file opens offline.
"""

from __future__ import annotations

import datetime as _dt
import html
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from . import plots, risk
from .metric_info import MetricContext, metrics, section_estimates, section_title, sections
from .privacy import Totals, delta_warning, ledger_steps_table, ratio_text, statement_tone
from .privacy.ledger import STRONG_EPSILON, WEAK_EPSILON
from .privacy.store import purposes_text
from .release import format_number, public_ledger, release_files, zip_bytes
from .schema import FIELDS, Schema
from .schema_editor import estimated_text, schema_table
from .synth import Synthesis
from .utility import histogram_data, ks_statistic
from .utility.propensity import fitted
from .utility.report import format_value

CONFIDENTIAL = ("CONFIDENTIAL: internal report, computed on the confidential data. Do not publish it and do not "
                "put it with the release.")


@dataclass
class ReportSection:
    title: str
    text: str = ""
    tables: list[tuple[str, pd.DataFrame]] = field(default_factory=list)
    figures: list[go.Figure] = field(default_factory=list)


def spending_sentence(totals: Totals, n: int | None) -> str:
    """What the ledger store recorded on the same data, this release included, in words; ``n`` is the release's
    declared or noisy row count, for the δ-above-1/n warning."""
    runs = totals.dp_computations
    text = (f"Every computation on the same data in the steward's ledger, this release included: {runs} DP "
            f"computation{'' if runs == 1 else 's'}")
    if runs:
        text += (f" ({purposes_text(totals.by_purpose)}) spending ε = {format_number(totals.reported_epsilon)}, "
                 f"δ = {format_number(totals.delta)} in all ({totals.how()})")
    looks = totals.looks
    text += (f"; {looks} look{'' if looks == 1 else 's'} at the data without a guarantee"
             + (f" ({totals.seeded_looks} with a fixed seed)" if totals.seeded_looks else "")
             + (", which no ε covers: results looked at while tuning are a use of the data that the release's own "
                "ε does not cover." if looks else "."))
    warning = delta_warning(totals.delta, n)
    return text + (f" In all, {warning[0].lower()}{warning[1:]}" if warning and runs > 1 else "")


def release_statement(ledger: dict, totals: Totals) -> str:
    """The release's privacy statement, followed by what was spent on the same data in all (the ledger store)."""
    return f"{ledger['statement']} {spending_sentence(totals, ledger.get('n_rows'))}"


def release_tone(ledger: dict, totals: Totals) -> str:
    """How the release statement is shown: the synthesis's own tone (:func:`statement_tone`), made no better
    than what was spent in all allows: a total ε above 1, or looks without a guarantee, are never a green box;
    a total ε above 10 or a total δ above 1/n is a warning."""
    tone = statement_tone(ledger)
    if totals.reported_epsilon > WEAK_EPSILON or delta_warning(totals.delta, ledger.get("n_rows")):
        return "warning"
    if tone == "success" and (totals.reported_epsilon > STRONG_EPSILON or totals.looks):
        return "info"
    return tone


# -- tables ---------------------------------------------------------------------

def public_schema_table(schema: Schema) -> pd.DataFrame:
    """The public schema, one row per column: declared and privately estimated values (the latter named,
    with their ε); a value read off the data is withheld, not shown."""
    rows = []
    for name, col in schema.columns.items():
        pub = col.to_public_dict()
        bounds = pub.get("bounds") or [pub.get("lower"), pub.get("upper")]
        rows.append({
            "column": name,
            "kind": pub.get("kind", "withheld"),
            "categories": ", ".join(str(v) for v in pub["categories"]) if "categories" in pub else "",
            "lower": "" if bounds[0] is None else format_number(bounds[0]),
            "upper": "" if bounds[1] is None else format_number(bounds[1]),
            "special values": ", ".join(format_number(v) for v in pub.get("specials", [])),
            "integer": {True: "yes", False: "no"}.get(pub.get("integer"), ""),
            "nullable": {True: "yes", False: "no"}.get(pub.get("nullable"), ""),
            "decimals": "" if pub.get("decimals") is None else str(pub["decimals"]),
            "estimated privately (ε)": estimated_text(col),
            "withheld (read off the data)": ", ".join(pub.get("withheld", [])),
        })
    return pd.DataFrame(rows)


def _config_rows(ledger: dict, totals: Totals) -> list[tuple[str, str]]:
    seed = ledger.get("seed")
    rows = [
        ("method", ledger["label"]),
        ("differential privacy", ledger["dp_label"]),
        ("ε (total)", format_number(ledger["epsilon_total"])),
    ]
    if ledger.get("epsilon_per_record") is not None:
        rows.append(("ε per record", format_number(ledger["epsilon_per_record"])))
    rows += [
        ("δ", format_number(ledger["delta"])),
        ("synthetic rows", f"{format_number(ledger['n_rows'])} ({ledger['public']['row_count']['source']})"),
        ("implicates", format_number(ledger["implicates"])),
        ("seed", "fresh operating-system entropy, never stored" if seed is None
         else f"{seed} (a known seed: reproducible exploration)"),
        ("rows held out from the synthesizer", f"{ledger['holdout']['share']:.0%}" if ledger.get("holdout", {})
         .get("taken") else "none"),
        ("all DP computations on the same data (ledger store)", format_number(totals.dp_computations)),
        ("all DP computations: ε spent in all", f"{format_number(totals.reported_epsilon)} ({totals.how()})"),
        ("all DP computations: δ spent in all", format_number(totals.delta)),
        ("looks at the same data without a guarantee", format_number(totals.looks)),
    ]
    return rows


def _steps_table(ledger: dict) -> pd.DataFrame:
    steps = ledger_steps_table(ledger)
    return steps.apply(lambda col: col.map(lambda v: "" if v is None or (isinstance(v, float) and v != v) else
                                           format_number(v) if isinstance(v, (int, float)) else v))


def synthetic_summary(synth: pd.DataFrame, schema: Schema) -> pd.DataFrame:
    """Per modelled column of the synthetic data: missing share and, for numbers, quartiles and mean."""
    rows = []
    for c in [c for c in schema.used if c in synth.columns]:
        s = synth[c]
        row = {"column": c, "kind": schema[c].kind, "synthetic rows": len(s),
               "missing share": float(s.isna().mean()) if len(s) else float("nan")}
        if schema[c].kind == "numeric":
            v = pd.to_numeric(s, errors="coerce").dropna().to_numpy(float)
            if len(v):
                q = np.quantile(v, [0, 0.25, 0.5, 0.75, 1])
                row.update({"mean": v.mean(), "sd": v.std(ddof=1) if len(v) > 1 else float("nan"),
                            "min": q[0], "25%": q[1], "median": q[2], "75%": q[3], "max": q[4]})
        else:
            top = s.value_counts(normalize=True).head(3)
            row["most frequent (share)"] = ", ".join(f"{k} ({v:.3f})" for k, v in top.items())
        rows.append(row)
    return pd.DataFrame(rows)


def synthetic_histogram_figure(synth: pd.DataFrame, column: str, *, categorical: bool) -> go.Figure:
    """Shares of the synthetic rows in bins of the synthetic data itself (nothing of the real data)."""
    hist = histogram_data(synth, synth, column, categorical=categorical)
    fig = go.Figure(go.Bar(x=[plots.esc(b) for b in hist["bin"]], y=hist["synth_share"], name="synthetic",
                           marker_color=plots.SYNTH_COLOUR, hovertemplate="%{x}<br>%{y:.3f}<extra></extra>"))
    fig.update_xaxes(type="category")
    fig.update_layout(title=f"Synthetic {plots.esc(column)}", xaxis_title=plots.esc(column),
                      yaxis_title="share of synthetic rows", template="plotly_white", height=340,
                      margin=dict(l=50, r=20, t=60, b=50))
    return fig


# -- internal sections -------------------------------------------------------------

def metric_table(section: str, ctx: MetricContext) -> pd.DataFrame:
    """Every registered metric of ``section`` on ``ctx``: measure, value and, where it says one, a note."""
    rows = []
    for m in metrics(section=section):
        value = m.value(ctx)
        rows.append({"measure": m.label, "value": value if value == value else format_value(value),
                     "note": m.explain(ctx, value) or ""})
    return pd.DataFrame(rows, columns=["measure", "value", "note"])


def utility_section(real: pd.DataFrame, synthesis: Synthesis, *, seed: int | None = None) -> ReportSection:
    """Utility of a release against the confidential data: one table per utility section of the metric
    registry (propensity, marginals, pairs, the default regression), per-column KS, histograms."""
    schema = synthesis.schema
    used = schema.used
    r, s = real[used], synthesis.data[used]
    ctx = MetricContext(r, s, schema=schema, seed=seed)
    prop = fitted(ctx)
    tables = [(section_title(sec), metric_table(sec, ctx)) for sec in sections("utility")]
    ks = pd.DataFrame({"column": [c for c in used if schema[c].kind == "numeric"]})
    ks["KS distance"] = [ks_statistic(r[c].to_numpy(float), s[c].to_numpy(float)) for c in ks["column"]]
    figures = [plots.histogram_figure(histogram_data(r, s, c, categorical=schema[c].kind == "categorical"), c)
               for c in used]
    return ReportSection("Utility (real against synthetic)",
                         f"Logistic discriminator with pairwise interactions on {prop.n_used:,} rows.",
                         [*tables, ("Per-column KS distance", ks)], figures)


def _estimates_table(estimates, values=()) -> pd.DataFrame:
    """One row per estimate with its references and verdict, then one per plain ``(label, value)``."""
    rows = []
    for est in estimates:
        rows.append({"measure": est.label, "value": est.value, "interval": f"{est.lower:.4g} to {est.upper:.4g}",
                     "baseline": est.baseline,
                     "held-out records": float("nan") if est.holdout is None else est.holdout,
                     "original released as is":
                     est.original, "finding": est.finding, "verdict": est.verdict()})
    rows += [{"measure": label, "value": value} for label, value in values]
    return pd.DataFrame(rows)


def risk_section(real: pd.DataFrame, synthesis: Synthesis, *, holdout: pd.DataFrame | None = None,
                 seed: int | None = None) -> ReportSection:
    """The Risk page's measures, with the same core calls: formal guarantee, matching, distances, inference.

    Key variables and the sensitive column are the schema's roles (the Risk
    page's defaults); without key variables only distances are measured.
    """
    schema, ledger = synthesis.schema, synthesis.ledger
    used = schema.used
    r, s = real[used], synthesis.data[used]
    h = holdout[used] if holdout is not None else None
    formal = risk.formal_risk(ledger)
    tables = [("Formal guarantee", pd.DataFrame({
        "measure": ["ε", "δ", "e^ε (bound on the probability ratio)"],
        "value": [format_number(formal.epsilon) if formal.is_dp else "none (not DP)",
                  format_number(formal.delta) if formal.is_dp else "n/a",
                  "n/a" if not formal.is_dp else ratio_text(
                      formal.exp_epsilon if np.isfinite(formal.exp_epsilon) else None, formal.epsilon)]}))]
    figures, estimates = [], []
    keys = [k for k in schema.keys if k in used]
    options = [c for c in used if c not in keys]
    sensitive = schema.sensitive if schema.sensitive in options else (options[0] if options else None)
    text = risk.applicable_measures(ledger, holdout=h is not None)
    text += (f" Key variables: {', '.join(keys)}; sensitive column: {sensitive}." if keys else
             " No key variables are declared on the Data page, so matching and prediction are not measured.")
    linked = risk.is_row_linked(ledger)
    drawn = set()
    ctx = MetricContext(r, s, schema=schema, seed=seed, holdout=h, keys=keys, sensitive=sensitive)
    if keys and linked:
        mr = risk.match_risk(r, s, keys, schema=schema)
        ctx.shared["matching"] = mr
        tables.append(("Riskiest records (matching on the keys)", mr.table.head(20)))
    elif keys and sensitive:
        stol = risk.default_sensitive_tolerance(sensitive, [r, s], schema) \
            if schema[sensitive].kind == "numeric" else None
        kw = dict(sensitive_tolerance=stol, schema=schema, holdout=h)
        uq = ctx.shared["uniques"] = risk.unique_reproduction(r, s, keys, sensitive, **kw)
        ctx.shared["key_match"] = risk.key_match_disclosure(r, s, keys, sensitive, **kw)
        su = ctx.shared["sample_uniqueness"] = risk.sample_uniqueness(r, s, keys, schema=schema, seed=seed)
        drawn.add("synthetic_uniques")  # in the uniqueness table, beside its references
        tables.append(("Uniqueness on the keys", pd.DataFrame({
            "measure": ["real rows unique on the keys", "synthetic rows unique on the keys",
                        "random public-domain rows unique on the keys", "records unique on the keys",
                        "of which reappear with their sensitive value"],
            "value": [su.real_share, su.synth_share, su.estimate.baseline, uq.n_unique, uq.reproduced]})))
    dr = ctx.shared["distance"] = risk.distance_risk(r, s, holdout=h, schema=schema, seed=seed)
    figures.append(plots.dcr_distributions_figure(dr.dcr_train, dr.dcr_holdout, dr.dcr_baseline))
    if dr.membership is not None:
        figures.append(plots.roc_figure(dr.membership))
    # Every registered risk measure with an estimate, section by section: a row-linked release is measured by
    # matching, a fully synthetic one by key match (as on the Risk page).
    skip = {"key match" if linked else "matching"}
    estimates = [est for sec in sections("risk") if sec not in skip for est in section_estimates(sec, ctx)]
    # A measure with a value but no estimate (no references to compare with) is listed with its value alone.
    plain = [(m.label, m.value(ctx)) for sec in sections("risk") if sec not in skip for m in metrics("risk", sec)
             if m.estimate is None and m.on_map and m.name not in drawn and not ctx.missing(m.needs)]
    tables.insert(1, ("Disclosure measures, each against its references", _estimates_table(estimates, plain)))
    # A measure these data cannot give (e.g. a synthetic sensitive column with one known value) says why.
    text += "".join(f" {sentence}" for sentence in dict.fromkeys(ctx.refused.values()))
    # Each measure beside its baseline, held-out and original references, as the Risk page draws it.
    about_sensitive = {m.name for m in metrics("risk") if "sensitive" in m.needs}
    figures += [plots.estimate_figure(est, note=sensitive if est.metric in about_sensitive else "")
                for est in estimates if est.value == est.value]
    return ReportSection("Disclosure risk (real against synthetic)", text, tables, figures)


# -- HTML ---------------------------------------------------------------------------

def _table_html(df: pd.DataFrame) -> str:
    # to_html escapes cell text and headers by default; keep it that way.
    return df.to_html(index=False, escape=True, na_rep="", float_format=lambda v: f"{v:.4g}", border=0,
                      classes="tbl")


_STYLE = ("<style>body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}"
          ".tbl{border-collapse:collapse}.tbl td,.tbl th{padding:4px 10px;border-bottom:1px solid #ddd;"
          "text-align:left;vertical-align:top}.stmt{background:#f3f7f3;padding:1em;border-left:4px solid #2a7}"
          ".stmt.warn{background:#fff6e5;border-left-color:#d80}"
          ".conf{background:#fde8e8;color:#8a1010;border:2px solid #c22;padding:.5em 1em;font-weight:bold}"
          "</style>")


def _html(title: str, parts: list[str], sections: list[ReportSection], *, banner: str | None) -> str:
    e = html.escape
    out = ["<!doctype html><html lang='en'><head><meta charset='utf-8'>", f"<title>{e(title)}</title>", _STYLE,
           "</head><body>"]
    if banner:
        out.append(f"<p class='conf'>{e(banner)}</p>")
    out += parts
    n_fig = 0
    for sec in sections:
        out.append(f"<h2>{e(sec.title)}</h2>")
        if banner:
            out.append(f"<p class='conf'>{e(banner)}</p>")
        if sec.text:
            out.append(f"<p>{e(sec.text)}</p>")
        for name, table in sec.tables:
            out += [f"<h3>{e(name)}</h3>", _table_html(table)]
        for fig in sec.figures:
            # Fixed element ids: the same release gives the same file (plotly would draw random ones).
            out.append(fig.to_html(full_html=False, include_plotlyjs=n_fig == 0, div_id=f"figure-{n_fig}"))
            n_fig += 1
    out.append("</body></html>")
    return "\n".join(out)


def public_report_html(*, dataset_name: str, synthesis: Synthesis, statement: str, totals: Totals,
                       created: _dt.datetime | None = None) -> str:
    """The release's public report: statement, configuration, declared schema, ledger, synthetic data only."""
    e = html.escape
    led = synthesis.ledger
    created = created or _dt.datetime.now(_dt.timezone.utc)
    config = pd.DataFrame(_config_rows(led, totals), columns=["setting", "value"])
    synth = synthesis.data
    used = [c for c in synthesis.schema.used if c in synth.columns]
    parts = [
        f"<h1>Release report: {e(dataset_name)}</h1>",
        f"<p>Created {e(created.strftime('%Y-%m-%d %H:%M UTC'))} by dpsynth. Everything in this report is "
        "computed from the synthetic data, the declared (public) schema and the privacy ledger; nothing in it "
        "was computed on the confidential data.</p>",
        f"<h2>Privacy statement</h2><p class='stmt{'' if led['is_dp'] else ' warn'}'>{e(statement)}</p>",
        "<h2>Configuration</h2>", _table_html(config),
        "<h2>Public schema</h2>",
        "<p>What was declared public before synthesis. A value read off the data is withheld and named in the "
        "last column; a synthesis relying on one is labelled not DP.</p>",
        _table_html(public_schema_table(synthesis.schema)),
        "<h2>Privacy ledger steps</h2>",
        _table_html(_steps_table(led)) if led["steps"] else "<p>No mechanism steps (not DP).</p>",
    ]
    sections = [ReportSection(
        "The synthetic data", f"Summaries and histograms of the {len(synth):,} synthetic rows"
        + (" (first implicate)" if len(synthesis.implicates) > 1 else "") + ".",
        [("Per-column summary (synthetic data)", synthetic_summary(synth, synthesis.schema))],
        [synthetic_histogram_figure(synth, c, categorical=synthesis.schema[c].kind == "categorical")
         for c in used])]
    return _html(f"dpsynth release: {dataset_name}", parts, sections, banner=None)


def internal_report_html(*, dataset_name: str, fingerprint: str, synthesis: Synthesis, statement: str,
                         sections: list[ReportSection], totals: Totals,
                         created: _dt.datetime | None = None) -> str:
    """The internal report: configuration with the data's fingerprint, the full schema, utility and risk."""
    e = html.escape
    led = synthesis.ledger
    created = created or _dt.datetime.now(_dt.timezone.utc)
    config = pd.DataFrame([("dataset fingerprint (SHA-256 of the confidential table)", fingerprint),
                           *_config_rows(led, totals)], columns=["setting", "value"])
    table = schema_table(synthesis.schema).astype(object).where(lambda t: t.notna(), "")
    parts = [
        f"<h1>CONFIDENTIAL internal report: {e(dataset_name)}</h1>",
        f"<p>Created {e(created.strftime('%Y-%m-%d %H:%M UTC'))} by dpsynth. This report compares the release "
        "with the confidential data; it is not part of the release and must stay with the data.</p>",
        f"<h2>Privacy statement</h2><p class='conf'>{e(CONFIDENTIAL)}</p>",
        f"<p class='stmt{'' if led['is_dp'] else ' warn'}'>{e(statement)}</p>",
        "<h2>Configuration</h2>", f"<p class='conf'>{e(CONFIDENTIAL)}</p>", _table_html(config),
        "<h2>Schema, with what was read off the data</h2>", f"<p class='conf'>{e(CONFIDENTIAL)}</p>",
        f"<p>Fields: {e(', '.join(FIELDS))}. 'missing' counts and 'reason' were read off the confidential "
        "data.</p>", _table_html(table),
    ]
    return _html(f"CONFIDENTIAL dpsynth internal report: {dataset_name}", parts, sections, banner=CONFIDENTIAL)


# -- what the app downloads ------------------------------------------------------------

def release_package(*, dataset_name: str, synthesis: Synthesis, stem: str, totals: Totals,
                    created: _dt.datetime | None = None) -> bytes:
    """The public release: CSV(s), ``<stem>.ledger.json`` and ``<stem>.report.html`` in a zip.

    ``totals``: what the ledger store recorded on the same data, this release included
    (:meth:`dpsynth_core.privacy.LedgerStore.totals`); written without the store's keyed fingerprint.
    """
    ledger = public_ledger(synthesis.ledger, synthesis.schema, totals=totals)
    files = release_files(synthesis, stem, ledger=ledger)
    statement = release_statement(synthesis.ledger, totals)
    files[f"{stem}.report.html"] = public_report_html(dataset_name=dataset_name, synthesis=synthesis,
                                                      statement=statement, totals=totals,
                                                      created=created).encode("utf-8")
    return zip_bytes(files)


def internal_report(*, dataset_name: str, fingerprint: str, real: pd.DataFrame, synthesis: Synthesis,
                    totals: Totals, holdout: pd.DataFrame | None = None, seed: int | None = None) -> bytes:
    """The internal report (HTML bytes): utility and disclosure risk against the confidential data."""
    sections = [utility_section(real, synthesis, seed=seed),
                risk_section(real, synthesis, holdout=holdout, seed=seed)]
    return internal_report_html(dataset_name=dataset_name, fingerprint=fingerprint, synthesis=synthesis,
                                statement=release_statement(synthesis.ledger, totals), sections=sections,
                                totals=totals).encode("utf-8")
