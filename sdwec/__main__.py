"""Command line: ``sdwec reproduce|frontier|warm`` (or ``python -m sdwec ...``).

``reproduce`` runs the paper's Table 3 experiment (plus modern peers) and writes a CSV of every
(dataset, repeat, method) row and a Markdown report; ``frontier`` writes the accuracy-vs-sparsity
points of an SDWEC λ sweep and of the peers' curves on one pool; ``warm`` trains the shipped
datasets' default pools into the disk cache. Run with ``--help`` for options.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from sdwec import datasets, experiments, frontier, pool, warm
from sdwec.errors import DataError


def _dataset_list(text):
    if text.strip().lower() == "all":
        return datasets.names()
    names = [name.strip() for name in text.split(",") if name.strip()]
    known = set(datasets.names())
    unknown = [name for name in names if name not in known]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown dataset(s) {unknown or text!r}; choose from {', '.join(datasets.names())} "
            "or 'all'")
    return names


def _positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _size(text):
    """A target size: an integer number of trees or a share of the pool in (0, 1]."""
    try:
        value = int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer or a share in (0, 1], "
                                             f"got {text!r}") from None
        if not 0 < value <= 1:
            raise argparse.ArgumentTypeError(f"a share must be in (0, 1], got {text}")
        return value
    if value < 1:
        raise argparse.ArgumentTypeError(f"a number of trees must be at least 1, got {text}")
    return value


_DEFAULT_OUT = {"paper": Path("results/reproduction"), "oob": Path("results/oob")}


def _program_name():
    """How the user started us: the ``sdwec`` console script or ``python -m sdwec``."""
    return "sdwec" if Path(sys.argv[0]).name == "sdwec" else "python -m sdwec"


def build_parser(prog="python -m sdwec"):
    """The argument parser of the command line.

    Parameters
    ----------
    prog : str, default="python -m sdwec"
        Program name shown in usage lines.

    Returns
    -------
    argparse.ArgumentParser
    """
    parser = argparse.ArgumentParser(
        prog=prog,
        description="SDWEC Explorer: reproduce the paper's experiments from the command line.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    rep = sub.add_parser(
        "reproduce", help="reproduce Table 3 (plus peers): CSV of every row + Markdown report",
        description="Train a bagged CART pool per (dataset, repeat) (seed = repeat; pools are "
                    "cached on disk), find every method's weights on the validation split and "
                    "score them on the test split. Writes OUT/results.csv and OUT/report.md. "
                    "A rerun with the same arguments reproduces every number. --suite oob runs "
                    "SDWEC fitted on out-of-bag votes at a target size instead, against full "
                    "bagging, random subsets and reduce-error at the same size (use "
                    "--repeats 30: splits 0-9 explore, 10-29 confirm).")
    rep.add_argument("--datasets", type=_dataset_list, default="all", metavar="NAMES",
                     help="comma-separated dataset names, or 'all' (default: all 11)")
    rep.add_argument("--repeats", type=_positive_int, default=10,
                     help="random 80/10/10 splits per dataset (default: 10, as in the paper)")
    rep.add_argument("--trees", type=_positive_int, default=200,
                     help="bagged CART trees per pool, l (default: 200, as in the paper)")
    rep.add_argument("--task", choices=["binary", "multiclass"], default="binary",
                     help="label task (default: binary, the paper's)")
    rep.add_argument("--suite", choices=list(_DEFAULT_OUT), default="paper",
                     help="paper: Table 3 and peers (default); oob: SDWEC on out-of-bag votes "
                          "at a target size (docs/oob.md)")
    rep.add_argument("--size", type=_size, default=None, metavar="K",
                     help="target size of the oob suite: trees (e.g. 40) or a share of the "
                          "pool (e.g. 0.2, the default)")
    rep.add_argument("--out", type=Path, default=None,
                     help="output folder (default: results/reproduction, or results/oob with "
                          "--suite oob)")
    rep.add_argument("--n-jobs", type=int, default=None,
                     help="parallel (dataset, repeat) jobs (default: all local cores / all Dask "
                          "workers)")
    rep.add_argument("--backend", choices=["loky", "threading", "dask"], default="loky",
                     help="joblib backend: loky (local processes, default), threading, or dask "
                          "(a Dask distributed cluster; needs --scheduler)")
    rep.add_argument("--scheduler", metavar="ADDRESS",
                     help="Dask scheduler address, e.g. tcp://10.0.0.5:8786 (with --backend dask)")
    rep.add_argument("--no-cache", action="store_true",
                     help="do not read or write the pool disk cache ($SDWEC_CACHE_DIR or "
                          "~/.cache/sdwec)")
    rep.add_argument("--quiet", action="store_true", help="no progress bar")

    fr = sub.add_parser(
        "frontier", help="accuracy-vs-sparsity points of an SDWEC sweep and the peers (CSV)",
        description="Sweep SDWEC's λ on a log grid (other parameters fixed, SDWEC-B's by "
                    "default) on one pool, add the peers' points and curves (bagging, WMV, "
                    "QFWEC, NNLS, single tree, reduce-error, orientation, random subsets, "
                    "positive Lasso path), and write them as CSV with a 'pareto' column.")
    fr.add_argument("--dataset", required=True, type=lambda t: _dataset_list(t)[0],
                    help="dataset name")
    fr.add_argument("--task", choices=["binary", "multiclass"], default="binary",
                    help="label task (default: binary)")
    fr.add_argument("--seed", type=int, default=0, help="split and pool seed (default: 0)")
    fr.add_argument("--trees", type=_positive_int, default=200,
                    help="bagged CART trees, l (default: 200)")
    fr.add_argument("--points", type=_positive_int, default=50,
                    help="λ values in the sweep (default: 50)")
    fr.add_argument("--lam-min", type=float, default=1e-3, help="smallest λ (default: 1e-3)")
    fr.add_argument("--lam-max", type=float, default=1e3, help="largest λ (default: 1e3)")
    fr.add_argument("--beta", type=float, default=15.0, help="β (default: 15, SDWEC-B)")
    fr.add_argument("--gamma", type=float, default=15.0, help="γ (default: 15, SDWEC-B)")
    fr.add_argument("--eps", type=float, default=1.0, help="ε (default: 1, SDWEC-B)")
    fr.add_argument("--out", type=Path, default=None,
                    help="CSV file (default: frontier-DATASET-TASK-sSEED.csv in the current "
                         "folder)")
    fr.add_argument("--n-jobs", type=int, default=None,
                    help="cores used to train the pool if it is not cached (default: all)")
    fr.add_argument("--oob", action="store_true",
                    help="add our out-of-bag methods (SDWEC-OOB, its λ path, reduce-error on "
                         "the same votes; slow on large pools: minutes on NSL-KDD)")
    fr.add_argument("--no-cache", action="store_true", help="do not use the pool disk cache")
    fr.add_argument("--quiet", action="store_true", help="no progress bar")

    wm = sub.add_parser(
        "warm", help="train the shipped datasets' default pools into the disk cache",
        description="Build every shipped dataset's default pools (binary task, l = 200, "
                    "one pool per default split: seeds 0 .. r - 1, r = 10 for the small UCI "
                    "sets, 3 for waveform, 1 for NSL-KDD; what the dashboard opens) into the "
                    "disk cache ($SDWEC_CACHE_DIR or ~/.cache/sdwec), cheapest first, on "
                    "every core; cached pools are skipped. scripts/dashboard.sh runs it in "
                    "the background.")
    wm.add_argument("--datasets", type=_dataset_list, default=None,
                    help="comma-separated names or 'all' (default: all)")
    wm.add_argument("--trees", type=_positive_int, default=200,
                    help="bagged CART trees per pool, l (default: 200)")
    wm.add_argument("--seeds", type=int, default=None,
                    help="warm seeds 0 .. N-1 of every dataset (default: each dataset's "
                         "default number of splits, as the dashboard opens it)")
    wm.add_argument("--n-jobs", type=int, default=-1,
                    help="cores that train each pool (default: -1, all)")
    wm.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def _tqdm_progress(quiet, desc):
    if quiet:
        return None, None
    bar = tqdm(total=1, desc=desc, unit="step")

    def progress(done, total, message):
        bar.total = total
        bar.set_postfix_str(message, refresh=False)
        bar.update(done - bar.n)

    return progress, bar


def _reproduce(args, argv, prog):
    if args.backend == "dask" and not args.scheduler:
        raise ValueError("--backend dask needs --scheduler ADDRESS")
    if args.size is not None and args.suite != "oob":
        raise ValueError("--size is the target size of --suite oob; the paper suite has none")
    df, wall = experiments.timed_reproduce(
        datasets=args.datasets, repeats=args.repeats, n_trees=args.trees, task=args.task,
        n_jobs=args.n_jobs, backend=args.backend, scheduler=args.scheduler,
        cache=not args.no_cache, progress=not args.quiet, suite=args.suite, size=args.size)
    command = f"{prog} " + " ".join(shlex.quote(a) for a in argv)
    write = experiments.write_oob_report if args.suite == "oob" else experiments.write_report
    paths = write(df, args.out or _DEFAULT_OUT[args.suite], command, wall)
    print(f"wrote {paths['csv']} and {paths['report']} ({len(df)} rows, {wall:.0f} s)")


def _frontier(args):
    if not args.lam_min > 0 or not args.lam_max >= args.lam_min:
        raise ValueError("need 0 < --lam-min <= --lam-max")
    progress, bar = _tqdm_progress(args.quiet, f"pool {args.dataset}")
    p = pool.load_pool(args.dataset, task=args.task, n_trees=args.trees, seed=args.seed,
                       n_jobs=args.n_jobs, progress=progress, cache=not args.no_cache)
    if bar is not None:
        bar.close()
    lams = np.logspace(np.log10(args.lam_min), np.log10(args.lam_max), args.points)
    df = pd.concat([frontier.sweep(p, lams, beta=args.beta, gamma=args.gamma, eps=args.eps),
                    frontier.peers(p, seed=args.seed,
                                   names=None if args.oob else frontier.paper_peers())],
                   ignore_index=True)
    front = frontier.pareto(df, accuracy="val_accuracy")
    df["pareto_val"] = False
    key = set(zip(front["method"], front["params"]))
    df["pareto_val"] = [(m, q) in key for m, q in zip(df["method"], df["params"])]
    out = args.out or Path(f"frontier-{args.dataset}-{args.task}-s{args.seed}.csv")
    out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(out, index=False, float_format="%.10g")
    print(f"wrote {out} ({len(df)} points)")


def _warm(args):
    if args.seeds is not None and args.seeds < 1:
        raise ValueError("--seeds must be at least 1")
    progress, bar = _tqdm_progress(args.quiet, "warm pools")
    seeds = None if args.seeds is None else range(args.seeds)
    results = warm.warm(args.datasets, n_trees=args.trees, seeds=seeds,
                        n_jobs=args.n_jobs, progress=progress)
    if bar is not None:
        bar.close()
    trained = [r for r in results if r.trained]
    print(f"{len(results)} pools warm ({len(trained)} trained now, "
          f"{sum(r.seconds for r in trained):.0f} s)")


def main(argv=None):
    """Run the command line (the ``sdwec`` console script and ``python -m sdwec``).

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit code: 0 on success, 2 when the data or arguments are wrong.  ``--help`` and
        unparsable arguments exit through :class:`SystemExit`, as argparse does.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    prog = _program_name()
    args = build_parser(prog).parse_args(argv)
    try:
        if args.command == "reproduce":
            _reproduce(args, argv, prog)
        elif args.command == "warm":
            _warm(args)
        else:
            _frontier(args)
    except (DataError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
