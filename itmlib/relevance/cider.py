"""CIDEr-D of every candidate caption against every image's reference set, fast and exact.

Equal to pycocoevalcap's ``Cider`` (which is CIDEr-D) given the same document
frequencies. For a candidate ``c`` and an image with references ``R``:

    CIDEr-D(c, R) = 10/|R| · Σ_{r∈R} 1/4 · Σ_{n=1..4}
                    exp(-(l_c - l_r)² / 2σ²) · Σ_g min(h_g, r_g) · r_g / (‖h‖_n ‖r‖_n)

with ``h_g = tf_c(g) · w_g``, ``r_g = tf_r(g) · w_g``, the idf weight
``w_g = log(D) - log(max(1, df_g))`` over ``D`` documents (one document per
image = its reference set), ``‖·‖_n`` the norm over the n-grams of order n,
σ = 6, and - inherited from the reference code - the "length" ``l`` counting
*bigrams*, not words. Tokens are ``str.split()`` of the input, as ``Cider``
takes them (lower-case or PTB-tokenise beforehand if you want that).

How it is fast: because ``w_g >= 0``, ``min(h_g, r_g) · r_g = w_g² · tf_r ·
Σ_{k>=1} [tf_c >= k][tf_r >= k]``, so the clipped products of all four n-gram
orders, already divided by their norms, are ONE matrix product ``H @ R.T``
over columns (n-gram, k). The few frequent columns ("a", "of a", ...) go
through a dense BLAS product, the long tail through a sparse one; the length
penalty is a lookup on integer length differences; the average over each
image's references is a sparse product. Candidates are processed in chunks,
so memory stays bounded.

``document_frequency``: by default computed from ``refs`` (as pycocoevalcap and
the NCS code do); SAM passes the training subset's frequencies
(:meth:`DocumentFrequency.from_refs` on the training captions).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np
import scipy.sparse as sp
from ..console import bar

from .ngrams import NgramTable

__all__ = ["DocumentFrequency", "CiderDIndex", "cider_d_matrix", "cider_d_pairs"]


@dataclass(frozen=True)
class DocumentFrequency:
    """Document frequencies of n-grams: in how many reference sets (documents) each occurs."""

    counts: Mapping[tuple[str, ...], float]
    n_documents: int

    def __post_init__(self) -> None:
        if self.n_documents < 1:
            raise ValueError(f"n_documents must be >= 1, got {self.n_documents}")
        mx = max(self.counts.values(), default=0)
        if mx > self.n_documents:
            raise ValueError(f"a document frequency ({mx}) exceeds the number of documents ({self.n_documents})")

    @classmethod
    def from_refs(cls, refs: Sequence[Sequence[str]], max_n: int = 4) -> "DocumentFrequency":
        """Count, for every n-gram, the reference sets (images) it occurs in."""
        _check_refs(refs)
        table = NgramTable(max_n)
        flat = [s for group in refs for s in group]
        tf = table.widen(table.tf(flat))
        img = np.repeat(np.arange(len(refs)), [len(g) for g in refs])
        present = sp.csr_matrix((np.ones(tf.nnz), tf.indices, tf.indptr), shape=tf.shape)
        per_img = (sp.csr_matrix((np.ones(len(img)), (img, np.arange(len(img)))),
                                 shape=(len(refs), len(img))) @ present)
        df = np.diff(per_img.tocsc().indptr)  # images containing each n-gram
        inv = {v: g for g, v in table.index.items()}
        return cls({inv[v]: float(d) for v, d in enumerate(df) if d > 0}, len(refs))


def _check_refs(refs: Sequence[Sequence[str]]) -> None:
    if len(refs) == 0:
        raise ValueError("refs is empty: need at least one image's reference captions")
    for i, group in enumerate(refs):
        if isinstance(group, str) or len(group) == 0:
            raise ValueError(f"refs[{i}] must be a non-empty list of reference captions")


def _check_candidates(candidates: Sequence[str]) -> None:
    if isinstance(candidates, str):
        raise ValueError("candidates must be a list of captions, not one string")
    for j, c in enumerate(candidates):
        if not isinstance(c, str):
            raise ValueError(f"candidates[{j}] is not a string: {c!r}")


def _weights(table: NgramTable, df: DocumentFrequency) -> np.ndarray:
    inv = [None] * len(table)
    for g, v in table.index.items():
        inv[v] = g
    counts = np.fromiter((df.counts.get(g, 0.0) for g in inv), np.float64, len(inv))
    return math.log(float(df.n_documents)) - np.log(np.maximum(1.0, counts))


def _expanded(tf: sp.csr_matrix, w: np.ndarray, orders: np.ndarray, max_n: int, side: str,
              kmax: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
    """Threshold-expanded, norm-divided matrix over columns (n-gram v, k): returns (matrix, length)."""
    tf = tf.tocsr()
    rows = np.repeat(np.arange(tf.shape[0]), np.diff(tf.indptr))
    v, t = tf.indices.astype(np.int64), tf.data.astype(np.float64)
    o = orders[v]
    sq = (t * w[v]) ** 2
    norm = np.sqrt(np.bincount(rows * max_n + o, weights=sq, minlength=tf.shape[0] * max_n)).reshape(-1, max_n)
    length = np.bincount(rows, weights=np.where(o == 1, t, 0.0), minlength=tf.shape[0]).astype(np.int64)
    nrm = norm[rows, o]
    ok = nrm > 0
    base = np.zeros_like(t)
    if side == "cand":
        base[ok] = 1.0 / nrm[ok]
    else:
        base[ok] = t[ok] * w[v[ok]] ** 2 / nrm[ok]
    # column id for (v, k): offsets per k
    cols, vals, rws = [], [], []
    offset = np.concatenate([[0], np.cumsum(kmax)])[:-1]  # start column of each n-gram
    for k in range(1, int(t.max(initial=0)) + 1):
        sel = (t >= k) & ok & (kmax[v] >= k)
        rws.append(rows[sel])
        cols.append(offset[v[sel]] + (k - 1))
        vals.append(base[sel])
    ncol = int(kmax.sum())
    m = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rws), np.concatenate(cols))),
                      shape=(tf.shape[0], ncol)) if rws else sp.csr_matrix((tf.shape[0], ncol))
    return m, length


class CiderDIndex:
    """Candidates and reference sets prepared once: the whole matrix, or any pairs, on demand.

    SAM scores a few hundred (image, caption) pairs per batch against the
    training set's document frequencies; building this once per training
    subset makes each batch a handful of sparse row products.
    """

    def __init__(self, refs: Sequence[Sequence[str]], candidates: Sequence[str],
                 document_frequency: DocumentFrequency | None = None, *, n: int = 4, sigma: float = 6.0) -> None:
        _check_refs(refs)
        _check_candidates(candidates)
        if n < 1 or sigma <= 0:
            raise ValueError(f"need n >= 1 and sigma > 0, got n={n}, sigma={sigma}")
        df = document_frequency or DocumentFrequency.from_refs(refs, n)
        table = NgramTable(n)
        flat = [s for group in refs for s in group]
        tf_r, tf_c = table.tf(flat), table.tf(list(candidates))
        tf_r, tf_c = table.widen(tf_r), table.widen(tf_c)
        w = _weights(table, df)
        orders = table.orders()

        def colmax(m: sp.csr_matrix) -> np.ndarray:
            if not m.nnz:
                return np.zeros(m.shape[1], np.int64)
            return np.asarray(m.max(axis=0).todense()).ravel().astype(np.int64)

        kmax = np.minimum(colmax(tf_r), colmax(tf_c))  # columns (v, k) for k <= this
        self.H, self.len_c = _expanded(tf_c, w, orders, n, "cand", kmax)
        self.R, self.len_r = _expanded(tf_r, w, orders, n, "ref", kmax)
        self.n, self.sigma = n, sigma
        self.n_images, self.n_candidates = len(refs), len(candidates)
        self.ref_img = np.repeat(np.arange(len(refs)), [len(g) for g in refs])
        self.ref_start = np.concatenate([[0], np.cumsum([len(g) for g in refs])])
        counts = np.bincount(self.ref_img, minlength=len(refs)).astype(np.float64)
        self.ref_weight = 10.0 / (n * counts[self.ref_img])  # 10 / (n |R_i|) per reference
        lo = int(min(self.len_c.min(initial=0), 0) - self.len_r.max(initial=0))
        hi = int(self.len_c.max(initial=0) - min(self.len_r.min(initial=0), 0))
        self._lo = lo
        self._penalty = np.exp(-(np.arange(lo, hi + 1, dtype=np.float64) ** 2) / (2 * sigma ** 2))

    def pairs(self, images: np.ndarray, candidates: np.ndarray, leave_out: np.ndarray | None = None) -> np.ndarray:
        """CIDEr-D of candidate ``candidates[p]`` against image ``images[p]``'s references, for every p.

        ``leave_out[p]``: a reference row (an index into the flattened references) to drop from
        pair p's reference set, which is then averaged over one reference fewer (-1: keep all)."""
        images = np.asarray(images, np.int64).ravel()
        candidates = np.asarray(candidates, np.int64).ravel()
        if images.shape != candidates.shape:
            raise ValueError(f"images and candidates must pair up, got {images.shape} and {candidates.shape}")
        n_refs = self.ref_start[images + 1] - self.ref_start[images]
        pair = np.repeat(np.arange(images.size), n_refs)
        ref = np.concatenate([np.arange(self.ref_start[i], self.ref_start[i + 1]) for i in images]) \
            if images.size else np.zeros(0, np.int64)
        cand = candidates[pair]
        dots = np.asarray(self.H[cand].multiply(self.R[ref]).sum(axis=1)).ravel()
        g = self._penalty[self.len_c[cand] - self.len_r[ref] - self._lo]
        weight = self.ref_weight[ref]
        if leave_out is not None:
            leave_out = np.asarray(leave_out, np.int64).ravel()
            if leave_out.shape != images.shape:
                raise ValueError(f"leave_out must give one reference row per pair, got shape {leave_out.shape}")
            inside = (leave_out >= self.ref_start[images]) & (leave_out < self.ref_start[images + 1])
            if not inside[leave_out >= 0].all():
                raise ValueError("leave_out names a reference outside the pair's image")
            if (n_refs[inside] < 2).any():
                raise ValueError("leave_out would leave an image with no reference")
            drop = ref == leave_out[pair]
            weight = np.where(drop, 0.0, weight * np.where(inside, n_refs / np.maximum(n_refs - 1, 1), 1.0)[pair])
        return np.bincount(pair, weights=dots * g * weight, minlength=images.size)

    def matrix(self, *, chunk_cells: int = 2**23, progress: bool = False) -> np.ndarray:
        """All (n_images, n_candidates) scores, candidates in chunks (bounded memory)."""
        H, R = self.H, self.R
        n_refs = R.shape[0]
        agg = sp.csr_matrix((self.ref_weight, (self.ref_img, np.arange(n_refs))), shape=(self.n_images, n_refs))
        # dense columns: the frequent ones, where a dense product beats a sparse one
        nnz_h = np.diff(H.tocsc().indptr)
        nnz_r = np.diff(R.tocsc().indptr)
        dens = (nnz_h / max(1, H.shape[0])) * (nnz_r / max(1, n_refs))
        dense_cols = np.flatnonzero(dens > 0.01)
        dense_cols = dense_cols[np.argsort(-dens[dense_cols])][:512]
        sparse_mask = np.ones(H.shape[1], bool)
        sparse_mask[dense_cols] = False
        Hc, Rc = H.tocsc(), R.tocsc()
        Hd, Rd = Hc[:, dense_cols].toarray(), Rc[:, dense_cols].toarray()
        Hs, RsT = Hc[:, sparse_mask].tocsr(), Rc[:, sparse_mask].T.tocsr()
        len_c, len_r = self.len_c.astype(np.int32), self.len_r.astype(np.int32)
        out = np.empty((self.n_images, self.n_candidates), np.float64)
        step = max(1, chunk_cells // max(1, n_refs))
        for s in bar(range(0, self.n_candidates, step), desc="CIDEr-D", enabled=progress):
            e = min(self.n_candidates, s + step)
            block = Hd[s:e] @ Rd.T if dense_cols.size else np.zeros((e - s, n_refs))
            sp_part = (Hs[s:e] @ RsT).tocoo()
            block[sp_part.row, sp_part.col] += sp_part.data
            block *= self._penalty[(len_c[s:e, None] - len_r[None, :]) - self._lo]
            out[:, s:e] = agg @ block.T
        return out


def cider_d_matrix(refs: Sequence[Sequence[str]], candidates: Sequence[str],
                   document_frequency: DocumentFrequency | None = None, *, n: int = 4, sigma: float = 6.0,
                   chunk_cells: int = 2**23, progress: bool = False) -> np.ndarray:
    """CIDEr-D, (len(refs), len(candidates)) float64: entry [i, j] scores candidate j against image i."""
    return CiderDIndex(refs, candidates, document_frequency, n=n, sigma=sigma).matrix(
        chunk_cells=chunk_cells, progress=progress)


def cider_d_pairs(refs: Sequence[Sequence[str]], candidates: Sequence[str], pairs: Iterable[tuple[int, int]],
                  document_frequency: DocumentFrequency | None = None) -> np.ndarray:
    """CIDEr-D of selected (image, candidate) pairs only (builds a :class:`CiderDIndex`; reuse one for many calls)."""
    p = np.asarray(list(pairs), np.int64).reshape(-1, 2)
    return CiderDIndex(refs, candidates, document_frequency).pairs(p[:, 0], p[:, 1])
