"""Region features that imitate a bottom-up-attention detector.

Each image yields up to ``n_regions`` regions, in a shuffled order, zero-padded:

* one region per object: its category signal (with probability
  ``category_confusion`` a sibling category's instead), plus attribute signals
  (colour, size, pattern; each dropped with probability ``attribute_dropout``),
  plus a box-geometry code;
* distractors: object parts (a sub-box with a weaker category signal and no
  attributes) and background stuff (sky, grass, ...) that no caption mentions.

Every concept is a fixed random unit vector of the world (seeded by
``world_seed``); each region gets Gaussian noise of norm ``detector_noise``:

    f = e_cat + 0.7 e_colour + 0.5 e_size + 0.5 e_pattern + 0.3 P [cx, cy, w, h, 1] + noise
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .scenes import Scene, WorldConfig
from .vocab import BACKGROUNDS, CATEGORIES, COLORS, PATTERNS, SIZES

__all__ = ["ConceptTable", "RegionSpec", "region_spec", "assemble_features"]

W_COLOR, W_SIZE, W_PATTERN, W_POS, W_PART = 0.7, 0.5, 0.5, 0.3, 0.6


@dataclass(frozen=True)
class ConceptTable:
    """The world's fixed concept embeddings."""

    cat: np.ndarray
    color: np.ndarray
    size: np.ndarray
    pattern: np.ndarray
    background: np.ndarray
    pos: np.ndarray  # (5, D) projection of [cx, cy, w, h, 1]

    @classmethod
    def build(cls, cfg: WorldConfig) -> "ConceptTable":
        rng = np.random.default_rng(cfg.world_seed)
        d = cfg.feature_dim

        def unit(n: int) -> np.ndarray:
            v = rng.standard_normal((n, d))
            return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)

        return cls(cat=unit(len(CATEGORIES)), color=unit(len(COLORS)), size=unit(len(SIZES)),
                   pattern=unit(len(PATTERNS)), background=unit(len(BACKGROUNDS)),
                   pos=(rng.standard_normal((5, d)) / np.sqrt(d)).astype(np.float32))


@dataclass
class RegionSpec:
    """What the detector saw in one image, before features are computed."""

    cat: np.ndarray        # (r,) category signal index or -1
    cat_w: np.ndarray      # (r,) weight of the category signal
    color: np.ndarray      # (r,) or -1
    size: np.ndarray       # (r,) or -1
    pattern: np.ndarray    # (r,) or -1
    background: np.ndarray # (r,) or -1
    box: np.ndarray        # (r, 4)
    object_region: np.ndarray  # (n_objects,) region index of each object
    noise: np.ndarray      # (r, D)


def _siblings(c: int) -> list[int]:
    h = CATEGORIES[c].hypernym
    return [k for k, cat in enumerate(CATEGORIES) if k != c and h is not None and cat.hypernym == h]


def region_spec(rng: np.random.Generator, scene: Scene, cfg: WorldConfig) -> RegionSpec:
    """Draw the detector's regions for one scene."""
    n = scene.n
    lo, hi = cfg.distractor_regions
    n_dist = int(min(rng.integers(lo, hi + 1), cfg.n_regions - n))
    n_part = n_dist // 2
    # the other n_dist - n_part distractors are background regions
    r = n + n_dist
    cat = np.full(r, -1)
    cat_w = np.zeros(r, np.float32)
    color = np.full(r, -1)
    size = np.full(r, -1)
    pattern = np.full(r, -1)
    background = np.full(r, -1)
    box = np.zeros((r, 4), np.float32)
    for k in range(n):
        c = int(scene.cat[k])
        if rng.random() < cfg.category_confusion:
            sib = _siblings(c)
            c = int(rng.choice(sib)) if sib else int(rng.integers(len(CATEGORIES)))
        cat[k], cat_w[k] = c, 1.0
        color[k] = scene.color[k] if rng.random() >= cfg.attribute_dropout else -1
        size[k] = scene.size[k] if rng.random() >= cfg.attribute_dropout else -1
        pattern[k] = scene.pattern[k] if rng.random() >= cfg.attribute_dropout else -1
        box[k] = scene.box[k]
    for j in range(n, n + n_part):  # parts of objects
        k = int(rng.integers(n))
        b = scene.box[k]
        fw, fh = rng.uniform(0.35, 0.7, size=2)
        w, h = (b[2] - b[0]) * fw, (b[3] - b[1]) * fh
        x1 = b[0] + rng.uniform(0, (b[2] - b[0]) - w)
        y1 = b[1] + rng.uniform(0, (b[3] - b[1]) - h)
        cat[j], cat_w[j] = scene.cat[k], W_PART
        box[j] = (x1, y1, x1 + w, y1 + h)
    for j in range(n + n_part, r):  # background stuff
        background[j] = int(rng.integers(len(BACKGROUNDS)))
        w, h = rng.uniform(0.2, 0.9, size=2)
        x1, y1 = rng.uniform(0, 1 - w), rng.uniform(0, 1 - h)
        box[j] = (x1, y1, x1 + w, y1 + h)
    perm = rng.permutation(r)
    inv = np.empty(r, np.int64)
    inv[perm] = np.arange(r)
    noise = rng.standard_normal((r, cfg.feature_dim)).astype(np.float32) * (cfg.detector_noise / np.sqrt(cfg.feature_dim))
    return RegionSpec(cat=cat[perm], cat_w=cat_w[perm], color=color[perm], size=size[perm], pattern=pattern[perm],
                      background=background[perm], box=box[perm], object_region=inv[:n], noise=noise)


def _gather(table: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Rows of ``table`` for idx >= 0, zeros where idx == -1."""
    out = table[np.maximum(idx, 0)]
    out[idx < 0] = 0.0
    return out


def assemble_features(specs: list[RegionSpec], concepts: ConceptTable,
                      cfg: WorldConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised features for a list of images: (regions (N, R, D), boxes (N, R, 4), counts (N,))."""
    n_img, R, D = len(specs), cfg.n_regions, cfg.feature_dim
    counts = np.array([s.cat.shape[0] for s in specs], dtype=np.int64)
    flat = lambda name: np.concatenate([getattr(s, name) for s in specs]) if specs else np.zeros(0)  # noqa: E731
    cat, cat_w = flat("cat"), flat("cat_w")
    box = flat("box").reshape(-1, 4)
    feats = _gather(concepts.cat, cat) * cat_w[:, None]
    feats += W_COLOR * _gather(concepts.color, flat("color"))
    feats += W_SIZE * _gather(concepts.size, flat("size"))
    feats += W_PATTERN * _gather(concepts.pattern, flat("pattern"))
    feats += _gather(concepts.background, flat("background"))
    geo = np.stack([(box[:, 0] + box[:, 2]) / 2, (box[:, 1] + box[:, 3]) / 2, box[:, 2] - box[:, 0],
                    box[:, 3] - box[:, 1], np.ones(len(box))], axis=1).astype(np.float32)
    feats += W_POS * geo @ concepts.pos
    feats += flat("noise").reshape(-1, D)
    regions = np.zeros((n_img, R, D), np.float32)
    boxes = np.zeros((n_img, R, 4), np.float32)
    slot = np.concatenate([np.arange(c) for c in counts]) if specs else np.zeros(0, np.int64)
    img = np.repeat(np.arange(n_img), counts)
    regions[img, slot] = feats
    boxes[img, slot] = box
    return regions, boxes, counts
