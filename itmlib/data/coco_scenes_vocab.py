"""The real-language world's vocabulary (:mod:`itmlib.data.coco_scenes`): which parsed lemmas name an object and
its category (CHAIR's synonyms and two-word names, then the world's other object lemmas), which name an
attribute, and which state a count. The world's scenes and every retriever that reads a caption the way the
scenes do (:func:`itmlib.course.retrievers.lexical_floor`) share it."""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

from .categories import NOT_OBJECTS, categories, synonyms

__all__ = ["NUMBERS", "MAX_COUNT", "not_objects", "Vocabulary", "build_vocab", "dataset_vocab"]

#: words that state a count, not an attribute
NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "couple": 2, "pair": 2, "several": 3,
           "many": 4, "few": 3, "group": 3, "lot": 4, "bunch": 3}
MAX_COUNT = 4


@functools.lru_cache(maxsize=1)
def not_objects() -> frozenset[str]:
    """Lemmas the parser can return as objects that name none: English stop words ("that", "it", "something";
    spaCy's list, offline), the count words ("group" of "a group of people") and the words that place or frame
    things (:data:`~itmlib.data.categories.NOT_OBJECTS`)."""
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(STOP_WORDS) | frozenset(NUMBERS) | NOT_OBJECTS


@dataclass(frozen=True)
class Vocabulary:
    """The world's objects and attributes (module docstring): ``categories`` (the 80 COCO categories, then the
    kept other heads; index ``len(categories)`` is "other"), ``attributes``, and ``lemma_index``: every lemma that
    names a category -> its index (CHAIR's single-word synonyms and the kept heads)."""

    categories: tuple[str, ...]
    attributes: tuple[str, ...]
    lemma_index: dict[str, int]

    @property
    def other(self) -> int:
        return len(self.categories)

    def category(self, lemma: str, attributes: Sequence[str] = ()) -> int:
        """The category of an object ``lemma`` given the caption's attributes of it: a two-word CHAIR name read
        off an attribute and the lemma first ("teddy" + "bear" -> teddy bear), else the lemma's own."""
        syn = synonyms()
        for a in attributes:
            name = syn.get(f"{a} {lemma}")
            if name is not None and name in self.lemma_index:
                return self.lemma_index[name]
        return self.lemma_index.get(lemma, self.other)

    def of_caption(self, tuples: Sequence[tuple[str, ...]]) -> dict[str, int]:
        """Each object lemma of one caption's tuples -> its category (:meth:`category`)."""
        attrs: dict[str, list[str]] = {}
        for t in tuples:
            if len(t) == 2:
                attrs.setdefault(t[0], []).append(t[1])
        lemmas = {t[0] for t in tuples} | {t[2] for t in tuples if len(t) == 3}
        return {w: self.category(w, attrs.get(w, ())) for w in lemmas}


def _lemma_index(names: Sequence[str]) -> dict[str, int]:
    skip, syn = not_objects(), synonyms()
    index = {w: k for k, w in enumerate(names)}
    return index | {w: index[c] for w, c in syn.items() if " " not in w and w not in skip and c in index}


def build_vocab(tuples: Sequence[Sequence[tuple[str, ...]]], n_categories: int, n_attributes: int) -> Vocabulary:
    """The vocabulary of the scene captions' tuples: the 80 COCO categories (CHAIR's names), then the most
    frequent object lemmas that name no COCO category and do name an object (:func:`not_objects`), up to
    ``n_categories`` in all (0: every one of them); the ``n_attributes`` most frequent attribute lemmas. Ties in
    order of first appearance (never by spelling: renaming every word leaves the indices, and so the features,
    unchanged)."""
    skip, syn = not_objects(), synonyms()
    coco = categories()
    objs = Counter(t[0] for r in tuples for t in sorted(set(r), key=r.index)
                   if len(t) == 1 and t[0] not in skip and t[0] not in syn)
    heads = [w for w, _ in objs.most_common(max(n_categories - len(coco), 0) if n_categories else None)]
    attrs = Counter(t[1] for r in tuples for t in sorted(set(r), key=r.index) if len(t) == 2 and t[1] not in NUMBERS)
    names = tuple(coco) + tuple(heads)
    return Vocabulary(names, tuple(w for w, _ in attrs.most_common(n_attributes)), _lemma_index(names))


def dataset_vocab(ds: Any) -> Vocabulary:
    """The vocabulary a built ``coco_scenes`` split carries (``image_extras["categories"]`` and ``["attributes"]``):
    what a retriever reads captions with, the way the world read its scene captions."""
    names = tuple(ds.image_extras["categories"][0][:-1])
    return Vocabulary(names, tuple(ds.image_extras["attributes"][0]), _lemma_index(names))
