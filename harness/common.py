"""Helpers of the benchmarks and the load-testing harness: timing, machine description,
Markdown tables, the dashboard's chart selectors, a server's health and stop."""

import os
import platform
import statistics
import time

import numpy as np


def best_of(fn, repeats=3):
    """Minimum wall time of ``repeats`` calls of ``fn`` and its last result."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def percentile(values, q):
    """The ``q``-th percentile of ``values`` (linear interpolation)."""
    return float(np.percentile(np.asarray(values, dtype=float), q))


def median(values):
    return float(statistics.median(values))


def machine():
    """One line describing the machine the numbers were measured on."""
    from threadpoolctl import threadpool_info

    blas = ", ".join(f"{i['internal_api']} {i.get('version', '')} ({i.get('architecture', '?')},"
                     f" {i['num_threads']} threads)" for i in threadpool_info())
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"{cpu}; {os.cpu_count()} cores; {mem:.0f} GiB; Python {platform.python_version()};"
            f" numpy {np.__version__}; BLAS: {blas}")


def table(header, rows):
    """A Markdown table."""
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


#: Every drawn chart of the dashboard, in page order: Streamlit's Plotly element and the
#: in-place charts of ``dashboard/charts.py`` (the div Plotly draws into); and their
#: containers, drawn or not yet.
CHARTS = '[data-testid="stPlotlyChart"] .js-plotly-plot, .sdwec-chart.js-plotly-plot'
CHART_CONTAINERS = '[data-testid="stPlotlyChart"], .sdwec-chart'
#: The in-place charts' component (``dashboard.charts.COMPONENT``; not imported, so that a
#: benchmark does not load Streamlit to read one name; tests/test_charts.py checks they agree).
CHART_COMPONENT = "sdwec_plotly"


def load_average(averages=None):
    """The 1, 5 and 15-minute load averages as text (now, or the given triple)."""
    averages = os.getloadavg() if averages is None else averages
    return " / ".join(f"{a:.2f}" for a in averages)


def healthy(url):
    """True when Streamlit's health endpoint at ``url`` answers 200."""
    import urllib.request

    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=5) as reply:
            return reply.status == 200
    except OSError:
        return False


def stop(proc, timeout=15):
    """Terminate a server process (then kill it if it does not exit within ``timeout`` s)."""
    import subprocess

    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
