"""Notebook 05's side of Biten et al.: the scarce-data arms (Table 2), their budgets and the choice of
the fractions that stand in for the paper's F-10% / F-25%, and the joins that put Tables 2/3 beside ours."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ...claims.seeds import seed_mean
from ...config import check_choice, get_scale
from ...paper_numbers import paper_table
from ...training.train import TrainConfig


from .ablation import vse_config

#: notebook 05's budgets chosen at each scale by its recipe probe on the F-10% baseline's dev curve (the notebook's
#: table ``recipe_probe``, records in ``results/05_sam_reduced_data/probes/``): 60 epochs with the warm-up (best at
#: epoch 32), 240 without (best at 234); every training image 30 epochs (its members best at epochs 3-7)
SCARCE_RECIPES = {"medium": {"epochs": 60, "no_warmup_epochs": 240, "full_data_epochs": 30}}


def paper_method(method: str, model: str = "CVSE") -> str | None:
    """The paper's row name for one of our methods: VSE++ -> "CVSE (public code)", VSE++ + SAM -> "CVSE+SAM";
    None for our control arms (shuffled, leave-one-out), which the paper does not have."""
    if "shuffled" in method or "leave-one-out" in method:
        return None
    return f"{model}+SAM" if "SAM" in method else f"{model} (public code)"


def with_paper_columns(table: pd.DataFrame, key: str | Sequence[str], setting: pd.Series | str,
                       columns: Sequence[str] = ("rsum", "nsum"), models: Sequence[str] = ("CVSE",)) -> pd.DataFrame:
    """``table`` (a ``method`` column) with ``paper_<col> (<model>, F30K)`` columns from the paper's
    table ``key`` (``ncs_sam_table2``/``ncs_sam_table3``, or both: their settings differ) at ``setting`` (one
    setting, or one per row: e.g. ``"F-10%"`` for our fraction 0.1, ``"F30K"`` for every image). NaN where the
    paper has no such row."""
    keys = [key] if isinstance(key, str) else list(key)
    paper = pd.concat([paper_table(k) for k in keys]).set_index(["setting", "method"])
    out = table.copy()
    settings = setting if isinstance(setting, pd.Series) else pd.Series(setting, index=out.index)
    for model in models:
        for col in columns:
            out[f"paper_{col} ({model}, F30K)"] = [
                paper.loc[(s, paper_method(m, model)), col] if (s, paper_method(m, model)) in paper.index else np.nan
                for s, m in zip(settings, out.method)]
    return out


def fraction_setting(fraction: float) -> str:
    """The paper's Flickr30K setting name of a training fraction: 0.1 -> "F-10%"."""
    return f"F-{round(100 * fraction)}%"


#: notebook 05's arms: the baseline, SAM, and SAM's two controls (TrainConfig fields over the SAM config)
SCARCE_ARMS = {"VSE++": {"loss": "triplet"}, "VSE++ + SAM": {}, "VSE++ + SAM shuffled": {"phi_control": "shuffled"},
               "VSE++ + SAM leave-one-out": {"phi_self": "leave_one_out"}}


def scarce_configs(scale: str, arms: Sequence[str], *, data: str, warmup_epochs: int, epochs: int | None = None,
                   lr_decay_epochs: int | None = None, patience: int = 0, **sam) -> dict[str, TrainConfig]:
    """Notebook 05's configs, one per arm of :data:`SCARCE_ARMS`, under one recipe (``warmup_epochs``):
    the SAM arms share ``sam`` (tau, sampling, sam_mode, keep_triplet); the SAM hinge warms up with the
    triplet (``sam_warmup``) so that the arms differ by their margins alone. ``patience`` (every arm alike):
    stop after that many epochs without a better dev score; 0, 05's own, trains the whole budget."""
    out = {}
    for a in arms:
        check_choice("arm", a, tuple(SCARCE_ARMS))
        extra = SCARCE_ARMS[a]
        kw = {"loss": "triplet"} if extra.get("loss") == "triplet" else {"loss": "sam", "sam_warmup": True, **sam, **extra}
        if lr_decay_epochs:
            kw["lr_decay_epochs"] = lr_decay_epochs
        if patience:
            kw["patience"] = patience
        out[a] = vse_config(scale, epochs=epochs, data=data, warmup_epochs=warmup_epochs, **kw)
    return out


#: Notebook 05's default recipe (its parameters' defaults): one warm-up epoch, tau 5, the furthest negatives
#: ("soft", the paper's best on average), eq. 7's margins, the triplet kept beside the SAM hinge.
SCARCE_RECIPE = {"warmup_epochs": 1, "tau": 5.0, "sampling": "soft", "sam_mode": "paper", "keep_triplet": True}


def recipe_configs(scale: str, arms: Sequence[str], *, data: str, epochs: int | None = None,
                   patience: int = 0) -> dict[str, TrainConfig]:
    """:func:`scarce_configs` under notebook 05's default recipe (:data:`SCARCE_RECIPE`) and schedule
    (:func:`scarce_schedule`): the arms notebook 09 trains on real captions, and the CPU pool trains for it;
    ``patience`` as :func:`scarce_configs` (09's world stops its arms early, 05 does not)."""
    return scarce_configs(scale, arms, data=data, patience=patience, **SCARCE_RECIPE, **scarce_schedule(scale, epochs))


def scarce_schedule(scale: str, epochs: int | None = None) -> dict[str, int]:
    """Notebook 05's schedule: ``epochs`` (default twice the scale's; the scale's own at ``smoke``, which
    only has to run in minutes) with the learning rate x0.1 halfway, as the public SAM/CVSE code trains
    (30-50 epochs with a decay); a small subset has few batches per epoch, so the longer schedule is
    what lets it converge."""
    sc = get_scale(scale)
    n = epochs or (sc.epochs if sc.name == "smoke" else 2 * sc.epochs)
    return {"epochs": n, "lr_decay_epochs": max(n // 2, 1)}


def scarce_budgets(scale: str, fractions: Sequence[float], warmup_epochs: int, epochs: int | None = None,
                   no_warmup_epochs: int = 0) -> list[tuple[dict[str, int], list[float]]]:
    """Each fraction's schedule under one recipe, grouped: ``[(schedule, fractions), ...]``, smallest fraction
    first. A recipe with a warm-up, or ``no_warmup_epochs`` 0, trains every fraction for :func:`scarce_schedule`'s
    ``epochs``. Without the warm-up the smallest fraction trains ``no_warmup_epochs`` (the probe on the F-10%
    baseline's dev curve chose 240 at medium) and a larger fraction f as many optimiser steps,
    ``round(no_warmup_epochs * f_min / f)`` epochs, never fewer than ``epochs``: F-25%'s 4x the images at 60
    epochs take the steps F-10%'s take at 240."""
    fs = sorted({float(f) for f in fractions})
    if not fs:
        raise ValueError("scarce_budgets: no fractions given")
    if no_warmup_epochs < 0:
        raise ValueError(f"no_warmup_epochs must be 0 (as epochs) or a number of epochs, got {no_warmup_epochs}")
    base = scarce_schedule(scale, epochs)["epochs"]
    groups: dict[int, list[float]] = {}
    for f in fs:
        n = max(base, round(no_warmup_epochs * fs[0] / f)) if warmup_epochs == 0 and no_warmup_epochs else base
        groups.setdefault(n, []).append(f)
    return [(scarce_schedule(scale, n), group) for n, group in groups.items()]


def label_fractions(fractions: Sequence[float], settings: Sequence[str] | Mapping[str, float] = ("F-10%", "F-25%")) -> pd.DataFrame:
    """Fractions a user gave, smallest first, labelled with the paper settings they stand in for
    (the smallest for the scarcest); fractions beyond the settings are labelled by themselves. Given
    ``settings`` as a mapping setting -> the paper's share (:func:`paper_scarcity`), the table has that
    share beside each setting as ``paper share``, as :func:`choose_fractions` does."""
    fs = sorted({float(f) for f in fractions})
    names = list(settings)
    out = pd.DataFrame({"setting": [names[i] if i < len(names) else f"ours {f:g}" for i, f in enumerate(fs)],
                        "fraction": fs})
    if isinstance(settings, Mapping):
        out.insert(1, "paper share", out.setting.map(lambda s: settings.get(s, np.nan)))
    return out


def paper_scarcity(settings: Sequence[str] = ("F-10%", "F-25%"), model: str = "CVSE") -> dict[str, float]:
    """How scarce the paper's reduced-data settings are: the baseline's Rsum at each setting (Table 2,
    Flickr30K) as a share of its full-data Rsum (Table 3). CVSE: F-10% 0.29, F-25% 0.62."""
    t2 = paper_table("ncs_sam_table2").set_index(["setting", "method"]).rsum
    full = paper_table("ncs_sam_table3").set_index(["setting", "method"]).rsum[("F30K", paper_method("VSE++", model))]
    return {s: float(t2[(s, paper_method("VSE++", model))] / full) for s in settings}


def choose_fractions(baseline: pd.DataFrame, full_rsum: float, targets: Mapping[str, float]) -> pd.DataFrame:
    """For each paper setting, the training fraction at which *our baseline* is as scarce as the paper's:
    the candidate (a ``fraction`` of ``baseline``'s runs, mean Rsum over its seeds) whose share of
    ``full_rsum`` is nearest the setting's target share (:func:`paper_scarcity`). Chosen on the
    baseline alone, before any SAM run. One row per setting: setting, the paper's share (the target),
    fraction, our baseline's Rsum and share there."""
    if not full_rsum > 0:
        raise ValueError(f"full_rsum must be > 0 (the full-data baseline's Rsum), got {full_rsum}")
    if baseline.empty:
        raise ValueError("choose_fractions needs baseline runs at one or more candidate fractions")
    mean = baseline.groupby("fraction").rsum.agg(seed_mean)
    rows = []
    for setting, share in targets.items():
        f = float((mean / full_rsum - share).abs().idxmin())
        rows.append({"setting": setting, "paper share": share, "fraction": f, "baseline rsum": float(mean[f]),
                     "share": float(mean[f] / full_rsum)})
    return pd.DataFrame(rows)
