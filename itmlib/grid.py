"""Experiment grids, paper-agnostic: train every config on every (fraction, seed) subset.

A grid member is one call of :func:`~itmlib.train.train` (idempotent: checkpoints are
keyed by the config's hash, so a finished member is loaded, not retrained); the grid
evaluates each on the test split with :func:`~itmlib.train.evaluate` (or a paper's own
evaluation, ``evaluate_fn``) and returns one row per run. Seeds vary both the data
subset and the initial weights.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable, Iterable, Mapping

import numpy as np
import pandas as pd

from .config import check_fraction, resolve_device
from .data.base import ITMDataset
from .metrics import METRIC_COLUMNS
from .train import TrainConfig, TrainResult, evaluate, train

__all__ = ["grid_member", "run_grid", "checkpoint_name", "METRIC_COLUMNS"]


def checkpoint_name(name: str) -> str:
    """A grid method's name as one checkpoint folder name: '+' becomes 'p', spaces '_', and every
    other character outside ``[A-Za-z0-9_=-]`` (a '/' would nest folders) is dropped."""
    return re.sub(r"[^A-Za-z0-9_=-]", "", name.replace(" ", "_").replace("+", "p"))


def grid_member(cfg: TrainConfig, name: str, train_ds: ITMDataset, dev_ds: ITMDataset, *, fraction: float = 1.0,
                seed: int = 0, dev_relevance: np.ndarray | Mapping[str, np.ndarray] | None = None, ckpt_dir: str = "runs/checkpoints",
                device: str = "auto", progress: bool = False) -> tuple[ITMDataset, TrainResult]:
    """Train (or load from its checkpoint) one run of :func:`run_grid`; returns (its training subset, the result).

    The run of config ``cfg`` named ``name`` at (``fraction``, ``seed``) trains on
    ``train_ds.subset(fraction, seed)`` (image-level; all of ``train_ds`` at 1.0) with
    the config's seed replaced by ``seed``. A notebook gets a grid run's model back through here without
    training it again.
    """
    check_fraction("fraction", fraction)
    sub = train_ds if fraction == 1.0 else train_ds.subset(fraction, seed=seed)
    c = dataclasses.replace(cfg, seed=int(seed), data=f"{cfg.data}|{sub.split}|{sub.n_images}")
    return sub, train(c, sub, dev_ds, dev_relevance=dev_relevance, ckpt_dir=ckpt_dir, name=checkpoint_name(name),
                      device=device, progress=progress)


def run_grid(configs: Mapping[str, TrainConfig], train_ds: ITMDataset, dev_ds: ITMDataset, test_ds: ITMDataset,
             test_relevance: np.ndarray | None = None, *, fractions: Iterable[float] = (1.0,),
             seeds: Iterable[int] = (0,), dev_relevance: np.ndarray | Mapping[str, np.ndarray] | None = None,
             ckpt_dir: str = "runs/checkpoints",
             device: str = "auto", progress: bool = False,
             evaluate_fn: Callable[[str, TrainResult, ITMDataset], list[dict[str, Any]]] | None = None
             ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Train every config on every (fraction, seed) subset (see :func:`grid_member`);
    returns (test metrics, one row per run, and the training histories).

    Rows hold ``fraction``, ``seed``, ``method``, ``train_images``, ``best_epoch`` and the
    metrics: :data:`~itmlib.metrics.METRIC_COLUMNS` of :func:`~itmlib.train.evaluate`
    by default, or the rows ``evaluate_fn(name, result, test_ds)`` returns (each a dict
    of metrics; a row may set its own ``method``, e.g. a second scoring of one model)."""
    rows, hist = [], []
    device_name = resolve_device(device)
    for f in fractions:
        for s in seeds:
            for name, cfg in configs.items():
                sub, r = grid_member(cfg, name, train_ds, dev_ds, fraction=f, seed=s, dev_relevance=dev_relevance,
                                     ckpt_dir=ckpt_dir, device=device, progress=progress)
                base = {"fraction": f, "seed": s, "method": name, "train_images": sub.n_images,
                        "best_epoch": r.best_epoch}
                if evaluate_fn is None:
                    m = evaluate(r.model, r.vocab, test_ds, test_relevance, device=device_name)
                    rows.append({**base, **{k: m[k] for k in METRIC_COLUMNS if k in m}})
                else:
                    rows += [{**base, **extra} for extra in evaluate_fn(name, r, test_ds)]
                hist.append(r.history.assign(fraction=f, seed=s, method=name))
    return pd.DataFrame(rows), pd.concat(hist, ignore_index=True)
