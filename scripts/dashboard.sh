#!/usr/bin/env bash
# Set up (a virtual environment in .venv) and start the dashboard on http://localhost:8501.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt
# Two malloc arenas instead of glibc's 8 per core: every session's script runs in its own
# thread; fewer arenas held ~50 MiB less under 10 sessions (results/load.md).
# benchmarks/load.py starts its server the same way.
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
exec .venv/bin/python -m streamlit run app.py "$@"
