"""A link cannot start heavy training on its own: over a budget, the viewer confirms first.

The whole configuration lives in the URL (:mod:`dashboard.config`), so anyone's link can ask
for a pool of 1,000 trees on NSL-KDD (an hour of both cores) or a new split seed of every
dataset.  The first run of a session reads the link; while the pool settings it asked for
(dataset, task, seed, l, splits) are unchanged, the pools they need that are not on disk are
costed with :func:`dashboard.estimates.training_seconds_range`, and if the high end of that
range is over :data:`LINK_BUDGET_SECONDS` (``$SDWEC_LINK_BUDGET_SECONDS``) the page says what
it would train and waits for a "Train it" click.  The viewer's own moves of the sidebar's
widgets train as before: they are a choice, made with the sidebar's time note in view.

The decision (:func:`training_ask`, :class:`TrainingAsk`) is pure; :func:`remember_link` and
:func:`confirm_link_training` are the page's part, called by
:func:`dashboard.sidebar.page_setup`.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

import streamlit as st

from dashboard import estimates, page_pools
from sdwec import datasets, pool
from sdwec.errors import DataError

LINK_BUDGET_ENV = "SDWEC_LINK_BUDGET_SECONDS"
#: Training a link may start without the viewer's click: the high end of the estimated range,
#: in seconds.  Every shipped dataset but NSL-KDD trains its default configuration within it
#: on a new seed (l = 200 on its default splits: 10 for the small UCI sets, 22–37 s; 3 for
#: waveform, 7–48 s); one untrained NSL-KDD pool of any size (2–16 min at l = 200), or a
#: small set at l = 500 over 10 splits (55–92 s), needs the click.
LINK_BUDGET_SECONDS = 60.0
#: Session key of the configuration the session's link asked for, until it is confirmed,
#: found within the budget, or its pool settings are changed by the viewer.
LINK_STATE = "_cfg_link"
#: The Config fields that decide which pools are trained.
POOL_FIELDS = ("dataset", "task", "seed", "n_trees", "splits")


def link_budget_seconds():
    """:data:`LINK_BUDGET_SECONDS`, or ``$SDWEC_LINK_BUDGET_SECONDS`` when it is a number."""
    try:
        return float(os.environ[LINK_BUDGET_ENV])
    except (KeyError, ValueError):
        return LINK_BUDGET_SECONDS


@dataclass(frozen=True)
class TrainingAsk:
    """What a configuration would train before its page can show anything.

    Attributes
    ----------
    pools : int
        Pools not on disk (one per split).
    n_trees : int
    label : str
        The dataset's name.
    seconds : (float, float)
        Estimated training time of those pools, a (low, high) range.
    budget : float
        Seconds of training allowed without a click.
    """

    pools: int
    n_trees: int
    label: str
    seconds: tuple
    budget: float

    @property
    def needs_confirmation(self) -> bool:
        """Whether the estimate's high end is over the budget."""
        return self.pools > 0 and self.seconds[1] > self.budget

    def message(self) -> str:
        """What would be trained, how long it takes, and what the viewer can do."""
        pools = "one pool" if self.pools == 1 else f"{self.pools} pools (one per split)"
        return (f"This link asks for {pools} of {self.n_trees:,} trees on {self.label} that "
                f"{'is' if self.pools == 1 else 'are'} not trained yet: roughly "
                f"{estimates.duration_range(*self.seconds)} of training on this machine, more "
                f"than the {self.budget:.0f} s a link may start on its own. Nothing is trained "
                f"until you click **Train it**; or choose a smaller pool size l, fewer splits "
                f"or another dataset in the sidebar.")


def training_ask(n_rows, n_features, n_trees, pools, label, budget=None):
    """The :class:`TrainingAsk` of ``pools`` untrained pools of ``n_trees`` trees.

    Parameters
    ----------
    n_rows, n_features : int
        Shape of the whole dataset.
    n_trees : int
    pools : int
        Pools that are not on disk.
    label : str
        The dataset's name as the page shows it (Markdown; an upload's file name literal).
    budget : float, optional
        Default :func:`link_budget_seconds`.

    Returns
    -------
    TrainingAsk
    """
    budget = link_budget_seconds() if budget is None else float(budget)
    seconds = estimates.training_seconds_range(n_rows, n_features, n_trees, pools=pools) \
        if pools else (0.0, 0.0)
    return TrainingAsk(int(pools), int(n_trees), str(label), seconds, budget)


@functools.lru_cache(maxsize=None)
def _shape(name):
    return datasets.load(name).X.shape


def config_ask(config, budget=None):
    """The :class:`TrainingAsk` of a :class:`~dashboard.config.Config`'s pools, or ``None``
    when they cannot be named (an upload that this session does not hold)."""
    try:
        refs = page_pools.pool_refs(config)
    except DataError:
        return None
    first = refs[0]
    shape = first.dataset.X.shape if first.dataset is not None else _shape(first.key.source)
    # A pool another process trains now (the warm-up, a worker, another replica) is not this
    # link's to start: the page waits for it and shows that training's progress.
    untrained = sum(not pool.is_cached(ref.key) and pool.training_progress(ref.key) is None
                    for ref in refs)
    return training_ask(*shape, first.key.n_trees, untrained, first.shown, budget)


def _pool_settings(config):
    return tuple(getattr(config, name) for name in POOL_FIELDS)


def remember_link(config):
    """Record ``config`` as what this session's link asked for (its first run)."""
    st.session_state[LINK_STATE] = config


def confirm_link_training(config):
    """Whether the page may train ``config``'s pools now.

    ``True`` unless ``config`` still has the pool settings of the session's link and their
    untrained pools are over the budget; then the page shows what they would train and a
    "Train it" button, and returns ``False`` (the caller stops the page).
    """
    state = st.session_state
    link = state.get(LINK_STATE)
    if link is None:
        return True
    ask = None
    if _pool_settings(link) == _pool_settings(config):
        ask = config_ask(config)
    if ask is None or not ask.needs_confirmation:
        state.pop(LINK_STATE, None)  # the viewer's own choice from now on
        return True
    st.warning(ask.message())
    st.button("Train it", key="link_train_it", type="primary", on_click=state.pop,
              args=(LINK_STATE, None))
    return False
