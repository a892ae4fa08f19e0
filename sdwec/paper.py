"""The paper's published numbers, transcribed as data.

Table 3 of Özgür, Nar & Erdem (2018), "Sparsity-driven weighted ensemble classifier"
(``/work/shared/paper/sdwec.tex``, ``table-comparison``): mean test accuracies over 10 random
80/10/10 splits with 200 bagged CART trees, and SDWEC's sparsity in parentheses. Row names
are mapped to this package's dataset names (the paper's "P" suffix marks datasets it
preprocessed; "heartC" is the Cleveland heart-disease data).
"""

from __future__ import annotations

__all__ = ["TABLE3_METHODS", "TABLE3", "TABLE3_SPARSITY", "PAPER_ROW_NAMES", "PRESETS",
           "MEAN_SPARSITY"]

TABLE3_METHODS = ("QFWEC", "SDWEC-A", "SDWEC-B", "WMV", "bagging", "single")

# dataset: (QFWEC, SDWEC-A, SDWEC-B, WMV, bagging, singleC), as printed
_ROWS = {
    "breast": (0.9736, 0.9737, 0.9532, 0.9355, 0.9722, 0.9400),
    "heart": (0.8085, 0.8186, 0.8279, 0.8118, 0.8118, 0.7268),
    "ionosphere": (0.9344, 0.9371, 0.9427, 0.9371, 0.9342, 0.8799),
    "sonar": (0.8088, 0.8136, 0.8126, 0.7893, 0.8088, 0.7367),
    "vehicle": (0.9788, 0.9693, 0.9539, 0.9681, 0.9670, 0.9634),
    "vote": (0.9576, 0.9703, 0.9525, 0.8509, 0.9703, 0.9533),
    "waveform": (0.8812, 0.8652, 0.8600, 0.8634, 0.8620, 0.8220),
    "wdbc": (0.9595, 0.9507, 0.9418, 0.9489, 0.9507, 0.9138),
    "wine": (0.9722, 0.9722, 0.9605, 0.7514, 0.9719, 0.9500),
    "wpbc": (0.7989, 0.8036, 0.7477, 0.7850, 0.7750, 0.6911),
    "nsl_kdd": (0.9828, 0.9766, 0.9849, 0.9610, 0.9613, 0.9976),
}

TABLE3 = {name: dict(zip(TABLE3_METHODS, row)) for name, row in _ROWS.items()}
"""dataset -> method -> published mean test accuracy."""

TABLE3_SPARSITY = {
    "SDWEC-A": {name: 0.0 for name in _ROWS},
    "SDWEC-B": {"breast": 0.90, "heart": 0.90, "ionosphere": 0.92, "sonar": 0.88,
                "vehicle": 0.91, "vote": 0.84, "waveform": 0.93, "wdbc": 0.88, "wine": 0.89,
                "wpbc": 0.91, "nsl_kdd": 0.88},
}
"""method -> dataset -> published sparsity (SDWEC-A: 0 everywhere)."""

MEAN_SPARSITY = {"SDWEC-A": 0.00, "SDWEC-B": 0.90}
"""The table footer's mean sparsities."""

PAPER_ROW_NAMES = {
    "breast": "breast", "heart": "heartC", "ionosphere": "ionosphere", "sonar": "sonarP",
    "vehicle": "vehicleP", "vote": "voteP", "waveform": "waveform", "wdbc": "wdbcP",
    "wine": "wine", "wpbc": "wpbcP", "nsl_kdd": "NSL-KDD",
}
"""Package dataset name -> row label in the paper."""

PRESETS = {
    "SDWEC-A": {"lam": 0.1, "beta": 35.0, "gamma": 5.0, "eps": 0.1},
    "SDWEC-B": {"lam": 10.0, "beta": 15.0, "gamma": 15.0, "eps": 1.0},
}
"""Table 3's footer parameters: the one definition of the presets (``sdwec.solver.PRESETS`` is
this dict, imported)."""

TABLE5_L = (100, 200, 500, 1000)
"""Classifier counts ``l`` of Table 5's columns."""

TABLE5 = {
    "breast": (547, (0.05, 0.10, 0.48, 1.63)),
    "ionosphere": (280, (0.04, 0.07, 0.31, 1.01)),
    "wpbc": (155, (0.03, 0.06, 0.26, 0.89)),
    "wdbc": (456, (0.05, 0.09, 0.44, 1.34)),
    "wine": (143, (0.03, 0.05, 0.23, 0.91)),
    "waveform": (4000, (0.43, 0.96, 3.01, 7.78)),
    "vote": (186, (0.03, 0.07, 0.24, 0.97)),
    "vehicle": (667, (0.06, 0.18, 0.73, 1.83)),
    "sonar": (167, (0.03, 0.06, 0.23, 0.83)),
    "heart": (239, (0.03, 0.07, 0.25, 1.02)),
    "nsl_kdd": (100778, (12.73, 25.95, 80.23, 204.59)),
}
"""Table 5 (SDWEC weight-finding seconds, k = 25): dataset -> (training rows m, seconds for
each l in :data:`TABLE5_L`), as printed (added by the dashboard's Paper page)."""

__all__ = [*__all__, "TABLE5", "TABLE5_L"]
