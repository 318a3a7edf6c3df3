"""Hostile uploads through the real pages (issue 16): one sentence or a working app, never a traceback.

Each file of a small hostile corpus is uploaded with AppTest. A file the loader refuses must show one
error sentence and leave the previous dataset loaded; a file it accepts must become the dataset, and
then every page must run without an exception (what an error box shows is checked for library text).
"""

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import APP

pytestmark = pytest.mark.integration  # the page tier: run by scripts/test.sh and CI, not a plain pytest

PAGES = ["pages/data.py", "pages/synthesize.py", "pages/compare.py", "pages/risk.py", "pages/ru_map.py"]

# name -> (bytes, accepted?): None means "either a sentence or a working page is fine".
_ROWS = "".join(f"{i},{'xyz'[i % 3]}\n" for i in range(40))
CORPUS = {
    "malformed_quote": (b'a,b\n1,"x\n2,y\n', None),
    "latin1": (b"caf\xe9,b\n1,2\n", False),
    "ragged": (b"a,b\n1,2,3\n4,5\n", False),
    "empty": (b"", False),
    "header_only": (b"a,b\n", False),
    "xlsx_bytes": (b"PK\x03\x04" + b"\x00" * 64, False),
    "one_column": (("a\n" + "".join(f"{i % 7}\n" for i in range(40))).encode(), None),
    "all_missing_column": (("a,b\n" + "".join(f"{i % 5},\n" for i in range(40))).encode(), None),
    "id_like": (("id,g\n" + _ROWS).encode(), None),
    "mixed_types": (("a,b\n" + "".join(f"{i if i % 2 else 'foo'},{'x' if i % 3 else 7}\n" for i in range(40))).encode(),
                    None),
    "inf": (b"a,b\n1,x\ninf,y\n-inf,x\n2,y\n", None),
    "1e400": (b"a,b\n1,x\n1e400,y\n2,x\n", None),
    "huge_int": (b"a,b\n18446744073709551616,1\n", None),
    "huge_floats": (b"a,b\n1e308,-1e308\n-1e308,1e308\n1,2\n", None),
    "max_float": (("a,b\n" + "".join(f"{1.797e308 if i % 2 else -1.797e308},{i % 4}\n" for i in range(30))).encode(),
                  None),
    "minus_1e300": (("a,b\n" + "".join(f"{-1e300 if i == 0 else i},{'pq'[i % 2]}\n" for i in range(30))).encode(),
                    None),
    "constant_categorical": (("c,d,x\n" + "".join(f"k,{'uv'[i % 2]},{i}\n" for i in range(30))).encode(), None),
    "bool_blanks": (("f,x\n" + "".join(f"{['True', 'False', ''][i % 3]},{i}\n" for i in range(30))).encode(), None),
    "formula_text": (("a,b\n" + "".join(f"{['=SUM(A1)', '+1+1', '@x', '-cmd'][i % 4]},{i}\n" for i in range(30)))
                     .encode(), None),
    "markdown_names": ((':material/home:,"x\n===",[l](http://example.invalid)\n'
                        + "".join(f"{'ab'[i % 2]},{i % 3},{i}\n" for i in range(30))).encode(), None),
}


@pytest.fixture(scope="module")
def clean_error_words():
    # Library wording that must never reach the user as if it were the app's sentence.
    return ("Traceback", "Found array with", "Input X contains", "bounds must be finite", "maximum supported dimension",
            "Too many bins", "float32", "Error:")


def _errors(at):
    return [e.value for e in at.error]


@pytest.mark.parametrize("name", CORPUS)  # each about 0.3 s of CPU through five pages
def test_hostile_upload_gives_a_sentence_or_a_working_app(name, clean_error_words):
    data, accepted = CORPUS[name]
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.file_uploader(key="uploader").set_value((f"{name}.csv", data, "text/csv")).run()
    assert not at.exception, [e.value for e in at.exception]
    loaded = at.session_state["dataset"].name == f"{name}.csv"
    if accepted is not None:
        assert loaded == accepted
    if not loaded:
        errors = _errors(at)
        assert len(errors) == 1 and "previous dataset is still loaded" in errors[0], errors
        assert at.session_state["dataset"].name == "penguins"
        return
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
        for text in _errors(at):
            assert not any(w in text for w in clean_error_words), (page, text)
            assert text.count(". ") <= 3, (page, text)  # a sentence or two, not a dump
    # Coming back to the Data page still works and the dataset is still the upload.
    at.switch_page("pages/data.py").run()
    assert not at.exception and at.session_state["dataset"].name == f"{name}.csv"


def test_user_text_shortcodes_and_headings_stay_text():
    import re

    from ui.text import WORD_JOINER, plain

    shown = plain(":material/home: and :smile:")
    # Streamlit reads :name: and :material/name: before Markdown escapes: no colon may touch a word.
    assert not re.search(r":[\w+-]", shown) and ":material/" not in shown
    assert shown.replace(WORD_JOINER, "") == ":material/home: and :smile:"  # the same text to the eye
    heading = plain("x\n===")
    assert heading == "x\n\\=\\=\\=" and not re.search(r"^=+$", heading, re.M)  # no setext underline left
    assert plain("http://a.b") == "http://a\\.b"  # a colon before "/" is no shortcode and stays as it is


def test_markdown_in_column_names_reaches_the_page_inert():
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.file_uploader(key="uploader").set_value(("names.csv", CORPUS["markdown_names"][0], "text/csv")).run()
    assert not at.exception and at.session_state["dataset"].name == "names.csv"
    texts = [e.value for e in [*at.markdown, *at.warning, *at.subheader, *at.caption, *at.info, *at.error]]
    assert any("material/home" in t and "x\n\\=\\=\\=" in t for t in texts)  # the derived-bounds warning...
    assert not any(":material/" in t or "\n===" in t for t in texts)  # ...inert


def test_an_unforeseen_error_shows_the_generic_sentence_and_logs_no_data(monkeypatch, caplog):
    from ui.errors import GENERIC_ERROR
    from ui.text import plain
    import dpsynth_core as core

    def explode(*args, **kwargs):
        raise ValueError("column 'secret_col': confidential minimum 123456.789")

    monkeypatch.setattr(core.utility, "utility_summary", explode)
    at = AppTest.from_file(APP, default_timeout=60).run()
    with caplog.at_level("ERROR", logger="dpsynth"):
        at.switch_page("pages/compare.py").run()
    assert not at.exception
    assert [e.value for e in at.error] == [plain(GENERIC_ERROR)]
    assert at.session_state["dataset"].name == "penguins"  # the session's state is untouched
    logged = "\n".join(r.getMessage() for r in caplog.records if r.name == "dpsynth")
    assert "unexpected ValueError at" in logged and "compare.py" in logged
    assert "secret_col" not in logged and "123456" not in logged


def test_a_column_whose_values_collapse_to_one_float_synthesizes_on_every_page():
    # Issue 31.12: whole numbers past 2**53 (2**64, 2**64 + 1, …) are one float, so the column's bounds are one
    # value; every method that bins crashed on it, and the page showed the generic error instead of a synthesis.
    data = ("big,g\n" + "".join(f"{2**64 + i},{'ab'[i % 2]}\n" for i in range(120))).encode()
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.file_uploader(key="uploader").set_value(("collapsed.csv", data, "text/csv")).run()
    assert at.session_state["dataset"].schema["big"].bounds == (2.0 ** 64, 2.0 ** 64)
    for method in ("mst", "independent"):
        at.switch_page("pages/synthesize.py").run()
        at.selectbox(key="method").set_value(method).run()
        assert not at.exception and not at.error, (method, [e.value for e in at.error])
        assert at.session_state["synth_config"].method == method
        at.switch_page("pages/risk.py").run()
        assert not at.exception and not at.error, (method, [e.value for e in at.error])
        # Compare compares: its only sentence is the regression's, whose outcome column pandas holds as
        # Python integers (exact past 64 bits), not as numbers it can fit.
        at.switch_page("pages/compare.py").run()
        assert not at.exception
        assert [e.value for e in at.error] in ([], ["A linear regression needs a numeric outcome; 'big' is not\\."])
