"""Glue shared by the dashboard's pages: configuration, the sidebar, cached calls, error guard.

Nothing here computes anything about SDWEC: it turns the URL query string into a
:class:`Config` and back, draws the shared sidebar, and wraps the library's calls in
Streamlit's caches (``st.cache_resource`` for trained pools, ``st.cache_data`` with bounded
``max_entries`` for solutions and sweeps, keyed on small arguments only).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import math
import threading
import time
from dataclasses import dataclass, replace

import numpy as np
import streamlit as st

from sdwec import solver
from sdwec.errors import DataError

LOG = logging.getLogger("sdwec.dashboard")

#: The sidebar's pseudo-dataset that stands for the CSV uploaded on the "Your data" page.
USER_DATA = "your data"
DEFAULT_DATASET = "sonar"


def _grid_125(low_exp, high_exp):
    """1-2-5 log grid from 10**low_exp to 10**high_exp (both included)."""
    return tuple(float(f"{m}e{e}") for e in range(low_exp, high_exp) for m in (1, 2, 5)) + (
        float(f"1e{high_exp}"),)


#: λ's slider positions: a log scale from 1e-3 to 1e3 (contains the presets' 0.1 and 10).
LAMBDA_GRID = _grid_125(-3, 3)
#: ε's slider positions: a log scale from 1e-3 to 10 (contains the presets' 0.1 and 1).
EPS_GRID = _grid_125(-3, 1)
#: Pool sizes l offered; the paper uses 200.
POOL_SIZES = (10, 20, 50, 100, 200, 300, 500, 1000)
#: Inclusive ranges of the linear sliders: (low, high, step).
BETA_RANGE = (0.0, 100.0, 1.0)
GAMMA_RANGE = (1.0, 100.0, 1.0)
ITERATIONS_RANGE = (1, 100, 1)
SEED_RANGE = (0, 9999, 1)

#: Bounds of the Streamlit caches, so memory stays flat in a long session.
POOL_CACHE_ENTRIES = 6
SOLUTION_CACHE_ENTRIES = 256
SWEEP_CACHE_ENTRIES = 16
TIMING_CACHE_ENTRIES = 64
#: Explorer figures kept per configuration: building a 200-bar Plotly figure costs more than
#: the solve it shows, so a revisited configuration reuses its figures.  Kept few: one
#: configuration's three figures hold about 2.6 MiB as Plotly objects (l = 200, measured).
FIGURE_CACHE_ENTRIES = 16
#: Prediction time is measured on at most this many test rows (NSL-KDD has 12,597), so that a
#: slider move stays interactive; the caption states the row count.
TIMING_ROWS = 2000
#: Timed runs (median reported, after one warm-up) of the Paper page's weight-finding times.
TIMING_REPEATS = 3


@dataclass(frozen=True)
class Config:
    """Everything the sidebar sets; the whole of it lives in the URL query string."""

    dataset: str = DEFAULT_DATASET
    task: str = "binary"
    seed: int = 0
    n_trees: int = 200
    lam: float = solver.PRESETS["SDWEC-B"]["lam"]
    beta: float = solver.PRESETS["SDWEC-B"]["beta"]
    gamma: float = solver.PRESETS["SDWEC-B"]["gamma"]
    eps: float = solver.PRESETS["SDWEC-B"]["eps"]
    iterations: int = 25
    threshold: str = "paper"

    def solver_params(self):
        """Keyword arguments for :func:`sdwec.solve`."""
        return dict(lam=self.lam, beta=self.beta, gamma=self.gamma, eps=self.eps,
                    iterations=self.iterations, threshold=self.threshold)


#: Config field -> query-string key (short keys keep shared links readable).
QUERY_KEYS = {"dataset": "dataset", "task": "task", "seed": "seed", "n_trees": "l",
              "lam": "lam", "beta": "beta", "gamma": "gamma", "eps": "eps",
              "iterations": "k", "threshold": "thr"}
#: Page name -> script, for :func:`request_page`.
PAGE_FILES = {"explorer": "pages/explorer.py", "frontier": "pages/frontier.py",
              "paper": "pages/paper.py", "how": "pages/how_it_works.py",
              "upload": "pages/your_data.py"}
#: Config field -> Streamlit widget key.
WIDGET_KEYS = {name: f"cfg_{name}" for name in QUERY_KEYS}


# --------------------------------------------------------------------------- query string


def _nearest(value, grid, log=False):
    """Grid point nearest to ``value`` (in log distance when ``log``)."""
    if log:
        return min(grid, key=lambda g: abs(math.log(g) - math.log(value)))
    return min(grid, key=lambda g: abs(g - value))


def _single(value):
    """One query value (a repeated key counts as its last value, like ``st.query_params``)."""
    return value[-1] if isinstance(value, (list, tuple)) else value


def dataset_choices():
    """The shipped datasets' names followed by :data:`USER_DATA`."""
    from sdwec import datasets

    return tuple(datasets.names()) + (USER_DATA,)


def task_choices(dataset):
    """Tasks the sidebar offers for ``dataset`` (``("auto",)`` for uploaded data)."""
    if dataset == USER_DATA:
        return ("auto",)
    from sdwec import datasets

    return tuple(datasets.tasks(dataset))


def config_from_query(query, dataset_names=None, tasks=None):
    """Read a :class:`Config` from a query string, repairing what cannot be used.

    Parameters
    ----------
    query : Mapping[str, str or list of str]
        ``st.query_params.to_dict()`` or ``AppTest.query_params``.
    dataset_names : sequence of str, optional
        Valid dataset names; defaults to :func:`dataset_choices`.
    tasks : callable, optional
        ``tasks(dataset) -> sequence of str``; defaults to :func:`task_choices`.

    Returns
    -------
    config : Config
        Missing keys take the defaults; numbers are clipped to the sliders' ranges and
        snapped to their grids.
    problems : list of str
        One plain-language note per value that was ignored or changed.
    """
    dataset_names = tuple(dataset_choices() if dataset_names is None else dataset_names)
    tasks = task_choices if tasks is None else tasks
    defaults = Config()
    values, problems = {}, []

    def raw(name):
        value = _single(query.get(QUERY_KEYS[name]))
        return None if value is None or str(value).strip() == "" else str(value).strip()

    def number(name, kind, low, high):
        text = raw(name)
        if text is None:
            return getattr(defaults, name)
        try:
            value = kind(float(text)) if kind is int else float(text)
            if not math.isfinite(value):
                raise ValueError
        except (ValueError, OverflowError):
            problems.append(f"`{QUERY_KEYS[name]}={text}` is not a number; using "
                            f"{getattr(defaults, name)}.")
            return getattr(defaults, name)
        if not low <= value <= high:
            clipped = min(max(value, low), high)
            problems.append(f"`{QUERY_KEYS[name]}={text}` is outside [{low:g}, {high:g}]; "
                            f"using {clipped:g}.")
            value = clipped
        return value

    dataset = raw("dataset")
    if dataset is None or dataset not in dataset_names:
        if dataset is not None:
            problems.append(f"Unknown dataset `{dataset}`; using {defaults.dataset}.")
        dataset = defaults.dataset if defaults.dataset in dataset_names else dataset_names[0]
    values["dataset"] = dataset
    offered = tuple(tasks(dataset))
    task = raw("task")
    if task not in offered:
        if task is not None:
            problems.append(f"{dataset} has no task `{task}`; using {offered[0]}.")
        task = offered[0]
    values["task"] = task
    values["seed"] = int(number("seed", int, *SEED_RANGE[:2]))
    n_trees = number("n_trees", int, POOL_SIZES[0], POOL_SIZES[-1])
    values["n_trees"] = int(_nearest(n_trees, POOL_SIZES))
    values["lam"] = _nearest(number("lam", float, LAMBDA_GRID[0], LAMBDA_GRID[-1]),
                             LAMBDA_GRID, log=True)
    values["eps"] = _nearest(number("eps", float, EPS_GRID[0], EPS_GRID[-1]), EPS_GRID, log=True)
    values["beta"] = float(round(number("beta", float, *BETA_RANGE[:2])))
    values["gamma"] = float(round(number("gamma", float, *GAMMA_RANGE[:2])))
    values["iterations"] = int(number("iterations", int, *ITERATIONS_RANGE[:2]))
    threshold = raw("threshold")
    if threshold not in solver.THRESHOLDS:
        if threshold is not None:
            problems.append(f"Unknown threshold rule `{threshold}`; using {defaults.threshold}.")
        threshold = defaults.threshold
    values["threshold"] = threshold
    return Config(**values), problems


def config_to_query(config):
    """The query-string form of ``config`` (``dict`` of ``str``), read back by
    :func:`config_from_query` to the same :class:`Config`."""
    out = {}
    for name, key in QUERY_KEYS.items():
        value = getattr(config, name)
        out[key] = f"{value:g}" if isinstance(value, float) else str(value)
    return out


def preset_config(config, name):
    """``config`` with the solver parameters of the paper's preset ``name`` (SDWEC-A/-B)."""
    if name not in solver.PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of {', '.join(solver.PRESETS)}")
    preset = solver.PRESETS[name]
    return replace(config, lam=float(preset["lam"]), beta=float(preset["beta"]),
                   gamma=float(preset["gamma"]), eps=float(preset["eps"]))


# --------------------------------------------------------------------------- sidebar


def _state():
    return st.session_state


def _write_widgets(config):
    """Put ``config`` into the sidebar's widget keys and the page-independent copy."""
    state = _state()
    state["_cfg"] = config
    for name, key in WIDGET_KEYS.items():
        state[key] = getattr(config, name)


def current_config():
    """The :class:`Config` the sidebar widgets hold now."""
    state = _state()
    base = state.get("_cfg", Config())
    return replace(base, **{name: state[key] for name, key in WIDGET_KEYS.items()
                            if key in state})


def _apply_preset(name):
    _write_widgets(preset_config(current_config(), name))


def _sync(name):
    """on_change callback: copy widget ``name``'s new value into the plain config copy."""
    state = _state()
    state["_cfg"] = replace(state.get("_cfg", Config()), **{name: state[WIDGET_KEYS[name]]})


def _dataset_changed():
    _sync("dataset")
    state = _state()
    offered = task_choices(state["_cfg"].dataset)
    if state["_cfg"].task not in offered:
        state["_cfg"] = replace(state["_cfg"], task=offered[0])
    state[WIDGET_KEYS["task"]] = state["_cfg"].task


def apply_config(config):
    """Callback helper: load ``config`` into the sidebar (used by "send to the Explorer")."""
    _write_widgets(config)


def request_page(name):
    """Callback helper: ask :func:`page_setup` to switch to page ``name`` on the next run."""
    _state()["_cfg_goto"] = name


def pop_page_request():
    """The page asked for by :func:`request_page`, once, or ``None``."""
    return _state().pop("_cfg_goto", None)


def _format_number(value):
    return f"{value:g}"


def _bound(name):
    """Widget arguments that tie a sidebar widget to config field ``name``."""
    return dict(key=WIDGET_KEYS[name], on_change=_sync, args=(name,))


def sidebar():
    """Draw the shared sidebar and keep ``st.query_params`` equal to the configuration.

    The first run of a session reads the query string (a shared link or a reload); after
    that the widgets are the source of truth and the query string follows them.  A plain
    session-state copy (``_cfg``) carries the values across page changes.

    Returns
    -------
    Config
    """
    state = st.session_state
    if "_cfg" not in state:
        config, problems = config_from_query(st.query_params.to_dict())
        state["_cfg"] = config
        state["_cfg_problems"] = problems
    # Streamlit forgets a page's widget values when another page is opened (each page draws
    # its own copy of the sidebar), so the widgets are re-seeded from the plain copy on every
    # run; each widget's on_change callback keeps that copy current.
    for name, key in WIDGET_KEYS.items():
        state[key] = getattr(state["_cfg"], name)
    sb = st.sidebar
    sb.header("Configuration")
    sb.selectbox("Dataset", dataset_choices(), key=WIDGET_KEYS["dataset"],
                 on_change=_dataset_changed,
                 help="One of the paper's 11 datasets, or the CSV you upload on *Your data*.")
    offered = task_choices(state[WIDGET_KEYS["dataset"]])
    sb.selectbox("Task", offered, disabled=len(offered) == 1, **_bound("task"),
                 help="Binary tasks use labels ±1; multi-class tasks solve SDWEC on the "
                      "correctness matrix.")
    col_seed, col_l = sb.columns(2)
    col_seed.number_input("Split seed", min_value=SEED_RANGE[0], max_value=SEED_RANGE[1],
                          step=1, **_bound("seed"),
                          help="Seeds the train/validation/test split and the bagging.")
    col_l.select_slider("Pool size l", POOL_SIZES, **_bound("n_trees"),
                        help="Number of bagged CART trees the weights are chosen from.")
    sb.subheader("SDWEC parameters")
    for col, name in zip(sb.columns(len(solver.PRESETS)), solver.PRESETS):
        p = solver.PRESETS[name]
        col.button(name, key=f"preset_{name}", on_click=_apply_preset, args=(name,),
                   width="stretch",
                   help=f"The paper's {name}: λ={p['lam']:g}, β={p['beta']:g}, "
                        f"γ={p['gamma']:g}, ε={p['eps']:g}.")
    sb.select_slider("λ (data fidelity, log scale)", LAMBDA_GRID, format_func=_format_number,
                     **_bound("lam"),
                     help="Larger λ fits the validation votes harder; smaller λ lets the L1 "
                          "term switch more trees off.")
    sb.slider("β (non-negativity penalty)", min_value=BETA_RANGE[0], max_value=BETA_RANGE[1],
              step=BETA_RANGE[2], **_bound("beta"),
              help="Weight of the penalty on negative weights; it also sets the threshold.")
    sb.slider("γ (log-sum-exp sharpness)", min_value=GAMMA_RANGE[0], max_value=GAMMA_RANGE[1],
              step=GAMMA_RANGE[2], **_bound("gamma"),
              help="How closely the smooth |w| and max(-w, 0) follow the real ones.")
    sb.select_slider("ε (log scale)", EPS_GRID, format_func=_format_number, **_bound("eps"),
                     help="Keeps the sign relaxation and the adaptive γ finite near zero.")
    sb.slider("Iterations k", min_value=ITERATIONS_RANGE[0], max_value=ITERATIONS_RANGE[1],
              step=ITERATIONS_RANGE[2], **_bound("iterations"))
    sb.selectbox("Threshold rule (line 15)", solver.THRESHOLDS, **_bound("threshold"),
                 help="paper: one threshold where P(w) with γ/ε falls to 1e-3; adaptive: each "
                      "weight with its own γ_r; none: keep every positive weight.")
    sb.caption("The page address holds this configuration: copy it to share or bookmark.")
    config = current_config()
    state["_cfg"] = config
    wanted = config_to_query(config)
    if st.query_params.to_dict() != wanted:
        st.query_params.from_dict(wanted)
    return config


def page_setup(title):
    """Start a page: page config, the shared sidebar, a pending "go to" request.

    Every page calls this first instead of relying on ``app.py`` to draw the sidebar: when a
    ``pages/`` folder exists, Streamlit (and ``AppTest``) may run a page script on its own
    (the legacy multipage mode, used for the first request after start-up), and the page
    must still get its sidebar and configuration.

    Returns
    -------
    Config or None
        ``None`` if the sidebar could not be drawn (the error is shown).
    """
    st.set_page_config(page_title=f"{title} · SDWEC Explorer", page_icon=":material/forest:",
                       layout="wide")
    config = None
    with guard("the sidebar"):
        config = sidebar()
    target = pop_page_request()
    if target is not None:
        st.switch_page(PAGE_FILES[target])
    return config


def show_config_problems():
    """Show (once) what was repaired when the query string was read."""
    problems = st.session_state.pop("_cfg_problems", None)
    if problems:
        st.warning("Some settings in the link could not be used:\n\n"
                   + "\n".join(f"- {p}" for p in problems))


# --------------------------------------------------------------------------- errors


@contextlib.contextmanager
def guard(what="this page"):
    """Show any exception raised inside as ``st.error`` with what to do, never a traceback.

    ``DataError`` and ``ValueError`` carry messages meant for the user and are shown as
    they are; anything else is logged on the server and summarised.  Streamlit's own
    control-flow exceptions (rerun, stop, page switch) derive from ``BaseException`` and
    pass through untouched.
    """
    try:
        yield
    except DataError as exc:
        st.error(f"The data cannot be used: {exc}")
    except ValueError as exc:
        st.error(f"{exc}\n\nChange the setting named above (or pick a preset) and try again.")
    except MemoryError:
        st.error(f"Not enough memory to compute {what}. Choose a smaller pool size l or a "
                 "smaller dataset.")
    except Exception as exc:  # noqa: BLE001 -- the page must never show a traceback
        LOG.exception("dashboard failure in %s", what)
        st.error(f"Something went wrong while computing {what} ({type(exc).__name__}: {exc}). "
                 "Try another setting or reload the page; the details are in the server log.")


# --------------------------------------------------------------------------- cached calls


def upload_key(data, target, task):
    """Cache key of an uploaded dataset: a digest of its bytes and the reading options."""
    digest = hashlib.sha256(bytes(data)).hexdigest()[:16]
    return f"upload:{digest}:{target}:{task}"


def set_user_dataset(key, dataset):
    """Remember the uploaded :class:`~sdwec.datasets.Dataset` for this session."""
    _state()["user_dataset"] = (key, dataset)


def read_upload(data, file_name, target, task):
    """Parse an uploaded CSV once per (bytes, target, task) and remember it for the session.

    Returns
    -------
    key : str
        Cache key of the upload (see :func:`upload_key`).
    dataset : sdwec.datasets.Dataset

    Raises
    ------
    sdwec.DataError
        The loader's message, for the page to show.
    """
    from sdwec import datasets

    key = upload_key(data, target, task)
    current = user_dataset()
    if current is not None and current[0] == key:
        return current
    dataset = datasets.from_csv(bytes(data), target=target, task=task, name=file_name,
                                max_bytes=datasets.MAX_UPLOAD_BYTES)
    set_user_dataset(key, dataset)
    return key, dataset


def _use_upload_in_sidebar():
    _write_widgets(replace(current_config(), dataset=USER_DATA, task="auto"))


def use_upload_button():
    """A button that makes the sidebar's dataset "your data" (so every page uses it)."""
    st.button("Use this file on every page", on_click=_use_upload_in_sidebar,
              key="upload_use_everywhere",
              help="Sets the sidebar's dataset to *your data*; the Frontier page then sweeps "
                   "this file's pool.")


def user_dataset():
    """``(key, Dataset)`` of this session's upload, or ``None``."""
    return _state().get("user_dataset")


class _Progress:
    """``progress(done, total, message)`` callback drawing a bar only if work happens."""

    def __init__(self, label):
        self.label = label
        self.slot = st.empty()
        self.bar = None

    def __call__(self, done, total, message):
        fraction = min(max(done / total, 0.0), 1.0) if total else 1.0
        text = f"{self.label}: {message} ({done}/{total})"
        if self.bar is None:
            self.bar = self.slot.progress(fraction, text=text)
        else:
            self.bar.progress(fraction, text=text)

    def close(self):
        self.slot.empty()


@st.cache_resource(max_entries=POOL_CACHE_ENTRIES, show_spinner=False)
def _pool_slot(source, task, n_trees, seed):
    """A per-pool box (bounded by the cache) that holds the pool once it is trained.

    The training itself happens outside the cached function so that its progress bar is
    drawn live instead of being recorded and replayed by Streamlit's cache; the box's lock
    makes concurrent sessions asking for the same pool train it once.
    """
    return {"lock": threading.Lock(), "pool": None}


def _pool(source, task, n_trees, seed, _dataset=None, _progress=None):
    """The pool for a source key: from this process, the disk cache, or trained now.

    ``source`` is a shipped dataset's name, or an upload's key with its ``_dataset``.
    ``_progress`` reports training; if another session is training the same pool, this
    one says so and waits for it instead of training it again.
    """
    from sdwec import pool

    slot = _pool_slot(source, task, n_trees, seed)
    if slot["pool"] is not None:
        return slot["pool"]
    if not slot["lock"].acquire(blocking=False):
        if _progress is not None:
            _progress.slot.info("Another session is training this pool right now; it will "
                                "appear here as soon as it is ready.")
        slot["lock"].acquire()
    try:
        if slot["pool"] is None:
            if _dataset is None:
                slot["pool"] = pool.load_pool(source, task, n_trees=n_trees, seed=seed,
                                              progress=_progress)
            else:
                slot["pool"] = pool.build_pool(
                    _dataset.X, _dataset.y, n_trees=n_trees, seed=seed, progress=_progress,
                    meta={"dataset": _dataset.name, "task": _dataset.task})
        return slot["pool"]
    finally:
        slot["lock"].release()


def _source(config):
    """``(source key, Dataset or None)`` for ``config``; raises if "your data" is empty."""
    if config.dataset != USER_DATA:
        return config.dataset, None
    upload = user_dataset()
    if upload is None:
        raise DataError("no CSV has been uploaded yet. Open the *Your data* page, upload a "
                        "file and choose its target column, or pick a shipped dataset.")
    return upload


def get_pool(config):
    """The trained pool for ``config``, with a progress bar while it is being trained."""
    source, dataset = _source(config)
    progress = _Progress(f"Training {config.n_trees} trees on {config.dataset}")
    try:
        return _pool(source, config.task, config.n_trees, config.seed, _dataset=dataset,
                     _progress=progress)
    finally:
        progress.close()


def _plain(value):
    """A numpy scalar as the Python value (text labels are already Python strings)."""
    return value.item() if isinstance(value, np.generic) else value


@dataclass(frozen=True)
class Exploration:
    """What the Explorer shows for one configuration (small, so ``st.cache_data`` keeps it).

    Attributes
    ----------
    solution : sdwec.solver.Solution
    member_accuracy : ndarray of shape (l,)
        Each tree's validation accuracy.
    methods : list of dict
        ``method``, ``test``, ``validation``, ``used`` for SDWEC and the baselines.
    abstain_label : object
        What the ensemble predicts when every weight is zero (the most frequent
        validation class).
    classes : list
        Class labels of the task.
    n_val, n_test : int
        Rows in the validation and test splits.
    """

    solution: object
    member_accuracy: np.ndarray
    methods: list
    abstain_label: object
    classes: list
    n_val: int
    n_test: int


@st.cache_data(max_entries=SOLUTION_CACHE_ENTRIES, show_spinner=False)
def _explore(source, task, n_trees, seed, params, _dataset=None):
    from sdwec import combiners

    pool = _pool(source, task, n_trees, seed, _dataset=_dataset)
    sol = solver.solve(pool.table, None, **dict(params))
    val, test = pool.votes("val"), pool.votes("test")
    W = np.column_stack([sol.weights, combiners.majority(val), combiners.wmv(val)])
    acc_val = combiners.accuracies(W, val, pool.prior)
    acc_test = combiners.accuracies(W, test, pool.prior)
    l = pool.n_trees
    used = [f"{sol.n_selected} / {l}", f"{l} / {l}", f"{l} / {l}"]
    methods = [{"method": name, "test": float(acc_test[i]), "validation": float(acc_val[i]),
                "used": used[i]} for i, name in enumerate(("SDWEC", "bagging", "WMV"))]
    methods.append({"method": "single tree",
                    "test": float(np.mean(pool.single_test == pool.y_test)),
                    "validation": float(np.mean(pool.single_val == pool.y_val)),
                    "used": "1 (own tree)"})
    return Exploration(solution=sol, member_accuracy=combiners.member_accuracies(val),
                       methods=methods, abstain_label=_plain(pool.prior[0]),
                       classes=[_plain(c) for c in pool.classes], n_val=len(pool.y_val),
                       n_test=len(pool.y_test))


def explore(config):
    """SDWEC on ``config``'s pool with the baselines beside it (cached, bounded)."""
    source, dataset = _source(config)
    get_pool(config)  # trains (with a progress bar) if needed, before the cached solve
    params = tuple(sorted(config.solver_params().items()))
    return _explore(source, config.task, config.n_trees, config.seed, params, _dataset=dataset)


@st.cache_data(max_entries=TIMING_CACHE_ENTRIES, show_spinner=False)
def _prediction_seconds(source, task, n_trees, seed, selected, _weights, _dataset=None):
    from sdwec import timing

    pool = _pool(source, task, n_trees, seed, _dataset=_dataset)
    return timing.prediction_seconds(pool.estimators, _weights, pool.X_test[:TIMING_ROWS],
                                     pool.classes, pool.prior)


def prediction_timing(config, weights):
    """Measured prediction time of the pruned (``weights``) and the full ensemble.

    The full ensemble is timed once per pool; the pruned one once per distinct set of
    members (the cache key is the selected indices with their weights).
    """
    from sdwec import timing

    source, dataset = _source(config)
    weights = np.asarray(weights, dtype=float)
    key = (source, config.task, config.n_trees, config.seed)
    full, n_full = _prediction_seconds(*key, "all", np.ones(len(weights)), _dataset=dataset)
    chosen = tuple((int(i), float(weights[i])) for i in np.flatnonzero(weights))
    pruned, n_pruned = _prediction_seconds(*key, chosen, weights, _dataset=dataset)
    pool = _pool(source, config.task, config.n_trees, config.seed, _dataset=dataset)
    return timing.PredictionTiming(full_seconds=full, pruned_seconds=pruned, n_full=n_full,
                                   n_pruned=n_pruned, n_rows=min(len(pool.X_test), TIMING_ROWS),
                                   repeats=3)


@st.cache_resource(max_entries=FIGURE_CACHE_ENTRIES, show_spinner=False)
def _explorer_figures(source, task, n_trees, seed, params, _result):
    """The Explorer's three solution figures for one configuration (shared, read-only)."""
    from sdwec import plots

    sol = _result.solution
    threshold = sol.threshold if np.isfinite(sol.threshold) else None
    return (plots.method_comparison(_result.methods), plots.convergence(sol.history),
            plots.member_weights(sol.weights, _result.member_accuracy, threshold))


#: Second parameters the Frontier page can sweep, with values on the sidebar's grids.
SECOND_SWEEPS = {"β": ("beta", (5.0, 15.0, 35.0)), "γ": ("gamma", (5.0, 15.0, 30.0)),
                 "ε": ("eps", (0.1, 1.0))}
_SWEEP_CHUNK = 5  # λ values per cached sweep call, so a long sweep can show progress


@st.cache_data(max_entries=SWEEP_CACHE_ENTRIES * 8, show_spinner=False)
def _sweep_chunk(source, task, n_trees, seed, lams, fixed, second, _dataset=None):
    from sdwec import frontier

    pool = _pool(source, task, n_trees, seed, _dataset=_dataset)
    fixed = dict(fixed)
    return frontier.sweep(pool, lams=list(lams), beta=fixed["beta"], gamma=fixed["gamma"],
                          eps=fixed["eps"], iterations=fixed["iterations"],
                          threshold=fixed["threshold"], second=second)


def frontier_sweep(config, second=None):
    """SDWEC over the sidebar's λ grid (and optionally a second parameter), cached.

    Parameters
    ----------
    config : Config
        Fixes the pool and the parameters not swept.
    second : str or None
        A key of :data:`SECOND_SWEEPS`.

    Returns
    -------
    pandas.DataFrame
        :func:`sdwec.frontier.sweep` rows; the λ values are the sidebar's, so any point can
        be reproduced exactly in the Explorer.
    """
    import pandas as pd

    source, dataset = _source(config)
    get_pool(config)
    fixed = tuple(sorted(dict(beta=config.beta, gamma=config.gamma, eps=config.eps,
                              iterations=config.iterations,
                              threshold=config.threshold).items()))
    second_arg = None if second is None else SECOND_SWEEPS[second]
    chunks = [LAMBDA_GRID[i:i + _SWEEP_CHUNK] for i in range(0, len(LAMBDA_GRID), _SWEEP_CHUNK)]
    progress = _Progress(f"SDWEC sweep on {config.dataset}")
    frames = []
    try:
        for done, lams in enumerate(chunks):
            start = time.perf_counter()
            frames.append(_sweep_chunk(source, config.task, config.n_trees, config.seed, lams,
                                       fixed, second_arg, _dataset=dataset))
            # Only real work shows a bar: cached chunks come back in microseconds.
            if time.perf_counter() - start > 0.1:
                progress(done + 1, len(chunks), f"λ up to {lams[-1]:g}")
    finally:
        progress.close()
    return pd.concat(frames, ignore_index=True)


@st.cache_data(max_entries=SWEEP_CACHE_ENTRIES, show_spinner=False)
def _peers(source, task, n_trees, seed, _dataset=None):
    from sdwec import frontier

    return frontier.peers(_pool(source, task, n_trees, seed, _dataset=_dataset), seed=seed)


def frontier_peers(config):
    """The peers' points and curves on ``config``'s pool (cached per pool)."""
    source, dataset = _source(config)
    get_pool(config)
    return _peers(source, config.task, config.n_trees, config.seed, _dataset=dataset)


def point_values(customdata):
    """A selected point's ``customdata`` as a list (the browser may send ``{"0": v, ...}``)."""
    if isinstance(customdata, dict):
        return [customdata[str(i)] for i in range(len(customdata))]
    return list(customdata or [])


def point_config(config, customdata):
    """``config`` with the parameters of a clicked Frontier point (its ``customdata``)."""
    lam, beta, gamma, eps = (float(v) for v in point_values(customdata)[:4])
    return replace(config, lam=_nearest(lam, LAMBDA_GRID, log=True), beta=float(round(beta)),
                   gamma=float(round(gamma)), eps=_nearest(eps, EPS_GRID, log=True))


def send_to_explorer(config):
    """Button callback: load ``config`` into the sidebar and open the Explorer."""
    apply_config(config)
    request_page("explorer")


def clear_caches():
    """Empty the dashboard's Streamlit caches (tests call this between runs)."""
    _pool_slot.clear()
    _explore.clear()
    _prediction_seconds.clear()
    _sweep_chunk.clear()
    _peers.clear()
    _explorer_figures.clear()


# --------------------------------------------------------------------------- explorer view


def _label_formatter(classes):
    """Binary labels print as -1/+1, any other labels as they are."""
    if set(classes) == {-1, 1}:
        return lambda label: f"{label:+d}"
    return str


def show_explorer(config):
    """Draw the Explorer for ``config`` (shared by the Explorer and Your-data pages)."""
    from sdwec import plots

    result = explore(config)
    sol = result.solution
    sdwec_row, bagging_row = result.methods[0], result.methods[1]
    l = len(sol.weights)
    cols = st.columns(4)
    cols[0].metric("Test accuracy (SDWEC)", f"{sdwec_row['test']:.4f}",
                   delta=f"{sdwec_row['test'] - bagging_row['test']:+.4f} vs bagging",
                   delta_color="normal" if sdwec_row['test'] != bagging_row['test'] else "off")
    cols[1].metric("Validation accuracy", f"{sdwec_row['validation']:.4f}",
                   help="The weights are fitted on this split.")
    cols[2].metric("Sparsity", f"{sol.sparsity:.3f}", help="1 − (non-zero weights) / l (eq. 12)")
    cols[3].metric("Classifiers used", f"{sol.n_selected} / {l}")
    fmt = _label_formatter(result.classes)
    abstain = fmt(result.abstain_label)
    if sol.n_selected == 0:
        st.warning(
            f"Every weight was thresholded to zero, so the ensemble **abstains**: it predicts "
            f"the most frequent validation class, **{abstain}**, for every row, and the "
            f"accuracies above are that constant guess's. To keep some trees, raise λ, lower "
            f"β or ε, or choose the threshold rule *none*.")
    else:
        st.caption(f"Rule for an all-zero weight vector (and for tied votes): predict the most "
                   f"frequent validation class, {abstain}. Splits: {result.n_val} validation "
                   f"and {result.n_test} test rows; classes "
                   f"{', '.join(map(fmt, result.classes))}.")
    source, _ = _source(config)
    methods_fig, convergence_fig, weights_fig = _explorer_figures(
        source, config.task, config.n_trees, config.seed,
        tuple(sorted(config.solver_params().items())), result)
    left, right = st.columns(2)
    left.plotly_chart(methods_fig, key="explorer_methods")
    right.plotly_chart(convergence_fig, key="explorer_convergence")
    st.plotly_chart(weights_fig, key="explorer_weights")
    timing_col, text_col = st.columns([3, 2])
    measured = prediction_timing(config, sol.weights)
    timing_col.plotly_chart(plots.prediction_time(measured), key="explorer_timing")
    text_col.markdown(
        f"**Prediction time, measured on this server.** The pruned ensemble evaluates "
        f"{measured.n_pruned} of {measured.n_full} trees on the {measured.n_rows} test rows: "
        f"{1e3 * measured.pruned_seconds:.2f} ms against {1e3 * measured.full_seconds:.2f} ms "
        f"(×{measured.speedup:.1f} faster; median of {measured.repeats} runs, each tree's "
        f"prediction plus the weighted vote). The paper instead quotes the formula "
        f"(1 − sparsity)·T(l).")
    show_downloads(config, result)
    return result


def model_bytes(pool, solution):
    """The pruned model of ``solution`` on ``pool`` as a joblib file (``bytes``)."""
    from sdwec import export

    model = export.pruned_model(pool, solution.weights, params=solution.params,
                                solution=solution)
    return export.model_joblib(model)


def show_downloads(config, result):
    """Download buttons: the weights (CSV, JSON with provenance) and the pruned model."""
    from sdwec import export

    sol = result.solution
    row = result.methods[0]
    source, _ = _source(config)
    name = source if config.dataset != USER_DATA else user_dataset()[1].name
    meta = dict(params=dict(sol.params, n_trees=config.n_trees, task=config.task),
                dataset=name, seed=config.seed,
                metrics={"test_accuracy": row["test"], "validation_accuracy": row["validation"],
                         "sparsity": sol.sparsity, "n_selected": sol.n_selected})
    stem = "sdwec_" + "".join(c if c.isalnum() else "_" for c in str(name)) + f"_lam{config.lam:g}"
    st.subheader("Downloads")
    cols = st.columns(3)
    cols[0].download_button("Weights (CSV)", export.weights_csv(sol.weights, **meta),
                            file_name=f"{stem}_weights.csv", mime="text/csv",
                            key="download_csv", on_click="ignore", icon=":material/table:")
    cols[1].download_button("Weights and provenance (JSON)",
                            export.weights_json(sol.weights, **meta),
                            file_name=f"{stem}_weights.json", mime="application/json",
                            key="download_json", on_click="ignore", icon=":material/data_object:")
    pool = get_pool(config)
    # Built only when clicked: serialising the trees takes longer than a slider move.
    cols[2].download_button("Pruned model (joblib)", lambda: model_bytes(pool, sol),
                            file_name=f"{stem}_model.joblib",
                            mime="application/octet-stream", key="download_model",
                            on_click="ignore", icon=":material/forest:")
    st.caption("The model file holds an `SDWECClassifier` with only the selected trees: "
               "`joblib.load(path).predict(X)` with X's columns in the dataset's order "
               "(`sdwec` must be importable; load only files you trust).")


# --------------------------------------------------------------------------- paper page

#: Where ``python -m sdwec reproduce`` writes its per-row results.
REPRODUCTION_CSV = (__import__("pathlib").Path(__file__).resolve().parent.parent
                    / "results" / "reproduction" / "results.csv")


@st.cache_data(max_entries=4, show_spinner=False)
def _read_reproduction(path, mtime):
    import pandas as pd

    return pd.read_csv(path)


def stored_reproduction():
    """The committed reproduction rows (``results/reproduction/results.csv``) or ``None``."""
    path = REPRODUCTION_CSV
    if not path.exists():
        return None
    return _read_reproduction(str(path), path.stat().st_mtime)


def paper_table(rows):
    """Mean test accuracy per (dataset, method) beside Table 3's published value.

    Parameters
    ----------
    rows : pandas.DataFrame
        Rows of :func:`sdwec.experiments.reproduce` (``dataset``, ``method``, ``accuracy``,
        ``sparsity``, ``repeat``).

    Returns
    -------
    pandas.DataFrame
        ``dataset``, ``method``, ``paper``, ``ours``, ``sparsity``, ``repeats`` for the
        paper's six methods.
    """
    import pandas as pd

    from sdwec import paper

    rows = rows[rows["method"].isin(paper.TABLE3_METHODS)]
    means = rows.groupby(["dataset", "method"], sort=False).agg(
        ours=("accuracy", "mean"), sparsity=("sparsity", "mean"),
        repeats=("repeat", "nunique")).reset_index()
    means["paper"] = [paper.TABLE3.get(d, {}).get(m, np.nan)
                      for d, m in zip(means["dataset"], means["method"])]
    return pd.DataFrame(means[["dataset", "method", "paper", "ours", "sparsity", "repeats"]])


def live_reproduction(names, repeats, n_trees, task="binary"):
    """Run the paper's experiment on ``names`` now, job by job, with a progress bar."""
    import pandas as pd

    from sdwec import experiments

    jobs = [(name, r) for name in names for r in range(repeats)]
    if not jobs:
        raise ValueError("choose at least one dataset to run")
    progress = _Progress("Reproducing Table 3")
    rows = []
    try:
        for done, (name, r) in enumerate(jobs):
            progress(done, len(jobs), f"{name}, repeat {r + 1} of {repeats}")
            rows.extend(experiments.run_job(name, r, n_trees=n_trees, task=task))
    finally:
        progress.close()
    return pd.DataFrame(rows)


def training_times(names, sizes, seed=0):
    """Measure SDWEC's weight-finding time on real votes, in the shape of Table 5.

    For each dataset the pool of ``max(sizes)`` trees (seed ``seed``) votes on its training
    split; the first ``l`` trees' votes are the ``H`` that :func:`sdwec.solve` is timed on
    (compression included, k = 25; median of :data:`TIMING_REPEATS` runs), as the paper
    times its training rows.
    """
    import pandas as pd

    from sdwec import paper, timing
    from sdwec.pool import prediction_matrix

    sizes = sorted(int(l) for l in sizes)
    if not names or not sizes:
        raise ValueError("choose at least one dataset and one pool size l")
    progress = _Progress("Timing SDWEC")
    out = []
    try:
        for i, name in enumerate(names):
            progress(i, len(names), f"{name}: training {sizes[-1]} trees")
            pool = _pool(name, "binary", sizes[-1], seed)
            votes = prediction_matrix(pool.estimators, pool.X_train, pool.classes)
            for l in sizes:
                progress(i, len(names), f"{name}: solving with l = {l}")
                seconds = timing.weight_finding_seconds(votes[:, :l], pool.y_train,
                                                        repeats=TIMING_REPEATS)
                published = paper.TABLE5.get(name)
                paper_seconds = (published[1][paper.TABLE5_L.index(l)]
                                 if published and l in paper.TABLE5_L else np.nan)
                out.append({"dataset": name, "m": len(pool.y_train), "l": l,
                            "seconds": seconds, "paper_m": published[0] if published else np.nan,
                            "paper_seconds": paper_seconds})
    finally:
        progress.close()
    return pd.DataFrame(out)
