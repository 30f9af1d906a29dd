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

The member records live in :mod:`itmlib.training.records`, the Dask executors in
:mod:`itmlib.training.dask_executor`.
"""

from __future__ import annotations

import json
import time
from typing import Any, Callable, Iterable, Mapping, NamedTuple

import numpy as np
import pandas as pd

from ..config import device_label, resolve_device
from ..data.base import ITMDataset
from ..metrics import METRIC_COLUMNS
from .context import RunContext, parse_executor
from .progress import GridProgress, MemberStatus
from .dask_executor import run_on_dask, worker_environ
from .records import (RECORD_VERSION, _json_number, _read_record, _record_key, _record_path, _safe_key, _write_record,
                      checkpoint_name, note_records_read, devices_note, figure_record, member_config, member_record_path, trained_config,
                      trained_where)
from .train import TrainConfig, TrainResult, epochs_done, evaluate, train

__all__ = ["Member", "Grid", "GridData", "RunContext", "grid_member", "figure_record", "run_grid", "devices_note",
           "trained_where", "trained_config", "member_config", "checkpoint_name", "parse_executor",
           "member_record_path", "METRIC_COLUMNS", "RECORD_VERSION", "worker_environ", "MissingMembers"]


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

    def seeds_planned(self) -> dict[str, int]:
        """Each arm's number of seeds in the plan (per fraction): what a grid read while still training
        (``records:partial``) is measured against."""
        from collections import Counter

        return {n: k // len(self.fractions) for n, k in Counter(m.name for m in self.members()).items()}

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


def _member_label(name: str, f: float, s: int) -> str:
    return f"{name}, fraction {f:g}, seed {s}"


def _members_label(members: list[Member]) -> str:
    """``members`` named compactly, for a reader: each arm and fraction once with its seeds, in plan order
    ("TERAN mrsw, fraction 1, seeds 0, 1, 2; TERN (global), fraction 1, seed 0")."""
    seeds: dict[tuple[str, float], list[int]] = {}
    for m in members:
        seeds.setdefault((m.name, m.fraction), []).append(m.seed)
    return "; ".join(f"{n}, fraction {f:g}, seed{'s' * (len(ss) > 1)} {', '.join(map(str, ss))}"
                     for (n, f), ss in seeds.items())


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
    grid is the members ``record_dir`` holds, and a member without its record is an error naming it
    (:class:`MissingMembers`); ``"records:partial"`` leaves such members out and names them on one line (a grid
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
    note_records_read(p for p in paths if p is not None)
    done: list[Any] = [_read_record(p) for p in paths]
    if kind == "records":
        return _recorded_grid(members, done, partial=arg == "partial")
    report = _grid_report(members, trained, done, context, workers=arg if kind == "processes" else 1)
    # setting-major: every seed of a setting before the next setting, so that a grid cut off part-way
    # leaves complete seed sets (judgeable spreads) for the settings it reached
    n_cfg = len(configs)
    todo = sorted((i for i, d in enumerate(done) if d is None), key=lambda i: (i % n_cfg, i // n_cfg))
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
        run_on_dask(_timed_member_task, kind, arg, [(i, members[i]) for i in todo], data, context, report, finished)
    report.end()
    rows = [r for rs, _ in done for r in rs]
    return pd.DataFrame(rows), pd.concat([h for _, h in done], ignore_index=True)


class MissingMembers(ValueError):
    """A grid read from its member records (``executor="records"``) whose plan names members no record holds."""


def _recorded_grid(members: list[Member], done: list[Any], *, partial: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The grid as its records hold it. Every member must have its record - the missing are named in a
    :class:`MissingMembers` error, so a config changed under a committed record fails loudly - unless
    ``partial`` (``executor="records:partial"``: a grid still training), which leaves them out on one line."""
    missing = [m for m, d in zip(members, done) if d is None]
    if missing and not partial:
        raise MissingMembers(f"{len(missing)} of {len(members)} members of the grid have no member record: "
                             + _members_label(missing) + " (train them, or read a grid still training with "
                             "executor 'records:partial')")
    if missing:
        print(f"[grid] {len(missing)} of {len(members)} members have no record yet and are left out: "
              + _members_label(missing), flush=True)
    kept = [d for d in done if d is not None]
    rows = [r for rs, _ in kept for r in rs]
    return (pd.DataFrame(rows) if rows else pd.DataFrame(columns=["fraction", "seed", "method"]),
            pd.concat([h for _, h in kept], ignore_index=True) if kept else pd.DataFrame())


def _grid_report(members: list[Member], trained: list[TrainConfig], done: list[Any], context: RunContext,
                 workers: int) -> GridProgress:
    """The grid's progress report, begun, with the members taken from records marked; checkpoints are read
    only when someone reads the report (``context.progress``)."""
    progress = context.progress
    statuses = [MemberStatus(_member_label(m.name, m.fraction, m.seed), t.epochs, t.epochs, recorded=True)
                if d is not None else
                _member_status(t, m.name, m.fraction, m.seed, str(context.ckpt_dir)) if progress else
                MemberStatus(m.name, 0, t.epochs)
                for t, m, d in zip(trained, members, done)]
    report = GridProgress(statuses, workers=workers, enabled=progress)
    report.begin()
    for i, d in enumerate(done):
        if d is not None:
            report.recorded(i)
    return report
