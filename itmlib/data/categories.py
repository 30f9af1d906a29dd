"""One category per object: caption words mapped to the 80 MS-COCO categories through CHAIR's synonym list.

Annotators name one object many ways ("a guy riding his bike", "a man on a bicycle"). The real-language world
makes its scenes from caption parses, so without a shared vocabulary of objects *guy*, *man* and *person*
would be three objects and *bike* and *bicycle* two. The list that maps caption words to the 80 COCO
categories is CHAIR's (Rohrbach, Hendricks et al., "Object Hallucination in Image Captioning", EMNLP 2018):
``assets/chair_synonyms.txt`` is ``data/synonyms.txt`` of the public repository LisaAnne/Hallucination
(commit 6e4d33c, BSD 2-Clause license), verbatim: one line per category, its name first, then its synonyms,
some of them two words ("motor bike", "cell phone", "teddy bear"). As CHAIR reads it, a word maps to the
first entry of its line, and a two-word name is matched before its words alone; "baby <animal>" and "adult
<animal>" are that animal.

Words that name no object - where a caption places or frames things - are never categories
(:data:`NOT_OBJECTS`: *background*, *area*, *front*, *side*, *top*, *picture*, *view* ...). Nouns outside the
80 categories that COCO captions name often (the street, a table top's food, the grass) are kept as their own
lemma by :func:`canonical` with ``keep_other=True``; which ones, and how often, the committed category table
says (:func:`category_table`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from importlib import resources

import pandas as pd

__all__ = ["NOT_OBJECTS", "synonyms", "categories", "canonical", "category_table"]

#: words a caption uses to place or frame things, which name no object of the scene
NOT_OBJECTS = frozenset({"background", "foreground", "area", "front", "side", "top", "bottom", "middle", "center",
                         "picture", "photo", "image", "view", "shot", "scene", "edge", "corner", "part", "way", "lot",
                         "couple", "group", "bunch", "pair", "variety", "kind", "type", "number", "closeup", "close",
                         "day", "time", "thing", "something", "someone", "display", "line", "row"})
#: CHAIR's animals, whose "baby"/"adult" forms are the animal
_ANIMALS = ("bird", "cat", "dog", "horse", "sheep", "cow", "elephant", "bear", "zebra", "giraffe")


@lru_cache(maxsize=1)
def synonyms() -> dict[str, str]:
    """Every name in CHAIR's list -> its category (the first entry of its line), lower case."""
    text = resources.files("itmlib.data").joinpath("assets/chair_synonyms.txt").read_text(encoding="utf-8")
    out: dict[str, str] = {}
    for line in text.splitlines():
        names = [n.strip().lower() for n in line.split(",") if n.strip()]
        for n in names:
            out.setdefault(n, names[0])
    for a in _ANIMALS:
        for age in ("baby", "adult"):
            out.setdefault(f"{age} {a}", a)
    return out


def categories() -> list[str]:
    """The 80 COCO categories, in the list's order."""
    return list(dict.fromkeys(synonyms().values()))


def canonical(lemmas: Sequence[str], *, keep_other: bool = False, others: Iterable[str] = ()) -> list[str]:
    """The object categories a caption's lemmas name, in order (a two-word name first: "motor bike" ->
    motorcycle). Words of :data:`NOT_OBJECTS` are dropped; a word outside the list is dropped unless
    ``keep_other`` (then itself) or it is one of ``others`` (the non-COCO heads a world keeps)."""
    syn, keep = synonyms(), set(others)
    words = [w.lower() for w in lemmas]
    out, i = [], 0
    while i < len(words):
        pair = " ".join(words[i:i + 2]) if i + 1 < len(words) else ""
        if pair in syn:
            out.append(syn[pair])
            i += 2
            continue
        w = words[i]
        if w in syn:
            out.append(syn[w])
        elif w not in NOT_OBJECTS and (keep_other or w in keep):
            out.append(w)
        i += 1
    return out


def category_table(noun_lemmas: Iterable[Sequence[str]], others: Sequence[str] = ()) -> pd.DataFrame:
    """One row per COCO category - its CHAIR synonyms and how many of the given captions (each a sequence of
    noun lemmas) name it - then one per kept non-COCO head of ``others`` (no synonyms): the committed table of
    the real-language world's objects, most named first within each part."""
    counts: Counter[str] = Counter()
    n = 0
    for lem in noun_lemmas:
        counts.update(set(canonical(lem, others=others)))
        n += 1
    syn = synonyms()
    row = lambda c, words: {"category": c, "synonyms": words, "captions": counts.get(c, 0),   # noqa: E731
                            "share of captions (%)": round(100 * counts.get(c, 0) / max(n, 1), 2)}
    coco = pd.DataFrame([row(c, ", ".join(sorted(k for k, v in syn.items() if v == c and k != c))) for c in categories()])
    rest = pd.DataFrame([row(c, "") for c in others], columns=coco.columns)
    return pd.concat([coco.sort_values("captions", ascending=False, kind="stable"),
                      rest.sort_values("captions", ascending=False, kind="stable")], ignore_index=True)
