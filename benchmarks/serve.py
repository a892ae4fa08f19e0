"""``python -m benchmarks.serve``: the serving benchmark and, with ``--faults``, the fault benchmark (results/serve.md).

The code is :mod:`harness.serve`, which the tests run too (reduced).
"""

import sys

from harness import serve

if __name__ == "__main__":
    sys.exit(serve.main())
