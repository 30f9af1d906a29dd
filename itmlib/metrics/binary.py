"""mAP@R and R-Precision on binary relevance (ECCV Caption; Chun et al., 2022).

For a query with ``R`` positives and ranking ``π`` (``rel_r`` = 1 if the r-th
retrieved item is a positive):

    R-Precision = (1/R) Σ_{r ≤ R} rel_r
    mAP@R       = (1/R) Σ_{r ≤ R} rel_r · P@r,     P@r = (1/r) Σ_{s ≤ r} rel_s

Only queries with at least one positive are evaluated (ECCV Caption: 1,261
image queries and 1,331 caption queries on COCO 5k). Percent.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._ranking import check_inputs, topk_indices

__all__ = ["map_at_r", "r_precision"]


def _per_query(scores: np.ndarray, pos: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    counts = np.diff(pos.indptr)
    q = np.flatnonzero(counts)
    maps, rps = np.empty(q.size), np.empty(q.size)
    for R in np.unique(counts[q]):
        sel = q[counts[q] == R]
        ranked = topk_indices(scores[sel], int(R))
        hit = np.asarray(pos[sel].toarray() != 0)
        rel = np.take_along_axis(hit, ranked, axis=1).astype(float)
        prec = np.cumsum(rel, axis=1) / np.arange(1, R + 1)
        where = np.searchsorted(q, sel)
        maps[where] = (rel * prec).sum(axis=1) / R
        rps[where] = rel.sum(axis=1) / R
    return maps, rps


def _both(sims: np.ndarray, positives, img_of_caption: np.ndarray, t2i_positives=None) -> dict[str, float]:
    sims, _ = check_inputs(sims, img_of_caption)
    pos = sp.csr_matrix(positives)
    back = pos if t2i_positives is None else sp.csr_matrix(t2i_positives)
    for name, p in (("positives", pos), ("t2i_positives", back)):
        if p.shape != sims.shape:
            raise ValueError(f"{name} must have the shape of sims {sims.shape}, got {p.shape}")
    out = {}
    for d, s, p in (("i2t", sims, pos), ("t2i", sims.T, back.T.tocsr())):
        m, r = _per_query(np.ascontiguousarray(s), p)
        out[f"{d}_map_at_r"] = 100.0 * float(m.mean()) if m.size else 0.0
        out[f"{d}_r_precision"] = 100.0 * float(r.mean()) if r.size else 0.0
        out[f"{d}_queries"] = float(m.size)
    return out


def map_at_r(sims: np.ndarray, positives, img_of_caption: np.ndarray, t2i_positives=None) -> dict[str, float]:
    """mAP@R and R-Precision both ways: ``i2t_map_at_r``, ``t2i_map_at_r``, ``i2t_r_precision``, ``t2i_r_precision``,
    and the number of queries each direction evaluated (``i2t_queries``, ``t2i_queries``). Text-to-image reads
    ``t2i_positives`` (same shape) where a benchmark defines its caption queries apart (ECCV Caption's
    ``caption_to_image``), else the transpose of ``positives``."""
    return _both(sims, positives, img_of_caption, t2i_positives)


def r_precision(sims: np.ndarray, positives, img_of_caption: np.ndarray) -> dict[str, float]:
    """R-Precision both ways, percent: ``i2t_r_precision``, ``t2i_r_precision``."""
    out = _both(sims, positives, img_of_caption)
    return {k: v for k, v in out.items() if k.endswith("_r_precision")}
