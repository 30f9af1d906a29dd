"""Experiment grids, paper-agnostic: train every config on every (fraction, seed) subset.

A grid member is one call of :func:`~itmlib.training.train.train` (idempotent: checkpoints are
keyed by the config's hash, so a finished member is loaded, not retrained); the grid
evaluates each on the test split with :func:`~itmlib.training.train.evaluate` (or a paper's own
evaluation, ``evaluate_fn``) and returns one row per run. Seeds vary both the data
subset and the initial weights.

``executor`` says where the members run, each one task that trains (or loads) its model,
evaluates it and returns its rows and history:

* ``"inline"`` (default): one after another in this process;
* ``"processes:N"``: N single-thread worker processes of a local Dask cluster (on a 2-core machine two
  workers and inline are within ~10% on slices of 04's medium grid, 0.90x-1.11x: a member-epoch
  takes 1.8x longer on a worker of two than alone on both cores; ``benchmarks/bench_grid_workers.py``);
* ``"dask:ADDRESS"`` (or ``"tcp://..."``): an existing Dask scheduler, e.g. one worker per GPU
  (``tools/full_gpu.sh``); the workers need the repository installed and ``ckpt_dir`` on a
  filesystem they share.

With ``progress=True`` every member says what it does - training (from which epoch) or loaded from its
checkpoint - and the grid its ETA (:class:`~itmlib.training.progress.GridProgress`; inside ``make tables`` these
lines reach the terminal too).

Tables are the same whichever executor: every member is seeded by its (config, seed) alone and
rows come back in the grid's order (fraction, seed, config), whatever order the members ran in:
members to train run setting-major (each config over every fraction and seed, in the configs'
order), so a grid cut off part-way has whole seed sets for the settings it reached. Workers run
torch on ``threads`` threads (default 1 for the Dask executors); results are bit-identical to an inline run with as many threads.

``record_dir`` keeps one small JSON **member record** per finished member (its rows, its training
history, the config as trained, what evaluated it, when and in how long), written the moment the member
finishes. A later grid with the same member and the same evaluation takes its record instead of its
checkpoint, so a grid longer than one sitting can be finished in several - on machines whose
checkpoints do not survive (a fresh clone per session, a rented GPU), on several machines whose records
are merged, or after the checkpoints were deleted. The notebooks keep them in
``<results_dir>/<notebook>/members/``: the committed ``results/`` carry the records behind every
committed table (a few KB per member). A record is used only with a test evaluation that names itself
(``evaluate_fn.cache_key``; the default evaluation names its test split and relevance); delete a record
to train and evaluate its member again.

Over 300 lines on purpose: the executors, the member records and the progress lines share one
member task and one order, and a grid must give the same tables whichever path a member took.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, NamedTuple

import numpy as np
import pandas as pd

from ..config import array_key, check_fraction, device_label, resolve_device
from ..data.base import ITMDataset
from ..metrics import METRIC_COLUMNS
from ..paths import atomic_write_text, resolve_path
from .context import RunContext, parse_executor
from .progress import GridProgress, MemberStatus
from .train import TrainConfig, TrainResult, config_dict, config_hash, epochs_done, evaluate, train

__all__ = ["Member", "Grid", "GridData", "RunContext", "grid_member", "figure_record", "run_grid", "devices_note",
           "trained_where", "trained_config", "member_config", "checkpoint_name", "parse_executor",
           "member_record_path", "METRIC_COLUMNS"]

class Member(NamedTuple):
    """One grid member: the run of ``config`` named ``name`` on ``fraction`` of the training images with ``seed``,
    in the notebook's ``world`` (which data and evaluation a pool loads for it)."""

    name: str
    config: TrainConfig
    fraction: float
    seed: int
    world: str = ""


class GridData(NamedTuple):
    """What every member of one grid shares: its splits, their relevances and the test evaluation
    (None: :func:`~itmlib.training.train.evaluate`)."""

    train: ITMDataset
    dev: ITMDataset
    test: ITMDataset
    test_relevance: np.ndarray | None = None
    dev_relevance: np.ndarray | Mapping[str, np.ndarray] | None = None
    evaluate_fn: Callable[[str, TrainResult, ITMDataset], list[dict[str, Any]]] | None = None


class Grid(NamedTuple):
    """One grid of a notebook's plan (a paper module's ``grids(params)``): every config on every fraction and
    seed, and the arms in ``headline`` on the seeds they still lack up to ``headline_seeds`` - what the notebook
    runs (:meth:`run`) and a pool trains member by member."""

    configs: dict[str, TrainConfig]
    fractions: tuple[float, ...]
    seeds: range
    world: str
    headline: tuple[str, ...] = ()
    headline_seeds: int = 0

    def members(self) -> list[Member]:
        """Its members, the headline arms' first (on all their seeds), then the rest: the order a pool trains."""
        heads = [n for n in self.headline if n in self.configs]
        extra = range(self.seeds.start, self.seeds.start + max(self.headline_seeds, len(self.seeds)))
        out = [Member(n, self.configs[n], f, s, self.world) for n in heads for f in self.fractions for s in extra]
        return out + [Member(n, c, f, s, self.world) for n, c in self.configs.items() if n not in heads
                      for f in self.fractions for s in self.seeds]

    def run(self, train_ds: ITMDataset, dev_ds: ITMDataset, test_ds: ITMDataset, test_relevance: np.ndarray | None = None,
            **kw: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
        """:func:`run_grid` of every config on this grid's fractions and seeds, then of its headline arms on the
        seeds they still lack up to ``headline_seeds``: the runs and histories of both, concatenated. ``kw``:
        :func:`run_grid`'s other keywords (``context``, ``evaluate_fn``, ``dev_relevance``)."""
        runs, history = run_grid(self.configs, train_ds, dev_ds, test_ds, test_relevance, fractions=self.fractions,
                                 seeds=self.seeds, **kw)
        more = range(self.seeds.stop, self.seeds.start + self.headline_seeds)
        heads = {n: self.configs[n] for n in self.headline if n in self.configs}
        if len(more) and heads:
            r, h = run_grid(heads, train_ds, dev_ds, test_ds, test_relevance, fractions=self.fractions, seeds=more, **kw)
            runs, history = pd.concat([runs, r], ignore_index=True), pd.concat([history, h], ignore_index=True)
        return runs, history


#: bump when a record's layout changes (older records are then ignored, not misread)
RECORD_VERSION = 1


def checkpoint_name(name: str) -> str:
    """A grid method's name as one checkpoint folder name: '+' becomes 'p', spaces '_', and every
    other character outside ``[A-Za-z0-9_=-]`` (a '/' would nest folders) is dropped."""
    return re.sub(r"[^A-Za-z0-9_=-]", "", name.replace(" ", "_").replace("+", "p"))


def grid_member(cfg: TrainConfig, name: str, train_ds: ITMDataset, dev_ds: ITMDataset, *, fraction: float = 1.0,
                seed: int = 0, dev_relevance: np.ndarray | Mapping[str, np.ndarray] | None = None,
                context: RunContext = RunContext()) -> tuple[ITMDataset, TrainResult]:
    """Train (or load from its checkpoint) one run of :func:`run_grid`; returns (its training subset, the result).

    The run of config ``cfg`` named ``name`` at (``fraction``, ``seed``) trains on
    ``train_ds.subset(fraction, seed)`` (image-level; all of ``train_ds`` at 1.0) with
    the config's seed replaced by ``seed``. A notebook gets a grid run's model back through here without
    training it again. When its checkpoint is absent or unfinished (a fresh clone: the grid itself read
    member records), it says so on one printed line and trains on **one thread**, as the grid's
    workers did, so the figure's table comes out as committed rather than silently moved by another
    summation order.
    """
    import torch

    sub, c = member_config(cfg, train_ds, fraction, seed)

    def run() -> TrainResult:
        return train(c, sub, dev_ds, dev_relevance=dev_relevance, ckpt_dir=context.ckpt_dir, name=checkpoint_name(name),
                     device=context.device, progress=context.progress)

    done = epochs_done(c, checkpoint_name(name), context.ckpt_dir)
    if done >= c.epochs:
        return sub, run()
    print(f"[figure] {_member_label(name, fraction, seed)}: no finished checkpoint, training epochs {done} -> {c.epochs} "
          "for this figure (one thread, as the grid's workers)", flush=True)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return sub, run()
    finally:
        torch.set_num_threads(threads)


def figure_record(record_dir: str | os.PathLike[str], name: str, cfg: TrainConfig, compute: Callable[[], pd.DataFrame], *,
                  fraction: float = 1.0, seed: int = 0) -> pd.DataFrame:
    """What a figure draws from one trained model, kept beside the member records as a small CSV
    (``figure-<name>-<config hash>-f<fraction>-s<seed>.csv``): a rerun from a fresh clone reads it instead of
    retraining the model (whose retrained weights need not match the committed ones bit for bit, moving the
    figure's table). ``compute`` trains or loads the model and returns the figure's data; it runs only when no
    record exists."""
    path = resolve_path(record_dir) / f"figure-{name}-{config_hash(cfg)}-f{fraction:g}-s{seed}.csv"
    if path.is_file():
        return pd.read_csv(path)
    df = compute()
    atomic_write_text(path, df.to_csv(index=False, float_format="%.6g", lineterminator="\n"))
    return pd.read_csv(path)   # what a rerun will read, to the digit


def member_config(cfg: TrainConfig, train_ds: ITMDataset, fraction: float, seed: int) -> tuple[ITMDataset, TrainConfig]:
    """The training subset of a member and its config as trained (seed and data replaced)."""
    sub = train_ds if check_fraction("fraction", fraction) == 1.0 else train_ds.subset(fraction, seed=seed)
    return sub, trained_config(cfg, train_ds, fraction, seed)


def trained_config(cfg: TrainConfig, train_ds: ITMDataset, fraction: float, seed: int) -> TrainConfig:
    """A member's config as trained, from the subset's name and size alone (its features are not copied)."""
    split, n = (train_ds.split, train_ds.n_images) if fraction == 1.0 else train_ds.subset_size(fraction, seed)
    return dataclasses.replace(cfg, seed=int(seed), data=f"{cfg.data}|{split}|{n}")


def _member_label(name: str, f: float, s: int) -> str:
    return f"{name}, fraction {f:g}, seed {s}"


def _member_status(c: TrainConfig, name: str, f: float, s: int, ckpt_dir: str) -> MemberStatus:
    """The progress status of a member whose config as trained is ``c``."""
    n = int(c.data.rsplit("|", 1)[1])
    return MemberStatus(_member_label(name, f, s), epochs_done(c, checkpoint_name(name), ckpt_dir), c.epochs, n)


def _member_task(member: Member, data: GridData,
                 context: RunContext) -> tuple[tuple[list[dict[str, Any]], pd.DataFrame], float]:
    """One grid member: train or load, evaluate; ((rows, history), the seconds earlier calls spent training the
    epochs it resumed from). Runs in this process or on a worker (with ``context.threads`` torch threads)."""
    import torch

    if context.threads:
        torch.set_num_threads(context.threads)
    name, f, s = member.name, member.fraction, member.seed
    sub, c = member_config(member.config, data.train, f, s)
    r = train(c, sub, data.dev, dev_relevance=data.dev_relevance, ckpt_dir=context.ckpt_dir, name=checkpoint_name(name),
              device=context.device, progress=context.progress)
    base = {"fraction": f, "seed": s, "method": name, "train_images": sub.n_images, "best_epoch": r.best_epoch}
    if data.evaluate_fn is None:
        m = evaluate(r.model, r.vocab, data.test, data.test_relevance, device=resolve_device(context.device))
        rows = [{**base, **{k: m[k] for k in METRIC_COLUMNS if k in m}}]
    else:
        rows = [{**base, **extra} for extra in _cached_evaluation(data.evaluate_fn, name, r, data.test)]
    return (rows, r.history.assign(fraction=f, seed=s, method=name)), r.earlier_seconds


def _cached_evaluation(evaluate_fn: Callable, name: str, r: TrainResult, test_ds: ITMDataset) -> list[dict[str, Any]]:
    """``evaluate_fn(name, r, test_ds)``, kept beside the checkpoint when the evaluator has a ``cache_key``
    (a string naming its version and everything it reads besides the model, e.g. the test split and seed):
    a grid loaded from its checkpoints then skips an evaluation that costs ~70 s per SSAMT member at
    medium. The file is named by that key and by the run's best and last epoch, so a run trained further
    is evaluated again."""
    key = getattr(evaluate_fn, "cache_key", None)
    if not key:
        return evaluate_fn(name, r, test_ds)
    path = r.checkpoint.parent / f"eval-{_safe_key(key)}-e{len(r.history)}-b{r.best_epoch}.json"
    if path.is_file():
        return json.loads(path.read_text())
    rows = evaluate_fn(name, r, test_ds)
    path.write_text(json.dumps(rows, default=_json_number))
    return json.loads(path.read_text())      # the same rows as a cached run gets: float, not numpy types


def _safe_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def _json_number(v: Any) -> Any:
    if isinstance(v, (np.integer, np.bool_)):
        return v.item()
    if isinstance(v, np.floating):
        return float(v)
    raise TypeError(f"an evaluator row holds {type(v).__name__}, not a number or string: {v!r}")


def _timed_member_task(member: Member, data: GridData,
                       context: RunContext) -> tuple[tuple[list[dict[str, Any]], pd.DataFrame], float, float]:
    """:func:`_member_task`, the seconds this call took (where it ran), and those the interrupted calls it
    resumed from had spent (NaN where their checkpoint did not keep them)."""
    t0 = time.perf_counter()
    out, earlier = _member_task(member, data, context)
    return out, time.perf_counter() - t0, earlier


def run_grid(configs: Mapping[str, TrainConfig], train_ds: ITMDataset, dev_ds: ITMDataset, test_ds: ITMDataset,
             test_relevance: np.ndarray | None = None, *, fractions: Iterable[float] = (1.0,),
             seeds: Iterable[int] = (0,), dev_relevance: np.ndarray | Mapping[str, np.ndarray] | None = None,
             evaluate_fn: Callable[[str, TrainResult, ITMDataset], list[dict[str, Any]]] | None = None,
             context: RunContext = RunContext()) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Train every config on every (fraction, seed) subset (see :func:`grid_member`);
    returns (test metrics, one row per run, and the training histories).

    Rows hold ``fraction``, ``seed``, ``method``, ``train_images``, ``best_epoch`` and the
    metrics: :data:`~itmlib.metrics.METRIC_COLUMNS` of :func:`~itmlib.training.train.evaluate`
    by default, or the rows ``evaluate_fn(name, result, test_ds)`` returns (each a dict
    of metrics; a row may set its own ``method``, e.g. a second scoring of one model).

    ``context`` (:class:`~itmlib.training.context.RunContext`): where checkpoints go, the device, the executor,
    progress lines, and ``record_dir``: keep a member record per finished member there and take the members
    it already holds from it (module docstring); None keeps none. ``executor="records"`` trains nothing: the
    grid is the members ``record_dir`` holds, and the others are left out and named on one line (a grid
    trained elsewhere, e.g. by ``tools/member_pool.py``, read while it is still training)."""
    kind, arg = parse_executor(context.executor)
    members = [Member(name, cfg, f, s) for f in fractions for s in seeds for name, cfg in configs.items()]
    data = GridData(train_ds, dev_ds, test_ds, test_relevance, dev_relevance, evaluate_fn)
    trained = [trained_config(m.config, train_ds, m.fraction, m.seed) for m in members]
    record_dir = context.record_dir
    key = _record_key(evaluate_fn, dev_ds, test_ds, test_relevance) if record_dir is not None else None
    if kind == "records" and not key:
        raise ValueError("executor 'records' reads member records: give an evaluation that records can be keyed by "
                         "(one with a cache_key)")
    paths = [_record_path(t, m.name, record_dir, key) if key else None for t, m in zip(trained, members)]
    done: list[Any] = [_read_record(p) for p in paths]
    if kind == "records":
        missing = [_member_label(m.name, m.fraction, m.seed) for m, d in zip(members, done) if d is None]
        if missing:
            print(f"[grid] {len(missing)} of {len(members)} members have no record yet and are left out: "
                  + "; ".join(missing), flush=True)
        kept = [d for d in done if d is not None]
        rows = [r for rs, _ in kept for r in rs]
        return (pd.DataFrame(rows) if rows else pd.DataFrame(columns=["fraction", "seed", "method"]),
                pd.concat([h for _, h in kept], ignore_index=True) if kept else pd.DataFrame())
    progress = context.progress
    statuses = [MemberStatus(_member_label(m.name, m.fraction, m.seed), t.epochs, t.epochs, recorded=True)
                if d is not None else
                _member_status(t, m.name, m.fraction, m.seed, str(context.ckpt_dir)) if progress else
                MemberStatus(m.name, 0, t.epochs)
                for t, m, d in zip(trained, members, done)]   # checkpoints read only when someone reads the report
    report = GridProgress(statuses, workers=arg if kind == "processes" else 1, enabled=progress)
    report.begin()
    # setting-major: every seed of a setting before the next setting, so that a grid cut off part-way
    # leaves complete seed sets (judgeable spreads) for the settings it reached
    n_cfg = len(configs)
    todo = sorted((i for i, d in enumerate(done) if d is None), key=lambda i: (i % n_cfg, i // n_cfg))
    for i, d in enumerate(done):
        if d is not None:
            report.recorded(i)

    trained_on = device_label(context.device)

    def finished(i: int, out: tuple[list[dict[str, Any]], pd.DataFrame], secs: float, earlier: float) -> None:
        if paths[i] is not None:   # written at once: a grid cut off later keeps what it finished
            out = _write_record(paths[i], members[i], trained[i], key, out, earlier + secs, trained_on)
        else:                      # the rows a record would give back
            out = ([{**r, "device": trained_on} for r in out[0]], out[1])
        done[i] = out
        report.finish(i, secs)

    if kind == "inline":
        for i in todo:
            report.start(i)
            finished(i, *_timed_member_task(members[i], data, context))
    elif todo:
        _run_on_dask(kind, arg, [(i, members[i]) for i in todo], data, context, report, finished)
    report.end()
    rows = [r for rs, _ in done for r in rs]
    return pd.DataFrame(rows), pd.concat([h for _, h in done], ignore_index=True)


def _record_key(evaluate_fn: Callable | None, dev_ds: ITMDataset, test_ds: ITMDataset,
                test_relevance: np.ndarray | None) -> str | None:
    """What a member record's rows depend on besides the member itself (None: records are not kept)."""
    if evaluate_fn is None:
        evaluation = f"evaluate|rel {array_key(test_relevance)}"
    else:
        evaluation = getattr(evaluate_fn, "cache_key", None)
        if not evaluation:
            return None
    return (f"record-v{RECORD_VERSION}|{evaluation}|test {test_ds.source}|{test_ds.split}|{test_ds.n_images}|"
            f"dev {dev_ds.source}|{dev_ds.split}|{dev_ds.n_images}")


def member_record_path(cfg: TrainConfig, name: str, fraction: float, seed: int, train_ds: ITMDataset,
                       record_dir: str | os.PathLike[str], key: str) -> Path:
    """``<record_dir>/<checkpoint folder name>-<hash of key>.json``: the record of one grid member
    (``key``: what evaluated it, see :func:`run_grid`)."""
    return _record_path(trained_config(cfg, train_ds, fraction, seed), name, record_dir, key)


def _record_path(trained: TrainConfig, name: str, record_dir: str | os.PathLike[str], key: str) -> Path:
    return resolve_path(record_dir) / f"{checkpoint_name(name)}-{config_hash(trained)}-{_safe_key(key)}.json"


def _from_record(rec: dict[str, Any]) -> tuple[list[dict[str, Any]], pd.DataFrame] | None:
    """(rows, history) of a parsed member record; None for one of another layout. A record that names the
    device it trained on passes it on as each row's ``device`` (a record without that field names none)."""
    if rec.get("record") != RECORD_VERSION:
        return None
    rows = [{**r, "device": rec["device"]} for r in rec["rows"]] if "device" in rec else rec["rows"]
    return rows, pd.DataFrame(rec["history"])


def _read_record(path: Path | None) -> tuple[list[dict[str, Any]], pd.DataFrame] | None:
    """(rows, history) of a member record, or None where there is none (or one of another layout)."""
    return _from_record(json.loads(path.read_text())) if path is not None and path.is_file() else None


def _seconds(seconds: float) -> float | None:
    """A record's training seconds, or None (JSON null) where an interrupted call's share is unknown."""
    return None if np.isnan(seconds) else round(float(seconds), 1)


def _write_record(path: Path, member: Member, trained: TrainConfig, key: str,
                  out: tuple[list[dict[str, Any]], pd.DataFrame], seconds: float,
                  trained_on: str) -> tuple[list[dict[str, Any]], pd.DataFrame]:
    """Write a member's record; returns its (rows, history) as parsed back from the JSON written, so a grid
    gives the same tables whether its members were just trained or came from their records."""
    rows, history = out
    rec = {"record": RECORD_VERSION, "member": member.name, "fraction": member.fraction, "seed": member.seed,
           "evaluation": key,
           "written": datetime.now(timezone.utc).strftime("%Y-%m-%d"), "seconds": _seconds(seconds),
           "device": trained_on,
           "config": config_dict(trained), "rows": rows, "history": history.to_dict(orient="list")}
    text = json.dumps(rec, default=_json_number, indent=1) + "\n"
    atomic_write_text(path, text)
    return _from_record(json.loads(text))


def trained_where(runs: pd.DataFrame, default: str) -> str:
    """A table header's "where it trained": :func:`devices_note`, or "every member on ``default``" when all
    rows trained on ``default``."""
    return devices_note(runs, default) or f"every member on {default}"


def devices_note(runs: pd.DataFrame, default: str) -> str:
    """Where a run table's members trained, for its header: "" when every row trained on ``default`` (rows
    from records that name no device are taken as ``default``, the device of the run that reads them), else
    e.g. "seeds 2-4 of TERAN mrsw, TERN (global) trained on cuda (NVIDIA H200), the rest on cpu", or
    "every member trained on cuda (NVIDIA H200)" when none trained on ``default``."""
    where = runs["device"].fillna(default) if "device" in runs else pd.Series(default, index=runs.index)
    other = runs[where != default]
    if other.empty:
        return ""
    if len(other) == len(runs) and where.nunique() == 1:
        return f"every member trained on {where.iloc[0]}"
    parts = []
    for d, g in other.groupby(where[where != default], sort=False):
        seeds = sorted(int(s) for s in g.seed.unique())
        span = f"{seeds[0]}-{seeds[-1]}" if seeds == list(range(seeds[0], seeds[-1] + 1)) and len(seeds) > 1 else \
            ", ".join(map(str, seeds))
        parts.append(f"seed{'s' if len(seeds) > 1 else ''} {span} of {', '.join(g.method.unique())} trained on {d}")
    return "; ".join(parts) + f", the rest on {default}"


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


def _run_on_dask(kind: str, arg: Any, members: list[tuple[int, Member]], data: GridData, context: RunContext,
                 report: GridProgress, finished: Callable[[int, Any, float, float], None]) -> None:
    """Every member ``(index, member)`` as one Dask task (datasets scattered once); ``finished(index, (rows,
    history), seconds on its worker, seconds of the calls it resumed from)`` hears of each as it finishes."""
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError as e:  # pragma: no cover - dask is a dependency
        raise ImportError("executor 'processes:N' / 'dask:...' needs dask[distributed] (pip install 'dask[distributed]')") from e

    cluster = None
    threads = context.threads or 1
    if kind == "processes":
        import dask

        leaked = os.environ.pop("MALLOC_TRIM_THRESHOLD_", None)   # a stock Dask cluster started earlier leaves it here
        try:
            with dask.config.set({"distributed.nanny.pre-spawn-environ": worker_environ(threads)}):
                cluster = LocalCluster(n_workers=arg, threads_per_worker=1, processes=True, dashboard_address=None)
        finally:
            if leaked is not None:
                os.environ["MALLOC_TRIM_THRESHOLD_"] = leaked
    client = Client(cluster if cluster is not None else arg)
    report.workers = max(len(client.scheduler_info().get("workers", {})), 1)
    try:
        big = client.scatter([data], broadcast=True)[0]   # the datasets once per worker
        # workers may start elsewhere: an absolute path; and they report nothing (the grid does)
        remote = context.replace(ckpt_dir=str(resolve_path(context.ckpt_dir)), progress=False, threads=threads)
        # a window of one task per worker thread, the next submitted as one finishes: Dask given every
        # member at once ran them out of order (04's medium grid went from config 1 to 12, 11, ..., 1; most
        # likely work stealing, which moves a busy worker's lowest-priority tasks), breaking setting-major
        slots = max(sum(w.get("nthreads", 1) for w in client.scheduler_info().get("workers", {}).values()), 1)
        queue, index = iter(members), {}

        def submit_next() -> Any:
            item = next(queue, None)
            if item is None:
                return None
            i, m = item
            report.start(i)
            fut = client.submit(_timed_member_task, m, big, remote, pure=False,
                                key=f"grid-{i}-{checkpoint_name(m.name)}")
            index[fut.key] = i
            return fut

        running = as_completed([f for f in (submit_next() for _ in range(slots)) if f is not None])
        for fut in running:
            finished(index[fut.key], *fut.result())
            nxt = submit_next()
            if nxt is not None:
                running.add(nxt)
    finally:
        if cluster is not None:   # our own cluster only: a scheduler given by address keeps its workers' logging
            try:
                client.run(_quiet_shutdown_logs)
            except Exception:  # noqa: BLE001 - a worker already gone needs no quieting
                pass
        # every result is in (and written): a close that stalls warns after a minute instead of hanging the run
        for closing in [client] + ([cluster] if cluster is not None else []):
            try:
                closing.close(timeout=60)
            except TimeoutError:
                warnings.warn(f"{type(closing).__name__} did not close within 60 s; its processes end with this one",
                              RuntimeWarning, stacklevel=2)
