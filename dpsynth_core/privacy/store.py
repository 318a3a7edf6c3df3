"""The ledger store: every computation on a dataset, from every session and command, in one SQLite file.

Differential privacy composes over every output ever computed on the same people, so the budget
belongs to the dataset, not to a browser tab or a process: a reload, a second tab, a server restart
or a ``dpsynth`` command must all add to one account. :class:`LedgerStore` keeps that account in a
SQLite database (the standard library's ``sqlite3``):

* **Where.** The path given, else the environment variable ``DPSYNTH_LEDGER``, else
  ``$XDG_DATA_HOME/dpsynth/ledger.sqlite3`` (``~/.local/share/dpsynth/ledger.sqlite3`` when
  ``XDG_DATA_HOME`` is unset). :func:`default_path` says which.
* **Durable.** Write-ahead logging (WAL: readers never wait for a writer), one transaction per entry,
  ``synchronous=FULL``: an entry is on disk (fsync) before :meth:`LedgerStore.record` returns, so it
  survives a killed process and a power cut alike (NORMAL would keep it through a crash of the
  process but could lose the last entries on a power cut; one fsync costs milliseconds beside a
  synthesis). Writers from several processes queue on SQLite's lock for up to
  :data:`BUSY_TIMEOUT_S` rather than fail.
* **What it holds.** Per entry: the time, the dataset, the purpose (:data:`PURPOSES`), the method,
  ε, δ, ρ (:func:`entry_rho`), whether the run had a fixed seed, whether it is DP, the rows it read,
  the share held out, and the source (an app session or ``cli``). Never a row or a value of the data.
  It is confidential metadata all the same (what was looked at, when, how often): the file is
  created readable by its owner only.
* **Which dataset.** A dataset is known by an HMAC-SHA-256 of its content fingerprint
  (:func:`dpsynth_core.synth.fingerprint`) under a secret key the store creates once and keeps in
  itself, plus the steward's name for it. The keyed fingerprint is never shown: outputs number the
  datasets instead. A copy of the file keeps the key, so a backup recognises the same data.

Totals (:class:`Totals`) count only the DP entries: basic composition (Σε, Σδ), and, where every DP
entry has a ρ (zCDP, or pure ε with ρ = Σ ε_i²/2), the summed ρ converted once to ε at δ = Σδ by
:func:`.accounting.zcdp_epsilon`; the smaller ε is the one reported, and the totals say which. An entry
that is not DP (a fixed seed, a method that is not DP, domains read off the data) is a look at the data
without a guarantee: counted apart, never added to ε. ``docs/ledger.md`` explains it for stewards.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import hmac
import json
import math
import os
import secrets
import sqlite3
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import BudgetExceeded, LedgerError
from .accounting import zcdp_epsilon

ENV = "DPSYNTH_LEDGER"
PURPOSES = ("exploration", "sweep point", "schema estimate", "release", "audit")
#: Seconds a writer waits for another process's transaction before giving up (it then fails closed).
BUSY_TIMEOUT_S = 60.0
#: Relative slack of the cap's comparison: a sum of ε in floating point (0.1 + 0.2) must not pass a cap it meets.
CAP_SLACK = 1e-9
SCHEMA_VERSION = "1"
# Files this process has set up (tables, key, WAL): each is set up once, not on every handle (the app makes one
# per page run), unless it disappears.
_PREPARED: set[Path] = set()
_PREPARING = threading.Lock()

_TABLES = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS datasets (
    id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
    cap_epsilon REAL, cap_delta REAL);
CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT, time TEXT NOT NULL,
    dataset INTEGER NOT NULL REFERENCES datasets(id), name TEXT NOT NULL,
    purpose TEXT NOT NULL, method TEXT NOT NULL, epsilon REAL, delta REAL NOT NULL, rho REAL,
    seeded INTEGER NOT NULL, is_dp INTEGER NOT NULL, rows INTEGER, holdout REAL, source TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS entries_dataset ON entries (dataset);
CREATE TABLE IF NOT EXISTS sweeps (
    id INTEGER PRIMARY KEY, dataset INTEGER NOT NULL REFERENCES datasets(id), settings TEXT NOT NULL,
    total INTEGER NOT NULL, started TEXT NOT NULL, finished TEXT, UNIQUE (dataset, settings));
CREATE TABLE IF NOT EXISTS sweep_points (
    sweep INTEGER NOT NULL REFERENCES sweeps(id), job INTEGER NOT NULL, scores TEXT NOT NULL,
    PRIMARY KEY (sweep, job));
"""


def default_path() -> Path:
    """The store's file: ``$DPSYNTH_LEDGER``, else the user's data directory (XDG), read at each call."""
    given = os.environ.get(ENV, "").strip()
    if given:
        return Path(given).expanduser()
    base = os.environ.get("XDG_DATA_HOME", "").strip()
    root = Path(base).expanduser() if base and Path(base).is_absolute() else Path.home() / ".local" / "share"
    return root / "dpsynth" / "ledger.sqlite3"


@dataclass(frozen=True)
class Use:
    """Which data a computation reads and why: what an entry says beside the computation's own figures.

    ``fingerprint`` is the content fingerprint (:func:`dpsynth_core.synth.fingerprint`) of the whole
    table the steward holds, held-out rows included: the people are the same whichever rows a run
    reads. The store keeps only its keyed hash. ``dataset`` is the steward's name for the table;
    ``source`` says where the computation ran (``"cli"``, ``"app session …"``, ``"python"``).
    """

    dataset: str
    fingerprint: str
    purpose: str = "exploration"
    source: str = "python"

    def __post_init__(self) -> None:
        if self.purpose not in PURPOSES:
            raise ValueError(f"purpose must be one of {', '.join(PURPOSES)}, got {self.purpose!r}")


def entry_rho(ledger: dict) -> float | None:
    """ρ of a synthesis as zCDP, from its ledger: the ledger's own ``rho`` when it states one, else the sum over
    its steps of ρ × repeats for a zCDP step and ε²/2 × repeats for a pure ε step (Bun and Steinke 2016,
    Proposition 1.4); None when a step is (ε, δ) without a ρ, or the run spent no ε that is accounted.

    >>> entry_rho({"epsilon_total": 1.0, "steps": [{"epsilon": 0.5, "repeats": 2}]})
    0.25
    """
    if ledger.get("epsilon_total") is None:
        return None
    if ledger.get("rho") is not None:
        return float(ledger["rho"])
    parts = []
    for step in ledger.get("steps", []):
        repeats = step.get("repeats", 1)
        if step.get("rho") is not None:
            parts.append(step["rho"] * repeats)
        elif step.get("delta", 0.0) == 0:
            parts.append(step["epsilon"] ** 2 / 2 * repeats)
        else:
            return None
    return math.fsum(parts)


@dataclass(frozen=True)
class Entry:
    """One computation on a dataset, as the store records it (the :class:`Use` says whose and why).

    ``is_dp`` has no default: a DP entry left unmarked would drop out of the totals, a look without a
    guarantee marked DP would pass for one.
    """

    method: str
    epsilon: float | None
    is_dp: bool
    delta: float = 0.0
    rho: float | None = None
    seeded: bool = False
    rows: int | None = None
    holdout: float = 0.0

    @classmethod
    def of_ledger(cls, ledger: dict, *, rows: int | None) -> "Entry":
        """The entry of a synthesis, from its ledger; ``rows``: how many rows of the data it read.

        A private estimate of the schema (the ledger's ``schema_estimate``, its steps named "schema
        estimate: …") has an entry of its own, written when it was made
        (:func:`dpsynth_core.schema_estimate.estimate_and_record`): its share is left out here, so the store
        counts it once however many syntheses use the schema.
        """
        holdout = ledger.get("holdout") or {}
        estimate = ledger.get("schema_estimate") or {}
        if estimate:
            steps = [s for s in ledger.get("steps", []) if not str(s.get("target", "")).startswith("schema estimate: ")]
            spent = ledger["epsilon_total"]
            ledger = {**ledger, "steps": steps, "delta": max(float(ledger.get("delta", 0.0)) - estimate["delta"], 0.0),
                      "epsilon_total": None if spent is None else max(spent - estimate["epsilon"], 0.0)}
        return cls(method=ledger["method"], epsilon=ledger["epsilon_total"], delta=float(ledger.get("delta", 0.0)),
                   rho=entry_rho(ledger), seeded=ledger.get("seed") is not None, is_dp=bool(ledger["is_dp"]),
                   rows=None if rows is None else int(rows),
                   holdout=float(holdout.get("share", 0.0)) if holdout.get("taken") else 0.0)


@dataclass(frozen=True)
class Cap:
    """The most a steward allows to be spent on one dataset, by the totals' reported ε and by Σδ."""

    epsilon: float
    delta: float = 0.0


@dataclass(frozen=True)
class Totals:
    """What has been spent on one dataset (module docstring): the DP entries composed, the looks counted apart."""

    dataset: str | None
    dp_computations: int = 0
    #: DP computations by purpose, in the order of :data:`PURPOSES`
    by_purpose: dict = field(default_factory=dict)
    epsilon: float = 0.0          # basic composition: Σε
    delta: float = 0.0            # Σδ
    rho: float | None = 0.0       # Σρ, None when a DP entry has none
    zcdp_epsilon: float | None = None  # Σρ converted once at δ = Σδ (None: Σδ = 0, or ρ unknown)
    looks: int = 0                # entries without a guarantee
    seeded_looks: int = 0         # of which with a fixed seed
    cap: Cap | None = None

    @property
    def composition(self) -> str:
        """"zCDP" when the converted ρ gives the smaller ε, else "basic"."""
        return "zCDP" if self.zcdp_epsilon is not None and self.zcdp_epsilon < self.epsilon else "basic"

    @property
    def reported_epsilon(self) -> float:
        """The ε the totals report: the smaller of Σε and the zCDP total (both hold at δ = Σδ)."""
        return self.zcdp_epsilon if self.composition == "zCDP" else self.epsilon

    def how(self) -> str:
        """Which composition gives the reported total, in words."""
        if self.composition == "zCDP":
            return (f"zCDP: ρ = {self.rho:.4g} in all, converted once at δ = {self.delta:.3g}; basic composition "
                    f"would give ε = {_num(self.epsilon)}")
        return "basic composition: the ε and the δ add up"

    def lines(self) -> list[str]:
        """The totals in a few short lines (the app's sidebar, ``dpsynth ledger``)."""
        noun = "DP computation" if self.dp_computations == 1 else "DP computations"
        out = [f"{self.dp_computations} {noun}: ε = {_num(self.reported_epsilon)}, δ = {self.delta:.3g} in all",
               f"({self.how()})" if self.dp_computations else "(nothing spent yet)"]
        look = "look" if self.looks == 1 else "looks"
        out.append(f"{self.looks} {look} without a guarantee" + (f" ({self.seeded_looks} with a fixed seed)"
                                                                 if self.seeded_looks else ""))
        if self.cap is not None:
            left = max(0.0, self.cap.epsilon - self.reported_epsilon)
            out.append(f"cap: ε = {_num(self.cap.epsilon)}, δ = {self.cap.delta:.3g} (ε = {_num(left)} left)")
        return out

    def to_dict(self) -> dict:
        """JSON-ready, as the public ledger and ``dpsynth ledger --json`` write it (never the keyed fingerprint)."""
        return {"dp_computations": self.dp_computations, "dp_computations_by_purpose": dict(self.by_purpose),
                "epsilon": self.reported_epsilon, "delta": self.delta, "composition": self.composition,
                "how": self.how(), "epsilon_basic": self.epsilon, "rho": self.rho,
                "epsilon_zcdp": self.zcdp_epsilon, "looks_without_guarantee": self.looks,
                "looks_with_fixed_seed": self.seeded_looks,
                "cap": None if self.cap is None else {"epsilon": self.cap.epsilon, "delta": self.cap.delta}}


_PLURAL = {"exploration": "explorations", "sweep point": "sweep points", "schema estimate": "schema estimates",
           "release": "releases", "audit": "audits"}


def purposes_text(by_purpose: dict) -> str:
    """Counts by purpose in words.

    >>> purposes_text({"exploration": 3, "release": 1})
    '3 explorations, 1 release'
    """
    return ", ".join(f"{c} {p if c == 1 else _PLURAL[p]}" for p, c in by_purpose.items())


def _num(value: float) -> str:
    """ε as people write it: 16, not 16.000000000000004."""
    return f"{float(f'{value:.12g}'):g}" if value < 1e6 else f"{value:.4g}"


def compose(entries: list[dict], *, dataset: str | None = None, cap: Cap | None = None) -> Totals:
    """The totals of ``entries`` (dicts with ``purpose``, ``epsilon``, ``delta``, ``rho``, ``is_dp``, ``seeded``).

    >>> t = compose([{"purpose": "release", "epsilon": 1.0, "delta": 0.0, "rho": 0.5, "is_dp": True,
    ...               "seeded": False}, {"purpose": "exploration", "epsilon": 2.0, "delta": 0.0, "rho": 2.0,
    ...               "is_dp": False, "seeded": True}])
    >>> (t.dp_computations, t.epsilon, t.looks, t.seeded_looks, t.composition)
    (1, 1.0, 1, 1, 'basic')
    """
    dp = [e for e in entries if e["is_dp"]]
    looks = [e for e in entries if not e["is_dp"]]
    epsilon = math.fsum(e["epsilon"] or 0.0 for e in dp)
    delta = math.fsum(e["delta"] for e in dp)
    rho = None if any(e["rho"] is None for e in dp) else math.fsum(e["rho"] for e in dp)
    zcdp = zcdp_epsilon(rho, delta) if rho is not None and 0 < delta < 1 else None
    counts = {p: sum(e["purpose"] == p for e in dp) for p in PURPOSES}
    return Totals(dataset=dataset, dp_computations=len(dp), by_purpose={p: c for p, c in counts.items() if c},
                  epsilon=epsilon, delta=delta, rho=rho, zcdp_epsilon=zcdp, looks=len(looks),
                  seeded_looks=sum(bool(e["seeded"]) for e in looks), cap=cap)


def cap_refusal(totals: Totals, entry: Entry, *, meanwhile: bool = False) -> str | None:
    """One sentence when the DP ``entry`` would take the dataset past its cap, else None (``meanwhile``: the
    check as the entry is written, after other runs spent while it ran)."""
    if totals.cap is None or not entry.is_dp:
        return None
    new = {"purpose": "release", "epsilon": entry.epsilon, "delta": entry.delta, "rho": entry.rho, "is_dp": True,
           "seeded": entry.seeded}
    after = compose([*_as_entries(totals), new], cap=totals.cap)
    cap = totals.cap
    if after.reported_epsilon <= cap.epsilon * (1 + CAP_SLACK) and after.delta <= cap.delta * (1 + CAP_SLACK):
        return None
    when = "Refused: while this run computed, other runs spent, and it" if meanwhile else \
        "Refused before reading the data: this run"
    return (f"{when} would bring what is spent on {totals.dataset} to "
            f"ε = {_num(after.reported_epsilon)}, δ = {after.delta:.3g}, past its cap of ε = {_num(cap.epsilon)}, "
            f"δ = {cap.delta:.3g} (ε = {_num(totals.reported_epsilon)}, δ = {totals.delta:.3g} spent so far); "
            "lower ε or δ, or raise the cap if the data's owners allow it.")


def _as_entries(totals: Totals) -> list[dict]:
    """Totals standing in for the entries they sum (enough to compose one more entry with them)."""
    if not totals.dp_computations:
        return []
    return [{"purpose": "release", "epsilon": totals.epsilon, "delta": totals.delta, "rho": totals.rho, "is_dp": True,
             "seeded": False}]


@contextmanager
def _transaction(con):
    """One write transaction, the write lock taken first: committed when the block ends, rolled back if it raises."""
    con.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


class LedgerStore:
    """The account of every computation on each dataset (module docstring), in the SQLite file ``path``.

    Each call opens its own connection, so one store object may serve the app's sessions (threads)
    and the file may be shared by processes. The file, its folder and the secret key are created on
    first use (once per process and file).

    Parameters
    ----------
    path : str or Path, optional
        The database file; default :func:`default_path` (``$DPSYNTH_LEDGER`` or the user's data directory).
    """

    def __init__(self, path: str | os.PathLike | None = None):
        self.path = Path(path).expanduser() if path is not None else default_path()

    def __repr__(self) -> str:
        return f"LedgerStore({str(self.path)!r})"

    # -- connections ------------------------------------------------------------

    @contextmanager
    def _connect(self):
        try:
            with _PREPARING:
                where = self.path.absolute()
                if where not in _PREPARED or not where.exists():
                    self._create()
                    _PREPARED.add(where)
            con = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        except (OSError, sqlite3.Error) as err:
            raise self._error("opened", err) from None
        try:
            con.execute("PRAGMA synchronous=FULL")
            con.execute("PRAGMA foreign_keys=ON")
            yield con
        except sqlite3.Error as err:
            raise self._error("used", err) from None
        finally:
            con.close()

    def _error(self, verb: str, err: BaseException) -> LedgerError:
        return LedgerError(f"The privacy ledger {self.path} could not be {verb} ({err}); nothing was computed or "
                           f"shown without its entry: make that file writable, or set {ENV} to another file.")

    def _create(self) -> None:
        """The folder (owner only), the file (owner only), WAL mode, the tables and the secret key, once."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.close(os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600))  # before SQLite makes it with the umask's mode
        con = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        try:
            if con.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                con.execute("PRAGMA journal_mode=WAL")  # kept in the file: every later connection uses it
            con.execute("BEGIN IMMEDIATE")
            for statement in filter(str.strip, _TABLES.split(";")):
                con.execute(statement)
            # Two processes may create the store at once: the first key written is the key.
            con.execute("INSERT OR IGNORE INTO meta VALUES ('key', ?)", (secrets.token_hex(32),))
            con.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (SCHEMA_VERSION,))
            con.execute("COMMIT")
        finally:
            con.close()

    def _key(self, con, fingerprint: str) -> str:
        """The keyed fingerprint of a dataset (HMAC-SHA-256 under the store's secret key)."""
        secret = bytes.fromhex(con.execute("SELECT value FROM meta WHERE name = 'key'").fetchone()[0])
        return hmac.new(secret, fingerprint.encode("utf-8"), hashlib.sha256).hexdigest()

    def _dataset(self, con, fingerprint: str) -> tuple | None:
        """(id, name, cap ε, cap δ) of the dataset with this content, or None if the store has never seen it."""
        return con.execute("SELECT id, name, cap_epsilon, cap_delta FROM datasets WHERE key = ?",
                           (self._key(con, fingerprint),)).fetchone()

    def _dataset_id(self, con, fingerprint: str, name: str) -> int:
        """The dataset's number, made on first sight; its name follows the steward's latest."""
        key = self._key(con, fingerprint)
        con.execute("INSERT INTO datasets (key, name) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET name = ?",
                    (key, name, name))
        return con.execute("SELECT id FROM datasets WHERE key = ?", (key,)).fetchone()[0]

    # -- writing ----------------------------------------------------------------

    def record(self, use: Use, entry: Entry) -> int:
        """Write one entry in its own transaction (on disk when this returns); its number.

        A DP entry that would take the dataset past its cap (another process spent meanwhile) is not
        written: :class:`dpsynth_core.errors.BudgetExceeded` is raised and the caller shows nothing.
        """
        with self._connect() as con, _transaction(con):  # the write lock first: the cap's check and the entry
            return self._insert(con, self._dataset_id(con, use.fingerprint, use.dataset), use, entry)

    def _insert(self, con, dataset: int, use: Use, entry: Entry) -> int:
        """Insert one entry inside the caller's transaction, after the cap's check for a DP entry."""
        if entry.is_dp:
            refusal = cap_refusal(self._totals(con, dataset), entry, meanwhile=True)
            if refusal:
                raise BudgetExceeded(refusal)
        time = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")
        cur = con.execute(
            "INSERT INTO entries (time, dataset, name, purpose, method, epsilon, delta, rho, seeded, is_dp, "
            "rows, holdout, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (time, dataset, use.dataset, use.purpose, entry.method, entry.epsilon, entry.delta, entry.rho,
             int(entry.seeded), int(entry.is_dp), entry.rows, entry.holdout, use.source))
        return cur.lastrowid

    # -- R-U sweeps: finished points kept, so a sweep cut short resumes where it stopped ----------------

    def begin_sweep(self, use: Use, settings: str, total: int) -> tuple[int, dict[int, dict]]:
        """The sweep of these ``settings`` (a text that fixes every point: methods, grid, seeds, measures) on
        this dataset, made on first sight: its number and the scores of the points it has finished, by job.

        A point's scores are the figures shown for it (utility and risk measures of the synthesis, never a
        row of the data): confidential metadata like the entries.
        """
        with self._connect() as con, _transaction(con):
            dataset = self._dataset_id(con, use.fingerprint, use.dataset)
            started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
            con.execute("INSERT INTO sweeps (dataset, settings, total, started) VALUES (?, ?, ?, ?) "
                        "ON CONFLICT(dataset, settings) DO UPDATE SET finished = NULL", (dataset, settings, total, started))
            sweep = con.execute("SELECT id FROM sweeps WHERE dataset = ? AND settings = ?",
                                (dataset, settings)).fetchone()[0]
            done = con.execute("SELECT job, scores FROM sweep_points WHERE sweep = ?", (sweep,)).fetchall()
        return sweep, {job: json.loads(scores) for job, scores in done}

    def record_point(self, use: Use, entry: Entry | None, sweep: int, job: int, scores: dict) -> None:
        """A sweep point's entry (None for a point that is no synthesis: the original data) and its scores, in
        one transaction: a point counted is a point kept, and the other way round."""
        with self._connect() as con, _transaction(con):
            if entry is not None:
                self._insert(con, self._dataset_id(con, use.fingerprint, use.dataset), use, entry)
            con.execute("INSERT OR REPLACE INTO sweep_points VALUES (?, ?, ?)", (sweep, job, json.dumps(scores)))

    def finish_sweep(self, sweep: int) -> None:
        """Mark a sweep finished (every point done): it is no longer reported as cut short."""
        finished = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        with self._connect() as con, _transaction(con):
            con.execute("UPDATE sweeps SET finished = ? WHERE id = ?", (finished, sweep))

    def unfinished_sweeps(self, fingerprint: str) -> list[dict]:
        """The sweeps on the dataset with this content that stopped before their last point (a restart, a
        cancel, or one still running elsewhere), newest first: ``done``, ``total`` and ``started`` (UTC)."""
        with self._connect() as con:
            found = self._dataset(con, fingerprint)
            if found is None:
                return []
            rows = con.execute("SELECT s.started, s.total, COUNT(p.job) FROM sweeps s LEFT JOIN sweep_points p "
                               "ON p.sweep = s.id WHERE s.dataset = ? AND s.finished IS NULL GROUP BY s.id "
                               "ORDER BY s.id DESC", (found[0],)).fetchall()
        return [{"started": started, "total": total, "done": done} for started, total, done in rows]

    def set_cap(self, fingerprint: str, name: str, cap: Cap | None) -> None:
        """Set (or, with None, remove) the cap of the dataset with this content."""
        if cap is not None:
            if not (cap.epsilon > 0 and math.isfinite(cap.epsilon)):
                raise ValueError(f"A cap's ε must be a positive number, got {cap.epsilon!r}.")
            if not 0 <= cap.delta < 1:
                raise ValueError(f"A cap's δ must be in [0, 1), got {cap.delta!r}.")
        with self._connect() as con, _transaction(con):
            dataset = self._dataset_id(con, fingerprint, name)
            con.execute("UPDATE datasets SET cap_epsilon = ?, cap_delta = ? WHERE id = ?",
                        (None if cap is None else float(cap.epsilon), None if cap is None else float(cap.delta),
                         dataset))

    # -- reading ----------------------------------------------------------------

    def _rows(self, con, dataset: int | None) -> list[dict]:
        sql = ("SELECT e.id, e.time, e.dataset, d.name AS dataset_name, e.name, e.purpose, e.method, e.epsilon, "
               "e.delta, e.rho, e.seeded, e.is_dp, e.rows, e.holdout, e.source FROM entries e "
               "JOIN datasets d ON d.id = e.dataset")
        cur = con.execute(sql + (" WHERE e.dataset = ? ORDER BY e.id" if dataset is not None else " ORDER BY e.id"),
                          () if dataset is None else (dataset,))
        names = [c[0] for c in cur.description]
        out = []
        for row in cur.fetchall():
            item = dict(zip(names, row))
            item["seeded"], item["is_dp"] = bool(item["seeded"]), bool(item["is_dp"])
            out.append(item)
        return out

    def _totals(self, con, dataset: int) -> Totals:
        name, cap_e, cap_d = con.execute("SELECT name, cap_epsilon, cap_delta FROM datasets WHERE id = ?",
                                         (dataset,)).fetchone()
        # Only the columns the totals need: the sidebar reads them on every run of a page.
        keys = ("purpose", "epsilon", "delta", "rho", "is_dp", "seeded")
        rows = con.execute(f"SELECT {', '.join(keys)} FROM entries WHERE dataset = ?", (dataset,)).fetchall()
        return compose([dict(zip(keys, row)) for row in rows], dataset=name,
                       cap=None if cap_e is None else Cap(cap_e, cap_d or 0.0))

    def entries(self, fingerprint: str | None = None) -> list[dict]:
        """Every entry, oldest first, or those of the dataset with this content; each a dict whose
        ``dataset`` is the store's number for the dataset (never its fingerprint)."""
        with self._connect() as con:
            if fingerprint is None:
                return self._rows(con, None)
            found = self._dataset(con, fingerprint)
            return [] if found is None else self._rows(con, found[0])

    def totals(self, fingerprint: str, name: str | None = None) -> Totals:
        """What has been spent on the dataset with this content (nothing yet: zeros, named ``name``)."""
        with self._connect() as con:
            found = self._dataset(con, fingerprint)
            return Totals(dataset=name) if found is None else self._totals(con, found[0])

    def all_totals(self) -> dict[int, Totals]:
        """The totals of every dataset the store knows, by its number."""
        with self._connect() as con:
            return {d: self._totals(con, d) for (d,) in con.execute("SELECT id FROM datasets ORDER BY id")}

    def refusal(self, fingerprint: str, *, epsilon: float, delta: float, rho: float | None) -> str | None:
        """Before a DP run reads the data: one sentence if spending (``epsilon``, ``delta``) would pass the
        dataset's cap, else None. ``rho`` bounds the run's ρ from above (None: not known); bounds make the
        check strict, so a run it lets through passes the check made when its entry is written, unless
        another process spends meanwhile."""
        totals = self.totals(fingerprint)
        if totals.cap is None:
            return None
        return cap_refusal(totals, Entry(method="", epsilon=epsilon, delta=delta, rho=rho, is_dp=True))


# -- the ledger as tables (``dpsynth ledger`` and the app's Ledger page) ----------------

ENTRY_COLUMNS = ("entry", "time (UTC)", "dataset", "name", "purpose", "method", "epsilon", "delta", "rho",
                 "guarantee", "rows used", "held out", "source")
TOTAL_COLUMNS = ("dataset", "name", "DP computations", "by purpose", "epsilon", "delta", "composition",
                 "epsilon (basic)", "rho", "epsilon (zCDP)", "looks without a guarantee", "with a fixed seed",
                 "cap epsilon", "cap delta")


def _guarantee(entry: dict) -> str:
    if entry["is_dp"]:
        return "DP"
    return "none (fixed seed)" if entry["seeded"] else "none"


def entries_table(entries: list[dict]):
    """The entries as a table, oldest first (the dataset is the store's number for it, never its fingerprint)."""
    import pandas as pd

    rows = [(e["id"], e["time"][:19].replace("T", " "), e["dataset"], e["name"], e["purpose"], e["method"],
             e["epsilon"], e["delta"], e["rho"], _guarantee(e), e["rows"], e["holdout"], e["source"])
            for e in entries]
    return pd.DataFrame(rows, columns=list(ENTRY_COLUMNS))


def totals_table(totals: dict[int, Totals]):
    """One row of totals per dataset, by the store's number for it."""
    import pandas as pd

    rows = [(d, t.dataset, t.dp_computations, purposes_text(t.by_purpose), t.reported_epsilon, t.delta,
             t.composition, t.epsilon, t.rho, t.zcdp_epsilon, t.looks, t.seeded_looks,
             None if t.cap is None else t.cap.epsilon, None if t.cap is None else t.cap.delta)
            for d, t in totals.items()]
    return pd.DataFrame(rows, columns=list(TOTAL_COLUMNS))


def _read(store: LedgerStore, fingerprint: str | None) -> tuple[list[dict], dict[int, Totals]]:
    """The entries and the totals by dataset number: of every dataset, or of the one with this content."""
    entries = store.entries(fingerprint)
    if fingerprint is None:
        return entries, store.all_totals()
    return entries, ({entries[0]["dataset"]: store.totals(fingerprint)} if entries else {})


def ledger_view(store: LedgerStore, fingerprint: str | None = None):
    """(entries, totals) tables of every dataset, or of the dataset with this content only."""
    entries, totals = _read(store, fingerprint)
    return entries_table(entries), totals_table(totals)


def ledger_csv(store: LedgerStore, fingerprint: str | None = None) -> bytes:
    """The entries, then one row of totals per dataset, as one CSV (column ``row``: "entry" or "total")."""
    import pandas as pd

    entries, totals = ledger_view(store, fingerprint)
    table = pd.concat([entries.assign(row="entry"), totals.assign(row="total")], ignore_index=True)
    table = table[["row", *dict.fromkeys([*ENTRY_COLUMNS, *TOTAL_COLUMNS])]]
    return table.to_csv(index=False).encode("utf-8")


def ledger_json(store: LedgerStore, fingerprint: str | None = None) -> dict:
    """Every dataset's totals and entries, JSON-ready (the store's path, never a fingerprint)."""
    entries, totals = _read(store, fingerprint)
    keep = ("id", "time", "name", "purpose", "method", "epsilon", "delta", "rho", "seeded", "is_dp", "rows",
            "holdout", "source")
    return {"store": str(store.path), "datasets": [
        {"dataset": d, "name": t.dataset, "totals": t.to_dict(),
         "entries": [{k: e[k] for k in keep} for e in entries if e["dataset"] == d]}
        for d, t in totals.items()]}
