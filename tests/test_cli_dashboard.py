"""``sdwec dashboard`` for real: stopping it stops the warm-up's processes and leaves no
progress record in the cache folder."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parent.parent

pytest.importorskip("streamlit")


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _ours(cache):
    """Every live process started for this test: all inherit its cache folder's variable
    (the dashboard, the server, the warm-up and joblib's workers and trackers)."""
    found = []
    for proc in psutil.process_iter(["environ", "cmdline", "status"]):
        environ = proc.info["environ"] or {}
        if (environ.get("SDWEC_CACHE_DIR") == str(cache)
                and proc.info["status"] != psutil.STATUS_ZOMBIE):
            found.append(proc)
    return found


def _progress_files(cache):
    return sorted(name for name in os.listdir(cache) if name.endswith(".progress"))


def _wait(condition, seconds):
    deadline = time.monotonic() + seconds
    while not (value := condition()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return value


def _as_a_terminal_starts_it():
    """SIGINT delivered and handled as in a process a terminal starts: the pytest worker's own
    signal state (a mask or disposition some earlier test's threads left) is not the user's."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("how", ["SIGTERM", "kill -INT", "Ctrl-C"])
def test_stopping_the_dashboard_stops_the_warm_up_and_its_workers(tmp_path, how):
    cache = tmp_path / "cache"
    cache.mkdir()
    env = {**os.environ, "SDWEC_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    env.pop("SDWEC_WARM", None)
    dashboard = subprocess.Popen(
        [sys.executable, "-m", "sdwec", "dashboard", "--port", str(_free_port()),
         "--server.headless", "true", "--server.fileWatcherType", "none"],
        cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True,  # a group of its own, as a shell's job
        preexec_fn=_as_a_terminal_starts_it)
    try:
        # Stop it while the warm-up trains: joblib's workers are up, a pool's record is on disk.
        training = _wait(lambda: _progress_files(cache) and any(
            "loky" in " ".join(p.info["cmdline"] or ()) for p in _ours(cache)), 60)
        assert training, "the warm-up never started training"
        started = {p.pid for p in _ours(cache)} - {dashboard.pid}
        assert len(started) >= 3  # the server, the warm-up, its workers
        if how == "SIGTERM":
            dashboard.send_signal(signal.SIGTERM)
        elif how == "kill -INT":
            dashboard.send_signal(signal.SIGINT)
        else:  # a terminal's Ctrl-C: SIGINT to the foreground process group
            os.killpg(dashboard.pid, signal.SIGINT)
        dashboard.wait(20)
        assert _wait(lambda: not _ours(cache), 5), \
            [" ".join(p.info["cmdline"] or ()) for p in _ours(cache)]
        assert _progress_files(cache) == []
    finally:
        for proc in _ours(cache):
            proc.kill()
