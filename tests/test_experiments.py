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
    mine = table[table["dataset"] == "mine"].iloc[0]
    assert np.isnan(mine["paper"]) and mine["ours"] == 0.5


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
