"""The paper's experiments (Table 3) plus modern peers, as reproducible jobs and reports.

One *job* is one (dataset, repeat): the pool of repeat ``r`` is trained with seed ``r`` (so a
rerun, or a run on a cluster, gives the same numbers), every combiner finds weights on the
validation split and is scored on the test split. :func:`reproduce` runs the jobs through
joblib (local processes by default, a Dask cluster on request), and :func:`write_report`
writes the per-row CSV and the Markdown summary.

Methods (``METHODS``): the paper's six (QFWEC, SDWEC-A, SDWEC-B, WMV, bagging, single) and
the peers: ``SDWEC-B select`` (SDWEC-B's support, unweighted), reduce-error, orientation
ordering and random subsets at SDWEC-B's ensemble size (the fair comparison), reduce-error and
the positive Lasso path with the size / alpha picked on the validation split, and NNLS
stacking. Nothing is chosen on the test split.
"""

from __future__ import annotations

import contextlib
import time

import joblib
import numpy as np
from threadpoolctl import threadpool_limits
import pandas as pd
from scipy import stats

from sdwec import combiners, paper
from sdwec.pool import load_pool
from sdwec.solver import PRESETS

__all__ = ["METHODS", "PAPER_METHODS", "run_job", "reproduce", "summary_table", "paper_table",
           "wins_ties_losses", "wilcoxon_table", "fair_comparison", "abstentions",
           "write_report"]

PAPER_METHODS = ["QFWEC", "SDWEC-A", "SDWEC-B", "WMV", "bagging", "single"]
PEER_METHODS = ["SDWEC-B select", "reduce-error @B", "orientation @B", "random @B",
                "reduce-error (val)", "lasso (val)", "NNLS"]
METHODS = PAPER_METHODS + PEER_METHODS
RANDOM_DRAWS = 20
TIE_DECIMALS = 4  # the paper prints four decimals; means equal at that precision are ties


def _pick_on_validation(val_acc, sizes):
    """Index of the best validation accuracy; ties go to the smallest ensemble."""
    val_acc = np.asarray(val_acc)
    best = np.flatnonzero(val_acc >= val_acc.max() - 1e-12)
    return best[np.argmin(np.asarray(sizes)[best])]


def run_job(dataset, repeat, n_trees=200, task="binary", tree_params=None, cache=True):
    """Every method on the pool of one (dataset, repeat).

    Parameters
    ----------
    dataset : str
    repeat : int
        Repeat index; also the seed of the split, the pool and the random subsets.
    n_trees : int, default=200
    task : {"binary", "multiclass"}, default="binary"
    tree_params : dict, optional
    cache : bool, default=True
        Use the pool disk cache.

    Returns
    -------
    list of dict
        One row per method: dataset, task, repeat, method, accuracy (test), val_accuracy,
        n_selected, sparsity, abstains, n_trees, m_val, m_test.
    """
    # The matrices are small (l x l); BLAS threads only fight the parallel jobs for the cores.
    with threadpool_limits(1):
        return _run_job(dataset, repeat, n_trees, task, tree_params, cache)


def _run_job(dataset, repeat, n_trees, task, tree_params, cache):
    pool = load_pool(dataset, task=task, n_trees=n_trees, seed=repeat, tree_params=tree_params,
                     n_jobs=1, cache=cache)
    val, test, prior = pool.votes("val"), pool.votes("test"), pool.prior
    l = pool.n_trees
    weights = {
        "QFWEC": combiners.qfwec(val),
        "SDWEC-A": combiners.sdwec(val, table=pool.table, **PRESETS["SDWEC-A"]),
        "SDWEC-B": combiners.sdwec(val, table=pool.table, **PRESETS["SDWEC-B"]),
        "WMV": combiners.wmv(val),
        "bagging": combiners.majority(val),
    }
    k_b = int(np.count_nonzero(weights["SDWEC-B"]))
    weights["SDWEC-B select"] = (weights["SDWEC-B"] > 0).astype(float)
    re_order = combiners.reduce_error_order(val, prior=prior)
    weights["reduce-error @B"] = combiners.ordered_weights(re_order, [k_b])[:, 0]
    weights["orientation @B"] = combiners.ordered_weights(combiners.orientation_order(val), [k_b])[:, 0]
    sizes = np.arange(1, l + 1)
    re_curve = combiners.ordered_curve(re_order, val, prior, sizes)
    weights["reduce-error (val)"] = combiners.ordered_weights(
        re_order, [sizes[_pick_on_validation(re_curve, sizes)]])[:, 0]
    _, W = combiners.lasso_path(val)
    lasso_sizes = np.count_nonzero(W, axis=0)
    weights["lasso (val)"] = W[:, _pick_on_validation(combiners.accuracies(W, val, prior),
                                                      lasso_sizes)]
    weights["NNLS"] = combiners.nnls_stacking(val)

    names = [name for name in METHODS if name in weights]
    W = np.column_stack([weights[name] for name in names])
    test_acc = dict(zip(names, combiners.accuracies(W, test, prior)))
    val_acc = dict(zip(names, combiners.accuracies(W, val, prior)))
    base = {"dataset": dataset, "task": task, "repeat": int(repeat), "n_trees": l,
            "m_val": val.m, "m_test": test.m}
    rows = []
    for name in METHODS:
        if name == "single":
            acc = float(np.mean(pool.single_test == pool.y_test))
            vacc = float(np.mean(pool.single_val == pool.y_val))
            n_sel, abstain = 1, False
        elif name == "random @B":
            acc = float(combiners.random_subset_curve(test, [k_b], RANDOM_DRAWS, repeat, prior)[0])
            vacc = float(combiners.random_subset_curve(val, [k_b], RANDOM_DRAWS, repeat, prior)[0])
            n_sel, abstain = k_b, k_b == 0
        else:
            acc, vacc = float(test_acc[name]), float(val_acc[name])
            n_sel = int(np.count_nonzero(weights[name]))
            abstain = n_sel == 0
        rows.append(dict(base, method=name, accuracy=acc, val_accuracy=vacc,
                         n_selected=n_sel, sparsity=1.0 - n_sel / l, abstains=bool(abstain)))
    return rows


@contextlib.contextmanager
def _backend(backend, scheduler):
    if backend in (None, "loky", "threading"):
        with joblib.parallel_config(backend=backend or "loky"):
            yield
        return
    if backend != "dask":
        raise ValueError(f"backend must be 'loky', 'threading' or 'dask'; got {backend!r}")
    if not scheduler:
        raise ValueError("--backend dask needs --scheduler ADDRESS (e.g. tcp://host:8786)")
    from dask.distributed import Client

    with Client(scheduler) as client, joblib.parallel_config(backend="dask"):
        client.wait_for_workers(1, timeout=60)
        yield


def reproduce(datasets, repeats=10, n_trees=200, task="binary", n_jobs=None, backend=None,
              scheduler=None, cache=True, progress=True, tree_params=None):
    """Run every (dataset, repeat) job and gather the rows.

    Parameters
    ----------
    datasets : list of str
    repeats : int, default=10
    n_trees : int, default=200
    task : {"binary", "multiclass"}, default="binary"
    n_jobs : int, optional
        Parallel jobs (joblib convention; default: all local cores, or all Dask workers).
    backend : {"loky", "threading", "dask"}, optional
    scheduler : str, optional
        Dask scheduler address (with ``backend="dask"``).
    cache : bool, default=True
    progress : bool, default=True
        Show a tqdm progress bar over the jobs.

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, repeat, method), sorted by dataset, repeat and method order;
        independent of the backend and of the number of workers.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    jobs = [(name, r) for name in datasets for r in range(repeats)]
    n_jobs = -1 if n_jobs is None else n_jobs
    with _backend(backend, scheduler):
        results = joblib.Parallel(n_jobs=n_jobs, return_as="generator_unordered")(
            joblib.delayed(run_job)(name, r, n_trees=n_trees, task=task,
                                    tree_params=tree_params, cache=cache)
            for name, r in jobs)
        if progress:
            from tqdm.auto import tqdm

            results = tqdm(results, total=len(jobs), desc="reproduce", unit="job")
        rows = [row for job in results for row in job]
    df = pd.DataFrame(rows)
    df["method"] = pd.Categorical(df["method"], categories=METHODS, ordered=True)
    df["dataset"] = pd.Categorical(df["dataset"], categories=list(dict.fromkeys(datasets)),
                                   ordered=True)
    df = df.sort_values(["dataset", "repeat", "method"]).reset_index(drop=True)
    df["method"] = df["method"].astype(str)
    df["dataset"] = df["dataset"].astype(str)
    return df


def _means(df, value="accuracy"):
    table = df.pivot_table(index="dataset", columns="method", values=value, aggfunc="mean",
                           observed=True, sort=False)
    return table[[m for m in METHODS if m in table.columns]]


def summary_table(df):
    """Mean ± standard deviation of the test accuracy per dataset and method (Markdown cells)."""
    grouped = df.groupby(["dataset", "method"], sort=False)["accuracy"]
    mean, std = grouped.mean().unstack(), grouped.std(ddof=1).unstack().fillna(0.0)
    order = [m for m in METHODS if m in mean.columns]
    cells = mean[order].map(lambda v: f"{v:.4f}") + " ± " + std[order].map(lambda v: f"{v:.4f}")
    return cells.loc[list(dict.fromkeys(df["dataset"]))]


def wins_ties_losses(df, reference="SDWEC-B"):
    """Wins/ties/losses of ``reference`` against every method, over the datasets' means."""
    means = _means(df).round(TIE_DECIMALS)
    out = []
    for method in means.columns:
        if method == reference:
            continue
        diff = means[reference] - means[method]
        out.append({"method": method, "wins": int((diff > 0).sum()),
                    "ties": int((diff == 0).sum()), "losses": int((diff < 0).sum())})
    return pd.DataFrame(out)


def wilcoxon_table(df, reference="SDWEC-B"):
    """Two-sided Wilcoxon signed-rank test of ``reference`` against every method over the
    datasets' mean accuracies (NaN when every difference is zero or fewer than 2 datasets)."""
    means = _means(df)
    out = []
    for method in means.columns:
        if method == reference:
            continue
        diff = (means[reference] - means[method]).to_numpy()
        if len(diff) < 2 or np.all(diff == 0):
            stat, p = np.nan, np.nan
        else:
            res = stats.wilcoxon(means[reference], means[method])
            stat, p = float(res.statistic), float(res.pvalue)
        out.append({"method": method, "n_datasets": len(diff),
                    "mean_difference": float(diff.mean()), "statistic": stat, "p_value": p})
    return pd.DataFrame(out)


def fair_comparison(df):
    """SDWEC-B against reduce-error, orientation and random subsets of the same size."""
    methods = ["SDWEC-B", "SDWEC-B select", "reduce-error @B", "orientation @B", "random @B"]
    means = _means(df)[[m for m in methods if m in set(df["method"])]]
    size = df[df["method"] == "SDWEC-B"].groupby("dataset", sort=False)["n_selected"].mean()
    means.insert(0, "mean size", size.loc[means.index])
    return means


def abstentions(df):
    """How many repeats each SDWEC preset abstained (every weight zero), per dataset."""
    sd = df[df["method"].isin(["SDWEC-A", "SDWEC-B"])]
    table = sd.pivot_table(index="dataset", columns="method", values="abstains", aggfunc="sum",
                           observed=True, sort=False).astype(int)
    table["repeats"] = df.groupby("dataset", sort=False)["repeat"].nunique()
    return table


def _paper_comparison(df):
    means = _means(df)
    sparsity = _means(df, "sparsity")
    std = df.groupby(["dataset", "method"], sort=False)["accuracy"].std(ddof=1).unstack()
    rows = []
    for name in means.index:
        row = {"dataset": paper.PAPER_ROW_NAMES.get(name, name)}
        for method in PAPER_METHODS:
            ours = f"{means.loc[name, method]:.4f} ± {std.loc[name, method]:.4f}"
            if method.startswith("SDWEC"):
                ours += f" ({sparsity.loc[name, method]:.2f})"
            # the paper's experiments are binary: no published number for other tasks
            binary = set(df.loc[df["dataset"] == name, "task"]) == {"binary"}
            published = paper.TABLE3.get(name, {}).get(method) if binary else None
            row[method] = ours + (f" / {published:.4f}" if published is not None else " / –")
        rows.append(row)
    return pd.DataFrame(rows)


def _markdown(frame, floatfmt=".4f"):
    """A pipe table of ``frame`` (numbers formatted with ``floatfmt``, NaN as "–")."""

    def cell(value):
        if isinstance(value, (bool, np.bool_)):
            return str(value)
        if isinstance(value, (int, np.integer)):
            return str(int(value))
        if isinstance(value, (float, np.floating)):
            return "–" if np.isnan(value) else format(value, floatfmt)
        return str(value)

    header = [str(c) for c in frame.columns]
    body = [[cell(v) for v in row] for row in frame.itertuples(index=False)]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    return "\n".join(lines)


def write_report(df, out_dir, command, wall_seconds):
    """Write ``results.csv`` (every row) and ``report.md`` (the tables) into ``out_dir``.

    The report contains no timestamps or timings other than ``wall_seconds`` in its header,
    so two runs with the same arguments produce the same CSV byte for byte.

    Returns
    -------
    dict
        Paths written.
    """
    from pathlib import Path

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    csv = out / "results.csv"
    df.to_csv(csv, index=False, float_format="%.10g")
    n_rep = df.groupby("dataset")["repeat"].nunique()
    lines = [
        "# SDWEC reproduction: the paper's Table 3 and modern peers", "",
        f"Command: `{command}`  ",
        f"Wall time: {wall_seconds:.0f} s; datasets: {df['dataset'].nunique()}; "
        f"repeats per dataset: {int(n_rep.min())}–{int(n_rep.max())}; "
        f"trees per pool: {int(df['n_trees'].iloc[0])}; task: {df['task'].iloc[0]}.", "",
        "Protocol: stratified 80/10/10 split per repeat (seed = repeat), bagged CART pool on "
        "the training split, weights found on the validation split, accuracy on the test "
        "split. Weighted plurality vote; ties and abstentions (every weight zero) go to the "
        "most frequent validation class (docs/combiners.md).", "",
        "## Table 3: ours (mean ± sd over repeats; SDWEC sparsity in parentheses) / paper", "",
        _markdown(_paper_comparison(df)), "",
        "## All methods: test accuracy, mean ± sd", "",
        _markdown(summary_table(df).reset_index()), "",
        "## Mean sparsity per method", "",
        _markdown(_means(df, "sparsity").reset_index(), ".3f"), "",
        "## SDWEC-B against each method: wins / ties / losses over datasets "
        f"(means at {TIE_DECIMALS} decimals)", "",
        _markdown(wins_ties_losses(df)), "",
        "## Wilcoxon signed-rank test, SDWEC-B against each method (over datasets' means)", "",
        _markdown(wilcoxon_table(df)), "",
        "## The fair comparison: pruning peers at SDWEC-B's ensemble size", "",
        _markdown(fair_comparison(df).reset_index()), "",
        "## Abstentions: repeats where every SDWEC weight was thresholded to zero", "",
        "Scored as the fallback: the ensemble predicts the most frequent validation class.", "",
        _markdown(abstentions(df).reset_index()), "",
    ]
    md = out / "report.md"
    md.write_text("\n".join(lines))
    return {"csv": csv, "report": md}


def timed_reproduce(**kwargs):
    """:func:`reproduce` and its wall time in seconds."""
    start = time.perf_counter()
    df = reproduce(**kwargs)
    return df, time.perf_counter() - start


def paper_table(rows):
    """Mean test accuracy per (dataset, method) beside Table 3's published value.

    Parameters
    ----------
    rows : pandas.DataFrame
        Rows of :func:`reproduce` or :func:`run_job` (``dataset``, ``method``, ``accuracy``,
        ``sparsity``, ``repeat``).

    Returns
    -------
    pandas.DataFrame
        ``dataset``, ``method``, ``paper``, ``ours``, ``sparsity``, ``repeats`` for the
        paper's six methods (``paper`` is NaN where Table 3 has no value).
    """
    rows = rows[rows["method"].isin(paper.TABLE3_METHODS)]
    means = rows.groupby(["dataset", "method"], sort=False).agg(
        ours=("accuracy", "mean"), sparsity=("sparsity", "mean"),
        repeats=("repeat", "nunique")).reset_index()
    means["paper"] = [paper.TABLE3.get(d, {}).get(m, np.nan)
                      for d, m in zip(means["dataset"], means["method"])]
    return pd.DataFrame(means[["dataset", "method", "paper", "ours", "sparsity", "repeats"]])
