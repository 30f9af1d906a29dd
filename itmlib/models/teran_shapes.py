"""TERAN's two pipelines stage by stage (:func:`shape_walkthrough`): the shape of every tensor from the region
features and caption ids to the pooled scores, as notebook 08 shows it before training."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np
import torch

from ..data.base import ITMDataset
from ..data.inputs import region_inputs
from .alignment import pool_alignments
from .vocab import Vocab

if TYPE_CHECKING:
    from .teran import TERANModel

__all__ = ["shape_walkthrough"]


@torch.no_grad()
def shape_walkthrough(model: TERANModel, ds: ITMDataset, images: Sequence[int] = (0, 1),
                      vocab: Vocab | None = None) -> list[tuple[str, tuple[int, ...]]]:
    """(stage, tensor shape) through both pipelines for a few images and their first captions."""
    was = model.training
    model.eval()
    idx = np.asarray(images)
    f, m = region_inputs(ds, idx, model.cfg.use_boxes)
    caps = [ds.captions_of(int(i))[0] for i in idx]
    text = model.text_inputs(caps, vocab)
    out: list[tuple[str, tuple[int, ...]]] = [("region features + box [x1,y1,x2,y2,area]", tuple(f.shape))]
    x = torch.cat([f.new_zeros(len(idx), 1, f.shape[2]), f], dim=1)
    out.append(("+ zero CLS slot", tuple(x.shape)))
    h = model.box_mlp(x)
    out.append(("box MLP (concat-and-process)", tuple(h.shape)))
    full = torch.cat([m.new_ones(len(idx), 1), m], dim=1)
    h = model.visual_te(h, src_key_padding_mask=~full)
    out.append((f"visual TE x{model.cfg.visual_layers}", tuple(h.shape)))
    h = model.img_proj(h)
    out.append(("linear projection to the joint space", tuple(h.shape)))
    reg, rmask, _ = model.encode_regions(f, m)
    out.append((f"joint TE x{model.cfg.joint_layers}, L2-normalised: region tokens", tuple(reg.shape)))
    out.append(("caption token ids" + (" ([CLS] ... [SEP])" if model.cfg.text_encoder == "bert" else ""),
                tuple(text["ids"].shape)))
    wrd, wmask, _ = model.encode_words(text)
    out.append((f"{model.cfg.text_encoder} -> projection -> TE x{model.cfg.joint_layers}: word tokens", tuple(wrd.shape)))
    A = torch.einsum("ird,twd->itrw", reg, wrd)
    out.append(("alignment matrix A (images x captions x regions x words)", tuple(A.shape)))
    out.append((f"pooled scores ({model.cfg.pooling})", tuple(pool_alignments(A, rmask, wmask, model.cfg.pooling).shape)))
    model.train(was)
    return out
