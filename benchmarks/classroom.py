"""``python -m benchmarks.classroom``: a hostile or careless class against
``scripts/serve.sh --replicas 2`` (results/serve.md, "A hostile or careless class").

The code is :mod:`harness.classroom`, which tests/test_classroom.py runs too (reduced).
"""

import sys

from harness import classroom

if __name__ == "__main__":
    sys.exit(classroom.main())
