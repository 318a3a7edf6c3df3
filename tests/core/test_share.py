"""Shareable links: the configuration round-trips through query parameters; bad values are dropped."""

import hashlib
import hmac

import dpsynth_core as core
from dpsynth_core import share
from dpsynth_core.settings import RunSettings
from dpsynth_core.share import config_params, dataset_token

CFG = RunSettings(method="independent", epsilon=0.5, delta=0.0, seed=42, n=300, columns=None, holdout=0.2,
                  implicates=3)


def test_round_trip():
    params = config_params(CFG, dataset="bundled:penguins")
    assert params == {"data": "bundled:penguins", "method": "independent", "eps": "0.5", "seed": "42",
                      "n": "300", "m": "3", "holdout": "0.2"}
    back, notes = RunSettings.from_query(params)
    assert notes == []
    assert back == {"method": "independent", "epsilon": 0.5, "seed": 42, "n": 300, "implicates": 3,
                    "holdout": 0.2}


def test_bad_values_are_dropped_with_a_note():
    back, notes = RunSettings.from_query({"method": "rm -rf", "eps": "1e9", "seed": "-3", "n": "abc",
                                       "cols": "a,b"})
    assert back == {"columns": ("a", "b")}
    assert len(notes) == 4 and all(n.startswith("ignored ") for n in notes)


def test_dataset_token_names_bundled_data_or_a_keyed_hash_never_the_data_hash():
    df, _ = core.load_bundled("penguins")
    fp = core.fingerprint(df)
    assert dataset_token("bundled", "penguins", fp) == "bundled:penguins"
    token = dataset_token("upload", "x.csv", fp)
    # HMAC-SHA-256 under the server's secret, and the check the same keyed hash of "link <tag>", both
    # computed independently with hashlib/hmac.
    expected = hmac.new(share._LINK_SECRET, fp.encode(), hashlib.sha256).hexdigest()[:16]
    check = hmac.new(share._LINK_SECRET, f"link {expected}".encode(), hashlib.sha256).hexdigest()[:8]
    assert token == f"upload:{expected}.{check}"
    # No piece of the data's SHA-256 (nor of a plain SHA-256 of it) appears in the link.
    tag = token.split(":", 1)[1]
    assert tag not in fp and fp[:8] not in token and hashlib.sha256(fp.encode()).hexdigest()[:8] not in token
    # Same data, same token within the process; other data, another token.
    assert dataset_token("upload", "y.csv", fp) == token
    assert dataset_token("upload", "x.csv", core.fingerprint(df.iloc[1:])) != token
    # The link built from it carries no fingerprint either.
    params = config_params(CFG, dataset=token)
    assert not any(fp[:6] in v for v in params.values())


def test_a_token_tells_whether_this_server_process_made_it(monkeypatch):
    df, _ = core.load_bundled("penguins")
    token = dataset_token("upload", "x.csv", core.fingerprint(df))
    assert share.made_here(token)
    tag, check = token.removeprefix("upload:").split(".")
    wrong = format(int(check[-1], 16) ^ 1, "x")  # one hex digit changed
    assert not share.made_here(f"upload:{tag}.{check[:-1]}{wrong}")
    assert not share.made_here(f"upload:{tag}")  # a token from before the check existed
    assert not share.made_here("upload:")
    # A restarted server draws a new secret: the same data gets another token, and the old one fails.
    monkeypatch.setattr(share, "_LINK_SECRET", bytes(32))
    assert not share.made_here(token)
    again = dataset_token("upload", "x.csv", core.fingerprint(df))
    assert again != token and share.made_here(again)
