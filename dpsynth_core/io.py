r"""Read an uploaded CSV file into a table, or refuse it with one clear sentence.

pandas reads many broken files without complaint (extra fields slide into the
index, missing ones become NaN, duplicate names become ``x.1``), and a table
that is not the one the person meant is worse than a refusal. So the :mod:`csv`
module checks the structure first and pandas only infers dtypes of a file that
passed. The bytes stay in memory and no message quotes a value from the file,
since an upload may hold personal data.

Examples
--------
>>> import io
>>> df = load_csv(io.BytesIO(b"a,b\n1,x\n2,\n"))
>>> df.shape
(2, 2)
>>> to_csv_bytes(df)
b'a,b\n1,x\n2,\n'
"""

import csv
import io
import os
import re

import numpy as np
import pandas as pd

from . import constraints
from .errors import DataError

__all__ = ["load_csv", "neutralise_formulas", "to_csv_bytes"]

_SAVE_AS = 'in Excel choose File > Save As > "CSV UTF-8" and upload that file'
_AGAIN = "and upload the file again"

# Formats people upload by mistake, recognised by their first bytes.
_MAGIC = (
    (b"PK\x03\x04", f"The file is an Excel workbook (.xlsx) or ZIP archive, not CSV; {_SAVE_AS}."),
    (b"\xd0\xcf\x11\xe0", f"The file is an old Excel workbook (.xls), not CSV; {_SAVE_AS}."),
    (b"%PDF-", "The file is a PDF document, not CSV; export the table as CSV from the "
               "program that made it and upload that file."),
    (b"\x1f\x8b", "The file is compressed with gzip; decompress it and upload the CSV inside."),
    ((b"\xff\xfe", b"\xfe\xff"), f"The file is saved as UTF-16 text, not UTF-8; {_SAVE_AS}."),
)

# Control characters other than \t \n \v \f \r never occur in a text table.
# Bytes below 0x80 mean the same characters in UTF-8, so this runs before decoding.
_BINARY = re.compile(rb"[\x00-\x08\x0e-\x1f]")

_SNIFFED = (";", "\t")  # tried only when a comma split leaves a single header field
_DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab"}


def load_csv(src):
    """Read a CSV file into a DataFrame, checking that it is a clean table.

    Parameters
    ----------
    src : str, os.PathLike or binary file-like
        Path to the file, or an object whose ``read`` returns bytes, such as
        :class:`io.BytesIO` or a Streamlit ``UploadedFile``. A file-like is
        read from its start when it can seek, and is left open.

    Returns
    -------
    pandas.DataFrame
        One column per header field, names stripped of surrounding spaces,
        dtypes inferred by pandas, missing values as NaN. Comma-, semicolon-
        and tab-separated UTF-8 files are accepted, with or without a BOM.

    Raises
    ------
    DataError
        For anything that is not such a table, including input of the wrong
        kind. The message is one sentence saying what is wrong and what to
        do; it never quotes a value from the file.
    """
    try:
        text = _decode(_read_bytes(src))
        delimiter = _choose_delimiter(text)
        header, n_rows = _check_structure(text, delimiter)
        df = pd.read_csv(io.StringIO(text), sep=delimiter, index_col=False, low_memory=False)
        # Both readers must see the same table, or neither can be trusted.
        if df.shape != (n_rows, len(header)):
            raise ValueError("csv and pandas disagree on the table's shape")
        df.columns = header
        return df
    except DataError:
        raise
    except Exception:
        # Not chained: the cause may quote bytes of the file.
        raise DataError("The file could not be read as a table; check that it is a CSV text "
                        f"file with one header row {_AGAIN}.") from None


def to_csv_bytes(df, schema=None):
    """Write a DataFrame as UTF-8 CSV that :func:`load_csv` reads back.

    Parameters
    ----------
    df : pandas.DataFrame
        Table to write; its index is left out.
    schema : Schema, optional
        When given, each column is written in its schema's form whatever its
        dtype (a whole-number column as 68, never 68.0), so the file's form
        depends on the public schema alone.

    Returns
    -------
    bytes
        Comma-separated UTF-8 text with a header row, ``\\n`` line ends and
        missing values as empty fields. Text that pandas reads as missing
        (``""``, ``"NA"``) comes back as NaN, and dates come back as text.
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas.DataFrame, got {type(df).__name__}.")
    if schema is not None:
        from .synth.encoding import in_schema_dtype
        df = pd.DataFrame({c: in_schema_dtype(df[c], schema[c]) if c in schema.columns else df[c]
                           for c in df.columns}, columns=df.columns)
    df = neutralise_formulas(df)
    return df.to_csv(index=False, na_rep="", lineterminator="\n").encode("utf-8")


# A spreadsheet runs a cell that starts with one of these as a formula (OWASP "CSV injection");
# a minus sign is left alone when the text is a plain number such as -3.5 or -1e-5.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def _inert(value):
    """``value`` with a single quote in front when a spreadsheet would run it as a formula."""
    if not isinstance(value, str):
        return value
    if value.startswith(_FORMULA_START) and not _PLAIN_NUMBER.fullmatch(value):
        value = "'" + value
    # Python 3.11's csv writer leaves a field with a bare carriage return unquoted, and readers
    # start a new row there (where "=..." would run); a line feed gets the field quoted.
    return value.replace("\r\n", "\n").replace("\r", "\n") if "\r" in value else value


def neutralise_formulas(df):
    """A copy of ``df`` whose text cells and column names cannot run as spreadsheet formulas.

    Text starting with ``=``, ``+``, ``@``, a tab, a carriage return, or ``-`` when it is
    not a plain number gets a single quote in front (OWASP's advice against CSV injection),
    so a spreadsheet shows it as text. A carriage return inside text is written as a line
    feed (so the field is quoted and stays one cell). Numbers, booleans and missing values
    are unchanged; the frame passed in is not modified.

    Examples
    --------
    >>> neutralise_formulas(pd.DataFrame({"=a": ["=1+1", "-3.5", "-x", "ok"]})).to_dict("list")
    {"'=a": ["'=1+1", '-3.5', "'-x", 'ok']}
    """
    changed = {}
    for name in df.columns:
        values = df[name]
        if pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
            continue
        codes, uniques = pd.factorize(values, use_na_sentinel=True)  # each distinct value checked once
        inert = [_inert(v) for v in uniques]
        if any(a is not b for a, b in zip(inert, uniques)):
            lookup = np.array(inert + [np.nan], dtype=object)
            changed[name] = pd.Series(lookup[codes], index=values.index, name=name)
    out = df
    if changed:
        out = df.copy(deep=False)
        for name, column in changed.items():
            out[name] = column
    names = [_inert(c) for c in out.columns]
    if names != list(out.columns):
        out = out.set_axis(names, axis=1)
    return out


def _read_bytes(src):
    """Return the whole content of a path or binary file-like."""
    if isinstance(src, (str, os.PathLike)):
        try:
            with open(src, "rb") as fh:
                return _read_stream(fh)
        except OSError:
            raise DataError("The file could not be opened; check that the path points to an "
                            "existing, readable file and try again.") from None
    if not callable(getattr(src, "read", None)):
        raise DataError(f"load_csv needs a file path or a binary file object, not "
                        f"{type(src).__name__}; pass the uploaded file itself.")
    try:
        src.seek(0)
    except (AttributeError, OSError, ValueError):
        pass  # a stream that cannot seek is read from where it stands
    return _read_stream(src)


def _read_stream(fh):
    """Read at most one byte past the size limit, so a huge file is never held whole."""
    limit = constraints.MAX_UPLOAD_BYTES  # the browser's limit too (constraints.py says why)
    data = fh.read(limit + 1) or b""
    if isinstance(data, str):
        raise DataError("The file was opened as text; open it in binary mode and try again.")
    if len(data) > limit:
        raise DataError(f"The file is larger than the {constraints.MAX_UPLOAD_MB} MB limit "
                        f"({constraints.MAX_UPLOAD_BYTES:,} bytes); "
                        "upload a smaller file, for example a sample of the rows.")
    return bytes(data)


def _decode(data):
    """Turn the bytes into text, refusing other formats, binary data and other encodings."""
    for magic, message in _MAGIC:
        if data.startswith(magic):
            raise DataError(message)
    if _BINARY.search(data):
        raise DataError(f"The file contains binary data, not text; {_SAVE_AS} (or export "
                        "CSV from the program that made it).")
    try:
        text = data.decode("utf-8-sig")  # drops the BOM of Excel's "CSV UTF-8"
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DataError(f"The file is not valid UTF-8 text (the first problem is on line "
                        f"{line}); {_SAVE_AS}.") from None
    if not text.strip():
        raise DataError("The file is empty; upload a CSV file with a header row and at least "
                        "one row of data.")
    return text


def _rows(text, delimiter, *, strict):
    return csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=strict)


def _is_blank(row):
    # pandas skips empty and whitespace-only lines, so the check must too.
    return not row or (len(row) == 1 and not row[0].strip())


def _choose_delimiter(text):
    """Return ``","`` unless the header is one field holding semicolons or tabs."""
    try:
        first = next((row for row in _rows(text, ",", strict=False) if not _is_blank(row)), [])
    except csv.Error:
        first = []  # _check_structure says what is wrong
    if len(first) == 1 and any(d in first[0] for d in _SNIFFED):
        return max(_SNIFFED, key=first[0].count)
    return ","


def _check_structure(text, delimiter):
    """Check the header and every row's field count; return the header and row count."""
    reader = _rows(text, delimiter, strict=True)
    header, n_rows = None, 0
    while True:
        start = reader.line_num + 1  # physical line where the next record starts
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise DataError(_csv_error_message(str(exc), start, text, delimiter)) from None
        if _is_blank(row):
            continue
        if header is None:
            header = _check_header(row)
            continue
        if len(row) != len(header):
            if len(row) > len(header):
                hint = (f"a value probably contains a {_DELIMITER_NAMES[delimiter]}, so put "
                        "such values in double quotes")
            else:
                hint = "give every row one value (or an empty field) per column"
            fields = "1 field" if len(row) == 1 else f"{len(row)} fields"
            raise DataError(f"Line {start} has {fields} but the header has {len(header)}; "
                            f"{hint} {_AGAIN}.")
        n_rows += 1
        if n_rows > constraints.MAX_ROWS:
            raise DataError(f"The file has more than {constraints.MAX_ROWS:,} rows of data; "
                            "upload a sample of the rows instead.")
    if n_rows == 0:
        raise DataError(f"The file has a header row but no rows of data; add the data {_AGAIN}.")
    return header, n_rows


def _check_header(row):
    names = [name.strip() for name in row]
    if len(names) > constraints.MAX_COLUMNS:
        raise DataError(f"The file has {len(names)} columns, more than the limit of "
                        f"{constraints.MAX_COLUMNS}; remove the columns you do not need {_AGAIN}.")
    if len(names) == 1:
        raise DataError("The file has only one column, and the app needs at least two columns; "
                        f"separate the values with commas, semicolons or tabs {_AGAIN}.")
    blank = [position for position, name in enumerate(names, start=1) if not name]
    if blank:
        raise DataError(f"Column {blank[0]} has no name in the header row; name every column "
                        f"(or delete the empty one) {_AGAIN}.")
    repeated = [name for name in names if names.count(name) > 1]  # at most MAX_COLUMNS names
    if repeated:
        # Shortened: a pasted paragraph used as a header would swamp the message.
        name = repeated[0] if len(repeated[0]) <= 40 else repeated[0][:37] + "..."
        raise DataError(f"The column name {name!r} appears more than once in the header row; "
                        f"give each column its own name {_AGAIN}.")
    return names


def _csv_error_message(reason, line, text, delimiter):
    """The sentence for a :class:`csv.Error` raised on the record starting on physical ``line``."""
    # The csv module's reasons are fixed English phrases, unchanged for many releases.
    fix = f"put quotes around whole values, write a quote inside a value as two quotes {_AGAIN}"
    if "field larger than field limit" in reason:
        limit = csv.field_size_limit()
        found = _long_field(text, delimiter, _line_offset(text, line), limit)
        if found is None:  # not expected: the csv module found one
            return (f"The row starting on line {line} has a value longer than the limit of {limit:,} characters a "
                    f"value may have; shorten that value or leave its column out {_AGAIN}.")
        length, closed = found
        if closed:
            return (f"The row starting on line {line} has a value of {length:,} characters, over the limit of "
                    f"{limit:,} characters a value may have; shorten that value or leave its column out {_AGAIN}.")
        return (f"The row starting on line {line} has a double quote that is never closed, so its value runs on "
                f"for {length:,} characters, over the limit of {limit:,}; {fix}.")
    if "unexpected end of data" in reason:
        problem = "has a double quote that is never closed"
    else:
        problem = "has a double quote in the wrong place"
    return f"The row starting on line {line} {problem}; {fix}."


def _line_offset(text, line):
    """Where physical ``line`` (1-based, as the csv module counts lines: at \\n, \\r or \\r\\n) starts in ``text``."""
    offset = 0
    for number, physical in enumerate(io.StringIO(text, newline=""), start=1):
        if number == line:
            break
        offset += len(physical)
    return offset


def _long_field(text, delimiter, start, limit):
    """(length, closed) of the first value longer than ``limit`` characters in the record at ``start``, or None.

    Read as the csv module reads it: a value in double quotes runs to the next lone quote (two quotes
    are one character of the value) and may hold delimiters and line breaks; any other value runs to the
    next delimiter or line break. ``closed`` is False for a quoted value whose quote is never closed: no
    quote follows (the value runs to the end of the file), or the next one is not followed by a delimiter or
    a line break, so it opened another value and the first quote ran on across rows. Only called after the
    csv module found such a value.
    """
    end_of_value = re.compile(f"[{re.escape(delimiter)}\r\n]")
    pos, n = start, len(text)
    while pos < n:
        if text[pos] == '"':
            length, i = 0, pos + 1
            while True:
                quote = text.find('"', i)
                if quote == -1:  # never closed: the value runs to the end of the file
                    return length + n - i, False
                if text.startswith('""', quote):
                    length, i = length + quote - i + 1, quote + 2
                    continue
                length, end = length + quote - i, quote + 1
                if end < n and text[end] not in (delimiter, "\r", "\n"):
                    return length, False  # that quote opened another value: the first one ran on
                break
        else:
            found = end_of_value.search(text, pos)
            end = found.start() if found else n
            length = end - pos
        if length > limit:
            return length, True
        if end >= n or text[end] != delimiter:  # the record ended with no such value
            return None
        pos = end + 1
    return None
