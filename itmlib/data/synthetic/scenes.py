"""Scenes of the synthetic world: objects with attributes, boxes and relations.

A scene holds 2-6 objects. Each object has a category, a colour, a size and a
pattern, and a box ``(x1, y1, x2, y2)`` in [0, 1] image coordinates (y down).
Actions (riding, holding, chasing, sitting on, looking at) are decided first and
place their object relative to their subject; spatial relations (left of,
right of, above, below, next to) are then read off the final boxes, so every
relation in a scene graph is true of the picture.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .vocab import ACTION_RULES, ACTIONS, CATEGORIES, COLORS, PATTERNS, RELATIONS, SIZES

__all__ = ["WorldConfig", "Scene", "sample_scene", "spatial_relations"]

_REL = {r: i for i, r in enumerate(RELATIONS)}


@dataclass(frozen=True)
class WorldConfig:
    """The generator's knobs. Their defaults are fixed before any claim experiment.

    Scene content
        ``min_objects``/``max_objects``: objects per scene. ``duplicate_prob``:
        chance that a further object repeats a category already in the scene
        (gives counts: "two dogs"). ``action_prob``: chance that an object that
        can act on another does so.
    Detector (region features, imitating bottom-up attention features)
        ``n_regions``: regions per image after padding (36 as BUTD);
        ``feature_dim``; ``detector_noise``: norm of the Gaussian noise added to
        each unit-norm concept signal; ``category_confusion``: chance a region
        carries a sibling category's signal (a dog detected as a cat);
        ``attribute_dropout``: chance each attribute signal is missing;
        ``distractor_regions``: (min, max) extra regions per image, half object
        parts, half background stuff that no caption mentions.
    Captions
        ``caption_detail`` in [0, 1]: how many objects, attributes and
        relations a caption tends to mention; ``generic_word_prob``: the
        shared-vocabulary knob, chance an object is named by its hypernym
        ("an animal"), which makes one caption true of many images.
    Human judgements
        ``human_noise``: std of the noise before quantising relevance to 1-5.
    """

    min_objects: int = 2
    max_objects: int = 6
    duplicate_prob: float = 0.2
    action_prob: float = 0.5
    n_regions: int = 36
    feature_dim: int = 128
    detector_noise: float = 0.8
    category_confusion: float = 0.1
    attribute_dropout: float = 0.25
    distractor_regions: tuple[int, int] = (6, 20)
    caption_detail: float = 0.5
    generic_word_prob: float = 0.15
    human_noise: float = 0.4
    world_seed: int = 20221

    def __post_init__(self) -> None:
        if not (1 <= self.min_objects <= self.max_objects <= 6):
            raise ValueError(f"need 1 <= min_objects <= max_objects <= 6, got {self.min_objects}, {self.max_objects}")
        for name in ("duplicate_prob", "action_prob", "category_confusion", "attribute_dropout",
                     "caption_detail", "generic_word_prob"):
            v = getattr(self, name)
            if not (0.0 <= v <= 1.0):
                raise ValueError(f"{name} must lie in [0, 1], got {v!r}")
        for name in ("detector_noise", "human_noise"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)!r}")
        lo, hi = self.distractor_regions
        if not (0 <= lo <= hi):
            raise ValueError(f"distractor_regions must be (min, max) with 0 <= min <= max, got {self.distractor_regions}")
        if self.n_regions < self.max_objects:
            raise ValueError(f"n_regions ({self.n_regions}) must be >= max_objects ({self.max_objects})")
        if self.feature_dim < 8:
            raise ValueError(f"feature_dim must be >= 8, got {self.feature_dim}")


@dataclass
class Scene:
    """One image's gold scene graph."""

    cat: np.ndarray       # (n,) category index
    color: np.ndarray     # (n,) colour index
    size: np.ndarray      # (n,) 0 small, 1 large
    pattern: np.ndarray   # (n,) 0 plain, 1 striped, 2 spotted
    box: np.ndarray       # (n, 4) float, x1 y1 x2 y2 in [0, 1]
    relations: list[tuple[int, int, int]] = field(default_factory=list)  # (subject, relation index, object)
    background: int = 0   # background colour index for rendering

    @property
    def n(self) -> int:
        return int(self.cat.shape[0])

    def names(self) -> list[str]:
        return [CATEGORIES[c].name for c in self.cat]

    def to_dict(self) -> dict:
        return {
            "objects": [{"category": CATEGORIES[c].name, "color": COLORS[k], "size": SIZES[s],
                         "pattern": PATTERNS[p], "box": [round(float(x), 4) for x in b]}
                        for c, k, s, p, b in zip(self.cat, self.color, self.size, self.pattern, self.box)],
            "relations": [[s, RELATIONS[r], o] for s, r, o in self.relations],
        }


def _wh(rng: np.random.Generator, size: int) -> tuple[float, float]:
    lo, hi = (0.12, 0.2) if size == 0 else (0.24, 0.38)
    w = rng.uniform(lo, hi)
    h = float(np.clip(w * rng.uniform(0.75, 1.33), 0.1, 0.45))
    return w, h


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _clip_box(cx: float, cy: float, w: float, h: float) -> np.ndarray:
    cx = min(max(cx, w / 2), 1 - w / 2)
    cy = min(max(cy, h / 2), 1 - h / 2)
    return np.array([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2])


def spatial_relations(box: np.ndarray, near: float = 0.08) -> list[tuple[int, int, int]]:
    """Spatial relations of every ordered pair, read off the boxes.

    For each pair exactly one of left_of / right_of / above / below holds
    (by the larger of the horizontal and vertical centre offsets), plus
    next_to when the gap between the boxes is below ``near``.
    """
    rels = []
    cx = (box[:, 0] + box[:, 2]) / 2
    cy = (box[:, 1] + box[:, 3]) / 2
    n = box.shape[0]
    for a in range(n):
        for b in range(n):
            if a == b:
                continue
            dx, dy = cx[b] - cx[a], cy[b] - cy[a]
            if abs(dx) >= abs(dy):
                rels.append((a, _REL["left_of"] if dx > 0 else _REL["right_of"], b))
            else:
                rels.append((a, _REL["above"] if dy > 0 else _REL["below"], b))
            gap = max(0.0, max(box[a, 0], box[b, 0]) - min(box[a, 2], box[b, 2]),
                      max(box[a, 1], box[b, 1]) - min(box[a, 3], box[b, 3]))
            if gap < near:
                rels.append((a, _REL["next_to"], b))
    return rels


def _sample_actions(rng: np.random.Generator, cfg: WorldConfig, names: list[str], size: np.ndarray) -> list[tuple[int, int, int]]:
    """(subject, relation, object) actions: each object takes part in at most one; a ridden or sat-on object grows
    to at least its subject's size (``size`` is updated in place)."""
    n = len(names)
    busy = np.zeros(n, bool)
    actions: list[tuple[int, int, int]] = []
    for s in rng.permutation(n):
        if busy[s] or rng.random() >= cfg.action_prob:
            continue
        options = []
        for act in ACTIONS:
            subj, objs = ACTION_RULES[act]
            if names[s] not in subj:
                continue
            options += [(act, o) for o in range(n) if o != s and not busy[o] and names[o] in objs]
        if not options:
            continue
        act, o = options[int(rng.integers(len(options)))]
        busy[s] = busy[o] = True
        actions.append((int(s), _REL[act], int(o)))
        if act in ("riding", "sitting_on"):
            size[o] = max(size[o], size[s])  # you sit on or ride something at least your size
    return actions


def _place(rng: np.random.Generator, size: int, box: np.ndarray, placed: np.ndarray,
           action: tuple[int, int] | None) -> np.ndarray:
    """One object's box: relative to its subject's box ``box[s]`` when it is an action's object (``action`` =
    (s, relation)), else by rejection sampling against the boxes already ``placed`` (25 tries, least overlap)."""
    w, h = _wh(rng, size)
    if action is not None:
        s, r = action
        sb = box[s]
        scx, scy = (sb[0] + sb[2]) / 2, (sb[1] + sb[3]) / 2
        act = RELATIONS[r]
        side = 1 if rng.random() < 0.5 else -1
        if act in ("riding", "sitting_on"):
            return _clip_box(scx, sb[3] + h / 2 - 0.35 * (sb[3] - sb[1]), w, h)
        if act == "holding":
            return _clip_box(scx + side * ((sb[2] - sb[0]) / 2 + w / 2 - 0.02), scy, w, h)
        if act == "chasing":
            return _clip_box(scx + side * ((sb[2] - sb[0]) / 2 + w / 2 + rng.uniform(0.03, 0.12)),
                             scy + rng.uniform(-0.05, 0.05), w, h)
        return _clip_box(rng.uniform(0, 1), rng.uniform(0, 1), w, h)   # looking_at: anywhere
    best, best_ov = None, np.inf
    for _ in range(25):
        cand = _clip_box(rng.uniform(0, 1), rng.uniform(0, 1), w, h)
        ov = max((_iou(cand, box[j]) for j in np.flatnonzero(placed)), default=0.0)
        if ov < best_ov:
            best, best_ov = cand, ov
        if ov < 0.05:
            break
    return best


def sample_scene(rng: np.random.Generator, cfg: WorldConfig, cat_p: np.ndarray | None = None,
                 color_p: np.ndarray | None = None) -> Scene:
    """Draw one scene: categories, attributes, actions, then boxes.

    ``cat_p``/``color_p``: probabilities over :data:`CATEGORIES`/:data:`COLORS` (a news topic's
    visual motifs, :mod:`itmlib.data.synthetic.news`); ``None`` draws uniformly (the literal world)."""
    n = int(rng.integers(cfg.min_objects, cfg.max_objects + 1))
    cats: list[int] = []
    for k in range(n):
        if k and rng.random() < cfg.duplicate_prob:
            cats.append(cats[int(rng.integers(len(cats)))])
        else:
            cats.append(int(rng.integers(len(CATEGORIES))) if cat_p is None else int(rng.choice(len(CATEGORIES), p=cat_p)))
    cat = np.array(cats)
    color = rng.integers(len(COLORS), size=n) if color_p is None else rng.choice(len(COLORS), size=n, p=color_p)
    size = rng.integers(len(SIZES), size=n)
    pattern = rng.choice(len(PATTERNS), size=n, p=[0.6, 0.2, 0.2])
    names = [CATEGORIES[c].name for c in cat]

    actions = _sample_actions(rng, cfg, names, size)   # may grow an object to its rider's size

    # placement: action subjects and free objects by rejection sampling, action objects relative to subjects
    box = np.zeros((n, 4))
    placed = np.zeros(n, bool)
    obj_of = {o: (s, r) for s, r, o in actions}
    order = [k for k in range(n) if k not in obj_of] + [k for k in range(n) if k in obj_of]
    for k in order:
        box[k] = _place(rng, int(size[k]), box, placed, obj_of.get(k))
        placed[k] = True
    relations = spatial_relations(box) + actions
    return Scene(cat=cat, color=color, size=size, pattern=pattern, box=box.astype(np.float32),
                 relations=relations, background=int(rng.integers(6)))
