"""Probe a recipe for notebook 04's SAM-alone (-T) arms on one arm's dev curve, seed 0, as 05-08 chose theirs.

Under the grid's recipe (lr 1e-3, one warm-up epoch summing over every negative) the -T arms were best at
epoch 1 - the warm-up - and fell once SAM's own hinge took over. This trains one -T setting (default
``tau=5 soft -T``, the paper's best sampling on average at its middle tau) under each recipe given, into
``results/04_sam/probes/`` (member records, config-hashed), where notebook 04 reads them and picks a recipe by
:func:`itmlib.training.convergence.probe_choice`. Nothing of the +T arms changes.

    python tools/sam_alone_probe.py --recipe lr=2e-4 --recipe lr=1e-4 --recipe lr=1e-3,warmup_epochs=0 --workers 2
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: notebook 04's committed grid at medium (ci/medium.yaml): 2,000 training images, 15 epochs
FRACTION = 0.25


def parse_recipe(text: str) -> dict[str, float | int]:
    """``"lr=1e-4,warmup_epochs=0"`` -> ``{"lr": 1e-4, "warmup_epochs": 0}`` (only lr and warmup_epochs)."""
    out: dict[str, float | int] = {}
    for part in filter(None, text.split(",")):
        key, _, value = part.partition("=")
        if key not in ("lr", "warmup_epochs") or not value:
            raise ValueError(f"a recipe is lr=... and/or warmup_epochs=..., got {part!r}")
        out[key] = float(value) if key == "lr" else int(value)
    return out


def _train(setting: str, recipe: dict, scale: str, seed: int) -> tuple[str, float]:
    import dataclasses

    import torch

    from itmlib.data import load_dataset
    from itmlib.papers.ncs_sam import sam_configs
    from itmlib.relevance import eval_relevance
    from itmlib.training.context import RunContext
    from itmlib.training.grid import run_grid

    torch.set_num_threads(1)
    os.chdir(ROOT)
    train_ds, dev_ds, test_ds = (load_dataset("synthetic", s, scale=scale, seed=0) for s in ("train", "dev", "test"))
    tau, sampling, keep = setting.split()
    cfgs = sam_configs(scale, [(float(tau.split("=")[1]), sampling, keep == "+T")], data=train_ds.source, baseline=None,
                       sam_warmup=True)
    cfg = dataclasses.replace(cfgs[setting], **recipe)
    t0 = time.time()
    run_grid({setting: cfg}, train_ds, dev_ds, test_ds, eval_relevance(test_ds), fractions=[FRACTION], seeds=[seed],
             context=RunContext(device="cpu", record_dir=ROOT / "results" / "04_sam" / "probes", threads=1))
    return f"{setting} {recipe}", time.time() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--setting", default="tau=5 soft -T")
    ap.add_argument("--recipe", action="append", required=True, type=parse_recipe,
                    help="lr=... and/or warmup_epochs=..., comma-separated; repeat for each recipe")
    ap.add_argument("--scale", default="medium")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args(argv)
    if len(args.setting.split()) != 3:
        ap.error(f"--setting is 'tau=T SAMPLING +T|-T', got {args.setting!r}")
    with ProcessPoolExecutor(args.workers, mp_context=get_context("spawn")) as pool:
        futs = [pool.submit(_train, args.setting, r, args.scale, args.seed) for r in args.recipe]
        for f in futs:
            label, secs = f.result()
            print(f"[probe] {label}: {secs:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
