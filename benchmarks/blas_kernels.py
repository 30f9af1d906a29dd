"""Does notebook 07's COCO caption-neighbour table depend on the CPU's BLAS kernel?

    OPENBLAS_CORETYPE=Haswell python benchmarks/blas_kernels.py --save runs/vec-haswell.npy
    python benchmarks/blas_kernels.py --against runs/vec-haswell.npy          # this CPU's own kernel

Trains notebook 07's Doc2Vec (medium, seed 0, one worker) on its COCO training captions, infers the Karpathy
test captions' vectors and prints the same-image recall at k = 10 under exact and HNSW search, as
:func:`itmlib.papers.neighborhoods.vector_neighbor_recall` counts it, at full precision; with ``--against``,
how far the vectors lie from another run's. Nothing is cached: every run trains its own Doc2Vec (~2 min).
"""

from __future__ import annotations

import argparse
import os

import numpy as np

from itmlib.data import load_dataset
from itmlib.papers import neighborhoods
from itmlib.relevance.doc2vec import doc_vectors, train_doc2vec


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--save", help="write the test captions' vectors here (.npy)")
    ap.add_argument("--against", help="another run's vectors (.npy) to compare with")
    a = ap.parse_args()
    train = load_dataset("coco", "train", scale="medium", seed=0)
    test = load_dataset("coco", "test", scale="medium", seed=0)
    model = train_doc2vec(list(train.captions), neighborhoods.doc2vec_settings("medium", "code"), cache=False)
    vec = doc_vectors(model, test.captions)
    if a.save:
        np.save(a.save, vec)
    print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(the CPU own)')}")
    for method in ("exact", "hnsw"):           # the notebook's ks, so the search is the notebook's
        t = neighborhoods.vector_neighbor_recall(test, vec, method=method).set_index(["positives", "k"])
        print(f"{method}: same-image recall at k = 10: {t.loc[('same image', 10), 'recall']:.3f}")
    if a.against:
        other = np.load(a.against)
        print(f"vectors identical: {np.array_equal(vec, other)}; largest difference {np.abs(vec - other).max():.4g}")


if __name__ == "__main__":
    main()
