"""Command line: ``sdwec reproduce|frontier|warm|dashboard`` (or ``python -m sdwec ...``).

``reproduce`` runs the paper's Table 3 experiment (plus modern peers) and writes a CSV of every
(dataset, repeat, method) row and a Markdown report; ``frontier`` writes the accuracy-vs-sparsity
points of an SDWEC λ sweep and of the peers' curves on one pool per dataset; ``warm`` trains the
shipped datasets' default pools into the disk cache; ``dashboard`` starts the Streamlit app
installed with the package (``pip install "sdwec[dashboard]"``). Run with ``--help`` for options.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from sdwec import __version__, datasets, experiments, frontier, pool, warm
from sdwec.cache import CacheKeyError, cache_dir
from sdwec.errors import DataError

# The dashboard: installed inside the package (sdwec/app/, mapped from the checkout's top
# level at build time: pyproject.toml), or a checkout's own app.py when run from a checkout.
_INSTALLED_APP = Path(__file__).resolve().parent / "app" / "app.py"
_CHECKOUT_APP = Path(__file__).resolve().parent.parent / "app.py"
#: Seconds a child of ``sdwec dashboard`` has to exit after SIGTERM before SIGKILL.
STOP_GRACE_SECONDS = 5.0


def _dataset_list(text):
    if text.strip().lower() == "all":
        return datasets.names()
    names, unknown = [], []
    for name in (part.strip() for part in text.split(",")):
        if not name:
            continue
        try:
            names.append(datasets.canonical_name(name))  # the paper's names are accepted too
        except ValueError:
            unknown.append(name)
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown dataset(s) {unknown or text!r}; choose from {', '.join(datasets.names())} "
            "or 'all'")
    return list(dict.fromkeys(names))


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
        description="SDWEC Explorer from the command line. 'reproduce' reruns the paper's "
                    "Table 3 experiment (with modern peers, or the out-of-bag suite) and writes "
                    "a CSV of every row and a Markdown report; 'frontier' writes the "
                    "accuracy-vs-sparsity points of an SDWEC λ sweep and of the peers, one CSV "
                    "per dataset; 'warm' trains the shipped datasets' default pools into the "
                    "disk cache, so the dashboard opens them without training; 'dashboard' "
                    "starts the Streamlit dashboard. Run '%(prog)s COMMAND --help' for a "
                    "command's options.")
    parser.add_argument("--version", action="version", version=f"sdwec {__version__}")
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
    rep.add_argument("--datasets", type=_dataset_list, default=None, metavar="NAMES",
                     help="comma-separated dataset names, or 'all' (default: all 11)")
    _csv_options(rep)
    rep.add_argument("--repeats", type=_positive_int, default=10,
                     help="random 80/10/10 splits per dataset (default: 10, as in the paper)")
    rep.add_argument("--trees", type=_positive_int, default=200,
                     help="bagged CART trees per pool, l (default: 200, as in the paper)")
    rep.add_argument("--task", choices=["binary", "multiclass"], default=None,
                     help="label task (default: binary, the paper's; for --csv: binary for "
                          "two classes, multiclass otherwise)")
    rep.add_argument("--suite", choices=list(_DEFAULT_OUT), default="paper",
                     help="paper: Table 3 and peers (default); oob: SDWEC on out-of-bag votes "
                          "at a target size (SDWEC-OOB, beyond the paper)")
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
                    "default) on one pool per dataset, add the peers' points and curves "
                    "(bagging, WMV, QFWEC, NNLS, single tree, reduce-error, orientation, random "
                    "subsets, positive Lasso path), and write them as CSV, one file per "
                    "dataset. The 'pareto_val' column marks the front of validation accuracy "
                    "against sparsity over every method's points together (SDWEC's and the "
                    "peers'; abstaining points are never on it): an SDWEC point is marked "
                    "only where no point of any method is as accurate and as sparse and better "
                    "on one. For SDWEC's own front, take "
                    "sdwec.frontier.pareto(df[df['method'] == 'SDWEC']) of the CSV read with "
                    "pandas.")
    fr.add_argument("--dataset", "--datasets", dest="dataset", default=None,
                    type=_dataset_list, metavar="NAMES",
                    help="dataset name, several comma-separated (one CSV each), or 'all' "
                         "(or --csv)")
    _csv_options(fr)
    fr.add_argument("--task", choices=["binary", "multiclass"], default=None,
                    help="label task (default: binary; for --csv: binary for two classes, "
                         "multiclass otherwise)")
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
                    help="CSV file, for one dataset (default: frontier-DATASET-TASK-sSEED.csv "
                         "in the current folder, one per dataset)")
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
                    "every core; cached pools are skipped. 'sdwec dashboard' runs it "
                    "in the background.")
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

    db = sub.add_parser(
        "dashboard", help="start the dashboard (needs pip install \"sdwec[dashboard]\")",
        allow_abbrev=False,
        usage=f"{prog} dashboard [-h] [--no-warm] [--port PORT] [STREAMLIT OPTIONS ...]",
        description="Start the SDWEC Explorer dashboard installed with sdwec (streamlit run "
                    "with its settings), from any folder. Unless --no-warm is given (or "
                    "SDWEC_WARM=0), 'sdwec warm' trains the shipped datasets' default pools "
                    "into the disk cache in the background at low priority (log: warm.log in "
                    "the cache folder); Ctrl-C or SIGTERM stops the server and the warm-up "
                    "with its worker processes. Other options go to 'streamlit run', e.g. "
                    "--server.headless true --server.address 0.0.0.0.")
    db.add_argument("--no-warm", action="store_true",
                    help="do not warm the default pools in the background")
    db.add_argument("--port", type=_positive_int, default=None,
                    help="port to serve on (default: Streamlit's, 8501)")
    return parser


def _csv_options(parser):
    """``--csv`` and ``--target``: a user's CSV file instead of the shipped datasets."""
    parser.add_argument("--csv", type=Path, default=None, metavar="FILE",
                        help="your own CSV file instead of the shipped datasets: a header "
                             "row, one column the class label (--target), the others "
                             "features; rows with a missing cell are dropped")
    parser.add_argument("--target", default=None, metavar="COLUMN",
                        help="the label column of --csv (default: its last column)")
    parser.add_argument("--exclude", default="", metavar="COLUMNS",
                        help="comma-separated columns of --csv that are not features "
                             "(identifiers, free text)")


def _chosen_datasets(args, default):
    """The shipped datasets named on the command line, or the user's CSV read into a
    :class:`~sdwec.datasets.Dataset` (its rows are kept in the pool cache, keyed by their
    content)."""
    names = args.datasets if hasattr(args, "datasets") else args.dataset
    if args.csv is None:
        if args.target is not None or args.exclude:
            raise ValueError("--target and --exclude describe the columns of --csv: pass "
                             "--csv FILE too")
        args.task = args.task or "binary"
        return default() if names is None else names
    if names is not None:
        raise ValueError("pass either shipped datasets (--datasets) or --csv FILE, not both")
    exclude = [c.strip() for c in args.exclude.split(",") if c.strip()]
    data = datasets.from_csv(args.csv, target=args.target, task=args.task or "auto",
                             exclude=exclude)
    args.task = data.task
    return [data]


def _share_progress(quiet, desc):
    """A bar in whole percent for ``progress(done, total, message)`` given as a share of work."""
    if quiet:
        return None, None
    bar = tqdm(total=100, desc=desc, unit="%")

    def progress(done, total, message):
        bar.set_postfix_str(message, refresh=False)
        bar.update(int(100 * done / total) - bar.n if total else 0)

    return progress, bar


def _reproduce(args, argv, prog):
    if args.backend == "dask" and not args.scheduler:
        raise ValueError("--backend dask needs --scheduler ADDRESS")
    if args.size is not None and args.suite != "oob":
        raise ValueError("--size is the target size of --suite oob; the paper suite has none")
    chosen = _chosen_datasets(args, datasets.names)
    df, wall = experiments.timed_reproduce(
        datasets=chosen, repeats=args.repeats, n_trees=args.trees, task=args.task,
        n_jobs=args.n_jobs, backend=args.backend, scheduler=args.scheduler,
        cache=not args.no_cache, progress=not args.quiet, suite=args.suite, size=args.size)
    command = f"{prog} " + " ".join(shlex.quote(a) for a in argv)
    write = experiments.write_oob_report if args.suite == "oob" else experiments.write_report
    paths = write(df, args.out or _DEFAULT_OUT[args.suite], command, wall)
    print(f"wrote {paths['csv']} and {paths['report']} ({len(df)} rows, {wall:.0f} s)")


def _frontier(args):
    if not args.lam_min > 0 or not args.lam_max >= args.lam_min:
        raise ValueError("need 0 < --lam-min <= --lam-max")
    chosen = _chosen_datasets(args, lambda: None)
    if chosen is None:
        raise ValueError("name the data: --dataset NAMES (shipped datasets) or --csv FILE")
    if args.out is not None and len(chosen) > 1:
        raise ValueError(f"--out names one CSV file but --dataset names {len(chosen)} "
                         "datasets: leave --out out (each dataset is written to "
                         "frontier-DATASET-TASK-sSEED.csv) or run one dataset at a time")
    for dataset in chosen:
        _frontier_one(args, dataset)


def _frontier_one(args, dataset):
    name = getattr(dataset, "name", dataset)
    progress, bar = _share_progress(args.quiet, f"pool {name}")
    p = pool.load_pool(dataset, task=args.task, n_trees=args.trees, seed=args.seed,
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
    out = args.out or Path(f"frontier-{_file_word(name)}-{args.task}-s{args.seed}.csv")
    out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(out, index=False, float_format="%.10g")
    print(f"wrote {out} ({len(df)} points)")


def _file_word(name):
    """``name`` as a file name part: letters, digits, '-' and '_' only."""
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in str(name)) or "data"


def _pool_progress(quiet, todo):
    """A bar counting whole pools, for :func:`sdwec.warm.warm`'s progress in estimated seconds.

    ``warm`` adds each pool's estimate to ``done`` when the pool is ready, in ``todo``'s
    order, so the pools ready are those whose running sum of estimates ``done`` has reached.
    """
    if quiet:
        return None, None
    ends = np.cumsum([estimate for _, estimate in todo])
    bar = tqdm(total=len(todo), desc="warm pools", unit="pool")

    def progress(done, total, message):
        ready = int(np.searchsorted(ends, done + 1e-9 * max(total, 1.0), side="right"))
        bar.set_postfix_str(message, refresh=False)
        bar.update(ready - bar.n)

    return progress, bar


def _low_priority():
    if hasattr(os, "nice"):
        os.nice(10)


def _exit_on_signal(signum, frame):
    sys.exit(128 + signum)


@contextlib.contextmanager
def _clean_exit_on_sigterm():
    """Within the block, SIGTERM raises :class:`SystemExit` instead of killing the process
    where it stands, so it exits through its clean-up: the cache's temporary file and
    progress record, and joblib's abort, which stops its worker processes."""
    if threading.current_thread() is not threading.main_thread():  # handlers need it
        yield
        return
    previous = signal.signal(signal.SIGTERM, _exit_on_signal)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _signal_group(pgid, signum):
    """Send ``signum`` to the process group ``pgid``; whether any process was in it."""
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):  # empty, or no longer ours
        return False
    return True


def _stop_group(process, grace=STOP_GRACE_SECONDS):
    """Stop ``process``, the leader of its own process group, and then the rest of the group.

    The leader gets SIGTERM first, so that it exits through its clean-up (``sdwec warm``
    removes its progress record and stops joblib's workers); whatever of the group outlives
    it (a worker it could not stop; joblib's resource trackers, which ignore SIGTERM and
    leave once the processes they serve are gone) gets SIGTERM, then SIGKILL after
    ``grace`` seconds.
    Nothing may wait on ``process`` before: its unreaped pid keeps the group's id from being
    given to another process.
    """
    if process.poll() is None:
        process.terminate()
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    for signum in (signal.SIGTERM, signal.SIGKILL):
        deadline = time.monotonic() + grace
        if not _signal_group(process.pid, signum):
            return
        while time.monotonic() < deadline and _signal_group(process.pid, 0):
            time.sleep(0.05)


def _dashboard_app():
    for app in (_INSTALLED_APP, _CHECKOUT_APP):
        if app.is_file():
            return app
    raise OSError(f"the dashboard is not installed (no {_INSTALLED_APP}): reinstall with "
                  "pip install \"sdwec[dashboard]\"")


def _writable_app(app):
    """``app``, or a copy of the installed app's folder in the cache when it cannot be written.

    The charts copy plotly.min.js into the app's ``static/`` folder at run time
    (dashboard/charts.py); a system-wide install is read-only for its users.  (A checkout's
    app is its whole tree: never copied.)
    """
    if app != _INSTALLED_APP or os.access(app.parent, os.W_OK):
        return app
    copy = cache_dir() / f"app-{__version__}"
    shutil.copytree(app.parent, copy, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    return copy / app.name


def _dashboard(args, streamlit_args):
    """Run the installed app's server (as scripts/dashboard.sh does in a checkout)."""
    if importlib.util.find_spec("streamlit") is None:
        raise OSError("the dashboard needs Streamlit and Plotly: pip install \"sdwec[dashboard]\"")
    app = _writable_app(_dashboard_app())
    # Two malloc arenas instead of glibc's 8 per core: every session's script runs in its own
    # thread; fewer arenas held ~50 MiB less under 10 sessions (results/load.md).
    env = {**os.environ, "MALLOC_ARENA_MAX": os.environ.get("MALLOC_ARENA_MAX", "2")}
    port = [] if args.port is None else ["--server.port", str(args.port)]
    warmer = None
    if not args.no_warm and os.environ.get("SDWEC_WARM", "1") != "0":
        folder = cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / "warm.log", "wb") as log:
            # A session of its own: the warm-up and the joblib workers it starts form one
            # process group, stopped as a whole below (a terminal's Ctrl-C reaches only
            # this process and the server).
            warmer = subprocess.Popen([sys.executable, "-m", "sdwec", "warm", "--quiet"],
                                      stdout=log, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, preexec_fn=_low_priority,
                                      start_new_session=True)
        print(f"Warming the default pools in the background (log: {folder / 'warm.log'})",
              flush=True)
    # The app's own launcher (dashboard/launch.py, by path: installed, its package is
    # sdwec.app.dashboard): Streamlit with a page's slider moves kept after a server restart
    # and the app's upload policy and modules in place before it accepts a connection.
    launcher = app.parent / "dashboard" / "launch.py"
    server = subprocess.Popen([sys.executable, str(launcher), "run", str(app), *port,
                               *streamlit_args], env=env)
    # SIGTERM (or the terminal closing) stops the server, and then the warmer, as Ctrl-C does.
    # The caller's handlers come back at the end: a process that runs this in-process (a
    # test) would otherwise pass an ignored SIGINT on to every process it starts later.
    previous = {signum: signal.getsignal(signum)
                for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)}
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, lambda *_: server.terminate())
    try:
        return server.wait()
    except KeyboardInterrupt:
        # A terminal's Ctrl-C reached the server too, a `kill -INT` of this process did not.
        if server.poll() is None:
            server.terminate()
        return server.wait()
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut this short
        try:
            if warmer is not None:
                _stop_group(warmer)
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)


def _warm(args):
    if args.seeds is not None and args.seeds < 1:
        raise ValueError("--seeds must be at least 1")
    seeds = None if args.seeds is None else range(args.seeds)
    progress, bar = _pool_progress(args.quiet, warm.plan(args.datasets, n_trees=args.trees,
                                                         seeds=seeds))
    with _clean_exit_on_sigterm():  # how `sdwec dashboard` stops its warm-up
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
    if argv == ["_pool-job"]:
        return _pool_job()
    prog = _program_name()
    parser = build_parser(prog)
    # Only the dashboard takes options of its own (streamlit's); the others refuse unknowns.
    args, extra = parser.parse_known_args(argv)
    if extra and args.command != "dashboard":
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        if args.command == "dashboard":
            return _dashboard(args, extra)
        if args.command == "reproduce":
            _reproduce(args, argv, prog)
        elif args.command == "warm":
            _warm(args)
        else:
            _frontier(args)
    except (DataError, ValueError, OSError, CacheKeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def _pool_job():
    """Internal (the dashboard's worker, dashboard/jobs.py): train the pool of the pickled
    ``(PoolKey, Dataset or None)`` read on stdin into the disk cache, at low priority."""
    # SIGTERM (Cancel) exits through the clean-up code: the cache removes its temporary
    # file and progress record instead of leaving them for an hour.
    signal.signal(signal.SIGTERM, _exit_on_signal)
    _low_priority()
    import pickle  # only here: the input comes from the dashboard process that started us

    key, dataset = pickle.load(sys.stdin.buffer)
    pool.load_pool(key, dataset=dataset)
    return 0


if __name__ == "__main__":
    sys.exit(main())
