"""``coco_scenes``: real MS-COCO captions beside scenes built from the scene graphs of their own captions.

**What this world is**: real language with idealised perception of *what the annotators mentioned*. The
captions are verbatim COCO 2014 captions (five per image, the image's lowest caption ids); the "image" of an
image id is a set of regions, one per object its captions name, whose features come from fixed random
prototypes of the object's category and attributes - never from a word embedding, so no text leaks into the
image side. **What it cannot show**: visual ambiguity, detector errors, objects nobody mentioned (beyond
the distractor regions drawn from co-occurrence statistics), and where things are (relations do not place
the boxes yet: boxes are seeded at random).

Construction (:func:`load_coco_scenes`):

* images: ``test`` the first ``n_test`` images of the Karpathy 5k test split (1,000 at medium; its CxC and
  ECCV Caption positives kept), ``train`` / ``dev`` disjoint seeded samples of the other COCO 2014 images
  with at least five captions, sized by the scale;
* every caption parsed once by SceneGraphParser + spaCy (:func:`~itmlib.relevance.scene_graph.parse_tuples`),
  cached by content under ``data/cache/coco_scenes/`` (atomic writes; an unreadable cache is parsed again);
* the vocabulary from the *training* captions of the same scale and seed: the ``n_categories`` most frequent
  object lemmas (the rest one category, "other") and the ``n_attributes`` most frequent attribute lemmas
  (number words excluded: they set counts);
* an image's objects are the union over its captions, merged per category: its count is the largest any
  caption states ("two dogs": 2; up to 4), its attributes all its captions give it;
* a region of category c with attributes A: ``P_cat[c] + attr_weight · mean_{a ∈ A} P_attr[a]`` plus Gaussian
  noise of norm ``noise``; ``Poisson(distractors)`` extra regions of categories drawn from how often each
  co-occurs with the image's categories in the training scenes;
* gold caption graphs (lemmas of the parse) for the scene-graph F1 relevance, as the synthetic world's.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from dataclasses import dataclass, fields
from typing import Any, Sequence

import numpy as np

from ..config import get_scale
from ..paths import atomic_write_text, cache_dir
from .base import CAPTIONS_PER_IMAGE, ITMDataset

__all__ = ["CocoScenesConfig", "load_coco_scenes", "parse_cached", "build_vocab", "scene_of", "COCO_SCENES_VERSION"]

log = logging.getLogger(__name__)
#: version of the world in ``ITMDataset.source`` (checkpoints are keyed by it)
COCO_SCENES_VERSION = 1
#: words that state a count, not an attribute
NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "couple": 2, "pair": 2, "several": 3,
           "many": 4, "few": 3, "group": 3, "lot": 4, "bunch": 3}
MAX_COUNT = 4


@dataclass(frozen=True)
class CocoScenesConfig:
    """Knobs of the world (module docstring); ``noise`` and ``distractors`` are to be calibrated once on the
    VSE++ baseline at medium, before any claim run."""

    n_categories: int = 150
    n_attributes: int = 60
    feature_dim: int = 128
    n_regions: int = 36
    attr_weight: float = 0.5
    noise: float = 0.5
    distractors: float = 2.0
    world_seed: int = 2014

    def __post_init__(self) -> None:
        for f in ("n_categories", "n_attributes", "feature_dim", "n_regions"):
            if int(getattr(self, f)) < 1:
                raise ValueError(f"{f} must be a positive integer, got {getattr(self, f)!r}")
        for f in ("attr_weight", "noise", "distractors"):
            if getattr(self, f) < 0:
                raise ValueError(f"{f} must be >= 0, got {getattr(self, f)!r}")


def parse_cached(captions: Sequence[str], *, folder: Any = None) -> list[list[tuple[str, ...]]]:
    """Scene-graph tuples of every caption (``parse_tuples(captions, "spacy")``), cached by the captions'
    content; a cache that cannot be read (a run killed mid-write leaves none, but a copied or truncated
    file can) is parsed again."""
    from ..relevance.scene_graph import parse_tuples

    key = hashlib.sha256("\n".join(captions).encode("utf-8")).hexdigest()[:20]
    path = (cache_dir() / "coco_scenes" if folder is None else folder) / f"parse-v1-{key}.json"
    if path.is_file():
        try:
            rows = json.loads(path.read_text(encoding="utf-8"))
            if len(rows) == len(captions):
                return [[tuple(t) for t in r] for r in rows]
            log.warning("parse cache %s holds %d captions, not %d; parsing again", path, len(rows), len(captions))
        except (OSError, ValueError) as err:
            log.warning("parse cache %s is unreadable (%s); parsing again", path, err)
    out = parse_tuples(list(captions), "spacy")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps([[list(t) for t in r] for r in out]))
    return [[tuple(t) for t in r] for r in out]


def build_vocab(tuples: Sequence[Sequence[tuple[str, ...]]], cfg: CocoScenesConfig) -> tuple[list[str], list[str]]:
    """(categories, attributes) of the training captions' tuples: the most frequent object and attribute lemmas,
    ties in order of first appearance (never by spelling: renaming every word leaves the indices, and so the
    image features, unchanged); index ``len(categories)`` is "other"."""
    objs = Counter(t[0] for r in tuples for t in sorted(set(r), key=r.index) if len(t) == 1)
    attrs = Counter(t[1] for r in tuples for t in sorted(set(r), key=r.index) if len(t) == 2 and t[1] not in NUMBERS)
    return [w for w, _ in objs.most_common(cfg.n_categories)], [w for w, _ in attrs.most_common(cfg.n_attributes)]


def scene_of(caption_tuples: Sequence[Sequence[tuple[str, ...]]], cat_index: dict[str, int],
             attr_index: dict[str, int], other: int) -> dict[int, tuple[int, frozenset[int]]]:
    """One image's objects from its captions' tuples: {category: (count, attribute indices)}. The count is the
    largest any caption states (a number word as the object's attribute), at most :data:`MAX_COUNT`."""
    scene: dict[int, tuple[int, set[int]]] = {}
    for tuples in caption_tuples:
        for t in tuples:
            if len(t) > 2:
                continue
            c = cat_index.get(t[0], other)
            n, attrs = scene.get(c, (1, set()))
            if len(t) == 2:
                if t[1] in NUMBERS:
                    n = max(n, min(NUMBERS[t[1]], MAX_COUNT))
                elif t[1] in attr_index:
                    attrs.add(attr_index[t[1]])
            scene[c] = (n, attrs)
    return {c: (n, frozenset(a)) for c, (n, a) in sorted(scene.items())}


def _graphs(tuples: Sequence[Sequence[tuple[str, ...]]]) -> list[dict[str, Any]]:
    """Caption graphs in the synthetic world's layout (objects; attributes and relations by object index)."""
    out = []
    for r in tuples:
        objs = sorted({t[0] for t in r if len(t) == 1} | {t[0] for t in r if len(t) > 1} | {t[2] for t in r if len(t) == 3})
        at = {o: k for k, o in enumerate(objs)}
        out.append({"objects": objs, "attributes": sorted((at[t[0]], t[1]) for t in r if len(t) == 2),
                    "relations": sorted((at[t[0]], t[1], at[t[2]]) for t in r if len(t) == 3)})
    return out


def _split_ids(split: str, scale: str, seed: int) -> tuple[np.ndarray, np.ndarray, dict[int, str]]:
    """(image ids, caption ids, caption text) of a split: the Karpathy test prefix, or a seeded sample."""
    from .coco import coco_captions, karpathy_test_ids

    sc = get_scale(scale)
    text, img_of = coco_captions()
    if split == "test":
        caps = karpathy_test_ids()[: sc.n_test * CAPTIONS_PER_IMAGE]
        return np.array([img_of[int(c)] for c in caps[::CAPTIONS_PER_IMAGE]], np.int64), caps, text
    test_imgs = {img_of[int(c)] for c in karpathy_test_ids()}
    by_img: dict[int, list[int]] = {}
    for cid in sorted(text):
        if img_of[cid] not in test_imgs:
            by_img.setdefault(img_of[cid], []).append(cid)
    pool = np.array(sorted(i for i, c in by_img.items() if len(c) >= CAPTIONS_PER_IMAGE), np.int64)
    order = np.random.default_rng(np.random.SeedSequence([int(seed), 0x5CE9E])).permutation(pool)
    imgs = np.sort(order[: sc.n_train] if split == "train" else order[sc.n_train: sc.n_train + sc.n_dev])
    caps = np.array([c for i in imgs for c in by_img[int(i)][:CAPTIONS_PER_IMAGE]], np.int64)
    return imgs, caps, text


def _features(scenes: list[dict[int, tuple[int, frozenset[int]]]], cooc: np.ndarray, cfg: CocoScenesConfig,
              seed: int, split: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(regions (N, R, D), boxes (N, R, 4), counts (N,)): prototypes from the world seed alone, noise,
    boxes and distractors from (seed, split, image)."""
    proto = np.random.default_rng([cfg.world_seed, 1])
    D, R = cfg.feature_dim, cfg.n_regions
    p_cat = proto.normal(size=(cfg.n_categories + 1, D))
    p_cat /= np.linalg.norm(p_cat, axis=1, keepdims=True)
    p_att = proto.normal(size=(max(cfg.n_attributes, 1), D))
    p_att /= np.linalg.norm(p_att, axis=1, keepdims=True)
    regions = np.zeros((len(scenes), R, D), np.float32)
    boxes = np.zeros((len(scenes), R, 4), np.float32)
    counts = np.zeros(len(scenes), np.int64)
    code = {"train": 1, "dev": 2, "test": 3}[split]
    for i, scene in enumerate(scenes):
        rng = np.random.default_rng([int(seed), code, i, 0x5CE9E])
        items = [(c, a) for c, (n, a) in scene.items() for _ in range(n)]
        present = np.array(sorted(scene), np.int64)
        k = int(rng.poisson(cfg.distractors))
        if k and present.size:
            w = cooc[present].sum(0).astype(np.float64) + 1e-3
            w[present] = 0
            items += [(int(c), frozenset()) for c in rng.choice(len(w), size=k, p=w / w.sum())]
        items = items[:R]
        for j, (c, a) in enumerate(items):
            f = p_cat[c] + (cfg.attr_weight * p_att[sorted(a)].mean(0) if a else 0)
            regions[i, j] = f + cfg.noise * rng.normal(size=D) / np.sqrt(D)
            xy = rng.uniform(0, 0.7, size=2)
            boxes[i, j] = [xy[0], xy[1], xy[0] + rng.uniform(0.1, 0.3), xy[1] + rng.uniform(0.1, 0.3)]
        counts[i] = len(items)
    return regions, boxes, counts


def load_coco_scenes(split: str, *, scale: str = "smoke", seed: int = 0,
                     config: CocoScenesConfig | None = None) -> ITMDataset:
    """One split of the real-language world as an :class:`ITMDataset` (module docstring). ``image_extras``:
    ``objects`` ({category: (count, attributes)} per image; not the synthetic world's ``scenes``), and the
    vocabulary as ``categories`` and ``attributes`` (lists, the same for every image)."""
    from .coco import _positives

    cfg = config or CocoScenesConfig()
    split = "dev" if split == "val" else split
    if split not in ("train", "dev", "test"):
        raise ValueError(f"coco_scenes split must be 'train', 'dev' or 'test', got {split!r}")
    tr_imgs, tr_caps, text = _split_ids("train", scale, seed)
    tr_tuples = parse_cached([text[int(c)] for c in tr_caps])
    cats, attrs = build_vocab(tr_tuples, cfg)
    cat_index, attr_index = {w: k for k, w in enumerate(cats)}, {w: k for k, w in enumerate(attrs)}
    other = len(cats)
    per = lambda t: [t[k: k + CAPTIONS_PER_IMAGE] for k in range(0, len(t), CAPTIONS_PER_IMAGE)]  # noqa: E731
    tr_scenes = [scene_of(t, cat_index, attr_index, other) for t in per(tr_tuples)]
    cooc = np.zeros((other + 1, other + 1), np.int64)
    for s in tr_scenes:
        ks = np.array(sorted(s), np.int64)
        cooc[np.ix_(ks, ks)] += 1
    np.fill_diagonal(cooc, 0)
    if split == "train":
        imgs, caps, tuples, scenes = tr_imgs, tr_caps, tr_tuples, tr_scenes
    else:
        imgs, caps, text = _split_ids(split, scale, seed)
        tuples = parse_cached([text[int(c)] for c in caps])
        scenes = [scene_of(t, cat_index, attr_index, other) for t in per(tuples)]
    regions, boxes, counts = _features(scenes, cooc, cfg, seed, split)
    default = CocoScenesConfig()
    changed = "".join(f", {f.name}={getattr(cfg, f.name)}" for f in fields(cfg) if getattr(cfg, f.name) != getattr(default, f.name))
    return ITMDataset(
        name="coco_scenes", split=split, captions=[text[int(c)] for c in caps],
        img_of_caption=np.repeat(np.arange(imgs.size), CAPTIONS_PER_IMAGE), regions=regions, boxes=boxes,
        region_counts=counts, image_ids=imgs, caption_ids=caps,
        positives={n: _positives(n, imgs, caps) for n in ("cxc", "eccv")} if split == "test" else {},
        graphs=_graphs(tuples), image_extras={"objects": scenes, "categories": [cats + ["other"]] * imgs.size,
                                              "attributes": [attrs] * imgs.size},
        source=(f"coco_scenes v{COCO_SCENES_VERSION} (real MS-COCO 2014 captions; scenes from their own parses, "
                f"seed {seed}{changed}); idealised perception of what the captions mention, no real images"),
    )
