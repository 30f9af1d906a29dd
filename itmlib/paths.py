"""Repository-root path resolution, and the one atomic file write.

Users run papermill from ``notebooks/`` as often as from the repository root,
so every relative path a notebook receives (``results_dir``, ``data_dir``, ...)
is resolved against the repository root, never against the current working
directory.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, BinaryIO, Callable

__all__ = ["repo_root", "resolve_path", "shown_path", "cache_dir", "atomic_write_text"]


def repo_root() -> Path:
    """The itm-course checkout this package lives in.

    Order: ``$ITM_COURSE_ROOT`` if set; else the parent of the ``itmlib``
    package when it holds ``pyproject.toml`` (editable install, the normal
    case); else the first ancestor of the cwd holding ``pyproject.toml`` and
    ``itmlib/``; else the cwd.
    """
    env = os.environ.get("ITM_COURSE_ROOT")
    if env:
        return Path(env).expanduser().resolve()
    pkg_parent = Path(__file__).resolve().parent.parent
    if (pkg_parent / "pyproject.toml").is_file():
        return pkg_parent
    here = Path.cwd().resolve()
    for cand in (here, *here.parents):
        if (cand / "pyproject.toml").is_file() and (cand / "itmlib").is_dir():
            return cand
    return here


def resolve_path(path: str | os.PathLike[str]) -> Path:
    """``path`` itself if absolute (``~`` expanded), else ``repo_root() / path``."""
    p = Path(path).expanduser()
    return p if p.is_absolute() else repo_root() / p


def shown_path(path: str | os.PathLike[str]) -> str:
    """``path`` as a reader should see it: from the repository root where it lies inside it
    (``results/05_sam_reduced_data/members``), else as given - never this machine's folders for the repository's own.

    >>> shown_path(repo_root() / "results" / "x")
    'results/x'
    """
    p = Path(path)
    try:
        return p.resolve().relative_to(repo_root().resolve()).as_posix()
    except ValueError:
        return str(p)


def cache_dir() -> Path:
    """Where generated data is cached: ``$ITM_CACHE_DIR`` or ``<repo>/data/cache``."""
    env = os.environ.get("ITM_CACHE_DIR")
    return resolve_path(env) if env else repo_root() / "data" / "cache"


def atomic_write(path: Path, write: Callable[[BinaryIO], Any]) -> None:
    """Write ``path`` through ``write(binary handle)`` into a temporary file of its own in the same folder,
    then ``os.replace``: a killed run leaves no half file, and two processes writing one entry side by side
    never share a temporary name."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8, newlines as given) to ``path`` by :func:`atomic_write`."""
    atomic_write(path, lambda fh: fh.write(text.encode("utf-8")))
