"""NDCG@k with graded caption relevance, as TERAN evaluates (Messina et al., 2021).

For a query with relevance ``rel`` over the gallery and ranking ``π``:

    DCG@k  = Σ_{r=1..k} gain(rel_{π(r)}) / log2(r + 1)
    NDCG@k = DCG@k / IDCG@k,     IDCG = DCG of the relevance-sorted gallery

``gain="exp"`` is TERAN's ``2^rel - 1``; ``gain="linear"`` is ``rel`` (what
torchmetrics' ``retrieval_normalized_dcg`` uses). A query whose IDCG is 0 gets
NDCG 0, and, like TERAN's ``dcg.py`` (``np.mean(x[x != 0])``), queries with
NDCG exactly 0 are left out of the mean unless ``exclude_zero=False``.
Returned in percent like every metric of :mod:`itmlib.metrics` (TERAN prints fractions:
0.741 here is 74.1), keys ``i2t_ndcg{k}`` and ``t2i_ndcg{k}``.
"""

from __future__ import annotations

import numpy as np

from ..config import check_choice
from ._ranking import check_inputs, check_ks, check_relevance, query_chunks, topk_indices, topk_values

__all__ = ["ndcg"]


def ndcg(sims: np.ndarray, relevance: np.ndarray, img_of_caption: np.ndarray, k: int = 25, gain: str = "exp",
         *, exclude_zero: bool = True) -> dict[str, float]:
    """NDCG@k in percent for i2t (rows of ``relevance``) and t2i (columns): ``i2t_ndcg{k}``, ``t2i_ndcg{k}``."""
    sims, ioc = check_inputs(sims, img_of_caption)
    rel = check_relevance(relevance, sims.shape)
    gain = check_choice("gain", gain, ("exp", "linear"))
    out = {}
    for d, n_q, n_g in (("i2t", sims.shape[0], sims.shape[1]), ("t2i", sims.shape[1], sims.shape[0])):
        k = check_ks(k, n_g, d)[0]
        disc = 1.0 / np.log2(np.arange(2, k + 2))
        vals = []
        for sl in query_chunks(n_q, n_g):
            s = sims[sl] if d == "i2t" else sims[:, sl].T
            r = rel[sl] if d == "i2t" else rel[:, sl].T
            g = np.exp2(r) - 1.0 if gain == "exp" else r
            got = np.take_along_axis(g, topk_indices(s, k), axis=1) @ disc
            ideal = topk_values(g, k) @ disc
            with np.errstate(invalid="ignore", divide="ignore"):
                vals.append(np.where(ideal > 0, got / ideal, 0.0))
        v = np.concatenate(vals)
        if exclude_zero:
            v = v[v != 0]
        out[f"{d}_ndcg{k}"] = 100.0 * float(v.mean()) if v.size else 0.0
    return out
