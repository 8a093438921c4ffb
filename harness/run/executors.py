"""Executors: where work items (one diagnosis or one validation check of a
(case, variant, scale, release, device, engine)) run.

``local`` (default)  a thread pool in this process, ``jobs`` wide; each item
                     still measures in its own subprocess
                     (:func:`defects4warp.isolation.run_worker`).
``dask``             a Dask ``distributed`` cluster: an embedded
                     ``LocalCluster`` (``--executor dask``, ``--workers N``)
                     or an existing scheduler (``--scheduler ADDRESS``; e.g.
                     one started by ``dask-jobqueue``'s ``SLURMCluster`` or
                     ``PBSCluster``, see docs/scale-out.md). Dask is imported
                     only here, only when asked for.

Both expose ``submit(fn, *args) -> future``, ``as_completed(futures)`` and
``close()``; :func:`outcome` turns a finished future into ``(value, None)`` or
``(None, cause)`` where ``cause`` names a lost worker or an exception, so the
caller records an ``error`` and the run goes on.

Lost workers: the embedded cluster sets Dask's
``distributed.scheduler.allowed-failures`` to :data:`ALLOWED_FAILURES` (1), so
an item whose worker dies is retried once on another worker and then fails
with ``KilledWorker``, recorded as ``worker lost: ...``. An existing scheduler
keeps its own setting (Dask's default is 3 retries).
"""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import as_completed as _as_completed

#: Retries of an item whose Dask worker died before it fails (Dask's
#: ``distributed.scheduler.allowed-failures``; the issue asks for one retry).
ALLOWED_FAILURES = 1

#: Worker processes of the embedded LocalCluster when ``--workers`` is not given.
DEFAULT_DASK_WORKERS = 2


class LocalExecutor:
    """Items in a thread pool of ``jobs`` threads in this process.

    Parameters
    ----------
    jobs : int
        Items run concurrently (default 1).
    """

    name = "local"

    def __init__(self, jobs: int = 1):
        self.jobs = max(1, int(jobs))
        self._pool = ThreadPoolExecutor(max_workers=self.jobs)

    def submit(self, fn, *args):
        return self._pool.submit(fn, *args)

    def as_completed(self, futures):
        return _as_completed(futures)

    def cancel(self, futures) -> None:
        for f in futures:
            f.cancel()

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class DaskExecutor:
    """Items on a Dask ``distributed`` cluster.

    Parameters
    ----------
    scheduler : str, optional
        Address of an existing scheduler (``tcp://host:8786``). None starts an
        embedded ``LocalCluster`` of ``workers`` processes with one thread each.
    workers : int
        Worker processes of the embedded cluster (default :data:`DEFAULT_DASK_WORKERS`).
    allowed_failures : int
        Retries of an item whose worker died (embedded cluster only; default
        :data:`ALLOWED_FAILURES`).

    Raises
    ------
    RuntimeError
        When ``dask[distributed]`` is not installed (``pip install 'defects4warp[dask]'``).
    """

    name = "dask"

    def __init__(self, scheduler: str | None = None, workers: int = DEFAULT_DASK_WORKERS,
                 allowed_failures: int = ALLOWED_FAILURES):
        try:
            import dask
            from distributed import Client, LocalCluster
        except ImportError:
            raise RuntimeError("--executor dask needs dask[distributed]: pip install 'defects4warp[dask]'") from None
        self._cluster = None
        if scheduler:
            self.client = Client(scheduler)
        else:
            with dask.config.set({"distributed.scheduler.allowed-failures": int(allowed_failures),
                                  "distributed.worker.daemon": False}):
                self._cluster = LocalCluster(n_workers=max(1, int(workers)), threads_per_worker=1, processes=True,
                                             dashboard_address=None, silence_logs=40)
                self.client = Client(self._cluster)

    def submit(self, fn, *args):
        # pure=False: the same item submitted twice (repeat measurements) runs twice
        return self.client.submit(fn, *args, pure=False)

    def as_completed(self, futures):
        from distributed import as_completed

        return as_completed(list(futures))

    def cancel(self, futures) -> None:
        self.client.cancel(list(futures), force=True)

    def close(self) -> None:
        try:
            self.client.close()
        finally:
            if self._cluster is not None:
                self._cluster.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def outcome(future):
    """``(value, None)`` for a future that finished, ``(None, cause)`` for one
    that failed: ``cause`` starts with ``worker lost`` when its Dask worker
    died (more often than allowed), else names the exception.

    A ``KeyboardInterrupt`` or ``SystemExit`` propagates.
    """
    try:
        return future.result(), None
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:  # noqa: BLE001 - one failed item must not stop the run
        if type(exc).__name__ == "KilledWorker":
            return None, (f"worker lost: the executor worker running this item died and the retry on another "
                          f"worker died too (KilledWorker: {exc})")
        return None, f"the executor raised {type(exc).__name__}: {exc}"


def make_executor(kind: str = "local", jobs: int = 1, scheduler: str | None = None, workers: int | None = None):
    """An executor by name: ``local`` (``jobs`` threads) or ``dask``
    (``scheduler`` address, or an embedded cluster of ``workers`` processes).

    Raises
    ------
    ValueError
        For an unknown ``kind``.
    RuntimeError
        For ``dask`` without dask installed.
    """
    if kind == "local" and not scheduler:
        return LocalExecutor(jobs)
    if kind == "dask" or scheduler:
        return DaskExecutor(scheduler, workers or DEFAULT_DASK_WORKERS)
    raise ValueError(f"unknown executor {kind!r}; known: local, dask")


@functools.lru_cache(maxsize=None)
def worker_python(release: str | None) -> str:
    """The interpreter for ``release`` on this (executor worker) process:
    the per-release environment is prepared once per process and reused."""
    from ..envs import python_for

    return python_for(release)[0]
