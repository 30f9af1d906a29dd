"""One training loop for every notebook: seeded, resumable, selecting the best epoch on dev.

``train(cfg, train_ds, dev_ds, ...)`` trains the model of ``cfg.model`` - a typed
:class:`~itmlib.models.vse.VSEConfig` (VSE++) or :class:`~itmlib.models.teran.TERANConfig`
(TERAN, the VSE++ hinge on its pooled alignment scores) - with the triplet loss (eq. 6)
or SAM (eq. 7). Every model satisfies :class:`~itmlib.models.ITMModel` (``text_inputs``,
``batch_scores``, ``similarity``); one batch step, :func:`score_batch`, feeds the loop,
the SAM margin analysis and the benchmarks. What makes runs reproducible and resumable:

* every epoch reseeds torch and numpy from ``(seed, epoch)``, so the shuffle,
  the random negatives and dropout of epoch e do not depend on how the run got
  there - an interrupted run resumed from its checkpoint ends bit-identical;
* checkpoints live in ``<ckpt_dir>/<name>-<hash of the config>/`` (``last.pt``
  after each epoch, ``best.pt`` for the selected epoch) and hold the config
  they came from; they are loaded with ``torch.load(weights_only=True)``; a
  finished run is returned from its checkpoint without training again;
* a model may bring its own pieces: ``dataset_inputs(ds, vocab)`` (inputs that need more than
  the captions), ``batch_loss(...)`` (its own losses in place of eq. 6/7),
  ``first_selectable_epoch(epochs)``, and a config with ``phase_one()`` whose first
  ``intra_epochs`` are trained as their own run, shared by every config that agrees on them
  (SSAMT, :mod:`itmlib.models.ssamt`);
* the dev score used for selection is Rsum (``select_by="rsum"``), the NCS
  sum with ``dev_relevance`` (``"nsum"``, as the SAM code selects), or the sum of
  NDCG@25 over both directions and every relevance of a ``dev_relevance`` mapping
  (``"ndcg"``, as TERAN selects, sec. 7). A mapping ``{"rouge": N1, "sg": N2}`` logs
  ``dev_ndcg_<name>_<direction>`` and ``dev_ndcg_sum`` every epoch whatever the
  selection (TERAN's Figs. 3/6 draw NDCG over training).

SAM's CIDEr-D uses the document frequencies of the training subset actually
used (recomputed for every reduced-data subset), through one
:class:`~itmlib.relevance.CiderDIndex` built before the first epoch.
Gradient clipping (norm 2), Adam. Learning rate (``lr_schedule``): ``"step"``, x0.1 every
``lr_decay_epochs``, optionally raised linearly from 0 over the first ``lr_warmup_iters`` iterations
(TERAN's F30K config); or ``"linear"`` (:func:`linear_lr`, SSAMT's "linear-decay scheduler with 10K
update steps, 1K warm-up steps"): up linearly over the first tenth of the run's update steps (or
``lr_warmup_iters``), then down linearly to 0 at its last step. A two-phase model's second phase is
a run of its own for the schedule (it starts at its own warm-up), and ``phase_one_lr`` (0: ``lr``) is
the first phase's peak (SSAMT: 2e-4 intra, 6e-4 inter).
With ``max_violation`` the triplet loss sums over all negatives for the first
``warmup_epochs`` epochs and takes the hardest negative after (VSE-infinity's
warm-up): hardest negatives from a random start leave the loss stuck at
``2 B margin`` (vsepp#27), which we saw too at the smoke scale.

Over 300 lines on purpose: the loop, its checkpoints, the dev selection and :func:`evaluate` must
agree on one config hash and one batch step, and read top to bottom in one place.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd
import torch
from ..console import bar, log_line

from ..config import check_choice, check_positive, resolve_device
from ..data.base import ITMDataset
from ..losses import SAMPLINGS, batch_phi, phi_index, sam_loss, triplet_loss
from ..losses.triplet import positive_mask_from_ids
from ..metrics import ncs, ndcg, retrieval_recall
from ..data.inputs import region_inputs
from ..models import ITMModel, ModelConfig, VSEConfig, build_model, check_model_config
from ..models.vocab import Vocab
from ..paths import resolve_path

__all__ = ["TrainConfig", "TrainResult", "train", "evaluate", "dev_scores", "config_hash", "score_batch", "DEV_NDCG_K",
           "linear_lr",
           "checkpoint_folder", "epochs_done"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrainConfig:
    """Everything that determines a training run (its hash names the checkpoint).

    ``model`` is the typed config of the model trained (:class:`~itmlib.models.vse.VSEConfig`
    or :class:`~itmlib.models.teran.TERANConfig`); the rest is the loss and the optimiser."""

    loss: str = "triplet"            # "triplet" (VSE++) or "sam"
    margin: float = 0.2
    max_violation: bool = True
    warmup_epochs: int = 1           # epochs summing over all negatives before max_violation (VSE-infinity's warm-up)
    tau: float = 5.0                 # SAM temperature
    sampling: str = "soft"           # SAM negatives: hard / soft / random
    sam_mode: str = "paper"          # "paper" (eq. 7) or "reference" (public code)
    keep_triplet: bool = False       # SAM + eq. 6
    sam_weight: float = 1.0          # weight of the SAM hinge (the public code: cider_weight 5-10 on top of its losses)
    phi_control: str = "none"        # "shuffled": the negatives' φ permuted within the batch (SAM's control arm)
    phi_self: str = "include"        # "leave_one_out": G_p without the positive's own caption c_p
    sam_warmup: bool = False         # during warmup_epochs the SAM hinge sums over all negatives, as the triplet does
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
        check_choice("loss", self.loss, ("triplet", "sam"))
        check_choice("sampling", self.sampling, SAMPLINGS)
        check_choice("sam_mode", self.sam_mode, ("paper", "reference"))
        check_choice("select_by", self.select_by, ("rsum", "nsum", "ndcg"))
        check_choice("phi_control", self.phi_control, ("none", "shuffled"))
        check_choice("phi_self", self.phi_self, ("include", "leave_one_out"))
        check_choice("lr_schedule", self.lr_schedule, ("step", "linear"))
        if self.phase_one_lr < 0:
            raise ValueError(f"phase_one_lr must be >= 0 (0: lr), got {self.phase_one_lr}")
        if self.sam_weight < 0:
            raise ValueError(f"sam_weight must be >= 0, got {self.sam_weight}")
        check_positive("tau", self.tau)
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


#: fields added after checkpoints existed: left out of the stored config (and the hash) while at these
#: defaults, so every earlier checkpoint keeps its name
_LATER_FIELDS = {"lr_warmup_iters": 0, "sam_weight": 1.0, "phi_control": "none", "phi_self": "include",
                 "sam_warmup": False, "lr_schedule": "step", "phase_one_lr": 0.0,
                "patience": 0}


def linear_lr(peak: float, t: int, total: int, warmup: int) -> float:
    """The ``"linear"`` schedule's learning rate at update ``t`` (0-based) of a run of ``total`` updates:

        lr(t) = peak · (t + 1) / W                 for t < W (warm-up)
        lr(t) = peak · (total - t) / (total - W)   after (linear decay, 0 after the last update)
    """
    if total < 1 or not 0 <= warmup < total:
        raise ValueError(f"need total >= 1 and 0 <= warmup < total, got total={total}, warmup={warmup}")
    if t < warmup:
        return peak * (t + 1) / warmup
    return peak * max(0, total - t) / (total - warmup)
_LATER_MODEL_FIELDS = {"finetune_layers": 0, "select_after": 0, "rule3": "phrase_attends"}


def config_dict(cfg: TrainConfig) -> dict[str, Any]:
    """The config as stored in checkpoints and hashed: the model config nested with its kind
    (fields of :data:`_LATER_FIELDS` left out at their defaults)."""
    d = {k: v for k, v in dataclasses.asdict(cfg).items() if not (k in _LATER_FIELDS and v == _LATER_FIELDS[k])}
    d["model"] = {"kind": cfg.model.kind, **{k: v for k, v in d["model"].items()
                                             if not (k in _LATER_MODEL_FIELDS and v == _LATER_MODEL_FIELDS[k])}}
    return d


def config_hash(cfg: TrainConfig) -> str:
    return hashlib.sha256(json.dumps(config_dict(cfg), sort_keys=True).encode()).hexdigest()[:16]


@dataclass
class TrainResult:
    model: ITMModel
    vocab: Vocab
    history: pd.DataFrame
    best_epoch: int
    checkpoint: Path
    seconds: float
    #: the training seconds earlier calls spent on the epochs this one resumed from (0 for a fresh run; NaN
    #: where the checkpoint predates keeping them), so a resumed run's record can state its whole cost
    earlier_seconds: float = 0.0


def evaluate(model: ITMModel, vocab: Vocab, ds: ITMDataset, relevance: np.ndarray | None = None,
             device: str = "cpu", sims: np.ndarray | None = None) -> dict[str, float]:
    """Recall (R^V, both ways) and, with ``relevance``, NCS with and without GT items.

    ``sims`` (n_images, n_captions) skips scoring when already computed."""
    if sims is None:
        sims = model.similarity(ds, vocab, device)
    out = retrieval_recall(sims, ds.img_of_caption)
    if relevance is not None:
        out |= ncs(sims, relevance, ds.img_of_caption)
        out["nsum_nogt"] = ncs(sims, relevance, ds.img_of_caption, include_gt=False)["nsum"]
    return out


#: NDCG cut-off of the dev score of ``select_by="ndcg"`` (TERAN's NDCG@25)
DEV_NDCG_K = 25


def dev_scores(model: ITMModel, vocab: Vocab, dev_ds: ITMDataset,
               dev_relevance: np.ndarray | Mapping[str, np.ndarray] | None, device: str = "cpu",
               ndcg_k: int = DEV_NDCG_K) -> dict[str, float]:
    """The per-epoch dev metrics: :func:`evaluate` (NCS with a relevance matrix) plus, with a mapping of
    relevances (or a matrix, named ``"rel"``), NDCG@``ndcg_k`` per relevance and direction and their sum."""
    sims = model.similarity(dev_ds, vocab, device)
    matrix = None if dev_relevance is None or isinstance(dev_relevance, Mapping) else dev_relevance
    out = evaluate(model, vocab, dev_ds, matrix, device, sims=sims)
    rels = dict(dev_relevance) if isinstance(dev_relevance, Mapping) else {"rel": matrix} if matrix is not None else {}
    if rels:
        for name, rel in rels.items():
            for d, v in ndcg(sims, rel, dev_ds.img_of_caption, k=ndcg_k).items():
                out[f"ndcg_{name}_{d.split('_')[0]}"] = v
        out["ndcg_sum"] = float(sum(v for k, v in out.items() if k.startswith("ndcg_")))
    return out


def _epoch_seed(seed: int, epoch: int) -> int:
    """Seed of epoch ``epoch`` (-1: the model's initial weights)."""
    return int(np.random.SeedSequence([seed, epoch + 1, 0x7EA1]).generate_state(1)[0])


def score_batch(model: ITMModel, ds: ITMDataset, text: dict[str, torch.Tensor], cap_idx: np.ndarray,
                device: str = "cpu") -> tuple[torch.Tensor, torch.Tensor, np.ndarray]:
    """One batch step's forward pass, shared by :func:`train`, the SAM margin analysis and the benchmarks.

    Captions ``cap_idx`` of ``ds`` with their images ``img_idx``: returns the
    (B, B) scores S[i, j] = s(image of caption i, caption j) of ``model.batch_scores``,
    the positive mask P[i, j] = (img_idx[i] == img_idx[j]) (same-image pairs are never
    negatives) and ``img_idx``. ``text`` is ``model.text_inputs`` of all of ``ds.captions``.
    """
    img_idx = ds.img_of_caption[cap_idx]
    f, m = region_inputs(ds, img_idx, model.cfg.use_boxes)
    sel = torch.from_numpy(np.asarray(cap_idx))
    scores = model.batch_scores(f.to(device), m.to(device), {k: v[sel].to(device) for k, v in text.items()})
    same = positive_mask_from_ids(torch.from_numpy(img_idx)).to(device)
    return scores, same, img_idx


def _load(path: Path) -> dict[str, Any]:
    return torch.load(path, map_location="cpu", weights_only=True)


def _save(path: Path, obj: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def checkpoint_folder(cfg: TrainConfig, name: str, ckpt_dir: str | os.PathLike[str]) -> Path:
    """Where :func:`train` keeps the run of ``cfg`` named ``name``: ``<ckpt_dir>/<name>-<config hash>``."""
    return resolve_path(ckpt_dir) / f"{name}-{config_hash(cfg)}"


def _phase_one(cfg: TrainConfig) -> tuple[TrainConfig, str] | None:
    """A two-phase model's first phase as its own run (config, name), or None."""
    if hasattr(cfg.model, "phase_one") and 0 < cfg.model.intra_epochs < cfg.epochs:
        return dataclasses.replace(cfg, epochs=cfg.model.intra_epochs, model=cfg.model.phase_one(),
                                   lr=cfg.phase_one_lr or cfg.lr, phase_one_lr=0.0, patience=0), \
            f"{cfg.model.kind}-phase1"
    return None


def epochs_done(cfg: TrainConfig, name: str, ckpt_dir: str | os.PathLike[str]) -> int:
    """How many of ``cfg.epochs`` the checkpoints already hold (a two-phase model counts its shared first
    phase): ``cfg.epochs`` means :func:`train` will load, not train. Reads ``progress.json`` (written with
    every ``last.pt``), or ``last.pt`` itself for checkpoints written before it existed."""
    def saved(folder: Path) -> int:
        if (folder / "progress.json").is_file():
            p = json.loads((folder / "progress.json").read_text())
            return cfg.epochs if p.get("stopped") else int(p["epoch"])
        return int(_load(folder / "last.pt")["epoch"]) if (folder / "last.pt").is_file() else 0

    n = saved(checkpoint_folder(cfg, name, ckpt_dir))
    p1 = _phase_one(cfg)
    if n == 0 and p1 is not None:
        n = saved(checkpoint_folder(*p1, ckpt_dir))
    return min(n, cfg.epochs)


def train(cfg: TrainConfig, train_ds: ITMDataset, dev_ds: ITMDataset, *,
          dev_relevance: np.ndarray | Mapping[str, np.ndarray] | None = None,
          ckpt_dir: str | os.PathLike[str] = "runs/checkpoints", name: str = "vse", device: str = "auto",
          progress: bool = True, stop_after: int | None = None) -> TrainResult:
    """Train (or resume, or load a finished run) and return the best-on-dev model.

    ``stop_after``: stop after that many epochs of this call (to simulate an interruption in tests).
    """
    if cfg.select_by == "nsum" and (dev_relevance is None or isinstance(dev_relevance, Mapping)):
        raise ValueError("select_by='nsum' needs dev_relevance (an (n_images, n_captions) relevance matrix of dev)")
    if cfg.select_by == "ndcg" and dev_relevance is None:
        raise ValueError("select_by='ndcg' needs dev_relevance (a relevance matrix of dev, or a mapping name -> matrix, "
                         "e.g. itmlib.papers.teran.teran_dev_relevance(dev_ds))")
    if train_ds.regions.shape[1] == 0:
        raise ValueError(f"{train_ds.name}/{train_ds.split} has no image features to train on")
    device = resolve_device(device)
    folder = checkpoint_folder(cfg, name, ckpt_dir)
    folder.mkdir(parents=True, exist_ok=True)
    last, best = folder / "last.pt", folder / "best.pt"
    (folder / "config.json").write_text(json.dumps(config_dict(cfg), indent=1, sort_keys=True))
    state = _load(last) if last.is_file() else None
    shared = None
    if state is None and _phase_one(cfg) is not None:
        # a two-phase model (SSAMT): the first phase is its own run, shared by every config that agrees on it
        p1, p1_name = _phase_one(cfg)
        r1 = train(p1, train_ds, dev_ds, dev_relevance=dev_relevance, ckpt_dir=ckpt_dir, name=p1_name,
                   device=device, progress=progress)
        shared = _load(r1.checkpoint.parent / "last.pt")
    torch.manual_seed(_epoch_seed(cfg.seed, -1))  # the initial weights
    vocab_words = state["vocab"] if state else shared["vocab"] if shared else None
    model, vocab = build_model(cfg.model, train_ds, Vocab(vocab_words) if vocab_words is not None else None)
    model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=cfg.lr_decay_epochs, gamma=0.1)
    history: list[dict[str, float]] = []
    start, best_score, best_epoch = 0, -np.inf, -1
    earlier = 0.0
    if state:
        if state["config"] != config_dict(cfg):
            raise ValueError(f"{last} holds another config; delete the folder or change ckpt_dir")
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        start, best_score, best_epoch = int(state["epoch"]), float(state["best_score"]), int(state["best_epoch"])
        history = [dict(h) for h in state["history"]]
        earlier = float(state.get("seconds", np.nan))
        if state.get("stopped"):   # stopped early: nothing left to train
            start = cfg.epochs
        logger.info("resuming %s at epoch %d", folder.name, start)
    elif shared:
        model.load_state_dict(shared["model"])
        start, history = int(shared["epoch"]), [dict(h) for h in shared["history"]]
    cider = None
    if cfg.loss == "sam" and start < cfg.epochs:
        cider = phi_index(train_ds)
    # a model that needs more than the captions (SSAMT: phrases and image labels) reads them off the dataset
    text = model.dataset_inputs(train_ds, vocab) if hasattr(model, "dataset_inputs") else \
        model.text_inputs(train_ds.captions, vocab)
    first_selectable = model.first_selectable_epoch(cfg.epochs) if hasattr(model, "first_selectable_epoch") else 0
    first_epoch = cfg.model.intra_epochs if _phase_one(cfg) is not None else 0   # where this run's schedule starts
    t0 = time.perf_counter()
    ran = 0
    if start < cfg.epochs:
        log_line(f"[train] {name}: training epochs {start} -> {cfg.epochs} ({train_ds.n_images} images, device {device})")
    for epoch in range(start, cfg.epochs):
        if stop_after is not None and ran >= stop_after:
            break
        es = _epoch_seed(cfg.seed, epoch)
        torch.manual_seed(es)
        rng = np.random.default_rng(es)
        gen = torch.Generator().manual_seed(es)
        shuffle_gen = torch.Generator().manual_seed(es ^ 0x5A11)   # the shuffled-φ control's own draws
        model.train()
        order = rng.permutation(train_ds.n_captions)
        losses = []
        starts = range(0, len(order) - 1, cfg.batch_size)
        for b, s in enumerate(bar(starts, desc=f"epoch {epoch + 1}/{cfg.epochs}", enabled=progress)):
            cap_idx = order[s:s + cfg.batch_size]
            if cap_idx.size < 2:
                continue
            step = epoch * len(starts) + b             # global iteration, the same after a resume
            if cfg.lr_schedule == "linear":   # this run's own updates: a second phase starts its own schedule
                run_steps = (cfg.epochs - first_epoch) * len(starts)
                warm = cfg.lr_warmup_iters or run_steps // 10
                for g in opt.param_groups:
                    g["lr"] = linear_lr(cfg.lr, step - first_epoch * len(starts), run_steps, min(warm, run_steps - 1))
            elif step <= cfg.lr_warmup_iters and cfg.lr_warmup_iters:   # linear lr warm-up, then the step schedule's lr
                for g in opt.param_groups:
                    g["lr"] = cfg.lr * 0.1 ** (epoch // cfg.lr_decay_epochs) * min(1.0, (step + 1) / cfg.lr_warmup_iters)
            hardest = cfg.max_violation and epoch >= cfg.warmup_epochs
            if hasattr(model, "batch_loss"):  # a model with its own losses (SSAMT, eqs. 1-4)
                loss = model.batch_loss(train_ds, text, cap_idx, epoch=epoch, margin=cfg.margin, hardest=hardest,
                                        device=device)
                if loss is None:   # no negative in this batch (SSAMT's phase 2)
                    continue
            else:
                scores, same, img_idx = score_batch(model, train_ds, text, cap_idx, device)
                if cfg.loss == "triplet":
                    loss = triplet_loss(scores, cfg.margin, hardest, same)
                else:
                    phi = batch_phi(cider, img_idx, cap_idx, leave_one_out=cfg.phi_self == "leave_one_out")
                    loss, _ = sam_loss(scores, phi, tau=cfg.tau, sampling=cfg.sampling,
                                       mode=cfg.sam_mode, keep_triplet=cfg.keep_triplet, margin=cfg.margin,
                                       max_violation=hardest, positive_mask=same, generator=gen,
                                       phi_control=cfg.phi_control, sam_weight=cfg.sam_weight, control_generator=shuffle_gen,
                                       all_negatives=cfg.sam_warmup and cfg.max_violation and epoch < cfg.warmup_epochs)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
            opt.step()
            losses.append(float(loss.detach()))
        sched.step()
        scores_dev = dev_scores(model, vocab, dev_ds, dev_relevance, device)
        sel = scores_dev[{"rsum": "rsum", "nsum": "nsum", "ndcg": "ndcg_sum"}[cfg.select_by]]
        history.append({"epoch": epoch + 1, "loss": float(np.mean(losses)) if losses else 0.0,
                        **{f"dev_{k}": v for k, v in scores_dev.items()}})
        if sel > best_score and epoch >= first_selectable:
            best_score, best_epoch = sel, epoch + 1
            _save(best, {"model": model.state_dict(), "epoch": epoch + 1, "config": config_dict(cfg),
                         "vocab": vocab.itos[2:]})
        stopped = bool(cfg.patience) and best_epoch > 0 and epoch + 1 - best_epoch >= cfg.patience
        _save(last, {"model": model.state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
                     "epoch": epoch + 1, "best_score": best_score, "best_epoch": best_epoch, "history": history,
                     "config": config_dict(cfg), "vocab": vocab.itos[2:],
                     "seconds": earlier + time.perf_counter() - t0, "stopped": stopped})
        (folder / "progress.json").write_text(json.dumps({"epoch": epoch + 1, "epochs": cfg.epochs, "stopped": stopped}))
        ran += 1
        if stopped:
            log_line(f"[train] {name}: stopped at epoch {epoch + 1}: dev best at {best_epoch}, no gain for {cfg.patience}")
            break
    if best.is_file():
        model.load_state_dict(_load(best)["model"])
    return TrainResult(model=model, vocab=vocab, history=pd.DataFrame(history), best_epoch=best_epoch,
                       checkpoint=best, seconds=time.perf_counter() - t0, earlier_seconds=earlier)


