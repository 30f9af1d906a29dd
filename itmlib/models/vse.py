"""A VSE-style two-tower model (Faghri et al., VSE++), the baseline of notebooks 03-05.

Image tower: each region feature (bottom-up style, with its box) goes through
a two-layer MLP; the padded regions are masked; a masked mean pools them; the
result is L2-normalised.

    v = normalise( mean_r MLP([f_r, box_r]) )

Text tower: word embeddings, a bidirectional GRU, the mean of the two
directions averaged over the caption's tokens, L2-normalised.

    t = normalise( mean_w (GRU_fwd(w) + GRU_bwd(w)) / 2 )

Similarity is the cosine ``v · t``. Small at the smoke scale (embedding 128),
paper-sized at full scale (1024).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from ..data.base import ITMDataset
from ..data.inputs import region_inputs
from .vocab import Vocab

__all__ = ["VSEConfig", "VSEModel", "padded_bigru", "PADDED_GRU_FROM", "WORD_INITS"]

#: On the CPU, texts whose batch is padded to at least this many tokens go through
#: :func:`padded_bigru` instead of a packed sequence (same outputs up to float rounding).
#: Torch's CPU backward of a packed GRU narrows the whole packed input once per time step
#: (a full-size zero fill and add each), so its cost grows as steps x tokens; measured by
#: ``benchmarks/bench_gru.py`` on one thread, the two paths cross near 30 tokens (captions of
#: ~10 words: packed is ~10% faster; 40-80-word articles: padded is 1.7x faster at a batch of
#: 128 and 2.5x at 256).
PADDED_GRU_FROM = 32


def padded_bigru(gru: nn.GRU, x: torch.Tensor, lengths: torch.Tensor, mask: torch.Tensor
                 ) -> tuple[torch.Tensor, torch.Tensor]:
    """Both directions of a one-layer bidirectional ``batch_first`` GRU over padded ``x`` (B, T, D),
    without packing: (forward outputs, backward outputs), each (B, T, H), exact at the valid
    positions (``mask``), arbitrary at the padded ones.

    The forward direction runs over the padded batch as is (padding comes after a text, so it
    cannot reach a valid output). The backward direction runs forward over each text reversed
    within its length; its output at position t belongs to token ``length - 1 - t``, so the
    outputs are a permutation of the valid backward outputs - enough for a masked sum or mean,
    which is all the towers take of them.
    """
    if gru.num_layers != 1 or not gru.bidirectional or not gru.batch_first:
        raise ValueError("padded_bigru needs a one-layer bidirectional batch_first GRU")
    B, T, D = x.shape
    pos = torch.arange(T, device=x.device)[None, :]
    rev = torch.where(mask, lengths[:, None] - 1 - pos, pos)              # reverse inside the text only
    xr = x.gather(1, rev.unsqueeze(-1).expand(B, T, D))
    h0 = x.new_zeros(1, B, gru.hidden_size)
    wf = [gru.weight_ih_l0, gru.weight_hh_l0, gru.bias_ih_l0, gru.bias_hh_l0]
    wb = [gru.weight_ih_l0_reverse, gru.weight_hh_l0_reverse, gru.bias_ih_l0_reverse, gru.bias_hh_l0_reverse]
    fwd, _ = torch.gru(x, h0, wf, True, 1, 0.0, gru.training, False, True)
    bwd, _ = torch.gru(xr, h0, wb, True, 1, 0.0, gru.training, False, True)
    return fwd, bwd


#: where a VSE++ model's word embeddings start: random, or MiniLM's input embeddings (:func:`init_words`)
WORD_INITS = ("random", "minilm")


@dataclass(frozen=True)
class VSEConfig:
    """Sizes of a VSE++ model. ``region_dim``/``vocab_size`` 0 = taken from the data by
    :func:`itmlib.models.build_model`."""

    kind: ClassVar[str] = "vse"
    region_dim: int = 0
    vocab_size: int = 0
    embed_dim: int = 128
    word_dim: int = 128
    hidden_dim: int = 256
    use_boxes: bool = True
    word_init: str = "random"   # "minilm": word embeddings start from MiniLM's word pieces (word_dim 384)

    def __post_init__(self) -> None:
        for f in ("embed_dim", "word_dim", "hidden_dim"):
            if isinstance(getattr(self, f), bool) or int(getattr(self, f)) != getattr(self, f) or getattr(self, f) < 1:
                raise ValueError(f"{f} must be a positive integer, got {getattr(self, f)!r}")
        if self.word_init not in WORD_INITS:
            raise ValueError(f"word_init must be one of {WORD_INITS}, got {self.word_init!r}")
        if self.word_init == "minilm" and self.word_dim != 384:
            raise ValueError(f"word_init 'minilm' needs word_dim 384 (MiniLM's word pieces), got {self.word_dim}")
        if self.region_dim < 0 or self.vocab_size < 0:
            raise ValueError(f"region_dim and vocab_size must be >= 0 (0: taken from the data), got "
                             f"{self.region_dim}, {self.vocab_size}")


class VSEModel(nn.Module):
    def __init__(self, cfg: VSEConfig) -> None:
        super().__init__()
        if cfg.region_dim < 1 or cfg.vocab_size < 3:
            raise ValueError("VSEModel needs region_dim >= 1 and vocab_size >= 3 (build it with "
                             "itmlib.models.build_model, which reads them off the data)")
        self.cfg = cfg
        d_in = cfg.region_dim + (5 if cfg.use_boxes else 0)
        self.region_mlp = nn.Sequential(nn.Linear(d_in, cfg.hidden_dim), nn.ReLU(), nn.Linear(cfg.hidden_dim, cfg.embed_dim))
        self.embed = nn.Embedding(cfg.vocab_size, cfg.word_dim, padding_idx=Vocab.PAD)
        self.gru = nn.GRU(cfg.word_dim, cfg.embed_dim, batch_first=True, bidirectional=True)

    def init_words(self, vocab: Vocab) -> None:
        """With ``word_init`` "minilm", every word's embedding starts from its MiniLM vector
        (:func:`itmlib.text_encoders.minilm_word_vectors`; padding and the unknown word start at zero); trained on
        from there."""
        if self.cfg.word_init == "minilm":
            from ..text_encoders import minilm_word_vectors

            with torch.no_grad():
                self.embed.weight.zero_()
                self.embed.weight[2:] = torch.from_numpy(minilm_word_vectors(vocab.itos[2:]))

    def encode_image(self, feats: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """(B, R, D) region features and their (B, R) validity mask -> (B, e) unit image vectors.

        The MLP runs on the valid regions only (on the synthetic world about 17 of 36): the
        padded ones would be multiplied by a zero mask, so this is the masked mean of the
        module docstring with half the work (equal up to float rounding, tested)."""
        B, R, D = feats.shape
        rows = mask.reshape(-1).nonzero().squeeze(1)
        h = self.region_mlp(feats.reshape(B * R, D).index_select(0, rows))
        v = h.new_zeros(B, h.shape[1]).index_add_(0, torch.div(rows, R, rounding_mode="floor"), h)
        v = v / mask.sum(1, keepdim=True).clamp(min=1).to(h.dtype)
        return nn.functional.normalize(v, dim=-1)

    def encode_text(self, tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        T = tokens.shape[1]
        m = (torch.arange(T, device=tokens.device)[None, :] < lengths.to(tokens.device)[:, None])
        if x.device.type == "cpu" and T >= PADDED_GRU_FROM:
            fwd, bwd = padded_bigru(self.gru, x, lengths.to(x.device), m)
        else:
            packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
            out, _ = self.gru(packed)
            out, _ = pad_packed_sequence(out, batch_first=True, total_length=T)
            d = self.cfg.embed_dim
            fwd, bwd = out[..., :d], out[..., d:]
        t = ((fwd + bwd) / 2 * m.unsqueeze(-1)).sum(1) / lengths.to(x.dtype).clamp(min=1).unsqueeze(-1).to(x.device)
        return nn.functional.normalize(t, dim=-1)

    def text_inputs(self, captions: list[str], vocab: Vocab) -> dict[str, torch.Tensor]:
        """Token ids and lengths of every caption (rows align with ``captions``), for :meth:`batch_scores`."""
        tokens, lengths = vocab.encode(captions)
        return {"tokens": tokens, "lengths": lengths}

    def batch_scores(self, feats: torch.Tensor, mask: torch.Tensor, text: dict[str, torch.Tensor]) -> torch.Tensor:
        """Training scores (B_images, B_captions) = cosines of the two towers."""
        lengths = text["lengths"]
        tok = text["tokens"][:, : int(lengths.max())]
        return self.encode_image(feats, mask) @ self.encode_text(tok, lengths).T

    def similarity(self, ds: ITMDataset, vocab: Vocab, device: str = "cpu") -> np.ndarray:
        """(n_images, n_captions) cosines of ``ds``."""
        im, cap = self.embed_dataset(ds, vocab, device)
        return im @ cap.T

    @torch.no_grad()
    def embed_dataset(self, ds: ITMDataset, vocab: Vocab, device: str = "cpu", batch_size: int = 512
                      ) -> tuple[np.ndarray, np.ndarray]:
        """(image embeddings (n_images, d), caption embeddings (n_captions, d)) for evaluation."""
        was = self.training
        self.eval()
        ims, caps = [], []
        for s in range(0, ds.n_images, batch_size):
            f, m = region_inputs(ds, np.arange(s, min(s + batch_size, ds.n_images)), self.cfg.use_boxes)
            ims.append(self.encode_image(f.to(device), m.to(device)).cpu())
        for s in range(0, ds.n_captions, batch_size):
            tok, ln = vocab.encode(ds.captions[s:s + batch_size])
            caps.append(self.encode_text(tok.to(device), ln).cpu())
        self.train(was)
        return torch.cat(ims).numpy(), torch.cat(caps).numpy()
