"""One grid member inline vs on a Dask worker process: what does the executor cost per epoch?

    .venv/bin/python benchmarks/bench_executor.py [--scale medium] [--epochs 2] [--fraction 0.25]

Trains the same member (07's ANG+NP+SYM on ``synthetic_news``, one torch thread) three ways, each
from an empty checkpoint folder, and prints the wall time of ``run_grid`` and the worker's user and
system CPU seconds:

* ``inline``: in this process (``threads=1``);
* ``dask default env``: a one-worker ``LocalCluster`` with Dask's stock worker environment, which sets
  ``MALLOC_TRIM_THRESHOLD_=65536`` (that turns off glibc's dynamic mmap threshold);
* ``processes:1``: :func:`itmlib.training.grid.run_grid`'s own local cluster (:func:`itmlib.training.grid.worker_environ`).

The stock cluster runs last: its nannies leave ``MALLOC_TRIM_THRESHOLD_`` in this process's environment.

Run it on an otherwise idle machine; the figures in the README come from it.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from itmlib.data import load_dataset  # noqa: E402
from itmlib.training.grid import RunContext, run_grid  # noqa: E402
from itmlib.papers import neighborhoods  # noqa: E402


def _cpu_seconds() -> tuple[float, float]:
    """(user, system) CPU seconds of this process's finished children and of itself."""
    c, s = resource.getrusage(resource.RUSAGE_CHILDREN), resource.getrusage(resource.RUSAGE_SELF)
    return c.ru_utime + s.ru_utime, c.ru_stime + s.ru_stime


def _worker_cpu(client) -> tuple[float, float]:
    """(user, system) CPU seconds of the cluster's worker processes so far."""
    def cpu():
        t = os.times()
        return t.user, t.system
    return tuple(map(sum, zip(*client.run(cpu).values())))  # type: ignore[return-value]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", default="medium")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--fraction", type=float, default=0.25)
    a = ap.parse_args()
    train, dev = (load_dataset("synthetic_news", s, scale=a.scale) for s in ("train", "dev"))
    cfg = {"ANG+NP+SYM": neighborhoods.arm_config(a.scale, "ANG+NP+SYM", data=train.source + "|bench_executor", epochs=a.epochs)}
    kw = dict(fractions=[a.fraction], seeds=[0], evaluate_fn=neighborhoods.neighborhoods_evaluator(dev))
    on = RunContext(device="cpu", threads=1)
    run_grid(cfg, train, dev, dev, context=on.replace(ckpt_dir=tempfile.mkdtemp()), **kw)   # warm: Doc2Vec cache, imports
    rows = []

    t0, c0 = time.perf_counter(), _cpu_seconds()
    run_grid(cfg, train, dev, dev, context=on.replace(ckpt_dir=tempfile.mkdtemp()), **kw)
    c1 = _cpu_seconds()
    rows.append(("inline", time.perf_counter() - t0, c1[0] - c0[0], c1[1] - c0[1]))

    t0, c0 = time.perf_counter(), _cpu_seconds()
    run_grid(cfg, train, dev, dev, context=on.replace(ckpt_dir=tempfile.mkdtemp(), executor="processes:1", threads=None), **kw)
    c1 = _cpu_seconds()
    rows.append(("processes:1 (worker_environ)", time.perf_counter() - t0, c1[0] - c0[0], c1[1] - c0[1]))

    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None)
    with Client(cluster) as client:
        u0, s0 = _worker_cpu(client)
        t0 = time.perf_counter()
        run_grid(cfg, train, dev, dev, context=on.replace(ckpt_dir=tempfile.mkdtemp(), executor=f"dask:{cluster.scheduler_address}"),
                 **kw)
        u1, s1 = _worker_cpu(client)
        rows.append(("dask default env", time.perf_counter() - t0, u1 - u0, s1 - s0))
    cluster.close()

    print(f"{a.scale}, {train.n_images * a.fraction:.0f} training pairs, {a.epochs} epochs, 1 torch thread")
    for name, wall, user, sys_ in rows:
        print(f"{name:30s} wall {wall:7.1f} s   user {user:7.1f} s   system {sys_:7.1f} s")


if __name__ == "__main__":
    main()
