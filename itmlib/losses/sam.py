"""Semantic Adaptive Margin (SAM): the triplet loss with a per-pair margin from a captioning metric.

Biten et al. (WACV 2022), eq. 7. For a positive pair ``(i_p, c_p)`` with a
negative caption ``c_m`` (image-to-text) and a negative image ``i_l`` whose
batch caption is ``c_l`` (text-to-image):

    L_SAM = [α_i2t + S(i_p, c_m) - S(i_p, c_p)]_+ + [α_t2i + S(i_l, c_p) - S(i_p, c_p)]_+
    α_i2t = (φ(G_p, c_p) - φ(G_p, c_l)) / τ
    α_t2i = (φ(G_p, c_p) - φ(G_p, c_m)) / τ

with φ = CIDEr-D against the positive image's ground-truth captions ``G_p``
(which contain ``c_p``), document frequencies of the training subset in use,
and temperature τ. Note that eq. 7 as printed pairs α_i2t with the *t2i*
negative's caption ``c_l`` and α_t2i with ``c_m``; ``mode="paper"`` follows it
as printed (so does the public code). ``keep_triplet`` adds eq. 6.

Negative sampling, ``mode="paper"`` (sec. 5.4), among the batch items that are
not positives (other captions of the same image are positives):
``hard`` = the closest negative, ``soft`` = the furthest, ``random`` = uniform.

``mode="reference"`` reproduces ``ContrastiveLossMetric`` of the public SAM
code, differences documented and each pinned by a test:

1. sampling on the cost matrices ``S - diag`` (row-wise for i2t, column-wise
   compared for t2i, both read row-wise): its ``hard`` is the *second
   smallest* cost (near the easiest negative) and its ``soft`` the *second
   largest* (usually the hardest negative, or the positive itself when exactly
   one negative already violates) - the names look swapped; ``random`` is a
   uniform index other than the anchor. Same-image batch items are not masked.
2. margins are clamped at 1 from above (not below: they can be negative);
3. the margin vector is added to the (B, B) cost matrix by broadcasting, so
   the margin applied at row i, column j is the one computed for *j*.

Controls and variants that test *what* in SAM helps (none is in the paper):

* ``phi_control="shuffled"``: φ(G_p, c_m) and φ(G_p, c_l) are permuted within the batch
  before the margins are formed - the same margin distribution, the same negatives, the
  same hinges, but a margin no longer tied to its negative's semantics;
* ``phi_self="leave_one_out"`` (:func:`batch_phi`): G_p without c_p, so φ(G_p, c_p) loses
  the constant 2.0 CIDEr-D of the caption matching itself;
* ``all_negatives=True``: the hinge summed over every negative j of the batch, each with
  its own margin α_pj = (φ(G_p, c_p) - φ(G_p, c_j)) / τ in both directions - the SAM hinge
  under VSE-infinity's warm-up (the triplet sums over all negatives in that epoch too). The
  warm-up is ours (the public code has no run without the triplet), so both modes take it; in
  ``mode="reference"`` its margins are clamped at 1 from above like the public code's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import numpy as np
import torch

from ..config import check_choice, check_positive
from .triplet import triplet_loss

if TYPE_CHECKING:
    from ..data.base import ITMDataset
    from ..relevance import CiderDIndex

__all__ = ["SAMPLINGS", "sample_negatives", "sam_loss", "batch_phi", "phi_index"]

SAMPLINGS = ("hard", "soft", "random")


@dataclass(frozen=True)
class SAMConfig:
    """The Semantic Adaptive Margin's settings (eq. 7, :func:`sam_loss`), used when a training config's
    ``loss`` is ``"sam"`` (:class:`~itmlib.training.run_config.TrainConfig`). Stored and hashed flat, beside the
    other fields of the run (:func:`~itmlib.training.run_config.config_dict`), so that the names a member record
    and the explorer use are these."""

    tau: float = 5.0                 # SAM temperature
    sampling: str = "soft"           # SAM negatives: hard / soft / random
    sam_mode: str = "paper"          # "paper" (eq. 7) or "reference" (public code)
    keep_triplet: bool = False       # SAM + eq. 6
    sam_weight: float = 1.0          # weight of the SAM hinge (the public code: cider_weight 5-10 on top of its losses)
    phi_control: str = "none"        # "shuffled": the negatives' φ permuted within the batch (SAM's control arm)
    phi_self: str = "include"        # "leave_one_out": G_p without the positive's own caption c_p
    sam_warmup: bool = False         # during warmup_epochs the SAM hinge sums over all negatives, as the triplet does

    def __post_init__(self) -> None:
        check_choice("sampling", self.sampling, SAMPLINGS)
        check_choice("sam_mode", self.sam_mode, ("paper", "reference"))
        check_choice("phi_control", self.phi_control, ("none", "shuffled"))
        check_choice("phi_self", self.phi_self, ("include", "leave_one_out"))
        if self.sam_weight < 0:
            raise ValueError(f"sam_weight must be >= 0, got {self.sam_weight}")
        check_positive("tau", self.tau)

REFERENCE_MARGIN_CAP = 1.0  # mode="reference": margins clamped at this from above, as in the public code
Phi = Callable[[np.ndarray, np.ndarray], np.ndarray]


def phi_index(ds: "ITMDataset") -> "CiderDIndex":
    """The CIDEr-D index behind φ of eq. 7 for a training (sub)set ``ds``.

    References G_p: each image's captions; candidates: every caption; document
    frequencies from this set's own references (so a reduced-data subset gets its
    own, as the paper's per-subset training implies). Captions are lower-cased.
    """
    from ..relevance import CiderDIndex, DocumentFrequency

    refs = [[c.lower() for c in ds.captions_of(i)] for i in range(ds.n_images)]
    index = CiderDIndex(refs, [c.lower() for c in ds.captions], DocumentFrequency.from_refs(refs))
    # the reference row of every caption (its place among its image's references), for leave-one-out φ
    order = np.argsort(ds.img_of_caption, kind="stable")
    index.ref_of_caption = np.empty(ds.n_captions, np.int64)
    index.ref_of_caption[order] = np.arange(ds.n_captions)
    return index


def batch_phi(index, img_ids: np.ndarray, cap_ids: np.ndarray, leave_one_out: bool = False) -> Phi:
    """φ for a batch: ``phi(p, c)`` = CIDEr-D of batch caption c against batch item p's image references.

    ``index``: a :class:`~itmlib.relevance.CiderDIndex` over the training subset
    (refs: its images' captions; candidates: its captions), from :func:`phi_index`;
    ``img_ids``/``cap_ids``: the batch items' image and caption indices in that subset.
    ``leave_one_out``: G_p without p's own caption c_p (``phi_self="leave_one_out"``). With it,
    φ(G_p, c_p) no longer carries the self-match, which adds 10/|G_p| = 2.0 CIDEr-D to every
    positive of four words or more (one of five references identical to the candidate).
    """
    img_ids, cap_ids = np.asarray(img_ids), np.asarray(cap_ids)
    if not leave_one_out:
        return lambda p, c: index.pairs(img_ids[np.asarray(p)], cap_ids[np.asarray(c)])
    own = index.ref_of_caption[cap_ids]
    return lambda p, c: index.pairs(img_ids[np.asarray(p)], cap_ids[np.asarray(c)], leave_out=own[np.asarray(p)])


def _random_other(n: int, generator: torch.Generator | None, allowed: torch.Tensor) -> torch.Tensor:
    """For each row a uniform column among ``allowed`` (B, B) (a row with none keeps its own index)."""
    w = allowed.float()
    none = w.sum(dim=1) == 0
    w[none, torch.arange(n)[none]] = 1.0
    return torch.multinomial(w, 1, generator=generator).squeeze(1)


def sample_negatives(scores: torch.Tensor, sampling: str, mode: str = "paper",
                     positive_mask: torch.Tensor | None = None,
                     generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """(negative caption per image anchor ``neg_c``, negative image per caption anchor ``neg_i``), each (B,)."""
    check_choice("sampling", sampling, SAMPLINGS)
    check_choice("mode", mode, ("paper", "reference"))
    B = scores.shape[0]
    s = scores.detach()
    eye = torch.eye(B, dtype=torch.bool, device=s.device)
    if mode == "paper":
        pos = eye if positive_mask is None else (eye | positive_mask)
        if sampling == "random":
            return _random_other(B, generator, ~pos.cpu()).to(s.device), _random_other(B, generator, ~pos.t().cpu()).to(s.device)
        fill = float("-inf") if sampling == "hard" else float("inf")
        pick = torch.argmax if sampling == "hard" else torch.argmin
        return pick(s.masked_fill(pos, fill), dim=1), pick(s.masked_fill(pos, fill), dim=0)
    cost_s = s - s.diagonal()[:, None]
    cost_im = s - s.diagonal()[None, :]
    if sampling == "random":
        return _random_other(B, generator, ~eye.cpu()).to(s.device), _random_other(B, generator, ~eye.cpu()).to(s.device)
    largest = sampling == "soft"  # the reference code's naming
    return (torch.topk(cost_s, 2, dim=1, largest=largest).indices[:, 1],
            torch.topk(cost_im, 2, dim=1, largest=largest).indices[:, 1])


def _sam_all_negatives(scores: torch.Tensor, phi: Phi, tau: float, phi_control: str, positive_mask: torch.Tensor | None,
                       generator: torch.Generator | None, mode: str = "paper") -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """The SAM hinge summed over every negative, margin α_pj = (φ(G_p, c_p) - φ(G_p, c_j)) / τ
    (``mode="reference"``: clamped at 1 from above, the public code's clamp; nothing is sampled, so
    its other two differences have no counterpart here)."""
    B = scores.shape[0]
    p = np.arange(B)
    as_t = lambda a: torch.as_tensor(a, dtype=scores.dtype, device=scores.device)  # noqa: E731
    phi_pos = as_t(phi(p, p))
    phi_all = as_t(phi(np.repeat(p, B), np.tile(p, B)).reshape(B, B))       # φ(G_p, c_j)
    if phi_control == "shuffled":
        phi_all = phi_all[:, torch.randperm(B, generator=generator).to(scores.device)]
    alpha = (phi_pos[:, None] - phi_all) / tau
    if mode == "reference":
        alpha = alpha.clamp(max=REFERENCE_MARGIN_CAP)
    eye = torch.eye(B, dtype=torch.bool, device=scores.device)
    pos = eye if positive_mask is None else (eye | positive_mask)
    diag = scores.diagonal()
    i2t = (alpha + scores - diag[:, None]).clamp(min=0).masked_fill(pos, 0)           # image p vs caption j
    t2i = (alpha + scores.t() - diag[:, None]).clamp(min=0).masked_fill(pos, 0)       # caption p vs image j
    return i2t.sum() + t2i.sum(), {"margin": alpha.detach(), "phi_pos": phi_pos}


def sam_loss(scores: torch.Tensor, phi: Phi, sam: SAMConfig, *, margin: float = 0.2, max_violation: bool = True,
             positive_mask: torch.Tensor | None = None, generator: torch.Generator | None = None,
             control_generator: torch.Generator | None = None,
             all_negatives: bool = False) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Eq. 7 (+ eq. 6 if ``sam.keep_triplet``, with ``margin`` and ``max_violation``) on a (B, B) score matrix;
    returns (loss, details).

    ``sam``: τ, the sampling, the mode (``sam_mode``), the control (``phi_control``) and the weight of the SAM
    hinge (``sam_weight``, not eq. 6's). ``phi(p, c)`` gives φ(G_p, c) for arrays of batch indices (see
    :func:`batch_phi`). ``details``: the sampled negatives and the margins actually applied. ``all_negatives``:
    see the module docstring. ``control_generator`` draws the shuffle (default ``generator``; a separate one
    leaves the negatives of later batches identical to the unshuffled run's).
    """
    tau, sampling, mode, phi_control = sam.tau, sam.sampling, sam.sam_mode, sam.phi_control
    keep_triplet, sam_weight = sam.keep_triplet, sam.sam_weight
    if scores.ndim != 2 or scores.shape[0] != scores.shape[1]:
        raise ValueError(f"scores must be a square (B, B) matrix, got shape {tuple(scores.shape)}")
    if all_negatives:
        loss, d = _sam_all_negatives(scores, phi, tau, phi_control, positive_mask, control_generator or generator, mode)
        loss = sam_weight * loss
        if keep_triplet:
            loss = loss + triplet_loss(scores, margin, max_violation, positive_mask)
        return loss, d
    B = scores.shape[0]
    neg_c, neg_i = sample_negatives(scores, sampling, mode, positive_mask, generator)
    p = np.arange(B)
    nc, ni = neg_c.cpu().numpy(), neg_i.cpu().numpy()
    phi_pos = torch.as_tensor(phi(p, p), dtype=scores.dtype, device=scores.device)
    phi_m = torch.as_tensor(phi(p, nc), dtype=scores.dtype, device=scores.device)  # φ(G_p, c_m)
    phi_l = torch.as_tensor(phi(p, ni), dtype=scores.dtype, device=scores.device)  # φ(G_p, c_l)
    if phi_control == "shuffled":   # the control: the negatives' φ permuted within the batch
        perm = torch.randperm(B, generator=control_generator or generator).to(scores.device)
        phi_m, phi_l = phi_m[perm], phi_l[perm]
    alpha_i2t = (phi_pos - phi_l) / tau
    alpha_t2i = (phi_pos - phi_m) / tau
    diag = scores.diagonal()
    idx = torch.arange(B, device=scores.device)
    if mode == "paper":
        i2t = (alpha_i2t + scores[idx, neg_c] - diag).clamp(min=0)
        t2i = (alpha_t2i + scores[neg_i, idx] - diag).clamp(min=0)
        applied_i2t, applied_t2i = alpha_i2t, alpha_t2i
    else:
        margin_s, margin_im = alpha_i2t.clamp(max=REFERENCE_MARGIN_CAP), alpha_t2i.clamp(max=REFERENCE_MARGIN_CAP)
        cost_s = (scores - diag[:, None] + margin_s[None, :]).clamp(min=0)
        cost_im = (scores - diag[None, :] + margin_im[None, :]).clamp(min=0)
        i2t, t2i = cost_s[idx, neg_c], cost_im[idx, neg_i]
        applied_i2t, applied_t2i = margin_s[neg_c], margin_im[neg_i]
    loss = sam_weight * (i2t.sum() + t2i.sum())
    if keep_triplet:
        loss = loss + triplet_loss(scores, margin, max_violation, positive_mask)
    return loss, {"neg_c": neg_c, "neg_i": neg_i, "margin_i2t": applied_i2t.detach(),
                  "margin_t2i": applied_t2i.detach(), "phi_pos": phi_pos, "phi_m": phi_m, "phi_l": phi_l}
