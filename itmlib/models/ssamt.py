"""SSAMT: the Semantic Structure Aware Multimodal Transformer (Fan et al., sec. 2.2-2.4, 3.2).

Inputs (sec. 2.2). Text: a global sentence node, the tokens (word + position
embedding) and one node per phrase whose input is only its kind's segment embedding
(object / attribute / relation); image: a global image node and the detector regions
through one linear layer (with their boxes, as every model of the course):

    X_T = [t_g, w_1..w_n, q_1..q_P],        X_I = [v_g, r_1..r_R]

**Intra-modality** encoders (one transformer per modality) give the global vectors
ṽ = TE_I(X_I)[v_g], t̃ = TE_T(X_T)[t_g], scored s_intra = cos(ṽ, t̃). The **inter-modality
mask transformer** encodes the concatenation [X_I; X_T] - its two global nodes initialised
with ṽ and t̃ (the paper's symbol for that initialisation was lost; constant node vectors
left the inter scores flat, loss stuck at 2m on random negatives) - with attention masked by the
three rules of sec. 2.3 (:func:`attention_mask`): (1) regions are invisible to the sentence
node, (2) tokens and phrases are invisible to the image node, (3) a phrase node sees no
word outside its phrase. From its outputs:

    s_inter(I, T) = cos(h[v_g], h[t_g])                                  global, eq. 1
    s_loc(I, T)   = ½ (mean_r cos(h_r, h[t_g]) + mean_p cos(h_p, h[v_g]))  region-to-sentence, phrase-to-image, eq. 2
    s(p, I)       = cos(h_p, h[v_g])                                    each token / phrase p, eq. 3
    S(I, T)       = s_intra + λ_inter s_inter + λ_loc s_loc              inference, eq. 5

Training (sec. 3.2) has two phases: ``intra_epochs`` epochs of the intra encoders alone
(eq. 1's intra terms, VSE++'s hardest in-batch negatives after the course's warm-up), then
the inter encoder with the intra encoders *and the input embeddings* frozen; its negatives
are sampled by the frozen intra scores (sec. 2.4: one drawn among the ``negative_pool``
hardest in the batch), one negative sentence and one negative image per positive pair, so
a step encodes 3B pairs (:meth:`SSAMTModel.batch_loss`).

Choices the paper leaves open (its numbers of sec. 3.2 were lost in extraction): sizes are
the course's scale (one config below), Adam with the paper's linear warm-up/decay schedule per
phase (:func:`itmlib.training.train.linear_lr`; peak 1e-3, not the paper's 2e-4 / 6e-4:
:func:`itmlib.papers.ssamt.ssamt_config` says why), local score as the mean of its two parts, the phrase score of
a pair (Table 4) as the *lowest* s(p, I) over its parts, the input embeddings shared by both
encoders. A cross-modal encoder cannot score all pairs of a test split on a CPU: evaluation
ranks by s_intra and re-scores each query's top ``rerank_k`` with eq. 5 (:meth:`SSAMTModel.similarity`).

Inputs, masks and both training phases of one model read top to bottom, as nanoGPT's ``model.py`` does;
what picks the pairs its inter encoder sees (negatives in training,
re-ranking candidates at test) is :mod:`itmlib.models.candidates`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

import numpy as np
import torch
from torch import nn

from ..data import surface_words
from ..data.base import ITMDataset
from ..data.inputs import region_inputs
from ..losses.phrase import matching_loss, phrase_matching_loss
from ..losses.triplet import positive_mask_from_ids, triplet_loss
from ..relevance.phrases import KINDS, LabelIndex, caption_phrases, image_labels, part_masks, phrase_tokens
from .candidates import intra_negatives, rerank
from .masks import RULE3, attention_mask, float_mask
from .vocab import Vocab, tokenize

__all__ = ["SSAMTConfig", "SSAMTModel", "attention_mask"]

_GLOBAL_SEGMENT = len(KINDS) + 1  # segments: 0 token, 1-3 phrase kinds, 4 the sentence node


@dataclass(frozen=True)
class SSAMTConfig:
    """Sizes, loss weights and inference of SSAMT. ``region_dim``/``vocab_size`` 0 = from the data."""

    kind: ClassVar[str] = "ssamt"
    region_dim: int = 0
    vocab_size: int = 0
    use_boxes: bool = True
    embed_dim: int = 64          # paper: BERT-base-like width (numbers lost in extraction)
    heads: int = 4
    layers: int = 2              # per encoder (intra image, intra text, inter)
    ff_dim: int = 128
    dropout: float = 0.0         # paper: some dropout (value lost); on the CPU it doubles a step (benchmarks/bench_ssamt.py)
    max_len: int = 32            # tokens kept per caption
    max_phrases: int = 12        # phrase nodes kept per caption
    phrases: bool = True         # phrase nodes in the text input (Table 3: "w/ phrases")
    phrase_backend: str = "gold"  # "gold" (synthetic caption graphs) or "spacy" (SceneGraphParser)
    intra_epochs: int = 2        # phase 1 (intra only); later epochs train the inter encoder
    global_weight: float = 1.0   # λ_GM (eq. 4)
    local_weight: float = 1.0    # λ_LM; 0 = no local matching (Table 3 "MT+GM")
    phrase_weight: float = 1.0   # λ_PM; 0 = no phrase matching ("w/o PM")
    infer_inter: float = 1.0     # λ_inter of eq. 5
    infer_local: float = 1.0     # λ_loc of eq. 5
    rerank_k: int = 10           # candidates per query re-scored by the inter encoder
    negative_pool: int = 16      # phase 2 draws each negative among the this-many hardest by s_intra (1: the hardest)
    select_after: int = 0        # dev selection skips this many phase-2 epochs too (1: a phase-2 model has trained a whole
                                 # epoch under phase 2's schedule; its first epoch is mostly warm-up)
    rule3: str = "phrase_attends"  # masking rule 3 (itmlib.models.masks): "phrase_attends" (a phrase node attends only
                                   # to its own words) or "words_hidden" (words outside a phrase cannot attend to its node)

    def __post_init__(self) -> None:
        for f in ("embed_dim", "heads", "layers", "ff_dim", "max_len", "max_phrases", "intra_epochs", "rerank_k",
                  "negative_pool"):
            v = getattr(self, f)
            if isinstance(v, bool) or int(v) != v or v < (0 if f == "intra_epochs" else 1):
                raise ValueError(f"{f} must be a positive integer, got {v!r}")
        if self.embed_dim % self.heads:
            raise ValueError(f"embed_dim ({self.embed_dim}) must be divisible by heads ({self.heads})")
        if self.rule3 not in RULE3:
            raise ValueError(f"rule3 must be one of {RULE3}, got {self.rule3!r}")
        if isinstance(self.select_after, bool) or int(self.select_after) != self.select_after or self.select_after < 0:
            raise ValueError(f"select_after must be a non-negative integer, got {self.select_after!r}")
        if self.phrase_backend not in ("gold", "spacy"):
            raise ValueError(f"phrase_backend must be 'gold' or 'spacy', got {self.phrase_backend!r}")
        for f in ("global_weight", "local_weight", "phrase_weight", "infer_inter", "infer_local", "dropout"):
            if getattr(self, f) < 0:
                raise ValueError(f"{f} must be >= 0, got {getattr(self, f)}")

    def phase_one(self) -> "SSAMTConfig":
        """The config of phase 1 alone: fields only the inter phase reads set to their defaults, so that
        every arm agreeing on the intra encoders shares one phase-1 run (:func:`itmlib.training.train.train`)."""
        return dataclasses.replace(self, **{f: getattr(SSAMTConfig, f) for f in _INTER_ONLY})


_INTER_ONLY = ("local_weight", "phrase_weight", "infer_inter", "infer_local", "rerank_k", "negative_pool")


def _encoder(cfg: SSAMTConfig) -> nn.TransformerEncoder:
    # pre-LN: the residual stream carries the inputs (for the inter encoder: the intra global vectors) through
    layer = nn.TransformerEncoderLayer(cfg.embed_dim, cfg.heads, cfg.ff_dim, cfg.dropout, batch_first=True,
                                       norm_first=True)
    return nn.TransformerEncoder(layer, cfg.layers, enable_nested_tensor=False)


def _cos(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (nn.functional.normalize(a, dim=-1) * nn.functional.normalize(b, dim=-1)).sum(-1)


class SSAMTModel(nn.Module):
    def __init__(self, cfg: SSAMTConfig) -> None:
        super().__init__()
        if cfg.region_dim < 1 or cfg.vocab_size < 3:
            raise ValueError("SSAMTModel needs region_dim >= 1 and vocab_size >= 3 (build it with itmlib.models.build_model)")
        self.cfg = cfg
        d = cfg.embed_dim
        # input layer, shared by the intra and inter encoders (frozen in phase 2)
        self.region_proj = nn.Linear(cfg.region_dim + (5 if cfg.use_boxes else 0), d)
        self.word = nn.Embedding(cfg.vocab_size, d, padding_idx=Vocab.PAD)
        self.position = nn.Embedding(cfg.max_len, d)
        self.segment = nn.Embedding(_GLOBAL_SEGMENT + 1, d)
        self.image_node = nn.Parameter(torch.randn(d) * 0.02)
        self.norm_in = nn.LayerNorm(d)
        self.intra_image, self.intra_text, self.inter = _encoder(cfg), _encoder(cfg), _encoder(cfg)
        self.modality = nn.Embedding(2, d)  # inter only: which half a slot belongs to
        self.register_buffer("phase", torch.zeros((), dtype=torch.long))  # 1 once the inter encoder trains

    # ---- inputs -------------------------------------------------------------------------------------------
    def text_inputs(self, captions: Sequence[str], vocab: Vocab, phrases: Sequence[Sequence[tuple]] | None = None,
                    surface: dict | None = None) -> dict[str, Any]:
        """Token ids, phrase kinds and each phrase's token cover for ``captions``, plus each caption's parts
        (tokens as 1-tuples, then phrases) for phrase matching. ``phrases`` is required when the model has
        phrase nodes (:meth:`dataset_inputs` reads them off a dataset)."""
        cfg = self.cfg
        if cfg.phrases and phrases is None:
            raise ValueError("SSAMT with phrase nodes needs the captions' phrases: use dataset_inputs(ds, vocab)")
        words = [tokenize(c)[: cfg.max_len] or ["<unk>"] for c in captions]
        T = max(len(w) for w in words)
        P = cfg.max_phrases if cfg.phrases else 0
        ids = torch.zeros(len(words), T, dtype=torch.long)
        kinds = torch.zeros(len(words), P, dtype=torch.long)
        cover = torch.zeros(len(words), P, T, dtype=torch.bool)
        parts: list[list[tuple]] = []
        for i, ws in enumerate(words):
            ids[i, :len(ws)] = torch.tensor([vocab.stoi.get(w, Vocab.UNK) for w in ws])
            ph = [tuple(p) for p in phrases[i]][:P] if cfg.phrases else []
            for j, p in enumerate(ph):
                kinds[i, j] = len(p)
                pos = phrase_tokens(ws, p, surface)
                if pos:
                    cover[i, j, pos] = True
            parts.append([(w,) for w in ws] + ph)
        return {"tokens": ids, "lengths": torch.tensor([len(w) for w in words]), "kinds": kinds, "cover": cover,
                "parts": parts}

    def dataset_inputs(self, ds: ITMDataset, vocab: Vocab) -> dict[str, Any]:
        """:meth:`text_inputs` of every caption of ``ds`` with its phrases (``phrase_backend``), and the
        semantic labels of every image (a :class:`~itmlib.relevance.phrases.LabelIndex`, key ``labels``)."""
        backend = self.cfg.phrase_backend
        if backend == "gold" and ds.graphs is None:
            raise ValueError(f"{ds.name}/{ds.split} has no gold caption graphs; use phrase_backend='spacy'")
        phrases = caption_phrases(ds.captions, backend, graphs=ds.graphs)
        out = self.text_inputs(ds.captions, vocab, phrases if self.cfg.phrases else None, surface_words(ds))
        out["labels"] = LabelIndex(image_labels(phrases, [tokenize(c) for c in ds.captions], ds.captions_per_image))
        return out

    @staticmethod
    def _rows(text: dict[str, Any], idx: np.ndarray) -> dict[str, torch.Tensor]:
        sel = torch.as_tensor(np.asarray(idx))
        L = int(text["lengths"][sel].max())
        kinds = text["kinds"][sel]
        P = int((kinds > 0).sum(1).max()) if kinds.shape[1] else 0
        return {"tokens": text["tokens"][sel, :L], "lengths": text["lengths"][sel], "kinds": kinds[:, :P],
                "cover": text["cover"][sel, :P, :L]}

    def _embed_text(self, t: dict[str, torch.Tensor], device: str) -> tuple[torch.Tensor, ...]:
        tok, kinds = t["tokens"].to(device), t["kinds"].to(device)
        N, T = tok.shape
        x_tok = self.word(tok) + self.position(torch.arange(T, device=device))[None] + self.segment.weight[0]
        x_ph = self.segment(kinds)
        x_g = self.segment.weight[_GLOBAL_SEGMENT].expand(N, 1, -1)
        x = self.norm_in(torch.cat([x_g, x_tok, x_ph], 1))
        token_valid = torch.arange(T, device=device)[None, :] < t["lengths"].to(device)[:, None]
        return x, token_valid, kinds > 0, t["cover"].to(device)

    def _embed_image(self, feats: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        R = max(int(mask.sum(1).max()), 1)  # regions are a valid prefix: trim the padding
        feats, mask = feats[:, :R], mask[:, :R]
        x = torch.cat([self.image_node.expand(feats.shape[0], 1, -1), self.region_proj(feats)], 1)
        return self.norm_in(x), mask

    # ---- intra-modality ------------------------------------------------------------------------------------
    def encode_image(self, feats: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """(B, R, D) regions -> (B, d) unit intra image vectors ṽ."""
        x, valid = self._embed_image(feats, mask)
        pad = ~torch.cat([valid.new_ones(valid.shape[0], 1), valid], 1)
        return nn.functional.normalize(self.intra_image(x, src_key_padding_mask=pad)[:, 0], dim=-1)

    def encode_text(self, t: dict[str, torch.Tensor], device: str = "cpu") -> torch.Tensor:
        """Rows of :meth:`text_inputs` -> (N, d) unit intra sentence vectors t̃ (rule 3 applies)."""
        x, tv, pv, cover = self._embed_text(t, device)
        allowed = attention_mask(tv, tv, pv, cover, image=False, rule3=self.cfg.rule3)
        return nn.functional.normalize(self.intra_text(x, mask=float_mask(allowed, self.cfg.heads))[:, 0], dim=-1)

    def batch_scores(self, feats: torch.Tensor, mask: torch.Tensor, text: dict[str, torch.Tensor]) -> torch.Tensor:
        """(B_images, B_captions) intra-modality scores s_intra of one batch."""
        return self.encode_image(feats, mask) @ self.encode_text(text, str(feats.device)).T

    # ---- inter-modality ------------------------------------------------------------------------------------
    def pair_scores(self, feats: torch.Tensor, mask: torch.Tensor, t: dict[str, torch.Tensor],
                    intra: tuple[torch.Tensor, torch.Tensor] | None = None) -> dict[str, torch.Tensor]:
        """Pairs (image b, caption b) -> ``inter`` (B,), ``local`` (B,), ``nodes`` (B, T + P) phrase-to-image
        scores s(p, I) of the caption's tokens then phrases, ``node_valid`` (B, T + P).

        The two global nodes start from the (frozen) intra vectors ṽ, t̃ of the pair (``intra``, computed
        when not given), scaled to the width of the other inputs."""
        device = str(feats.device)
        if intra is None:
            with torch.no_grad():
                intra = (self.encode_image(feats, mask), self.encode_text(t, device))
        xi, rv = self._embed_image(feats, mask)
        xt, tv, pv, cover = self._embed_text(t, device)
        scale = self.cfg.embed_dim ** 0.5
        xi = torch.cat([intra[0][:, None] * scale, xi[:, 1:]], 1)
        xt = torch.cat([intra[1][:, None] * scale, xt[:, 1:]], 1)
        x = torch.cat([xi + self.modality.weight[0], xt + self.modality.weight[1]], 1)
        allowed = attention_mask(rv, tv, pv, cover, rule3=self.cfg.rule3)
        h = self.inter(x, mask=float_mask(allowed, self.cfg.heads))
        R = rv.shape[1]
        v_g, t_g = h[:, 0], h[:, 1 + R]
        regions, nodes = h[:, 1:1 + R], h[:, 2 + R:]
        node_valid = torch.cat([tv, pv], 1)
        r2s = (_cos(regions, t_g[:, None]) * rv).sum(1) / rv.sum(1).clamp(min=1)
        s_nodes = _cos(nodes, v_g[:, None])
        p2i = (s_nodes * node_valid).sum(1) / node_valid.sum(1).clamp(min=1)
        return {"inter": _cos(v_g, t_g), "local": (r2s + p2i) / 2, "nodes": s_nodes, "node_valid": node_valid}

    def _intra_modules(self) -> list[nn.Module]:
        return [self.region_proj, self.word, self.position, self.segment, self.norm_in, self.intra_image, self.intra_text]

    def first_selectable_epoch(self, epochs: int) -> int:
        """Dev selection skips the intra-only epochs when an inter phase follows, and ``select_after`` epochs of
        that phase (0-based epoch index; never past the last epoch)."""
        if epochs <= self.cfg.intra_epochs:
            return 0
        return min(self.cfg.intra_epochs + self.cfg.select_after, epochs - 1)

    def batch_loss(self, ds: ITMDataset, text: dict[str, Any], cap_idx: np.ndarray, *, epoch: int, margin: float,
                   hardest: bool, device: str = "cpu") -> torch.Tensor | None:
        """One training step's loss: eq. 1's intra terms in phase 1 (``epoch < intra_epochs``), eq. 4 after;
        None for a phase-2 batch that has no negative (its captions all describe one image), which is skipped."""
        cfg = self.cfg
        img_idx = ds.img_of_caption[cap_idx]
        feats, mask = region_inputs(ds, img_idx, cfg.use_boxes)
        feats, mask = feats.to(device), mask.to(device)
        rows = self._rows(text, cap_idx)
        same = positive_mask_from_ids(torch.from_numpy(img_idx)).to(device)
        if epoch < cfg.intra_epochs:
            self.phase.fill_(0)
            return cfg.global_weight * triplet_loss(self.batch_scores(feats, mask, rows), margin, hardest, same)
        if int(self.phase) == 0:
            self.phase.fill_(1)
        for m in self._intra_modules():
            m.eval()
            m.requires_grad_(False)
        B = len(cap_idx)
        with torch.no_grad():  # negatives sampled by the frozen intra scores (sec. 2.4)
            v_intra, t_intra = self.encode_image(feats, mask), self.encode_text(rows, device)
            negs = intra_negatives(v_intra @ t_intra.T, same, cfg.negative_pool)
        if negs is None:   # every caption of the batch describes one image (a last, small batch): no negative
            return None
        neg_cap, neg_img = negs
        who_img = np.concatenate([np.arange(B), np.arange(B), neg_img])      # (I,T), (I,T⁻), (I⁻,T)
        who_cap = np.concatenate([np.arange(B), neg_cap, np.arange(B)])
        out = self.pair_scores(feats[who_img], mask[who_img], self._rows(text, np.asarray(cap_idx)[who_cap]),
                               intra=(v_intra[who_img], t_intra[who_cap]))
        g, lo = out["inter"].view(3, B), out["local"].view(3, B)
        loss = cfg.global_weight * matching_loss(g[0], g[1], g[2], margin)
        if cfg.local_weight:
            loss = loss + cfg.local_weight * matching_loss(lo[0], lo[1], lo[2], margin)
        if cfg.phrase_weight:
            n_tok = int(text["lengths"][torch.as_tensor(np.asarray(cap_idx)[who_cap])].max())  # as pair_scores lays out
            pos, neg = part_masks(text["labels"], text["parts"], text["lengths"], np.concatenate([img_idx, img_idx[neg_img]]),
                                  np.concatenate([np.asarray(cap_idx)[neg_cap], cap_idx]), n_tok, out["nodes"].shape[1])
            valid = out["node_valid"][B:]
            loss = loss + cfg.phrase_weight * phrase_matching_loss(out["nodes"][B:], pos.to(device) & valid,
                                                                   neg.to(device) & valid, margin)
        return loss

    # ---- evaluation ----------------------------------------------------------------------------------------
    @torch.no_grad()
    def score_pairs(self, ds: ITMDataset, text: dict[str, Any], images: np.ndarray, captions: np.ndarray,
                    device: str = "cpu", batch_size: int = 512) -> dict[str, np.ndarray]:
        """Inter scores of the pairs (images[n], captions[n]) of ``ds``, batched: ``inter``, ``local``,
        ``phrase`` (the lowest s(p, I) over the caption's phrase nodes; NaN for a caption without one, which
        Table 4's phrase score cannot judge) and ``nodes`` (list of per-part arrays)."""
        was = self.training
        self.eval()
        out: dict[str, list] = {"inter": [], "local": [], "phrase": [], "nodes": []}
        for s in range(0, len(images), batch_size):
            im, cp = np.asarray(images[s:s + batch_size]), np.asarray(captions[s:s + batch_size])
            f, m = region_inputs(ds, im, self.cfg.use_boxes)
            rows = self._rows(text, cp)
            r = self.pair_scores(f.to(device), m.to(device), rows)
            nodes, valid = r["nodes"].cpu(), r["node_valid"].cpu()
            out["inter"].append(r["inter"].cpu().numpy())
            out["local"].append(r["local"].cpu().numpy())
            # the pair's phrase score: its lowest-scoring phrase node (NaN without one)
            T = rows["tokens"].shape[1]
            low = nodes[:, T:].masked_fill(~valid[:, T:], np.inf).min(1).values if nodes.shape[1] > T else \
                torch.full((len(cp),), np.inf)
            out["phrase"].append(torch.where(torch.isinf(low), torch.nan, low).numpy())
            out["nodes"] += [n[v].numpy() for n, v in zip(nodes, valid)]
        self.train(was)
        return {k: (np.concatenate(v) if k != "nodes" and v else v) for k, v in out.items()}

    @torch.no_grad()
    def intra_similarity(self, ds: ITMDataset, text: dict[str, Any], device: str = "cpu", batch_size: int = 512
                         ) -> np.ndarray:
        was = self.training
        self.eval()
        ims = [self.encode_image(*(x.to(device) for x in region_inputs(ds, np.arange(s, min(s + batch_size, ds.n_images)),
                                                                          self.cfg.use_boxes))).cpu()
               for s in range(0, ds.n_images, batch_size)]
        caps = [self.encode_text(self._rows(text, np.arange(s, min(s + batch_size, ds.n_captions))), device).cpu()
                for s in range(0, ds.n_captions, batch_size)]
        self.train(was)
        return (torch.cat(ims) @ torch.cat(caps).T).numpy()

    def similarity(self, ds: ITMDataset, vocab: Vocab, device: str = "cpu", *, k: int | None = None,
                   text: dict[str, Any] | None = None) -> np.ndarray:
        """(n_images, n_captions) scores: s_intra everywhere; once the inter encoder is trained, each image's and
        each caption's top ``k`` (default ``rerank_k``) by s_intra re-scored by eq. 5 and ranked above the rest."""
        if text is None:  # the dev split is scored every epoch: build its inputs once
            cache = self.__dict__.setdefault("_inputs_cache", {})
            if cache.get("ds") is not ds:
                cache.update(ds=ds, text=self.dataset_inputs(ds, vocab))
            text = cache["text"]
        s = self.intra_similarity(ds, text, device)
        k = self.cfg.rerank_k if k is None else k
        if int(self.phase) == 0 or k == 0:
            return s

        def inter(im: np.ndarray, cp: np.ndarray) -> np.ndarray:   # eq. 5's inter terms
            r = self.score_pairs(ds, text, im, cp, device)
            return self.cfg.infer_inter * r["inter"] + self.cfg.infer_local * r["local"]

        return rerank(s, k, inter)
