"""A stochastic caption grammar over scene graphs, each caption with its gold graph.

Every caption is generated from facts of its own scene, so it is fully true of
its image (gold relevance 1). Detail varies per caption, as in COCO: some
captions name one object, others two or three with attributes and a relation,
others count objects ("two dogs and a red car"). Synonyms ("puppy"),
hypernyms ("an animal"), optional articles and filler phrases make the same
fact come out in many surface forms.

A caption graph is ``{"objects": [name, ...], "attributes": [[obj, attr], ...],
"relations": [[subj, rel, obj], ...]}`` with canonical names; ``name`` may be
a hypernym, ``attr`` a colour, size, pattern or number word.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .scenes import Scene, WorldConfig
from .vocab import (CATEGORIES, COLOR_WORDS, COLORS, NUMBER_WORDS, PATTERNS, RELATION_WORDS, RELATIONS, SIZE_WORDS,
                    SIZES, noun_forms)

__all__ = ["generate_caption", "generate_captions"]

_PREFIX = ("", "", "", "there is ", "a picture of ", "an image of ", "a photo of ")
_SUFFIX = ("", "", "", " in the picture", " in this image", " in the scene")
_FINITE = {"is", "rides", "holds", "chases", "sits", "looks"}
_ACTION_SET = {"riding", "holding", "chasing", "sitting_on", "looking_at"}


def _pick(rng: np.random.Generator, seq: Any) -> Any:
    return seq[int(rng.integers(len(seq)))]


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


class _Builder:
    """Accumulates the caption graph while noun phrases are written."""

    def __init__(self, rng: np.random.Generator, scene: Scene, cfg: WorldConfig) -> None:
        self.rng, self.scene, self.cfg = rng, scene, cfg
        self.objects: list[str] = []
        self.attributes: list[list[Any]] = []
        self.relations: list[list[Any]] = []
        self.grounding: list[list[Any]] = []  # [graph node, scene object, noun word as written]
        d = cfg.caption_detail
        self.p_color, self.p_size, self.p_pattern = 0.15 + 0.7 * d, 0.05 + 0.4 * d, 0.05 + 0.5 * d

    def name_of(self, k: int) -> str:
        cat = CATEGORIES[self.scene.cat[k]]
        if cat.hypernym and self.rng.random() < self.cfg.generic_word_prob:
            return cat.hypernym
        return cat.name

    def np_object(self, k: int, definite: bool = False) -> tuple[str, int]:
        """A noun phrase for object ``k`` with some of its attributes; returns (text, graph node)."""
        rng, sc = self.rng, self.scene
        name = self.name_of(k)
        node = len(self.objects)
        self.objects.append(name)
        words = []
        if rng.random() < self.p_size:
            words.append(_pick(rng, SIZE_WORDS[SIZES[sc.size[k]]]))
            self.attributes.append([node, SIZES[sc.size[k]]])
        # people are coloured by their clothes: "a woman in red", "a striped man" -> "a man in stripes"
        person = CATEGORIES[sc.cat[k]].hypernym == "person"
        after = []
        if rng.random() < self.p_color:
            word = _pick(rng, COLOR_WORDS[COLORS[sc.color[k]]])
            (after if person else words).append(f"{_pick(rng, ('in', 'wearing'))} {word}" if person else word)
            self.attributes.append([node, COLORS[sc.color[k]]])
        if sc.pattern[k] != 0 and rng.random() < self.p_pattern:
            pat = PATTERNS[sc.pattern[k]]
            (after if person else words).append(f"in {'stripes' if pat == 'striped' else 'spots'}" if person else pat)
            self.attributes.append([node, pat])
        singular, _ = noun_forms(name)
        words.append(_pick(rng, singular))
        self.grounding.append([node, int(k), words[-1]])
        text = " ".join(words + after[:1])
        if len(after) > 1:
            text += " and " + after[1].split(" ", 1)[1]
        det = "the" if definite else _article(text)
        return f"{det} {text}", node

    def np_count(self, name: str, count: int) -> str:
        """'two dogs': a counted group, no attributes (they may differ inside the group)."""
        node = len(self.objects)
        self.objects.append(name)
        self.attributes.append([node, NUMBER_WORDS[count]])
        _, plural = noun_forms(name)
        return f"{NUMBER_WORDS[count]} {_pick(self.rng, plural)}"

    def graph(self) -> dict[str, Any]:
        return {"objects": self.objects, "attributes": self.attributes, "relations": self.relations,
                "grounding": self.grounding}


def _counts(scene: Scene) -> dict[str, int]:
    """Objects per category and per hypernym, for counted phrases."""
    out: dict[str, int] = {}
    for c in scene.cat:
        cat = CATEGORIES[c]
        for nm in (cat.name, cat.hypernym):
            if nm:
                out[nm] = out.get(nm, 0) + 1
    return out


def generate_caption(rng: np.random.Generator, scene: Scene, cfg: WorldConfig) -> tuple[str, dict[str, Any]]:
    """One caption of ``scene`` and its gold graph."""
    b = _Builder(rng, scene, cfg)
    d = cfg.caption_detail
    p = np.array([1.2 - d, 1.0, 0.3 + 1.2 * d, 0.2 + 0.6 * d])
    level = int(rng.choice(4, p=p / p.sum())) + 1
    counts = {k: v for k, v in _counts(scene).items() if v >= 2}
    if level == 4 and not counts:
        level = 3
    if level == 1:
        k = int(rng.integers(scene.n))
        name = CATEGORIES[scene.cat[k]].name
        if name in counts and rng.random() < 0.5:
            text = b.np_count(name, counts[name])
        else:
            text, _ = b.np_object(k)
        text = _pick(rng, _PREFIX) + text + _pick(rng, _SUFFIX)
    elif level in (2, 3):
        acts = [r for r in scene.relations if RELATIONS[r[1]] in _ACTION_SET]
        s, r, o = _pick(rng, acts) if acts and rng.random() < 0.6 else _pick(rng, scene.relations)
        subj, ns = b.np_object(s)
        obj, no = b.np_object(o)
        rel = RELATIONS[r]
        there = rng.random() < 0.3  # "there is a dog chasing a ball": no finite verb after it
        forms = [w for w in RELATION_WORDS[rel] if not there or w.split()[0] not in _FINITE]
        words = _pick(rng, forms)
        if not there and rel not in _ACTION_SET and rng.random() < 0.4:
            words = "is " + words
        b.relations.append([ns, rel, no])
        text = f"{subj} {words} {obj}"
        others = [k for k in range(scene.n) if k not in (s, o)]
        if level == 3 and others:
            k = _pick(rng, others)
            third, _ = b.np_object(k)
            text += _pick(rng, (" and ", ", with ", " and also ")) + third
        if there:
            text = "there is " + text
        text += _pick(rng, _SUFFIX)
    else:
        groups = list(counts.items())
        name, cnt = _pick(rng, groups)
        parts = [b.np_count(name, cnt)]
        # a further single object not covered by that group
        cover = {k for k in range(scene.n) if name in (CATEGORIES[scene.cat[k]].name, CATEGORIES[scene.cat[k]].hypernym)}
        rest = [k for k in range(scene.n) if k not in cover]
        if rest:
            parts.append(b.np_object(_pick(rng, rest))[0])
        text = ("there are " if rng.random() < 0.5 else "") + " and ".join(parts) + _pick(rng, _SUFFIX)
    return text, b.graph()


def generate_captions(rng: np.random.Generator, scene: Scene, cfg: WorldConfig,
                      n: int = 5) -> tuple[list[str], list[dict[str, Any]]]:
    """``n`` captions of one scene (re-drawn up to 5 times to avoid exact duplicates)."""
    texts: list[str] = []
    graphs: list[dict[str, Any]] = []
    for _ in range(n):
        for _try in range(5):
            t, g = generate_caption(rng, scene, cfg)
            if t not in texts:
                break
        texts.append(t)
        graphs.append(g)
    return texts, graphs
