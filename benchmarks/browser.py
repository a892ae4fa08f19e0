"""``python -m benchmarks.browser``: the browser latency benchmark (results/browser.md).

The code is :mod:`harness.browser`, which the tests run too (reduced).
"""

import sys

from harness import browser

if __name__ == "__main__":
    sys.exit(browser.main())
