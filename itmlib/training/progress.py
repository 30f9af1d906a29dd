"""Progress of a long grid: what each member trains, which come from checkpoints, and the ETA.

``make tables`` runs each notebook in a papermill kernel, whose printed output lands in the executed
notebook, not in the terminal. :class:`GridProgress` therefore shows a grid as **one line** in the
notebook, updated in place (a reader of the executed copy sees the grid's final summary, a user in
JupyterLab sees it move), and appends every per-member line to the file named by the environment
variable ``ITM_PROGRESS_LOG`` when it is set - ``python -m itmlib.course.notebooks run`` sets it and prints the
file's new lines to its terminal as they come::

    [grid] 16 members: 2 from their records, 7 from checkpoints, 1 partly trained, 6 to train (70 of 240 epochs left)
    [grid] 10/16 +PM (w/ phrases), fraction 0.5, seed 1: training epochs 4 -> 15
    [grid] 10/16 +PM (w/ phrases), fraction 0.5, seed 1: done in 4.1 min (22.4 s per epoch); grid ETA 38 min

The ETA is the epochs left, each weighted by its member's training images (a fraction of 0.5 trains half
the batches per epoch), times the seconds per weighted epoch measured on this grid's trained members so
far, divided by the workers; a rough figure (models and evaluations differ in cost), printed once one
member has trained.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from typing import TextIO

from ..console import format_duration, log_line

__all__ = ["GridProgress", "MemberStatus"]


@dataclass
class MemberStatus:
    """One grid member: its label, the epochs its checkpoints hold before the grid runs, its epochs, its
    training images (the weight of one of its epochs in the ETA), and whether its member record (rows and
    history, see :func:`itmlib.training.grid.run_grid`) stands in for training and evaluating it."""
    label: str
    done: int
    epochs: int
    images: int = 1
    recorded: bool = False

    @property
    def left(self) -> int:
        return max(self.epochs - self.done, 0)


class GridProgress:
    """Lines per grid member (see the module docstring); ``enabled=False`` prints nothing."""

    def __init__(self, members: list[MemberStatus], *, workers: int = 1, enabled: bool = True,
                 streams: list[TextIO] | None = None):
        self.members, self.workers, self.enabled = members, max(int(workers), 1), enabled
        self._streams = streams
        self._finished: set[int] = set()
        self._trained_s = 0.0
        self._trained_epochs = 0
        self._t0 = time.perf_counter()
        self._handle = None   # the notebook's one progress line (an IPython display handle)

    # -- output -------------------------------------------------------------------------------
    def _emit(self, line: str) -> None:
        if not self.enabled:
            return
        text = f"[grid] {line}"
        if self._streams is not None:
            for s in self._streams:
                print(text, file=s, flush=True)
            return
        log_line(text)
        if not self._notebook_line(text) and not os.environ.get("ITM_PROGRESS_LOG"):
            print(text, file=sys.stdout, flush=True)

    def _notebook_line(self, text: str) -> bool:
        """Show ``text`` as the grid's one line of notebook output (replacing the last); False outside a kernel."""
        try:
            from IPython import get_ipython
            from IPython.display import display
        except ImportError:   # pragma: no cover
            return False
        if get_ipython() is None or type(get_ipython()).__name__ != "ZMQInteractiveShell":
            return False
        if self._handle is None:
            self._handle = display({"text/plain": text}, raw=True, display_id=True)
        else:
            self._handle.update({"text/plain": text}, raw=True)
        return True

    def _head(self, i: int) -> str:
        return f"{i + 1}/{len(self.members)} {self.members[i].label}"

    # -- events -------------------------------------------------------------------------------
    def begin(self) -> None:
        rec = sum(m.recorded for m in self.members)
        full = sum(m.left == 0 and not m.recorded for m in self.members)
        part = sum(0 < m.done < m.epochs for m in self.members)
        new = len(self.members) - rec - full - part
        left = sum(m.left for m in self.members)
        total = sum(m.epochs for m in self.members)
        self._emit(f"{len(self.members)} members: " + (f"{rec} from their records, " if rec else "") +
                   f"{full} from checkpoints, {part} partly trained, {new} to train "
                   f"({left} of {total} epochs left)" + (f", {self.workers} workers" if self.workers > 1 else ""))

    def recorded(self, i: int) -> None:
        """Member ``i`` comes from its member record: neither trained nor evaluated."""
        self._finished.add(i)
        self._emit(f"{self._head(i)}: from its member record")

    def start(self, i: int) -> None:
        m = self.members[i]
        what = "from checkpoint" if m.left == 0 else \
            f"training epochs {m.done} -> {m.epochs}" + (" (resumed)" if m.done else "")
        self._emit(f"{self._head(i)}: {what}")

    def finish(self, i: int, seconds: float) -> None:
        m = self.members[i]
        self._finished.add(i)
        if m.left:
            self._trained_s += seconds
            self._trained_epochs += m.left * m.images
        note = f"done in {format_duration(seconds)} ({seconds / m.left:.1f} s per epoch)" if m.left else \
            f"loaded and evaluated in {format_duration(seconds)}"
        eta = self.eta_seconds()
        if eta is not None and len(self._finished) < len(self.members):
            note += f"; grid ETA {format_duration(eta)}"
        self._emit(f"{self._head(i)}: {note}")

    def end(self) -> None:
        rec = sum(m.recorded for m in self.members)
        trained = sum(1 for m in self.members if m.left and not m.recorded)
        how = ", ".join(x for x in (f"{rec} from their records" if rec else "", f"{trained} trained" if trained else "",
                                    f"{len(self.members) - rec - trained} from checkpoints"
                                    if len(self.members) - rec - trained else "") if x)
        self._emit(f"all {len(self.members)} members ({how}) in {format_duration(time.perf_counter() - self._t0)}")

    def eta_seconds(self) -> float | None:
        """Seconds left for the unfinished members at the measured seconds per (image-weighted) epoch;
        None before any member trained."""
        if not self._trained_epochs:
            return None
        left = sum(m.left * m.images for j, m in enumerate(self.members) if j not in self._finished)
        return left * self._trained_s / self._trained_epochs / self.workers
