"""The text side of the real-language world (:mod:`itmlib.data.coco_scenes`): which COCO images and
captions a split holds, their verbatim text and (test) their CxC / ECCV Caption positives, read once from
pycocoevalcap's jar and eccv-caption's files and cached, so that a machine holding the cache (a lent GPU)
needs neither package."""

from __future__ import annotations

import json
import logging
from typing import Any

import numpy as np

from ..config import get_scale
from .base import CAPTIONS_PER_IMAGE

__all__ = ["text_side"]

log = logging.getLogger(__name__)


def _split_ids(split: str, scale: str, seed: int, n_test: int = 0, n_train: int = 0, n_dev: int = 0
               ) -> tuple[np.ndarray, np.ndarray, dict[int, str]]:
    """(image ids, caption ids, caption text) of a split: the Karpathy test prefix (``n_test`` images, 0: the
    scale's), or a seeded sample of the other images - the scale's training images then its dev images, or with
    ``n_train`` (or ``n_dev``) that many training images from the front of the sample and ``n_dev`` (0: the
    scale's) dev images from its end, so that every ``n_train`` shares one dev split, a smaller training split
    lies inside a larger one and a smaller dev split inside a larger one."""
    from .coco import coco_captions, karpathy_test_ids, non_test_images

    sc = get_scale(scale)
    text, img_of = coco_captions()
    if split == "test":
        caps = karpathy_test_ids()[: (n_test or sc.n_test) * CAPTIONS_PER_IMAGE]
        return np.array([img_of[int(c)] for c in caps[::CAPTIONS_PER_IMAGE]], np.int64), caps, text
    pool, by_img = non_test_images(text, img_of)
    order = np.random.default_rng(np.random.SeedSequence([int(seed), 0x5CE9E])).permutation(pool)
    dev = n_dev or sc.n_dev
    if (n_train or n_dev) and (n_train or sc.n_train) + dev > order.size:
        raise ValueError(f"{n_train or sc.n_train} training + {dev} dev images exceed the {order.size} non-test COCO images")
    if n_train or n_dev:
        imgs = np.sort(order[: n_train or sc.n_train] if split == "train" else order[order.size - dev:])
    else:
        imgs = np.sort(order[: sc.n_train] if split == "train" else order[sc.n_train: sc.n_train + sc.n_dev])
    caps = np.array([c for i in imgs for c in by_img[int(i)][:CAPTIONS_PER_IMAGE]], np.int64)
    return imgs, caps, text


def text_side(split: str, scale: str, seed: int, n_test: int = 0, n_train: int = 0, n_dev: int = 0) -> dict[str, Any]:
    """What a split takes from the COCO text and ECCV Caption files: ``images`` and ``caption_ids`` (arrays),
    ``captions`` (verbatim; ``n_test`` test, ``n_train`` training and ``n_dev`` dev images, 0: the scale's;
    :func:`_split_ids`) and, for ``test``,
    ``positives`` ({"cxc"|"eccv": (image rows, caption columns)} of the
    image queries, and ``"cxc_t2i"`` / ``"eccv_t2i"`` of the caption queries),
    cached under ``data/cache/coco_scenes/`` by split, split sizes and seed (COCO 2014's annotations and the
    eccv-caption files are fixed data; atomic writes; an unreadable file is read from the sources again). A
    machine holding the cache needs neither pycocoevalcap's jar nor eccv-caption (a lent GPU machine)."""
    from ..paths import atomic_write_text, cache_dir
    from .coco import _caption_positives, _positives

    sc = get_scale(scale)
    sizes = {"train": f"{n_train or sc.n_train}",
             "dev": f"{sc.n_train}-{sc.n_dev}" if not (n_train or n_dev) else f"end-{n_dev or sc.n_dev}",
             "test": f"{n_test or sc.n_test}"}[split]
    path = cache_dir() / "coco_scenes" / f"text-v2-{split}-{sizes}-s{int(seed) if split != 'test' else 0}.json"
    if path.is_file():
        try:
            d = json.loads(path.read_text(encoding="utf-8"))
            return {"images": np.array(d["images"], np.int64), "caption_ids": np.array(d["caption_ids"], np.int64),
                    "captions": d["captions"], "positives": {k: tuple(np.array(a, np.int64) for a in v)
                                                             for k, v in d["positives"].items()}}
        except (OSError, ValueError, KeyError) as err:
            log.warning("coco_scenes text cache %s is unreadable (%s); reading the sources again", path, err)
    imgs, caps, text = _split_ids(split, scale, seed, n_test, n_train, n_dev)
    pos = {}
    if split == "test":
        for name in ("cxc", "eccv"):   # image queries (image_to_caption) and caption queries (caption_to_image)
            for key, m in ((name, _positives(name, imgs, caps)), (f"{name}_t2i", _caption_positives(name, imgs, caps))):
                m = m.tocoo()
                pos[key] = (m.row.astype(np.int64), m.col.astype(np.int64))
    out = {"images": imgs, "caption_ids": caps, "captions": [text[int(c)] for c in caps], "positives": pos}
    atomic_write_text(path, json.dumps({"images": imgs.tolist(), "caption_ids": caps.tolist(),
                                        "captions": out["captions"],
                                        "positives": {k: [r.tolist(), c.tolist()] for k, (r, c) in pos.items()}}))
    return out
