"""SSAMT's multi-scale matching losses (Fan et al., sec. 2.4, eqs. 1-4), on given scores.

For a positive pair (I, T), a negative sentence T⁻ and a negative image I⁻, each
matching score s ∈ {global intra, global inter, local} enters one hinge per negative
(the extracted paper lost its symbols; this is the triplet form its prose describes):

    L_GM = Σ_{s ∈ {intra, inter}} [m - s(I, T) + s(I, T⁻)]_+ + [m - s(I, T) + s(I⁻, T)]_+    (eq. 1)
    L_LM = [m - s_loc(I, T) + s_loc(I, T⁻)]_+ + [m - s_loc(I, T) + s_loc(I⁻, T)]_+          (eq. 2)

Phrase matching pushes the negative parts P⁻ of a negative pair's sentence below its
positive parts P⁺ (split by the image's semantic labels, :func:`~itmlib.relevance.phrases.split_phrases`),
on the phrase-to-image scores s(p, I) of that pair, over every (p⁺, p⁻):

    L_PM = mean_{p⁺ ∈ P⁺, p⁻ ∈ P⁻} [m - s(p⁺, I) + s(p⁻, I)]_+       for (I, T⁻) and (I⁻, T)   (eq. 3)
    L    = λ_GM L_GM + λ_LM L_LM + λ_PM L_PM                                               (eq. 4)

Every loss is a mean over the batch (pairs with no positive or no negative part add no
phrase term); VSE++'s triplet (:mod:`itmlib.losses.triplet`) sums instead.
"""

from __future__ import annotations

import torch

__all__ = ["matching_loss", "phrase_matching_loss"]


def matching_loss(pos: torch.Tensor, neg_caption: torch.Tensor, neg_image: torch.Tensor,
                  margin: float = 0.2) -> torch.Tensor:
    """Eqs. 1/2 for one score: mean over the batch of ``[m - s(I,T) + s(I,T⁻)]_+ + [m - s(I,T) + s(I⁻,T)]_+``."""
    if not pos.shape == neg_caption.shape == neg_image.shape:
        raise ValueError(f"scores must have one shape, got {tuple(pos.shape)}, {tuple(neg_caption.shape)}, "
                         f"{tuple(neg_image.shape)}")
    if margin < 0:
        raise ValueError(f"margin must be >= 0, got {margin}")
    return ((margin - pos + neg_caption).clamp(min=0) + (margin - pos + neg_image).clamp(min=0)).mean()


def phrase_matching_loss(node_scores: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor,
                         margin: float = 0.2) -> torch.Tensor:
    """Eq. 3: ``node_scores`` (N, K) phrase-to-image scores of N negative pairs' sentence parts;
    ``positive`` / ``negative`` (N, K) bool masks of the parts (padding in neither).
    Mean over the pairs that have both kinds of part of the mean hinge over their (p⁺, p⁻)."""
    if not node_scores.shape == positive.shape == negative.shape:
        raise ValueError(f"node_scores, positive and negative must have one shape, got {tuple(node_scores.shape)}, "
                         f"{tuple(positive.shape)}, {tuple(negative.shape)}")
    if (positive & negative).any():
        raise ValueError("a part cannot be both positive and negative")
    pairs = positive[:, :, None] & negative[:, None, :]                       # (N, K⁺, K⁻)
    hinge = (margin - node_scores[:, :, None] + node_scores[:, None, :]).clamp(min=0) * pairs
    n = pairs.sum((1, 2))
    has = n > 0
    if not bool(has.any()):
        return node_scores.sum() * 0.0
    return (hinge.sum((1, 2))[has] / n[has]).mean()
