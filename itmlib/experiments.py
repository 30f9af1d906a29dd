"""Experiment grids shared by notebooks 03-05: configs from a scale, runs over seeds, mean +- spread, verdicts."""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from .config import check_fraction, get_scale, resolve_device
from .data.base import ITMDataset
from .train import TrainConfig, evaluate, train

__all__ = ["vse_config", "eval_relevance", "run_grid", "summarize", "compare", "METRIC_COLUMNS"]

METRIC_COLUMNS = ["i2t_r1", "i2t_r5", "i2t_r10", "t2i_r1", "t2i_r5", "t2i_r10", "rsum",
                  "i2t_n1", "i2t_n5", "i2t_n10", "t2i_n1", "t2i_n5", "t2i_n10", "nsum", "nsum_nogt"]


def vse_config(scale: str, *, epochs: int | None = None, data: str = "", **overrides: Any) -> TrainConfig:
    """A :class:`TrainConfig` sized by the named scale (epochs, batch size, embedding size)."""
    sc = get_scale(scale)
    return TrainConfig(epochs=epochs or sc.epochs, batch_size=sc.batch_size, embed_dim=sc.embed_dim,
                       word_dim=min(300, sc.embed_dim), hidden_dim=2 * sc.embed_dim, data=data, **overrides)


def eval_relevance(ds: ITMDataset) -> np.ndarray:
    """The evaluation relevance of a synthetic split: scene-graph F1 of its gold caption graphs
    (the SPICE analogue: the NCS paper evaluates with SPICE), cached on disk."""
    from .relevance import relevance_matrix

    if ds.graphs is None:
        raise ValueError(f"{ds.name}/{ds.split} has no gold caption graphs for the scene-graph F1 relevance")
    refs = [ds.captions_of(i) for i in range(ds.n_images)]
    return relevance_matrix("sg_f1", refs, ds.captions, backend="gold", graphs=list(ds.graphs) + list(ds.graphs))


def run_grid(configs: Mapping[str, TrainConfig], train_ds: ITMDataset, dev_ds: ITMDataset, test_ds: ITMDataset,
             test_relevance: np.ndarray, *, fractions: Iterable[float] = (1.0,), seeds: Iterable[int] = (0,),
             dev_relevance: np.ndarray | None = None, ckpt_dir: str = "runs/checkpoints", device: str = "auto",
             progress: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Train every config on every (fraction, seed) subset; returns (test metrics per run, training histories).

    The subset of fraction f and seed s is ``train_ds.subset(f, s)`` (image-level);
    the config's own seed is replaced by s, so seeds vary both the data and the init.
    """
    rows, hist = [], []
    for f in fractions:
        check_fraction("fraction", f)
        for s in seeds:
            sub = train_ds if f == 1.0 else train_ds.subset(f, seed=s)
            for name, cfg in configs.items():
                c = dataclasses.replace(cfg, seed=int(s), data=f"{cfg.data}|{sub.split}|{sub.n_images}")
                r = train(c, sub, dev_ds, dev_relevance=dev_relevance, ckpt_dir=ckpt_dir, name=name.replace(" ", "_").replace("+", "p"),
                          device=device, progress=progress)
                m = evaluate(r.model, r.vocab, test_ds, test_relevance, device=resolve_device(device))
                rows.append({"fraction": f, "seed": s, "method": name, "train_images": sub.n_images,
                             "best_epoch": r.best_epoch, **{k: m[k] for k in METRIC_COLUMNS}})
                hist.append(r.history.assign(fraction=f, seed=s, method=name))
    return pd.DataFrame(rows), pd.concat(hist, ignore_index=True)


def summarize(runs: pd.DataFrame, by: list[str], columns: list[str] | None = None) -> pd.DataFrame:
    """Mean and sample std over seeds per group: columns ``<metric>`` and ``<metric>_std``."""
    columns = columns or [c for c in METRIC_COLUMNS if c in runs]
    g = runs.groupby(by, sort=False)[columns]
    mean, std = g.mean(), g.std(ddof=1).fillna(0.0)
    out = mean.copy()
    for c in columns:
        out[f"{c}_std"] = std[c]
    out["seeds"] = g.size()
    return out.reset_index()


def compare(runs: pd.DataFrame, metric: str, base: str, new: str, by: str = "fraction") -> pd.DataFrame:
    """Per group: mean of ``new`` - ``base`` on ``metric`` over paired seeds, its spread, and a verdict.

    The difference "exceeds the seed-to-seed spread" when |mean diff| > 2 x the
    std of the paired differences (and at least 2 seeds exist); otherwise the
    verdict says the scale cannot tell.
    """
    out = []
    for key, g in runs.groupby(by, sort=False):
        a = g[g.method == base].set_index("seed")[metric]
        b = g[g.method == new].set_index("seed")[metric]
        d = (b - a).dropna()
        mean = float(d.mean()) if len(d) else float("nan")
        sd = float(d.std(ddof=1)) if len(d) > 1 else float("nan")
        if len(d) < 2:
            verdict = "inconclusive (one seed: no spread)"
        elif abs(mean) > 2 * sd:
            verdict = f"{new} {'higher' if mean > 0 else 'lower'} (beyond 2x seed spread)"
        else:
            verdict = "no difference beyond the seed spread"
        out.append({by: key, "metric": metric, f"{base}": float(a.mean()), f"{new}": float(b.mean()),
                    "ratio": float(b.mean() / a.mean()) if a.mean() else float("nan"),
                    "mean_diff": mean, "diff_std": sd, "seeds": len(d), "verdict": verdict})
    return pd.DataFrame(out)
