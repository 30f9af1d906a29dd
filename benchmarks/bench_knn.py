"""Exact vs approximate (faiss HNSW) k nearest neighbours of Doc2Vec-sized vectors: where does ANN pay?

    python benchmarks/bench_knn.py [--sizes 8000 30000 100000] [--k 200] [--dim 200]

For each size, times :func:`itmlib.knn.knn` exact and ``method="hnsw"`` on random 200-d vectors
(clustered, like topics) and reports the HNSW recall of the exact neighbours. The crossover sets
``itmlib.knn.EXACT_UP_TO``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from itmlib.knn import knn


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[8000, 30000, 100000])
    ap.add_argument("--k", type=int, default=200)
    ap.add_argument("--dim", type=int, default=200)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    for n in a.sizes:
        centres = rng.standard_normal((50, a.dim))
        x = (centres[rng.integers(50, size=n)] + rng.standard_normal((n, a.dim))).astype(np.float32)
        t0 = time.perf_counter()
        exact, _ = knn(x, a.k, method="exact")
        t1 = time.perf_counter()
        approx, _ = knn(x, a.k, method="hnsw")
        t2 = time.perf_counter()
        sample = rng.choice(n, size=min(n, 2000), replace=False)
        recall = np.mean([len(set(exact[i]) & set(approx[i])) / a.k for i in sample])
        print(f"n={n:>7}  exact {t1 - t0:7.1f} s   hnsw {t2 - t1:7.1f} s   hnsw recall@{a.k} {recall:.3f}", flush=True)


if __name__ == "__main__":
    main()
