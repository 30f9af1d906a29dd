"""How many training images does the real-language world need for VSE++ to clear its floor? Read on a dev
split as large as the test split.

    .venv/bin/python benchmarks/coco_scenes_size.py --workers 2                     # the committed probe (medium)
    .venv/bin/python benchmarks/coco_scenes_size.py --scale smoke --epochs 1 --sizes 500 1000 --dev 100 --out /tmp/x.csv

World v6's gate read VSE++ at 1.046x the higher floor on the 5,000 test images, where its calibration had read
1.189x on 500 dev images (``coco_scenes_gallery.py``: the margin goes between 1,000 and 5,000 images). So this
probe reads the margin where the gate does: on a dev split of 5,000 images (:data:`DEV_IMAGES`, from the end of
the seeded sample of the non-test COCO images; the test split is never read). It trains notebook 03's VSE++ (no
paper's method, so no claim is looked at) on v6's world (its calibrated perception: noise 0.25, 1 distractor;
every object word its own category) on nested training splits from the front of the same sample
(:data:`SIZES`: v6's 29,000, twice that, and every non-test image the dev split leaves, 113,287), under the
world's own recipe (``real_language.WORLD_RECIPES``: at most 30 epochs, stopped 5 after the best dev Rsum),
seed 0, and sets each beside the same dev split's two training-free floors (the word-overlap floor and the
co-occurrence baseline with counts from that training split; ``calibrate_coco_scenes.dev_floors``).

The rule, fixed before the first run: the world takes the **smallest** training split whose best dev Rsum is
at least 1.1x the higher dev floor (the gate's margin, read on a gallery of the gate's size); each larger split
costs its members' epochs in proportion (a TERAN member at 29,000 images is ~2 h on one CPU thread), so no
more images are taken than the gate needs. If no size clears it, none is taken: more images alone cannot make
this world testable, and the next world changes what its regions carry instead. A size larger than one that
has cleared cannot change the choice, so it may be stopped (``--sizes`` names those trained): the committed
table holds 29,000 and 58,000; 113,287 was stopped after three epochs, once 58,000 had cleared.
One row per size goes to ``--out`` (at medium ``results/09_real_language/size_probe.csv``), the chosen one
marked; the member records (each epoch's dev Rsum) to ``results/09_real_language/probes/`` as each finishes,
so a rerun trains only the sizes without one, and an interrupted member resumes from its last epoch. The
committed probe ran on v6's code; v7 took its choice as its sizes, so a rerun builds its worlds under v7's name
(58,000 images is then v7 itself) and trains them again.
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))   # calibrate_coco_scenes: the world probes' one trainer
from calibrate_coco_scenes import FLOOR_MARGIN  # noqa: E402 - a size needs the calibration's (the gate's) margin
from itmlib.course.real_language import WORLD_RECIPES  # noqa: E402

#: training images: v6's, twice that, and every non-test COCO image the dev split leaves (118,287 - 5,000)
SIZES = (29000, 58000, 113287)
#: dev images: as many as the test split the gate reads
DEV_IMAGES = 5000
#: the world's recipe for VSE++ on every image: 05's budget, this world's patience
EPOCHS, PATIENCE = 30, WORLD_RECIPES["medium"]["patience"]


def _knobs(n_train: int, n_dev: int) -> dict:
    return {"n_train": n_train, "n_dev": n_dev}


def _one(job: tuple) -> dict:
    from calibrate_coco_scenes import dev_floors, vse_on_dev

    scale, seed, n_train, n_dev, epochs, device, records = job
    row = vse_on_dev(scale, seed, _knobs(n_train, n_dev), epochs, device, name="VSE++", tag="size probe",
                     record_dir=str(records), patience=PATIENCE)
    return {**{k: row[k] for k in ("training images", "dev images", "epochs", "best epoch")},
            **{f"dev {k}": row[k] for k in ("i2t_r1", "t2i_r1", "rsum")}, **dev_floors(scale, seed, _knobs(n_train, n_dev)),
            "seconds here": row["seconds here"], "device": device}


def choose(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` (``training images``, ``dev rsum``, ``floor``) with ``over floor``, ``clears`` and ``chosen``
    columns, by the rule of the module docstring; and no size chosen when none clears."""
    t = table.sort_values("training images", ignore_index=True)
    t["over floor"] = (t["dev rsum"] / t["floor"]).round(3)
    t["clears"] = t["dev rsum"] >= (FLOOR_MARGIN * t["floor"]).round(2)   # Rsum is kept to 2 decimals
    t["chosen"] = False
    if t["clears"].any():
        t.loc[t.index[t["clears"]][0], "chosen"] = True
    return t


def reading(table: pd.DataFrame) -> str:
    """The rule's outcome in one sentence, from a table :func:`choose` marked."""
    if not table["chosen"].any():
        best = table.loc[table["over floor"].idxmax()]
        return (f"No size clears {FLOOR_MARGIN:g}x the higher dev floor (at most {best['over floor']:.3f}x, at "
                f"{int(best['training images']):,} images): more images alone do not make this world testable.")
    c = table.loc[table["chosen"]].iloc[0]
    return (f"The rule takes {int(c['training images']):,} training images, the fewest whose VSE++ clears "
            f"{FLOOR_MARGIN:g}x the higher dev floor ({c['dev rsum']:.1f} against {c['floor']:.1f}, "
            f"{c['over floor']:.3f}x).")


def main(argv: list[str] | None = None) -> int:
    from calibrate_coco_scenes import probe_arguments, write_design_table

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    probe_arguments(ap, "results/09_real_language/size_probe.csv")
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    ap.add_argument("--dev", type=int, default=DEV_IMAGES, help="dev images (the gate's gallery: 5,000)")
    a = ap.parse_args(argv)
    from itmlib.data import load_dataset

    world = load_dataset("coco_scenes", "dev", scale=a.scale, seed=a.seed, **_knobs(max(a.sizes), a.dev)).source
    out = Path(a.out) if a.out else ROOT / "results" / "09_real_language" / "size_probe.csv"
    records = out.parent / "probes"      # the member records beside the table (committed at medium)
    jobs = [(a.scale, a.seed, n, a.dev, a.epochs or EPOCHS, a.device, records) for n in sorted(a.sizes, reverse=True)]
    with ProcessPoolExecutor(a.workers, mp_context=get_context("spawn")) as pool:
        rows = []
        for row in pool.map(_one, jobs):
            print(row, flush=True)
            rows.append(row)
    table = choose(pd.DataFrame(rows))
    write_design_table(table, out, f"{world.split(');')[0]}) at {a.scale}, nested training splits; VSE++ (notebook 03's), "
                       f"seed {a.seed}, at most {a.epochs or EPOCHS} epochs (patience {PATIENCE}), best dev Rsum beside the "
                       "dev floors (the rule in benchmarks/coco_scenes_size.py).", reading(table), a)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
