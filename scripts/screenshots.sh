#!/usr/bin/env bash
# Refresh the README's screenshots (docs/screenshots/*.png) from a real Chromium: runs the
# browser tests with SDWEC_SCREENSHOTS set (the plain test run writes no files).
# Needs the test set-up of scripts/test.sh (chromium, .venv with requirements-dev.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
SDWEC_SCREENSHOTS="$PWD/docs/screenshots" exec .venv/bin/python -m pytest tests/test_browser.py -q "$@"
