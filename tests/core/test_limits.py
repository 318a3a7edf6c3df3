"""The upload limit is one number in one unit: the server's config, the core's constant and the loader agree."""

import io
import tomllib

import pytest

from dpsynth_core import DataError, constraints, load_csv
from tests.conftest import ROOT


def test_config_toml_upload_limit_is_the_cores():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] == constraints.MAX_UPLOAD_MB == 50
    # Streamlit's browser refuses above maxUploadSize × 10**6 bytes: the loader's limit is the same number.
    assert constraints.MAX_UPLOAD_BYTES == config["server"]["maxUploadSize"] * 10**6 == 50_000_000


def test_loader_refuses_one_byte_over_the_browser_limit_and_says_it_in_the_same_unit():
    row = b"1,2\n"
    body = b"a,b\n" + row * ((constraints.MAX_UPLOAD_BYTES - 4) // len(row))
    body += b"\n" * (constraints.MAX_UPLOAD_BYTES - len(body))
    assert len(body) == 50_000_000
    with pytest.raises(DataError, match=r"^The file is larger than the 50 MB limit \(50,000,000 bytes\);"):
        load_csv(io.BytesIO(body + b"\n"))  # 50,000,001 bytes: below the server's 52,428,800, still refused
