"""Phrase-level semantic labels (Fan et al., SSAMT, sec. 2.1 and 2.4): text only, no model.

An image's **semantic labels** are the phrases of the scene graphs of its five
captions - entities ``(dog,)``, attribute-object pairs ``(dog, brown)``,
subject-relation-object triples ``(dog, chasing, ball)`` - plus every token of those
captions as a one-word label (sec. 2.1):

    L(I) = ⋃_{c ∈ captions(I)} phrases(c) ∪ {(w,) : w ∈ tokens(c)}

A phrase or token ``p`` of another sentence is **positive** for ``I`` if it appears in
the labels or is included in some label, else **negative** (sec. 2.4). "Included" is
read as: every word of ``p`` is a word of one label, so ``(dog,)`` is included in
``(dog, chasing, ball)`` and the token ``ball`` too - except for a relation, whose
words must keep their roles: ``(cat, chasing, dog)`` is negative against the label
``(dog, chasing, cat)``, the very relation mismatch phrase matching exists to penalise:

    p ∈ P⁺(I)  ⇔  p ∈ L(I)                        for a relation (|p| = 3: subject, predicate, object)
    p ∈ P⁺(I)  ⇔  ∃ l ∈ L(I):  set(p) ⊆ set(l)    for an entity, an attribute pair or a token

Choices the paper leaves open (the extracted text lost its symbols): phrases are the
lemma tuples of :mod:`itmlib.relevance.scene_graph` (the synthetic world's gold graphs, or
spaCy + SceneGraphParser on real text, in place of SPICE's Java parser); a phrase's
*tokens* (the words its node is connected to, sec. 2.2) are the caption tokens that write
one of its elements - through the synthetic world's surface forms (``puppy`` writes
``dog``) or, on real text, the lemma itself or its plural.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

import pandas as pd

from .scene_graph import Tuple, parse_cached, parse_tuples

if TYPE_CHECKING:
    import torch

__all__ = ["Phrase", "KINDS", "phrase_kind", "caption_phrases", "image_labels", "split_phrases", "LabelIndex", "part_masks",
           "phrase_tokens", "label_quality", "canonical_phrase"]

Phrase = Tuple
KINDS = ("object", "attribute", "relation")


def phrase_kind(p: Phrase) -> str:
    """``object`` (1 word), ``attribute`` (object, attribute) or ``relation`` (subject, relation, object)."""
    if not 1 <= len(p) <= 3:
        raise ValueError(f"a phrase has 1 to 3 elements, got {p!r}")
    return KINDS[len(p) - 1]


def caption_phrases(captions: Sequence[str], backend: str = "gold", *, graphs: Sequence[dict] | None = None,
                    progress: bool = False) -> list[list[Phrase]]:
    """The phrases of every caption: ``gold`` (the synthetic world's caption graphs) or
    ``spacy`` (SceneGraphParser on any text; see :func:`~itmlib.relevance.scene_graph.parse_tuples`), parsed
    once per list of captions and cached (:func:`~itmlib.relevance.scene_graph.parse_cached`): every member of a
    grid reads its training captions' parse from disk."""
    if backend == "spacy":
        return parse_cached(captions)
    return parse_tuples(captions, backend, graphs=graphs, progress=progress)


def image_labels(phrases: Sequence[Sequence[Phrase]], tokens: Sequence[Sequence[str]],
                 per_image: int = 5) -> list[list[Phrase]]:
    """Labels of every image: the phrases and the tokens (as 1-tuples) of its ``per_image`` captions
    (captions image-major, as every dataset of the course)."""
    if len(phrases) != len(tokens) or len(phrases) % per_image:
        raise ValueError(f"need one phrase list and one token list per caption, {per_image} captions per image; "
                         f"got {len(phrases)} phrase lists and {len(tokens)} token lists")
    out = []
    for i in range(0, len(phrases), per_image):
        lab: set[Phrase] = set()
        for c in range(i, i + per_image):
            lab.update(tuple(p) for p in phrases[c])
            lab.update((w,) for w in tokens[c])
        out.append(sorted(lab))
    return out


def split_phrases(phrases: Iterable[Sequence[str]], labels: Iterable[Sequence[str]]
                  ) -> tuple[list[Phrase], list[Phrase]]:
    """(positive, negative) parts of a sentence against an image's labels (sec. 2.4).

    ``phrases`` are phrases and/or tokens (a token is a 1-tuple, or a plain string); a relation (3
    elements) is positive iff it is one of the labels, role for role; any shorter part iff all its
    words are words of one label (module docstring). The parts' order is kept."""
    labs = [_as_tuple(lab) for lab in labels]
    sets = [frozenset(lab) for lab in labs]
    pos, neg = [], []
    for p in phrases:
        t = _as_tuple(p)
        ok = t in labs if len(t) == 3 else any(set(t) <= lab for lab in sets)
        (pos if ok else neg).append(t)
    return pos, neg


def _as_tuple(p: Sequence[str] | str) -> Phrase:
    return (p,) if isinstance(p, str) else tuple(p)


class LabelIndex:
    """:func:`split_phrases` for many (image, part) pairs: per image, every subset of at most two words
    of every label, and the relation labels as they are, so that each test is one set lookup."""

    def __init__(self, labels: Sequence[Sequence[Phrase]]) -> None:
        self.subsets, self.relations = [], []
        for labs in labels:
            s: set[frozenset[str]] = set()
            for lab in labs:
                words = tuple(set(lab))
                s.update(frozenset(w for b, w in enumerate(words) if mask >> b & 1) for mask in range(1, 2 ** len(words))
                         if bin(mask).count("1") < 3)
            self.subsets.append(s)
            self.relations.append({_as_tuple(lab) for lab in labs if len(lab) == 3})

    def __len__(self) -> int:
        return len(self.subsets)

    def positive(self, image: int, part: Sequence[str]) -> bool:
        t = _as_tuple(part)
        return t in self.relations[image] if len(t) == 3 else frozenset(t) in self.subsets[image]


def part_masks(labels: LabelIndex, parts: Sequence[Sequence[Phrase]], lengths: Sequence[int], images: Sequence[int],
               captions: Sequence[int], T: int, width: int) -> tuple["torch.Tensor", "torch.Tensor"]:
    """Phrase matching's masks (eq. 3): positive and negative (N, width) booleans of each caption's parts
    (``parts[c]``: its ``lengths[c]`` tokens, then its phrases) against its paired image's labels, laid out as
    SSAMT lays out its nodes - ``T`` token slots, then the phrases; slots past a caption's parts are neither."""
    import torch

    pos = torch.zeros(len(captions), width, dtype=torch.bool)
    neg = torch.zeros_like(pos)
    for r, (i, c) in enumerate(zip(images, captions)):
        n_tok = int(lengths[c])
        for j, p in enumerate(parts[c]):
            col = j if j < n_tok else T + (j - n_tok)
            if col < width:
                (pos if labels.positive(int(i), p) else neg)[r, col] = True
    return pos, neg


def phrase_tokens(tokens: Sequence[str], phrase: Sequence[str],
                  surface: Mapping[str, frozenset[str]] | None = None) -> list[int]:
    """Positions of the caption tokens that write an element of ``phrase`` (its node's words).

    ``surface`` maps a canonical element to the words that write it (the synthetic world's
    :func:`~itmlib.data.synthetic.vocab.surface_words`); without it, or for an element it does
    not know, an element is written by itself, its plural (+s, +es) or, for multi-word
    elements, any of its words."""
    words: set[str] = set()
    for e in phrase:
        if surface is not None and e in surface:
            words |= surface[e]
        else:
            for w in e.replace("_", " ").split():
                words |= {w, w + "s", w + "es"}
    return [i for i, t in enumerate(tokens) if t in words]


def _inverse(surface: Mapping[str, frozenset[str]]) -> dict[str, str]:
    """Surface word -> the first canonical name that writes it."""
    inverse: dict[str, str] = {}
    for name, ws in surface.items():
        for w in ws:
            inverse.setdefault(w, name)
    return inverse


def canonical_phrase(p: Sequence[str], surface: Mapping[str, frozenset[str]],
                     inverse: Mapping[str, str] | None = None) -> Phrase:
    """A parsed phrase in the gold graphs' canonical names (``(puppy, brown)`` -> ``(dog, brown)``):
    each element maps to the canonical name one of whose surface words it contains (whole
    surface forms first), else stays as it is. ``inverse`` (surface word -> name) is built from
    ``surface`` when not given; pass it when mapping many phrases."""
    inverse = _inverse(surface) if inverse is None else inverse
    out = []
    for e in p:
        if e in surface:
            out.append(e)
            continue
        hit = inverse.get(e) or next((inverse[w] for w in e.split() if w in inverse), None)
        out.append(hit or e)
    return tuple(out)


def label_quality(gold: Sequence[Sequence[Phrase]], parsed: Sequence[Sequence[Phrase]],
                  surface: Mapping[str, frozenset[str]] | None = None) -> pd.DataFrame:
    """Precision and recall (percent) of parsed phrases against gold ones, per kind, micro-averaged
    over captions (parsed phrases mapped to canonical names with ``surface`` first)."""
    if len(gold) != len(parsed):
        raise ValueError(f"gold and parsed must list the same captions, got {len(gold)} and {len(parsed)}")
    inverse = _inverse(surface) if surface else {}
    rows = []
    for kind in KINDS:
        tp = n_g = n_p = 0
        for g, p in zip(gold, parsed):
            gs = {tuple(x) for x in g if phrase_kind(x) == kind}
            ps = {canonical_phrase(x, surface, inverse) if surface else tuple(x) for x in p if phrase_kind(x) == kind}
            tp += len(gs & ps)
            n_g += len(gs)
            n_p += len(ps)
        rows.append({"kind": kind, "gold": n_g, "parsed": n_p, "precision": 100 * tp / max(n_p, 1),
                     "recall": 100 * tp / max(n_g, 1)})
    return pd.DataFrame(rows)
