"""Region-word alignment and its pooling into one image-sentence score (TERAN, Messina et al. 2021).

For an image with region vectors ``v_i`` (i = 1..n) and a sentence with word
vectors ``s_j`` (j = 1..m), all L2-normalised, the alignment matrix is (eq. 2)

    A_ij = v_i^T s_j / (||v_i|| ||s_j||)            (cosine)

and the global score S_kl of image k and sentence l pools it:

    MrSw   (eq. 3):  S = sum_j max_i A_ij           max over regions, sum over words
    MwSr   (eq. 3):  S = sum_i max_j A_ij           max over words, sum over regions
    Symm   (eq. 4):  S = MrSw + MwSr
    MrAvgw (eq. 8):  S = mean_j max_i A_ij          (Table 4's "averaging" ablation)

Padding is honoured with masks: a padded region is never the max (filled with
-inf before the max) and a padded word adds nothing to the sum (filled with 0
after it). The public TERAN code fills padded positions with 0 *before* the
max, so a padded region wins whenever every real cosine of a word is negative;
here masks are exact (documented difference). A sentence with no valid word
or an image with no valid region scores 0.

:func:`score_matrix` scores every image against every sentence in chunks:
one GEMM of all region vectors of an image chunk against all word vectors of a
sentence chunk, then the pooling on that block - no Python loop over pairs.
:func:`pair_score` is the plain per-pair computation it must equal. :func:`pooled_scores` is the training
batch's version, with gradients: the same folded masks, over the slots some item of the batch uses.
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["POOLINGS", "alignment_matrix", "pool_alignments", "pooled_scores", "score_matrix", "pair_score"]

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


def _pool_block(A: torch.Tensor, region_mask: torch.Tensor, word_mask: torch.Tensor, pooling: str,
                premasked: bool = False) -> torch.Tensor:
    """A (Bi, R, Bt, W) with masks (Bi, R) and (Bt, W) -> (Bi, Bt).

    ``premasked``: padded entries of A already hold a huge negative number (folded into
    the GEMM by :func:`score_matrix`), so the maxima skip the masked copies of A.
    The maxima are ``max(dim).values``, whose backward sends the gradient to the arg-max
    through one scatter; ``amax`` compares every entry of A with the maximum to split it
    among ties, ~5x slower on the training batch (TERAN's biggest backward op), and equal
    except on exact ties of two cosines."""
    rm = region_mask[:, :, None, None]
    wm = word_mask[None, None, :, :]
    neg = torch.finfo(A.dtype).min
    out = None
    if pooling in ("mrsw", "symm", "mravgw"):
        best = (A if premasked else A.masked_fill(~rm, neg)).max(dim=1).values  # (Bi, Bt, W): max over regions
        has_region = region_mask.any(dim=1)[:, None, None]
        best = torch.where(has_region & word_mask[None], best, torch.zeros((), dtype=A.dtype, device=A.device))
        s = best.sum(dim=2)
        if pooling == "mravgw":
            s = s / word_mask.sum(dim=1).clamp(min=1).to(A.dtype)[None, :]
        out = s
    if pooling in ("mwsr", "symm"):
        best = (A if premasked else A.masked_fill(~wm, neg)).max(dim=3).values  # (Bi, R, Bt): max over words
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


_BIG = 1e30  # |cosine| <= 1 (and any sane feature product) vanishes beside it in float32


def _pad_bias(mask: torch.Tensor) -> torch.Tensor:
    """(..., L) bool mask -> (..., L, 1) float: 0 where valid, -BIG where padded."""
    return ((~mask).to(torch.float32) * -_BIG)[..., None]


def used_span(tokens: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``tokens`` (B, L, d) and ``mask`` (B, L) cut to the slots from the first to the last that any row uses."""
    used = mask.any(dim=0).nonzero()
    if used.numel() == 0:
        return tokens[:, :1], mask[:, :1]
    lo, hi = int(used[0]), int(used[-1]) + 1
    return tokens[:, lo:hi], mask[:, lo:hi]


def pooled_scores(regions: torch.Tensor, region_mask: torch.Tensor, words: torch.Tensor, word_mask: torch.Tensor,
                 pooling: str = "mrsw") -> torch.Tensor:
    """Pooled scores (Bi, Bt) of a training batch, with gradients (eqs. 2-4, 8): regions (Bi, R, d) against
    words (Bt, W, d), both L2-normalised, with their masks.

    Equal to :func:`pool_alignments` of :func:`alignment_matrix` up to float rounding, at a third of the
    alignment block's passes: only the slots some item uses (:func:`used_span`: the image CLS, regions past
    the largest count, [CLS]/[SEP]), one GEMM whose output is already (Bi, R, Bt, W) (no permuted copy), and
    the masks folded into it as in :func:`score_matrix` (no masked copy before the maxima)."""
    _check_pooling(pooling)
    regions, region_mask = used_span(regions, region_mask.bool())
    words, word_mask = used_span(words, word_mask.bool())
    (bi, r, d), (bt, w, _) = regions.shape, words.shape
    reg = torch.cat([regions, _pad_bias(region_mask).to(regions.dtype), regions.new_ones(bi, r, 1)], dim=-1)
    wrd = torch.cat([words, words.new_ones(bt, w, 1), _pad_bias(word_mask).to(words.dtype)], dim=-1)
    A = (reg.reshape(-1, d + 2) @ wrd.reshape(-1, d + 2).T).view(bi, r, bt, w)
    return _pool_block(A, region_mask, word_mask, pooling, premasked=True)


def _check_shapes(image_feats: torch.Tensor, image_mask: torch.Tensor, text_feats: torch.Tensor,
                  text_mask: torch.Tensor) -> None:
    if image_feats.ndim != 3 or text_feats.ndim != 3 or image_feats.shape[-1] != text_feats.shape[-1]:
        raise ValueError(f"image_feats (N_i, R, d) and text_feats (N_t, W, d) must share d, got "
                         f"{tuple(image_feats.shape)} and {tuple(text_feats.shape)}")
    if image_mask.shape != image_feats.shape[:2] or text_mask.shape != text_feats.shape[:2]:
        raise ValueError(f"masks must be (N_i, R) and (N_t, W), got {tuple(image_mask.shape)} and "
                         f"{tuple(text_mask.shape)}")


def _packed_chunks(text_feats: torch.Tensor, wmask: torch.Tensor, target: torch.device, rows: int,
                   max_block_bytes: int) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]]:
    """The captions prepared once for many image chunks of ``rows`` region rows each: (caption indices, words
    flattened, their mask, W_c) per chunk.

    - two extra coordinates fold the masks into the GEMM: regions [v, 0 or -BIG, 1] and
      words [s, 1, 0 or -BIG], so a padded region or word scores about -BIG and no
      masked copy of the alignment block is needed before the maxima;
    - packed longest first, each chunk padded only to its own longest caption W_c
      (extent = last valid position + 1), so every GEMM skips most of the padding."""
    n_t, W, d = text_feats.shape
    words = torch.cat([text_feats.to(target, torch.float32), torch.ones_like(wmask[..., None], dtype=torch.float32),
                       _pad_bias(wmask)], dim=-1)
    extent = (wmask * torch.arange(1, W + 1, device=target)).amax(1) if W else torch.zeros(n_t, dtype=torch.long)
    order = torch.argsort(extent, descending=True, stable=True)
    chunks, t0 = [], 0
    while t0 < n_t:
        wc = max(1, int(extent[order[t0]]))
        step = max(1, int(max_block_bytes // (4 * rows * wc)))
        idx = order[t0:t0 + step]
        chunks.append((idx.cpu(), words[idx, :wc].reshape(-1, d + 2), wmask[idx, :wc], wc))
        t0 += step
    return chunks


@torch.no_grad()
def score_matrix(image_feats: torch.Tensor, image_mask: torch.Tensor, text_feats: torch.Tensor,
                 text_mask: torch.Tensor, pooling: str = "mrsw", *, image_chunk: int | None = None,
                 max_block_bytes: int | None = None, device: str | torch.device | None = None) -> np.ndarray:
    """All image x sentence scores (N_i, N_t) as a float32 array, computed in chunks.

    ``image_feats`` (N_i, R, d) with ``image_mask`` (N_i, R); ``text_feats`` (N_t, W, d)
    with ``text_mask`` (N_t, W). Per chunk: regions (bi*R, d) @ words (bt*W_c, d)^T,
    viewed as (bi, R, bt, W_c), pooled with the masks. With several image chunks the captions
    are packed once, longest first, each chunk padded only to its own longest caption W_c
    (the GEMMs skip most of the padding); one image chunk streams them unpacked (W_c = W).
    ``max_block_bytes`` bounds the alignment block; ``device`` moves the chunks (default:
    where the inputs are). Defaults per device: on the CPU 32 images and 4 MiB blocks, which
    stay in the cache between the GEMM and the pooling (``benchmarks/bench_teran.py``: 1.4-2x
    faster than 256 MiB blocks); on a GPU 128 images and 256 MiB blocks (fewer launches)."""
    _check_pooling(pooling)
    _check_shapes(image_feats, image_mask, text_feats, text_mask)
    target = torch.device(device) if device is not None else image_feats.device
    on_cpu = target.type == "cpu"
    image_chunk = image_chunk if image_chunk is not None else (32 if on_cpu else 128)
    max_block_bytes = max_block_bytes if max_block_bytes is not None else (4 if on_cpu else 256) * 2**20
    if image_chunk < 1 or max_block_bytes < 1:
        raise ValueError(f"image_chunk and max_block_bytes must be >= 1, got {image_chunk} and {max_block_bytes}")
    n_i, R, d = image_feats.shape
    n_t, W, _ = text_feats.shape
    out = torch.empty(n_i, n_t, dtype=torch.float32)
    # few captions (a caption query): take more images per chunk, up to the block size
    bi = max(1, min(n_i, max(image_chunk, max_block_bytes // (4 * max(R, 1) * max(W, 1) * max(n_t, 1)))))
    wmask = text_mask.to(target).bool()
    fold = n_i > bi
    if not fold:  # one image chunk (a single query): stream the captions as they are, no copy
        words = text_feats.to(target, torch.float32)
        step = max(1, int(max_block_bytes // (4 * bi * R * max(W, 1))))
        chunks = [(slice(t0, t0 + step), words[t0:t0 + step].reshape(-1, d), wmask[t0:t0 + step], W)
                  for t0 in range(0, n_t, step)]
    else:
        chunks = _packed_chunks(text_feats, wmask, target, bi * R, max_block_bytes)
    for i0 in range(0, n_i, bi):
        rmask = image_mask[i0:i0 + bi].to(target).bool()
        reg = image_feats[i0:i0 + bi].to(target, torch.float32)
        if fold:
            reg = torch.cat([reg, _pad_bias(rmask), torch.ones_like(rmask[..., None], dtype=torch.float32)], dim=-1)
        flat = reg.reshape(-1, reg.shape[-1])
        for cols, w, m, wc in chunks:
            A = (flat @ w.T).view(reg.shape[0], R, len(m), wc)
            out[i0:i0 + bi, cols] = _pool_block(A, rmask, m, pooling, premasked=fold).float().cpu()
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
