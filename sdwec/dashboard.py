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
from dataclasses import asdict, dataclass, fields, replace

import numpy as np

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
#: Config field -> Streamlit widget key.
WIDGET_KEYS = {name: f"cfg_{name}" for name in QUERY_KEYS}


# --------------------------------------------------------------------------- query string


def _nearest(value, grid, log=False):
    """Grid point nearest to ``value`` (in log distance when ``log``)."""
    if log:
        return min(grid, key=lambda g: abs(math.log(g) - math.log(value)))
    return min(grid, key=lambda g: abs(g - value))


def _first(value):
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
        value = _first(query.get(QUERY_KEYS[name]))
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
    import streamlit as st

    return st.session_state


def _write_widgets(config):
    state = _state()
    for name, key in WIDGET_KEYS.items():
        state[key] = getattr(config, name)


def current_config():
    """The :class:`Config` the sidebar widgets hold now."""
    state = _state()
    return Config(**{name: state[key] for name, key in WIDGET_KEYS.items() if key in state})


def _apply_preset(name):
    _write_widgets(preset_config(current_config(), name))


def _dataset_changed():
    state = _state()
    offered = task_choices(state[WIDGET_KEYS["dataset"]])
    if state.get(WIDGET_KEYS["task"]) not in offered:
        state[WIDGET_KEYS["task"]] = offered[0]


def apply_config(config):
    """Callback helper: load ``config`` into the sidebar (used by "send to the Explorer")."""
    _write_widgets(config)


def request_page(name):
    """Callback helper: ask ``app.py`` to switch to page ``name`` on the next run."""
    _state()["_cfg_goto"] = name


def pop_page_request():
    """The page asked for by :func:`request_page`, once, or ``None``."""
    return _state().pop("_cfg_goto", None)


def _format_lam(value):
    return f"{value:g}"


def sidebar():
    """Draw the shared sidebar and keep ``st.query_params`` equal to the configuration.

    The first run of a session reads the query string (a shared link or a reload); after
    that the widgets are the source of truth and the query string follows them.

    Returns
    -------
    Config
    """
    import streamlit as st

    state = st.session_state
    if not state.get("_cfg_seeded"):
        config, problems = config_from_query(st.query_params.to_dict())
        _write_widgets(config)
        state["_cfg_seeded"] = True
        state["_cfg_problems"] = problems
    sb = st.sidebar
    sb.header("Configuration")
    names = dataset_choices()
    sb.selectbox("Dataset", names, key=WIDGET_KEYS["dataset"], on_change=_dataset_changed,
                 help="One of the paper's 11 datasets, or the CSV you upload on *Your data*.")
    offered = task_choices(state[WIDGET_KEYS["dataset"]])
    if state.get(WIDGET_KEYS["task"]) not in offered:
        state[WIDGET_KEYS["task"]] = offered[0]
    sb.selectbox("Task", offered, key=WIDGET_KEYS["task"], disabled=len(offered) == 1,
                 help="Binary tasks use labels ±1; multi-class tasks solve SDWEC on the "
                      "correctness matrix.")
    col_seed, col_l = sb.columns(2)
    col_seed.number_input("Split seed", min_value=SEED_RANGE[0], max_value=SEED_RANGE[1],
                          step=1, key=WIDGET_KEYS["seed"],
                          help="Seeds the train/validation/test split and the bagging.")
    col_l.select_slider("Pool size l", POOL_SIZES, key=WIDGET_KEYS["n_trees"],
                        help="Number of bagged CART trees the weights are chosen from.")
    sb.subheader("SDWEC parameters")
    preset_cols = sb.columns(len(solver.PRESETS))
    for col, name in zip(preset_cols, solver.PRESETS):
        p = solver.PRESETS[name]
        col.button(name, key=f"preset_{name}", on_click=_apply_preset, args=(name,),
                   width="stretch",
                   help=f"The paper's {name}: λ={p['lam']:g}, β={p['beta']:g}, "
                        f"γ={p['gamma']:g}, ε={p['eps']:g}.")
    sb.select_slider("λ (data fidelity, log scale)", LAMBDA_GRID, key=WIDGET_KEYS["lam"],
                     format_func=_format_lam,
                     help="Larger λ fits the validation votes harder; smaller λ lets the L1 "
                          "term switch more trees off.")
    sb.slider("β (non-negativity penalty)", min_value=BETA_RANGE[0], max_value=BETA_RANGE[1],
              step=BETA_RANGE[2], key=WIDGET_KEYS["beta"],
              help="Weight of the penalty on negative weights; it also sets the threshold.")
    sb.slider("γ (log-sum-exp sharpness)", min_value=GAMMA_RANGE[0], max_value=GAMMA_RANGE[1],
              step=GAMMA_RANGE[2], key=WIDGET_KEYS["gamma"],
              help="How closely the smooth |w| and max(-w, 0) follow the real ones.")
    sb.select_slider("ε (log scale)", EPS_GRID, key=WIDGET_KEYS["eps"], format_func=_format_lam,
                     help="Keeps the sign relaxation and the adaptive γ finite near zero.")
    sb.slider("Iterations k", min_value=ITERATIONS_RANGE[0], max_value=ITERATIONS_RANGE[1],
              step=ITERATIONS_RANGE[2], key=WIDGET_KEYS["iterations"])
    sb.selectbox("Threshold rule (line 15)", solver.THRESHOLDS, key=WIDGET_KEYS["threshold"],
                 help="paper: one threshold where P(w) with γ/ε falls to 1e-3; adaptive: each "
                      "weight with its own γ_r; none: keep every positive weight.")
    sb.caption("The page address holds this configuration: copy it to share or bookmark.")
    config = current_config()
    wanted = config_to_query(config)
    if st.query_params.to_dict() != wanted:
        st.query_params.from_dict(wanted)
    return config


def show_config_problems():
    """Show (once) what was repaired when the query string was read."""
    import streamlit as st

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
    import streamlit as st

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
