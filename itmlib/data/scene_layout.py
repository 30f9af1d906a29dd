"""Boxes placed by what captions say: a relation between two objects ("a cat *on* a table") moves the subject's
box next to the object's, by the predicate's class. The real-language world (:mod:`itmlib.data.coco_scenes`)
seeds its boxes at random and then applies its images' relations."""

from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["PLACEMENT", "relations_of", "place_boxes"]

#: a relation's predicate -> where its subject's box goes relative to its object's (by any word of the predicate,
#: first class that matches); any other predicate ("holding", "with", "near") puts it beside
PLACEMENT = {"on": {"on", "onto", "top", "above", "over", "atop", "ride", "riding", "sit", "sitting", "stand",
                    "standing", "perch", "perched", "lay", "laying", "lie", "lying"},
             "under": {"under", "below", "beneath", "underneath"},
             "in": {"in", "inside", "within", "into"}}


def relations_of(caption_tuples: Sequence[Sequence[tuple[str, ...]]], cat_index: dict[str, int],
                 other: int) -> list[tuple[int, str, int]]:
    """One image's spatial relations from its captions' tuples: (subject category, placement class, object
    category) in order of first mention, once each, between two different named categories (never "other")."""
    out: dict[tuple[int, int], str] = {}
    for tuples in caption_tuples:
        for t in tuples:
            if len(t) != 3:
                continue
            a, b = cat_index.get(t[0], other), cat_index.get(t[2], other)
            if a == b or other in (a, b) or (a, b) in out:
                continue
            words = set(t[1].split())
            out[(a, b)] = next((k for k, v in PLACEMENT.items() if words & v), "beside")
    return [(a, k, b) for (a, b), k in out.items()]


def place_boxes(boxes: np.ndarray, first: dict[int, int], relations: Sequence[tuple[int, str, int]]) -> None:
    """Move, in place, the first box of each relation's subject (``first``: category -> row of ``boxes``,
    x1 y1 x2 y2 in [0, 1], y down) next to its object's: "on" its top (overlapping a quarter of the object's
    height), "under" its bottom, "in" its middle at half its size, "beside" its right (or left, where no room).
    A subject moves once, by its first relation; the box keeps its size and stays inside the image."""
    moved: set[int] = set()
    for a, kind, b in relations:
        if a in moved or a not in first or b not in first:
            continue
        s, o = boxes[first[a]], boxes[first[b]]
        w, h = s[2] - s[0], s[3] - s[1]
        ow, oh = o[2] - o[0], o[3] - o[1]
        cx, cy = (o[0] + o[2]) / 2, (o[1] + o[3]) / 2
        if kind == "in":
            w, h = ow / 2, oh / 2
            x1, y1 = cx - w / 2, cy - h / 2
        elif kind in ("on", "under"):
            x1 = cx - w / 2
            y1 = o[1] + oh / 4 - h if kind == "on" else o[3] - oh / 4
        else:
            x1 = o[2] if o[2] + w <= 1 else o[0] - w
            y1 = cy - h / 2
        x1, y1 = float(np.clip(x1, 0, 1 - w)), float(np.clip(y1, 0, 1 - h))
        boxes[first[a]] = [x1, y1, x1 + w, y1 + h]
        moved.add(a)
