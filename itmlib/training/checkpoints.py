"""Where a run's checkpoints live and how they are read and written: ``<ckpt_dir>/<name>-<config hash>/``
holds ``last.pt`` (after every epoch, with ``progress.json``), ``best.pt`` (the selected epoch) and, for a run
with a warm-up, ``warmup.pt`` (:mod:`itmlib.training.warmup_branch`). Files are written to a temporary name and
moved into place, so a run killed mid-write leaves the previous checkpoint intact; they are read with
``torch.load(weights_only=True)``. :func:`~itmlib.training.train.train` and the warm-up branching share these."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import torch

from ..paths import resolve_path
from .run_config import TrainConfig, config_hash

__all__ = ["load_state", "save_state", "checkpoint_folder", "phase_one_run", "epochs_done"]


def load_state(path: Path) -> dict[str, Any]:
    """A checkpoint file's dict, on the CPU."""
    return torch.load(path, map_location="cpu", weights_only=True)


def save_state(path: Path, obj: dict[str, Any]) -> None:
    """Write ``obj`` to ``path`` atomically (a temporary file, then a rename)."""
    tmp = path.with_suffix(".tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def checkpoint_folder(cfg: TrainConfig, name: str, ckpt_dir: str | os.PathLike[str]) -> Path:
    """Where :func:`~itmlib.training.train.train` keeps the run of ``cfg`` named ``name``:
    ``<ckpt_dir>/<name>-<config hash>``."""
    return resolve_path(ckpt_dir) / f"{name}-{config_hash(cfg)}"


def phase_one_run(cfg: TrainConfig) -> tuple[TrainConfig, str] | None:
    """A two-phase model's first phase as its own run (config, name), or None."""
    if hasattr(cfg.model, "phase_one") and 0 < cfg.model.intra_epochs < cfg.epochs:
        return dataclasses.replace(cfg, epochs=cfg.model.intra_epochs, model=cfg.model.phase_one(),
                                   lr=cfg.phase_one_lr or cfg.lr, phase_one_lr=0.0, patience=0), \
            f"{cfg.model.kind}-phase1"
    return None


def epochs_done(cfg: TrainConfig, name: str, ckpt_dir: str | os.PathLike[str]) -> int:
    """How many of ``cfg.epochs`` the checkpoints already hold (a two-phase model counts its shared first
    phase): ``cfg.epochs`` means :func:`~itmlib.training.train.train` will load, not train. Reads
    ``progress.json`` (written with every ``last.pt``), or ``last.pt`` itself for checkpoints written before it
    existed."""
    def saved(folder: Path) -> int:
        if (folder / "progress.json").is_file():
            p = json.loads((folder / "progress.json").read_text())
            return cfg.epochs if p.get("stopped") else int(p["epoch"])
        return int(load_state(folder / "last.pt")["epoch"]) if (folder / "last.pt").is_file() else 0

    n = saved(checkpoint_folder(cfg, name, ckpt_dir))
    p1 = phase_one_run(cfg)
    if n == 0 and p1 is not None:
        n = saved(checkpoint_folder(*p1, ckpt_dir))
    return min(n, cfg.epochs)
