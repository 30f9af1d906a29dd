"""Enough language to learn: more training images, or a pretrained word side? Measured on VSE++'s dev curve.

    .venv/bin/python benchmarks/coco_scenes_language.py --workers 2               # the committed probe (medium)
    .venv/bin/python benchmarks/coco_scenes_language.py --scale smoke --epochs 1 --sizes 500 1000 --out /tmp/x.csv

Trains notebook 03's VSE++ (no paper's method, so no claim is looked at) on the real-language world with every
object word its own category (``n_categories=0``, v6's scenes) under v5's perception (noise 0.5, 2 distractors;
at medium v5's 1,000 test images, whose scene captions join the vocabulary: :data:`WORLD`), on nested training splits of the
non-test COCO images (``n_train``: 8,000, 16,000 and 29,000; every size reads one dev split, the test split is
never read), and at 8,000 images twice more with 384-d word embeddings: from MiniLM's word pieces
(``word_init="minilm"``) and from random (its control, the same width). Each arm's best dev Rsum and its epoch
go to ``results/09_real_language/language_probe.csv``; the member records (each epoch's dev Rsum) to
``results/09_real_language/probes/``.

The rule, fixed before the first run: the world takes the pretrained word side when it buys at least what 3.6x
the training images buy - dev Rsum(MiniLM, 8,000) - Rsum(random 384-d, 8,000) >= Rsum(29,000) - Rsum(8,000) -
and 29,000 training images otherwise. The committed probe ran on v5's code (its table's data line names the
world); v6 took its choice, and v7 reads a 5,000-image dev split, so a rerun builds worlds under v7's name on
that dev split and trains them again.
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

SIZES = (8000, 16000, 29000)
#: the world the probe measured, stated as knobs (v6's defaults differ: its calibrated perception, 5,000 test images)
WORLD = {"n_categories": 0, "noise": 0.5, "distractors": 2.0}
WORLD_AT = {"medium": {"n_test": 1000}}


def _one(job: tuple) -> dict:
    from calibrate_coco_scenes import vse_on_dev

    scale, seed, n_train, words, epochs, device, records = job
    model = {} if words == "random 256-d" else {"word_dim": 384, "word_init": words.split()[0]}
    name = f"VSE++ ({words} words)"
    row = vse_on_dev(scale, seed, {"n_train": n_train, **WORLD, **WORLD_AT.get(scale, {})}, epochs, device, name=name, tag="language probe",
                     model=model, record_dir=str(records))
    return {"arm": name, **{k: row[k] for k in ("training images", "dev images", "epochs", "best epoch")},
            **{f"dev {k}": row[k] for k in ("i2t_r1", "t2i_r1", "rsum")}, "seconds here": row["seconds here"],
            "device": device}


def choose(table: pd.DataFrame) -> str:
    """The rule of the module docstring, in one sentence (on the sizes ``table`` holds)."""
    rs = table.set_index(["arm", "training images"])["dev rsum"]
    small, large = int(table["training images"].min()), int(table["training images"].max())
    base, most = rs.get(("VSE++ (random 256-d words)", small)), rs.get(("VSE++ (random 256-d words)", large))
    mini, ctrl = rs.get(("VSE++ (minilm 384-d words)", small)), rs.get(("VSE++ (random 384-d words)", small))
    if any(v is None for v in (base, most, mini, ctrl)):
        return "not every arm ran: no choice"
    words, images = mini - ctrl, most - base
    pick = "the pretrained word side" if words >= images else f"{large:,} training images"
    return (f"MiniLM's words add {words:+.1f} dev Rsum at {small:,} images; {large:,} images add {images:+.1f} "
            f"over {small:,}: the rule takes {pick}.")


def main(argv: list[str] | None = None) -> int:
    from calibrate_coco_scenes import probe_arguments, write_design_table

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    probe_arguments(ap, "results/09_real_language/language_probe.csv")
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    a = ap.parse_args(argv)
    from itmlib.data import load_dataset

    for n in a.sizes:        # parse (and cache) every split before the workers start
        world = load_dataset("coco_scenes", "dev", scale=a.scale, seed=a.seed, n_train=n, **WORLD,
                             **WORLD_AT.get(a.scale, {})).source
    small = min(a.sizes)
    out = Path(a.out) if a.out else ROOT / "results" / "09_real_language" / "language_probe.csv"
    records = out.parent / "probes"      # the member records beside the table (committed at medium)
    jobs = [(a.scale, a.seed, n, "random 256-d", a.epochs, a.device, records) for n in sorted(a.sizes, reverse=True)]
    jobs += [(a.scale, a.seed, small, w, a.epochs, a.device, records) for w in ("minilm 384-d", "random 384-d")]
    with ProcessPoolExecutor(a.workers, mp_context=get_context("spawn")) as pool:
        rows = list(pool.map(_one, jobs))
    table = pd.DataFrame(rows).sort_values(["arm", "training images"], ignore_index=True)
    write_design_table(table, out, f"{world.split(');')[0]}) at {a.scale}, n_categories=0, nested training splits; VSE++ "
                       f"(notebook 03's), seed {a.seed}, best dev Rsum (the rule in benchmarks/coco_scenes_language.py).",
                       choose(table), a)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
