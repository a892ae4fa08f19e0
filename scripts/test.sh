#!/usr/bin/env bash
# Set up and run the whole test suite on a fresh machine:
#   Debian's chromium for the browser tests and nginx for the serving tests (apt, when
#   missing), a virtual environment in .venv with requirements-dev.txt, then ruff and pytest.
#   Extra arguments go to pytest (and skip ruff).
# Without arguments (what CI runs) a second run goes beside it: the library's tests in
# .venv-min, on the oldest versions sdwec supports (requirements-min.txt, the lower bounds of
# pyproject.toml). SDWEC_MIN_TESTS=0 skips it; the exit code is non-zero if either run fails.
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
if [ "$#" -gt 0 ] || [ "${SDWEC_MIN_TESTS:-1}" = 0 ]; then
  exec .venv/bin/python -m pytest "$@"
fi
status=0
# The library's tests (no dashboard, browser, serving or install tests: those need the
# dashboard's packages, whose bounds are the current versions) on the minimum versions.
MIN_TESTS=(
  tests/test_solver.py tests/test_votes.py tests/test_combiners.py tests/test_datasets.py
  tests/test_csv_loader.py tests/test_pool.py tests/test_estimator.py tests/test_export.py
  tests/test_frontier.py tests/test_experiments.py tests/test_oob.py tests/test_warm.py
  tests/test_cli.py tests/test_formatting.py tests/test_util.py tests/test_convergence.py
  tests/test_timing.py tests/test_decide.py
  --deselect tests/test_cli.py::test_dask_backend_gives_the_same_numbers  # dask: a dev tool
  # `sdwec dashboard` needs the dashboard's packages, which this environment leaves out.
  --deselect tests/test_cli.py::test_dashboard_runs_streamlit_on_the_app_and_warms_in_the_background
  --deselect tests/test_cli.py::test_dashboard_runs_a_copy_of_a_read_only_app_from_the_cache
  --deselect tests/test_cli.py::test_dashboard_gives_the_callers_signal_handlers_back
  # scikit-learn's checks of one configuration's own code (how it finds weights or votes)
  # run in the first run; here the whole check suite on the default and the recommended
  # configurations meets the oldest versions' own validation and behaviour.
  -m "not targeted"
)
min_log=$(mktemp)
trap 'rm -f "$min_log"' EXIT
# The minimum-versions run goes beside the first one at a low CPU priority (nice 10): it
# takes the core time the first run leaves idle while its browsers and servers are waited
# on, and mostly yields the cores when the first run wants them.  (Not nice 19: on a busy
# machine that starves its own subprocesses past their time-outs.)  When the first run ends
# it gets the ordinary priority back where the user may raise priorities (root).  Its output
# is shown after the first run's.
(
  set -e
  echo "== the library's tests on the minimum versions (requirements-min.txt, .venv-min) =="
  [ -x .venv-min/bin/python ] || python3 -m venv .venv-min
  .venv-min/bin/python -m pip install -q --disable-pip-version-check -r requirements-min.txt
  .venv-min/bin/python -c 'import numpy, scipy, sklearn, pandas; print("numpy", numpy.__version__, "scipy", scipy.__version__, "scikit-learn", sklearn.__version__, "pandas", pandas.__version__)'
  # Two workers, tests dealt out one by one: these are CPU-bound library tests.
  exec nice -n 10 .venv-min/bin/python -m pytest -p no:cacheprovider -n 2 --dist load "${MIN_TESTS[@]}"
) > "$min_log" 2>&1 &
min_run=$!

# The linter first (pyflakes, import order, pycodestyle's errors: pyproject.toml): a finding
# fails the run, the tests still run.
echo "== ruff check =="
.venv/bin/python -m ruff check . || status=$?
# Three workers, each test module whole on one of them (its module-scoped servers and pools
# are made once): the browser and serving tests mostly wait, so the other workers' tests run
# meanwhile.  Measured on this project's 2-core machine, whole command, the second run beside:
# 336 s with three workers against 376 s with two (the cores were idle 123 core-seconds with
# two, 20 with three).
.venv/bin/python -m pytest -n 3 --dist loadfile || status=$?

# shellcheck disable=SC2046
renice -n 0 -p "$min_run" $(pgrep -P "$min_run" 2>/dev/null) >/dev/null 2>&1 || true
wait "$min_run" || status=$?
cat "$min_log"
exit "$status"
