"""Wall-clock timing of a piece of work, synchronised with the GPU when there is one."""

from __future__ import annotations

import time
from typing import Any, Callable

__all__ = ["timed"]


def timed(fn: Callable[[], Any], device: str = "cpu") -> tuple[float, Any]:
    """(seconds, result) of ``fn()``; on a GPU synchronised before and after, so the time is the work's."""
    import torch

    if str(device).startswith("cuda"):
        torch.cuda.synchronize()
    t = time.perf_counter()
    r = fn()
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter() - t, r
