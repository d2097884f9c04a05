"""The generator's worker processes run one BLAS/OpenMP thread each, whenever they start.

The pool spawns its processes as tasks arrive, after it is constructed: the thread settings must
be made by each worker as it starts (an environment set around the construction never reached
them, so threaded BLAS ran in every worker on a shared machine).
"""

from __future__ import annotations

import os

import threadpoolctl

from neuralop_fem.data.generation.executors import WORKER_ENV, worker_pool


def test_every_worker_runs_one_thread(monkeypatch):
    for key in WORKER_ENV:
        monkeypatch.delenv(key, raising=False)
    with worker_pool(2) as pool:
        env = [pool.submit(os.getenv, key).result() for key in WORKER_ENV]
        libraries = pool.submit(threadpoolctl.threadpool_info).result()
    assert env == list(WORKER_ENV.values())
    assert libraries, "numpy's BLAS should be loaded in a worker"
    assert {lib["num_threads"] for lib in libraries} == {1}
    assert all(os.environ.get(key) is None for key in WORKER_ENV)  # this process untouched
