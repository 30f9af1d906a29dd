"""Where a real-language world sits between its floors and its ceilings, before any model trains on it.

    .venv/bin/python benchmarks/coco_scenes_bounds.py --scale medium                       # v6, as notebook 09 reads it
    .venv/bin/python benchmarks/coco_scenes_bounds.py --scale medium --n-categories 150 --n-test 1000 --distractors 2   # v5

For one ``coco_scenes`` configuration: the share of the scene captions' object mentions left "other", the share
of test images whose category set another test image shares, and the test Rsum of the training-free floor
(:func:`~itmlib.course.retrievers.lexical_floor`), the learned co-occurrence baseline
(:func:`~itmlib.course.retrievers.cooccurrence_scores`) and the two ceilings
(:func:`~itmlib.course.retrievers.scene_ceiling`: identical category sets, identical scenes), and how many of
ECCV Caption's image and caption queries keep a positive among the world's queries. No model trains;
the test split is read only by these training-free retrievers. One row per configuration is appended to
``--out`` (default ``benchmarks/timings/coco_scenes_bounds.csv``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def other_share(ds) -> float:
    """Percent of the object mentions of ``ds``'s scene captions whose category is "other"."""
    from itmlib.data.coco import coco_captions
    from itmlib.data.coco_scenes_vocab import dataset_vocab, not_objects
    from itmlib.relevance.scene_graph import parse_cached

    vocab, skip, text = dataset_vocab(ds), not_objects(), coco_captions()[0]
    ids = [int(c) for row in ds.image_extras["scene_caption_ids"] for c in row]
    n = o = 0
    for tuples in parse_cached([text[c] for c in ids]):
        cat = vocab.of_caption(tuples)
        for t in tuples:
            if len(t) == 1 and t[0] not in skip:
                n, o = n + 1, o + (cat[t[0]] == vocab.other)
    return 100.0 * o / max(n, 1)


def bounds(scale: str, seed: int, **knobs) -> dict:
    from itmlib.course.retrievers import cooccurrence_scores, lexical_floor, scene_ceiling
    from itmlib.data import load_dataset
    from itmlib.metrics import retrieval_recall

    t0 = time.time()
    train = load_dataset("coco_scenes", "train", scale=scale, seed=seed, **knobs)
    test = load_dataset("coco_scenes", "test", scale=scale, seed=seed, **knobs)
    built = time.time() - t0
    sets = pd.Series([frozenset(s) for s in test.image_extras["objects"]])
    rsum = lambda sims: float(retrieval_recall(sims, test.img_of_caption)["rsum"])  # noqa: E731
    return {"world": test.source.split(" (")[0], "knobs": ", ".join(f"{k}={v}" for k, v in knobs.items()) or "defaults",
            "train images": train.n_images, "test images": test.n_images, "categories": len(test.image_extras["categories"][0]) - 1,
            "other share of scene objects (%)": other_share(test),
            "test images sharing their category set (%)": 100.0 * float(sets.duplicated(keep=False).mean()),
            "ECCV image queries": int((test.positives["eccv"].getnnz(1) > 0).sum()),
            "ECCV caption queries": int((test.positives["eccv_t2i"].getnnz(0) > 0).sum()),
            "floor rsum": rsum(lexical_floor(test, seed=seed)),
            "co-occurrence rsum": rsum(cooccurrence_scores(train, test, seed=seed)),
            "ceiling (category sets) rsum": rsum(scene_ceiling(test, "categories", seed=seed)),
            "ceiling (scenes) rsum": rsum(scene_ceiling(test, "scene", seed=seed)),
            "build seconds": built, "seconds": time.time() - t0}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", default="medium")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-categories", type=int)
    ap.add_argument("--n-test", type=int)
    ap.add_argument("--distractors", type=float)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "timings" / "coco_scenes_bounds.csv"))
    args = ap.parse_args(argv)
    knobs = {k: v for k, v in (("n_categories", args.n_categories), ("n_test", args.n_test),
                               ("distractors", args.distractors)) if v is not None}
    row = bounds(args.scale, args.seed, **knobs)
    print(pd.Series(row).to_string(float_format=lambda v: f"{v:.1f}"))
    out = Path(args.out)
    table = pd.concat([pd.read_csv(out), pd.DataFrame([row])]) if out.is_file() else pd.DataFrame([row])
    table.drop_duplicates(["world", "knobs", "train images", "test images"], keep="last").round(2).to_csv(out, index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
