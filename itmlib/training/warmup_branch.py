"""Runs that share their first epochs: a run keeps its state at the end of its warm-up (``warmup.pt``), and a new
run whose config differs only by a longer ``warmup_epochs`` starts from it. Until the shorter warm-up ends both
sum the hinge over every negative (eq. 6 without the max) on epochs seeded from ``(seed, epoch)``, so the branched
run ends bit-identical to one trained from scratch (``tests/test_train.py``); a probe over warm-ups pays for the
shared epochs once. :func:`~itmlib.training.train.train` calls these."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..console import log_line
from ..paths import resolve_path
from .checkpoints import load_state, phase_one_run, save_state
from .run_config import TrainConfig, config_dict

__all__ = ["keeps_warmup", "branches", "warmup_source", "start_from", "save_warmup"]


def keeps_warmup(cfg: TrainConfig) -> bool:
    """Whether a run of ``cfg`` has a warm-up another run can start from (SSAMT's phases aside)."""
    return cfg.max_violation and 0 < cfg.warmup_epochs < cfg.epochs and phase_one_run(cfg) is None


def branches(cfg: TrainConfig) -> bool:
    """Whether a run of ``cfg`` may start from a shorter warm-up's state: it sums over every negative for its
    first epochs, up to the end where ``warmup_epochs >= epochs`` (a recipe probe's "sum over every negative")."""
    return cfg.max_violation and cfg.warmup_epochs > 0 and phase_one_run(cfg) is None


def warmup_source(cfg: TrainConfig, name: str, ckpt_dir: str | os.PathLike[str]) -> Path | None:
    """The ``warmup.pt`` a new run of ``cfg`` named ``name`` starts from, or None: that of a run of the same name
    under ``ckpt_dir`` whose config is ``cfg``'s but for a shorter ``warmup_epochs`` (the longest such). Up to
    the end of the shorter warm-up both runs summed the hinge over every negative (eq. 6 without the max) and
    reseeded every epoch from ``(seed, epoch)``: they trained the same epochs."""
    root = resolve_path(ckpt_dir)
    if not branches(cfg) or not root.is_dir():
        return None
    mine = json.loads(json.dumps(config_dict(cfg), sort_keys=True))
    found: tuple[int, Path] | None = None
    for folder in root.iterdir():
        snap, spec = folder / "warmup.pt", folder / "config.json"
        if folder.name.rsplit("-", 1)[0] != name or not (snap.is_file() and spec.is_file()):
            continue
        other = json.loads(spec.read_text())
        w = int(other.get("warmup_epochs", 0))
        if {**other, "warmup_epochs": cfg.warmup_epochs} == mine and w < cfg.warmup_epochs and (found is None or w > found[0]):
            found = (w, snap)
    return found[1] if found else None


def start_from(snap: Path, cfg: TrainConfig, folder: Path) -> dict[str, Any]:
    """The state of ``snap`` (:func:`warmup_source`) as the run of ``cfg`` in ``folder``: its ``best.pt`` written
    there, the last state returned under ``cfg``'s config (with the seconds the shared epochs cost)."""
    state = load_state(snap)
    best = state.pop("best")
    if best is not None:
        save_state(folder / "best.pt", {**best, "config": config_dict(cfg)})
    log_line(f"[train] {folder.name}: starting at epoch {state['epoch']} from {snap.parent.name}, the same run "
             f"until its warm-up ended")
    return {**state, "config": config_dict(cfg)}


def save_warmup(folder: Path, state: dict[str, Any]) -> None:
    """Keep ``state`` (what ``last.pt`` holds at the warm-up's last epoch) and the best model so far as ``warmup.pt``."""
    best = folder / "best.pt"
    save_state(folder / "warmup.pt", {**state, "best": load_state(best) if best.is_file() else None})
