"""``python -m benchmarks.lesson``: a class dragging sliders on ``scripts/serve.sh``
(results/lesson.md). The code is :mod:`harness.lesson`."""

import sys

from harness import lesson

if __name__ == "__main__":
    sys.exit(lesson.main())
