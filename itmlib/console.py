"""Console helpers every layer may use: a progress bar, a line for the operator's terminal, a duration."""

from __future__ import annotations

import os

__all__ = ["bar", "log_line", "format_duration", "in_kernel", "interactive", "quiet_if_headless"]


def in_kernel() -> bool:
    """True inside a Jupyter kernel (JupyterLab, or papermill's headless one); False in a plain interpreter."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        return False
    ip = get_ipython()
    return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"


def interactive() -> bool:
    """True when a person is at a Jupyter front end (JupyterLab, Notebook, VS Code): its requests let the code ask
    for input, which a headless runner's never do (papermill, nbconvert, nbclient send ``allow_stdin=False``); a
    widget or a progress bar then shows. False in a plain interpreter, in headless kernels, and wherever the
    environment sets ``ITM_HEADLESS`` or ``ITM_PROGRESS_LOG`` (``make tables``)."""
    if os.environ.get("ITM_PROGRESS_LOG") or os.environ.get("ITM_HEADLESS") or not in_kernel():
        return False
    from IPython import get_ipython

    return bool(getattr(getattr(get_ipython(), "kernel", None), "_allow_stdin", False))


def quiet_if_headless() -> None:
    """In a headless kernel, turn off every library's progress bars (tqdm's, Hugging Face's) for this process, so
    an executed notebook saves no bar and no widget; a person's JupyterLab keeps them."""
    if not in_kernel() or interactive():
        return
    os.environ["TQDM_DISABLE"] = "1"                  # tqdm reads it when it is first imported
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"  # likewise huggingface_hub
    import sys

    if "huggingface_hub" in sys.modules:              # imported already: told directly
        sys.modules["huggingface_hub"].utils.disable_progress_bars()
    if "transformers" in sys.modules:
        sys.modules["transformers"].utils.logging.disable_progress_bar()


def log_line(text: str) -> None:
    """Append ``text`` to the progress file ``ITM_PROGRESS_LOG`` (the terminal of ``make tables``) when it is set:
    what a run trains is said where its operator watches, without cluttering the notebook."""
    log = os.environ.get("ITM_PROGRESS_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(text.rstrip("\n") + "\n")


def bar(iterable, *, enabled: bool = True, **kwargs):
    """A tqdm progress bar (``tqdm.auto``: a widget in JupyterLab, text in a terminal) over ``iterable``,
    closed when done; off when ``enabled`` is false, in a headless kernel (:func:`interactive`: papermill's, so no
    bar is saved in an executed notebook) or where the environment sets ``TQDM_DISABLE``."""
    from tqdm.auto import tqdm

    off = (not enabled or os.environ.get("TQDM_DISABLE", "").lower() in ("1", "true", "yes")
           or (in_kernel() and not interactive()))
    return tqdm(iterable, disable=off, leave=False, **kwargs)


def format_duration(seconds: float) -> str:
    """``"42 s"``, ``"4.1 min"`` or ``"2.3 h"``."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"

