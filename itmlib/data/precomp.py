"""Precomputed features in the SCAN / VSE++ layout, for users who have them.

A folder ``data_dir`` holds, per split (``train``, ``dev``, ``test``, ``testall``):

* ``{split}_ims.npy``   float array (N, R, D) bottom-up region features, or (N, D)
  global features. SCAN's Flickr30K/COCO files are (N, 36, 2048). When it has
  one row per *caption* (N == number of captions, images repeated five times,
  as some VSE++ releases do), every fifth row is kept.
* ``{split}_caps.txt``  exactly 5 captions per image, one per line, image-major.
* ``{split}_boxes.npy`` optional (N, R, 4) ``x1, y1, x2, y2``, normalised to
  [0, 1], or in pixels together with ``{split}_sizes.npy`` (N, 2) ``(w, h)``.
* ``{split}_ids.txt``   optional image ids, one per image or one per caption.

Every problem raises a clear error naming the file; nothing is half-loaded.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..paths import resolve_path
from .base import CAPTIONS_PER_IMAGE, ITMDataset

__all__ = ["load_precomp"]


def _need(path: Path, what: str) -> Path:
    if not path.is_file():
        raise FileNotFoundError(f"missing {what}: {path} (expected the SCAN/VSE precomp layout "
                                f"{{split}}_ims.npy + {{split}}_caps.txt in data_dir; see itmlib.data.precomp)")
    return path


def _read_caps(path: Path) -> list[str]:
    with open(path, "rb") as fh:
        raw = fh.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 text ({e})") from e
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines = lines[:-1]
    caps = [ln.rstrip("\r").strip() for ln in lines]
    for i, c in enumerate(caps):
        if not c:
            raise ValueError(f"{path}: caption on line {i + 1} is empty")
    return caps


def load_precomp(data_dir: str | os.PathLike[str], split: str) -> ITMDataset:
    """Load ``{split}_ims.npy`` / ``{split}_caps.txt`` (+ optional boxes, ids) from ``data_dir``."""
    if data_dir is None:
        raise ValueError("dataset 'precomp' needs data_dir: the folder with {split}_ims.npy and {split}_caps.txt")
    root = resolve_path(data_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"data_dir {root} does not exist (relative paths are resolved against the repo root)")
    ims_path = _need(root / f"{split}_ims.npy", "image features")
    caps_path = _need(root / f"{split}_caps.txt", "captions")
    try:
        ims = np.load(ims_path, mmap_mode="r", allow_pickle=False)
    except ValueError as e:
        raise ValueError(f"{ims_path}: not a plain .npy array ({e})") from e
    caps = _read_caps(caps_path)
    n_caps = len(caps)
    if ims.ndim not in (2, 3):
        raise ValueError(f"{ims_path}: expected shape (images, regions, dim) or (images, dim), got {ims.shape}")
    if ims.shape[0] == n_caps and n_caps % CAPTIONS_PER_IMAGE == 0 and n_caps != CAPTIONS_PER_IMAGE * ims.shape[0]:
        # one row per caption: images repeated CAPTIONS_PER_IMAGE times
        chk = min(ims.shape[0] // CAPTIONS_PER_IMAGE, 50)
        rows = np.asarray(ims[: chk * CAPTIONS_PER_IMAGE]).reshape(chk, CAPTIONS_PER_IMAGE, *ims.shape[1:])
        if not (rows == rows[:, :1]).all():
            raise ValueError(f"{ims_path} has one row per caption ({ims.shape[0]}) but the rows of an image "
                             f"differ; expected {n_caps // CAPTIONS_PER_IMAGE} image rows or 5 equal rows per image")
        ims = ims[::CAPTIONS_PER_IMAGE]
    n_img = ims.shape[0]
    if n_caps != CAPTIONS_PER_IMAGE * n_img:
        raise ValueError(f"{caps_path} has {n_caps} captions for {n_img} images in {ims_path}; "
                         f"expected exactly {CAPTIONS_PER_IMAGE} per image ({CAPTIONS_PER_IMAGE * n_img})")
    regions = np.ascontiguousarray(ims, dtype=np.float32)
    if regions.ndim == 2:
        regions = regions[:, None, :]
    boxes = None
    box_path = root / f"{split}_boxes.npy"
    if box_path.is_file():
        boxes = np.load(box_path, allow_pickle=False).astype(np.float32)
        if boxes.shape != regions.shape[:2] + (4,):
            raise ValueError(f"{box_path} has shape {boxes.shape} but {ims_path} has shape {regions.shape}; "
                             f"expected boxes of shape {regions.shape[:2] + (4,)}")
        if np.isfinite(boxes).all() and boxes.max(initial=0.0) > 1.0 + 1e-6:
            size_path = _need(root / f"{split}_sizes.npy", "image sizes for pixel boxes")
            sizes = np.load(size_path, allow_pickle=False).astype(np.float32)
            if sizes.shape != (n_img, 2):
                raise ValueError(f"{size_path} has shape {sizes.shape}, expected ({n_img}, 2) (width, height)")
            boxes = boxes / np.concatenate([sizes, sizes], axis=1)[:, None, :]
    ids = None
    id_path = root / f"{split}_ids.txt"
    if id_path.is_file():
        vals = [ln.strip() for ln in id_path.read_text(encoding="utf-8").splitlines() if ln.strip()]
        if len(vals) == n_caps:
            vals = vals[::CAPTIONS_PER_IMAGE]
        if len(vals) != n_img:
            raise ValueError(f"{id_path} has {len(vals)} ids; expected one per image ({n_img}) or per caption ({n_caps})")
        ids = np.array([int(v) for v in vals], dtype=np.int64)
    return ITMDataset(
        name="precomp", split=split, captions=caps,
        img_of_caption=np.repeat(np.arange(n_img), CAPTIONS_PER_IMAGE),
        regions=regions, boxes=boxes, image_ids=ids,
        source=f"precomputed features from {root} ({split}_ims.npy {tuple(regions.shape)})",
    )
