"""The evaluation of Thomas & Kovashka (ECCV 2020), sec. 4.3: k-way retrieval accuracy and
neighbourhood preservation. Both take embeddings of *pairs* (row i of the image and text
arrays is pair i), not a score matrix: the task is defined per pair.

**k-way accuracy** (Table 1). For each pair i, the query's partner is put among k − 1
random distractors of the other modality, drawn from pairs of *other images* (``groups``:
the image of each pair, so another caption of the query's image is never a distractor on
the literal world); the query is right when its partner scores strictly highest (cosine).
Mean over pairs and over ``n_draws`` seeded draws, in percent:

    acc_k = 100 · mean_{draw, i} 1[ s(q_i, t_i) > max_{j ∈ D_i} s(q_i, t_j) ]

The paper uses 5-way on Politics/GoodNews and 100-way on COCO (20-way on ConcCap).

**Neighbourhood preservation** (Table 3). For each sample s, Ψ_Ω(s) are its k nearest
neighbours in the reference space Ω (Doc2Vec vectors of the texts; an image's reference is
its paired text's vector) and Ψ_M(s) its k nearest in the learned space M (cosine); in
percent, ``100 · mean_s |Ψ_M(s) ∩ Ψ_Ω(s)| / |Ψ_Ω(s)|``. The paper uses k = 200. Chance is
k / (n − 1).

**Neighbour distance** (the measured form of the paper's Fig. 5, which shows the Ω-neighbour pairs whose
distance in M shrank most against the baseline): the mean squared distance in M of each sample to its
k nearest in Ω, over the mean squared distance between two distinct samples, in percent
(100: Ω-neighbours sit no closer than random pairs; lower: closer). Ours against a baseline's on the
same seed is the paired comparison the figure's ratio d_ours / d_baseline stands for.
"""

from __future__ import annotations

import numpy as np

from ..knn import knn

__all__ = ["k_way_accuracy", "neighborhood_preservation", "neighbor_distance"]


def _distractors(rng: np.random.Generator, groups: np.ndarray, k: int) -> np.ndarray:
    """(n, k − 1) indices j with groups[j] != groups[i], drawn without replacement (k − 1 distinct pairs per
    row, as the public code's ``random.sample``), uniform over such sets."""
    n = groups.shape[0]
    own = np.arange(n)[:, None]
    idx = rng.integers(n, size=(n, k - 1))
    bad = (groups[idx] == groups[own]) | _repeats(idx)
    while bad.any():
        idx[bad] = rng.integers(n, size=int(bad.sum()))
        bad = (groups[idx] == groups[own]) | _repeats(idx)
    return idx


def _repeats(idx: np.ndarray) -> np.ndarray:
    """True at each entry that repeats an earlier entry of its row."""
    order = np.argsort(idx, axis=1, kind="stable")
    s = np.take_along_axis(idx, order, 1)
    dup = np.zeros(s.shape, bool)
    dup[:, 1:] = s[:, 1:] == s[:, :-1]
    out = np.zeros_like(dup)
    np.put_along_axis(out, order, dup, 1)
    return out


def k_way_accuracy(img_emb: np.ndarray, txt_emb: np.ndarray, k: int, *, groups: np.ndarray | None = None,
                   n_draws: int = 5, seed: int = 0, chunk: int = 2048) -> dict[str, float]:
    """``{"i2t_acc<k>", "t2i_acc<k>"}`` in percent: a pair's partner beats k − 1 random distractors.

    ``img_emb``, ``txt_emb``: (n, d) embeddings of the n pairs (L2-normalised: scores are dot
    products). ``groups``: (n,) image id of each pair (default: every pair its own image)."""
    x = np.asarray(img_emb, dtype=np.float32)
    y = np.asarray(txt_emb, dtype=np.float32)
    if x.ndim != 2 or x.shape != y.shape:
        raise ValueError(f"img_emb and txt_emb must both be (n, d) with equal shapes, got {x.shape} and {y.shape}")
    n = x.shape[0]
    g = np.arange(n) if groups is None else np.asarray(groups)
    if g.shape != (n,):
        raise ValueError(f"groups must have shape ({n},), got {g.shape}")
    n_groups = np.unique(g).size
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 2 <= k <= n_groups:
        raise ValueError(f"k must be an integer in [2, {n_groups}] (the number of distinct images), got {k!r}")
    if n_draws < 1:
        raise ValueError(f"n_draws must be >= 1, got {n_draws}")
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), int(k), 0x6B77]))
    pos = (x * y).sum(1)                                                  # s(q_i, t_i)
    hits = {"i2t": 0, "t2i": 0}
    for _ in range(n_draws):
        for d, (q, t) in {"i2t": (x, y), "t2i": (y, x)}.items():
            idx = _distractors(rng, g, k)
            for s in range(0, n, chunk):
                neg = np.einsum("nd,nkd->nk", q[s:s + chunk], t[idx[s:s + chunk]])
                hits[d] += int((pos[s:s + chunk] > neg.max(1)).sum())
    return {f"{d}_acc{k}": 100.0 * h / (n * n_draws) for d, h in hits.items()}


def neighborhood_preservation(embeddings: np.ndarray, reference: np.ndarray, k: int = 200, *,
                              reference_metric: str = "l2", method: str = "auto") -> float:
    """Percent of each sample's ``k`` nearest neighbours in ``reference`` (Ω; L2 over raw Doc2Vec
    vectors by default, as the neighbours are found for training) that are also among its ``k``
    nearest in ``embeddings`` (M, cosine); mean over samples."""
    e = np.asarray(embeddings)
    r = np.asarray(reference)
    if e.ndim != 2 or r.ndim != 2 or e.shape[0] != r.shape[0]:
        raise ValueError(f"embeddings and reference must be (n, d) and (n, d') with equal n, got {e.shape}, {r.shape}")
    m, _ = knn(e, k, metric="cosine", method=method)
    o, _ = knn(r, k, metric=reference_metric, method=method)
    n = e.shape[0]
    row = np.arange(n, dtype=np.int64)[:, None] * n                      # (row, neighbour) as one integer
    both = np.isin(row + m, row + o)                                      # |Ψ_M(s) ∩ Ψ_Ω(s)|, all rows at once
    return float(100.0 * both.sum() / (n * k))


def neighbor_distance(embeddings: np.ndarray, reference: np.ndarray, k: int = 10, *, reference_metric: str = "l2") -> float:
    """``100 · mean_{s, t ∈ Ψ_Ω(s)} ||e_s − e_t||² / mean_{s ≠ t} ||e_s − e_t||²`` (module docstring): how close
    M keeps each sample's ``k`` Ω-neighbours, relative to a random pair. The denominator is exact:
    ``mean_{s ≠ t} ||e_s − e_t||² = 2n / (n − 1) · (mean_s ||e_s||² − ||mean_s e_s||²)``."""
    e = np.asarray(embeddings, dtype=np.float64)
    r = np.asarray(reference)
    if e.ndim != 2 or r.ndim != 2 or e.shape[0] != r.shape[0] or e.shape[0] < 2:
        raise ValueError(f"embeddings and reference must be (n, d) and (n, d') with equal n >= 2, got {e.shape}, {r.shape}")
    n = e.shape[0]
    o, _ = knn(r, min(k, n - 1), metric=reference_metric)
    near = ((e[:, None, :] - e[o]) ** 2).sum(-1).mean()
    spread = 2 * n / (n - 1) * ((e ** 2).sum(1).mean() - (e.mean(0) ** 2).sum())
    return float(100.0 * near / spread)
