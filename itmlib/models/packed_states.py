"""A frozen text encoder's token states of many captions, packed: each caption's tokens once, no padding.

TERAN with a frozen BERT (:mod:`itmlib.models.teran`) encodes every caption once and reads its states each
epoch. Padded to the longest caption (54 word-pieces), the 174,000 training captions of the real-language world
(58,000 images x 3) take 174,000 x 54 x 384 floats = 13.4 GiB, more than a worker of the 24 GB machine can hold
beside its world; packed, only their real tokens (12.9 a caption: 3.15 GiB; ``benchmarks/bench_teran_states.py``).
:class:`PackedStates` is taken like the padded ``(N, T, h)`` tensor it replaces - rows with ``states[idx]`` or
``states[a:b]`` (no tokens copied), the padded batch with ``states[:, :L]`` - so the training loop and the length
groups slice it as any input tensor; the padded batch holds the same values as the padded tensor did (zeros past
each caption's tokens).
"""

from __future__ import annotations

import hashlib
import platform
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from ..paths import atomic_write, cache_dir

__all__ = ["PackedStates", "stored_flat", "DISK_MIN_CAPTIONS"]

#: a frozen encoder's states of at least this many distinct captions are kept on disk (:func:`stored_flat`)
DISK_MIN_CAPTIONS = 50_000


def _machine() -> str:
    """This CPU's model and torch's version, hashed: float32 kernels round differently across CPUs, so a store
    written on one is not reused on another (benchmarks/README.md, "Does a retrain reproduce the records?")."""
    model = platform.processor()
    try:
        model = next(ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                     if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return hashlib.sha256(f"{model}|{platform.machine()}|{torch.__version__}".encode()).hexdigest()[:12]


def stored_flat(key: str, n_captions: int, build: Callable[[], torch.Tensor], folder: Path | None = None,
                min_captions: int = DISK_MIN_CAPTIONS) -> torch.Tensor:
    """``build()``'s (tokens, h) float32 store; for ``n_captions >= min_captions`` kept on disk
    (``folder``: ``data/cache/text_states``, one file per ``key`` and machine) and read back mapped
    copy-on-write: a restarted worker reads its states in seconds instead of encoding the captions again (the
    real-language world's 174,000: ~11 min on one AMD thread), and workers of one machine share the pages."""
    if n_captions < min_captions:
        return build()
    path = (cache_dir() / "text_states" if folder is None else Path(folder)) / f"{key[:32]}-{_machine()}.npy"
    if not path.is_file():
        flat = build()
        atomic_write(path, lambda fh: np.save(fh, flat.numpy()))
        del flat
    return torch.from_numpy(np.load(path, mmap_mode="c").view(np.ndarray))


class PackedStates:
    """Rows of token states over one packed store.

    ``flat``: (tokens, h), every stored caption's states one after another; ``start``, ``length``: (N,) where each
    row's tokens begin in ``flat`` and how many (rows may share a caption's tokens); ``width``: the padded width
    ``T`` the rows stand for (their longest caption's tokens at most)."""

    def __init__(self, flat: torch.Tensor, start: torch.Tensor, length: torch.Tensor, width: int) -> None:
        if flat.dim() != 2 or start.shape != length.shape or start.dim() != 1:
            raise ValueError(f"PackedStates needs flat (tokens, h) and start, length (N,); got {tuple(flat.shape)}, "
                             f"{tuple(start.shape)}, {tuple(length.shape)}")
        if len(start) and (int(length.max()) > width or int((start + length).max()) > len(flat) or int(start.min()) < 0):
            raise ValueError(f"PackedStates: a row's tokens lie outside the store ({len(flat)} tokens) or exceed "
                             f"the width {width}")
        self.flat, self.start, self.length, self.width = flat, start.long(), length.long(), int(width)

    @property
    def shape(self) -> torch.Size:
        """The padded tensor's shape, (N, T, h)."""
        return torch.Size((len(self.start), self.width, self.flat.shape[1]))

    @property
    def device(self) -> torch.device:
        return self.flat.device

    @property
    def dtype(self) -> torch.dtype:
        return self.flat.dtype

    def __len__(self) -> int:
        return len(self.start)

    def to(self, device: Any) -> PackedStates:
        """Itself: the store stays where it is, a padded batch (``states[:, :L]``) is moved by its reader."""
        return self

    def __getitem__(self, idx: Any) -> Any:
        """``states[rows]``: those rows (an index tensor or array, a slice, a mask), no tokens copied;
        ``states[:, :L]``: every row padded to ``L`` slots (a tensor (N, L, h), zeros past a row's tokens)."""
        if isinstance(idx, tuple):
            rows, cols = idx
            every_row = isinstance(rows, slice) and rows == slice(None)
            if not every_row or not isinstance(cols, slice) or cols.start not in (None, 0) or cols.step not in (None, 1):
                raise IndexError("PackedStates: only states[rows] and states[:, :L] are supported")
            return self.padded(self.width if cols.stop is None else min(int(cols.stop), self.width))
        return PackedStates(self.flat, self.start[idx], self.length[idx], self.width)

    def padded(self, width: int | None = None) -> torch.Tensor:
        """(N, width, h): row i's tokens in slots 0..length_i - 1, zeros after them (``width``: ``T`` if None)."""
        width = self.width if width is None else width
        slots = torch.arange(width)
        real = slots[None, :] < self.length[:, None]
        if not len(self.flat):
            return torch.zeros(len(self), width, self.flat.shape[1], dtype=self.flat.dtype)
        pos = torch.where(real, self.start[:, None] + slots[None, :], 0)
        return torch.where(real[..., None], self.flat[pos], torch.zeros((), dtype=self.flat.dtype))
