"""Input checks and tie-aware top-K for the ranking metrics.

Ranking convention, used by every metric here: items are ordered by score
descending, ties broken by gallery index ascending (a stable sort). Counting
the rank of a ground-truth item is *pessimistic* against ties with non-GT
items: a non-GT item with the same score counts as ranked ahead.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
import scipy.sparse as sp

__all__ = ["check_inputs", "check_relevance", "check_ks", "topk_indices", "topk_values", "query_chunks"]


def check_inputs(sims: np.ndarray, img_of_caption: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Validate an (n_images, n_captions) score matrix and the caption -> image index."""
    if hasattr(sims, "detach"):
        sims = sims.detach().cpu().numpy()
    sims = np.asarray(sims)
    if sims.ndim != 2:
        raise ValueError(f"sims must be a 2-D (n_images, n_captions) matrix, got shape {sims.shape}")
    if not np.issubdtype(sims.dtype, np.number) or np.issubdtype(sims.dtype, np.complexfloating):
        raise ValueError(f"sims must be real numbers, got dtype {sims.dtype}")
    if not np.isfinite(sims).all():
        raise ValueError(f"sims contains {int((~np.isfinite(sims)).sum())} NaN/inf scores")
    ioc = np.asarray(img_of_caption)
    if ioc.ndim != 1 or ioc.shape[0] != sims.shape[1]:
        raise ValueError(f"img_of_caption must have one entry per caption ({sims.shape[1]}), got shape {ioc.shape}")
    if not np.issubdtype(ioc.dtype, np.integer):
        raise ValueError(f"img_of_caption must be integers, got dtype {ioc.dtype}")
    if ioc.size and (ioc.min() < 0 or ioc.max() >= sims.shape[0]):
        raise ValueError(f"img_of_caption has image indices outside [0, {sims.shape[0]}): "
                         f"min {ioc.min()}, max {ioc.max()}")
    return sims, ioc.astype(np.int64)


def check_relevance(relevance: np.ndarray | sp.spmatrix, shape: tuple[int, int], name: str = "relevance"
                    ) -> np.ndarray:
    """Dense float64 (n_images, n_captions) relevance, finite and >= 0."""
    rel = relevance.toarray() if sp.issparse(relevance) else np.asarray(relevance)
    if rel.shape != shape:
        raise ValueError(f"{name} must have the shape of sims {shape}, got {rel.shape}")
    rel = rel.astype(np.float64)
    if not np.isfinite(rel).all():
        raise ValueError(f"{name} contains NaN/inf")
    if (rel < 0).any():
        raise ValueError(f"{name} must be >= 0")
    return rel


def check_ks(ks: Iterable[int] | int, gallery: int, what: str) -> tuple[int, ...]:
    ks = (ks,) if isinstance(ks, (int, np.integer)) else tuple(ks)
    if not ks:
        raise ValueError("ks must name at least one cut-off")
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"cut-off K must be a positive integer, got {k!r}")
        if k > gallery:
            raise ValueError(f"K={k} is larger than the {what} gallery ({gallery} items)")
    return tuple(int(k) for k in ks)


def topk_indices(scores: np.ndarray, k: int) -> np.ndarray:
    """Row-wise top-``k`` column indices, ordered by score desc then index asc.

    Exact under ties (unlike a plain argpartition) and O(n) per row plus a sort of k.
    """
    n = scores.shape[1]
    if k >= n:
        return np.argsort(-scores, axis=1, kind="stable")
    kth = -np.partition(-scores, k - 1, axis=1)[:, k - 1: k]  # k-th largest value per row
    above = scores > kth
    need = k - above.sum(axis=1, keepdims=True)
    equal = scores == kth
    chosen = above | (equal & (np.cumsum(equal, axis=1) <= need))
    rows, cols = np.nonzero(chosen)
    cols = cols.reshape(scores.shape[0], k)  # exactly k per row, in index order
    vals = np.take_along_axis(scores, cols, axis=1)
    order = np.argsort(-vals, axis=1, kind="stable")
    return np.take_along_axis(cols, order, axis=1)


def topk_values(a: np.ndarray, k: int) -> np.ndarray:
    """Row-wise ``k`` largest values, descending (a partition, then a sort of k columns)."""
    if k >= a.shape[1]:
        return -np.sort(-a, axis=1)
    part = -np.partition(-a, k - 1, axis=1)[:, :k]
    return -np.sort(-part, axis=1)


def query_chunks(n: int, gallery: int, budget: int = 2**24) -> Iterable[slice]:
    """Slices over ``n`` queries so that a chunk x gallery block stays under ``budget`` cells."""
    step = max(1, budget // max(1, gallery))
    for s in range(0, n, step):
        yield slice(s, min(n, s + step))
