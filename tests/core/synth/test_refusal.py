"""No refusal depends on the data (issue 28, point 3): a DP method decides to refuse from the schema, the
declared n and its options only, and its sentence quotes no count of the data.

A refusal is an output: one that changed between n and n + 1 confidential rows would tell whether a
person is in the data (dp_seqreg refused at 139,822 rows, released at 139,821, and printed the count).
Every check that bounds memory goes through ``constraints.over_memory_budget``; the test records the
size each one compares, runs every DP method on n and n + 1 rows (n declared and not), with the real
memory budget and with one so small (10 kB) that the checks refuse, and asks for the same outcome, the
same sizes compared, and no count in any sentence.
"""

from __future__ import annotations

from collections import OrderedDict

import pytest

import dpsynth_core as core
from dpsynth_core import constraints
from dpsynth_core.errors import MethodRefused
from dpsynth_core.synth import SYNTHESIZERS, base, synthesize
from dpsynth_core.synth.base import measure_cache

DP_METHODS = [m for m, s in SYNTHESIZERS.items() if s.is_dp]
ROWS = 291  # and 292: counts whose digits appear in no schema, option or default of the bundled penguins
TINY = 10_000  # bytes: PMI's models refuse; dp_seqreg's designs go in pieces of a few dozen rows


class _Proceeded(Exception):
    """Raised in place of generate: the run got past every refusal (nothing after it can refuse)."""


@pytest.fixture(scope="module")
def penguins():
    return core.load_bundled("penguins")


def _outcome(method, df, schema, n, sizes):
    sizes.clear()
    with measure_cache(OrderedDict()):  # measure anew: a refusal inside it must run for each size
        try:
            synthesize(df, method, epsilon=1.0, schema=schema, n=n, seed=None)
        except MethodRefused as e:
            return "refused", str(e), tuple(sizes)
        except _Proceeded:
            return "proceeded", "", tuple(sizes)
    raise AssertionError("generate was not reached and nothing refused")


@pytest.mark.parametrize("method", DP_METHODS)
@pytest.mark.parametrize("declared", [None, 50])
@pytest.mark.parametrize("budget", ["real", "tiny"])
def test_refusal_is_the_same_for_n_and_n_plus_one_rows_and_quotes_no_count(method, declared, budget, penguins,
                                                                            monkeypatch):
    df, schema = penguins
    sizes = []
    real = constraints.over_memory_budget
    monkeypatch.setattr(constraints, "over_memory_budget", lambda what, need, remedy: sizes.append(need) or real(
        what, need, remedy))
    if budget == "tiny":
        monkeypatch.setattr(constraints, "MEMORY_BUDGET_BYTES", TINY)
    monkeypatch.setattr(type(SYNTHESIZERS[method]), "generate", lambda *a, **k: (_ for _ in ()).throw(_Proceeded()))
    small, large = (_outcome(method, df.head(rows), schema, declared, sizes) for rows in (ROWS, ROWS + 1))
    assert small == large
    for rows in (ROWS, ROWS + 1):
        assert str(rows) not in small[1] and f"{rows:,}" not in small[1]


@pytest.mark.parametrize("method", DP_METHODS)
def test_measurement_alone_refuses_from_public_facts_only(method, penguins, monkeypatch):
    # The sweep measures once before its points (no synthetic n is known then): the same rule.
    df, schema = penguins
    monkeypatch.setattr(constraints, "MEMORY_BUDGET_BYTES", TINY)
    said = []
    for rows in (ROWS, ROWS + 1):
        with measure_cache(OrderedDict()):
            try:
                base.measurement(df.head(rows), method, schema=schema)
                said.append("measured")
            except MethodRefused as e:
                said.append(str(e))
    assert said[0] == said[1] and str(ROWS) not in said[0]


def test_dp_seqreg_builds_its_designs_in_pieces_instead_of_refusing_on_the_row_count(penguins, monkeypatch):
    # With room for 7 rows of its widest design at a time, dp_seqreg measures 292 rows in pieces and gets
    # the same sufficient statistics (up to float summation order) as in one piece.
    df, schema = penguins
    synth = SYNTHESIZERS["dp_seqreg"]
    whole = synth.measure(df.head(ROWS + 1), schema, schema.used, **synth.defaults)
    widest = max(1 + sum(len(schema[c].categories) if schema[c].kind == "categorical" else 2 for c in schema.used), 1)
    monkeypatch.setattr(constraints, "MEMORY_BUDGET_BYTES", 3 * 8 * widest * 7)
    pieces = synth.measure(df.head(ROWS + 1), schema, schema.used, **synth.defaults)
    for a, b in zip(whole[2], pieces[2]):
        if hasattr(a, "moments"):
            assert a.moments == pytest.approx(b.moments, rel=1e-12, abs=1e-9)
