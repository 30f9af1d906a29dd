"""The metric-learning losses of Thomas & Kovashka (ECCV 2020), eqs. 1-4 and 6-8, and STRUC.

With anchor a, positive p, negative n (embeddings; ours are L2-normalised) and
C = (a + p) / 2:

    (1) L_trip(a, p, n)  = [‖a − p‖² − ‖a − n‖² + m]_+
    (2) L_ang(a, p, n)   = [‖a − p‖² − 4 tan²α ‖n − C‖²]_+
    (3) L^NP(a, p)       = Σ_{n ∈ batch, n ≠ p} L(a, p, n)                         (N-pair)
    (4) L^{NP+SYM}       = L^NP(x_i, y_i; y_j) + L^NP(y_i, x_i; x_j)               (symmetric)
    (6) L_text           = L^NP_ang(y_i, y_i'; y_j)     y_i' the text of a semantic neighbour
    (7) L_img            = L^NP_ang(x_i, x_i'; x_j)     x_i' the neighbour's image
    (8) L^OURS           = L^{NP+SYM} + α L_text + β L_img

(α, β) = (0.2, 0.3) with the angular loss and (0.3, 0.1) with the triplet loss (sec. 3.3);
tan²α = 1 (α = 45°, the public code's ``angle_bound=1``; the paper gives no angle).

**The angular N-pair form.** For unit vectors eq. 2 equals ``[f + 2 − 6 tan²α]_+`` with
``f = 4 tan²α (a + p)ᵀn − 2 (1 + tan²α) aᵀp``; at tan²α = 1 that is ``[f − 4]_+``, which
is zero unless n lies near C - at random initialisation almost every term is zero and the
literal sum of hinges (``form="hinge"``) barely trains (tested). The angular-loss paper's
N-pair version (Wang et al., ICCV 2017) and the public code both use the smooth
``log(1 + Σ_n exp f)`` instead; that is our default (``form="smooth"``). The public code
also broadcasts every batch item, the positive included, B times as negatives (a quirk
that adds a constant-ish term, reference_implementations.md); we do not copy it: the
negatives of an anchor are the other batch items of other images, each once.

**Means and sums.** Eq. 3 sums over negatives; we average over anchors (so batch size and
loss weights do not interact), as the public code does.

**STRUC** (Wang, Li & Lazebnik, CVPR 2016, the structure-preserving constraint): within one
modality, every anchor's neighbours (``group`` mask: other captions of its image as ground
truth, or its Doc2Vec neighbours) must be closer than its non-neighbours by a margin:
``Σ_{p ∈ N(a)} Σ_{n ∉ N(a)} [‖a − p‖² − ‖a − n‖² + m]_+ / |N(a)|``, averaged over anchors
that have a neighbour in the batch.
"""

from __future__ import annotations

import torch

__all__ = ["triplet_npair", "angular_npair", "symmetric_npair", "struc_loss", "angular_hinge", "PAPER_WEIGHTS",
           "FORMS"]

#: (α for L_text, β for L_img) by cross-modal loss (sec. 3.3)
PAPER_WEIGHTS = {"angular": (0.2, 0.3), "triplet": (0.3, 0.1)}
FORMS = ("smooth", "hinge")


def _check(a: torch.Tensor, p: torch.Tensor, n: torch.Tensor, neg_mask: torch.Tensor | None) -> torch.Tensor:
    if a.ndim != 2 or a.shape != p.shape or n.ndim != 2 or n.shape[1] != a.shape[1]:
        raise ValueError(f"anchors and positives must be (B, d) and negatives (M, d); got {tuple(a.shape)}, "
                         f"{tuple(p.shape)}, {tuple(n.shape)}")
    if neg_mask is None:
        return torch.ones(a.shape[0], n.shape[0], dtype=torch.bool, device=a.device)
    if neg_mask.shape != (a.shape[0], n.shape[0]):
        raise ValueError(f"neg_mask must be (B, M) = {(a.shape[0], n.shape[0])}, got {tuple(neg_mask.shape)}")
    return neg_mask.bool()


def angular_hinge(a: torch.Tensor, p: torch.Tensor, n: torch.Tensor, tan2: float = 1.0) -> torch.Tensor:
    """Eq. 2 for matched rows (B, d): ``[‖a − p‖² − 4 tan²α ‖n − C‖²]_+`` with C = (a + p)/2, per row."""
    c = (a + p) / 2                                                     # C_i, the circle's centre
    return ((a - p).pow(2).sum(-1) - 4 * tan2 * (n - c).pow(2).sum(-1)).clamp(min=0)


def triplet_npair(a: torch.Tensor, p: torch.Tensor, n: torch.Tensor, neg_mask: torch.Tensor | None = None,
                  margin: float = 0.2) -> torch.Tensor:
    """Eqs. 1 + 3: mean over anchors of Σ_n [‖a − p‖² − ‖a − n‖² + m]_+ over the negatives ``neg_mask`` allows."""
    mask = _check(a, p, n, neg_mask)
    d_ap = (a - p).pow(2).sum(-1, keepdim=True)                         # ‖a − p‖²
    d_an = torch.cdist(a, n).pow(2)                                     # ‖a − n‖², (B, M)
    return ((d_ap - d_an + margin).clamp(min=0) * mask).sum(1).mean()


def angular_npair(a: torch.Tensor, p: torch.Tensor, n: torch.Tensor, neg_mask: torch.Tensor | None = None,
                  tan2: float = 1.0, form: str = "smooth") -> torch.Tensor:
    """Eqs. 2 + 3 for (B, d) anchors/positives and (M, d) negatives; ``neg_mask`` (B, M) picks each anchor's negatives.

    ``form="smooth"``: mean_a log(1 + Σ_n exp f_an), f = 4 tan²α (a + p)ᵀn − 2 (1 + tan²α) aᵀp
    (Wang et al.'s N-pair angular loss, the public code). ``form="hinge"``: mean_a Σ_n eq. 2.
    """
    if form not in FORMS:
        raise ValueError(f"form must be one of {FORMS}, got {form!r}")
    mask = _check(a, p, n, neg_mask)
    if form == "hinge":
        c = (a + p) / 2
        d_ap = (a - p).pow(2).sum(-1, keepdim=True)
        terms = (d_ap - 4 * tan2 * torch.cdist(c, n).pow(2)).clamp(min=0)   # eq. 2 for every (a, n)
        return (terms * mask).sum(1).mean()
    f = 4 * tan2 * (a + p) @ n.T - 2 * (1 + tan2) * (a * p).sum(-1, keepdim=True)
    f = f.masked_fill(~mask, float("-inf"))
    zero = torch.zeros(a.shape[0], 1, dtype=f.dtype, device=f.device)     # the "1 +" inside the log
    return torch.logsumexp(torch.cat([zero, f], 1), dim=1).mean()


def symmetric_npair(x: torch.Tensor, y: torch.Tensor, neg_mask: torch.Tensor, loss: str = "angular",
                    tan2: float = 1.0, margin: float = 0.2, form: str = "smooth") -> torch.Tensor:
    """Eq. 4: images x_i anchor their texts y_i against the batch's other texts, and texts their
    images against the other images. ``neg_mask`` (B, B): j may be a negative of i (not i, not i's image)."""
    if loss == "angular":
        return angular_npair(x, y, y, neg_mask, tan2, form) + angular_npair(y, x, x, neg_mask, tan2, form)
    if loss == "triplet":
        return triplet_npair(x, y, y, neg_mask, margin) + triplet_npair(y, x, x, neg_mask, margin)
    raise ValueError(f"loss must be 'angular' or 'triplet', got {loss!r}")


def struc_loss(emb: torch.Tensor, group: torch.Tensor, anchors: int, margin: float = 0.2,
               ignore: torch.Tensor | None = None) -> torch.Tensor:
    """STRUC within one modality: ``emb`` (M, d), the first ``anchors`` rows are anchors;
    ``group`` (anchors, M) bool marks each anchor's neighbours; ``ignore`` (anchors, M) items that are
    neither (e.g. the anchor's own image, shown again). An anchor is never its own neighbour."""
    if group.shape != (anchors, emb.shape[0]):
        raise ValueError(f"group must be (anchors, M) = {(anchors, emb.shape[0])}, got {tuple(group.shape)}")
    a = emb[:anchors]
    self_ = torch.zeros_like(group)
    self_[torch.arange(anchors), torch.arange(anchors)] = True
    if ignore is not None:
        self_ = self_ | ignore
    pos = group & ~self_
    neg = ~group & ~self_
    d = torch.cdist(a, emb).pow(2)                                          # ‖a − ·‖², (anchors, M)
    # [d(a,p) − d(a,n) + m]_+ for every (a, p, n), p a neighbour, n a non-neighbour
    v = (d[:, :, None] - d[:, None, :] + margin).clamp(min=0) * (pos[:, :, None] & neg[:, None, :])
    n_pos = pos.sum(1)
    has = n_pos > 0
    if not has.any():
        return emb.sum() * 0.0
    return (v.sum((1, 2))[has] / n_pos[has]).mean()
