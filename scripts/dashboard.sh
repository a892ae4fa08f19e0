#!/usr/bin/env bash
# Set up (a virtual environment in .venv) and start the dashboard on http://localhost:8501.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt
exec .venv/bin/python -m streamlit run app.py "$@"
