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
  they came from (:mod:`itmlib.training.checkpoints`); they are loaded with ``torch.load(weights_only=True)``; a
  finished run is returned from its checkpoint without training again;
* a run keeps its state at the end of its warm-up (``warmup.pt``), and a new run whose config differs only by
  a longer ``warmup_epochs`` starts from it: until then both summed over every negative on the same seeded
  epochs, so the branched run ends bit-identical to one trained from scratch (a probe over warm-ups pays for
  the shared epochs once; :mod:`itmlib.training.warmup_branch`);
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

The config and its hash live in :mod:`itmlib.training.run_config`.
"""

from __future__ import annotations

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

from ..config import resolve_device
from ..data.base import ITMDataset
from ..losses import batch_phi, phi_index, sam_loss, triplet_loss
from ..losses.triplet import positive_mask_from_ids
from ..metrics import ncs, ndcg, retrieval_recall
from ..data.inputs import region_inputs
from ..models import ITMModel, build_model
from ..models.vocab import Vocab
from .checkpoints import checkpoint_folder, epochs_done, load_state, phase_one_run, save_state
from .run_config import SAM_FIELDS, SAMConfig, TrainConfig, config_dict, config_hash
from .warmup_branch import keeps_warmup, save_warmup, start_from, warmup_source

__all__ = ["TrainConfig", "SAMConfig", "SAM_FIELDS", "TrainResult", "train", "evaluate", "dev_scores", "config_hash", "config_dict",
           "score_batch", "DEV_NDCG_K",
           "linear_lr",
           "checkpoint_folder", "epochs_done", "phase_one_run", "warmup_source"]

logger = logging.getLogger(__name__)


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


@dataclass
class _Run:
    """A run as :func:`train` holds it between epochs: the model and optimiser, where the checkpoints go, and
    what the epochs so far selected."""

    model: ITMModel
    vocab: Vocab
    opt: torch.optim.Optimizer
    sched: torch.optim.lr_scheduler.StepLR
    folder: Path
    start: int = 0
    best_score: float = -np.inf
    best_epoch: int = -1
    history: list[dict[str, float]] = field(default_factory=list)
    earlier: float = 0.0        # training seconds of the calls this one resumed from (NaN: not kept)


def _open_run(cfg: TrainConfig, train_ds: ITMDataset, dev_ds: ITMDataset, dev_relevance: Any,
              ckpt_dir: str | os.PathLike[str], name: str, device: str, progress: bool) -> _Run:
    """The run of ``cfg`` as its checkpoints leave it: resumed from ``last.pt``, started from a shared first
    phase (trained here first when absent), or new - the initial weights seeded from the config's seed."""
    folder = checkpoint_folder(cfg, name, ckpt_dir)
    folder.mkdir(parents=True, exist_ok=True)
    last = folder / "last.pt"
    (folder / "config.json").write_text(json.dumps(config_dict(cfg), indent=1, sort_keys=True))
    state = load_state(last) if last.is_file() else None
    if state is None and (snap := warmup_source(cfg, name, ckpt_dir)) is not None:
        state = start_from(snap, cfg, folder)
    shared = None
    if state is None and phase_one_run(cfg) is not None:
        # a two-phase model (SSAMT): the first phase is its own run, shared by every config that agrees on it
        p1, p1_name = phase_one_run(cfg)
        r1 = train(p1, train_ds, dev_ds, dev_relevance=dev_relevance, ckpt_dir=ckpt_dir, name=p1_name,
                   device=device, progress=progress)
        shared = load_state(r1.checkpoint.parent / "last.pt")
    torch.manual_seed(_epoch_seed(cfg.seed, -1))  # the initial weights
    vocab_words = state["vocab"] if state else shared["vocab"] if shared else None
    model, vocab = build_model(cfg.model, train_ds, Vocab(vocab_words) if vocab_words is not None else None)
    model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    run = _Run(model, vocab, opt, torch.optim.lr_scheduler.StepLR(opt, step_size=cfg.lr_decay_epochs, gamma=0.1), folder)
    if state:
        if state["config"] != config_dict(cfg):
            raise ValueError(f"{last} holds another config; delete the folder or change ckpt_dir")
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        run.sched.load_state_dict(state["scheduler"])
        run.start, run.best_score, run.best_epoch = int(state["epoch"]), float(state["best_score"]), int(state["best_epoch"])
        run.history = [dict(h) for h in state["history"]]
        run.earlier = float(state.get("seconds", np.nan))
        if state.get("stopped"):   # stopped early: nothing left to train
            run.start = cfg.epochs
        logger.info("resuming %s at epoch %d", folder.name, run.start)
    elif shared:
        model.load_state_dict(shared["model"])
        run.start, run.history = int(shared["epoch"]), [dict(h) for h in shared["history"]]
    return run


def _set_lr(opt: torch.optim.Optimizer, cfg: TrainConfig, epoch: int, b: int, n_batches: int, first_epoch: int) -> None:
    """Batch ``b`` of ``epoch``'s learning rate where the schedule sets it per update: the ``"linear"``
    schedule over this run's own updates (a second phase starts its own), or the step schedule's linear
    warm-up over its first ``lr_warmup_iters`` iterations (elsewhere the epoch's StepLR rate stands)."""
    step = epoch * n_batches + b             # global iteration, the same after a resume
    if cfg.lr_schedule == "linear":
        run_steps = (cfg.epochs - first_epoch) * n_batches
        warm = cfg.lr_warmup_iters or run_steps // 10
        for g in opt.param_groups:
            g["lr"] = linear_lr(cfg.lr, step - first_epoch * n_batches, run_steps, min(warm, run_steps - 1))
    elif step <= cfg.lr_warmup_iters and cfg.lr_warmup_iters:
        for g in opt.param_groups:
            g["lr"] = cfg.lr * 0.1 ** (epoch // cfg.lr_decay_epochs) * min(1.0, (step + 1) / cfg.lr_warmup_iters)


def _batch_loss(model: ITMModel, cfg: TrainConfig, train_ds: ITMDataset, text: dict[str, torch.Tensor],
                cap_idx: np.ndarray, epoch: int, cider: Any, gen: torch.Generator, shuffle_gen: torch.Generator,
                device: str) -> torch.Tensor | None:
    """One batch's loss: the model's own (``batch_loss``, SSAMT's eqs. 1-4; None when the batch has no
    negative), else eq. 6 (triplet) or eq. 7 (SAM) on :func:`score_batch`'s scores. Hardest negatives once
    the ``warmup_epochs`` are over (with ``max_violation``)."""
    hardest = cfg.max_violation and epoch >= cfg.warmup_epochs
    if hasattr(model, "batch_loss"):
        return model.batch_loss(train_ds, text, cap_idx, epoch=epoch, margin=cfg.margin, hardest=hardest, device=device)
    scores, same, img_idx = score_batch(model, train_ds, text, cap_idx, device)
    if cfg.loss == "triplet":
        return triplet_loss(scores, cfg.margin, hardest, same)
    sam = cfg.sam
    phi = batch_phi(cider, img_idx, cap_idx, leave_one_out=sam.phi_self == "leave_one_out")
    loss, _ = sam_loss(scores, phi, sam, margin=cfg.margin, max_violation=hardest, positive_mask=same, generator=gen,
                       control_generator=shuffle_gen,
                       all_negatives=sam.sam_warmup and cfg.max_violation and epoch < cfg.warmup_epochs)
    return loss


def _end_epoch(run: _Run, cfg: TrainConfig, epoch: int, losses: list[float], dev_ds: ITMDataset, dev_relevance: Any,
               device: str, first_selectable: int, t0: float) -> bool:
    """After ``epoch``: score dev, log it, keep ``best.pt`` when it is the best selectable epoch so far, write
    ``last.pt`` (with the training seconds since ``t0``, this call's start) and ``progress.json``; True when
    early stopping (``patience``) ends the run here."""
    run.sched.step()
    scores_dev = dev_scores(run.model, run.vocab, dev_ds, dev_relevance, device)
    sel = scores_dev[{"rsum": "rsum", "nsum": "nsum", "ndcg": "ndcg_sum"}[cfg.select_by]]
    run.history.append({"epoch": epoch + 1, "loss": float(np.mean(losses)) if losses else 0.0,
                        **{f"dev_{k}": v for k, v in scores_dev.items()}})
    if sel > run.best_score and epoch >= first_selectable:
        run.best_score, run.best_epoch = sel, epoch + 1
        save_state(run.folder / "best.pt", {"model": run.model.state_dict(), "epoch": epoch + 1, "config": config_dict(cfg),
                                       "vocab": run.vocab.itos[2:]})
    stopped = bool(cfg.patience) and run.best_epoch > 0 and epoch + 1 - run.best_epoch >= cfg.patience
    state = {"model": run.model.state_dict(), "optimizer": run.opt.state_dict(), "scheduler": run.sched.state_dict(),
             "epoch": epoch + 1, "best_score": run.best_score, "best_epoch": run.best_epoch, "history": run.history,
             "config": config_dict(cfg), "vocab": run.vocab.itos[2:], "seconds": run.earlier + time.perf_counter() - t0,
             "stopped": stopped}
    save_state(run.folder / "last.pt", state)
    if epoch + 1 == cfg.warmup_epochs and keeps_warmup(cfg):   # where a run with a longer warm-up can start
        save_warmup(run.folder, state)
    (run.folder / "progress.json").write_text(json.dumps({"epoch": epoch + 1, "epochs": cfg.epochs, "stopped": stopped}))
    return stopped


def _check_inputs(cfg: TrainConfig, train_ds: ITMDataset, dev_relevance: Any) -> None:
    """What :func:`train` refuses: a selection without the relevance it reads, a dataset without image features."""
    if cfg.select_by == "nsum" and (dev_relevance is None or isinstance(dev_relevance, Mapping)):
        raise ValueError("select_by='nsum' needs dev_relevance (an (n_images, n_captions) relevance matrix of dev)")
    if cfg.select_by == "ndcg" and dev_relevance is None:
        raise ValueError("select_by='ndcg' needs dev_relevance (a relevance matrix of dev, or a mapping name -> matrix, "
                         "e.g. itmlib.papers.teran.teran_dev_relevance(dev_ds))")
    if train_ds.regions.shape[1] == 0:
        raise ValueError(f"{train_ds.name}/{train_ds.split} has no image features to train on")


def train(cfg: TrainConfig, train_ds: ITMDataset, dev_ds: ITMDataset, *,
          dev_relevance: np.ndarray | Mapping[str, np.ndarray] | None = None,
          ckpt_dir: str | os.PathLike[str] = "runs/checkpoints", name: str = "vse", device: str = "auto",
          progress: bool = True, stop_after: int | None = None) -> TrainResult:
    """Train (or resume, or load a finished run) and return the best-on-dev model: :func:`_open_run`, then per
    epoch the batches (:func:`_set_lr`, :func:`_batch_loss`) and :func:`_end_epoch`.

    ``stop_after``: stop after that many epochs of this call (to simulate an interruption in tests).
    """
    _check_inputs(cfg, train_ds, dev_relevance)
    device = resolve_device(device)
    run = _open_run(cfg, train_ds, dev_ds, dev_relevance, ckpt_dir, name, device, progress)
    model, vocab = run.model, run.vocab
    cider = phi_index(train_ds) if cfg.loss == "sam" and run.start < cfg.epochs else None
    # a model that needs more than the captions (SSAMT: phrases and image labels) reads them off the dataset
    text = model.dataset_inputs(train_ds, vocab) if hasattr(model, "dataset_inputs") else \
        model.text_inputs(train_ds.captions, vocab)
    first_selectable = model.first_selectable_epoch(cfg.epochs) if hasattr(model, "first_selectable_epoch") else 0
    first_epoch = cfg.model.intra_epochs if phase_one_run(cfg) is not None else 0   # where this run's schedule starts
    t0 = time.perf_counter()
    if run.start < cfg.epochs:
        log_line(f"[train] {name}: training epochs {run.start} -> {cfg.epochs} ({train_ds.n_images} images, device {device})")
    for ran, epoch in enumerate(range(run.start, cfg.epochs)):
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
            _set_lr(run.opt, cfg, epoch, b, len(starts), first_epoch)
            loss = _batch_loss(model, cfg, train_ds, text, cap_idx, epoch, cider, gen, shuffle_gen, device)
            if loss is None:   # no negative in this batch (SSAMT's phase 2)
                continue
            run.opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
            run.opt.step()
            losses.append(float(loss.detach()))
        if _end_epoch(run, cfg, epoch, losses, dev_ds, dev_relevance, device, first_selectable, t0):
            log_line(f"[train] {name}: stopped at epoch {epoch + 1}: dev best at {run.best_epoch}, no gain for {cfg.patience}")
            break
    best = run.folder / "best.pt"
    if best.is_file():
        model.load_state_dict(load_state(best)["model"])
    return TrainResult(model=model, vocab=vocab, history=pd.DataFrame(run.history), best_epoch=run.best_epoch,
                       checkpoint=best, seconds=time.perf_counter() - t0, earlier_seconds=run.earlier)
