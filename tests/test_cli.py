"""The command line end to end: reproduce (local and Dask), frontier, help and errors."""

import argparse
import re
from pathlib import Path

import pandas as pd
import pytest

import sdwec
from sdwec import experiments, frontier, paper
from sdwec.__main__ import build_parser, main

SMALL = ["--datasets", "wine,sonar", "--repeats", "2", "--trees", "10", "--quiet"]


@pytest.fixture
def first_run(tmp_path, cache):
    out = tmp_path / "run1"
    assert main(["reproduce", *SMALL, "--out", str(out), "--n-jobs", "1"]) == 0
    return out


def test_reproduce_writes_every_row_and_the_report(first_run):
    df = pd.read_csv(first_run / "results.csv")
    assert len(df) == 2 * 2 * len(experiments.METHODS)
    assert set(df["method"]) == set(experiments.METHODS)
    assert set(df["dataset"]) == {"wine", "sonar"} and set(df["repeat"]) == {0, 1}
    assert df["accuracy"].between(0, 1).all() and (df["n_trees"] == 10).all()
    b = df[df["method"] == "SDWEC-B"].set_index(["dataset", "repeat"])
    fair = df[df["method"] == "reduce-error @B"].set_index(["dataset", "repeat"])
    assert (b["n_selected"] == fair["n_selected"]).all()  # the fair comparison is size-matched
    assert (df.loc[df["method"] == "bagging", "sparsity"] == 0).all()
    report = (first_run / "report.md").read_text()
    assert "python -m sdwec reproduce --datasets wine,sonar" in report
    assert f"{paper.TABLE3['wine']['QFWEC']:.4f}" in report  # the paper's number beside ours
    for heading in ("wins / ties / losses", "Wilcoxon", "fair comparison", "Abstentions"):
        assert heading in report


def test_rerun_reproduces_every_number(first_run, tmp_path):
    out = tmp_path / "run2"
    assert main(["reproduce", *SMALL, "--out", str(out), "--n-jobs", "1"]) == 0
    assert (out / "results.csv").read_bytes() == (first_run / "results.csv").read_bytes()


def test_dask_backend_gives_the_same_numbers(first_run, tmp_path):
    from dask import distributed  # a test dependency: this test always runs
    out = tmp_path / "dask"
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        code = main(["reproduce", *SMALL, "--out", str(out), "--backend", "dask",
                     "--scheduler", cluster.scheduler_address])
    assert code == 0
    assert (out / "results.csv").read_bytes() == (first_run / "results.csv").read_bytes()


def test_frontier_command_writes_points(tmp_path, cache):
    out = tmp_path / "f.csv"
    assert main(["frontier", "--dataset", "wine", "--trees", "10", "--points", "4",
                 "--out", str(out), "--quiet"]) == 0
    df = pd.read_csv(out)
    assert (df["method"] == "SDWEC").sum() == 4
    assert {"bagging", "reduce-error", "random", "lasso"} <= set(df["method"])
    assert df["pareto_val"].any()


def test_help_explains_every_option(capsys):
    for argv, options in ((["--help"], ["reproduce", "frontier"]),
                          (["reproduce", "--help"], ["--datasets", "--repeats", "--trees",
                                                     "--out", "--backend", "--scheduler",
                                                     "--n-jobs", "--no-cache", "--suite",
                                                     "--size"]),
                          (["frontier", "--help"], ["--dataset", "--points", "--lam-min",
                                                    "--beta", "--out"])):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 0
        text = capsys.readouterr().out
        assert all(option in text for option in options)


def test_top_level_help_says_what_every_command_does(capsys):
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert set(sub.choices) == {"reproduce", "frontier", "warm", "dashboard"}
    with pytest.raises(SystemExit):
        main(["--help"])
    # The description, not argparse's own list of commands below it.
    description = capsys.readouterr().out.split("positional arguments:")[0]
    description = " ".join(description.split())
    for name in sub.choices:
        assert f"'{name}'" in description, name
    assert "COMMAND --help" in description


def test_frontier_help_and_csv_agree_on_pareto_val(tmp_path, cache, capsys):
    with pytest.raises(SystemExit):
        main(["frontier", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "'pareto_val' column marks the front" in text and "every method's points" in text
    out = tmp_path / "f.csv"
    assert main(["frontier", "--dataset", "wine", "--trees", "10", "--points", "6",
                 "--out", str(out), "--quiet"]) == 0
    df = pd.read_csv(out)
    # Brute force: a point is on the front when no point of any method is at least as
    # accurate and as sparse and better on one; an (accuracy, sparsity) pair counts once.
    acc, sp, off = df["val_accuracy"].to_numpy(), df["sparsity"].to_numpy(), df["abstains"]
    expected, seen = [], set()
    for i in range(len(df)):
        dominated = any(not off[j] and acc[j] >= acc[i] and sp[j] >= sp[i]
                        and (acc[j] > acc[i] or sp[j] > sp[i]) for j in range(len(df)))
        expected.append(not off[i] and not dominated and (acc[i], sp[i]) not in seen)
        if expected[-1]:
            seen.add((acc[i], sp[i]))
    assert df["pareto_val"].tolist() == expected
    # The help's recipe for SDWEC's own front: it holds every SDWEC point of the joint front.
    own = frontier.pareto(df[df["method"] == "SDWEC"])
    assert not own.empty
    assert set(df.loc[df["pareto_val"] & (df["method"] == "SDWEC"), "params"]) <= set(own["params"])


def test_bad_arguments_get_messages_not_tracebacks(capsys, cache, tmp_path):
    with pytest.raises(SystemExit) as exc:
        main(["reproduce", "--datasets", "nope"])
    assert exc.value.code == 2 and "unknown dataset" in capsys.readouterr().err
    assert main(["reproduce", "--datasets", "wine", "--backend", "dask",
                 "--out", str(tmp_path)]) == 2
    assert "--scheduler" in capsys.readouterr().err
    assert main(["reproduce", "--datasets", "wine", "--size", "4", "--out", str(tmp_path)]) == 2
    assert "--size is the target size of --suite oob" in capsys.readouterr().err
    for size in ("0", "1.5", "many"):
        with pytest.raises(SystemExit) as exc:
            main(["reproduce", "--suite", "oob", "--size", size])
        assert exc.value.code == 2 and "--size" in capsys.readouterr().err


def test_oob_suite_writes_its_rows_and_report(tmp_path, cache):
    out = tmp_path / "oob"
    assert main(["reproduce", "--suite", "oob", "--datasets", "wine", "--repeats", "2",
                 "--trees", "10", "--size", "3", "--out", str(out), "--n-jobs", "1",
                 "--quiet"]) == 0
    df = pd.read_csv(out / "results.csv")
    assert len(df) == 2 * len(experiments.method_rows(suite="oob"))
    assert list(df["method"][:len(experiments.method_rows(suite="oob"))]) == \
        experiments.method_rows(suite="oob")
    assert (df.loc[df["method"] == "SDWEC-stable", "n_selected"] == 3).all()
    report = (out / "report.md").read_text()
    assert "--suite oob" in report and "target size K: 3" in report
    assert "## All splits (0–1)" in report and "no confirmation split" in report
    for heading in ("SDWEC-OOB against random @OOB", "SDWEC-stable against random @K",
                    "SDWEC-OOB against reduce-error OOB @K", "SDWEC-stable against bagging"):
        assert f"### {heading}" in report


def test_paper_table3_has_every_dataset():
    assert set(paper.TABLE3) == set(paper.PAPER_ROW_NAMES)
    assert paper.TABLE3["nsl_kdd"]["single"] == 0.9976 and paper.TABLE3["breast"]["QFWEC"] == 0.9736


def test_multiclass_reproduction_has_no_paper_numbers(tmp_path, cache):
    out = tmp_path / "mc"
    assert main(["reproduce", "--datasets", "wine", "--task", "multiclass", "--repeats", "1",
                 "--trees", "6", "--out", str(out), "--n-jobs", "1", "--quiet"]) == 0
    df = pd.read_csv(out / "results.csv")
    assert set(df["task"]) == {"multiclass"} and df["accuracy"].between(0, 1).all()
    table3 = (out / "report.md").read_text().split("## All methods")[0]
    assert f"{paper.TABLE3['wine']['QFWEC']:.4f}" not in table3  # the paper is binary only


# ---- hygiene: --version, lists of datasets, whole-step progress, no "± nan" ------------------

def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"sdwec {sdwec.__version__}"
    assert re.fullmatch(r"\d+\.\d+\.\d+", sdwec.__version__)


FRONTIER_SMALL = ["--trees", "6", "--points", "3", "--quiet"]


def test_frontier_takes_a_list_of_datasets_one_file_each(tmp_path, cache, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # The paper's names are accepted (heartC is heart); a name given twice runs once.
    assert main(["frontier", "--dataset", "wine, heartC,wine", *FRONTIER_SMALL]) == 0
    written = sorted(p.name for p in tmp_path.glob("frontier-*.csv"))
    assert written == ["frontier-heart-binary-s0.csv", "frontier-wine-binary-s0.csv"]
    # Each file is what a run on that dataset alone writes.
    for name in ("wine", "heart"):
        alone = tmp_path / f"{name}-alone.csv"
        assert main(["frontier", "--dataset", name, *FRONTIER_SMALL, "--out", str(alone)]) == 0
        assert alone.read_bytes() == (tmp_path / f"frontier-{name}-binary-s0.csv").read_bytes()


def test_frontier_refuses_one_out_file_for_several_datasets(tmp_path, cache, capsys):
    out = tmp_path / "f.csv"
    assert main(["frontier", "--dataset", "wine,sonar", *FRONTIER_SMALL, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--out names one CSV file" in err and "2 datasets" in err
    assert not out.exists()
    with pytest.raises(SystemExit) as exc:
        main(["frontier", "--dataset", "wine,nope"])
    assert exc.value.code == 2 and "unknown dataset(s) ['nope']" in capsys.readouterr().err


def test_options_of_another_command_are_refused(capsys):
    # Only `dashboard` passes unknown options on (to streamlit).
    with pytest.raises(SystemExit) as exc:
        main(["warm", "--server.port", "8600"])
    assert exc.value.code == 2
    assert "unrecognized arguments: --server.port 8600" in capsys.readouterr().err


def _bar_counts(text):
    """The ``n/total`` counters of every tqdm refresh in ``text``."""
    return re.findall(r"\|\s*([0-9.]+)/([0-9.]+) \[", text)


def test_warm_progress_counts_whole_pools(cache, capsys):
    assert main(["warm", "--datasets", "wine,sonar,heart", "--trees", "4", "--seeds", "1"]) == 0
    counts = _bar_counts(capsys.readouterr().err)
    assert counts and all(n.isdigit() and total == "3" for n, total in counts)
    assert counts[-1] == ("3", "3")
    assert main(["warm", "--datasets", "wine,sonar,heart", "--trees", "4", "--seeds", "1"]) == 0  # cached
    captured = capsys.readouterr()
    assert _bar_counts(captured.err)[-1] == ("3", "3") and "0 trained now" in captured.out


def test_frontier_pool_progress_is_in_whole_percent(tmp_path, cache, capsys):
    assert main(["frontier", "--dataset", "wine", "--trees", "6", "--points", "3",
                 "--out", str(tmp_path / "f.csv")]) == 0
    counts = _bar_counts(capsys.readouterr().err)
    assert counts and all(n.isdigit() and total == "100" for n, total in counts)
    assert counts[-1] == ("100", "100")


def test_one_repeat_report_prints_means_without_a_spread(tmp_path, cache):
    out = tmp_path / "one"
    assert main(["reproduce", "--datasets", "wine", "--repeats", "1", "--trees", "6",
                 "--out", str(out), "--n-jobs", "1", "--quiet"]) == 0
    report = (out / "report.md").read_text()
    assert "nan" not in report.lower()
    rows = [line for line in report.splitlines() if line.startswith("| wine")]
    assert rows and not any("±" in row for row in rows)  # one repeat has no spread
    df = pd.read_csv(out / "results.csv")
    bagging = df.loc[df["method"] == "bagging", "accuracy"].item()
    assert f"{bagging:.4f}" in report


class _FakePopen:
    """Records the processes ``sdwec dashboard`` starts instead of starting them."""

    started = []

    def __init__(self, argv, **kwargs):
        self.argv, self.kwargs, self.terminated = argv, kwargs, False
        _FakePopen.started.append(self)

    def wait(self):
        return 0

    def poll(self):
        return None

    def terminate(self):
        self.terminated = True


def test_dashboard_runs_streamlit_on_the_app_and_warms_in_the_background(monkeypatch, cache):
    import sdwec.__main__ as cli

    monkeypatch.setattr(cli.subprocess, "Popen", _FakePopen)
    monkeypatch.setattr(cli.signal, "signal", lambda *args: None)
    stopped = []
    monkeypatch.setattr(cli, "_stop_group", stopped.append)
    monkeypatch.delenv("SDWEC_WARM", raising=False)
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    _FakePopen.started = []
    assert main(["dashboard", "--port", "8642", "--server.headless", "true"]) == 0
    warmer, server = _FakePopen.started
    assert warmer.argv[1:] == ["-m", "sdwec", "warm", "--quiet"]
    assert warmer.kwargs["preexec_fn"] is cli._low_priority
    # Its own process group, stopped as a whole when the server has exited.
    assert warmer.kwargs["start_new_session"] and stopped == [warmer]
    assert (cache / "warm.log").exists()
    app = server.argv[3]
    launcher = Path(server.argv[1])
    assert launcher == Path(app).parent / "dashboard" / "launch.py" and launcher.is_file()
    assert server.argv[2:4] == ["run", app] and app.endswith("app.py")
    assert server.argv[4:] == ["--server.port", "8642", "--server.headless", "true"]
    assert server.kwargs["env"]["MALLOC_ARENA_MAX"] == "2"  # as scripts/dashboard.sh sets
    _FakePopen.started = []
    assert main(["dashboard", "--no-warm"]) == 0
    assert [p.argv[2] for p in _FakePopen.started] == ["run"]


def test_dashboard_gives_the_callers_signal_handlers_back(monkeypatch, cache):
    # Run in-process, it must not leave SIGINT ignored: every process started later would
    # inherit that, and `kill -INT` would no longer stop a dashboard started from here.
    import signal

    import sdwec.__main__ as cli

    monkeypatch.setattr(cli.subprocess, "Popen", _FakePopen)
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        assert main(["dashboard", "--no-warm"]) == 0
        assert {s: signal.getsignal(s) for s in before} == before
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def test_dashboard_without_streamlit_says_what_to_install(monkeypatch, capsys):
    import sdwec.__main__ as cli

    real = cli.importlib.util.find_spec
    monkeypatch.setattr(cli.importlib.util, "find_spec",
                        lambda name, *a: None if name == "streamlit" else real(name, *a))
    assert main(["dashboard", "--no-warm"]) == 2
    assert 'pip install "sdwec[dashboard]"' in capsys.readouterr().err


def test_dashboard_runs_a_copy_of_a_read_only_app_from_the_cache(monkeypatch, cache, tmp_path):
    import sdwec.__main__ as cli

    app = tmp_path / "site" / "sdwec" / "app" / "app.py"  # an installed app, read-only
    for name in ("app.py", "pages/explorer.py", ".streamlit/config.toml"):
        (app.parent / name).parent.mkdir(parents=True, exist_ok=True)
        (app.parent / name).write_text(f"# {name}\n")
    monkeypatch.setattr(cli, "_INSTALLED_APP", app)
    monkeypatch.setattr(cli.subprocess, "Popen", _FakePopen)
    monkeypatch.setattr(cli.signal, "signal", lambda *args: None)
    monkeypatch.setattr(cli.os, "access", lambda path, mode: Path(path) != app.parent)
    _FakePopen.started = []
    assert main(["dashboard", "--no-warm"]) == 0
    (server,) = _FakePopen.started
    copy = Path(server.argv[3])
    assert Path(server.argv[1]) == copy.parent / "dashboard" / "launch.py"
    assert copy == cache / f"app-{sdwec.__version__}" / "app.py"
    assert copy.read_bytes() == app.read_bytes()
    assert (copy.parent / "pages" / "explorer.py").read_bytes() == \
        (app.parent / "pages" / "explorer.py").read_bytes()
    assert (copy.parent / ".streamlit" / "config.toml").is_file()
    # A writable install, and a checkout, run in place.
    monkeypatch.setattr(cli.os, "access", lambda path, mode: True)
    _FakePopen.started = []
    assert main(["dashboard", "--no-warm"]) == 0
    assert _FakePopen.started[0].argv[3] == str(app)
    monkeypatch.setattr(cli.os, "access", lambda path, mode: False)
    assert cli._writable_app(cli._CHECKOUT_APP) == cli._CHECKOUT_APP


def _users_csv(path):
    """A small three-class CSV with an id column, as a user would bring it."""
    from sklearn.datasets import load_iris

    frame = load_iris(as_frame=True).frame.rename(columns={"target": "species"})
    frame.insert(0, "row_id", range(len(frame)))
    frame.to_csv(path, index=False)


def test_reproduce_and_frontier_run_on_a_users_csv(tmp_path, cache):
    data = tmp_path / "flowers.csv"
    _users_csv(data)
    out = tmp_path / "rep"
    assert main(["reproduce", "--csv", str(data), "--target", "species", "--exclude", "row_id",
                 "--repeats", "2", "--trees", "6", "--n-jobs", "1", "--quiet",
                 "--out", str(out)]) == 0
    df = pd.read_csv(out / "results.csv")
    assert set(df["dataset"]) == {"flowers.csv"} and set(df["repeat"]) == {0, 1}
    # Three classes: the multi-class task, chosen from the file; 10 % of 150 rows tested.
    assert (df["task"] == "multiclass").all() and (df["m_test"] == 15).all()
    assert set(df["method"]) == set(experiments.method_rows())
    points = tmp_path / "points.csv"
    assert main(["frontier", "--csv", str(data), "--target", "species", "--exclude",
                 "row_id", "--trees", "6", "--points", "3", "--quiet",
                 "--out", str(points)]) == 0
    assert (pd.read_csv(points)["method"] == "SDWEC").sum() == 3


def test_csv_options_refuse_what_does_not_fit(tmp_path, cache, capsys):
    data = tmp_path / "flowers.csv"
    _users_csv(data)
    assert main(["frontier", "--target", "species"]) == 2
    assert "--csv FILE" in capsys.readouterr().err
    assert main(["reproduce", "--datasets", "wine", "--csv", str(data)]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(["frontier", "--csv", str(data), "--target", "nope", "--quiet"]) == 2
    assert "nope" in capsys.readouterr().err
    assert main(["frontier"]) == 2
    assert "--dataset NAMES" in capsys.readouterr().err
