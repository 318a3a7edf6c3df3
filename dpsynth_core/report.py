"""The release package: synthetic CSV(s), ledger and a self-contained HTML report, in one zip.

The report states the configuration (dataset fingerprint, schema, method,
ε, δ, seed, rows), the utility and risk measures with their figures, the
plain-language privacy statement and the session's spending on the same
data. Every piece of user text is HTML-escaped; the figures are embedded
with plotly.js inline so the file opens offline.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from . import constraints, plots
from .release import release_files, zip_bytes
from .risk import exact_copy_share, gower_dcr
from .schema import Schema
from .synth import Synthesis
from .utility import histogram_data, ks_statistic, propensity_metrics


@dataclass
class ReportSection:
    title: str
    text: str = ""
    tables: list[tuple[str, pd.DataFrame]] = field(default_factory=list)
    figures: list[go.Figure] = field(default_factory=list)


def session_total(log: list[dict], fingerprint: str) -> tuple[int, float]:
    """How many DP syntheses the session ran on this dataset, and the ε they spent in all."""
    runs = [e for e in log if e["fingerprint"] == fingerprint and e.get("epsilon_total") is not None]
    return len(runs), float(sum(e["epsilon_total"] for e in runs))


def release_statement(ledger: dict, log: list[dict], fingerprint: str) -> str:
    """The release's privacy statement, naming what the session spent on the same data."""
    runs, total = session_total(log, fingerprint)
    text = ledger["statement"]
    if runs:
        text += (f" Before and including this release, the session ran {runs} DP synthesis(es) on the same "
                 f"data, spending ε = {total:g} in all (sequential composition); results looked at while "
                 "tuning are a use of the data that the release's own ε does not cover.")
    return text


def standard_sections(real: pd.DataFrame, synthesis: Synthesis, *, seed: int | None = None) -> list[ReportSection]:
    """Utility and risk of a release: propensity tiles, per-column KS, copies and distances, figures."""
    schema = synthesis.schema
    used = schema.used
    r, s = real[used], synthesis.data[used]
    prop = propensity_metrics(r, s, interactions=True, seed=seed, max_rows=constraints.PROPENSITY_HEADLINE_ROWS)
    tiles = pd.DataFrame({
        "measure": ["pMSE", "pMSE ratio", "SPECKS", "AUC"],
        "value": [prop.pmse, prop.pmse_ratio, prop.specks, prop.auc],
    })
    ks = pd.DataFrame({"column": [c for c in used if schema[c].kind == "numeric"]})
    ks["KS distance"] = [ks_statistic(r[c].to_numpy(float), s[c].to_numpy(float)) for c in ks["column"]]
    figures = [plots.histogram_figure(histogram_data(r, s, c, categorical=schema[c].kind == "categorical"), c)
               for c in used]
    dcr = gower_dcr(r, s, schema=schema)
    risk = pd.DataFrame({
        "measure": ["share of real records copied exactly", "median distance to closest synthetic record"],
        "value": [exact_copy_share(r, s), float(np.median(dcr))],
    })
    return [
        ReportSection("Utility", f"Logistic discriminator with pairwise interactions on {prop.n_used:,} rows.",
                      [("Propensity measures", tiles), ("Per-column KS distance", ks)], figures),
        ReportSection("Disclosure risk", "", [("Copies and distances (Gower)", risk)], [plots.dcr_figure(dcr)]),
    ]


def _table_html(df: pd.DataFrame) -> str:
    # to_html escapes cell text and headers by default; keep it that way.
    return df.to_html(index=False, escape=True, float_format=lambda v: f"{v:.4g}", border=0, classes="tbl")


def report_html(*, dataset_name: str, fingerprint: str, schema: Schema, synthesis: Synthesis,
                statement: str, sections: list[ReportSection], created: _dt.datetime | None = None) -> str:
    """A self-contained HTML report of one release."""
    e = html.escape
    led = synthesis.ledger
    created = created or _dt.datetime.now(_dt.timezone.utc)
    config = pd.DataFrame({
        "setting": ["dataset", "dataset fingerprint (SHA-256)", "method", "ε (total)", "δ", "seed", "rows",
                    "implicates", "DP"],
        "value": [dataset_name, fingerprint, led["label"], led["epsilon_total"], led["delta"],
                  "fresh entropy" if led["seed"] is None else led["seed"], led["n_rows"], led["implicates"],
                  led["dp_label"]],
    }).astype(str)
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>dpsynth release: {e(dataset_name)}</title>",
        "<style>body{font-family:system-ui,sans-serif;max-width:1000px;margin:2em auto;padding:0 1em}"
        ".tbl{border-collapse:collapse}.tbl td,.tbl th{padding:4px 10px;border-bottom:1px solid #ddd;"
        "text-align:left}.stmt{background:#f3f7f3;padding:1em;border-left:4px solid #2a7}</style></head><body>",
        f"<h1>Release report: {e(dataset_name)}</h1>",
        f"<p>Created {e(created.strftime('%Y-%m-%d %H:%M UTC'))} by dpsynth.</p>",
        f"<h2>Privacy statement</h2><p class='stmt'>{e(statement)}</p>",
        "<h2>Configuration</h2>", _table_html(config),
        "<h3>Public schema</h3>",
        f"<pre>{e(json.dumps(schema.to_dict(), indent=1, ensure_ascii=False, default=str))}</pre>",
        "<h3>Privacy ledger steps</h3>",
        _table_html(pd.DataFrame(led["steps"])) if led["steps"] else "<p>No mechanism steps (not DP).</p>",
    ]
    first = True
    for sec in sections:
        parts.append(f"<h2>{e(sec.title)}</h2>")
        if sec.text:
            parts.append(f"<p>{e(sec.text)}</p>")
        for title, table in sec.tables:
            parts += [f"<h3>{e(title)}</h3>", _table_html(table)]
        for fig in sec.figures:
            parts.append(fig.to_html(full_html=False, include_plotlyjs=True if first else False))
            first = False
    parts.append("</body></html>")
    return "\n".join(parts)


def release_package(*, dataset_name: str, fingerprint: str, real: pd.DataFrame, synthesis: Synthesis,
                    stem: str, log: list[dict], seed: int | None = None) -> bytes:
    """The one-download release: CSV(s), ``<stem>.ledger.json`` and ``<stem>.report.html`` in a zip."""
    files = release_files(synthesis, stem)
    statement = release_statement(synthesis.ledger, log, fingerprint)
    html_text = report_html(dataset_name=dataset_name, fingerprint=fingerprint, schema=synthesis.schema,
                            synthesis=synthesis, statement=statement,
                            sections=standard_sections(real, synthesis, seed=seed))
    files[f"{stem}.report.html"] = html_text.encode("utf-8")
    return zip_bytes(files)
