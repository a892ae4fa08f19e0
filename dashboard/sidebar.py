"""The shared sidebar: widgets mirrored to a :class:`~dashboard.config.Config` and the URL.

The first run of a session reads the query string (a shared link or a reload); after that
the widgets are the source of truth and the query string follows them.  A plain
session-state copy (``_cfg``) carries the values across page changes, because Streamlit
forgets a page's widget values when another page is opened.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path

import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from dashboard import (
    budget,
    charts,
    explorer_answer,
    explorer_cache,
    launch,
    page_pools,
    pools,
    scroll,
    upload_plans,
)
from dashboard import config as cfg
from dashboard.echo import literal
from dashboard.guard import guard
from sdwec import datasets
from sdwec.paper import PRESETS
from sdwec.plots import SWEEP_CUSTOMDATA
from sdwec.solver import THRESHOLDS
from sdwec.teaching import EFFECTS

#: Page name -> script, for :func:`request_page` and ``app.py``'s navigation.
PAGE_FILES = {"explorer": "pages/explorer.py", "lesson": "pages/lesson.py",
              "frontier": "pages/frontier.py", "paper": "pages/paper.py",
              "how": "pages/how_it_works.py", "upload": "pages/your_data.py"}
#: The pages' titles in the menu, in :data:`PAGE_FILES`' order (``app.py``'s navigation).
PAGE_TITLES = {"explorer": "Explorer", "lesson": "Lesson", "frontier": "Frontier",
               "paper": "Paper", "how": "How it works", "upload": "Your data"}
#: A local file, so the app needs no network for its icon (a Material icon name is fetched).
PAGE_ICON = str(Path(__file__).with_name("favicon.png"))


def _write_widgets(config):
    """Put ``config`` into the sidebar's widget keys and the page-independent copy."""
    state = st.session_state
    state["_cfg"] = config
    for name, key in cfg.WIDGET_KEYS.items():
        state[key] = getattr(config, name)


def current_config():
    """The :class:`Config` the sidebar widgets hold now."""
    state = st.session_state
    base = state.get("_cfg", cfg.Config())
    held = {name: state[key] for name, key in cfg.WIDGET_KEYS.items() if key in state}
    if "dataset" in held:
        held["dataset"] = _as_dataset(held["dataset"], base.dataset)
    return replace(base, **held)


def _as_dataset(value, otherwise):
    """The dataset the Dataset box's ``value`` names, else ``otherwise``.

    The box shows an upload by its file name, so its label changes with each upload; a
    browser that still holds the label the page drew before sends that label, and Streamlit
    gives it back as the value itself (no option has it any more).
    """
    if value in cfg.dataset_choices():
        return value
    if isinstance(value, str) and value.startswith(cfg.USER_DATA):
        return cfg.USER_DATA
    return otherwise


def _apply_preset(name):
    _write_widgets(cfg.preset_config(current_config(), name))


def _sync(name):
    """on_change callback: copy widget ``name``'s new value into the plain config copy."""
    state = st.session_state
    state["_cfg"] = replace(state.get("_cfg", cfg.Config()),
                            **{name: state[cfg.WIDGET_KEYS[name]]})


def _dataset_changed():
    state = st.session_state
    key = cfg.WIDGET_KEYS["dataset"]
    state[key] = _as_dataset(state[key], state.get("_cfg", cfg.Config()).dataset)
    _sync("dataset")
    offered = cfg.task_choices(state["_cfg"].dataset)
    if state["_cfg"].task not in offered:
        state["_cfg"] = replace(state["_cfg"], task=offered[0])
    state[cfg.WIDGET_KEYS["task"]] = state["_cfg"].task
    # Another dataset, another size: Splits goes to its default (cfg.dataset_splits).
    state["_cfg"] = replace(state["_cfg"], splits=_default_splits(state["_cfg"].dataset))
    state[cfg.WIDGET_KEYS["splits"]] = state["_cfg"].splits


def _default_splits(dataset):
    """The default number of splits of ``dataset`` (an upload's: from its rows)."""
    upload = st.session_state.get("user_dataset")
    rows = len(upload[1].y) if dataset == cfg.USER_DATA and upload is not None else None
    return cfg.dataset_splits(dataset, rows)


def apply_config(config):
    """Callback helper: load ``config`` into the sidebar (used by "send to the Explorer")."""
    _write_widgets(config)


def request_page(name):
    """Callback helper: ask :func:`page_setup` to switch to page ``name`` on the next run."""
    st.session_state["_cfg_goto"] = name


def send_to_explorer(config):
    """Callback: load ``config`` into the sidebar and open the Explorer."""
    apply_config(config)
    request_page("explorer")


def open_clicked_point(chart_key):
    """The ``on_click`` callback of the Frontier's chart under ``chart_key``: a click on an
    SDWEC point opens it in the Explorer (its λ, β, γ, ε on the sidebar's grids; the pool
    and splits unchanged). Points of other methods carry no SDWEC parameters and are
    ignored."""
    return partial(_open_clicked_point, chart_key)


def _open_clicked_point(chart_key):
    point = charts.clicked_point(chart_key) or {}
    if len(cfg.point_values(point.get("customdata"))) == len(SWEEP_CUSTOMDATA):
        send_to_explorer(cfg.point_config(current_config(), point["customdata"]))


def use_dataset(dataset, task):
    """Callback: make ``dataset`` (e.g. :data:`~dashboard.config.USER_DATA`) the sidebar's."""
    _write_widgets(replace(current_config(), dataset=dataset, task=task,
                           splits=_default_splits(dataset)))


def _format_number(value):
    return f"{value:g}"


def _fit_label(fit):
    return {"paper": "validation votes (the paper)",
            "oob": "out-of-bag + validation (SDWEC-OOB, ours)"}[fit]


def _dataset_label(name):
    """The sidebar's text for a dataset: an upload shows its file name and row count."""
    if name != cfg.USER_DATA:
        return name
    upload = st.session_state.get("user_dataset")
    if upload is None:
        # A file the loader refused: there is one, but not as data.
        refused = upload_plans.refused_upload()
        if refused is not None:
            return f"your data (cannot be used): {refused[0]}"
        return "your data (no file in this session)"
    dataset = upload[1]
    # The count before the name: a long file name is cut at the box's edge, not the count.
    return f"your data ({len(dataset.y):,} rows): {dataset.name}"


def pin_current():
    """Button callback: pin the current configuration for comparison."""
    _write_widgets(current_config().with_pin())


def unpin():
    """Button callback: drop the pinned configuration."""
    _write_widgets(replace(current_config(), pin=()))


def _bound(name):
    """Widget arguments that tie a sidebar widget to config field ``name``."""
    return dict(key=cfg.WIDGET_KEYS[name], on_change=_sync, args=(name,))


def sidebar(cold_note=None, warm=None, live=None, menu=True):
    """Draw the shared sidebar and keep ``st.query_params`` equal to the configuration.

    Parameters
    ----------
    cold_note : callable, optional
        ``cold_note(config) -> str or None``: a warning shown under the pool settings
        (e.g. that this pool is not trained yet and roughly how long it takes).
    warm : callable, optional
        ``warm(n_trees, seed, task) -> ((name, pools on disk, pools needed), ...)``: for
        every shipped dataset with ``task``, how many of the pools of its default view (its
        default splits from ``seed``) are on disk, shown as a caption.
    live : object, optional
        If given, the solver's widgets are not drawn here: their place is left empty for
        :func:`page_setup`, which draws them with the page's live view.
    menu : bool, default=True
        Draw the page menu (:func:`page_menu`); a script run without the dashboard's pages
        (the benchmark's floor page) has none to link to.

    Returns
    -------
    Config
    DeltaGenerator
        The sidebar's place for the solver's widgets.
    """
    state = st.session_state
    if "_cfg" not in state:
        config, problems = cfg.config_from_query(st.query_params.to_dict())
        state["_cfg"] = config
        state["_cfg_problems"] = problems
    # Each page draws its own copy of the sidebar, so the widgets are re-seeded from the
    # plain copy on every run; each widget's on_change callback keeps that copy current.
    for name, key in cfg.WIDGET_KEYS.items():
        state[key] = getattr(state["_cfg"], name)
    sb = st.sidebar
    if menu:
        page_menu(sb)
    # The upload's label is computed now, not in format_func: AppTest calls format_func
    # outside the script run, where the session's upload cannot be seen.
    upload_label = _dataset_label(cfg.USER_DATA)
    # λ comes right after the dataset: at 1280x720 it must be visible without scrolling.
    sb.selectbox("Dataset", cfg.dataset_choices(), key=cfg.WIDGET_KEYS["dataset"],
                 on_change=_dataset_changed,
                 format_func=lambda name: upload_label if name == cfg.USER_DATA else name,
                 help="One of the paper's 11 datasets, or the CSV you upload on *Your data*.")
    # The solver's widgets have their own place here; a page with a live view draws them
    # itself (page_setup): with the view, or before pools that must train.
    solver_box = sb.container()
    if live is None:
        _solver_widgets(solver_box)
    sb.subheader("Pool and splits")
    offered = cfg.task_choices(state[cfg.WIDGET_KEYS["dataset"]])
    col_task, col_splits = sb.columns(2)
    col_task.selectbox("Task", offered, disabled=len(offered) == 1, **_bound("task"),
                       help="Binary tasks use labels ±1; multi-class tasks ask SDWEC that the "
                            "true class outscore every other class (the plurality reading).")
    col_splits.selectbox("Splits", cfg.SPLIT_CHOICES, **_bound("splits"),
                         help="Average over this many stratified 80/10/10 splits (seeds "
                              "seed … seed + r − 1), with their spread. The default follows "
                              "the dataset's size: the fewest of 1, 3, 5, 10 splits whose "
                              "test rows add up to at least 1,000, and at most 10, so small "
                              "datasets get 10 splits although their test rows add up to "
                              "fewer (sonar: 207); waveform gets 3, NSL-KDD 1. Each split "
                              "trains its own pool once.")
    col_seed, col_l = sb.columns(2)
    col_seed.number_input("Split seed", min_value=cfg.SEED_RANGE[0],
                          max_value=cfg.SEED_RANGE[1], step=1, **_bound("seed"),
                          help="Seeds the train/validation/test split and the bagging.")
    col_l.select_slider("Pool size l", cfg.POOL_SIZES, **_bound("n_trees"),
                        help="Number of bagged CART trees the weights are chosen from.")
    # One element per placeholder: a redraw replaces it (a container's old children stay).
    note_slot, disk_slot = sb.empty(), sb.empty()

    def draw_notes():
        config = current_config()
        note = cold_note(config) if cold_note is not None else None
        if note:
            note_slot.info(note)
        else:
            note_slot.empty()
        if warm is not None:
            disk_slot.caption(_disk_caption(config, warm))

    draw_notes()
    # Pools trained later in this run change both notes: they are drawn again then.
    page_pools.on_pools_landed(draw_notes)
    sb.caption("The page address holds this configuration: copy it to share or bookmark.")
    return _publish(), solver_box


def _publish():
    """The widgets' :class:`Config`, copied to the session and the page address."""
    config = current_config()
    st.session_state["_cfg"] = config
    wanted = cfg.config_to_query(config)
    if st.query_params.to_dict() != wanted:
        st.query_params.from_dict(wanted)
    return config


#: The solver tooltips say what a move does (sdwec.teaching.EFFECTS, which
#: tests/test_effects.py measures); the maths behind it is on How it works.
_MATHS = " Measured on the shipped datasets; why, with the formulas: *How it works*."


def _lambda_measured(config):
    """Where every tree is off along λ on this page's own pools, once the answers along λ
    are computed ahead (``""`` before, or where there is no pool to measure on)."""
    try:
        line = explorer_cache.lambda_line(page_pools.pool_refs(config), config)
    except Exception:  # noqa: BLE001 - no upload, no pool yet: the general sentence alone
        return ""
    return "" if not line else explorer_answer.lambda_note(line, config.dataset
                                                            if config.dataset != cfg.USER_DATA
                                                            else "your data")


def _solver_widgets(box, sliders=None):
    """λ, the presets, β, γ, ε, k, the threshold rule and the fit, drawn into ``box``; with
    ``sliders`` (a container on the page), λ, β, γ and ε go there in one row instead."""
    row = (None if sliders is None else
           sliders.columns([2.2, 1, 1, 1], vertical_alignment="bottom"))
    current = current_config()
    (box if row is None else row[0]).select_slider(
        "λ (data fidelity, log scale)", cfg.LAMBDA_GRID, format_func=_format_number,
        **_bound("lam"), help="Weight of the validation mistakes against the L1 term that "
                              "switches trees off. " + EFFECTS["lam"].text
                              + _lambda_measured(current) + _MATHS)
    for col, name in zip(box.columns(len(PRESETS)), PRESETS):
        p = PRESETS[name]
        # The preset the current setting is (if any) is highlighted: nothing said so.
        active = cfg.preset_config(current, name) == current
        col.button(name, key=f"preset_{name}", on_click=_apply_preset, args=(name,),
                   width="stretch", type="primary" if active else "secondary",
                   help=f"The paper's {name}: λ={p['lam']:g}, β={p['beta']:g}, "
                        f"γ={p['gamma']:g}, ε={p['eps']:g}, with the paper's k = "
                        f"{cfg.Config().iterations}, threshold rule and fit (validation "
                        f"votes). Highlighted while the settings are exactly these.")
    (box if row is None else row[1]).slider(
        "β (non-negativity penalty)", min_value=cfg.BETA_RANGE[0],
        max_value=cfg.BETA_RANGE[1], step=cfg.BETA_RANGE[2], format="%g", **_bound("beta"),
        help=EFFECTS["beta"].text + _MATHS)
    (box if row is None else row[2]).slider(
        "γ (log-sum-exp sharpness)", min_value=cfg.GAMMA_RANGE[0],
        max_value=cfg.GAMMA_RANGE[1], step=cfg.GAMMA_RANGE[2], format="%g",
        **_bound("gamma"), help=EFFECTS["gamma"].text + _MATHS)
    (box if row is None else row[3]).select_slider(
        "ε (log scale)", cfg.EPS_GRID, format_func=_format_number, **_bound("eps"),
        help=EFFECTS["eps"].text + _MATHS)
    box.slider("Iterations k", min_value=cfg.ITERATIONS_RANGE[0],
              max_value=cfg.ITERATIONS_RANGE[1], step=cfg.ITERATIONS_RANGE[2],
              **_bound("iterations"),
              help="Passes of Algorithm 1 (the paper: 25). " + EFFECTS["iterations"].text
                   + _MATHS)
    box.selectbox("Threshold rule (line 15)", THRESHOLDS, **_bound("threshold"),
                 help="Line 15 of Algorithm 1: which final weights are cut to zero. "
                      + EFFECTS["threshold"].text + _MATHS)
    box.selectbox("Fit on", cfg.FITS, format_func=_fit_label, **_bound("fit"),
                 help="The paper fits the weights on the validation rows only. SDWEC-OOB "
                      "(ours, results/oob/) fits them on the training rows' out-of-bag votes "
                      "stacked with the validation rows, and its kept trees vote equally.")


def page_menu(where):
    """The pages, as links at the top of ``where`` (the sidebar): the same on every page,
    however the page was opened (Streamlit's own menu is hidden; see .streamlit/config.toml)."""
    for name, path in PAGE_FILES.items():
        try:
            where.page_link(path, label=PAGE_TITLES[name])
        except StreamlitPageNotFoundError:
            # A page script run as the entry point (AppTest of one page) has no pages
            # beside it to link to: no menu, rather than no sidebar.
            return
    where.divider()


def _disk_caption(config, warm):
    """Which shipped datasets open without training: every pool their default view needs
    (the sidebar's pool size, task and seed; each dataset's own default splits) is on disk.
    ``warm`` as in :func:`sidebar`; only the datasets whose task it is are counted."""
    task = config.task if config.task in datasets.TASKS else "binary"
    counts = warm(config.n_trees, config.seed, task)
    missing = [(name, n, needed) for name, n, needed in counts if n < needed]
    kind = "binary" if task == "binary" else "multi-class"
    head = (f"Pools on disk for l = {config.n_trees}, the {kind} task, seed {config.seed} "
            f"onward, each dataset at its default splits: all of them for "
            f"{len(counts) - len(missing)} of {len(counts)} datasets")
    rest = ", ".join(f"{name} ({n} of {needed} splits)" if n else name
                     for name, n, needed in missing)
    note = head + (f"; not yet: {rest}." if missing else ".")
    note += (" A dataset with all its pools on disk opens in seconds; the others are "
             "trained first.")
    others = len(datasets.names()) - len(counts)
    if task == "multiclass" and others:
        note += (f" The other {others} have two classes: their multi-class task is the "
                 f"binary one.")
    return note


def page_setup(title, trains=True, live=None, menu=True, controls="sidebar"):
    """Start a page: page config, the shared sidebar, a pending "go to" request, and for a
    page that trains pools, the link's training budget (:mod:`dashboard.budget`).

    Every page calls this first instead of relying on ``app.py`` to draw the sidebar: when a
    ``pages/`` folder exists, Streamlit (and ``AppTest``) may run a page script on its own
    (the legacy multipage mode, used for the first request after start-up), and the page
    must still get its sidebar and configuration.

    Parameters
    ----------
    title : str
    trains : bool, default=True
        Whether the page trains the configuration's pools: if so, and the session's link
        asks for more training than it may start on its own, the page shows a "Train it"
        button instead and stops here.
    live : callable, optional
        ``live(config)`` draws the page's view of the solver's parameters on the
        configuration's pools, which are loaded (or trained) first, with the solver's
        widgets (λ, the presets, β, γ, ε, k, the threshold rule, the fit); see
        :func:`_live_fragment` for when they are a fragment.
    menu : bool, default=True
        Draw the page menu at the top of the sidebar (see :func:`sidebar`).
    controls : {"sidebar", "page"}, default="sidebar"
        Where λ, β, γ and ε go: the sidebar, or one row at the top of the page's view (the
        sidebar then starts collapsed, for a projector).

    Returns
    -------
    Config or None
        ``None`` if the sidebar could not be drawn (the error is shown).
    """
    st.set_page_config(page_title=f"{title} · SDWEC Explorer", page_icon=PAGE_ICON,
                       layout="wide",
                       initial_sidebar_state="collapsed" if controls == "page" else "auto")
    config = solver_box = None
    from_link = "_cfg" not in st.session_state  # the first run reads the link
    # Results are left on the page only if this page drew its view in the last run.
    drawn = st.session_state.pop("_view_drawn", None) == title
    page_pools.on_pools_landed(None)  # until this run's sidebar registers its notes
    with guard("the sidebar"):
        config, solver_box = sidebar(cold_note=page_pools.cold_start_note,
                                     warm=pools.warm_pools, live=live, menu=menu)
        if from_link:
            budget.remember_link(config)
    target = st.session_state.pop("_cfg_goto", None)
    if target is not None:
        st.switch_page(PAGE_FILES[target])
    if config is not None:
        scroll.top_on_dataset_change(config.dataset)
    if trains and config is not None:
        allowed = False  # a failed check trains nothing
        with guard("the link's training budget"):
            allowed = budget.confirm_link_training(config)
        if not allowed:
            st.stop()
    if live is not None and config is not None:
        loaded = training = False
        waiting = st.empty()  # there at every run, so that what follows keeps its place
        with guard(f"the {title}"):
            # Before the view, outside its fragment: pools trained now redraw the sidebar's
            # notes, and while they train the view's old results are still shown.
            refs = page_pools.pool_refs(config)
            training = pools.needs_training(refs)
            if training:
                # The solver's widgets stay in the sidebar while the pools train (λ is
                # under the dataset on a 1280x720 projector): drawn now, in this whole run.
                _solver_widgets(solver_box, st.container() if controls == "page" else None)
                # The last settings' results may stay on the page, at full strength, while
                # the new pools train: a reader took them for the new seed's.
                waiting.caption("Results appear once these pools are trained" + (
                    "; until then, any results still on the page are the previous settings'."
                    if drawn else "."))
            page_pools.get_pools(refs)
            waiting.empty()
            loaded = True
        if loaded and training:
            # Drawn afresh by a run like every later one: a view drawn here, outside the
            # fragment that draws it at every later run, was not updated in place by the
            # next slider move (every chart was rebuilt; tests/test_browser.py).
            st.rerun()
        if loaded:
            _live_runner()(solver_box, live, controls)
            st.session_state["_view_drawn"] = title
    return config


def _live_runner():
    """:func:`_live_fragment` when the server was started by :mod:`dashboard.launch`, else
    :func:`_live_view` (a plain ``streamlit run`` would drop a reconnected page's moves)."""
    return _live_fragment if launch.installed() else _live_view


def _live_view(solver_box, view, controls="sidebar"):
    """The solver's widgets (in the sidebar's ``solver_box``, or λ, β, γ, ε atop the view:
    :func:`page_setup`'s ``controls``) and ``view`` of them."""
    config = None
    with guard("the sidebar"):
        _solver_widgets(solver_box, st.container() if controls == "page" else None)
        config = _publish()
    if config is not None:
        view(config)


@st.fragment
def _live_fragment(solver_box, view, controls="sidebar"):
    """:func:`_live_view` as a fragment: moving a solver control reruns only this, not the
    sidebar's pool widgets and notes, which depend on the pool settings alone.

    Used only under :mod:`dashboard.launch`: a page that reconnects to another server process
    (a failed-over or restarted replica) asks a session that has never run the page for a
    fragment rerun, which plain Streamlit drops (every slider move was lost after a
    failover, tests/test_serve.py); the launcher turns it into a whole-page rerun.
    """
    page_pools.on_pools_landed(None)  # the sidebar's notes are outside this fragment
    _live_view(solver_box, view, controls)


def show_config_problems(toast=False):
    """Show (once) what was repaired when the query string was read, and (once per refused
    file) that a file uploaded on Your data was refused where the page shows another
    dataset: the sidebar's Dataset box alone did not say why the page was not on the file.
    ``toast``: as a toast over the page's corner, not a box in it (a page that must fit one
    screen)."""
    refused = upload_plans.refused_upload()
    dataset = current_config().dataset
    if refused is not None and dataset != cfg.USER_DATA \
            and st.session_state.get("_refusal_told") != refused:
        st.session_state["_refusal_told"] = refused
        text = (f"The file uploaded on *Your data* ({literal(refused[0])}) could not be read, "
                f"so this page shows **{dataset}**, the sidebar's dataset. *Your data* says "
                "what to fix.")
        if toast:
            st.toast(text, icon=":material/info:", duration="long")
        else:
            st.info(text)
    problems = st.session_state.pop("_cfg_problems", None)
    # Markdown whose quoted link values are inline code (config.config_from_query): a link
    # cannot format this warning.
    if problems:
        text = "Some settings in the link could not be used:"
        if toast:
            st.toast(f"{text} {' '.join(problems)}", icon=":material/warning:", duration="long")
        else:
            st.warning(text + "\n\n" + "\n".join(f"- {p}" for p in problems))
