"""Notebook 06's members and worlds, which the notebook and ``tools/member_pool.py`` both take from here:
Table 3's arms evaluated per part too (:data:`~.configs.PER_PART_WORLD`) or not (``"ssamt"``), and VSE++ beside
them under the course's default evaluation (``"vse"``)."""

from __future__ import annotations

from typing import Any, Mapping

from ...training.grid import Member
from ...training.world import World, load_splits, plan_members, training_source
from .configs import PER_PART_WORLD, grids

__all__ = ["members", "world"]


def members(p: Mapping[str, Any]) -> list[Member]:
    """Every member of notebook 06's plan (:func:`~.configs.grids`) at ``p``."""
    return plan_members(grids(p, training_source(p)))


def world(kind: str, p: Mapping[str, Any], device: str) -> World:
    """The world of the members whose grid names ``kind``: the splits, the gold test relevance and SSAMT's
    evaluator (dev pairs choose Table 4's thresholds), per part with :data:`PER_PART_WORLD`."""
    from ...relevance import eval_relevance
    from .evaluation import ssamt_evaluator

    train, dev, test = load_splits(p["dataset"], p["scale"], p["seed"])
    rel = eval_relevance(test)
    fn = ssamt_evaluator(test, rel, seed=p["seed"], device=device, dev_ds=dev,
                         per_part=kind == PER_PART_WORLD) if kind.startswith("ssamt") else None
    return World(train, dev, test, rel, fn)
