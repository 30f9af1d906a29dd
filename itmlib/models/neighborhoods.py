"""VSE++ towers trained with Thomas & Kovashka's losses (ECCV 2020): the network of notebook 07.

The paper proposes *constraints*, not a model: any two-tower network can carry them (their
"PVSE + ours"). Ours are the course's VSE++ towers (:mod:`itmlib.models.vse`), the paper's
ResNet/GRU analogue. Each training pair (x_i, y_i) brings one semantic neighbour pair
(x_i', y_i') = Ψ(y_i) (eq. 5), drawn afresh every step from a precomputed table of
candidates; both pairs go through the towers, and the losses of
:mod:`itmlib.losses.angular` are assembled as eq. 8:

    L = L^{NP+SYM}(x, y) + α L_text(y_i, y_i'; y_j) + β L_img(x_i, x_i'; x_j)

``loss`` picks the cross-modal term: ``"angular"`` (ANG+NP+SYM), ``"triplet"``
(TRIP+NP+SYM), or ``"vsepp"`` (VSE++'s hardest-negative hinge, summed over the batch as
VSE++ does - the within-modality terms are then multiplied by the batch size, so that
α and β weigh each anchor as in eq. 8). ``within``: ``"none"`` (a baseline), ``"ours"``
(eqs. 6-7; with ``"vsepp"`` the angular form and weights), or ``"struc"`` (STRUC, in
``struc_space``). ``neighbors``: where Ψ comes from - ``"text"`` (Doc2Vec Ω, the method),
``"image"`` (the mean region feature, OURS (Img NNs)), ``"gt"`` (the other captions of the
image: STRUC (GT)), or ``"random"`` (a uniformly random other pair: the control arm that
keeps every extra term and batch item but removes the semantics).

Batch negatives are the batch items of other images, each once (see
:mod:`itmlib.losses.angular` on the public code's duplication, which we do not copy).
"""

from __future__ import annotations

import dataclasses

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch

from ..data.base import ITMDataset
from ..data.inputs import region_inputs
from ..losses.angular import PAPER_WEIGHTS, angular_npair, struc_loss, symmetric_npair, triplet_npair
from ..losses.triplet import positive_mask_from_ids, triplet_loss
from .vocab import Vocab
from .vse import VSEConfig, VSEModel

__all__ = ["NeighborhoodsConfig", "NeighborhoodsModel", "mean_region_features", "LOSSES", "WITHIN", "NEIGHBORS"]

LOSSES = ("angular", "triplet", "vsepp")
WITHIN = ("none", "ours", "struc")
NEIGHBORS = ("text", "image", "gt", "random")


@dataclass(frozen=True)
class NeighborhoodsConfig(VSEConfig):
    """VSE++ towers plus the loss of Thomas & Kovashka. Paper values in the comments."""

    kind: ClassVar[str] = "semnbr"   # hashed into every config of this model: committed records keep it
    loss: str = "angular"            # cross-modal term: angular (ANG+NP+SYM) / triplet / vsepp
    within: str = "ours"             # within-modality terms: none / ours (eqs. 6-7) / struc
    neighbors: str = "text"          # Ψ from: text (Doc2Vec) / image / gt / random (control)
    alpha: float = -1.0              # weight of L_text; -1: paper's (0.2 angular, 0.3 triplet)
    beta: float = -1.0               # weight of L_img;  -1: paper's (0.3 angular, 0.1 triplet)
    struc_weight: float = 0.3        # STRUC's weight (not in the paper; L_text's triplet weight)
    struc_space: str = "text"        # STRUC's constraint on texts or images (Table 2)
    tan2: float = 1.0                # tan²α (the public code's angle_bound = 1)
    trip_margin: float = 0.2         # m of eq. 1 (not in the paper; VSE++'s)
    n_neighbors: int = 200           # k of eq. 5
    sampling: str = "paper"          # paper (uniform over k) / code (first 10 at distance > 0)
    d2v_dim: int = 200               # Doc2Vec: d ∈ R^200
    d2v_window: int = 20             # window k = 20
    d2v_min_count: int = 20          # ignore words seen < 20 times
    d2v_epochs: int = 20             # 20 epochs (public code: 50)
    d2v_mode: str = "code"           # paper: hierarchical softmax; code (default): negative sampling (relevance.doc2vec)
    init_words: bool = True          # word embeddings start from Doc2Vec's word vectors (sec. 3.3; word_dim = d2v_dim)
    words_mode: str = ""             # the Doc2Vec those word vectors come from ("": d2v_mode's; PV-DBOW trains none,
                                     # so Ω from DBOW keeps the PV-DM words: one start for every arm compared)

    def __post_init__(self) -> None:
        super().__post_init__()
        for f, options in (("loss", LOSSES), ("within", WITHIN), ("neighbors", NEIGHBORS),
                           ("struc_space", ("text", "image")), ("sampling", ("paper", "code")),
                           ("words_mode", ("", "paper", "code"))):
            if getattr(self, f) not in options:
                raise ValueError(f"NeighborhoodsConfig.{f} must be one of {options}, got {getattr(self, f)!r}")
        if self.within == "none" and (self.alpha > 0 or self.beta > 0):
            raise ValueError("alpha/beta weigh the within-modality terms; within='none' has none")
        if self.neighbors == "gt" and self.within == "ours":
            raise ValueError("neighbors='gt' (other captions of the image) is STRUC's; use within='struc'")
        for f in ("n_neighbors", "d2v_dim", "d2v_window", "d2v_min_count", "d2v_epochs"):
            if getattr(self, f) < 1:
                raise ValueError(f"NeighborhoodsConfig.{f} must be >= 1, got {getattr(self, f)}")
        if self.init_words and self.word_dim != self.d2v_dim:
            raise ValueError(f"init_words needs word_dim == d2v_dim, got {self.word_dim} and {self.d2v_dim}")

    def doc2vec(self):
        """Ω's settings as :class:`~itmlib.relevance.doc2vec.Doc2VecSettings`."""
        from ..relevance.doc2vec import Doc2VecSettings

        return Doc2VecSettings(self.d2v_dim, self.d2v_window, self.d2v_min_count, self.d2v_epochs, seed=0,
                               mode=self.d2v_mode)

    def weights(self) -> tuple[float, float]:
        """(α, β): the given ones, or the paper's for the loss (the angular ones for vsepp)."""
        a, b = PAPER_WEIGHTS["triplet" if self.loss == "triplet" else "angular"]
        return (a if self.alpha < 0 else self.alpha, b if self.beta < 0 else self.beta)


def mean_region_features(ds: ITMDataset) -> np.ndarray:
    """(n_images, d) float32: each image's mean region feature over its valid regions (padding is zero), the
    image space of OURS (Img NNs) where the paper uses a ResNet feature."""
    cnt = np.maximum(ds.region_counts if ds.region_counts is not None else ds.regions.shape[1], 1)
    return (ds.regions.sum(1) / np.broadcast_to(cnt, (ds.n_images,))[:, None]).astype(np.float32)


def candidate_table(cfg: NeighborhoodsConfig, ds: ITMDataset) -> np.ndarray:
    """(n_captions, K) candidate neighbour captions of every training caption (-1 padded), per ``cfg.neighbors``."""
    n, k = ds.n_captions, ds.captions_per_image
    if cfg.neighbors == "gt":
        if k < 2:
            raise ValueError(f"neighbors='gt' needs several captions per image; {ds.name} has {k}")
        own = ds.img_of_caption[:, None] * k + np.arange(k)
        return np.stack([row[row != c] for c, row in enumerate(own)])
    if cfg.neighbors == "random":
        return np.arange(n)[:, None]                                     # marker: sampled uniformly in batch_loss
    if cfg.neighbors == "text":
        from ..relevance.doc2vec import neighbor_table, omega_vectors

        return neighbor_table(omega_vectors(ds.captions, cfg.doc2vec()), cfg.n_neighbors, cfg.sampling)
    # image space: the mean valid region feature (the paper's ResNet feature), neighbours of the image
    from ..relevance.doc2vec import neighbor_table

    img = neighbor_table(mean_region_features(ds), min(cfg.n_neighbors, ds.n_images - 1), cfg.sampling)
    rows = img[ds.img_of_caption]                                        # the caption's image's neighbours
    off = np.arange(n) % k
    return np.where(rows >= 0, rows * k + off[:, None], -1)             # their caption at the same position


class NeighborhoodsModel(VSEModel):
    """:class:`~itmlib.models.vse.VSEModel` with the neighbour losses as its ``batch_loss``."""

    cfg: NeighborhoodsConfig

    def __init__(self, cfg: NeighborhoodsConfig) -> None:
        super().__init__(cfg)
        self.register_buffer("words_ready", torch.zeros((), dtype=torch.bool))  # saved: a resumed run keeps its own

    def init_word_vectors(self, ds: ITMDataset, vocab: Vocab) -> int:
        """Copy Doc2Vec's word vectors (trained on ``ds``'s texts) into the word embeddings, once per model
        (sec. 3.3: "initialized with word embeddings of size 200 learned on the target dataset").
        Doc2Vec tokenises differently (stop words out); words it does not know keep their random init.
        Returns how many words were set."""
        from ..relevance.doc2vec import train_doc2vec

        if bool(self.words_ready):
            return 0
        settings = self.cfg.doc2vec()
        wv = train_doc2vec(ds.captions, dataclasses.replace(settings, mode=self.cfg.words_mode or settings.mode)).wv
        rows = [(i, wv[w]) for i, w in enumerate(vocab.itos) if w in wv.key_to_index]
        with torch.no_grad():
            if rows:
                w = self.embed.weight
                idx = torch.tensor([i for i, _ in rows], device=w.device)
                vec = torch.from_numpy(np.stack([v for _, v in rows])).to(w)      # the model may be on a GPU
                self.embed.weight[idx] = vec / vec.norm(dim=1, keepdim=True).clamp(min=1e-6) * \
                    self.embed.weight[idx].norm(dim=1, keepdim=True).mean()   # keep the init's scale
            self.words_ready.fill_(True)
        return len(rows)

    def dataset_inputs(self, ds: ITMDataset, vocab: Vocab) -> dict[str, torch.Tensor]:
        if self.cfg.init_words:
            self.init_word_vectors(ds, vocab)
        text = self.text_inputs(ds.captions, vocab)
        if self.cfg.within != "none":
            table = torch.from_numpy(candidate_table(self.cfg, ds))
            text["neighbors"], text["n_neighbors"] = table, (table >= 0).sum(1)
        return text

    def _sample(self, text: dict[str, torch.Tensor], cap: torch.Tensor, n: int) -> torch.Tensor:
        """One neighbour caption per anchor (the global torch RNG, reseeded every epoch by the loop)."""
        if self.cfg.neighbors == "random":
            r = torch.randint(n - 1, cap.shape)
            return r + (r >= cap).long()                                 # any other pair
        cnt = text["n_neighbors"][cap]
        pick = (torch.rand(cap.shape) * cnt.clamp(min=1)).long()
        nb = text["neighbors"][cap].gather(1, pick[:, None]).squeeze(1)
        return torch.where(cnt > 0, nb, cap)                             # no candidate (rare): the pair itself

    def batch_loss(self, ds: ITMDataset, text: dict[str, torch.Tensor], cap_idx: np.ndarray, *, epoch: int,
                   margin: float, hardest: bool, device: str = "cpu") -> torch.Tensor:
        cfg = self.cfg
        cap = torch.from_numpy(np.asarray(cap_idx))
        B = cap.shape[0]
        caps = torch.cat([cap, self._sample(text, cap, ds.n_captions)]) if cfg.within != "none" else cap
        img_ids = torch.from_numpy(ds.img_of_caption)[caps]
        f, m = region_inputs(ds, img_ids.numpy(), cfg.use_boxes)
        x_all = self.encode_image(f.to(device), m.to(device))
        lengths = text["lengths"][caps]
        y_all = self.encode_text(text["tokens"][caps][:, : int(lengths.max())].to(device), lengths)
        x, y = x_all[:B], y_all[:B]
        same = positive_mask_from_ids(img_ids[:B]).to(device)
        neg = ~same                                                      # j ≠ i and not i's image
        if cfg.loss == "vsepp":
            loss, scale = triplet_loss(x @ y.T, margin, hardest, same), float(B)
        else:
            loss, scale = symmetric_npair(x, y, neg, cfg.loss, cfg.tan2, cfg.trip_margin), 1.0   # eq. 4
        if cfg.within == "none":
            return loss
        x2, y2 = x_all[B:], y_all[B:]
        if cfg.within == "ours":
            alpha, beta = cfg.weights()
            # an anchor's sampled neighbour may also be in the batch as another anchor: it is then the
            # positive of eqs. 6-7, never one of their negatives
            neg_w = neg & (cap[None, :] != caps[B:, None]).to(device)
            if cfg.loss == "triplet":
                l_text = triplet_npair(y, y2, y, neg_w, cfg.trip_margin)   # eq. 6, triplet form
                l_img = triplet_npair(x, x2, x, neg_w, cfg.trip_margin)    # eq. 7, triplet form
            else:
                l_text = angular_npair(y, y2, y, neg_w, cfg.tan2)          # eq. 6
                l_img = angular_npair(x, x2, x, neg_w, cfg.tan2)           # eq. 7
            return loss + scale * (alpha * l_text + beta * l_img)          # eq. 8
        # STRUC: anchors' neighbour groups among the 2B items
        own = img_ids[:B, None] == img_ids[None, :]                      # (B, 2B) items of the anchor's image
        if cfg.neighbors == "gt":
            group, ignore = own, None
        else:
            cand = text["neighbors"][cap]                                 # (B, K)
            group = (caps[None, :, None] == cand[:, None, :]).any(-1)
            group[torch.arange(B), torch.arange(B) + B] = True            # the sampled neighbour is one
            ignore = own & ~group                                         # the anchor's image again: neither
        emb = y_all if cfg.struc_space == "text" else x_all
        return loss + scale * cfg.struc_weight * struc_loss(emb, group.to(device), B, cfg.trip_margin,
                                                            None if ignore is None else ignore.to(device))
