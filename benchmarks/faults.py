""":mod:`harness.faults` under the name tests/test_serve.py and tests/test_failover_browser.py
import it by."""

import sys

from harness import faults

sys.modules[__name__] = faults
