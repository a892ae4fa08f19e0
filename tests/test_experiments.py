"""Table 3 beside the paper: the means and the published cells, from hand-made rows."""

import numpy as np
import pandas as pd
import pytest

from sdwec import experiments, paper


def _rows():
    rows = []
    for repeat, (a, b) in enumerate([(0.90, 0.5), (0.80, 0.7)]):
        rows.append(dict(dataset="wine", method="SDWEC-B", repeat=repeat, accuracy=a, sparsity=b))
        rows.append(dict(dataset="wine", method="bagging", repeat=repeat, accuracy=a - 0.1,
                         sparsity=0.0))
        rows.append(dict(dataset="wine", method="random @B", repeat=repeat, accuracy=0.1,
                         sparsity=0.0))
    rows.append(dict(dataset="mine", method="bagging", repeat=0, accuracy=0.5, sparsity=0.0))
    return pd.DataFrame(rows)


def test_paper_table_means_and_published_values():
    table = experiments.paper_table(_rows())
    assert set(table["method"]) == {"SDWEC-B", "bagging"}  # only the paper's methods
    b = table[(table["dataset"] == "wine") & (table["method"] == "SDWEC-B")].iloc[0]
    assert b["ours"] == pytest.approx(0.85) and b["sparsity"] == pytest.approx(0.6)
    assert b["repeats"] == 2 and b["paper"] == paper.TABLE3["wine"]["SDWEC-B"]
    # Sample sd of 0.90 and 0.80: 0.1 / sqrt(2); one repeat has none.
    assert b["ours_sd"] == pytest.approx(0.1 / np.sqrt(2))
    mine = table[table["dataset"] == "mine"].iloc[0]
    assert np.isnan(mine["paper"]) and mine["ours"] == 0.5 and np.isnan(mine["ours_sd"])


def test_oob_headline_by_hand():
    rows = []
    for dataset, (oob_acc, bag, b, rnd) in {"a": (0.90, 0.89, 0.87, 0.88),
                                            "b": (0.80, 0.81, 0.78, 0.79)}.items():
        for method, acc in (("SDWEC-OOB", oob_acc), ("bagging", bag), ("SDWEC-B", b),
                            ("random @OOB", rnd)):
            for repeat in (10, 11):
                rows.append(dict(dataset=dataset, method=method, repeat=repeat, accuracy=acc,
                                 n_selected=1))
    df = pd.DataFrame(rows)
    gaps = experiments.oob_headline(df)
    # SDWEC-OOB's mean 0.85 against bagging 0.85, SDWEC-B 0.825, random 0.835.
    assert gaps["bagging"] == pytest.approx(0.0) and gaps["SDWEC-B"] == pytest.approx(2.5)
    assert gaps["random"] == pytest.approx(1.5)
    assert (gaps["splits"], gaps["datasets"]) == (2, 2)
    early = pd.DataFrame([dict(df.iloc[0], repeat=3)])
    assert len(experiments.confirmation_rows(pd.concat([df, early]))) == len(df)


def test_paper_table_interval_of_our_mean_by_hand():
    # Three repeats 0.80, 0.85, 0.90: mean 0.85, sd 0.05, t(0.975, 2) = 4.303 (a table):
    # half-width 4.303 * 0.05 / sqrt(3) = 0.1242.  Three of 0.98, 1.00, 1.00: the interval
    # is clipped at 1 (mean 0.9933, sd 0.01155, half 0.0287 -> [0.9647, 1]).
    rows = [dict(dataset="wine", method="bagging", repeat=r, accuracy=a, sparsity=0.0)
            for r, a in enumerate([0.80, 0.85, 0.90])]
    rows += [dict(dataset="sonar", method="bagging", repeat=r, accuracy=a, sparsity=0.0)
             for r, a in enumerate([0.98, 1.00, 1.00])]
    table = experiments.paper_table(pd.DataFrame(rows)).set_index("dataset")
    assert table.loc["wine", "ours_lo"] == pytest.approx(0.85 - 0.1242, abs=1e-4)
    assert table.loc["wine", "ours_hi"] == pytest.approx(0.85 + 0.1242, abs=1e-4)
    assert table.loc["sonar", "ours_lo"] == pytest.approx(0.9647, abs=1e-4)
    assert table.loc["sonar", "ours_hi"] == 1.0
    # One repeat: no interval (the _rows() fixture's "mine").
    mine = experiments.paper_table(_rows()).query("dataset == 'mine'").iloc[0]
    assert np.isnan(mine["ours_lo"]) and np.isnan(mine["ours_hi"])


def test_paper_agreement_is_the_interval_of_a_difference_of_two_means():
    # sd 0.03 over 10 repeats against the paper's 10: t(0.975, 9) = 2.262 (a table), so
    # the half-width is 2.262 * 0.03 * sqrt(1/10 + 1/10) = 0.0304.  A gap of 0.02 agrees,
    # 0.04 is off, though both lie within 2 sd (0.06) of one split, the rule this replaces.
    # Three repeats, sd 0.01: t(0.975, 2) = 4.303, half-width 4.303 * 0.01 *
    # sqrt(1/3 + 1/10) = 0.0283: a gap of 0.025 agrees, 0.03 is off.
    table = pd.DataFrame({"paper": [0.90, 0.90, 0.90, 0.90, np.nan, 0.90, 0.95],
                          "ours": [0.92, 0.94, 0.925, 0.93, 0.5, 0.7, 1.0],
                          "ours_sd": [0.03, 0.03, 0.01, 0.01, 0.1, np.nan, 0.0],
                          "repeats": [10, 10, 3, 3, 10, 1, 4]})
    judged = experiments.paper_agreement(table)
    assert judged["tolerance"].iloc[:4].tolist() == pytest.approx(
        [0.0304, 0.0304, 0.0283, 0.0283], abs=1e-4)
    assert judged["agreement"].tolist() == [
        "agrees", "off", "agrees", "off", experiments.UNPUBLISHED, experiments.TOO_FEW,
        experiments.NO_SPREAD]
    assert judged["tolerance"].iloc[4:].isna().all()
    assert experiments.paper_disagreements(table) == {
        "off": 2, "compared": 4, "too_few": 1, "no_spread": 1, "min_repeats": 2,
        "level": 0.95}
    # Two repeats are judged, with t(0.975, 1) = 12.71: sd 0.01 allows
    # 12.71 * 0.01 * sqrt(1/2 + 1/10) = 0.0984.
    two = pd.DataFrame({"paper": [0.9, 0.9], "ours": [0.99, 1.0], "ours_sd": [0.01, 0.01],
                        "repeats": [2, 2]})
    assert experiments.paper_agreement(two)["agreement"].tolist() == ["agrees", "off"]
    # A stricter minimum leaves them unjudged.
    assert experiments.paper_disagreements(two, min_repeats=3)["too_few"] == 2


def test_oob_paired_by_hand():
    # Two datasets x three splits, 20 test rows each: SDWEC-OOB against bagging is
    # +1, 0, +2 rows on "a" and -1, +1, +1 rows on "b".
    ours = {"a": [0.80, 0.80, 0.80], "b": [0.70, 0.70, 0.70]}
    bag = {"a": [0.75, 0.80, 0.70], "b": [0.75, 0.65, 0.65]}
    rows = []
    for dataset in ("a", "b"):
        for repeat in range(3):
            for method, acc in (("SDWEC-OOB", ours[dataset][repeat]),
                                ("bagging", bag[dataset][repeat])):
                rows.append(dict(dataset=dataset, repeat=10 + repeat, method=method,
                                 accuracy=acc, m_test=20, n_selected=1))
    (diff,) = experiments.oob_paired(pd.DataFrame(rows))  # no SDWEC-B, no random rows
    assert (diff.first, diff.second) == ("SDWEC-OOB", "bagging")
    assert (diff.better, diff.tied, diff.worse) == (4, 1, 1)
    d = np.array([0.05, 0.0, 0.10, -0.05, 0.05, 0.05])
    assert diff.mean == pytest.approx(d.mean()) and diff.sd == pytest.approx(d.std(ddof=1))
    # Sign test, 4 of 5 differing pairs on one side: 2 * (1 + 5) / 32.
    assert diff.p_value == pytest.approx(12 / 32) and not diff.supported


def test_untrained_jobs_names_the_pools_not_on_disk(tmp_path, monkeypatch):
    from sdwec import pool

    monkeypatch.setenv("SDWEC_CACHE_DIR", str(tmp_path))
    assert experiments.untrained_jobs(["wine"], 2, n_trees=10) == [("wine", 0), ("wine", 1)]
    pool.load_pool("wine", "binary", n_trees=10, seed=1)  # trains and stores seed 1's pool
    assert experiments.untrained_jobs(["wine"], 2, n_trees=10) == [("wine", 0)]
    assert experiments.untrained_jobs(["wine"], 2, n_trees=20) == [("wine", 0), ("wine", 1)]


def test_report_cells_are_the_interval_of_the_mean_inside_one():
    import math

    from scipy import stats

    rows = pd.DataFrame({"dataset": ["wine"] * 4 + ["sonar"],
                         "method": ["SDWEC-B"] * 4 + ["SDWEC-B"],
                         "accuracy": [1.0, 1.0, 1.0, 0.9, 0.8],
                         "repeat": [0, 1, 2, 3, 0]})
    cells = experiments.summary_table(rows)
    values = np.array([1.0, 1.0, 1.0, 0.9])
    half = stats.t.ppf(0.975, 3) * values.std(ddof=1) / math.sqrt(4)
    # mean ± sd would print 0.975 ± 0.05 (past 1); the interval stops at 1.
    low = values.mean() - half
    assert cells.loc["wine", "SDWEC-B"] == f"{values.mean():.4f} [{low:.4f}, 1.0000]"
    assert cells.loc["sonar", "SDWEC-B"] == "0.8000"  # one repeat: no interval
