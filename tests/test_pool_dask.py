"""Pools trained on a Dask cluster: ``$SDWEC_DASK_SCHEDULER`` set, the
bagged trees grow on the cluster's workers and the pool is the one a local build gives."""

import sys
import types
import warnings

import numpy as np
import pytest
from dask.distributed import LocalCluster  # a test dependency: this test always runs

from sdwec import cluster, datasets, pool


@pytest.fixture
def local_cluster(monkeypatch):
    """Two worker processes of one thread each on loopback; the scheduler in the env var."""
    # Spawned workers re-run the parent's __main__ from its file; after an AppTest in the same
    # process that is a Streamlit script stub (NameError: __args), so they get a bare one.
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as local:
        monkeypatch.setenv(cluster.DASK_ENV, local.scheduler_address)
        yield local
        client = cluster._CLIENTS.pop(local.scheduler_address, None)
        if client is not None and not isinstance(client, float):
            client.close()


def _tasks_run(client):
    """Names of the task groups the scheduler has seen."""
    return client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.task_prefixes))


def test_a_pool_built_on_the_cluster_equals_the_local_build(local_cluster):
    data = datasets.load("wine")
    pool.build_pool(data.X, data.y, n_trees=4, seed=0, n_jobs=1)  # one core asked: local
    assert local_cluster.scheduler_address not in cluster._CLIENTS
    with pytest.MonkeyPatch.context() as local_env:
        local_env.delenv(cluster.DASK_ENV)
        local = pool.build_pool(data.X, data.y, n_trees=30, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback to local training would warn
        remote = pool.build_pool(data.X, data.y, n_trees=30, seed=3)
    client = cluster._CLIENTS[local_cluster.scheduler_address]
    assert any("parallel_build_estimators" in name for name in _tasks_run(client))
    # 30 trees: two warm-start steps (20 + 10), each shared out over the two workers.
    for name in ("P_val", "P_test", "in_bag_bits", "single_test"):
        assert np.array_equal(getattr(local, name), getattr(remote, name)), name
    assert np.array_equal(local.votes("oob").counts, remote.votes("oob").counts)
    assert remote.ensemble.n_jobs is None  # the stored pool does not keep the cluster


def test_an_unreachable_scheduler_warns_and_trains_here(monkeypatch):
    monkeypatch.setenv(cluster.DASK_ENV, "tcp://127.0.0.1:9")  # discard port: nobody listens
    monkeypatch.setattr(cluster, "_CLIENTS", {})
    monkeypatch.setattr(cluster, "_CONNECT_SECONDS", 1.0)
    data = datasets.load("wine")
    with pytest.warns(RuntimeWarning, match="cannot use the Dask cluster"):
        built = pool.build_pool(data.X, data.y, n_trees=4, seed=0)
    assert built.n_trees == 4
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not retried (nor warned) again at once
        pool.build_pool(data.X, data.y, n_trees=4, seed=0)
