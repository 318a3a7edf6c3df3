"""Tests for dpsynth_core.io: clean files load, every malformed one is refused clearly."""

import csv
import doctest
import io

import numpy as np
import pandas as pd
import pytest

from dpsynth_core import constraints
from dpsynth_core import io as dpio
from dpsynth_core.errors import DataError
from dpsynth_core.io import load_csv, to_csv_bytes
from tests.conftest import DATA

SECRET = "s3cr3t-value"  # planted in malformed files: no message may repeat it
GARBAGE = np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8).tobytes()
WIDE = constraints.MAX_COLUMNS + 1

# (id, bytes, a word the message must contain). Each is a way a real upload goes wrong.
MALFORMED = [
    ("empty", b"", "empty"),
    ("whitespace_only", b"  \n\t\r\n  ", "empty"),
    ("bom_only", b"\xef\xbb\xbf", "empty"),
    ("header_only", b"a,b,c\n", "no rows"),
    ("header_only_blank_lines", b"a,b\n\n   \n", "no rows"),
    ("latin1", b"name,city\n" + f"{SECRET},caf".encode() + b"\xe9\n", "UTF-8"),
    ("nul_bytes", b"a,b\n1,\x002\n", "binary"),
    ("binary_garbage", GARBAGE, "binary"),
    ("utf16", "a,b\n1,2\n".encode("utf-16"), "UTF-16"),
    ("xlsx", b"PK\x03\x04\x14\x00\x06\x00" + bytes(64), "Excel"),
    ("xls", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(64), "Excel"),
    ("pdf", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "PDF"),
    ("gzip", b"\x1f\x8b\x08\x00" + bytes(16), "gzip"),
    ("more_fields_first_row", f"a,b\n1,{SECRET},3\n4,5\n".encode(), "Line 2 has 3 fields"),
    ("more_fields_later_row", f"a,b\n1,2\n3,4\n5,{SECRET},6\n".encode(), "Line 4 has 3 fields"),
    ("fewer_fields", f"a,b,c\n1,2,3\n{SECRET},5\n".encode(), "Line 3 has 2 fields"),
    ("single_column", b"value\n1\n2\n", "at least two columns"),
    ("duplicate_names", b"a,b,a\n1,2,3\n", "'a'"),
    ("duplicate_after_strip", b"a, a\n1,2\n", "more than once"),
    ("blank_name", b"a,,c\n1,2,3\n", "Column 2"),
    ("trailing_delimiter", b"a,b,\n1,2,\n", "Column 3"),
    ("unclosed_quote", f'a,b\n1,2\n3,"{SECRET}\n4,5\n'.encode(), "line 3"),
    ("stray_quote", f'a,b\n1,"{SECRET}"x\n'.encode(), "line 2"),
    ("too_many_columns", f"{','.join(f'c{i}' for i in range(WIDE))}\n{','.join('1' * WIDE)}\n"
     .encode(), f"{WIDE} columns"),
]


def _no_chained_cause(exc):
    # A chained exception could quote the file's bytes in a logged traceback.
    return exc.__cause__ is None and (exc.__context__ is None or exc.__suppress_context__)


@pytest.mark.parametrize("name, data, word", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_input_raises_one_clear_sentence(name, data, word):
    with pytest.raises(Exception) as info:
        load_csv(io.BytesIO(data))
    assert type(info.value) is DataError, f"{name}: {type(info.value).__name__} escaped"
    message = str(info.value)
    assert word.lower() in message.lower()
    assert message[0].isupper() and message.endswith(".")
    assert "\n" not in message and ". " not in message, "one sentence"
    assert "Traceback" not in message and "Error" not in message
    assert SECRET not in message
    assert _no_chained_cause(info.value)


@pytest.mark.parametrize("bad", [None, 42, b"a,b\n1,2\n", io.StringIO("a,b\n1,2\n"), object()],
                         ids=["none", "int", "raw_bytes", "text_stream", "object"])
def test_wrong_kind_of_input_raises_data_error(bad):
    with pytest.raises(DataError):
        load_csv(bad)


def test_missing_path_and_directory_raise_data_error(tmp_path):
    with pytest.raises(DataError, match="could not be opened"):
        load_csv(tmp_path / "absent.csv")
    with pytest.raises(DataError, match="could not be opened"):
        load_csv(tmp_path)


def test_closed_file_raises_data_error():
    buffer = io.BytesIO(b"a,b\n1,2\n")
    buffer.close()
    with pytest.raises(DataError):
        load_csv(buffer)


def test_unexpected_failure_is_wrapped(monkeypatch):
    def explode(*args, **kwargs):
        raise RuntimeError(SECRET)

    monkeypatch.setattr(dpio.pd, "read_csv", explode)
    with pytest.raises(DataError, match="could not be read as a table") as info:
        load_csv(io.BytesIO(b"a,b\n1,2\n"))
    assert SECRET not in str(info.value)
    assert _no_chained_cause(info.value)


def test_file_over_size_limit_is_refused_from_stream_and_path(tmp_path):
    limit = constraints.MAX_UPLOAD_BYTES
    with pytest.raises(DataError, match=f"{constraints.MAX_UPLOAD_MB} MB limit \\(50,000,000 bytes\\)"):
        load_csv(io.BytesIO(b"a,b\n" + b"1,2\n" * (limit // 4)))
    path = tmp_path / "big.csv"
    with open(path, "wb") as fh:  # sparse: the size is there without writing it
        fh.truncate(limit + 1)
    with pytest.raises(DataError, match="MB limit"):
        load_csv(path)


def test_file_at_size_limit_is_read(monkeypatch):
    data = b"a,b\n1,2\n"
    monkeypatch.setattr(constraints, "MAX_UPLOAD_BYTES", len(data))
    assert load_csv(io.BytesIO(data)).shape == (1, 2)
    with pytest.raises(DataError, match="MB limit"):
        load_csv(io.BytesIO(data + b"3,4\n"))


def test_too_many_rows(monkeypatch):
    monkeypatch.setattr(constraints, "MAX_ROWS", 3)
    assert load_csv(io.BytesIO(b"a,b\n1,2\n3,4\n5,6\n")).shape == (3, 2)
    with pytest.raises(DataError, match="more than 3 rows"):
        load_csv(io.BytesIO(b"a,b\n1,2\n3,4\n5,6\n7,8\n"))


def test_columns_at_limit_load():
    n = constraints.MAX_COLUMNS
    data = ",".join(f"c{i}" for i in range(n)) + "\n" + ",".join(["1"] * n) + "\n"
    assert load_csv(io.BytesIO(data.encode())).shape == (1, n)


@pytest.mark.parametrize("name, rows, cols", [("penguins.csv", 344, 8),
                                              ("diamonds.csv", 53_940, 10), ("randhie.csv", 20_190, 10)])
def test_bundled_files_load_from_path_and_stream(name, rows, cols):
    path = DATA / name
    expected = pd.read_csv(path)
    for src in (path, str(path), io.BytesIO(path.read_bytes())):
        df = load_csv(src)
        assert df.shape == (rows, cols)
        pd.testing.assert_frame_equal(df, expected)


def test_penguins_keeps_missing_values_and_text_dtype():
    df = load_csv(DATA / "penguins.csv")
    assert df["sex"].isna().sum() == 11
    assert df["species"].dtype == "str"
    assert df["year"].dtype == np.int64


def test_stream_is_read_from_start_and_left_open():
    buffer = io.BytesIO(b"a,b\n1,2\n3,4\n")
    buffer.read(5)
    assert load_csv(buffer).shape == (2, 2)
    assert not buffer.closed
    assert load_csv(buffer).shape == (2, 2)  # a second read sees the same data


def test_bom_is_accepted_silently():
    df = load_csv(io.BytesIO(b"\xef\xbb\xbfname,age\nAl,3\n"))
    assert list(df.columns) == ["name", "age"]


@pytest.mark.parametrize("data", [b"a;b;c\n1;2,5;x\n3;4;y\n", b"a\tb\tc\n1\t2,5\tx\n3\t4\ty\n"],
                         ids=["semicolon", "tab"])
def test_semicolon_and_tab_files_load(data):
    df = load_csv(io.BytesIO(data))
    assert list(df.columns) == ["a", "b", "c"]
    assert df["b"].tolist() == ["2,5", "4"]
    assert df["a"].tolist() == [1, 3]


def test_semicolon_file_reports_bad_line_with_its_delimiter():
    with pytest.raises(DataError, match="Line 3 has 4 fields.*semicolon"):
        load_csv(io.BytesIO(b"a;b;c\n1;2;3\n1;2;3;4\n"))


# The csv module's limit on one value: 131,072 characters (csv.field_size_limit()'s default, which nothing
# in the app changes).
FIELD_LIMIT = 131_072
LONG_VALUES = [
    # (id, file, line, the value's length counted by hand)
    ("quoted_49_9_MB", b'a,b\n1,"' + b"x" * 49_900_000 + b'"\n2,y\n', 2, 49_900_000),
    ("unquoted_2_MB", b"a,b\n1," + b"x" * 2_000_000 + b"\n2,y\n", 2, 2_000_000),
    # two quotes inside quotes are one character: 50,000 × 'ab"'
    ("quoted_doubled_quotes", b'a,b\n1,"' + b'ab""' * 50_000 + b'",x\n', 2, 150_000),
    ("third_column_after_crlf", b'a,b,c\r\n1,2,3\r\n4,"' + b"y" * 200_000 + b'",5\r\n', 3, 200_000),
]


@pytest.mark.parametrize("name, data, line, length", LONG_VALUES, ids=[v[0] for v in LONG_VALUES])
def test_a_value_over_the_field_limit_is_measured_not_blamed_on_a_quote(name, data, line, length):
    assert csv.field_size_limit() == FIELD_LIMIT
    with pytest.raises(DataError) as info:
        load_csv(io.BytesIO(data))
    message = str(info.value)
    assert message.startswith(f"The row starting on line {line} has a value of {length:,} characters, over the "
                              f"limit of {FIELD_LIMIT:,} characters")
    assert "quote" not in message and ". " not in message and message.endswith(".")


UNCLOSED = [
    # the quote never closes: the value is the rest of the file, "x\n" 100,000 times and "2,y\n"
    ("to_the_end", b'a,b\n1,"' + b"x\n" * 100_000 + b"2,y\n", 2 * 100_000 + 4),
    # the next quote opens a later value: "oops\n", 50,000 × "3,y\n", then "4,"
    ("into_a_later_value", b'a,b\n1,"oops\n' + b"3,y\n" * 50_000 + b'4,"ok"\n5,z\n', 5 + 4 * 50_000 + 2),
]


@pytest.mark.parametrize("name, data, length", UNCLOSED, ids=[v[0] for v in UNCLOSED])
def test_an_unclosed_quote_past_the_field_limit_is_named_with_its_length(name, data, length):
    with pytest.raises(DataError) as info:
        load_csv(io.BytesIO(data))
    message = str(info.value)
    assert message.startswith(f"The row starting on line 2 has a double quote that is never closed, so its value "
                              f"runs on for {length:,} characters, over the limit of {FIELD_LIMIT:,};")
    assert ". " not in message


def test_quoted_commas_newlines_and_quotes_are_values():
    data = b'id,text\n1,"a, b"\n2,"two\nlines"\n3,"say ""hi"""\n'
    df = load_csv(io.BytesIO(data))
    assert df["text"].tolist() == ["a, b", "two\nlines", 'say "hi"']


def test_line_numbers_count_physical_lines():
    data = b'a,b\n1,"x\ny"\n\n2\n'
    with pytest.raises(DataError, match="Line 5 has 1 field but"):
        load_csv(io.BytesIO(data))


def test_random_corruptions_load_or_raise_data_error():
    # Seeded byte edits of a real file: whatever breaks, only DataError may escape.
    base = (DATA / "penguins.csv").read_bytes()[:2000].rsplit(b"\n", 1)[0] + b"\n"
    rng = np.random.default_rng(20)
    alphabet = list(b',;\t"\n\r x1') + [0xE9, 0x00]
    outcomes = set()
    for _ in range(300):
        data = bytearray(base)
        for _ in range(rng.integers(1, 4)):
            position, byte = int(rng.integers(len(data))), int(rng.choice(alphabet))
            data[position:position + int(rng.integers(2))] = bytes([byte])  # insert or replace
        try:
            df = load_csv(io.BytesIO(bytes(data)))
            outcomes.add("loaded")
            assert df.shape[1] >= 2 and not df.columns.duplicated().any()
        except DataError as exc:
            outcomes.add("refused")
            assert str(exc).endswith(".") and "\n" not in str(exc)
    assert outcomes == {"loaded", "refused"}


def test_header_whitespace_is_stripped_and_values_are_not():
    df = load_csv(io.BytesIO(b" a , b\n x ,1\n"))
    assert list(df.columns) == ["a", "b"]
    assert df["a"].tolist() == [" x "]


def test_entirely_missing_column_loads():
    df = load_csv(io.BytesIO(b"a,b,c\n1,,x\n2,,y\n"))
    assert df.shape == (2, 3)
    assert df["b"].isna().all()


def test_blank_lines_and_crlf_are_fine():
    df = load_csv(io.BytesIO(b"\r\na,b\r\n1,2\r\n\r\n  \r\n3,4\r\n"))
    assert df["b"].tolist() == [2, 4]


def test_missing_values_are_nan():
    df = load_csv(io.BytesIO(b"a,b\n1,\nNA,x\n"))
    assert df["a"].isna().tolist() == [False, True]
    assert df["b"].isna().tolist() == [True, False]


@pytest.mark.parametrize("name", ["penguins.csv", "diamonds.csv", "randhie.csv"])
def test_round_trip_of_bundled_files(name):
    df = load_csv(DATA / name)
    pd.testing.assert_frame_equal(load_csv(io.BytesIO(to_csv_bytes(df))), df)


def test_round_trip_of_awkward_values():
    rng = np.random.default_rng(7)
    df = pd.DataFrame({
        "x": rng.normal(size=50) * 1e6,
        "n": rng.integers(-5, 5, size=50),
        "text": ["a, b", 'q"uote', "new\nline", "café", "ok"] * 10,
        "gap": [np.nan] * 50,
        "flag": [True, False] * 25,
    })
    df.loc[3, "x"] = np.nan
    data = to_csv_bytes(df.set_index(np.arange(100, 150)))
    assert data.startswith(b"x,n,text,gap,flag\n")
    pd.testing.assert_frame_equal(load_csv(io.BytesIO(data)), df)


def test_to_csv_bytes_writes_missing_as_empty_fields():
    assert to_csv_bytes(pd.DataFrame({"a": [1.5, np.nan], "b": ["x", None]})) == b"a,b\n1.5,x\n,\n"


def test_to_csv_bytes_rejects_non_frames():
    with pytest.raises(TypeError, match="DataFrame"):
        to_csv_bytes([[1, 2]])


def test_docstring_examples_run():
    assert doctest.testmod(dpio).failed == 0
