"""The paper's experiments (Table 3) plus modern peers, as reproducible jobs and reports.

One *job* is one (dataset, repeat): the pool of repeat ``r`` is trained with seed ``r`` (so a
rerun, or a run on a cluster, gives the same numbers), every combiner finds weights on the
validation split and is scored on the test split. :func:`reproduce` runs the jobs through
joblib (local processes by default, a Dask cluster on request), and :func:`write_report`
writes the per-row CSV and the Markdown summary.

The methods are those of :mod:`sdwec.methods`, in its order: one row per point method, and
per curve one row for each of its picks (``"<name> @B"``: at SDWEC-B's ensemble size, the
fair comparison; ``"<name> (val)"``: the size or alpha picked on the validation split).
Built in: the paper's six (QFWEC, SDWEC-A, SDWEC-B, WMV, bagging, single) and the peers:
``SDWEC-B select`` (SDWEC-B's support, unweighted), reduce-error, orientation ordering and
random subsets at SDWEC-B's size, reduce-error and the positive Lasso path picked on
validation, and NNLS stacking. Nothing is chosen on the test split. ``METHODS`` and
``PAPER_METHODS`` are computed from the registry when read, so a registered method is
included.

That is the ``"paper"`` suite. The ``"oob"`` suite (``suite="oob"``, ``python -m sdwec
reproduce --suite oob``) runs SDWEC fitted on out-of-bag votes at a target size K
(:mod:`sdwec.oob`) against full bagging, random subsets and reduce-error at the same size and
the paper's SDWEC-B; :func:`write_oob_report` reports splits 0-9 (exploration) and the later
ones (confirmation) separately.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
from scipy import stats
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from sdwec import comparison, intervals, methods, oob, paper
from sdwec.formatting import mean_interval
from sdwec.methods import FAIR_REFERENCE
from sdwec.pool import is_cached, load_pool

# METHODS and PAPER_METHODS are served by the module's __getattr__ (computed from the
# registry when read), which a linter cannot see.
__all__ = ["METHODS", "PAPER_METHODS",  # noqa: F822
           "method_rows", "run_job", "reproduce", "summary_table",
           "paper_table", "paper_agreement", "paper_disagreements", "PAPER_REPEATS",
           "MIN_REPEATS", "untrained_jobs", "confirmation_rows",
           "oob_headline", "oob_paired",
           "wins_ties_losses", "wilcoxon_table", "fair_comparison", "abstentions",
           "write_report", "EXPLORATION_SPLITS", "OOB_COMPARISONS", "oob_summary",
           "oob_dataset_table", "paired_comparison", "oob_targets", "write_oob_report"]

RANDOM_DRAWS = 20
TIE_DECIMALS = 4  # the paper prints four decimals; means equal at that precision are ties


def method_rows(source=None, suite="paper"):
    """Row names of a reproduction suite, in order (only methods of ``source`` if given)."""
    return [methods.row_name(m.name, pick) for m in methods.registered()
            if source in (None, m.source) for pick in m.picks_in(suite)]


def __getattr__(name):
    # Read from the registry each time, so a method registered after import is included.
    if name == "METHODS":
        return method_rows()
    if name == "PAPER_METHODS":
        return method_rows("paper")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _pick_on_validation(val_acc, sizes):
    """Index of the best validation accuracy; ties go to the smallest ensemble."""
    val_acc = np.asarray(val_acc)
    best = np.flatnonzero(val_acc >= val_acc.max() - 1e-12)
    return best[np.argmin(np.asarray(sizes)[best])]


def run_job(dataset, repeat, n_trees=200, task="binary", tree_params=None, cache=True,
            suite="paper", size=None):
    """Every method of a suite on the pool of one (dataset, repeat).

    Parameters
    ----------
    dataset : str or sdwec.datasets.Dataset
        A shipped dataset's name or a user's dataset (:func:`sdwec.datasets.from_csv`).
    repeat : int
        Repeat index; also the seed of the split, the pool and every randomised method.
    n_trees : int, default=200
    task : {"binary", "multiclass"}, default="binary"
    tree_params : dict, optional
    cache : bool, default=True
        Use the pool disk cache.
    suite : {"paper", "oob"}, default="paper"
        Which rows (:data:`sdwec.methods.SUITES`): the paper's Table 3 and peers, or SDWEC
        on out-of-bag votes at a target size with its references.
    size : int, float in (0, 1] or None
        Target size ``K`` of the ``"oob"`` suite (default 20 % of ``n_trees``).

    Returns
    -------
    list of dict
        One row per method and pick: dataset, task, repeat, method, accuracy (test),
        val_accuracy, n_selected, sparsity, abstains, n_trees, m_val, m_test.
    """
    if suite not in methods.SUITES:
        raise ValueError(f"suite must be one of {tuple(methods.SUITES)}; got {suite!r}")
    # The matrices are small (l x l); BLAS threads only fight the parallel jobs for the cores.
    with threadpool_limits(1):
        return _run_job(dataset, repeat, n_trees, task, tree_params, cache, suite, size)


def _run_job(dataset, repeat, n_trees, task, tree_params, cache, suite, size):
    pool = load_pool(dataset, task=task, n_trees=n_trees, seed=repeat, tree_params=tree_params,
                     n_jobs=1, cache=cache)
    l = pool.n_trees
    k = oob.target_size(size, l)
    options = {"seed": repeat, "random_draws": RANDOM_DRAWS, "size": k}
    evaluated = {}

    def evaluate(name):
        # A method's own row and the sizes it sets for "@B"/"@OOB" picks share one run.
        if name not in evaluated:
            evaluated[name] = methods.get(name).evaluate(pool, **options)
        return evaluated[name]

    def size_of(pick):
        return k if pick == "@K" else int(evaluate(methods.SIZE_REFERENCES[pick]).n_selected[0])

    base = {"dataset": getattr(dataset, "name", dataset), "task": task, "repeat": int(repeat), "n_trees": l,
            "m_val": pool.votes("val").m, "m_test": pool.votes("test").m}
    rows = []
    for method in methods.registered():
        for pick in method.picks_in(suite):
            if pick in ("", "(val)"):
                path = evaluate(method.name)
                j = _pick_on_validation(path.val_accuracy, path.n_selected) if pick else 0
            else:
                path, j = method.evaluate(pool, sizes=[size_of(pick)], **options), 0
            n_sel = int(path.n_selected[j])
            rows.append(dict(base, method=methods.row_name(method.name, pick),
                             accuracy=float(path.test_accuracy[j]),
                             val_accuracy=float(path.val_accuracy[j]), n_selected=n_sel,
                             sparsity=1.0 - n_sel / l, abstains=n_sel == 0))
    return rows


def untrained_jobs(datasets, repeats, n_trees=200, task="binary"):
    """The ``(dataset, repeat)`` jobs of :func:`reproduce` whose pool is not in the disk
    cache yet, so that running them trains it first (the slow part of a job).

    Parameters
    ----------
    datasets : list of str
    repeats : int
    n_trees : int, default=200
    task : {"binary", "multiclass"}, default="binary"

    Returns
    -------
    list of (str, int)
    """
    return [(name, r) for name in datasets for r in range(repeats)
            if not is_cached(name, task=task, n_trees=n_trees, seed=r)]


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
    from dask.distributed import Client  # dask is optional: imported only when asked for

    with Client(scheduler) as client, joblib.parallel_config(backend="dask"):
        client.wait_for_workers(1, timeout=60)
        yield


def reproduce(datasets, repeats=10, n_trees=200, task="binary", n_jobs=None, backend=None,
              scheduler=None, cache=True, progress=True, tree_params=None, suite="paper",
              size=None):
    """Run every (dataset, repeat) job and gather the rows.

    Parameters
    ----------
    datasets : list of str or sdwec.datasets.Dataset
        Shipped datasets by name, or users' datasets (from :func:`sdwec.datasets.from_csv`).
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
    tree_params : dict, optional
    suite : {"paper", "oob"}, default="paper"
        The rows (see :func:`run_job`).
    size : int, float in (0, 1] or None
        Target size ``K`` of the ``"oob"`` suite (default 20 % of ``n_trees``).

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, repeat, method), sorted by dataset, repeat and method order;
        independent of the backend and of the number of workers.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    if suite not in methods.SUITES:
        raise ValueError(f"suite must be one of {tuple(methods.SUITES)}; got {suite!r}")
    oob.target_size(size, n_trees)  # a bad size fails here, not in every job
    jobs = [(name, r) for name in datasets for r in range(repeats)]
    n_jobs = -1 if n_jobs is None else n_jobs
    with _backend(backend, scheduler):
        results = joblib.Parallel(n_jobs=n_jobs, return_as="generator_unordered")(
            joblib.delayed(run_job)(name, r, n_trees=n_trees, task=task,
                                    tree_params=tree_params, cache=cache, suite=suite,
                                    size=size)
            for name, r in jobs)
        if progress:
            results = tqdm(results, total=len(jobs), desc="reproduce", unit="job")
        rows = [row for job in results for row in job]
    df = pd.DataFrame(rows)
    df["method"] = pd.Categorical(df["method"], categories=method_rows(suite=suite),
                                  ordered=True)
    names = [getattr(d, "name", d) for d in datasets]  # a user's Dataset goes by its name
    df["dataset"] = pd.Categorical(df["dataset"], categories=list(dict.fromkeys(names)),
                                   ordered=True)
    df = df.sort_values(["dataset", "repeat", "method"]).reset_index(drop=True)
    df["method"] = df["method"].astype(str)
    df["dataset"] = df["dataset"].astype(str)
    return df


def _means(df, value="accuracy"):
    table = df.pivot_table(index="dataset", columns="method", values=value, aggfunc="mean",
                           observed=True, sort=False)
    return table[[m for m in method_rows() if m in table.columns]]


def _interval_cells(df):
    """Per (dataset, method): the mean test accuracy over the repeats and the 95 % interval
    of that mean (``sdwec.intervals``, inside [0, 1]) as text, ``0.9512 [0.9377, 0.9647]``;
    the mean alone where one repeat leaves no spread. Rows: datasets; columns: methods."""
    def cell(values):
        return mean_interval(*intervals.mean_interval(values.to_numpy(float), 0.0, 1.0), 4)

    return df.groupby(["dataset", "method"], sort=False)["accuracy"].agg(cell).unstack()


def summary_table(df):
    """The mean test accuracy over the repeats with the 95 % interval of that mean, per
    dataset and method (Markdown cells; the mean alone where one repeat leaves no spread)."""
    cells = _interval_cells(df)
    order = [m for m in method_rows() if m in cells.columns]
    return cells[order].loc[list(dict.fromkeys(df["dataset"]))]


def wins_ties_losses(df, reference=FAIR_REFERENCE):
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


def wilcoxon_table(df, reference=FAIR_REFERENCE):
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
    """SDWEC-B against its own selection unweighted and every method at the same size."""
    same_size = [FAIR_REFERENCE, f"{FAIR_REFERENCE} select"] + [
        name for name in method_rows() if name.endswith(" @B")]
    means = _means(df)[[m for m in same_size if m in set(df["method"])]]
    size = df[df["method"] == FAIR_REFERENCE].groupby("dataset", sort=False)["n_selected"].mean()
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
    cells = _interval_cells(df)
    rows = []
    for name in means.index:
        row = {"dataset": paper.PAPER_ROW_NAMES.get(name, name)}
        for method in method_rows("paper"):
            ours = cells.loc[name, method]
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


def _write_rows(df, out_dir):
    """``out_dir`` (created) and its ``results.csv`` of every row, written with 10
    significant digits so that a rerun gives the same file byte for byte."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    csv = out / "results.csv"
    df.to_csv(csv, index=False, float_format="%.10g")
    return out, csv


def write_report(df, out_dir, command, wall_seconds):
    """Write ``results.csv`` (every row) and ``report.md`` (the tables) into ``out_dir``.

    The report contains no timestamps or timings other than ``wall_seconds`` in its header,
    so two runs with the same arguments produce the same CSV byte for byte.

    Returns
    -------
    dict
        Paths written.
    """
    out, csv = _write_rows(df, out_dir)
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
        "## Table 3: ours (mean over repeats [95 % interval of the mean]; SDWEC sparsity in "
        "parentheses) / paper", "",
        _markdown(_paper_comparison(df)), "",
        "## All methods: test accuracy, mean [95 % interval of the mean]", "",
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


# --------------------------------------------------------------------------- the oob suite

EXPLORATION_SPLITS = 10
"""Splits ``0 .. 9`` of the oob suite explore (any setting is chosen on them); later splits
confirm."""

OOB_COMPARISONS = {
    "SDWEC-OOB": ("bagging", "random @OOB", "reduce-error OOB @K", "SDWEC-B"),
    "SDWEC-stable": ("bagging", "random @K", "reduce-error OOB @K", "SDWEC-B"),
}
"""The new methods and what each is compared with: full bagging, a random subset of the same
size (SDWEC-OOB's own size, which falls below K when even the largest λ selects fewer;
SDWEC-stable always keeps K), reduce-error on the same votes, the paper's SDWEC-B."""

_SPLIT_DECIMALS = 10  # split accuracies are ratios of row counts: equal at this precision


def _row_order(df):
    """Methods in the order of the frame (reproduce sorts rows by the suite's order)."""
    return list(dict.fromkeys(df["method"]))


def _dataset_means(df, value="accuracy"):
    table = df.pivot_table(index="dataset", columns="method", values=value, aggfunc="mean",
                           observed=True, sort=False)
    return table[[m for m in _row_order(df) if m in table.columns]]


def oob_summary(df):
    """Per method: mean over datasets of the mean test accuracy, its difference to bagging
    and to SDWEC-B (in points), and the mean number of trees kept."""
    means = _dataset_means(df)
    kept = _dataset_means(df, "n_selected")
    out = pd.DataFrame({"mean accuracy": means.mean(), "trees kept": kept.mean()})
    for ref in ("bagging", "SDWEC-B"):
        if ref in means.columns:
            out[f"vs {ref} (points)"] = 100 * (means.mean() - means[ref].mean())
    return out.rename_axis("method").reset_index()


def confirmation_rows(df, exploration=EXPLORATION_SPLITS):
    """The rows of the confirmation splits (split index ``>= exploration``)."""
    return df[df["repeat"] >= exploration]


def oob_headline(df):
    """SDWEC-OOB's mean test accuracy over datasets against its comparisons, in points.

    Returns
    -------
    dict
        ``"bagging"``, ``"SDWEC-B"`` and ``"random"`` (a random subset of SDWEC-OOB's own
        size): SDWEC-OOB minus each, in accuracy points (1 point = 0.01); ``"splits"`` and
        ``"datasets"``: what the means rest on.
    """
    means = _dataset_means(df).mean()
    refs = {"bagging": "bagging", "SDWEC-B": "SDWEC-B",
            "random": OOB_COMPARISONS["SDWEC-OOB"][1]}
    out = {name: 100 * (means["SDWEC-OOB"] - means[ref]) for name, ref in refs.items()}
    out.update(splits=int(df["repeat"].nunique()), datasets=int(df["dataset"].nunique()))
    return out


def oob_paired(df, method="SDWEC-OOB", alpha=comparison.ALPHA):
    """``method`` against bagging, SDWEC-B and a random subset of its size, pair by pair.

    A pair is one (dataset, split): both methods scored on the same test rows.  Each
    comparison is :func:`sdwec.comparison.paired_difference` over every pair (its mean equals
    :func:`oob_headline`'s difference when every dataset has as many splits), with its
    spread, better/tied/worse counts in whole test rows and a sign test.

    Parameters
    ----------
    df : pandas.DataFrame
        Rows of the ``oob`` suite (``dataset``, ``repeat``, ``method``, ``accuracy``,
        ``m_test``), e.g. :func:`confirmation_rows`.
    method : str, default "SDWEC-OOB"
    alpha : float, default 0.05

    Returns
    -------
    list of sdwec.comparison.PairedDifference
        One per reference present in ``df``, in the order bagging, SDWEC-B, random subset
        (its ``second`` is ``"a random subset of its size"``).
    """
    wide = df.pivot_table(index=["dataset", "repeat"], columns="method", values="accuracy",
                          aggfunc="first", observed=True, sort=False)
    rows = df.groupby(["dataset", "repeat"], sort=False)["m_test"].first().loc[wide.index]
    refs = ("bagging", "SDWEC-B", OOB_COMPARISONS[method][1])
    said = {refs[2]: "a random subset of its size"}
    out = []
    for ref in refs:
        if ref not in wide.columns:
            continue
        both = wide[[method, ref]].notna().all(axis=1)
        out.append(comparison.paired_difference(
            wide.loc[both, method].to_numpy(), wide.loc[both, ref].to_numpy(),
            rows[both].to_numpy(), names=(method, said.get(ref, ref)), alpha=alpha))
    return out


def oob_dataset_table(df):
    """The mean test accuracy per dataset and method with the 95 % interval of that mean
    (the mean alone where one split leaves no spread), and the mean trees kept."""
    accuracy = _interval_cells(df)
    kept = df.groupby(["dataset", "method"], sort=False)["n_selected"].mean().unstack()
    order = [m for m in _row_order(df) if m in accuracy.columns]
    cells = pd.DataFrame({m: [f"{accuracy.loc[d, m]} ({kept.loc[d, m]:.0f})"
                              for d in accuracy.index] for m in order}, index=accuracy.index)
    return cells.loc[list(dict.fromkeys(df["dataset"]))]


def _wilcoxon_p(a, b):
    # Rounded first: accuracies computed along different paths may differ in the last bit
    # where they are equal, and a tie must be a zero difference (dropped by the test), as it
    # is in the CSV (10 significant digits) the report can be rebuilt from.
    diff = np.round(np.asarray(a, dtype=float) - np.asarray(b, dtype=float), _SPLIT_DECIMALS)
    if len(diff) < 2 or np.all(diff == 0):
        return np.nan
    return float(stats.wilcoxon(diff).pvalue)


def paired_comparison(df, method, reference):
    """``method`` against ``reference``, paired by split, per dataset and over datasets.

    Returns
    -------
    pandas.DataFrame
        One row per dataset: the mean difference in points, wins/ties/losses over the splits
        (accuracies equal to 10 decimals tie) and the two-sided Wilcoxon signed-rank p over
        the splits; then a row "over datasets": wins/ties/losses of the datasets' means (at
        4 decimals, as in the paper suite's report) and the Wilcoxon p over those means.
    """
    acc = df[df["method"].isin([method, reference])].pivot_table(
        index=["dataset", "repeat"], columns="method", values="accuracy", observed=True,
        sort=False)
    rows = []
    for dataset, part in acc.groupby(level="dataset", sort=False):
        diff = np.round(part[method] - part[reference], _SPLIT_DECIMALS)
        rows.append({"dataset": dataset, "difference (points)": 100 * float(diff.mean()),
                     "wins": int((diff > 0).sum()), "ties": int((diff == 0).sum()),
                     "losses": int((diff < 0).sum()),
                     "Wilcoxon p": _wilcoxon_p(part[method], part[reference])})
    means = acc.groupby(level="dataset", sort=False).mean()
    diff = means[method].round(TIE_DECIMALS) - means[reference].round(TIE_DECIMALS)
    rows.append({"dataset": "over datasets",
                 "difference (points)": 100 * float((means[method] - means[reference]).mean()),
                 "wins": int((diff > 0).sum()), "ties": int((diff == 0).sum()),
                 "losses": int((diff < 0).sum()),
                 "Wilcoxon p": _wilcoxon_p(means[method], means[reference])})
    return pd.DataFrame(rows)


def _blocks(df, exploration=EXPLORATION_SPLITS):
    """(title, rows) of the exploration and confirmation splits, or of all splits."""
    last = int(df["repeat"].max())
    if last < exploration:
        return [(f"all splits (0–{last})", df)]
    return [(f"exploration: splits 0–{exploration - 1}", df[df["repeat"] < exploration]),
            (f"confirmation: splits {exploration}–{last}", df[df["repeat"] >= exploration])]


def oob_targets(df, exploration=EXPLORATION_SPLITS):
    """The out-of-bag study's targets (docs/oob.md), measured on the confirmation splits (Markdown lines).

    The better of the two new methods is chosen on the exploration splits (higher mean
    accuracy over datasets), never on the confirmation splits.
    """
    blocks = _blocks(df, exploration)
    explore, confirm = blocks[0][1], blocks[-1][1]
    if len(blocks) == 1:
        return ["Fewer splits than the exploration block: no confirmation split, so the "
                "targets are not assessed on this run."]
    means = _dataset_means(confirm)
    gap_bagging = 100 * (means["SDWEC-OOB"].mean() - means["bagging"].mean())
    gap_b = 100 * (means["SDWEC-OOB"].mean() - means["SDWEC-B"].mean())
    explored = _dataset_means(explore)[list(OOB_COMPARISONS)].mean()
    better = explored.idxmax()
    random = OOB_COMPARISONS[better][1]
    vs_random = paired_comparison(confirm, better, random).iloc[-1]

    def verdict(ok):
        return "met" if ok else "not met"

    n = means.shape[0]
    others = [f"{method} beats {refs[1]} on {row['wins']} of {n} (ties {row['ties']}, losses "
              f"{row['losses']}; p = {row['Wilcoxon p']:.3g})"
              for method, refs in OOB_COMPARISONS.items()
              for row in [paired_comparison(confirm, method, refs[1]).iloc[-1]]]
    return [
        f"- SDWEC-OOB against full bagging: {gap_bagging:+.2f} points (target: within 0.3 "
        f"points below): **{verdict(gap_bagging >= -0.3)}**.",
        f"- SDWEC-OOB against the paper's SDWEC-B: {gap_b:+.2f} points (target: at least +1): "
        f"**{verdict(gap_b >= 1.0)}**.",
        f"- The better new method on the exploration splits is {better} (mean "
        f"{explored[better]:.4f} against {explored.drop(better).iloc[0]:.4f}); on the "
        f"confirmation splits it beats {random} on {vs_random['wins']} of {n} datasets "
        f"(ties {vs_random['ties']}, losses {vs_random['losses']}; Wilcoxon p = "
        f"{vs_random['Wilcoxon p']:.3g}) (target: at least 7 of 10): "
        f"**{verdict(vs_random['wins'] >= 7)}**. Both, for the record: "
        + "; ".join(others) + ".",
    ]


def write_oob_report(df, out_dir, command, wall_seconds, exploration=EXPLORATION_SPLITS):
    """Write ``results.csv`` and ``report.md`` of the ``"oob"`` suite into ``out_dir``.

    The report has the study's targets (docs/oob.md; on the confirmation splits), then for the
    exploration and the confirmation splits separately (or all splits, when there are at
    most ``exploration``): the mean over datasets per method, every dataset's mean with its
    95 % interval and trees kept, and each new method against full bagging, a random subset
    of the same size, reduce-error on the same votes and SDWEC-B (wins/ties/losses and
    Wilcoxon p).

    Returns
    -------
    dict
        Paths written.
    """
    out, csv = _write_rows(df, out_dir)
    n_rep = df.groupby("dataset")["repeat"].nunique()
    k = df.loc[df["method"] == "random @K", "n_selected"]
    lines = [
        "# SDWEC on out-of-bag votes at a target size (the oob suite)", "",
        f"Command: `{command}`  ",
        f"Wall time: {wall_seconds:.0f} s; datasets: {df['dataset'].nunique()}; "
        f"splits per dataset: {int(n_rep.min())}–{int(n_rep.max())}; "
        f"trees per pool: {int(df['n_trees'].iloc[0])}; target size K: "
        f"{int(k.iloc[0]) if len(k) else '–'}; task: {df['task'].iloc[0]}.", "",
        "Protocol: as the paper suite (stratified 80/10/10 split per repeat, seed = repeat; "
        "weights found without the test split; accuracy on the test split). SDWEC-OOB, "
        "SDWEC-OOB weighted, SDWEC-stable and reduce-error OOB fit the out-of-bag votes of the "
        "training rows stacked with the validation votes; SDWEC-val K and the paper's methods "
        "fit the validation votes only (docs/oob.md). Differences are in accuracy points "
        "(1 point = 0.01).", "",
        f"Splits 0–{exploration - 1} explore and later splits confirm: nothing below is chosen "
        "on a confirmation split.", "",
        "## Targets of the study (docs/oob.md; confirmation splits)", "",
        *oob_targets(df, exploration), "",
    ]
    for title, part in _blocks(df, exploration):
        summary = oob_summary(part)
        for column in summary.columns[1:]:
            fmt = ".1f" if column == "trees kept" else ".2f" if "points" in column else ".4f"
            summary[column] = summary[column].map(lambda v, f=fmt: format(v + 0.0, f))
        lines += [f"## {title[0].upper()}{title[1:]}", "",
                  "### Mean over datasets", "",
                  _markdown(summary), "",
                  "### Test accuracy per dataset: mean [95 % interval of the mean] (mean "
                  "trees kept)", "",
                  _markdown(oob_dataset_table(part).reset_index()), ""]
        for method, references in OOB_COMPARISONS.items():
            for reference in references:
                lines += [f"### {method} against {reference}", "",
                          _markdown(paired_comparison(part, method, reference), ".3f"), ""]
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
        ``dataset``, ``method``, ``paper``, ``ours``, ``ours_lo``, ``ours_hi`` (the 95 %
        t interval of our mean over the repeats, clipped to [0, 1]; NaN for one repeat,
        :func:`sdwec.intervals.mean_interval`), ``ours_sd`` (sample standard deviation over
        the repeats, NaN for one: what :func:`paper_agreement` needs), ``sparsity``,
        ``repeats`` for the paper's six methods (``paper`` is NaN where Table 3 has no value).
    """
    rows = rows[rows["method"].isin(paper.TABLE3_METHODS)]
    groups = rows.groupby(["dataset", "method"], sort=False)
    means = groups.agg(
        ours=("accuracy", "mean"), ours_sd=("accuracy", lambda a: a.std(ddof=1)),
        sparsity=("sparsity", "mean"), repeats=("repeat", "nunique")).reset_index()
    bounds = [intervals.mean_interval(acc.to_numpy(dtype=float), 0.0, 1.0)[1:]
              for _, acc in groups["accuracy"]]
    means["ours_lo"] = [lo for lo, _ in bounds]
    means["ours_hi"] = [hi for _, hi in bounds]
    means["paper"] = [paper.TABLE3.get(d, {}).get(m, np.nan)
                      for d, m in zip(means["dataset"], means["method"])]
    return pd.DataFrame(means[["dataset", "method", "paper", "ours", "ours_lo", "ours_hi",
                               "ours_sd", "sparsity", "repeats"]])


#: Repeats behind each of Table 3's published means (the paper's 10 random splits).
PAPER_REPEATS = 10

#: Repeats a Table 3 cell needs before it is judged against the paper: two, the fewest with
#: a spread.  The t quantile of the rule (:func:`paper_agreement`) carries how little the sd
#: of a few repeats says: 12.7 at two repeats, 4.3 at three, 2.26 at ten.
MIN_REPEATS = 2

#: :func:`paper_agreement`'s verdicts.
AGREES, OFF = "agrees", "off"
TOO_FEW, NO_SPREAD, UNPUBLISHED = "too few repeats", "no spread (sd 0)", "not in the paper"


def paper_agreement(table, level=intervals.LEVEL, paper_repeats=PAPER_REPEATS,
                    min_repeats=MIN_REPEATS):
    """Whether each Table 3 cell agrees with the paper, judged as two means, not one split.

    The published value is a mean over the paper's ``paper_repeats`` repeats and ours a mean
    over ``r``; the paper gives no spread, so its repeats are assumed to spread as ours (sd
    ``s``).  Under "same protocol, same expected accuracy" the difference of the two means
    then has standard error ``s · sqrt(1/r + 1/paper_repeats)``, with ``r - 1`` degrees of
    freedom (the only spread measured is ours).  A cell **agrees** when

        ``|ours - paper| <= t((1 + level) / 2, r - 1) · s · sqrt(1/r + 1/paper_repeats)``,

    the half-width of the ``level`` interval of the difference of the two means (at r = 10:
    2.26 · s · 0.447 = 1.01 s, where a gap within two single-split sds, 2 s, let through
    twice as much).

    Cells are not judged without a published value, with fewer than ``min_repeats`` repeats
    (no spread to measure), or with an sd of 0 (every repeat scored the same, e.g. 1.000 on
    wine's 18 test rows: the spread is below one test row, not zero, so any gap would
    count as "off").

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`paper_table`'s output (``paper``, ``ours``, ``ours_sd``, ``repeats``).
    level : float, default 0.95
    paper_repeats : int, default :data:`PAPER_REPEATS`
    min_repeats : int, default :data:`MIN_REPEATS`

    Returns
    -------
    pandas.DataFrame
        ``table`` with ``tolerance`` (the half-width above; NaN where not judged) and
        ``agreement``: :data:`AGREES`, :data:`OFF`, :data:`TOO_FEW`, :data:`NO_SPREAD` or
        :data:`UNPUBLISHED`.
    """
    out = table.copy()
    r = out["repeats"].to_numpy(dtype=float)
    sd = out["ours_sd"].to_numpy(dtype=float)
    published = out["paper"].notna().to_numpy()
    enough = published & (r >= max(2, int(min_repeats)))
    judged = enough & (np.nan_to_num(sd) > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = stats.t.ppf((1 + level) / 2, np.where(judged, r - 1, 1))
        tolerance = np.where(judged, t * sd * np.sqrt(1 / r + 1 / paper_repeats), np.nan)
    gap = (out["ours"] - out["paper"]).abs().to_numpy(dtype=float)
    out["tolerance"] = tolerance
    out["agreement"] = np.select(
        [~published, ~enough, ~judged, gap <= tolerance],
        [UNPUBLISHED, TOO_FEW, NO_SPREAD, AGREES], default=OFF)
    return out


def paper_disagreements(table, level=intervals.LEVEL, min_repeats=MIN_REPEATS):
    """How many of Table 3's cells disagree with the paper (:func:`paper_agreement`'s rule).

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`paper_table`'s output (``paper``, ``ours``, ``ours_sd``, ``repeats``).
    level : float, default 0.95
    min_repeats : int, default :data:`MIN_REPEATS`

    Returns
    -------
    dict
        ``"off"``: judged cells farther from the paper than the interval of the difference
        of the two means allows; ``"compared"``: the judged cells (a published value,
        ``min_repeats`` repeats or more, sd > 0); ``"too_few"``: cells with a published
        value but fewer repeats; ``"no_spread"``: cells with enough repeats but an sd of 0;
        ``"min_repeats"``; ``"level"``.
    """
    verdict = paper_agreement(table, level=level, min_repeats=min_repeats)["agreement"]
    counts = verdict.value_counts()
    return {"off": int(counts.get(OFF, 0)),
            "compared": int(counts.get(OFF, 0) + counts.get(AGREES, 0)),
            "too_few": int(counts.get(TOO_FEW, 0)), "no_spread": int(counts.get(NO_SPREAD, 0)),
            "min_repeats": max(2, int(min_repeats)), "level": float(level)}
