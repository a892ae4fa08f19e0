"""Code that both the tests and the benchmarks run, so that neither imports the other.

The load-testing harness (websocket clients, Chromium sessions, ``scripts/serve.sh`` and its
faults: :mod:`harness.load`, :mod:`harness.wsclient`, :mod:`harness.browser`,
:mod:`harness.serve`, :mod:`harness.faults`, the selectors and report helpers of
:mod:`harness.common`), which the benchmarks run at full size and the tests in reduced runs;
the literal transcription of Algorithm 1 (:mod:`harness.literal`) that the solver's tests and
its benchmark compare against; and the reading of an AppTest run's charts
(:mod:`harness.apptest_charts`).  Its own package rather than a module of ``sdwec``: the
library ships no test-only code, and this package is not in the wheel.  The benchmarks'
commands keep their names (``python -m benchmarks.load``, ``.browser``, ``.serve``: the
results cite them).
"""
