"""Models: one interface, one typed config per model.

- :mod:`itmlib.models.vse`       VSE++ two-tower baseline (:class:`VSEConfig`, :class:`VSEModel`)
- :mod:`itmlib.models.teran`     TERAN / TERN (:class:`TERANConfig`, :class:`TERANModel`)
- :mod:`itmlib.models.ssamt`     SSAMT mask transformer (:class:`SSAMTConfig`, :class:`SSAMTModel`)
- :mod:`itmlib.models.neighborhoods`    VSE++ towers with Thomas & Kovashka's neighbour losses (:class:`NeighborhoodsConfig`)
- :mod:`itmlib.models.alignment` region-word alignment pooling (TERAN eqs. 2-4, 8) and batched scoring
- :mod:`itmlib.models.vocab`     tokenizer and vocabulary of the GRU text encoders

Every model satisfies :class:`ITMModel` (``text_inputs``, ``batch_scores``,
``similarity``): the training loop, the SAM margin analysis and the benchmarks see
only that. :func:`build_model` turns a typed config plus the training data into a
model (region size, vocabulary and boxes are read off the data).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Protocol, Sequence, Union, runtime_checkable

import numpy as np
import torch

from ..data.base import ITMDataset
from .vocab import Vocab
from .vse import VSEConfig, VSEModel

if TYPE_CHECKING:
    from .neighborhoods import NeighborhoodsConfig
    from .ssamt import SSAMTConfig
    from .teran import TERANConfig

__all__ = ["ITMModel", "ModelConfig", "build_model", "VSEConfig", "VSEModel", "Vocab", "MODEL_KINDS"]

MODEL_KINDS = ("vse", "teran", "ssamt", "semnbr")
ModelConfig = Union[VSEConfig, "TERANConfig", "SSAMTConfig", "NeighborhoodsConfig"]


@runtime_checkable
class ITMModel(Protocol):
    """What the training loop and the analyses need of a model."""

    cfg: Any

    def text_inputs(self, captions: Sequence[str], vocab: Vocab) -> dict[str, torch.Tensor]:
        """Tensors for every caption (rows align with ``captions``), sliced per batch."""

    def batch_scores(self, feats: torch.Tensor, mask: torch.Tensor, text: dict[str, torch.Tensor]) -> torch.Tensor:
        """(B_images, B_captions) training scores of one batch, with gradients."""

    def similarity(self, ds: ITMDataset, vocab: Vocab, device: str = "cpu") -> np.ndarray:
        """(n_images, n_captions) scores of a whole split."""


def check_model_config(cfg: Any) -> "ModelConfig":
    """``cfg`` if it is a model config of the course (VSEConfig, TERANConfig, SSAMTConfig or NeighborhoodsConfig,
    a VSEConfig subclass)."""
    from .ssamt import SSAMTConfig
    from .teran import TERANConfig

    if not isinstance(cfg, (VSEConfig, TERANConfig, SSAMTConfig)):
        raise ValueError(f"model must be a VSEConfig, TERANConfig, SSAMTConfig or NeighborhoodsConfig, got {type(cfg).__name__}")
    return cfg


def build_model(cfg: "ModelConfig", train_ds: ITMDataset, vocab: Vocab | None = None) -> tuple[ITMModel, Vocab]:
    """A fresh model of config ``cfg`` for ``train_ds`` and its vocabulary (built from the
    training captions unless given). Uses the current torch seed for the initial weights."""
    cfg = check_model_config(cfg)
    vocab = vocab if vocab is not None else Vocab.build(train_ds.captions)
    sized = dataclasses.replace(cfg, region_dim=int(train_ds.regions.shape[2]), vocab_size=len(vocab),
                                use_boxes=train_ds.boxes is not None)
    if cfg.kind == "teran":
        from .teran import TERANModel

        return TERANModel(sized, vocab), vocab
    if cfg.kind == "ssamt":
        from .ssamt import SSAMTModel

        return SSAMTModel(sized), vocab
    if cfg.kind == "semnbr":
        from .neighborhoods import NeighborhoodsModel

        return NeighborhoodsModel(sized), vocab
    model = VSEModel(sized)
    model.init_words(vocab)
    return model, vocab
