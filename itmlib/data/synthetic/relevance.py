"""Gold relevance of any (image, caption) pair from the scene graphs.

Both sides are turned into sets of tuples, SPICE-style:

* objects ``(name)``, attributes ``(name, attr)``, relations ``(subj, rel, obj)``;
* an image's set is expanded with hypernyms: an image with a brown dog holds
  ``(dog)``, ``(animal)``, ``(dog, brown)`` and ``(animal, brown)``; counts
  ``(dog, two)`` hold when the image has exactly two dogs (two animals, ...).

The relevance of caption ``c`` to image ``i`` is the share of the caption's
tuples true in the image,

    rel(i, c) = |T(c) ∩ T(i)| / |T(c)|,

so a caption is fully relevant (1) to its own image and to every other image
it truly describes; this is the many-to-many relevance the NCS paper is about.
Computed blockwise as a sparse product, so any block of the (images x
captions) matrix costs milliseconds.

Stand-in human judgements quantise it to a 1-5 scale with noise,
``clip(round(1 + 4 * rel + sigma * z), 1, 5)``, with ``z`` a deterministic
standard normal per (seed, image, caption) so any block is reproducible.
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np
import scipy.sparse as sp

from .scenes import Scene
from .vocab import CATEGORIES, COLORS, HYPERNYMS, NUMBER_WORDS, PATTERNS, RELATIONS, SIZES

__all__ = ["TupleVocab", "TUPLES", "image_tuples", "caption_tuples", "tuple_matrix", "relevance_block",
           "human_block"]


class TupleVocab:
    """A fixed, deterministic index of every tuple the world can produce."""

    def __init__(self) -> None:
        names = [c.name for c in CATEGORIES] + list(HYPERNYMS)
        attrs = list(COLORS) + list(SIZES) + [p for p in PATTERNS if p != "plain"] + list(NUMBER_WORDS.values())
        items: list[tuple[str, ...]] = [(n,) for n in names]
        items += [(n, a) for n in names for a in attrs]
        items += [(s, r, o) for s in names for r in RELATIONS for o in names]
        self.items = items
        self.index = {t: i for i, t in enumerate(items)}

    def __len__(self) -> int:
        return len(self.items)

    def ids(self, tuples: Iterable[tuple[str, ...]]) -> np.ndarray:
        return np.array(sorted({self.index[t] for t in tuples}), dtype=np.int32)


TUPLES = TupleVocab()


def image_tuples(scene: Scene) -> np.ndarray:
    """Tuple ids true of a scene (hypernyms and exact counts included)."""
    names = [[c.name] + ([c.hypernym] if c.hypernym else []) for c in (CATEGORIES[k] for k in scene.cat)]
    out: list[tuple[str, ...]] = []
    counts: dict[str, int] = {}
    for k, nm in enumerate(names):
        attrs = [COLORS[scene.color[k]], SIZES[scene.size[k]]]
        if scene.pattern[k] != 0:
            attrs.append(PATTERNS[scene.pattern[k]])
        for n in nm:
            counts[n] = counts.get(n, 0) + 1
            out.append((n,))
            out += [(n, a) for a in attrs]
    out += [(n, NUMBER_WORDS[c]) for n, c in counts.items() if c in NUMBER_WORDS]
    for s, r, o in scene.relations:
        out += [(a, RELATIONS[r], b) for a in names[s] for b in names[o]]
    return TUPLES.ids(out)


def caption_tuples(graph: dict[str, Any]) -> np.ndarray:
    """Tuple ids a caption graph asserts."""
    objs = graph["objects"]
    out: list[tuple[str, ...]] = [(n,) for n in objs]
    out += [(objs[k], a) for k, a in graph["attributes"]]
    out += [(objs[s], r, objs[o]) for s, r, o in graph["relations"]]
    return TUPLES.ids(out)


def tuple_matrix(id_lists: list[np.ndarray]) -> sp.csr_matrix:
    """Rows of tuple ids -> a binary CSR matrix (rows x len(TUPLES))."""
    indptr = np.zeros(len(id_lists) + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(x) for x in id_lists])
    indices = np.concatenate(id_lists) if id_lists else np.zeros(0, np.int32)
    data = np.ones(indices.shape[0], dtype=np.float32)
    return sp.csr_matrix((data, indices, indptr), shape=(len(id_lists), len(TUPLES)))


def relevance_block(img_mat: sp.csr_matrix, cap_mat: sp.csr_matrix, images: np.ndarray,
                    captions: np.ndarray) -> np.ndarray:
    """rel(i, c) for the requested rows: (len(images), len(captions)) float32."""
    c = cap_mat[captions]
    hits = (img_mat[images] @ c.T).toarray()
    size = np.asarray(c.sum(axis=1)).ravel()
    return (hits / np.maximum(size, 1)[None, :]).astype(np.float32)


def _hash_normal(seed: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Deterministic N(0, 1) per (seed, a, b) via splitmix64 + Box-Muller."""
    def mix(x: np.ndarray) -> np.ndarray:
        x = (x + np.uint64(0x9E3779B97F4A7C15))
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))

    with np.errstate(over="ignore"):
        key = (np.uint64(seed) * np.uint64(0x100000001B3)) ^ (a.astype(np.uint64)[:, None] << np.uint64(32)) \
            ^ b.astype(np.uint64)[None, :]
        h1 = mix(key)
        h2 = mix(h1 ^ np.uint64(0xD1B54A32D192ED03))
    u1 = ((h1 >> np.uint64(11)).astype(np.float64) + 0.5) / 2.0**53
    u2 = ((h2 >> np.uint64(11)).astype(np.float64) + 0.5) / 2.0**53
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2 * np.pi * u2)


def human_block(rel: np.ndarray, seed: int, images: np.ndarray, captions: np.ndarray,
                sigma: float) -> np.ndarray:
    """Stand-in 1-5 human judgements for a relevance block (int8)."""
    z = _hash_normal(seed, images, captions)
    return np.clip(np.rint(1 + 4 * rel + sigma * z), 1, 5).astype(np.int8)
