"""ROUGE-L of every candidate against every image's reference set, equal to pycocoevalcap's ``Rouge``.

For candidate ``c`` (tokens ``c.split(" ")``, exactly as ``Rouge`` splits) and
the references ``R`` of an image, with LCS the longest common subsequence:

    P = max_{r∈R} LCS(c, r) / |c|,   Rc = max_{r∈R} LCS(c, r) / |r|
    ROUGE-L = (1 + β²) P Rc / (Rc + β² P),  β = 1.2   (0 if P or Rc is 0)

Note that P and Rc are maximised separately (over possibly different
references), as in the reference code.

Fast path: the LCS of every (candidate, reference) pair with a bit-parallel
algorithm (Allison & Dix 1986; Crochemore et al. 2001): each sentence of up to
64 tokens is a 64-bit match mask per token, and one pass over the other
sentence's tokens updates ``V = (V + (V & M)) | (V - (V & M))`` for all pairs
at once with numpy; LCS = number of zero bits of ``V`` in the sentence's
length. Sentences longer than 64 tokens swap roles, and pairs where both are
longer fall back to the dynamic programme.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from ..console import bar

from .cider import _check_candidates, _check_refs

__all__ = ["rouge_l_matrix", "lcs_matrix", "lcs_length"]

_W = 64


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Plain dynamic-programming LCS length (the fallback, and the tests' reference)."""
    if len(a) < len(b):
        a, b = b, a
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b, 1):
            cur.append(prev[j - 1] + 1 if x == y else max(prev[j], cur[j - 1]))
        prev = cur
    return prev[-1]


def _encode(sents: list[list[str]], vocab: dict[str, int]) -> list[np.ndarray]:
    return [np.fromiter((vocab.setdefault(t, len(vocab)) for t in s), np.int64, len(s)) for s in sents]


def _postings(a_ids: list[np.ndarray], n_vocab: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each token: the a-sentences holding it and its 64-bit position mask there (CSR by token)."""
    tok = np.concatenate(a_ids)
    sent = np.repeat(np.arange(len(a_ids)), [len(x) for x in a_ids])
    pos = np.concatenate([np.arange(len(x)) for x in a_ids]).astype(np.uint64)
    key = tok * len(a_ids) + sent
    uniq, inv = np.unique(key, return_inverse=True)
    masks = np.zeros(uniq.size, np.uint64)
    np.bitwise_or.at(masks, inv, np.left_shift(np.uint64(1), pos))
    u_tok, u_sent = uniq // len(a_ids), uniq % len(a_ids)
    indptr = np.zeros(n_vocab + 1, np.int64)
    np.add.at(indptr, u_tok + 1, 1)
    return np.cumsum(indptr), u_sent, masks


def lcs_matrix(a_ids: list[np.ndarray], b_ids: list[np.ndarray], n_vocab: int, *, block: int = 256,
               progress: bool = False) -> np.ndarray:
    """LCS lengths (len(b), len(a)) for token-id sentences; every a-sentence must have <= 64 tokens."""
    if any(len(x) > _W for x in a_ids):
        raise ValueError("lcs_matrix: the bit-parallel side must have sentences of at most 64 tokens")
    n_a = len(a_ids)
    indptr, p_sent, p_mask = _postings(a_ids, n_vocab) if n_a else (np.zeros(n_vocab + 1, np.int64),) * 3
    len_a = np.array([len(x) for x in a_ids], np.uint64)
    low = np.where(len_a >= _W, np.uint64(2**64 - 1),
                   np.left_shift(np.uint64(1), np.minimum(len_a, _W - 1)) - np.uint64(1))
    out = np.zeros((len(b_ids), n_a), np.int32)
    len_b = np.array([len(x) for x in b_ids], np.int64)
    order = np.argsort(-len_b, kind="stable")
    full = np.uint64(2**64 - 1)
    for s in bar(range(0, len(order), block), desc="LCS", enabled=progress):
        rows = order[s:s + block]
        lens = len_b[rows]
        if lens.size == 0 or lens[0] == 0:
            continue
        toks = np.full((rows.size, lens[0]), -1, np.int64)
        for i, r in enumerate(rows):
            toks[i, :lens[i]] = b_ids[r]
        V = np.full((rows.size, n_a), full, np.uint64)
        for j in range(int(lens[0])):
            act = int((lens > j).sum())
            t = toks[:act, j]
            starts, ends = indptr[t], indptr[t + 1]
            cnt = ends - starts
            M = np.zeros((act, n_a), np.uint64)
            if cnt.sum():
                src = np.repeat(starts - np.concatenate([[0], np.cumsum(cnt)[:-1]]), cnt) + np.arange(cnt.sum())
                M[np.repeat(np.arange(act), cnt), p_sent[src]] = p_mask[src]
            v = V[:act]
            u = v & M
            V[:act] = (v + u) | (v - u)
        out[rows] = np.bitwise_count(~V & low[None, :]).astype(np.int32)
    return out


def rouge_l_matrix(refs: Sequence[Sequence[str]], candidates: Sequence[str], *, beta: float = 1.2,
                   progress: bool = False) -> np.ndarray:
    """ROUGE-L, (len(refs), len(candidates)) float64: entry [i, j] scores candidate j against image i."""
    _check_refs(refs)
    _check_candidates(candidates)
    flat = [s for g in refs for s in g]
    img = np.repeat(np.arange(len(refs)), [len(g) for g in refs])
    ref_tok = [s.split(" ") for s in flat]
    cand_tok = [s.split(" ") for s in candidates]
    vocab: dict[str, int] = {}
    r_ids, c_ids = _encode(ref_tok, vocab), _encode(cand_tok, vocab)
    len_r = np.array([len(x) for x in r_ids], np.float64)
    len_c = np.array([len(x) for x in c_ids], np.float64)
    short_r = np.flatnonzero(len_r <= _W)
    long_r = np.flatnonzero(len_r > _W)
    lcs = np.zeros((len(candidates), len(flat)), np.int32)
    lcs[:, short_r] = lcs_matrix([r_ids[i] for i in short_r], c_ids, len(vocab), progress=progress)
    if long_r.size:  # long references: the candidates become the bit-parallel side
        short_c = np.flatnonzero(len_c <= _W)
        lcs[np.ix_(short_c, long_r)] = lcs_matrix([c_ids[j] for j in short_c], [r_ids[i] for i in long_r],
                                                  len(vocab)).T
        for j in np.flatnonzero(len_c > _W):
            for i in long_r:
                lcs[j, i] = lcs_length(cand_tok[j], ref_tok[i])
    prec = lcs / len_c[:, None]
    rec = lcs / len_r[None, :]
    bounds = np.concatenate([[0], np.cumsum(np.bincount(img, minlength=len(refs)))[:-1]])
    p = np.maximum.reduceat(prec, bounds, axis=1).T
    r = np.maximum.reduceat(rec, bounds, axis=1).T
    with np.errstate(invalid="ignore", divide="ignore"):
        f = (1 + beta**2) * p * r / (r + beta**2 * p)
    return np.where((p > 0) & (r > 0), f, 0.0)
