"""A world a grid trains and is evaluated on: its three splits, the test relevance, the evaluator and what
else every member's run takes (TERAN's dev relevance). Each paper's home builds its worlds once,
``world(kind, p, device)`` (``p``: the notebook's validated parameters, :func:`itmlib.course.params.run_parameters`),
and both the notebook and ``tools/member_pool.py`` take them from there: a member record is found again
because the notebook and the pool evaluate it on the same world, not because two set-ups agree."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from ..data import ITMDataset, load_dataset

__all__ = ["World", "Worlds", "load_splits", "plan_members", "training_source"]


@lru_cache(maxsize=2)
def load_splits(dataset: str, scale: str, seed: int) -> tuple[ITMDataset, ITMDataset, ITMDataset]:
    """``dataset``'s training, dev and test splits at ``scale`` and ``seed`` (cached on disk by :func:`load_dataset`).
    The same objects again for the same arguments (the last two kept), so a notebook and every world it builds hold
    one copy: notebook 09 at medium held five (~2 GB each) and reached 16 GB. A dataset is never changed in place."""
    return tuple(load_dataset(dataset, s, scale=scale, seed=seed) for s in ("train", "dev", "test"))  # type: ignore[return-value]


@dataclass
class World:
    """One kind of member's data and evaluation (a grid's ``world`` names it)."""

    train: ITMDataset
    dev: ITMDataset
    test: ITMDataset
    relevance: np.ndarray | None = None            # the test relevance :func:`run_grid` computes NCS with
    evaluate: Callable[..., dict] | None = None     # the paper's evaluator (None: the course's default)
    options: dict[str, Any] = field(default_factory=dict)   # more of run_grid's keywords (``dev_relevance``)

    def run(self, grid: Any, context: Any, **extra: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
        """``grid`` (a :class:`~itmlib.training.grid.Grid`) trained or read from its records on this world."""
        kw = {"evaluate_fn": self.evaluate, **self.options, **extra}
        return grid.run(self.train, self.dev, self.test, self.relevance, context=context, **kw)


def plan_members(plan: Mapping[str, Any]) -> list[Any]:
    """Every member of ``plan`` (``{name: Grid}``) once, in the plan's order: a member two grids share (the same
    arm, config, fraction and seed, e.g. VSE++ on all the images in a baseline and a full-data grid) trains once."""
    from .train import config_hash

    seen, out = set(), []
    for g in plan.values():
        for m in g.members():
            k = (m.name, config_hash(m.config), m.fraction, m.seed, m.world)
            if k not in seen:
                seen.add(k)
                out.append(m)
    return out


def training_source(p: Mapping[str, Any], dataset: str | None = None) -> str:
    """The description of the training split of ``dataset`` (default ``p["dataset"]``) at ``p``'s scale and seed,
    which every member's config carries: a plan needs nothing else of a world."""
    from ..data import dataset_source

    return dataset_source(dataset or p["dataset"], "train", scale=p["scale"], seed=p["seed"])


class Worlds:
    """A plan's worlds, each built once, when a grid first needs it: ``Worlds(lambda kind: home.world(kind, p,
    device))``; :meth:`run` trains (or reads the records of) a grid on the world it names."""

    def __init__(self, build: Callable[[str], World]) -> None:
        self._build = build
        self._built: dict[str, World] = {}

    def __getitem__(self, kind: str) -> World:
        if kind not in self._built:
            self._built[kind] = self._build(kind)
        return self._built[kind]

    def run(self, grid: Any, context: Any, **extra: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
        """``grid`` on the world it names (:meth:`World.run`)."""
        return self[grid.world].run(grid, context, **extra)
