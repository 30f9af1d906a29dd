"""What a costly cross-modal encoder sees, chosen by a cheap score (SSAMT, sec. 2.4 and inference).

A cross-modal encoder scores one (image, caption) pair per forward pass, so it cannot see every pair:

- training: each positive pair gets one negative caption and one negative image, drawn at random among the
  ``pool`` hardest by the cheap intra score s_intra (:func:`intra_negatives`);
- test: each query's top ``k`` by s_intra are re-scored and ranked above the rest (:func:`rerank`), so the
  costly score can only reorder each query's top ``k``.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch

__all__ = ["intra_negatives", "rerank"]


def intra_negatives(s: torch.Tensor, same: torch.Tensor, pool: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(negative caption of each image's row, negative image of each caption's column) of a batch, each drawn
    uniformly among the ``pool`` highest ``s`` (B, B) scores that are not positives (``same``); None when
    some row has no negative (every caption of the batch describes one image). Draws use torch's RNG."""
    B = s.shape[0]
    k = min(pool, B - int(same.sum(1).max()))
    if k < 1:
        return None
    s = s.masked_fill(same, -np.inf)
    pick = torch.randint(k, (2, B), device=s.device)
    neg_cap = s.topk(k, dim=1).indices.gather(1, pick[0][:, None])[:, 0].cpu().numpy()     # a sentence of another image
    neg_img = s.topk(k, dim=0).indices.gather(0, pick[1][None, :])[0].cpu().numpy()        # an image of another sentence
    return neg_cap, neg_img


def rerank(s: np.ndarray, k: int, score: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """``s`` (n_images, n_captions) with each image's and each caption's top ``k`` pairs replaced by
    ``s + score(images, captions)`` and lifted above every other pair (so they rank first, in the new order)."""
    cand = np.zeros(s.shape, dtype=bool)
    ki, kc = min(k, s.shape[1]), min(k, s.shape[0])
    np.put_along_axis(cand, np.argpartition(-s, ki - 1, axis=1)[:, :ki], True, axis=1)
    np.put_along_axis(cand, np.argpartition(-s, kc - 1, axis=0)[:kc], True, axis=0)
    im, cp = cand.nonzero()
    combined = s[im, cp] + score(im, cp)
    out = s.copy()
    out[im, cp] = combined + (2 * np.abs(s).max() + np.abs(combined - s[im, cp]).max() + 1)
    return out
