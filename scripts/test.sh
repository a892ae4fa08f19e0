#!/usr/bin/env bash
# Set up and run the whole test suite on a fresh machine:
#   Debian's chromium for the browser tests and nginx for the serving tests (apt, when
#   missing), a virtual environment in .venv with requirements-dev.txt, then pytest.  Extra
#   arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
# /usr/sbin, where nginx is, is not on an ordinary user's PATH.
if ! command -v chromium >/dev/null 2>&1 || ! { command -v nginx || [ -x /usr/sbin/nginx ]; } >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium nginx >/dev/null
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium nginx >/dev/null
  fi
fi
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -r requirements-dev.txt
exec .venv/bin/python -m pytest "$@"
