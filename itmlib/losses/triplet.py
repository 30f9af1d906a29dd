"""The hinge triplet loss of image-text matching (Biten et al. eq. 6; Faghri et al., VSE++).

For a batch with scores ``S = im @ cap.T`` (positives on the diagonal):

    L_T = Σ_p [α + S(i_p, c_m) - S(i_p, c_p)]_+ + [α + S(i_k, c_p) - S(i_p, c_p)]_+

summed over the negatives (``max_violation=False``) or taking only the hardest
negative of each row and column (``max_violation=True``, VSE++). Pairs marked
in ``positive_mask`` (e.g. two captions of the same image in one batch) are
never negatives. Returns the sum over the batch, as VSE++ does.
"""

from __future__ import annotations

import torch

__all__ = ["triplet_loss", "positive_mask_from_ids"]


def positive_mask_from_ids(img_ids: torch.Tensor) -> torch.Tensor:
    """(B, B) bool: batch items i and j show the same image."""
    return img_ids[:, None] == img_ids[None, :]


def triplet_loss(scores: torch.Tensor, margin: float = 0.2, max_violation: bool = True,
                 positive_mask: torch.Tensor | None = None) -> torch.Tensor:
    """Eq. 6 on a (B, B) score matrix (rows images, columns captions, diagonal positives)."""
    if scores.ndim != 2 or scores.shape[0] != scores.shape[1]:
        raise ValueError(f"scores must be a square (B, B) matrix, got shape {tuple(scores.shape)}")
    if margin < 0:
        raise ValueError(f"margin must be >= 0, got {margin}")
    diag = scores.diagonal()
    cost_c = (margin + scores - diag[:, None]).clamp(min=0)  # image anchor, negative captions
    cost_i = (margin + scores - diag[None, :]).clamp(min=0)  # caption anchor, negative images
    mask = torch.eye(scores.shape[0], dtype=torch.bool, device=scores.device)
    if positive_mask is not None:
        mask = mask | positive_mask
    cost_c = cost_c.masked_fill(mask, 0)
    cost_i = cost_i.masked_fill(mask, 0)
    if max_violation:
        return cost_c.max(dim=1).values.sum() + cost_i.max(dim=0).values.sum()
    return cost_c.sum() + cost_i.sum()
