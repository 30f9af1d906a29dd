"""Train every member of a notebook's grids at once, on a pool of worker processes: for a lent machine with
many cores and one GPU, where the notebook's grids, run one after another, would each wait on their slowest
member. Each member is one :func:`itmlib.training.grid.run_grid` call of its own, with the notebook's configs,
evaluation and record folder, so the member records it writes are the ones the notebook takes when it is run
in full afterwards (its tables still come from the notebook itself).

    python tools/member_pool.py 06_phrase_labels --workers 15 --device cuda      # medium, as ci/medium.yaml
    python tools/member_pool.py 07_semantic_neighborhoods --world literal --list

The members are the plan the notebook runs, from the one home both call (:data:`HOMES`): 06's Table 3, its headline arms' extra seeds, the
longer-training arms, Table 5's fractions and VSE++; 07's news and literal grids; 09's four papers' arms, SAM's
scarce arms once the baseline's records have chosen their fraction (as the notebook chooses it). The headline claims' members
go first, so a pool cut off part-way has trained what the verdicts need most; members that share SSAMT's
first phase wait for the first of them, and a sweep's longer warm-ups for the shortest (:func:`phase_one_groups`).
Workers are spawned (each loads the cached worlds and starts its own CUDA context) and run torch on one thread
(``--threads``: more).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path
from typing import Any


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from itmlib.training.grid import Member  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
_SHARED: dict = {}


def notebook_params(nb: str, scale: str, **changes: Any) -> Any:
    """The notebook's parameters as ``make tables`` runs it at ``scale`` (typed), with ``changes`` over them."""
    from itmlib.course.params import run_parameters

    return run_parameters(nb, scale, **changes)


#: notebook -> the home of its plan, which the notebook calls too: ``members(p)``, ``world(kind, p, device)``,
#: and where it has them ``prepare(todo, p)`` (caches before the workers start) and ``followup(p, context)``
#: (members that wait on others' records)
HOMES = {"06_phrase_labels": "itmlib.papers.ssamt",
         "07_semantic_neighborhoods": "itmlib.papers.neighborhoods",
         "08_teran": "itmlib.papers.teran",
         "09_real_language": "itmlib.course.real_language"}


def home(nb: str) -> Any:
    """The module :data:`HOMES` names for ``nb``."""
    import importlib

    return importlib.import_module(HOMES[nb])


def phase_one_groups(todo: list[tuple], p: dict, nb: str, ckpt_dir: str) -> list[list[tuple]]:
    """``todo`` grouped by the first-phase run they share (SSAMT's intra phase is one run per data subset,
    seed and text input, shared by every arm), groups in the order of their first member. The pool trains
    one member per group first and the rest once that member has ended (its first phase is then on disk):
    otherwise two workers would train one first phase side by side, twice the work and two different starts for
    arms that share one. A pool of one group (a seed-0 probe) so leaves its other workers idle through the first
    member's second phase; once the first phase is on disk, one pool per member trains the rest beside it.
    Likewise the runs of one arm and seed that differ only by their warm-up (a recipe probe's sweep), shortest
    first: a longer warm-up starts from the shorter one's state (:mod:`itmlib.training.warmup_branch`) - at
    once, beside it, where a shorter warm-up's state is already under ``ckpt_dir``."""
    import dataclasses

    from itmlib.training.grid import trained_config
    from itmlib.training.records import checkpoint_name
    from itmlib.training.train import phase_one_run, checkpoint_folder
    from itmlib.training.warmup_branch import branches, warmup_source

    trains: dict[str, Any] = {}
    groups: dict[str, list[tuple]] = {}
    warmup: dict[int, int] = {}        # id(member) -> its warm-up, where it may start from a shorter one's
    for i, m in enumerate(todo):
        if m.world not in trains:
            trains[m.world] = home(nb).world(m.world, p, "cpu").train
        cfg = trained_config(m.config, trains[m.world], m.fraction, m.seed)
        p1 = phase_one_run(cfg)
        key = str(checkpoint_folder(*p1, ckpt_dir)) if p1 else f"own {i}"
        if branches(cfg) and warmup_source(cfg, checkpoint_name(m.name), ckpt_dir) is None:
            warmup[id(m)] = cfg.warmup_epochs
            key = f"warm-ups of {checkpoint_folder(dataclasses.replace(cfg, warmup_epochs=0), checkpoint_name(m.name), ckpt_dir)}"
        groups.setdefault(key, []).append(m)
    return [sorted(g, key=lambda m: warmup.get(id(m), 0)) for g in groups.values()]


def followup(plan: Any, p: Any, context: Any, todo: list[tuple], follow: bool = True) -> tuple | None:
    """(which of ``todo`` must finish first, a function giving the members that wait on them) from the plan's
    ``followup`` where ``todo`` holds SAM members and ``follow`` is set (``--no-followup`` clears it); else None."""
    if not (follow and hasattr(plan, "followup") and any(m.world == "sam" for m in todo)):
        return None
    return plan.followup(p, context)


#: the parameters a pool's workers load their worlds from (once, under the first setting of a sweep)
WORLD_PARAMS = ("dataset", "scale", "seed")


def sweep_settings(sweeps: list[list[str]]) -> list[dict[str, str]]:
    """``--sweep NAME V1 V2 ...`` options as the parameter settings they ask for, position by position: one
    empty setting without a sweep. Raises ValueError for a sweep without values or sweeps of unequal length."""
    if not sweeps:
        return [{}]
    if data := [s[0] for s in sweeps if s[0] in WORLD_PARAMS]:
        raise ValueError(f"--sweep {data[0]} would change the data every worker loads once; sweep a recipe "
                         f"parameter, and run one pool per {data[0]}")
    if bad := [s[0] for s in sweeps if len(s) < 2]:
        raise ValueError(f"--sweep {bad[0]} names no values: give --sweep NAME VALUE [VALUE ...]")
    if len({len(s) for s in sweeps}) > 1:
        raise ValueError("sweeps are taken position by position and need as many values each; got "
                         + ", ".join(f"{s[0]}: {len(s) - 1}" for s in sweeps))
    return [{s[0]: s[i] for s in sweeps} for i in range(1, len(sweeps[0]))]


def sweep_members(plans: list[list[Member]], settings: list[dict[str, str]]) -> dict[Member, tuple[int, str]]:
    """Each member of ``plans`` (the plan under each setting of a sweep) once, in order, with the index of the
    first setting that plans it and that setting as text (empty without a sweep): a member whose config two
    settings share (an arm the swept parameter does not touch) trains once."""
    out: dict[Member, tuple[int, str]] = {}
    for i, (plan, setting) in enumerate(zip(plans, settings)):
        label = "".join(f", {n} {v}" for n, v in setting.items())
        for m in plan:
            out.setdefault(m, (i, label))
    return out


def arm_seeds(seeds_of: list[list[str]], seeds: list[int] | None, members: list[Member]) -> Callable[[str], set[int] | None]:
    """The seeds an arm trains (None: all of them): ``--seeds-of ARM SEED ...`` for the arms it names, ``--seeds``
    for the others. Raises ValueError naming a seed no member has, an arm the plan lacks, or an arm without seeds."""
    known = {m.seed for m in members}
    arms = {m.name for m in members}
    own: dict[str, set[int]] = {}
    for arm, *values in seeds_of:
        if arm not in arms:
            raise ValueError(f"--seeds-of names no arm {arm!r}; its arms: {sorted(arms)}")
        if not values or not all(v.isdigit() for v in values):
            raise ValueError(f"--seeds-of {arm!r} needs seeds as whole numbers, got {values}")
        own[arm] = {int(v) for v in values}
    asked = set(seeds or ()) | {s for v in own.values() for s in v}
    if missing := asked - known:
        raise ValueError(f"no seed(s) {sorted(missing)}; its seeds: {sorted(known)}")
    default = set(seeds) if seeds else None
    return lambda arm: own.get(arm, default)


def _key(m: tuple) -> tuple:
    return m.name, m.fraction, m.seed, m.world


class Schedule:
    """The order the pool trains ``groups`` (:func:`phase_one_groups`) in: one member per group in order, the
    rest of a group once its first member has ended (its first phase is on disk by then). With ``first`` (a predicate: the
    members whose records choose SAM's scarce fraction) and ``then`` (called once they are all done: the
    members that wait on that choice), the groups that neither choose nor wait are held back until ``then``
    has run, and its members go ahead of them: the arms on the chosen fraction (the headline claims) start
    as soon as the fraction is known, rather than behind a long full-data member that took a free worker."""

    def __init__(self, groups: list[list[tuple]], first: Callable[[tuple], bool] | None = None,
                 then: Callable[[], list[tuple]] | None = None) -> None:
        self.blocking = {_key(m) for g in groups for m in g if first and first(m)}
        self.held: list[list[tuple]] = []
        self.queue: deque = deque()
        for g in groups:
            if self.blocking and not any(_key(m) in self.blocking for m in g):
                self.held.append(g)
            else:
                self.queue.append((g[0], g[1:]))
        self.then = then
        self.rest: dict[tuple, list[tuple]] = {}
        self.total = sum(map(len, groups))

    def take(self) -> tuple | None:
        """The next member to train, or None while nothing can start (a worker then waits for one to finish)."""
        if not self.queue:
            return None
        m, rest = self.queue.popleft()
        self.rest[_key(m)] = rest
        return m

    def finished(self, m: tuple) -> None:
        """``m`` is trained: the rest of its group may start, and the waiting members once nothing blocks."""
        self.queue.extendleft((r, []) for r in reversed(self.rest.pop(_key(m), [])))
        self.blocking.discard(_key(m))
        if self.then and not self.blocking:
            later = self.then()
            self.total += len(later)
            self.queue.extendleft((r, []) for r in reversed(later))
            self.queue.extend((g[0], g[1:]) for g in self.held)
            self.held, self.then = [], None


def _setup(nb: str, p: dict, ckpt: str, device: str, results_dir: str, threads: int = 1) -> None:
    import torch

    torch.set_num_threads(threads)
    os.chdir(ROOT)
    _SHARED.update(nb=nb, p=p, ckpt=ckpt, device=device, worlds={},
                   records=str(Path(results_dir) / nb / "members"))


def _train(member: Member) -> tuple[str, float, int]:
    from itmlib.training.grid import RunContext, run_grid

    name, cfg, f, s, kind = member
    d = _SHARED
    if kind not in d["worlds"]:
        d["worlds"][kind] = home(d["nb"]).world(kind, d["p"], d["device"])
    w = d["worlds"][kind]
    t0 = time.time()
    runs, _ = run_grid({name: cfg}, w.train, w.dev, w.test, w.relevance, fractions=[f], seeds=[s], evaluate_fn=w.evaluate,
                       context=RunContext(device=d["device"], ckpt_dir=d["ckpt"], record_dir=d["records"]), **w.options)
    return f"{name}, fraction {f:g}, seed {s}", time.time() - t0, len(runs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebook", choices=sorted(HOMES))
    ap.add_argument("--scale", default="medium")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1,
                    help="torch threads of each worker: 1 trains the most members at once; more finish each sooner, "
                         "for a machine that is given back before a one-thread member would end")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--world", nargs="+", help="only the members of these worlds (06: ssamt, 'ssamt per part', vse; 07: news, literal; "
                                               "09: sam, teran, ssamt, neighborhoods)")
    ap.add_argument("--arm", nargs="+", help="only the members of these arms, in this order, e.g. --arm 'TERAN mrsw' (a "
                                             "recipe probe of one baseline into --results-dir runs/probes)")
    ap.add_argument("--seeds", type=int, nargs="+", help="only the members of these seeds, e.g. --seeds 1 2 3 4 (beside a probe "
                                                         "still training seed 0 under the same recipe)")
    ap.add_argument("--seeds-of", nargs="+", action="append", default=[], metavar=("ARM", "SEED"),
                    help="this arm's seeds only, over --seeds, e.g. --arm 'TERAN mrsw' 'TERN (global)' --seeds 1 2 3 4 "
                         "--seeds-of 'TERAN mrsw' 0 (a probe's seed 0 beside another arm's retrain, in one pool)")
    ap.add_argument("--results-dir", default="results")
    ap.add_argument("--ckpt-dir", default="runs/checkpoints")
    ap.add_argument("--no-followup", action="store_true",
                    help="train only the members named, never the ones that wait on them (SAM's scarce arms): for a "
                         "second pool beside one that will choose SAM's scarce fraction and train those arms")
    ap.add_argument("--sweep", nargs="+", action="append", default=[], metavar=("NAME", "VALUE"),
                    help="train the members under each value of a notebook parameter, in one queue: e.g. a recipe "
                         "probe, --sweep teran_warmup_epochs 3 6 20 --sweep tern_warmup_epochs 20 3 6 (several sweeps "
                         "are taken position by position, so they need as many values; a member two settings share "
                         "trains once)")
    ap.add_argument("--list", action="store_true", help="print the members and stop")
    ap.add_argument("-p", "--param", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                    help="a notebook parameter over ci/<scale>.yaml's (VALUE as JSON), e.g. -p papers '[\"neighborhoods\"]'")
    args = ap.parse_args(argv)
    os.chdir(ROOT)
    import torch

    from itmlib.course.params import cli_value
    from itmlib.training.context import RunContext

    if args.threads < 1:
        ap.error(f"--threads must be >= 1, got {args.threads}")
    torch.set_num_threads(args.threads)
    try:
        settings = sweep_settings(args.sweep)
        ps = [notebook_params(args.notebook, args.scale, **{n: cli_value(v) for n, v in args.param}, **s) for s in settings]
    except ValueError as e:
        ap.error(str(e))
    p = ps[0]       # the workers' worlds: a sweep changes configs, not the data
    t0 = time.time()
    plan = home(args.notebook)
    swept = sweep_members([plan.members(q) for q in ps], settings)
    everyone = list(swept)
    if args.arm and (missing := set(args.arm) - {m.name for m in everyone}):
        ap.error(f"{args.notebook} has no arm(s) {sorted(missing)}; its arms: {sorted({m.name for m in everyone})}")
    try:
        seeds_of = arm_seeds(args.seeds_of, args.seeds, everyone)
    except ValueError as e:
        ap.error(f"{args.notebook}: {e}")
    todo = [m for m in everyone if (args.world is None or m.world in args.world) and (not args.arm or m.name in args.arm)
            and (seeds_of(m.name) is None or m.seed in seeds_of(m.name))]
    if args.arm:    # the arms in the order given (the claims answered soonest first), each arm's seeds as planned
        todo.sort(key=lambda m: (swept[m][0], args.arm.index(m.name)))     # within each setting of a sweep
    groups = phase_one_groups(todo, p, args.notebook, args.ckpt_dir)
    print(f"[pool] {len(todo)} members of {args.notebook} at {args.scale}; data in {time.time() - t0:.0f} s", flush=True)
    if args.list:
        for g in groups:
            print(" ", "; ".join(f"{m.name}, {m.world}, fraction {m.fraction:g}, seed {m.seed}, {m.config.epochs} epochs"
                                 + swept[m][1] for m in g))
        return 0
    for kind in dict.fromkeys(m.world for m in todo):
        plan.world(kind, p, "cpu")      # relevance, Doc2Vec and Ω cached on disk before the workers start
    if hasattr(plan, "prepare"):
        plan.prepare(todo, p)
    print(f"[pool] worlds and caches ready at {time.time() - t0:.0f} s", flush=True)
    records = str(Path(args.results_dir) / args.notebook / "members")
    context = RunContext(device="cpu", ckpt_dir=args.ckpt_dir, record_dir=records)
    schedule = Schedule(groups, *(followup(plan, p, context, todo, not args.no_followup) or (None, None)))
    running: dict = {}
    with ProcessPoolExecutor(args.workers, mp_context=get_context("spawn"), initializer=_setup,
                             initargs=(args.notebook, p, args.ckpt_dir, args.device, args.results_dir, args.threads)) as pool:
        def fill() -> None:
            while len(running) < args.workers and (m := schedule.take()) is not None:
                running[pool.submit(_train, m)] = m
        fill()
        k = 0
        while running:
            fut = next(as_completed(running))
            m = running.pop(fut)
            label, secs, _ = fut.result()
            k += 1
            print(f"[pool] {k}/{schedule.total} {label}: {secs:.0f} s (at {time.time() - t0:.0f} s)", flush=True)
            schedule.finished(m)
            fill()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
