"""Train every member of a notebook's grids at once, on a pool of worker processes: for a lent machine with
many cores and one GPU, where the notebook's grids, run one after another, would each wait on their slowest
member. Each member is one :func:`itmlib.training.grid.run_grid` call of its own, with the notebook's configs,
evaluation and record folder, so the member records it writes are the ones the notebook takes when it is run
in full afterwards (its tables still come from the notebook itself).

    python tools/member_pool.py 06_phrase_labels --workers 15 --device cuda      # medium, as ci/medium.yaml
    python tools/member_pool.py 07_semantic_neighborhoods --world literal --list

The members mirror the notebook's cells (:data:`PLANS`): 06's Table 3, its headline arms' extra seeds, the
longer-training arms, Table 5's fractions and VSE++; 07's news and literal grids; 09's four papers' arms, SAM's
scarce arms once the baseline's records have chosen their fraction (as the notebook chooses it). The headline claims' members
go first, so a pool cut off part-way has trained what the verdicts need most; members that share SSAMT's
first phase wait for the first of them (:func:`phase_one_groups`). Workers are spawned (each loads the cached
worlds and starts its own CUDA context) and run torch on one thread.
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


def notebook_params(nb: str, scale: str) -> dict:
    """The notebook's parameter defaults, then ci/<scale>.yaml's overrides (as ``make tables``), validated."""
    from itmlib.course.params import run_parameters

    return run_parameters(nb, scale)


def _load(world: str, p: dict) -> tuple:
    from itmlib.data import load_dataset

    return tuple(load_dataset(world, s, scale=p["scale"], seed=p["seed"]) for s in ("train", "dev", "test"))


def _source(world: str, p: dict) -> str:
    """The training split's description, which every member's config carries (a plan needs nothing else of a world)."""
    from itmlib.data import dataset_source

    return dataset_source(world, "train", scale=p["scale"], seed=p["seed"])


# ----- 06: SSAMT ------------------------------------------------------------------------------------------
def _members_06(p: dict) -> list:
    from itmlib.papers import ssamt

    return [m for g in ssamt.grids(p, _source("synthetic", p)).values() for m in g.members()]


def _world_06(kind: str, p: dict, device: str) -> dict:
    from itmlib.papers import ssamt
    from itmlib.relevance import eval_relevance

    train_ds, dev_ds, test_ds = _load("synthetic", p)
    rel = eval_relevance(test_ds)
    fn = ssamt.ssamt_evaluator(test_ds, rel, seed=p["seed"], device=device, dev_ds=dev_ds,
                               per_part=kind == ssamt.PER_PART_WORLD) if kind.startswith("ssamt") else None
    return dict(train=train_ds, dev=dev_ds, test=test_ds, rel=rel, eval=fn)


# ----- 07: semantic neighbourhoods ------------------------------------------------------------------------
def _members_07(p: dict) -> list:
    from itmlib.papers import neighborhoods

    plan = neighborhoods.grids(p, news_data=_source(p["dataset"], p), literal_data=_source("synthetic", p))
    return [m for g in plan.values() for m in g.members()]


def _world_07(kind: str, p: dict, device: str) -> dict:
    from itmlib.papers import neighborhoods

    if kind == "news":
        train_ds, dev_ds, test_ds = _load(p["dataset"], p)
        omegas = neighborhoods.arm_omegas(train_ds, test_ds, p["scale"], p["news_arms"], p["d2v_mode"])
        kp = min(neighborhoods.preservation_k(p["scale"]), test_ds.n_images - 1)
        fn = neighborhoods.neighborhoods_evaluator(test_ds, omega=omegas, d2v_mode=p["d2v_mode"], preservation_k=kp, n_draws=p["n_draws"],
                               seed=p["seed"], device=device)
    else:
        train_ds, dev_ds, test_ds = _load("synthetic", p)
        fn = neighborhoods.neighborhoods_evaluator(test_ds, n_draws=p["n_draws"], seed=p["seed"], device=device)
    return dict(train=train_ds, dev=dev_ds, test=test_ds, rel=None, eval=fn)


def _prepare_07(todo: list[tuple], p: dict) -> None:
    """Every Doc2Vec and Ω the members start from (word vectors; text neighbours), trained and cached once
    here: the literal arms' subsets differ by seed, each with its own Doc2Vec."""
    import dataclasses

    from itmlib.training.grid import member_config
    from itmlib.relevance.doc2vec import omega_vectors, train_doc2vec

    trains = {k: _world_07(k, p, "cpu")["train"] for k in dict.fromkeys(m.world for m in todo)}
    for _, cfg, f, s, kind in todo:
        sub, c = member_config(cfg, trains[kind], f, s)
        mc = c.model
        if not hasattr(mc, "doc2vec"):
            continue
        settings = mc.doc2vec()
        if mc.init_words:
            train_doc2vec(sub.captions, dataclasses.replace(settings, mode=mc.words_mode or settings.mode))
        if mc.neighbors == "text":
            omega_vectors(sub.captions, settings)


# ----- 08: TERAN -----------------------------------------------------------------------------------------
def _members_08(p: dict) -> list:
    """08's grid, the headline arms seed by seed first: a pool cut off part-way leaves paired seeds."""
    from itmlib.papers import teran

    grid = teran.grids(p, _source(p["dataset"], p))["teran"]
    members = grid.members()
    heads = [m for m in members if m.name in grid.headline]
    return sorted(heads, key=lambda m: m.seed) + [m for m in members if m.name not in grid.headline]


def _world_08(kind: str, p: dict, device: str) -> dict:
    from itmlib.papers import teran
    from itmlib.relevance import eval_relevance, eval_rouge

    train_ds, dev_ds, test_ds = _load(p["dataset"], p)
    rel = {"rouge": eval_rouge(test_ds), "sg": eval_relevance(test_ds)}
    fn = teran.teran_evaluator(rel, device=device, test_poolings=teran.TERN_TEST_POOLINGS)
    return dict(train=train_ds, dev=dev_ds, test=test_ds, rel=None, eval=fn,
                kw={"dev_relevance": teran.teran_dev_relevance(dev_ds)})


# ----- 10: the real-language world ---------------------------------------------------------------------------
def _members_10(p: dict) -> list:
    """Notebook 09's plan (:func:`itmlib.course.real_language.grids`) but SAM's scarce arms, whose fraction is
    chosen on the baseline's runs first (:func:`_followup_10`): the full-data baseline and the candidates go first."""
    from itmlib.course import real_language

    return real_language.members(real_language.grids(p, _source(p["dataset"], p)))


def _world_10(kind: str, p: dict, device: str) -> dict:
    from itmlib.papers import ncs_sam, ssamt, teran
    from itmlib.papers import neighborhoods
    from itmlib.relevance import eval_relevance, eval_rouge

    train_ds, dev_ds, test_ds = _load(p["dataset"], p)
    rel = eval_relevance(test_ds)
    w = dict(train=train_ds, dev=dev_ds, test=test_ds, rel=rel, kw={})
    if kind == "sam":
        w["eval"] = ncs_sam.positives_evaluator(test_ds, rel, device=device)
    elif kind == "ssamt":
        w["eval"] = ssamt.ssamt_evaluator(test_ds, rel, seed=p["seed"], device=device, dev_ds=dev_ds)
    elif kind == "neighborhoods":
        w["eval"] = neighborhoods.neighborhoods_evaluator(test_ds, seed=p["seed"], device=device)
    else:
        w.update(rel=None, kw={"dev_relevance": teran.teran_dev_relevance(dev_ds)},
                 eval=teran.teran_evaluator({"rouge": eval_rouge(test_ds), "sg": rel}, device=device))
    return w


def _followup_10(p: dict, records: str, ckpt: str) -> tuple[Any, Any]:
    """(the members that must finish first, a function giving the members that wait on them): SAM's scarce
    arms at the fraction the notebook chooses from the baseline's records (05's rule, as cell "sam")."""
    from itmlib.course import real_language
    from itmlib.training.grid import RunContext

    if "sam" not in p["papers"]:
        return None, None
    first = lambda m: m.world == "sam" and m.name == "VSE++" and (m.fraction < 1.0 or m.seed < p["seed"] + max(p["full_data_seeds"], 1))  # noqa: E731

    def then() -> list[Member]:
        w = _world_10("sam", p, "cpu")
        context = RunContext(device="cpu", ckpt_dir=ckpt, record_dir=records)
        plan = real_language.grids(p, w["train"].source)
        chosen = real_language.scarce_fraction(p, plan, lambda g: g.run(w["train"], w["dev"], w["test"], w["rel"],
                                                                         evaluate_fn=w["eval"], context=context)[0])
        f10 = float(chosen.fraction.iloc[0])
        print(f"[pool] SAM's scarce fraction: {f10:g}", flush=True)
        return real_language.scarce_grid(p, w["train"].source, f10).members()
    return first, then


#: notebook -> (its members: (name, config, fraction of the training images, seed, world), a world's data and
#: evaluator, what to cache before the workers start or None, members that wait on others' records or None)
PLANS = {"06_phrase_labels": (_members_06, _world_06, None, None),
         "08_teran": (_members_08, _world_08, None, None),
         "07_semantic_neighborhoods": (_members_07, _world_07, _prepare_07, None),
         "09_real_language": (_members_10, _world_10, None, _followup_10)}


def phase_one_groups(todo: list[tuple], p: dict, nb: str, ckpt_dir: str) -> list[list[tuple]]:
    """``todo`` grouped by the first-phase run they share (SSAMT's intra phase is one run per data subset,
    seed and text input, shared by every arm), groups in the order of their first member. The pool trains
    one member per group first and the rest once that first phase is on disk: otherwise two workers would
    train one first phase side by side, twice the work and two different starts for arms that share one."""
    from itmlib.training.grid import trained_config
    from itmlib.training.train import phase_one_run, checkpoint_folder

    trains: dict[str, Any] = {}
    groups: dict[str, list[tuple]] = {}
    for i, m in enumerate(todo):
        if m.world not in trains:
            trains[m.world] = PLANS[nb][1](m.world, p, "cpu")["train"]
        p1 = phase_one_run(trained_config(m.config, trains[m.world], m.fraction, m.seed))
        groups.setdefault(str(checkpoint_folder(*p1, ckpt_dir)) if p1 else f"own {i}", []).append(m)
    return list(groups.values())


def _key(m: tuple) -> tuple:
    return m.name, m.fraction, m.seed, m.world


class Schedule:
    """The order the pool trains ``groups`` (:func:`phase_one_groups`) in: one member per group in order, the
    rest of a group once its first member (its first phase) is on disk. With ``first`` (a predicate: the
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


def _setup(nb: str, p: dict, ckpt: str, device: str, results_dir: str) -> None:
    import torch

    torch.set_num_threads(1)
    os.chdir(ROOT)
    _SHARED.update(nb=nb, p=p, ckpt=ckpt, device=device, worlds={},
                   records=str(Path(results_dir) / nb / "members"))


def _train(member: Member) -> tuple[str, float, int]:
    from itmlib.training.grid import RunContext, run_grid

    name, cfg, f, s, kind = member
    d = _SHARED
    if kind not in d["worlds"]:
        d["worlds"][kind] = PLANS[d["nb"]][1](kind, d["p"], d["device"])
    w = d["worlds"][kind]
    t0 = time.time()
    runs, _ = run_grid({name: cfg}, w["train"], w["dev"], w["test"], w["rel"], fractions=[f], seeds=[s],
                       evaluate_fn=w["eval"], context=RunContext(device=d["device"], ckpt_dir=d["ckpt"],
                                                                 record_dir=d["records"]), **w.get("kw", {}))
    return f"{name}, fraction {f:g}, seed {s}", time.time() - t0, len(runs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebook", choices=sorted(PLANS))
    ap.add_argument("--scale", default="medium")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--world", nargs="+", help="only the members of these worlds (06: ssamt, 'ssamt per part', vse; 07: news, literal; "
                                               "10: sam, teran, ssamt, neighborhoods)")
    ap.add_argument("--arm", nargs="+", help="only the members of these arms, e.g. --arm 'TERAN mrsw' (a recipe probe "
                                             "of one baseline into --results-dir runs/probes)")
    ap.add_argument("--seeds", type=int, nargs="+", help="only the members of these seeds, e.g. --seeds 1 2 3 4 (beside a probe "
                                                         "still training seed 0 under the same recipe)")
    ap.add_argument("--results-dir", default="results")
    ap.add_argument("--ckpt-dir", default="runs/checkpoints")
    ap.add_argument("--list", action="store_true", help="print the members and stop")
    ap.add_argument("-p", "--param", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                    help="a notebook parameter over ci/<scale>.yaml's (VALUE as JSON), e.g. -p papers '[\"neighborhoods\"]'")
    args = ap.parse_args(argv)
    os.chdir(ROOT)
    import torch

    from itmlib.course.params import cli_value

    torch.set_num_threads(1)
    p = notebook_params(args.notebook, args.scale)
    unknown = [n for n, _ in args.param if n not in p]
    if unknown:
        ap.error(f"{args.notebook} has no parameter(s) {unknown}")
    p.update({n: cli_value(v) for n, v in args.param})
    t0 = time.time()
    members, world, prepare, followup = PLANS[args.notebook]
    everyone = members(p)
    if args.arm and (missing := set(args.arm) - {m.name for m in everyone}):
        ap.error(f"{args.notebook} has no arm(s) {sorted(missing)}; its arms: {sorted({m.name for m in everyone})}")
    if args.seeds and (missing := set(args.seeds) - {m.seed for m in everyone}):
        ap.error(f"{args.notebook} has no seed(s) {sorted(missing)}; its seeds: {sorted({m.seed for m in everyone})}")
    todo = [m for m in everyone if (args.world is None or m.world in args.world) and (not args.arm or m.name in args.arm)
            and (not args.seeds or m.seed in args.seeds)]
    groups = phase_one_groups(todo, p, args.notebook, args.ckpt_dir)
    print(f"[pool] {len(todo)} members of {args.notebook} at {args.scale}; data in {time.time() - t0:.0f} s", flush=True)
    if args.list:
        for g in groups:
            print(" ", "; ".join(f"{m.name}, {m.world}, fraction {m.fraction:g}, seed {m.seed}, {m.config.epochs} epochs" for m in g))
        return 0
    for kind in dict.fromkeys(m.world for m in todo):
        world(kind, p, "cpu")      # relevance, Doc2Vec and Ω cached on disk before the workers start
    if prepare:
        prepare(todo, p)
    print(f"[pool] worlds and caches ready at {time.time() - t0:.0f} s", flush=True)
    records = str(Path(args.results_dir) / args.notebook / "members")
    first, then = followup(p, records, args.ckpt_dir) if followup and any(m.world == "sam" for m in todo) else (None, None)
    schedule = Schedule(groups, first, then)
    running: dict = {}
    with ProcessPoolExecutor(args.workers, mp_context=get_context("spawn"), initializer=_setup,
                             initargs=(args.notebook, p, args.ckpt_dir, args.device, args.results_dir)) as pool:
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
