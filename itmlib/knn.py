"""Nearest neighbours of a set of vectors: exact (chunked numpy) or approximate (faiss HNSW).

``knn(x, k)`` returns the (n, k) indices and distances of each row's ``k`` nearest other
rows (itself excluded), closest first. ``metric`` ``"l2"`` ranks by Euclidean distance (what
the public code of Thomas & Kovashka does over raw Doc2Vec vectors, with nmslib's HNSW),
``"cosine"`` by cosine similarity (distance 1 − cos). ``method="hnsw"`` uses faiss's
``IndexHNSWFlat`` (M = 32, efSearch = 2k, single-threaded, seeded insertion order); ``"auto"``
is exact up to ``EXACT_UP_TO`` rows. ``benchmarks/bench_knn.py`` (k = 200, 200-d, 2-core CPU
with another job running): 8,000 rows exact 2.9 s vs HNSW 4.8 s; 30,000 rows 29.7 s vs 15.8 s,
HNSW recall@200 0.98-1.00 - the crossover is near 15,000 (medium's 8,000 training texts stay
exact; full's 29,000 and COCO's 25,000 test captions go to HNSW). Arrays in, arrays out.
"""

from __future__ import annotations

import numpy as np

__all__ = ["knn", "EXACT_UP_TO", "METHODS"]

#: up to this many rows exact search wins (benchmarks/bench_knn.py, 2-core CPU)
EXACT_UP_TO = 15_000
METHODS = ("auto", "exact", "hnsw")


def _prep(x: np.ndarray, metric: str) -> np.ndarray:
    x = np.ascontiguousarray(x, dtype=np.float32)
    if x.ndim != 2 or not np.isfinite(x).all():
        raise ValueError(f"knn needs a finite (n, d) array, got shape {x.shape}")
    if metric == "cosine":
        x = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    elif metric != "l2":
        raise ValueError(f"metric must be 'l2' or 'cosine', got {metric!r}")
    return x


def _exact(x: np.ndarray, k: int, metric: str, chunk: int = 2048) -> tuple[np.ndarray, np.ndarray]:
    n = x.shape[0]
    sq = (x * x).sum(1)
    idx = np.empty((n, k), np.int64)
    dist = np.empty((n, k), np.float32)
    for s in range(0, n, chunk):
        e = min(n, s + chunk)
        d = sq[s:e, None] + sq[None, :] - 2 * x[s:e] @ x.T if metric == "l2" else 1 - x[s:e] @ x.T
        d[np.arange(e - s), np.arange(s, e)] = np.inf                  # never one's own neighbour
        part = np.argpartition(d, k - 1, axis=1)[:, :k]
        pd_ = np.take_along_axis(d, part, 1)
        o = np.lexsort((part, pd_), axis=1)                            # by distance, ties by index
        idx[s:e] = np.take_along_axis(part, o, 1)
        dist[s:e] = np.take_along_axis(pd_, o, 1)
    if metric == "l2":
        dist = np.sqrt(np.maximum(dist, 0))
    return idx, dist


def _hnsw(x: np.ndarray, k: int, metric: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    try:
        import faiss
    except ImportError as e:  # pragma: no cover - faiss-cpu is a dependency
        raise ImportError("method='hnsw' needs faiss-cpu (pip install faiss-cpu)") from e
    faiss.omp_set_num_threads(1)  # single thread: results do not depend on the machine's scheduling
    index = faiss.IndexHNSWFlat(x.shape[1], 32, faiss.METRIC_L2 if metric == "l2" else faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efSearch = max(64, 2 * (k + 1))
    rng = np.random.default_rng(seed)
    order = rng.permutation(x.shape[0])                                   # seeded insertion order
    index.add(x[order])
    d, i = index.search(x, k + 1)
    i = np.where(i >= 0, order[np.maximum(i, 0)], -1)
    self_ = i == np.arange(x.shape[0])[:, None]
    keep = np.argsort(self_, axis=1, kind="stable")[:, :k]                # drop self wherever it landed
    i, d = np.take_along_axis(i, keep, 1), np.take_along_axis(d, keep, 1)
    d = np.sqrt(np.maximum(d, 0)) if metric == "l2" else 1 - d
    return i.astype(np.int64), d.astype(np.float32)


def knn(x: np.ndarray, k: int, *, metric: str = "l2", method: str = "auto", seed: int = 0
        ) -> tuple[np.ndarray, np.ndarray]:
    """(indices (n, k), distances (n, k)) of each row's ``k`` nearest other rows, closest first."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    x = _prep(x, metric)
    n = x.shape[0]
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k < n:
        raise ValueError(f"k must be an integer in [1, n - 1] = [1, {n - 1}], got {k!r}")
    if method == "hnsw" or (method == "auto" and n > EXACT_UP_TO):
        return _hnsw(x, int(k), metric, seed)
    return _exact(x, int(k), metric)
