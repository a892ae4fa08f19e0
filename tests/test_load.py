"""The load test's harness (``harness/load.py``): its helpers, then reduced real runs.

The reduced run starts ``streamlit run app.py`` with tiny pools (l = 20 on wine and sonar,
in a temporary disk cache) and drives 5 websocket clients and 3 Chromium sessions beside
them for 20 s after the warm-up.  It asserts behaviour only, never a time: no error on any
page, every session held, the server still serves a clean Explorer to a new session, and
memory stays bounded.  The full run (10 sessions, 2 minutes) is ``python -m benchmarks.load``;
its report is ``results/load.md``.
"""

import os
import random
import shutil

import pytest

from dashboard import config as dashboard
from harness import load


def test_random_query_is_a_valid_configuration():
    settings = load.Settings(datasets=("wine", "sonar"), n_trees=20)
    rng = random.Random(3)
    for _ in range(50):
        query = load.random_query(rng, settings)
        config, problems = dashboard.config_from_query(query)
        assert problems == []
        # Every value is on the sidebar's grid, so the page keeps it exactly.
        assert dashboard.config_to_query(config) == query
        assert config.dataset in settings.datasets and config.n_trees == 20


def test_params_of_reads_a_full_query_string():
    url = ("http://127.0.0.1:1/?dataset=wine&task=binary&seed=0&l=20&lam=0.5&beta=3&gamma=7"
           "&eps=0.01&k=12&thr=paper")
    assert load.params_of(url) == ("wine", "binary", "0", "20", "0.5", "3", "7", "0.01", "12",
                                   "paper")
    assert load.params_of("http://127.0.0.1:1/?dataset=wine&lam=1") is None


def test_slider_step_moves_away_from_the_ends():
    low = dict(zip(load.PARAM_KEYS, ("wine", "binary", "0", "20", "0.001", "0", "1", "0.001",
                                     "1", "paper")))
    high = dict(low, lam="1000", beta="100", gamma="100", eps="10", k="100")
    rng = random.Random(0)
    for values, expected in ((low, "ArrowRight"), (high, "ArrowLeft")):
        params = tuple(values[k] for k in load.PARAM_KEYS)
        for _ in range(30):
            key, direction = load._slider_step(rng, params)
            assert key in load.SLIDERS
            assert direction == expected


def test_summary_counts_errors_and_distinct_parameter_sets():
    outcome = load.Outcome(settings=load.Settings(sessions=2))
    p1, p2 = ("wine",) + ("x",) * 9, ("sonar",) + ("y",) * 9
    outcome.actions = [
        load.Action(0, "warm-up", "url", "wine", 2.0, 0.5, p1),
        load.Action(0, "load", "slider:lam", "wine", 0.3, 0.1, p2),
        load.Action(1, "load", "slider:lam", "wine", 0.5, 0.2, p2),
        load.Action(1, "load", "dataset", "sonar", None, None, None, error="TimeoutError"),
    ]
    outcome.rss_warm, outcome.rss_end = 100 * 2**20, 130 * 2**20
    outcome.server_log_tracebacks = 1
    s = load.summary(outcome)
    assert s["distinct"] == 2
    assert s["errors"] == 2  # the time-out and the traceback in the server log
    assert s["slider_moves"] == 2 and s["slider_moves_load"] == 2 and s["links"] == 1
    assert s["rss_growth"] == 30 * 2**20
    # Only the measured phase counts for the percentiles: 0.3 and 0.5 s.
    assert s["p50_uci"] == pytest.approx(0.4)
    assert "**no**" in load.report(outcome)  # the errors are flagged in the report


def _check_reduced_run(outcome, settings):
    s = load.summary(outcome)
    details = [a.error for a in s["action_errors"]] + outcome.session_failures
    assert s["errors"] == 0, (details, outcome.server_log_tail)
    assert outcome.sessions_held == load.total_sessions(settings), details
    assert outcome.server_alive
    assert outcome.final_error is None and outcome.final_seconds is not None
    # Every session did something after its first page, and the configurations differed.
    assert s["slider_moves"] >= 1
    assert s["distinct"] >= settings.sessions
    assert {a.session for a in outcome.actions} == set(range(load.total_sessions(settings)))
    served = [a for a in outcome.actions if a.params is not None]
    assert served and all(dict(zip(load.PARAM_KEYS, a.params))["l"] == "20" for a in served)
    # Memory is bounded: under 200 MiB between the warm-up and the end.
    assert outcome.rss_warm > 0 and outcome.rss_end > 0
    assert s["rss_growth"] < 200 * 2**20
    return s


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.timeout(900)
def test_reduced_load_run(tmp_path):
    # A missing browser is a failure, not a skip: README's test command installs it.
    if shutil.which("chromium") is None:
        pytest.fail("Debian's chromium is not installed: run `apt-get install chromium` "
                    "(scripts/test.sh does this)")
    # One run drives both kinds of session at once (the harness's --browsers); what each kind
    # must do is checked on its own sessions.
    settings = load.Settings(sessions=5, browsers=2, duration=10, warmup=2,
                             datasets=("wine", "sonar"), n_trees=20, rng_seed=2,
                             action_timeout=90, think=(0.1, 0.6), cover=True,
                             cache_dir=str(tmp_path / "pools"),
                             options=("--runner.postScriptGC", "true"),
                             env=(("SDWEC_LOAD_MARK", "7"),))
    outcome = load.run_load(settings, log=lambda *a: None)
    s = _check_reduced_run(outcome, settings)
    # The server ran with the launch script's settings plus the extra flag and variable.
    arenas = os.environ.get("MALLOC_ARENA_MAX", "2")  # the caller's own setting wins
    assert outcome.server_setup == (f"MALLOC_ARENA_MAX={arenas}, SDWEC_LOAD_MARK=7, "
                                    "--runner.postScriptGC true")
    # Sessions 0-4 are the websocket clients, 5-6 the browsers.
    clients = [a for a in outcome.actions if a.session < settings.sessions]
    browsers = [a for a in outcome.actions if a.session >= settings.sessions]
    # Every kind of action was served (cover: each session's first action is one kind in
    # turn, so that a busy machine's few actions in 10 s still hold every kind).
    assert {a.kind.split(":")[0] for a in clients} == {"url", "dataset", "slider"}
    assert all(a.client == "ws" for a in clients)
    assert browsers and all(a.client == "browser" for a in browsers)
    # The browsers' configurations differed too.
    assert len({a.params for a in browsers if a.params is not None}) >= settings.browsers
    assert s["p95_uci"] > 0
    assert "5 websocket clients and 2 Chromium session(s) beside them" in load.report(outcome)


def test_benchmark_server_runs_like_the_launch_script():
    # The load test measures the server as README's command starts it.
    import re
    import tomllib

    script = (load.ROOT / "scripts" / "dashboard.sh").read_text()
    match = re.search(r'MALLOC_ARENA_MAX="\$\{MALLOC_ARENA_MAX:-(\d+)\}"', script)
    assert match and load.SERVER_ENV == {"MALLOC_ARENA_MAX": match.group(1)}
    config = tomllib.loads((load.ROOT / ".streamlit" / "config.toml").read_text())
    assert config["runner"]["postScriptGC"] is False
