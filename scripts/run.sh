#!/usr/bin/env bash
# Install the app's dependencies and start it on the bundled penguins (README, command 1).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
exec .venv/bin/python -m streamlit run serve.py "$@"
