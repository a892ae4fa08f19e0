"""The command line end to end: reproduce (local and Dask), frontier, help and errors."""

import pandas as pd
import pytest

from sdwec import experiments, paper
from sdwec.__main__ import main

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
