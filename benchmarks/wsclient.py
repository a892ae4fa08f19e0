""":mod:`harness.wsclient` under the name tests/test_serve.py imports it by."""

import sys

from harness import wsclient

sys.modules[__name__] = wsclient
