"""Evaluation protocols: COCO 5k (the whole matrix) and COCO 1k (mean over five folds)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import scipy.sparse as sp

from ._ranking import check_inputs

__all__ = ["fold_slices", "coco_1k"]


def fold_slices(n_images: int, n_folds: int = 5) -> list[slice]:
    """Image slices of equal folds (COCO: 5 x 1,000 of the 5k test images)."""
    if n_images % n_folds:
        raise ValueError(f"{n_images} images do not split into {n_folds} equal folds")
    f = n_images // n_folds
    return [slice(k * f, (k + 1) * f) for k in range(n_folds)]


def coco_1k(metric: Callable[..., dict[str, float]], sims: np.ndarray, img_of_caption: np.ndarray,
            *matrices: Any, n_folds: int = 5, **kwargs: Any) -> dict[str, float]:
    """Apply ``metric(sims_fold, *matrices_fold, img_of_caption_fold, **kwargs)`` to each fold, average.

    Fold ``k`` holds images ``[1000k, 1000(k+1))`` and their captions (captions
    must be grouped by image, as in the Karpathy split). ``matrices`` are
    further (n_images, n_captions) arrays (relevance, positives) sliced alike.
    """
    sims, ioc = check_inputs(sims, img_of_caption)
    results = []
    for sl in fold_slices(sims.shape[0], n_folds):
        caps = np.flatnonzero((ioc >= sl.start) & (ioc < sl.stop))
        if caps.size and not np.array_equal(caps, np.arange(caps[0], caps[-1] + 1)):
            raise ValueError("coco_1k needs captions grouped by image (image-major order)")
        mats = [(m.tocsr()[sl][:, caps] if sp.issparse(m) else np.asarray(m)[sl][:, caps]) for m in matrices]
        results.append(metric(sims[sl][:, caps], *mats, ioc[caps] - sl.start, **kwargs))
    return {k: float(np.mean([r[k] for r in results])) for k in results[0]}
