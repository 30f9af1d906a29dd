"""Region-word alignment and its pooling into one image-sentence score (TERAN, Messina et al. 2021).

For an image with region vectors ``v_i`` (i = 1..n) and a sentence with word
vectors ``s_j`` (j = 1..m), all L2-normalised, the alignment matrix is (eq. 2)

    A_ij = v_i^T s_j / (||v_i|| ||s_j||)            (cosine)

and the global score S_kl of image k and sentence l pools it:

    MrSw   (eq. 3):  S = sum_j max_i A_ij           max over regions, sum over words
    MwSr   (eq. 4):  S = sum_i max_j A_ij           max over words, sum over regions
    Symm   (eq. 8):  S = MrSw + MwSr
    MrAVGw        :  S = mean_j max_i A_ij          (Table 4's "averaging" ablation)

Padding is honoured with masks: a padded region is never the max (filled with
-inf before the max) and a padded word adds nothing to the sum (filled with 0
after it). The public TERAN code fills padded positions with 0 *before* the
max, so a padded region wins whenever every real cosine of a word is negative;
here masks are exact (documented difference). A sentence with no valid word
or an image with no valid region scores 0.

:func:`score_matrix` scores every image against every sentence in chunks:
one GEMM of all region vectors of an image chunk against all word vectors of a
sentence chunk, then the pooling on that block - no Python loop over pairs.
:func:`pair_score` is the plain per-pair computation it must equal.
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["POOLINGS", "alignment_matrix", "pool_alignments", "score_matrix", "pair_score"]

POOLINGS = ("mrsw", "mwsr", "symm", "mravgw")


def _check_pooling(pooling: str) -> None:
    if pooling not in POOLINGS:
        raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")


def alignment_matrix(regions: torch.Tensor, words: torch.Tensor) -> torch.Tensor:
    """(Bi, R, d) x (Bt, W, d) -> A of shape (Bi, Bt, R, W): every region against every word (eq. 2).

    Inputs are expected L2-normalised (then the dot product is the cosine)."""
    if regions.ndim != 3 or words.ndim != 3 or regions.shape[-1] != words.shape[-1]:
        raise ValueError(f"regions (Bi, R, d) and words (Bt, W, d) must share d, got {tuple(regions.shape)} "
                         f"and {tuple(words.shape)}")
    return torch.einsum("ird,twd->itrw", regions, words)


def _pool_block(A: torch.Tensor, region_mask: torch.Tensor, word_mask: torch.Tensor, pooling: str) -> torch.Tensor:
    """A (Bi, R, Bt, W) with masks (Bi, R) and (Bt, W) -> (Bi, Bt)."""
    rm = region_mask[:, :, None, None]
    wm = word_mask[None, None, :, :]
    neg = torch.finfo(A.dtype).min
    out = None
    if pooling in ("mrsw", "symm", "mravgw"):
        best = A.masked_fill(~rm, neg).amax(dim=1)                      # (Bi, Bt, W): max over regions
        has_region = region_mask.any(dim=1)[:, None, None]
        best = torch.where(has_region & word_mask[None], best, torch.zeros((), dtype=A.dtype, device=A.device))
        s = best.sum(dim=2)
        if pooling == "mravgw":
            s = s / word_mask.sum(dim=1).clamp(min=1).to(A.dtype)[None, :]
        out = s
    if pooling in ("mwsr", "symm"):
        best = A.masked_fill(~wm, neg).amax(dim=3)                      # (Bi, R, Bt): max over words
        has_word = word_mask.any(dim=1)[None, None, :]
        best = torch.where(region_mask[:, :, None] & has_word, best, torch.zeros((), dtype=A.dtype, device=A.device))
        s = best.sum(dim=1)
        out = s if out is None else out + s
    assert out is not None
    return out


def pool_alignments(A: torch.Tensor, region_mask: torch.Tensor, word_mask: torch.Tensor,
                    pooling: str = "mrsw") -> torch.Tensor:
    """Pool A (Bi, Bt, R, W) from :func:`alignment_matrix` into scores (Bi, Bt) (eqs. 3, 4, 8).

    ``region_mask`` (Bi, R) and ``word_mask`` (Bt, W) are True where a region / word counts."""
    _check_pooling(pooling)
    if A.ndim != 4 or region_mask.shape != (A.shape[0], A.shape[2]) or word_mask.shape != (A.shape[1], A.shape[3]):
        raise ValueError(f"A must be (Bi, Bt, R, W) with masks (Bi, R), (Bt, W); got {tuple(A.shape)}, "
                         f"{tuple(region_mask.shape)}, {tuple(word_mask.shape)}")
    return _pool_block(A.permute(0, 2, 1, 3), region_mask.bool(), word_mask.bool(), pooling)


@torch.no_grad()
def score_matrix(image_feats: torch.Tensor, image_mask: torch.Tensor, text_feats: torch.Tensor,
                 text_mask: torch.Tensor, pooling: str = "mrsw", *, image_chunk: int = 128,
                 max_block_bytes: int = 256 * 2**20, device: str | torch.device | None = None) -> np.ndarray:
    """All image x sentence scores (N_i, N_t) as a float32 array, computed in chunks.

    ``image_feats`` (N_i, R, d) with ``image_mask`` (N_i, R); ``text_feats`` (N_t, W, d)
    with ``text_mask`` (N_t, W). Per chunk: regions (bi*R, d) @ words (bt*W, d)^T,
    viewed as (bi, R, bt, W), pooled with the masks. ``max_block_bytes`` bounds the
    alignment block; ``device`` moves the chunks (default: where the inputs are)."""
    _check_pooling(pooling)
    if image_feats.ndim != 3 or text_feats.ndim != 3 or image_feats.shape[-1] != text_feats.shape[-1]:
        raise ValueError(f"image_feats (N_i, R, d) and text_feats (N_t, W, d) must share d, got "
                         f"{tuple(image_feats.shape)} and {tuple(text_feats.shape)}")
    if image_mask.shape != image_feats.shape[:2] or text_mask.shape != text_feats.shape[:2]:
        raise ValueError(f"masks must be (N_i, R) and (N_t, W), got {tuple(image_mask.shape)} and "
                         f"{tuple(text_mask.shape)}")
    dev = torch.device(device) if device is not None else image_feats.device
    n_i, R, d = image_feats.shape
    n_t, W, _ = text_feats.shape
    out = torch.empty(n_i, n_t, dtype=torch.float32)
    bi = max(1, min(image_chunk, n_i))
    bt = max(1, int(max_block_bytes // (4 * bi * R * max(W, 1))))
    words = text_feats.to(dev, torch.float32)
    wmask = text_mask.to(dev).bool()
    for i0 in range(0, n_i, bi):
        reg = image_feats[i0:i0 + bi].to(dev, torch.float32)
        rmask = image_mask[i0:i0 + bi].to(dev).bool()
        flat = reg.reshape(-1, d)
        for t0 in range(0, n_t, bt):
            w = words[t0:t0 + bt]
            A = (flat @ w.reshape(-1, d).T).view(reg.shape[0], R, w.shape[0], W)
            out[i0:i0 + bi, t0:t0 + bt] = _pool_block(A, rmask, wmask[t0:t0 + bt], pooling).float().cpu()
    return out.numpy()


def pair_score(regions: np.ndarray, region_mask: np.ndarray, words: np.ndarray, word_mask: np.ndarray,
               pooling: str = "mrsw") -> float:
    """One image-sentence score, the plain way: keep the valid rows, A = V S^T, pool."""
    _check_pooling(pooling)
    v = np.asarray(regions, np.float64)[np.asarray(region_mask, bool)]
    s = np.asarray(words, np.float64)[np.asarray(word_mask, bool)]
    if len(v) == 0 or len(s) == 0:
        return 0.0
    A = v @ s.T
    mrsw, mwsr = A.max(axis=0).sum(), A.max(axis=1).sum()
    return float({"mrsw": mrsw, "mwsr": mwsr, "symm": mrsw + mwsr, "mravgw": A.max(axis=0).mean()}[pooling])
