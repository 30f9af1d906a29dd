"""Recall@K for image-text retrieval: the VSE convention R^V and IR recall R.

With ``G_i`` the ground-truth items of query ``i`` and ``Q_ik`` its top-k
retrieved items (Biten et al., WACV 2022, eqs. 1-2):

    R_i@k   = |G_i ∩ Q_ik| / |G_i|          (kind="ir", information retrieval)
    R^V_i@k = 1[G_i ∩ Q_ik ≠ ∅]              (kind="first_hit", VSE++ convention)

Image-to-text queries have five GT captions, so the two differ (IR recall at
K=1 is at most 20); text-to-image queries have one GT image, so they agree.
Reported in percent, averaged over queries; ``rsum`` sums the six R@{1,5,10}.
Ranks are 1-based: ``medr = floor(median(rank))``, ``meanr = mean(rank)`` of
the first GT hit (VSE++). Images without any caption are not i2t queries.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from ..config import check_choice
from ._ranking import check_inputs, check_ks, query_chunks

__all__ = ["retrieval_recall", "gt_ranks_i2t", "gt_ranks_t2i"]


def _gt_table(img_of_caption: np.ndarray, n_images: int) -> np.ndarray:
    """(n_images, max GT) caption indices of each image, -1 padded."""
    counts = np.bincount(img_of_caption, minlength=n_images)
    width = max(1, int(counts.max(initial=0)))
    table = np.full((n_images, width), -1, np.int64)
    order = np.argsort(img_of_caption, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    pos = np.arange(order.size) - np.repeat(starts, counts)
    table[img_of_caption[order], pos] = order
    return table


def gt_ranks_i2t(sims: np.ndarray, img_of_caption: np.ndarray) -> np.ndarray:
    """0-based rank of every GT caption of every image: (n_images, max GT), -1 where padded.

    A GT caption's rank counts the non-GT captions scoring >= it (ties go
    against it) and the GT captions ranked before it (score desc, index asc).
    """
    n_img = sims.shape[0]
    table = _gt_table(img_of_caption, n_img)
    ranks = np.full(table.shape, -1, np.int64)
    width = table.shape[1]
    for sl in query_chunks(n_img, sims.shape[1] * width):
        s = sims[sl]
        t = table[sl]
        valid = t >= 0
        sg = np.where(valid, np.take_along_axis(s, np.maximum(t, 0), axis=1), -np.inf)
        is_gt = np.zeros(s.shape, bool)
        rows = np.nonzero(valid)[0]
        is_gt[rows, t[valid]] = True
        ahead_all = (s[:, None, :] >= sg[:, :, None]).sum(axis=2)  # every item with score >= this GT
        gt_ge = (sg[:, None, :] >= sg[:, :, None]) & valid[:, None, :]
        nongt_ahead = ahead_all - gt_ge.sum(axis=2)
        idx = np.where(valid, t, np.iinfo(np.int64).max)
        gt_before = ((sg[:, None, :] > sg[:, :, None]) | ((sg[:, None, :] == sg[:, :, None]) &
                     (idx[:, None, :] < idx[:, :, None]))) & valid[:, None, :]
        ranks[sl] = np.where(valid, nongt_ahead + gt_before.sum(axis=2), -1)
    return ranks


def gt_ranks_t2i(sims: np.ndarray, img_of_caption: np.ndarray) -> np.ndarray:
    """0-based rank of each caption's GT image (images scoring >= it count ahead)."""
    n_cap = sims.shape[1]
    out = np.empty(n_cap, np.int64)
    for sl in query_chunks(n_cap, sims.shape[0]):
        s = sims[:, sl]
        gt = s[img_of_caption[sl], np.arange(s.shape[1])]
        out[sl] = (s >= gt[None, :]).sum(axis=0) - 1
    return out


def retrieval_recall(sims: np.ndarray, img_of_caption: np.ndarray, ks: Iterable[int] = (1, 5, 10),
                     kind: str = "first_hit", directions: tuple[str, ...] = ("i2t", "t2i")) -> dict[str, float]:
    """Recall@K in percent, plus ``rsum`` and median/mean ranks.

    ``sims``: (n_images, n_captions) scores, higher = closer.
    ``img_of_caption``: image index of every caption.
    Returns ``i2t_r{k}``, ``t2i_r{k}`` for each k, ``rsum`` (over the directions
    computed), ``i2t_medr``, ``i2t_meanr``, ``t2i_medr``, ``t2i_meanr``.
    ``directions`` limits the work (and the K check) to one direction.
    """
    sims, ioc = check_inputs(sims, img_of_caption)
    kind = check_choice("kind", kind, ("first_hit", "ir"))
    directions = tuple(check_choice("direction", d, ("i2t", "t2i")) for d in directions)
    gallery = {"i2t": sims.shape[1], "t2i": sims.shape[0]}
    ks = check_ks(ks, min(gallery[d] for d in directions), "smaller" if len(directions) > 1 else directions[0])
    out: dict[str, float] = {}
    if "i2t" in directions:
        ri = gt_ranks_i2t(sims, ioc)
        ri = ri[(ri >= 0).any(axis=1)]
        first = np.where(ri >= 0, ri, np.iinfo(np.int64).max).min(axis=1)
        n_gt = (ri >= 0).sum(axis=1)
        for k in ks:
            if kind == "first_hit":
                out[f"i2t_r{k}"] = 100.0 * float(np.mean(first < k))
            else:
                out[f"i2t_r{k}"] = 100.0 * float(np.mean(((ri >= 0) & (ri < k)).sum(axis=1) / n_gt))
    if "t2i" in directions:
        rt = gt_ranks_t2i(sims, ioc)
        for k in ks:
            out[f"t2i_r{k}"] = 100.0 * float(np.mean(rt < k))
    out["rsum"] = float(sum(out[f"{d}_r{k}"] for d in directions for k in ks))
    if "i2t" in directions:
        out["i2t_medr"] = float(np.floor(np.median(first + 1)))
        out["i2t_meanr"] = float(np.mean(first + 1))
    if "t2i" in directions:
        out["t2i_medr"] = float(np.floor(np.median(rt + 1)))
        out["t2i_meanr"] = float(np.mean(rt + 1))
    return out
