#!/usr/bin/env bash
# Set up (a virtual environment in .venv) and start the dashboard on http://localhost:8501.
#   bash scripts/dashboard.sh [--no-warm] [streamlit options]
# Unless --no-warm is given (or SDWEC_WARM=0), `python -m sdwec warm` trains the shipped
# datasets' default pools into the disk cache in the background, at low priority, so the
# first visit to a large dataset (NSL-KDD: about a minute) finds its pool ready; the first
# page does not wait for it. Its log: $SDWEC_CACHE_DIR/warm.log (default ~/.cache/sdwec).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt
# Two malloc arenas instead of glibc's 8 per core: every session's script runs in its own
# thread; fewer arenas held ~50 MiB less under 10 sessions (results/load.md).
# benchmarks/load.py starts its server the same way.
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
warm="${SDWEC_WARM:-1}"
if [ "${1:-}" = "--no-warm" ]; then
  warm=0
  shift
fi
if [ "$warm" != 0 ]; then
  cache="${SDWEC_CACHE_DIR:-$HOME/.cache/sdwec}"
  mkdir -p "$cache"
  nice -n 10 .venv/bin/python -m sdwec warm --quiet >"$cache/warm.log" 2>&1 &
  warm_pid=$!
  echo "Warming the default pools in the background (log: $cache/warm.log)"
  trap 'kill "$warm_pid" 2>/dev/null || true' EXIT
fi
# `python -m streamlit` with one fix made before the server starts (dashboard/launch.py): a
# page that reconnects after a server restart keeps its slider moves.
.venv/bin/python -m dashboard.launch run app.py "$@"
