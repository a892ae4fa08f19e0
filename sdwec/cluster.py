"""Pool training on a Dask cluster, when ``$SDWEC_DASK_SCHEDULER`` names one.

:func:`on_dask_cluster` wraps :func:`sdwec.pool.build_pool`: while it runs, joblib's Dask
backend sends the bagged trees' fits (``BaggingClassifier`` shares them out with joblib) to
the cluster's workers, every worker; the split, the single tree and the prediction passes
stay local. The trees are the same as a local build's: each tree's seed is drawn before the
work is shared out. A call with ``n_jobs=1`` stays local (one core asked for, e.g. a job of
``sdwec reproduce --backend dask`` that is itself on a cluster). A scheduler that cannot be
reached gives a warning and local training, and is tried again after
:data:`RETRY_SECONDS`. One ``distributed.Client`` per process and address is kept.

The workers need the app's scikit-learn and numpy versions (they receive pickled
estimators); dask is an optional dependency, imported only when a scheduler is set.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import threading
import time
import warnings

import joblib

__all__ = ["DASK_ENV", "on_dask_cluster", "training_backend", "RETRY_SECONDS"]

DASK_ENV = "SDWEC_DASK_SCHEDULER"
"""Environment variable with a Dask scheduler's address (``tcp://host:8786``)."""
#: After a failed connection, train locally this long before trying the scheduler again.
RETRY_SECONDS = 300.0
_CONNECT_SECONDS = 10.0
_CLIENTS: dict = {}  # address -> distributed.Client, or the time a connection failed
_LOCK = threading.Lock()


@contextlib.contextmanager
def training_backend(n_jobs=None):
    """joblib's Dask backend on ``$SDWEC_DASK_SCHEDULER``'s cluster, for the block inside.

    Parameters
    ----------
    n_jobs : int, optional
        The caller's ``n_jobs``: 1 keeps the work local.

    Yields
    ------
    bool
        Whether the block runs on the cluster (no scheduler set, ``n_jobs=1`` or no
        connection: local, as without this context).
    """
    address = os.environ.get(DASK_ENV, "").strip()
    client = _client(address) if address and n_jobs != 1 else None
    if client is None:
        yield False
        return
    with joblib.parallel_config(backend="dask", client=client, n_jobs=-1):
        yield True


def on_dask_cluster(build):
    """Decorator: run ``build`` (which takes an ``n_jobs`` argument) inside
    :func:`training_backend`."""
    signature = inspect.signature(build)

    @functools.wraps(build)
    def wrapper(*args, **kwargs):
        n_jobs = signature.bind_partial(*args, **kwargs).arguments.get("n_jobs")
        with training_backend(n_jobs):
            return build(*args, **kwargs)

    return wrapper


def _client(address):
    """A connected ``distributed.Client`` for ``address``, or ``None`` (with a warning) when it
    cannot be reached."""
    with _LOCK:
        client = _CLIENTS.get(address)
        if isinstance(client, float) and time.time() - client < RETRY_SECONDS:
            return None
        if client is not None and not isinstance(client, float) \
                and client.status == "running":
            return client
        try:
            from dask.distributed import Client  # optional: imported when asked for

            client = Client(address, timeout=_CONNECT_SECONDS, set_as_default=False)
        except (ImportError, OSError, TimeoutError) as exc:
            _CLIENTS[address] = time.time()
            warnings.warn(f"{DASK_ENV}={address!r}: cannot use the Dask cluster ({exc}); "
                          f"training on this machine", RuntimeWarning, stacklevel=4)
            return None
        _CLIENTS[address] = client
        return client
