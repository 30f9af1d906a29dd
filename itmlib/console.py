"""Console helpers every layer may use: a progress bar, a line for the operator's terminal, a duration."""

from __future__ import annotations

import os

__all__ = ["bar", "log_line", "format_duration"]


def log_line(text: str) -> None:
    """Append ``text`` to the progress file ``ITM_PROGRESS_LOG`` (the terminal of ``make tables``) when it is set:
    what a run trains is said where its operator watches, without cluttering the notebook."""
    log = os.environ.get("ITM_PROGRESS_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(text.rstrip("\n") + "\n")


def bar(iterable, *, enabled: bool = True, **kwargs):
    """A tqdm progress bar (``tqdm.auto``: a widget in JupyterLab, text in a terminal) over ``iterable``,
    closed when done; off when ``enabled`` is false or the environment sets ``TQDM_DISABLE`` (``make tables``
    does, so no bar is saved in an executed notebook)."""
    from tqdm.auto import tqdm

    off = not enabled or os.environ.get("TQDM_DISABLE", "").lower() in ("1", "true", "yes")
    return tqdm(iterable, disable=off, leave=False, **kwargs)


def format_duration(seconds: float) -> str:
    """``"42 s"``, ``"4.1 min"`` or ``"2.3 h"``."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"

