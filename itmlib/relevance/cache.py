"""An on-disk cache for relevance matrices: keyed, self-describing, resumable, never stale.

A matrix is stored under ``<cache>/relevance/<metric>-<key>/`` as row blocks
(``rows_000000.npy`` ...), once complete as one ``matrix.npy`` too, plus ``meta.json`` recording the metric, its
settings (document-frequency source, tokenisation, parser backend, ...), the
input sizes and a format version. The key hashes all of these *and* the exact
input texts, so a change in any of them is a different entry: an entry can
never be stale. Blocks are written atomically one by one; an interrupted
computation resumes at the first missing block. A complete matrix is read memory-mapped (copy-on-write): the
workers of a pool that read the same relevance share its pages instead of each holding a copy (TERAN's dev and
test relevance on the real-language world: 1.8 GB a worker).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
from ..console import bar

from ..paths import atomic_write, cache_dir

__all__ = ["RelevanceCache", "CACHE_VERSION", "fingerprint"]

CACHE_VERSION = 1


def fingerprint(refs: Sequence[Sequence[str]], candidates: Sequence[str]) -> str:
    """sha256 of the exact texts (reference grouping included)."""
    h = hashlib.sha256()
    for group in refs:
        h.update(b"\x1e")
        for s in group:
            h.update(s.encode("utf-8") + b"\x1f")
    h.update(b"\x1d")
    for s in candidates:
        h.update(s.encode("utf-8") + b"\x1f")
    return h.hexdigest()


class RelevanceCache:
    """Where relevance matrices live: ``$ITM_CACHE_DIR/relevance`` or ``<repo>/data/cache/relevance``."""

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root) if root is not None else cache_dir() / "relevance"

    def entry(self, metric: str, settings: dict[str, Any], refs: Sequence[Sequence[str]],
              candidates: Sequence[str]) -> Path:
        meta = json.dumps({"metric": metric, "settings": settings, "version": CACHE_VERSION}, sort_keys=True)
        key = hashlib.sha256((meta + fingerprint(refs, candidates)).encode()).hexdigest()[:20]
        return self.root / f"{metric}-{key}"

    def matrix(self, metric: str, settings: dict[str, Any], refs: Sequence[Sequence[str]],
               candidates: Sequence[str], compute: Callable[[slice], np.ndarray], *, block: int = 500,
               progress: bool = False) -> np.ndarray:
        """The (len(refs), len(candidates)) matrix; ``compute(rows)`` computes the rows of one block."""
        path = self.entry(metric, settings, refs, candidates)
        path.mkdir(parents=True, exist_ok=True)
        meta = {"metric": metric, "settings": settings, "version": CACHE_VERSION, "n_images": len(refs),
                "n_candidates": len(candidates), "block": block}
        meta_path = path / "meta.json"
        if meta_path.is_file():
            old = json.loads(meta_path.read_text())
            if old.get("block") != block:
                block = int(old["block"])  # resume with the block size the entry was started with
                meta["block"] = block
        else:
            atomic_write(meta_path, lambda fh: fh.write(json.dumps(meta, indent=1, sort_keys=True).encode()))
        whole = path / "matrix.npy"
        if not whole.is_file():
            parts = []
            for s in bar(range(0, len(refs), block), desc=metric, enabled=progress):
                f = path / f"rows_{s:06d}.npy"
                if not f.is_file():
                    rows = compute(slice(s, min(s + block, len(refs))))
                    atomic_write(f, lambda fh, rows=rows: np.save(fh, rows))
                parts.append(np.load(f))
            atomic_write(whole, lambda fh: np.save(fh, np.concatenate(parts, axis=0)))
            del parts
        # mapped copy-on-write: processes reading one matrix share its pages (a write copies only the pages it touches)
        return np.load(whole, mmap_mode="c").view(np.ndarray)

    def meta(self, metric: str, settings: dict[str, Any], refs: Sequence[Sequence[str]],
             candidates: Sequence[str]) -> dict[str, Any] | None:
        p = self.entry(metric, settings, refs, candidates) / "meta.json"
        return json.loads(p.read_text()) if p.is_file() else None
