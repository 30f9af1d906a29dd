"""Seeds, devices, named scales, parameter validation, and the short hash that names an array in cache keys.

Every notebook takes ``scale`` (``"smoke"``, ``"medium"`` or ``"full"``),
``seed`` and ``device`` (``"auto"``, ``"cpu"``, ``"cuda"``); this module turns
them into concrete settings and rejects bad values with a ``ValueError`` that
names the parameter.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import random
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

__all__ = [
    "Scale",
    "SCALES",
    "get_scale",
    "set_seed",
    "resolve_device",
    "check_fraction",
    "check_positive",
    "check_choice",
    "array_key",
]


def array_key(a: np.ndarray | None) -> str:
    """12 hex digits of the SHA-256 of an array's bytes (``"none"`` for None): names an array in a cache key."""
    return "none" if a is None else hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:12]


def check_positive(name: str, value: float, *, integer: bool = False) -> float:
    """Return ``value`` if it is a finite number > 0 (an int if ``integer``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number > 0, got {value!r}")
    if integer and int(value) != value:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if not math.isfinite(float(value)) or value <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return int(value) if integer else value


def check_fraction(name: str, value: float) -> float:
    """Return ``value`` if it lies in (0, 1]; a reduced-data fraction."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a fraction in (0, 1], got {value!r}")
    if not (0.0 < float(value) <= 1.0):
        raise ValueError(f"{name} must be a fraction in (0, 1], got {value!r}")
    return float(value)


def check_choice(name: str, value: Any, choices: Iterable[Any]) -> Any:
    """Return ``value`` if it is one of ``choices``."""
    choices = tuple(choices)
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value


@dataclass(frozen=True)
class Scale:
    """A named experiment size. Data sizes are images per split of the synthetic world.

    ``smoke`` runs every notebook in minutes on 2 CPU cores (tests, ``make course``);
    ``medium`` is the documented CPU scale for committed tables; ``full`` is
    Flickr30K-sized (29,000 / 1,014 / 1,000 images) and meant for a GPU.
    """

    name: str
    n_train: int
    n_dev: int
    n_test: int
    epochs: int
    batch_size: int
    embed_dim: int
    coco_train_images: int

    def __post_init__(self) -> None:
        for f in ("n_train", "n_dev", "n_test", "epochs", "batch_size", "embed_dim", "coco_train_images"):
            check_positive(f, getattr(self, f), integer=True)

    def n_images(self, split: str) -> int:
        """Number of images of ``split`` (``train``, ``dev``/``val``, ``test``)."""
        split = check_choice("split", split, ("train", "dev", "val", "test"))
        return {"train": self.n_train, "dev": self.n_dev, "val": self.n_dev, "test": self.n_test}[split]

    def replace(self, **overrides: Any) -> "Scale":
        return dataclasses.replace(self, **overrides)


SCALES: dict[str, Scale] = {
    "smoke": Scale("smoke", n_train=1500, n_dev=150, n_test=200, epochs=3, batch_size=64, embed_dim=128,
                   coco_train_images=2000),
    "medium": Scale("medium", n_train=8000, n_dev=500, n_test=1000, epochs=15, batch_size=128, embed_dim=256,
                    coco_train_images=20000),
    "full": Scale("full", n_train=29000, n_dev=1014, n_test=1000, epochs=30, batch_size=128, embed_dim=1024,
                  coco_train_images=113287),
}


def get_scale(scale: "str | Scale", **overrides: Any) -> Scale:
    """Look up a named scale (``smoke``, ``medium``, ``full``), optionally overriding fields.

    >>> get_scale("smoke").n_test
    200
    """
    if isinstance(scale, Scale):
        base = scale
    else:
        check_choice("scale", scale, SCALES)
        base = SCALES[scale]
    unknown = set(overrides) - {f.name for f in dataclasses.fields(Scale)}
    if unknown:
        raise ValueError(f"unknown scale field(s) {sorted(unknown)}")
    return base.replace(**overrides) if overrides else base


def set_seed(seed: int, *, deterministic: bool = True) -> None:
    """Seed python, numpy and torch; with ``deterministic`` also ask torch for
    deterministic kernels (``warn_only`` so unsupported ops do not crash)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    seed = int(seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    os.environ["PYTHONHASHSEED"] = str(seed)
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a hard dependency
        return
    torch.manual_seed(seed)
    if deterministic:
        torch.use_deterministic_algorithms(True, warn_only=True)
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        if hasattr(torch.backends, "cudnn"):
            torch.backends.cudnn.deterministic = True
            torch.backends.cudnn.benchmark = False


def device_label(device: str = "auto") -> str:
    """The device ``device`` resolves to, as a table or member record names it: ``"cpu"``, or ``"cuda"``
    with the GPU's model, e.g. ``"cuda (NVIDIA H200)"``."""
    name = resolve_device(device)
    if name == "cuda":
        import torch

        return f"cuda ({torch.cuda.get_device_name()})"
    return name


def resolve_device(device: str = "auto") -> str:
    """``"auto"`` -> ``"cuda"`` when a GPU is visible, else ``"cpu"``.

    ``"cuda"`` without a GPU raises ``ValueError`` (rather than failing later
    inside a training loop).
    """
    check_choice("device", device, ("auto", "cpu", "cuda"))
    import torch

    has_cuda = torch.cuda.is_available()
    if device == "auto":
        return "cuda" if has_cuda else "cpu"
    if device == "cuda" and not has_cuda:
        raise ValueError("device='cuda' was requested but torch sees no CUDA GPU; use device='auto' or 'cpu'")
    return device
