"""Where and how a notebook's grids run: one small object a notebook makes once and every grid call takes.

A notebook builds it from its run (``ctx = run.grid_context()``, :meth:`itmlib.course.results.Run.grid_context`)
and hands it to :func:`~itmlib.training.grid.run_grid` (or a plan's :meth:`~itmlib.training.grid.Grid.run`) and
:func:`~itmlib.training.grid.grid_member`; a grid that keeps its records elsewhere takes a copy
(``ctx.replace(record_dir=...)``). Nothing in it changes a table: it says where checkpoints and member records
live, which device and executor train, and whether members report their progress.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any

__all__ = ["RunContext", "parse_executor"]


def parse_executor(executor: str) -> tuple[str, Any]:
    """``("inline", None)``, ``("records", None)``, ``("records", "partial")``, ``("processes", N)`` or
    ``("dask", address)`` from an executor string. ``"records"`` trains nothing: a grid is what its member records
    hold, every member of it (:func:`~itmlib.training.grid.run_grid`); ``"records:partial"`` reads a grid still
    training, leaving out the members without a record."""
    if not isinstance(executor, str) or not executor:
        raise ValueError(f"executor must be 'inline', 'records', 'records:partial', 'processes:N' or 'dask:ADDRESS', got {executor!r}")
    if executor in ("inline", "records"):
        return executor, None
    if executor == "records:partial":
        return "records", "partial"
    if executor.startswith("processes:"):
        n = executor.split(":", 1)[1]
        if not n.isdigit() or int(n) < 1:
            raise ValueError(f"executor 'processes:N' needs N >= 1 workers, got {executor!r}")
        return "processes", int(n)
    if executor.startswith("dask:") or executor.startswith("tcp://"):
        addr = executor[5:] if executor.startswith("dask:") else executor
        if not addr:
            raise ValueError("executor 'dask:ADDRESS' needs the scheduler's address, e.g. dask:tcp://10.0.0.1:8786")
        return "dask", addr
    raise ValueError(f"executor must be 'inline', 'records', 'records:partial', 'processes:N' or 'dask:ADDRESS', got {executor!r}")


@dataclass(frozen=True)
class RunContext:
    """Where a grid's members train and keep what they leave behind.

    ``device``: "auto", "cpu" or "cuda"; ``ckpt_dir``: checkpoints (relative paths from the repository root);
    ``record_dir``: member records (None keeps none); ``executor``: :func:`parse_executor`'s forms;
    ``progress``: members say what they do and the grid its ETA; ``threads``: torch threads per member (None:
    as the process has them inline, 1 on Dask workers)."""

    device: str = "auto"
    ckpt_dir: str | os.PathLike[str] = "runs/checkpoints"
    record_dir: str | os.PathLike[str] | None = None
    executor: str = "inline"
    progress: bool = False
    threads: int | None = None

    def __post_init__(self) -> None:
        kind, _ = parse_executor(self.executor)
        if kind == "records" and self.record_dir is None:
            raise ValueError("executor 'records' reads member records: give the context a record_dir")
        if self.threads is not None and (isinstance(self.threads, bool) or int(self.threads) < 1):
            raise ValueError(f"threads must be None or >= 1, got {self.threads!r}")
        if not str(self.ckpt_dir):
            raise ValueError("ckpt_dir must name a folder")

    def replace(self, **fields: Any) -> "RunContext":
        """This context with some fields replaced (checked again)."""
        return dataclasses.replace(self, **fields)
