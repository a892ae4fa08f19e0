"""A literal, slow transcription of the paper's Algorithm 1, for tests and benchmarks only
(here, not in ``sdwec``: the library ships no test-only code).

Straight from the paper: H and y as given (no correctness matrix, no row collapsing), S as a
dense m x m diagonal matrix (``dense=True``, small m only) or as a vector of row scales, the
appendix's closed form for C_r, numpy's Cholesky, and exactly the lines of Algorithm 1.
B_r = f'(ŵ_r) - 2 C_r ŵ_r is written with plain exponentials, as one would by hand.
"""

import numpy as np


def literal_sdwec(H, y, lam, beta, gamma, eps, iterations=25, dense=True):
    """Return the raw weights after ``iterations`` passes of Algorithm 1, lines 6-13."""
    H = np.asarray(H, dtype=float)
    y = np.asarray(y, dtype=float)
    m, l = H.shape
    w = np.ones(l)                                            # line 2
    for _ in range(iterations):                               # line 5
        w_hat = w.copy()                                      # line 6
        g = gamma / (np.abs(w_hat) + eps)                     # line 7
        S_diag = 1.0 / (np.abs(H @ w_hat) + eps)              # line 8, eq. 5
        u = np.exp(w_hat * g)
        C = g * (4 * u**2 + 8 * u**3 + 4 * u**4 + beta * u + 2 * beta * u**3 + beta * u**5) / (
            2 * (u**3 + u**2 + u + 1) ** 2
        )                                                     # line 9, appendix
        # d/dw of (1/g)log(e^{-gw}+e^{gw}) + (beta/g)log(e^{-gw}+1) at w_hat
        d1 = (u - 1 / u) / (u + 1 / u) - beta * (1 / u) / (1 / u + 1)
        vB = d1 - 2 * C * w_hat                               # line 9
        if dense:
            SH = np.diag(S_diag) @ H
        else:
            SH = S_diag[:, None] * H
        M = 2 * lam / m * SH.T @ SH + 2 / l * (np.diag(C) + np.eye(l))   # line 10
        b = 2 * lam / m * SH.T @ y + (2 * w_hat - vB) / l                # line 11
        L = np.linalg.cholesky(M)                                        # line 12
        w = np.linalg.solve(L.T, np.linalg.solve(L, b))
        w = np.maximum(w, 0)                                             # line 13
    return w


def literal_plurality_pairs(P, y, voted=None):
    """The plurality reading's (row, rival) matrix written out with loops.

    One row per rival class some member voted for: +1 where a member votes the label, -1
    where it votes the rival, 0 elsewhere (another class, or no vote); a row whose members
    all vote the label (or none votes) gives its +1/0 row once.
    """
    rows = []
    for s in range(len(y)):
        members = [r for r in range(P.shape[1]) if voted is None or voted[s, r]]
        rivals = sorted({P[s, r] for r in members} - {y[s]})
        for c in rivals or [None]:
            rows.append([1 if r in members and P[s, r] == y[s]
                         else -1 if r in members and P[s, r] == c else 0
                         for r in range(P.shape[1])])
    return np.array(rows, dtype=float)
