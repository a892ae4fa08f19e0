""":mod:`harness.apptest_charts` under the name tests/test_app.py and tests/test_your_data.py
import it by."""

import sys

from harness import apptest_charts

sys.modules[__name__] = apptest_charts
