"""Shared n-gram bookkeeping: whitespace tokens -> sparse term-frequency matrices."""

from __future__ import annotations

from collections import Counter
from typing import Sequence

import numpy as np
import scipy.sparse as sp

__all__ = ["NgramTable"]


class NgramTable:
    """Every distinct n-gram (n = 1..max_n) of a set of sentences, with an id and an order.

    ``tf(sentences)`` gives the (len(sentences) x vocabulary) int32 CSR matrix of
    n-gram counts, tokenising with ``str.split()`` exactly as pycocoevalcap's
    ``precook`` does (no lower-casing, punctuation kept). Identical sentences
    are counted once and shared.
    """

    def __init__(self, max_n: int = 4) -> None:
        self.max_n = max_n
        self.index: dict[tuple[str, ...], int] = {}
        self.order: list[int] = []  # n - 1 of each id
        self._rows: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def __len__(self) -> int:
        return len(self.index)

    def _row(self, s: str) -> tuple[np.ndarray, np.ndarray]:
        row = self._rows.get(s)
        if row is None:
            words = s.split()
            counts: Counter[tuple[str, ...]] = Counter()
            for k in range(1, self.max_n + 1):
                counts.update(tuple(words[i:i + k]) for i in range(len(words) - k + 1))
            ids = np.empty(len(counts), np.int64)
            tfs = np.empty(len(counts), np.int32)
            index, order = self.index, self.order
            for j, (g, c) in enumerate(counts.items()):
                v = index.get(g)
                if v is None:
                    v = index[g] = len(order)
                    order.append(len(g) - 1)
                ids[j] = v
                tfs[j] = c
            row = (ids, tfs)
            self._rows[s] = row
        return row

    def tf(self, sentences: Sequence[str]) -> sp.csr_matrix:
        rows = [self._row(s) for s in sentences]
        indptr = np.zeros(len(rows) + 1, np.int64)
        indptr[1:] = np.cumsum([r[0].size for r in rows])
        idx = np.concatenate([r[0] for r in rows]) if rows else np.zeros(0, np.int64)
        val = np.concatenate([r[1] for r in rows]) if rows else np.zeros(0, np.int32)
        return sp.csr_matrix((val, idx, indptr), shape=(len(rows), 0 if not rows else max(len(self), 1)))

    def widen(self, m: sp.csr_matrix) -> sp.csr_matrix:
        """``m`` with as many columns as the vocabulary has now."""
        return sp.csr_matrix((m.data, m.indices, m.indptr), shape=(m.shape[0], len(self)))

    def orders(self) -> np.ndarray:
        return np.asarray(self.order, np.int64)
