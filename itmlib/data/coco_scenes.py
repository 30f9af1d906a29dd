"""``coco_scenes``: real MS-COCO captions beside scenes built from the scene graphs of their own captions.

**What this world is**: real language with idealised perception of *what the annotators mentioned*. The
captions are verbatim COCO 2014 captions (five per image, the image's lowest caption ids); the "image" of an
image id is a set of regions, one per object its captions name, whose features come from fixed random
prototypes of the object's category and attributes - never from a word embedding, so no text leaks into the
image side. **What it cannot show**: visual ambiguity, detector errors, objects nobody mentioned (beyond
the distractor regions drawn from co-occurrence statistics), and any layout the captions do not state (boxes
are seeded at random, then the captions' spatial relations move them: "a cat on a table" puts the cat's box
on the table's).

Construction (:func:`load_coco_scenes`):

* images: ``test`` the first ``n_test`` images of the Karpathy 5k test split (1,000 at medium; its CxC and
  ECCV Caption positives kept), ``train`` / ``dev`` disjoint seeded samples of the other COCO 2014 images
  with at least five captions, sized by the scale;
* the split's ids, captions and (test) positives read once from the COCO and ECCV Caption files and cached
  (:func:`~itmlib.data.coco_scenes_text.text_side`);
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
* boxes: seeded at random, then each relation between two of the image's categories (:func:`relations_of`)
  places its subject's first box by the predicate's class (:mod:`itmlib.data.scene_layout`);
* gold caption graphs (lemmas of the parse) for the scene-graph F1 relevance, as the synthetic world's, with
  ``grounding`` (a caption's object -> the image's object of its category, where the image has one of it) and
  ``image_extras["object_region"]`` (each object's region), so word grounding is measured as on the synthetic
  world (:mod:`itmlib.metrics.grounding`).
"""

from __future__ import annotations

import functools
import logging
from collections import Counter
from dataclasses import dataclass, fields
from typing import Any, Sequence

import numpy as np
import scipy.sparse as sp

from ..relevance.scene_graph import parse_cached
from .coco_scenes_text import text_side
from .scene_layout import place_boxes, relations_of
from .base import CAPTIONS_PER_IMAGE, ITMDataset

__all__ = ["CocoScenesConfig", "load_coco_scenes", "build_vocab", "scene_of", "COCO_SCENES_VERSION", "scene_statistics"]

log = logging.getLogger(__name__)
#: version of the world in ``ITMDataset.source`` (checkpoints are keyed by it)
COCO_SCENES_VERSION = 3
#: words that state a count, not an attribute
NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "couple": 2, "pair": 2, "several": 3,
           "many": 4, "few": 3, "group": 3, "lot": 4, "bunch": 3}
MAX_COUNT = 4


@functools.lru_cache(maxsize=1)
def _not_objects() -> frozenset[str]:
    """Lemmas the parser can return as objects that name none: English stop words ("that", "it", "something";
    spaCy's list, offline) and the count words ("group" of "a group of people")."""
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(STOP_WORDS) | frozenset(NUMBERS)


@dataclass(frozen=True)
class CocoScenesConfig:
    """Knobs of the world (module docstring). ``noise`` and ``distractors`` were calibrated once on the VSE++
    baseline at medium, on the dev split, before any claim run (``benchmarks/calibrate_coco_scenes.py``): of
    the 8 settings, noise 1.0 with 5 distractors had dev R@1 35.0 / 23.0 and Rsum 324.3, the admissible
    Rsum nearest 300."""

    n_categories: int = 150
    n_attributes: int = 60
    feature_dim: int = 128
    n_regions: int = 36
    attr_weight: float = 0.5
    noise: float = 1.0          # calibrated at medium (results/10_real_language/world_calibration.csv)
    distractors: float = 5.0    # the same calibration
    world_seed: int = 2014

    def __post_init__(self) -> None:
        for f in ("n_categories", "n_attributes", "feature_dim", "n_regions"):
            if int(getattr(self, f)) < 1:
                raise ValueError(f"{f} must be a positive integer, got {getattr(self, f)!r}")
        for f in ("attr_weight", "noise", "distractors"):
            if getattr(self, f) < 0:
                raise ValueError(f"{f} must be >= 0, got {getattr(self, f)!r}")


def build_vocab(tuples: Sequence[Sequence[tuple[str, ...]]], cfg: CocoScenesConfig) -> tuple[list[str], list[str]]:
    """(categories, attributes) of the training captions' tuples: the most frequent object lemmas that name an
    object (:func:`_not_objects`) and attribute lemmas,
    ties in order of first appearance (never by spelling: renaming every word leaves the indices, and so the
    image features, unchanged); index ``len(categories)`` is "other"."""
    skip = _not_objects()
    objs = Counter(t[0] for r in tuples for t in sorted(set(r), key=r.index) if len(t) == 1 and t[0] not in skip)
    attrs = Counter(t[1] for r in tuples for t in sorted(set(r), key=r.index) if len(t) == 2 and t[1] not in NUMBERS)
    return [w for w, _ in objs.most_common(cfg.n_categories)], [w for w, _ in attrs.most_common(cfg.n_attributes)]


def scene_of(caption_tuples: Sequence[Sequence[tuple[str, ...]]], cat_index: dict[str, int],
             attr_index: dict[str, int], other: int) -> dict[int, tuple[int, frozenset[int]]]:
    """One image's objects from its captions' tuples: {category: (count, attribute indices)}. The count is the
    largest any caption states (a number word as the object's attribute), at most :data:`MAX_COUNT`; a lemma
    that names no object (:func:`_not_objects`) is no object."""
    scene: dict[int, tuple[int, set[int]]] = {}
    skip = _not_objects()
    for tuples in caption_tuples:
        for t in tuples:
            if len(t) > 2 or t[0] in skip:
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
    """Caption graphs in the synthetic world's layout (objects; attributes and relations by object index),
    without the tuples of lemmas that name no object (:func:`_not_objects`)."""
    out, skip = [], _not_objects()
    for r in tuples:
        r = [t for t in r if t[0] not in skip and (len(t) < 3 or t[2] not in skip)]
        objs = sorted({t[0] for t in r if len(t) == 1} | {t[0] for t in r if len(t) > 1} | {t[2] for t in r if len(t) == 3})
        at = {o: k for k, o in enumerate(objs)}
        out.append({"objects": objs, "attributes": sorted((at[t[0]], t[1]) for t in r if len(t) == 2),
                    "relations": sorted((at[t[0]], t[1], at[t[2]]) for t in r if len(t) == 3)})
    return out


def _features(scenes: list[dict[int, tuple[int, frozenset[int]]]], cooc: np.ndarray, cfg: CocoScenesConfig,
              seed: int, split: str, relations: Sequence[Sequence[tuple[int, str, int]]] | None = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(regions (N, R, D), boxes (N, R, 4), counts (N,), each region's category (N, R), -1 past the last):
    prototypes from the world seed alone, noise,
    boxes and distractors from (seed, split, image); each image's ``relations`` then place its boxes
    (:func:`place_boxes`). An image's first region of each of its categories is its ``len(scene)`` first
    regions' order: the scene's instances in category order, one region each."""
    proto = np.random.default_rng([cfg.world_seed, 1])
    D, R = cfg.feature_dim, cfg.n_regions
    p_cat = proto.normal(size=(cfg.n_categories + 1, D))
    p_cat /= np.linalg.norm(p_cat, axis=1, keepdims=True)
    p_att = proto.normal(size=(max(cfg.n_attributes, 1), D))
    p_att /= np.linalg.norm(p_att, axis=1, keepdims=True)
    regions = np.zeros((len(scenes), R, D), np.float32)
    boxes = np.zeros((len(scenes), R, 4), np.float32)
    counts = np.zeros(len(scenes), np.int64)
    region_cat = np.full((len(scenes), R), -1, np.int64)
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
            region_cat[i, j] = c
            f = p_cat[c] + (cfg.attr_weight * p_att[sorted(a)].mean(0) if a else 0)
            regions[i, j] = f + cfg.noise * rng.normal(size=D) / np.sqrt(D)
            xy = rng.uniform(0, 0.7, size=2)
            boxes[i, j] = [xy[0], xy[1], xy[0] + rng.uniform(0.1, 0.3), xy[1] + rng.uniform(0.1, 0.3)]
        if relations is not None and relations[i]:
            place_boxes(boxes[i], first_regions(scene), relations[i])
        counts[i] = len(items)
    return regions, boxes, counts, region_cat


def first_regions(scene: dict[int, tuple[int, frozenset[int]]]) -> dict[int, int]:
    """Category -> the region of its first instance (the scene's instances fill the regions in category order)."""
    out, j = {}, 0
    for c, (n, _) in scene.items():
        out[c] = j
        j += n
    return out


def _grounding(graphs: list[dict[str, Any]], scenes: list[dict[int, tuple[int, frozenset[int]]]],
               cat_index: dict[str, int], n_regions: int) -> list[np.ndarray]:
    """Adds each caption graph's ``grounding`` ((node, object k, noun) for every named object whose category
    the image holds exactly once, so its region is unambiguous) and returns ``object_region`` per image (its
    k-th object, in category order -> region slot; -1 past the last region)."""
    obj_region = []
    for scene in scenes:
        first = first_regions(scene)
        obj_region.append(np.array([first[c] if first[c] < n_regions else -1 for c in scene], np.int64))
    for c, g in enumerate(graphs):
        scene = scenes[c // CAPTIONS_PER_IMAGE]
        order = {cat: k for k, cat in enumerate(scene)}
        g["grounding"] = [(node, order[cat_index[w]], w) for node, w in enumerate(g["objects"])
                          if w in cat_index and scene.get(cat_index[w], (0,))[0] == 1
                          and obj_region[c // CAPTIONS_PER_IMAGE][order[cat_index[w]]] >= 0]
    return obj_region


def load_coco_scenes(split: str, *, scale: str = "smoke", seed: int = 0,
                     config: CocoScenesConfig | None = None) -> ITMDataset:
    """One split of the real-language world as an :class:`ITMDataset` (module docstring). ``image_extras``:
    ``objects`` ({category: (count, attributes)} per image; not the synthetic world's ``scenes``), its
    ``relations`` (:func:`relations_of`), ``object_region`` (:func:`_grounding`), ``region_category`` (each
    region's category index, distractors included; -1 past the last), and the vocabulary as
    ``categories`` and ``attributes`` (lists, the same for every image)."""
    cfg = config or CocoScenesConfig()
    split = "dev" if split == "val" else split
    if split not in ("train", "dev", "test"):
        raise ValueError(f"coco_scenes split must be 'train', 'dev' or 'test', got {split!r}")
    tr = text_side("train", scale, seed)
    tr_tuples = parse_cached(tr["captions"])
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
        side, tuples, scenes = tr, tr_tuples, tr_scenes
    else:
        side = text_side(split, scale, seed)
        tuples = parse_cached(side["captions"])
        scenes = [scene_of(t, cat_index, attr_index, other) for t in per(tuples)]
    imgs, caps = side["images"], side["caption_ids"]
    relations = [relations_of(t, cat_index, other) for t in per(tuples)]
    regions, boxes, counts, region_cat = _features(scenes, cooc, cfg, seed, split, relations)
    graphs = _graphs(tuples)
    obj_region = _grounding(graphs, scenes, cat_index, cfg.n_regions)
    default = CocoScenesConfig()
    changed = "".join(f", {f.name}={getattr(cfg, f.name)}" for f in fields(cfg) if getattr(cfg, f.name) != getattr(default, f.name))
    return ITMDataset(
        name="coco_scenes", split=split, captions=list(side["captions"]),
        img_of_caption=np.repeat(np.arange(imgs.size), CAPTIONS_PER_IMAGE), regions=regions, boxes=boxes,
        region_counts=counts, image_ids=imgs, caption_ids=caps,
        positives={n: sp.csr_matrix((np.ones(r.size, np.float32), (r, c)), shape=(imgs.size, caps.size))
                   for n, (r, c) in side["positives"].items()},
        graphs=graphs, image_extras={"objects": scenes, "categories": [cats + ["other"]] * imgs.size,
                                     "attributes": [attrs] * imgs.size, "relations": relations,
                                     "object_region": obj_region, "region_category": list(region_cat)},
        source=(f"coco_scenes v{COCO_SCENES_VERSION} (real MS-COCO 2014 captions; scenes from their own parses, "
                f"seed {seed}{changed}); idealised perception of what the captions mention, no real images"),
    )


def scene_statistics(ds: ITMDataset) -> dict[str, float]:
    """What one split of the world holds, for a reader: its size, the objects, relations and regions of an
    image (means), the share of objects outside the named categories, how many of a caption's objects are
    grounded in one region (its ``grounding``; :mod:`itmlib.metrics.grounding` keeps those whose word occurs once), and
    (test split) how many human-verified positives a caption has beyond its
    own image (CxC, ECCV Caption)."""
    objs = ds.image_extras["objects"]
    other = len(ds.image_extras["categories"][0]) - 1
    inst = np.array([sum(n for n, _ in s.values()) for s in objs], np.float64)
    n_other = sum(s[other][0] for s in objs if other in s)
    out = {"images": ds.n_images, "captions": ds.n_captions, "named categories": other,
           "objects per image": float(np.mean([len(s) for s in objs])),
           "instances per image": float(inst.mean()),
           "share of instances outside the named categories (%)": 100 * n_other / max(inst.sum(), 1),
           "relations placing a box per image": float(np.mean([len(r) for r in ds.image_extras["relations"]])),
           "distractor regions per image": float(np.mean(ds.region_counts - np.minimum(inst, ds.regions.shape[1]))),
           "grounded object words per caption": sum(len(g["grounding"]) for g in ds.graphs) / ds.n_captions}
    for name, pos in (ds.positives or {}).items():
        pos = pos.tocoo()
        beyond = pos.row != ds.img_of_caption[pos.col]
        out[f"{name} positive images per caption beyond its own"] = float(beyond.sum()) / ds.n_captions
    return out
