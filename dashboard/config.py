"""The dashboard's configuration: what the sidebar sets, and its query-string round trip.

No Streamlit here: a :class:`Config` is read from and written to a plain mapping, so the URL
handling is tested without a running app.  The whole configuration lives in the URL, so a
link shares it and a reload keeps it.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

from dashboard.echo import literal
from sdwec import datasets
from sdwec.comparison import SPLIT_STEPS, default_splits
from sdwec.paper import PRESETS
from sdwec.params import SolverParams
from sdwec.solver import THRESHOLDS

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
#: Every value the β and γ sliders take.
BETA_GRID = tuple(float(v) for v in range(int(BETA_RANGE[0]), int(BETA_RANGE[1]) + 1))
GAMMA_GRID = tuple(float(v) for v in range(int(GAMMA_RANGE[0]), int(GAMMA_RANGE[1]) + 1))
ITERATIONS_RANGE = (1, 100, 1)
SEED_RANGE = (0, 9999, 1)
#: How many stratified splits (seeds ``seed .. seed + r - 1``) the Explorer and the Frontier
#: average over. The default follows the dataset's size (:func:`dataset_splits`).
SPLIT_CHOICES = SPLIT_STEPS
#: What SDWEC is fitted on: the paper's validation votes, or our SDWEC-OOB (docs/oob.md):
#: the training rows' out-of-bag votes stacked with the validation rows, equal votes.
FITS = ("paper", "oob")
#: The solver parameters a pin holds, in its query-string order.
PIN_FIELDS = ("lam", "beta", "gamma", "eps", "iterations", "threshold")


@dataclass(frozen=True)
class Config:
    """Everything the sidebar sets; the whole of it lives in the URL query string."""

    dataset: str = DEFAULT_DATASET
    task: str = "binary"
    seed: int = 0
    n_trees: int = 200
    lam: float = PRESETS["SDWEC-B"]["lam"]
    beta: float = PRESETS["SDWEC-B"]["beta"]
    gamma: float = PRESETS["SDWEC-B"]["gamma"]
    eps: float = PRESETS["SDWEC-B"]["eps"]
    iterations: int = 25
    threshold: str = "paper"
    #: ``None`` (the default) becomes the dataset's default number of splits.
    splits: int = None
    fit: str = "paper"
    #: Solver parameters kept for comparison (:data:`PIN_FIELDS` order), or empty.
    pin: tuple = ()

    def __post_init__(self):
        if self.splits is None:
            object.__setattr__(self, "splits", dataset_splits(self.dataset))

    @functools.cached_property
    def params(self) -> SolverParams:
        """The solver's parameters as one value: what the Explorer's caches are keyed on
        and what reaches :func:`sdwec.solve` and every :class:`~sdwec.solver.Solution`
        unchanged (made once per configuration)."""
        return SolverParams(lam=self.lam, beta=self.beta, gamma=self.gamma, eps=self.eps,
                            iterations=self.iterations, threshold=self.threshold)

    @property
    def fit_on(self) -> str:
        """What SDWEC is fitted on, as :func:`sdwec.comparison.compare` names it."""
        return "oob+validation" if self.fit == "oob" else "validation"

    def pinned(self):
        """The pinned configuration (same pool, the pin's solver parameters), or ``None``."""
        return replace(self, **dict(zip(PIN_FIELDS, self.pin)), pin=()) if self.pin else None

    def with_pin(self):
        """This configuration with its own solver parameters pinned."""
        return replace(self, pin=tuple(getattr(self, name) for name in PIN_FIELDS))


@functools.lru_cache(maxsize=None)
def _shipped_rows(name):
    return datasets.load(name).X.shape[0]


def dataset_splits(dataset, n_rows=None):
    """The default number of splits of ``dataset``: :func:`sdwec.comparison.default_splits`.

    Every headline must rest on enough test rows, so the default averages over several
    splits where a test split is small (10 for the UCI sets under 1,000 rows, whose test
    splits hold 17 to 85 rows), fewer as it grows (3 for waveform's 500) and one where it
    holds thousands (NSL-KDD: 12,597). The URL's ``r`` overrides it.

    Parameters
    ----------
    dataset : str
        A shipped dataset or :data:`USER_DATA`.
    n_rows : int, optional
        The upload's rows, for :data:`USER_DATA` (without them: 1, since the upload is not
        known here).
    """
    if dataset == USER_DATA:
        return 1 if n_rows is None else default_splits(n_rows)
    return default_splits(_shipped_rows(dataset) if n_rows is None else n_rows)


#: Config field -> query-string key (short keys keep shared links readable).
QUERY_KEYS = {"dataset": "dataset", "task": "task", "seed": "seed", "n_trees": "l",
              "lam": "lam", "beta": "beta", "gamma": "gamma", "eps": "eps",
              "iterations": "k", "threshold": "thr", "splits": "r", "fit": "fit", "pin": "pin"}
#: Fields written to the query string only when they differ from the default.
_OPTIONAL_KEYS = ("splits", "fit", "pin")
#: Config field -> Streamlit widget key (the pin is set by a button, not a widget).
WIDGET_KEYS = {name: f"cfg_{name}" for name in QUERY_KEYS if name != "pin"}


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
    return tuple(datasets.names()) + (USER_DATA,)


def task_choices(dataset):
    """Tasks the sidebar offers for ``dataset`` (``("auto",)`` for uploaded data)."""
    if dataset == USER_DATA:
        return ("auto",)
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
        One plain-language note (Markdown) per value that was ignored or changed; the
        link's text in it is shown literally (:func:`dashboard.echo.literal`).
    """
    dataset_names = tuple(dataset_choices() if dataset_names is None else dataset_names)
    tasks = task_choices if tasks is None else tasks
    defaults = Config()
    values, problems = {}, []

    def raw(name):
        value = _single(query.get(QUERY_KEYS[name]))
        return None if value is None or str(value).strip() == "" else str(value).strip()

    def number(name, kind, low, high, default=None):
        default = getattr(defaults, name) if default is None else default
        text = raw(name)
        if text is None:
            return default
        try:
            value = kind(float(text)) if kind is int else float(text)
            if not math.isfinite(value):
                raise ValueError
        except (ValueError, OverflowError):
            problems.append(f"{literal(f'{QUERY_KEYS[name]}={text}')} is not a number; "
                            f"using {default}.")
            return default
        if not low <= value <= high:
            clipped = min(max(value, low), high)
            problems.append(f"{literal(f'{QUERY_KEYS[name]}={text}')} is outside "
                            f"[{low:g}, {high:g}]; using {clipped:g}.")
            value = clipped
        return value

    dataset = raw("dataset")
    if dataset is None or dataset not in dataset_names:
        if dataset is not None:
            problems.append(f"Unknown dataset {literal(dataset)}; using {defaults.dataset}.")
        dataset = defaults.dataset if defaults.dataset in dataset_names else dataset_names[0]
    values["dataset"] = dataset
    offered = tuple(tasks(dataset))
    task = raw("task")
    if task not in offered:
        if task is not None:
            problems.append(f"{dataset} has no task {literal(task)}; using {offered[0]}.")
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
    if threshold not in THRESHOLDS:
        if threshold is not None:
            problems.append(f"Unknown threshold rule {literal(threshold)}; using "
                            f"{defaults.threshold}.")
        threshold = defaults.threshold
    values["threshold"] = threshold
    # No `r` (or an unusable one): the dataset's default number of splits.
    splits = int(number("splits", int, SPLIT_CHOICES[0], SPLIT_CHOICES[-1],
                        default=dataset_splits(dataset)))
    values["splits"] = int(_nearest(splits, SPLIT_CHOICES))
    fit = raw("fit")
    if fit is not None and fit not in FITS:
        problems.append(f"Unknown fit {literal(fit)}; using {defaults.fit} (choose "
                        f"{' or '.join(FITS)}).")
    values["fit"] = fit if fit in FITS else defaults.fit
    pin = raw("pin")
    if pin is not None:
        values["pin"] = _read_pin(pin, problems)
    return Config(**values), problems


def _read_pin(text, problems):
    """The pin's parameters from ``lam,beta,gamma,eps,k,thr`` (``()`` if unusable)."""
    parts = text.split(",")
    query = dict(zip((QUERY_KEYS[name] for name in PIN_FIELDS), parts))
    pinned, pin_problems = config_from_query(query, (DEFAULT_DATASET,),
                                             lambda name: ("binary",))
    if len(parts) != len(PIN_FIELDS) or pin_problems:
        problems.append(f"The pinned configuration {literal(f'pin={text}')} could not be "
                        f"read; it was dropped (pin again from the Explorer).")
        return ()
    return tuple(getattr(pinned, name) for name in PIN_FIELDS)


def config_to_query(config):
    """The query-string form of ``config`` (``dict`` of ``str``), read back by
    :func:`config_from_query` to the same :class:`Config`."""
    def text(value):
        return f"{value:g}" if isinstance(value, float) else str(value)

    out = {}
    defaults = Config()
    for name, key in QUERY_KEYS.items():
        value = getattr(config, name)
        default = (dataset_splits(config.dataset) if name == "splits"
                   else getattr(defaults, name))
        if name in _OPTIONAL_KEYS and value == default:
            continue
        out[key] = ",".join(map(text, value)) if name == "pin" else text(value)
    return out


def preset_config(config, name):
    """``config`` with the paper's preset ``name`` (SDWEC-A/-B): its λ, β, γ, ε, and the rest
    of the paper's Algorithm 1 as the defaults have it (k, the threshold rule, the fit on
    the validation votes), so that a click always gives the paper's setting."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
    preset, paper = PRESETS[name], Config()
    return replace(config, lam=float(preset["lam"]), beta=float(preset["beta"]),
                   gamma=float(preset["gamma"]), eps=float(preset["eps"]),
                   iterations=paper.iterations, threshold=paper.threshold, fit=paper.fit)


#: Second parameters the Frontier page can sweep, with values on the sidebar's grids.
SECOND_SWEEPS = {"β": ("beta", (5.0, 15.0, 35.0)), "γ": ("gamma", (5.0, 15.0, 30.0)),
                 "ε": ("eps", (0.1, 1.0))}


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
