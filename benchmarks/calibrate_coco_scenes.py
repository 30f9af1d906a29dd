"""Calibrate the real-language world's perception knobs on the VSE++ baseline alone, once, before any claim run.

    .venv/bin/python benchmarks/calibrate_coco_scenes.py --scale medium --workers 2           # the committed grid
    .venv/bin/python benchmarks/calibrate_coco_scenes.py --scale medium --workers 8 --device cuda
    .venv/bin/python benchmarks/calibrate_coco_scenes.py --scale smoke --noise 0.5 --distractors 2 --epochs 2

Trains notebook 03's VSE++ (no paper's method, so no claim is looked at) on ``coco_scenes`` built with each
(``noise``, ``distractors``) pair of the grid and reports its retrieval on the **dev** split (the test split
is never read), beside the dev split's two training-free floors for that setting (the word-overlap floor and
the co-occurrence baseline, :mod:`itmlib.course.retrievers`; noise does not move them, distractors do).
The world is v6's design (:func:`world_knobs`: every object word its own category; at medium 29,000 training
images as ``benchmarks/coco_scenes_language.py`` chose, all 5,000 Karpathy test images held out), and VSE++
trains at most the scale's epochs with patience 3 (the language probe's arms all peaked by epoch 5 of 15). The
committed grid ran on v5's code with these knobs (its table's data line names that world); v6 is that world with
the grid's choice as its defaults and v7 is v6 on the size probe's splits (58,000 training images, 5,000 dev
images from the sample's end), so a rerun now builds worlds named v7 on v7's dev split, finds no record under
those names and trains the grid again (~4.5 h of the 2-core machine).

The rule, fixed before the first run of this grid: a setting is *admissible* when dev R@1 lies in [10, 70]
both ways (neither near chance nor near perfect) and dev Rsum clears the higher dev floor by at least 10%
(the world gate's condition, read on dev); the chosen one is the admissible setting with the largest dev Rsum
over its higher floor - the most a baseline learns beyond word overlap - ties to the smaller noise, then the
fewer distractors. (Worlds up to v5 were chosen by dev Rsum nearest 300 of 600; on v5 that setting's VSE++
ended below the test floor, so the rule now asks the floor first.) The knobs become
:class:`~itmlib.data.coco_scenes.CocoScenesConfig`'s defaults (and ``COCO_SCENES_VERSION`` is bumped) by hand.
One row per setting goes to ``--out`` (at medium ``results/09_real_language/world_calibration.csv``), the
chosen one marked; checkpoints to ``runs/calibration/``. Each setting that finishes keeps a member record (at
medium in ``results/09_real_language/probes/``, committed as it lands), so the grid runs in pieces: a rerun
trains only the settings without one (``--noise``/``--distractors`` pick a slice; at medium the committed
table is written only by the whole grid).
"""

from __future__ import annotations

import argparse
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from itertools import product
from multiprocessing import get_context
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from itmlib.course.real_levels import FLOOR_MATCH  # noqa: E402

#: the committed grid: noise norm around a unit prototype (perception is already exact at 0.5, so below it
#: too), and the mean number of distractor regions
NOISE = (0.25, 0.5, 1.0)
DISTRACTORS = (0.0, 1.0, 2.0, 3.0)
#: the world calibrated: v6's design, stated as knobs (the grid ran before they became v6's defaults; at medium the
#: language probe's 29,000 training images, every Karpathy test image held out; smoke keeps its own sizes)
WORLD = {"n_categories": 0}
WORLD_AT = {"medium": {"n_train": 29000, "n_test": 5000}}


def world_knobs(scale: str) -> dict:
    """The world's knobs the calibration builds at ``scale`` (:data:`WORLD`, and :data:`WORLD_AT` there)."""
    return {**WORLD, **WORLD_AT.get(scale, {})}
#: VSE++ stops 3 epochs after its best dev Rsum
PATIENCE = 3
R1_BAND = (10.0, 70.0)
#: dev Rsum over the higher dev floor a setting needs (the world gate's 10%, ``real_levels.FLOOR_MATCH``)
FLOOR_MARGIN = 1 + FLOOR_MATCH


def choose(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` (``i2t_r1``, ``t2i_r1``, ``rsum``, ``floor``, ``noise``, ``distractors``) with ``over floor``,
    ``admissible`` and ``chosen`` columns, by the rule of the module docstring."""
    t = table.copy()
    lo, hi = R1_BAND
    t["over floor"] = (t.rsum / t.floor).round(3)
    in_band = t[["i2t_r1", "t2i_r1"]].apply(lambda r: bool(r.between(lo, hi).all()), axis=1)
    t["admissible"] = in_band & (t.rsum >= FLOOR_MARGIN * t.floor)
    t["chosen"] = False
    ok = t[t.admissible]
    if len(ok):
        best = ok.sort_values(["over floor", "noise", "distractors"], ascending=[False, True, True], kind="stable")
        t.loc[best.index[0], "chosen"] = True
    return t


def dev_floors(scale: str, seed: int, knobs: dict) -> dict:
    """The dev split's training-free floors for one world setting: the word-overlap floor and the
    co-occurrence baseline (counts from its training split), their Rsum and the higher of them. They read
    region categories and attributes only, which each image's stream draws before its regions' noise, so
    every noise of one ``distractors`` shares them."""
    from itmlib.course.retrievers import cooccurrence_scores, lexical_floor
    from itmlib.data import load_dataset
    from itmlib.metrics import retrieval_recall

    train, dev = (load_dataset("coco_scenes", s, scale=scale, seed=seed, **knobs) for s in ("train", "dev"))
    rsum = lambda sims: round(float(retrieval_recall(sims, dev.img_of_caption)["rsum"]), 2)  # noqa: E731
    words, cooc = rsum(lexical_floor(dev, seed=seed)), rsum(cooccurrence_scores(train, dev, seed=seed))
    return {"word floor": words, "co-occurrence": cooc, "floor": max(words, cooc)}


def vse_on_dev(scale: str, seed: int, knobs: dict, epochs: int, device: str, *, name: str = "VSE++",
               tag: str = "calibration", model: dict | None = None, record_dir: str | None = None,
               patience: int = 0) -> dict:
    """Notebook 03's VSE++ trained on ``coco_scenes`` built with ``knobs`` (``model``: changes to its model
    config) and evaluated on the dev split (the test split is never read): its dev R@1 both ways and Rsum, best
    epoch, and its cost in seconds (its member record's training seconds where ``record_dir`` keeps one, so a
    setting read back from its record still states what it cost; else this call's). The world probes' one
    trainer (this calibration, the language probe)."""
    import dataclasses
    import time

    import torch

    from itmlib.data import load_dataset
    from itmlib.training.grid import RunContext, run_grid
    from itmlib.training.records import recorded_seconds
    from itmlib.papers.ncs_sam import vse_config

    torch.set_num_threads(1)
    os.chdir(ROOT)
    t0 = time.time()
    train_ds, dev_ds = (load_dataset("coco_scenes", s, scale=scale, seed=seed, **knobs) for s in ("train", "dev"))
    cfg = vse_config(scale, data=f"{train_ds.source}|{tag}", **({"epochs": epochs} if epochs else {}),
                     **({"patience": patience} if patience else {}))
    if model:
        cfg = dataclasses.replace(cfg, model=dataclasses.replace(cfg.model, **model))
    runs, _ = run_grid({name: cfg}, train_ds, dev_ds, dev_ds, seeds=[seed],
                       context=RunContext(device=device, ckpt_dir=str(ROOT / "runs" / "calibration"), record_dir=record_dir))
    r, seconds = runs.iloc[0], time.time() - t0
    if record_dir:
        seconds = recorded_seconds(cfg, name, train_ds, record_dir, seed) or seconds
    return {"training images": train_ds.n_images, "dev images": dev_ds.n_images, "epochs": cfg.epochs,
            "best epoch": int(r.best_epoch), "i2t_r1": round(float(r.i2t_r1), 2), "t2i_r1": round(float(r.t2i_r1), 2),
            "rsum": round(float(r.rsum), 2), "seconds here": round(seconds), "device": device}


def probe_arguments(ap: argparse.ArgumentParser, out: str) -> None:
    """The options every world probe takes (scale, seed, epochs, workers, device, where its table goes)."""
    ap.add_argument("--scale", default="medium")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=0, help="0: the scale's VSE++ epochs (a quick check only otherwise)")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--out", default=None, help=f"default {out} (medium)")


def write_design_table(table: pd.DataFrame, out: Path, data: str, reading: str, a: argparse.Namespace) -> None:
    """Writes a world-design probe's ``table`` to ``out`` (its data line ``data``, then the rule's ``reading``) and
    prints both: the size and language probes' one ending."""
    from itmlib.course.results import write_table

    table["paper"] = "no paper number (our world's design)"
    write_table(table, out.parent.parent, out.parent.name, out.stem,
                {"data": f"{data} {reading}", "dataset": "coco_scenes", "scale": a.scale, "seed": a.seed,
                 "device": a.device, "paper": "no paper number: the world's design, fixed before any claim run"})
    print(table.to_string(index=False))
    print(reading)


def record_dir(scale: str) -> Path:
    """Where the calibration's member records live: committed beside 09's other probes at medium."""
    return ROOT / "results" / "09_real_language" / "probes" if scale == "medium" else ROOT / "runs" / "calibration" / scale


def _one(args: tuple) -> dict:
    scale, seed, noise, distractors, epochs, device = args
    knobs = {**world_knobs(scale), "noise": noise, "distractors": distractors}
    row = vse_on_dev(scale, seed, knobs, epochs, device, patience=PATIENCE, name=f"VSE++ (noise {noise:g}, "
                     f"{distractors:g} distractors)", record_dir=str(record_dir(scale)))
    return {"scale": scale, "seed": seed, "noise": noise, "distractors": distractors, "epochs": row["epochs"],
            "best epoch": row["best epoch"], "split": "dev", "training images": row["training images"],
            "dev_images": row["dev images"], "i2t_r1": row["i2t_r1"], "t2i_r1": row["t2i_r1"], "rsum": row["rsum"],
            "seconds here": row["seconds here"], "device": device}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    probe_arguments(ap, "results/09_real_language/world_calibration.csv")
    ap.add_argument("--noise", type=float, nargs="*", default=list(NOISE))
    ap.add_argument("--distractors", type=float, nargs="*", default=list(DISTRACTORS))
    a = ap.parse_args(argv)
    from itmlib.data import load_dataset

    # parses (and caches) before the workers start
    world = load_dataset("coco_scenes", "dev", scale=a.scale, seed=a.seed, **world_knobs(a.scale)).source
    jobs = [(a.scale, a.seed, n, d, a.epochs, a.device) for n, d in product(a.noise, a.distractors)]
    with ProcessPoolExecutor(a.workers, mp_context=get_context("spawn")) as pool:
        rows = []
        for row in pool.map(_one, jobs):
            print(row, flush=True)
            rows.append(row)
    if a.scale == "medium" and not a.out and (set(a.noise), set(a.distractors)) != (set(NOISE), set(DISTRACTORS)):
        print(f"a slice of the grid: {len(rows)} settings trained (records in {record_dir(a.scale)}); the table is "
              "written when the whole grid runs")
        return 0
    floors = {d: dev_floors(a.scale, a.seed, {**world_knobs(a.scale), "distractors": d}) for d in a.distractors}
    table = choose(pd.DataFrame([{**r, **floors[r["distractors"]]} for r in rows]))
    out = Path(a.out) if a.out else ROOT / "results" / "09_real_language" / "world_calibration.csv" if a.scale == "medium" \
        else ROOT / "runs" / "calibration" / f"coco_scenes_{a.scale}.csv"
    from itmlib.course.results import write_table

    table["paper"] = "no paper number (our world's knobs)"
    write_table(table, out.parent.parent, out.parent.name, out.stem,
                {"data": f"{world.split(');')[0]}) at {a.scale}, each knob setting in turn: VSE++ (notebook 03's), "
                         f"at most {int(table.epochs.iloc[0])} epochs (patience {PATIENCE}), seed {a.seed}, dev R@1 "
                         "and Rsum beside the dev floors (the rule in benchmarks/calibrate_coco_scenes.py)",
                 "dataset": "coco_scenes", "scale": a.scale,
                 "seed": a.seed, "device": a.device,
                 "paper": "no paper number: the world's calibration, fixed before any claim run"})
    print(table.to_string(index=False))
    print(f"written: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
