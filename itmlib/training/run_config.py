"""A training run's config: :class:`TrainConfig` (the loss, the optimiser, the model's typed config) with
:class:`SAMConfig` (eq. 7's settings), stored flat and hashed by :func:`config_dict` / :func:`config_hash` -
the hash names a run's checkpoint folder and its member record."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from ..config import check_choice, check_positive
from ..losses import SAMConfig
from ..models import ModelConfig, VSEConfig, check_model_config

__all__ = ["SAMConfig", "SAM_FIELDS", "TrainConfig", "config_dict", "config_hash"]


#: SAMConfig's field names: in a flat config (a record's, :meth:`TrainConfig.of`) they set ``sam``
SAM_FIELDS = tuple(f.name for f in dataclasses.fields(SAMConfig))


@dataclass(frozen=True)
class TrainConfig:
    """Everything that determines a training run (its hash names the checkpoint).

    ``model`` is the typed config of the model trained (:class:`~itmlib.models.vse.VSEConfig`
    or :class:`~itmlib.models.teran.TERANConfig`), ``sam`` the SAM loss's settings (read with
    ``loss="sam"``); the rest is the loss and the optimiser. :meth:`of` builds one from flat fields, as a
    member record stores them."""

    loss: str = "triplet"            # "triplet" (VSE++) or "sam"
    margin: float = 0.2
    max_violation: bool = True
    warmup_epochs: int = 1           # epochs summing over all negatives before max_violation (VSE-infinity's warm-up)
    sam: SAMConfig = field(default_factory=SAMConfig)
    epochs: int = 3                  # the most epochs a run trains (its budget)
    patience: int = 0                # early stopping: stop once dev has not improved for this many epochs (0: never)
    batch_size: int = 64
    lr: float = 1e-3                 # VSE++/CVSE use 2e-4 at 1024-d; chosen on the baseline's dev split before any SAM run
    lr_decay_epochs: int = 15
    lr_warmup_iters: int = 0         # linear lr warm-up over the first iterations (TERAN's F30K config: 1000)
    lr_schedule: str = "step"        # "step" (x0.1 every lr_decay_epochs) or "linear" (warm-up, then linear decay to 0)
    phase_one_lr: float = 0.0        # a two-phase model's first-phase peak lr (0: lr)
    grad_clip: float = 2.0
    select_by: str = "rsum"          # "rsum", "nsum" (needs a dev_relevance matrix) or "ndcg" (TERAN; a matrix or mapping)
    seed: int = 0
    data: str = ""                   # a description of the training data (part of the hash)
    model: ModelConfig = field(default_factory=VSEConfig)

    def __post_init__(self) -> None:
        check_model_config(self.model)
        if not isinstance(self.sam, SAMConfig):
            raise ValueError(f"sam must be a SAMConfig, got {type(self.sam).__name__}")
        check_choice("loss", self.loss, ("triplet", "sam"))
        check_choice("select_by", self.select_by, ("rsum", "nsum", "ndcg"))
        check_choice("lr_schedule", self.lr_schedule, ("step", "linear"))
        if self.phase_one_lr < 0:
            raise ValueError(f"phase_one_lr must be >= 0 (0: lr), got {self.phase_one_lr}")
        if self.patience < 0:
            raise ValueError(f"patience must be >= 0 (0: no early stopping), got {self.patience}")
        if self.warmup_epochs < 0 or self.lr_warmup_iters < 0:
            raise ValueError(f"warmup_epochs and lr_warmup_iters must be >= 0, got {self.warmup_epochs}, "
                             f"{self.lr_warmup_iters}")
        for f in ("epochs", "batch_size", "lr_decay_epochs"):
            check_positive(f, getattr(self, f), integer=True)
        check_positive("lr", self.lr)
        check_positive("grad_clip", self.grad_clip)
        if self.batch_size < 2:
            raise ValueError(f"batch_size must be >= 2 (negatives come from the batch), got {self.batch_size}")

    def with_model(self, **fields: Any) -> "TrainConfig":
        """This config with some fields of its model config replaced (e.g. ``pooling="mwsr"``)."""
        return dataclasses.replace(self, model=dataclasses.replace(self.model, **fields))

    def with_sam(self, **fields: Any) -> "TrainConfig":
        """This config with some SAM settings replaced (e.g. ``phi_control="shuffled"``)."""
        return dataclasses.replace(self, sam=dataclasses.replace(self.sam, **fields))

    @classmethod
    def of(cls, **fields: Any) -> "TrainConfig":
        """A config from flat fields - its own and :class:`SAMConfig`'s by name (``loss="sam", tau=3``), the way
        a member record and the explorer name them."""
        sam = {k: fields.pop(k) for k in SAM_FIELDS if k in fields}
        if sam:
            fields["sam"] = dataclasses.replace(fields.get("sam", SAMConfig()), **sam)
        return cls(**fields)


#: fields added after checkpoints existed: left out of the stored config (and the hash) while at these
#: defaults, so every earlier checkpoint keeps its name
_LATER_FIELDS = {"lr_warmup_iters": 0, "sam_weight": 1.0, "phi_control": "none", "phi_self": "include",
                 "sam_warmup": False, "lr_schedule": "step", "phase_one_lr": 0.0,
                "patience": 0}


_LATER_MODEL_FIELDS = {"finetune_layers": 0, "select_after": 0, "rule3": "phrase_attends", "word_init": "random"}


def config_dict(cfg: TrainConfig) -> dict[str, Any]:
    """The config as stored in checkpoints and hashed: SAM's settings flat in their old place (after
    ``warmup_epochs``, so every committed checkpoint and record keeps its hash and its bytes), the model config
    nested with its kind (fields of :data:`_LATER_FIELDS` left out at their defaults)."""
    flat: dict[str, Any] = {}
    for k, v in dataclasses.asdict(cfg).items():
        flat.update(v if k == "sam" else {k: v})
    d = {k: v for k, v in flat.items() if not (k in _LATER_FIELDS and v == _LATER_FIELDS[k])}
    d["model"] = {"kind": cfg.model.kind, **{k: v for k, v in d["model"].items()
                                             if not (k in _LATER_MODEL_FIELDS and v == _LATER_MODEL_FIELDS[k])}}
    return d


def config_hash(cfg: TrainConfig) -> str:
    return hashlib.sha256(json.dumps(config_dict(cfg), sort_keys=True).encode()).hexdigest()[:16]
