"""Probe a recipe on one arm's dev curve (seed 0), as 05-08 chose theirs: its member records go to
``results/<notebook>/probes/`` (config-hashed), where the notebook reads them and the rule of
:func:`itmlib.training.probes.probe_choice` picks.

* ``04_sam``: one SAM-alone (-T) setting (default ``tau=5 soft -T``, the paper's best sampling on average at its
  middle tau) on the grid's 2,000 images. Under the grid's recipe (lr 1e-3, one warm-up epoch summing over every
  negative) the -T arms were best at epoch 1 and fell once SAM's own hinge took over.
* ``05_sam_reduced_data``: the VSE++ baseline at the F-10% fraction (0.02), 05's schedule (the learning rate x0.1
  halfway through ``epochs``): without a warm-up it still climbed at 120 epochs.

    python tools/recipe_probe.py 04_sam --recipe lr=2e-4 --recipe warmup_epochs=15 --workers 2
    python tools/recipe_probe.py 05_sam_reduced_data --recipe epochs=240,warmup_epochs=0
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

#: the fraction of the training images each notebook's probed arm trains on at medium (ci/medium.yaml; 05's F-10%)
FRACTION = {"04_sam": 0.25, "05_sam_reduced_data": 0.02}
#: the recipe keys a probe may change
KNOBS = {"lr": float, "warmup_epochs": int, "epochs": int}


def parse_recipe(text: str) -> dict[str, float | int]:
    """``"lr=1e-4,warmup_epochs=0"`` -> ``{"lr": 1e-4, "warmup_epochs": 0}`` (the keys of :data:`KNOBS`)."""
    out: dict[str, float | int] = {}
    for part in filter(None, text.split(",")):
        key, _, value = part.partition("=")
        if key not in KNOBS or not value:
            raise ValueError(f"a recipe sets {', '.join(KNOBS)} (key=value, comma-separated), got {part!r}")
        out[key] = KNOBS[key](value)
    return out


def probe_config(notebook: str, setting: str, recipe: dict, scale: str, data: str):
    """The probed arm's config under ``recipe``: 04's SAM ``setting``, or 05's VSE++ with the learning rate x0.1
    halfway through its epochs (:func:`itmlib.papers.ncs_sam.scarce_schedule`)."""
    import dataclasses

    from itmlib.papers.ncs_sam import sam_configs, scarce_configs, scarce_schedule

    if notebook == "04_sam":
        tau, sampling, keep = setting.split()
        cfg = sam_configs(scale, [(float(tau.split("=")[1]), sampling, keep == "+T")], data=data, baseline=None,
                          sam_warmup=True)[setting]
        return dataclasses.replace(cfg, **recipe)
    rest = {k: v for k, v in recipe.items() if k != "epochs"}
    return scarce_configs(scale, ["VSE++"], data=data, warmup_epochs=rest.pop("warmup_epochs", 1),
                          **scarce_schedule(scale, recipe.get("epochs")), **rest)["VSE++"]


def _train(notebook: str, setting: str, recipe: dict, scale: str, seed: int) -> tuple[str, float]:
    import torch

    from itmlib.data import load_dataset
    from itmlib.relevance import eval_relevance
    from itmlib.training.context import RunContext
    from itmlib.training.grid import run_grid

    torch.set_num_threads(1)
    os.chdir(ROOT)
    train_ds, dev_ds, test_ds = (load_dataset("synthetic", s, scale=scale, seed=0) for s in ("train", "dev", "test"))
    name = setting if notebook == "04_sam" else "VSE++"
    cfg = probe_config(notebook, setting, recipe, scale, train_ds.source)
    t0 = time.time()
    run_grid({name: cfg}, train_ds, dev_ds, test_ds, eval_relevance(test_ds), fractions=[FRACTION[notebook]], seeds=[seed],
             context=RunContext(device="cpu", record_dir=ROOT / "results" / notebook / "probes", threads=1))
    return f"{name} {recipe}", time.time() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebook", choices=sorted(FRACTION))
    ap.add_argument("--setting", default="tau=5 soft -T", help="04: the SAM setting probed")
    ap.add_argument("--recipe", action="append", required=True, type=parse_recipe,
                    help="lr=..., warmup_epochs=..., epochs=..., comma-separated; repeat for each recipe")
    ap.add_argument("--scale", default="medium")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args(argv)
    if len(args.setting.split()) != 3:
        ap.error(f"--setting is 'tau=T SAMPLING +T|-T', got {args.setting!r}")
    with ProcessPoolExecutor(args.workers, mp_context=get_context("spawn")) as pool:
        futs = [pool.submit(_train, args.notebook, args.setting, r, args.scale, args.seed) for r in args.recipe]
        for f in futs:
            label, secs = f.result()
            print(f"[probe] {label}: {secs:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
