"""User text made inert for Streamlit's markdown, and frames the browser's table can show."""

from __future__ import annotations

import re

import pandas as pd

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$&=])")
# Streamlit turns :name: into an emoji and :material/name: into an icon before any Markdown escape is
# read, so a backslash cannot stop them; a word joiner (U+2060, invisible) after the colon does.
_SHORTCODE = re.compile(r":(?=[\w+-])")
WORD_JOINER = "\u2060"


def plain(text: object) -> str:
    """User text made inert for Streamlit's markdown: no links, images, HTML, formatting, headings
    (``x`` over ``===``), emoji or icon shortcodes (``:material/home:``)."""
    return _SHORTCODE.sub(":" + WORD_JOINER, _MD_SPECIAL.sub(r"\\\1", str(text)))


def displayable(df: pd.DataFrame) -> pd.DataFrame:
    """A frame the browser's table can show: values Arrow has no type for (integers of 2⁶⁴ and up in a
    text column, mixed objects) are shown as their text; missing values stay missing."""
    out = df.copy()
    for col in out.columns[out.dtypes == object]:
        out[col] = out[col].map(lambda v: v if v is None or isinstance(v, str) or v != v else str(v))
    return out
