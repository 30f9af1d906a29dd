"""Measured word grounding: does a word's best-aligned region show the object the word names?

TERAN (sec. 8.5, Fig. 7) can only show groundings in pictures: real captions
have no word-to-box annotation. In the synthetic world every object noun of a
caption knows its scene object (``graph["grounding"]``) and every scene object
knows its detector region (``image_extras["object_region"]``). So:

    grounding accuracy = share of object words w whose argmax_i cos(v_i, s_w)
                         over the image's regions is the true object's region

A word split into several word-pieces scores each region by the mean cosine of
its pieces. ``iou50`` also counts a region whose box overlaps the true box with
IoU >= 0.5 (a part of the object, say). Chance: one region drawn uniformly
from the image's valid regions (mean of 1/n_regions; for ``iou50`` the share of
regions with IoU >= 0.5). Nouns that occur twice in one caption are skipped
(their object is ambiguous from the text alone).

Two diagnostics say *how* a model misses, where accuracy alone cannot tell "random"
from "systematically elsewhere": ``true_rank``, the mean normalised rank of the true
region among the image's regions (0 = first, 1 = last; a random scorer gives 0.5),
and ``wins_on_objects``, the share of words whose best region is *some* object's
region, beside ``objects_share``, the share of regions that show an object at all
(the rest are the detector's distractor regions): a model whose words prefer
distractor regions grounds below chance.

Which words are scored (the targets: object nouns that occur once in their caption, with their true region) is
TERAN's home's :func:`itmlib.papers.teran.grounding_targets`; this module is the arithmetic on arrays.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from ..data.base import ITMDataset

__all__ = ["word_region_scores", "grounding_accuracy", "box_iou"]


def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of boxes ``a`` (..., 4) and ``b`` (..., 4), [x1, y1, x2, y2], broadcasting."""
    ix = np.clip(np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]), 0, None)
    iy = np.clip(np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]), 0, None)
    inter = ix * iy
    area = lambda x: (x[..., 2] - x[..., 0]) * (x[..., 3] - x[..., 1])  # noqa: E731
    return inter / np.maximum(area(a) + area(b) - inter, 1e-12)


def word_region_scores(regions: torch.Tensor, region_mask: torch.Tensor, words: torch.Tensor,
                       word_index: torch.Tensor, image: int, caption: int, word_pos: int) -> np.ndarray:
    """Mean cosine of a word's pieces with every region of ``image`` (-inf on invalid regions)."""
    pieces = (word_index[caption] == word_pos).nonzero().flatten()
    if len(pieces) == 0:
        raise ValueError(f"word {word_pos} of caption {caption} has no token (truncated?)")
    cos = (words[caption, pieces] @ regions[image].T).mean(0).numpy().astype(np.float64)
    cos[~region_mask[image].numpy()] = -np.inf
    return cos


def grounding_accuracy(regions: torch.Tensor, region_mask: torch.Tensor, words: torch.Tensor,
                       word_index: torch.Tensor, targets: pd.DataFrame, ds: ITMDataset,
                       region_offset: int = 1) -> dict[str, float]:
    """Accuracy, IoU>=0.5 accuracy and their chance levels over ``targets`` (from :func:`grounding_targets`).

    ``regions`` (N_i, offset + R, d) token features with ``region_mask`` True on the
    real regions; ``region_offset`` is how many slots precede region 0 (TERAN: the CLS)."""
    if len(targets) == 0:
        raise ValueError("no grounding targets")
    if ds.boxes is None:
        raise ValueError("grounding needs region boxes")
    hit = np.zeros(len(targets), bool)
    hit_iou = np.zeros(len(targets), bool)
    chance = np.zeros(len(targets))
    chance_iou = np.zeros(len(targets))
    rank = np.zeros(len(targets))
    on_obj = np.zeros(len(targets), bool)
    obj_share = np.zeros(len(targets))
    obj_region = ds.image_extras.get("object_region")
    for n, t in enumerate(targets.itertuples(index=False)):
        cos = word_region_scores(regions, region_mask, words, word_index, t.image, t.caption, t.word_pos)
        pred = int(np.argmax(cos)) - region_offset
        valid = np.isfinite(cos)
        valid_slots = np.nonzero(valid)[0] - region_offset
        boxes = ds.boxes[t.image]
        iou = box_iou(boxes[valid_slots], boxes[t.region][None, :])
        hit[n] = pred == t.region
        hit_iou[n] = box_iou(boxes[pred], boxes[t.region]) >= 0.5
        chance[n] = 1.0 / valid.sum()
        chance_iou[n] = float((iou >= 0.5).mean())
        true_cos = cos[t.region + region_offset]
        rank[n] = (cos[valid] > true_cos).sum() / max(1, valid.sum() - 1)       # regions scored above the true one
        if obj_region is not None:
            objs = set(np.asarray(obj_region[t.image]).tolist())
            on_obj[n] = pred in objs
            obj_share[n] = len(objs & set(valid_slots.tolist())) / valid.sum()
    out = {"accuracy": 100 * hit.mean(), "accuracy_iou50": 100 * hit_iou.mean(),
           "chance": 100 * chance.mean(), "chance_iou50": 100 * chance_iou.mean(), "words": float(len(targets)),
           "true_rank": float(rank.mean())}
    if obj_region is not None:
        out |= {"wins_on_objects": 100 * on_obj.mean(), "objects_share": 100 * obj_share.mean()}
    return out
