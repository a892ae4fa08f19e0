"""A view: the progress bar drawn while pools load or train and while the pages compute,
with elapsed time and an estimate of what is left."""

from __future__ import annotations

import time

import streamlit as st

from dashboard.estimates import duration, duration_range


def hold_place():
    """Draw the empty slot a bar takes, where no bar is needed this run: the page keeps the
    same elements whether work happens or not, so the browser updates charts in place."""
    st.empty()


class Progress:
    """``progress(done, total, message)`` callback drawing a bar only if work happens.

    The bar says how long the work has run and, once a tenth of what remained when it first
    reported is done, about how long is left (the library reports steps weighted by their
    cost, so the rate is meaningful).  Before that it shows ``estimate``, a (low, high)
    range of seconds for the whole work, if given.
    """

    def __init__(self, label, estimate=None):
        self.label = label
        self.estimate = estimate
        self.slot = st.empty()
        self.bar = None
        self.start = time.monotonic()
        self.origin = None  # (seconds, fraction) of the first report: the rate's baseline

    def __call__(self, done, total, message, left=None):
        """Draw ``done`` of ``total``; ``left``: seconds left if the caller knows better
        (another process's training, timed since it started)."""
        fraction = min(max(done / total, 0.0), 1.0) if total else 1.0
        now = time.monotonic()
        if self.origin is None:
            self.origin = (now, fraction)
        since, first = self.origin
        text = f"{self.label}: {message} · {duration(now - self.start)} elapsed"
        if left is None and fraction < 1.0 and fraction - first >= 0.1 * (1.0 - first):
            left = (now - since) * (1.0 - fraction) / (fraction - first)
        if left is not None and fraction < 1.0:
            text += f", about {duration(left)} left"
        elif fraction < 1.0 and self.estimate is not None:
            text += f" (roughly {duration_range(*self.estimate)} in all)"
        self._draw(fraction, text)

    def _draw(self, fraction, text):
        if self.bar is None:
            self.bar = self.slot.progress(fraction, text=text)
        else:
            self.bar.progress(fraction, text=text)

    def close(self):
        self.slot.empty()
