"""The Dask executors of :func:`itmlib.training.grid.run_grid` (``processes:N``, ``dask:ADDRESS``): a local cluster
of one-thread workers started with an environment of our own (:func:`worker_environ`), or a scheduler given by
address; members submitted one per worker thread at a time, so they run in the grid's order."""

from __future__ import annotations

import os
import warnings
from typing import Any, Callable

from ..paths import resolve_path
from .context import RunContext
from .progress import GridProgress
from .records import checkpoint_name

__all__ = ["worker_environ", "run_on_dask"]


def worker_environ(threads: int) -> dict[str, int]:
    """The environment of a local worker process: BLAS/OpenMP threads = ``threads``, and *not* Dask's default
    ``MALLOC_TRIM_THRESHOLD_=65536``. Setting that variable at all turns off glibc's dynamic mmap threshold,
    so every large tensor of a training step is mmap'ed and unmapped again: on torch CPU training a worker
    spent more time in the kernel (page faults) than in torch, 2x slower per epoch than the same member
    inline (``benchmarks/bench_executor.py``). A stock Dask cluster also leaks the variable into the
    process that started it (its nannies run there), so :func:`run_grid` drops it while it starts its own.
    ``MALLOC_ARENA_MAX=1``: a worker trains in a Dask thread, whose own glibc arena gives memory back and
    faults it in again; one arena cut a medium member's page faults 5x and its system time 8.8 -> 3.3 s."""
    return {**{v: int(threads) for v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")},
            "MALLOC_ARENA_MAX": 1}


def _quiet_shutdown_logs() -> None:
    """Run on each worker of our own local cluster once every result is in: the cluster's close can race a
    worker's heartbeat, which then logs a harmless CommClosedError traceback (dask/distributed#7192)."""
    import logging

    for name in ("distributed.worker", "distributed.core", "distributed.comm"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def _start(kind: str, arg: Any, threads: int) -> tuple[Any, Any]:
    """(client, our own local cluster or None): ``processes`` starts ``arg`` one-thread workers under
    :func:`worker_environ`; ``dask`` connects to the scheduler at ``arg``."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as e:  # pragma: no cover - dask is a dependency
        raise ImportError("executor 'processes:N' / 'dask:...' needs dask[distributed] (pip install 'dask[distributed]')") from e
    cluster = None
    if kind == "processes":
        import dask

        leaked = os.environ.pop("MALLOC_TRIM_THRESHOLD_", None)   # a stock Dask cluster started earlier leaves it here
        try:
            with dask.config.set({"distributed.nanny.pre-spawn-environ": worker_environ(threads)}):
                cluster = LocalCluster(n_workers=arg, threads_per_worker=1, processes=True, dashboard_address=None)
        finally:
            if leaked is not None:
                os.environ["MALLOC_TRIM_THRESHOLD_"] = leaked
    return Client(cluster if cluster is not None else arg), cluster


def _close(client: Any, cluster: Any) -> None:
    """Close the client (and our own cluster, its workers' shutdown logs quietened first); a close that stalls
    warns after a minute instead of hanging the run - every result is in (and written) by then."""
    if cluster is not None:   # our own cluster only: a scheduler given by address keeps its workers' logging
        try:
            client.run(_quiet_shutdown_logs)
        except Exception:  # noqa: BLE001 - a worker already gone needs no quieting
            pass
    for closing in [client] + ([cluster] if cluster is not None else []):
        try:
            closing.close(timeout=60)
        except TimeoutError:
            warnings.warn(f"{type(closing).__name__} did not close within 60 s; its processes end with this one",
                          RuntimeWarning, stacklevel=3)


def run_on_dask(task: Callable[..., Any], kind: str, arg: Any, members: list[tuple[int, Any]], data: Any,
                context: RunContext, report: GridProgress, finished: Callable[..., None]) -> None:
    """Every member ``(index, member)`` as one Dask task ``task(member, data, context)`` (``data`` scattered once
    per worker); ``finished(index, *task's result)`` hears of each as it finishes. A window of one task per worker
    thread, the next submitted as one finishes: Dask given every member at once ran them out of order (04's
    medium grid went from config 1 to 12, 11, ..., 1; most likely work stealing), breaking setting-major order."""
    from distributed import as_completed

    threads = context.threads or 1
    client, cluster = _start(kind, arg, threads)
    report.workers = max(len(client.scheduler_info().get("workers", {})), 1)
    try:
        big = client.scatter([data], broadcast=True)[0]
        # workers may start elsewhere: an absolute path; and they report nothing (the grid does)
        remote = context.replace(ckpt_dir=str(resolve_path(context.ckpt_dir)), progress=False, threads=threads)
        slots = max(sum(w.get("nthreads", 1) for w in client.scheduler_info().get("workers", {}).values()), 1)
        queue, index = iter(members), {}

        def submit_next() -> Any:
            item = next(queue, None)
            if item is None:
                return None
            i, m = item
            report.start(i)
            fut = client.submit(task, m, big, remote, pure=False, key=f"grid-{i}-{checkpoint_name(m.name)}")
            index[fut.key] = i
            return fut

        running = as_completed([f for f in (submit_next() for _ in range(slots)) if f is not None])
        for fut in running:
            finished(index[fut.key], *fut.result())
            nxt = submit_next()
            if nxt is not None:
                running.add(nxt)
    finally:
        _close(client, cluster)
