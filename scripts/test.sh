#!/usr/bin/env bash
# Install everything the tests need and run all of them (README, command 2).
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
if ! command -v chromium >/dev/null; then
  SUDO=$([ "$(id -u)" = 0 ] && echo "" || echo sudo)
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends chromium
fi
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -r requirements-dev.txt
# -m "" lifts pytest.ini's default "not slow and not e2e and not integration": CI runs every test.
# -n auto: one pytest-xdist worker a core, each with its share of the cores (tests/conftest.py).
timeout 1500 .venv/bin/python -m pytest -q -m "" -n auto "$@" </dev/null
