"""The synthetic world's vocabulary: categories, attributes, relations and their words.

Canonical names (``dog``, ``brown``, ``left_of``) are what scene graphs hold;
surface words (``puppy``, ``to the left of``) are what captions say. Hypernyms
(``animal``, ``vehicle``, ...) are the "shared vocabulary": a caption that says
"an animal" is true of every image with any animal in it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "Category", "CATEGORIES", "CATEGORY_INDEX", "HYPERNYMS", "COLORS", "COLOR_RGB", "SIZES", "PATTERNS",
    "RELATIONS", "SPATIAL", "ACTIONS", "ACTION_RULES", "BACKGROUNDS", "NUMBER_WORDS", "noun_forms", "surface_words",
]


@dataclass(frozen=True)
class Category:
    name: str
    synonyms: tuple[str, ...]   # singular surface forms, first is the canonical word
    plural: tuple[str, ...]     # plural forms, aligned with synonyms
    hypernym: str | None        # generic word covering this category
    shape: str                  # how the renderer draws it
    mark: str                   # inner mark distinguishing categories of one shape


def _c(name: str, syn: str, plural: str, hyper: str | None, shape: str, mark: str) -> Category:
    return Category(name, tuple(syn.split(",")), tuple(plural.split(",")), hyper, shape, mark)


CATEGORIES: tuple[Category, ...] = (
    _c("dog", "dog,puppy", "dogs,puppies", "animal", "ellipse", "ears"),
    _c("cat", "cat,kitten", "cats,kittens", "animal", "ellipse", "dot"),
    _c("horse", "horse,pony", "horses,ponies", "animal", "rect", "ears"),
    _c("bird", "bird", "birds", "animal", "triangle", "dot"),
    _c("cow", "cow", "cows", "animal", "rect", "dot"),
    _c("sheep", "sheep,lamb", "sheep,lambs", "animal", "ellipse", "ring"),
    _c("man", "man,guy", "men,guys", "person", "person", "bar"),
    _c("woman", "woman,lady", "women,ladies", "person", "person", "dot"),
    _c("child", "child,kid", "children,kids", "person", "person", "ring"),
    _c("car", "car,automobile", "cars,automobiles", "vehicle", "car", "none"),
    _c("bus", "bus", "buses", "vehicle", "rect", "windows"),
    _c("bicycle", "bicycle,bike", "bicycles,bikes", "vehicle", "wheels", "none"),
    _c("motorcycle", "motorcycle,motorbike", "motorcycles,motorbikes", "vehicle", "wheels", "bar"),
    _c("boat", "boat", "boats", "vehicle", "trapezoid", "none"),
    _c("truck", "truck", "trucks", "vehicle", "car", "windows"),
    _c("chair", "chair", "chairs", "furniture", "chair", "none"),
    _c("table", "table", "tables", "furniture", "table", "none"),
    _c("bench", "bench", "benches", "furniture", "table", "bar"),
    _c("ball", "ball", "balls", "toy", "ellipse", "none"),
    _c("kite", "kite", "kites", "toy", "diamond", "none"),
    _c("umbrella", "umbrella", "umbrellas", None, "umbrella", "none"),
    _c("cup", "cup,mug", "cups,mugs", None, "trapezoid", "ring"),
    _c("clock", "clock", "clocks", None, "ellipse", "hands"),
    _c("bag", "bag", "bags", None, "rect", "ring"),
    _c("tree", "tree", "trees", "plant", "tree", "none"),
    _c("flower", "flower", "flowers", "plant", "star", "dot"),
)
CATEGORY_INDEX = {c.name: i for i, c in enumerate(CATEGORIES)}

#: generic word -> (singular, plural) surface forms
HYPERNYMS: dict[str, tuple[str, str]] = {
    "animal": ("animal", "animals"),
    "person": ("person", "people"),
    "vehicle": ("vehicle", "vehicles"),
    "furniture": ("piece of furniture", "pieces of furniture"),
    "toy": ("toy", "toys"),
    "plant": ("plant", "plants"),
}

COLORS: tuple[str, ...] = ("red", "blue", "green", "yellow", "white", "black", "brown", "orange", "purple",
                           "pink", "gray")
COLOR_WORDS: dict[str, tuple[str, ...]] = {c: (c,) for c in COLORS} | {"gray": ("gray", "grey")}
COLOR_RGB: dict[str, tuple[int, int, int]] = {
    "red": (205, 40, 40), "blue": (40, 80, 210), "green": (40, 160, 60), "yellow": (235, 210, 40),
    "white": (245, 245, 245), "black": (25, 25, 25), "brown": (130, 80, 40), "orange": (240, 140, 30),
    "purple": (130, 60, 170), "pink": (240, 150, 190), "gray": (128, 128, 128),
}
SIZES: tuple[str, ...] = ("small", "large")
SIZE_WORDS: dict[str, tuple[str, ...]] = {"small": ("small", "little"), "large": ("large", "big")}
PATTERNS: tuple[str, ...] = ("plain", "striped", "spotted")  # "plain" is never said in a caption

SPATIAL: tuple[str, ...] = ("left_of", "right_of", "above", "below", "next_to")
ACTIONS: tuple[str, ...] = ("riding", "holding", "chasing", "sitting_on", "looking_at")
RELATIONS: tuple[str, ...] = SPATIAL + ACTIONS
RELATION_WORDS: dict[str, tuple[str, ...]] = {
    "left_of": ("to the left of", "left of", "on the left of"),
    "right_of": ("to the right of", "right of", "on the right of"),
    "above": ("above", "over"),
    "below": ("below", "under", "beneath"),
    "next_to": ("next to", "beside", "near"),
    "riding": ("riding", "rides", "is riding"),
    "holding": ("holding", "holds", "is holding"),
    "chasing": ("chasing", "chases", "is chasing", "running after"),
    "sitting_on": ("sitting on", "sits on", "is sitting on"),
    "looking_at": ("looking at", "looks at", "watching", "is looking at"),
}

_PEOPLE = ("man", "woman", "child")
_ANIMALS = ("dog", "cat", "horse", "bird", "cow", "sheep")
#: action -> (allowed subjects, allowed objects)
ACTION_RULES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "riding": (_PEOPLE, ("horse", "bicycle", "motorcycle", "boat")),
    "holding": (_PEOPLE, ("umbrella", "cup", "kite", "ball", "bag", "flower")),
    "chasing": (("dog", "cat", "child"), ("ball", "bird", "cat", "sheep", "dog")),
    "sitting_on": (_PEOPLE + ("cat", "dog", "bird"), ("chair", "bench", "table")),
    "looking_at": (_PEOPLE + _ANIMALS, tuple(c.name for c in CATEGORIES)),
}

#: regions a detector finds that no caption talks about
BACKGROUNDS: tuple[str, ...] = ("sky", "grass", "road", "wall", "water", "floor", "window", "shadow")

NUMBER_WORDS: dict[int, str] = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def noun_forms(name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(singular forms, plural forms) of a category or hypernym name."""
    if name in HYPERNYMS:
        s, p = HYPERNYMS[name]
        return (s,), (p,)
    c = CATEGORIES[CATEGORY_INDEX[name]]
    return c.synonyms, c.plural


_FUNCTION = frozenset({"a", "an", "the", "is", "of", "to", "on", "in", "at", "piece", "pieces"})


def surface_words() -> dict[str, frozenset[str]]:
    """Canonical name -> the content words a caption may write for it (``dog`` -> {dog, dogs,
    puppy, ...}, ``left_of`` -> {left}, ``striped`` -> {striped, stripes}); function words of
    multi-word forms ("to the left of") are dropped unless the form is that word alone
    ("on" stays out: no relation is written as a bare "on")."""
    forms: dict[str, set[str]] = {}

    def add(name: str, phrases) -> None:
        for p in phrases:
            words = p.split()
            keep = [w for w in words if w not in _FUNCTION] or words
            forms.setdefault(name, set()).update(keep)

    for c in CATEGORIES:
        add(c.name, c.synonyms + c.plural)
    for h, (s, p) in HYPERNYMS.items():
        add(h, (s, p))
    for c, ws in COLOR_WORDS.items():
        add(c, ws)
    for s, ws in SIZE_WORDS.items():
        add(s, ws)
    add("striped", ("striped", "stripes"))
    add("spotted", ("spotted", "spots"))
    for r, ws in RELATION_WORDS.items():
        add(r, ws)
    for w in NUMBER_WORDS.values():
        add(w, (w,))
    return {k: frozenset(v) for k, v in forms.items()}
