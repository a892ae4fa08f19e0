"""``python -m benchmarks.load``: the dashboard's load test (results/load.md).

The code is :mod:`harness.load`, which the tests run too (reduced).
"""

import sys

from harness import load

if __name__ == "__main__":
    sys.exit(load.main())
else:  # one module under both names (tests/test_serve.py and
    # tests/test_failover_browser.py import it from here)
    sys.modules[__name__] = load
