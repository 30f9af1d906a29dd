"""What makes ``synthetic_news`` non-literal, measured on a split (notebook 07): how often an article names
its own image's objects against chance (:func:`world_properties`), and every channel from an article's words to
its image's object categories against the topic's other images and chance (:func:`text_image_channels`)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..base import ITMDataset
from .vocab import CATEGORIES, noun_forms

__all__ = ["world_properties", "text_image_channels"]


def _named_and_shown(ds: ITMDataset) -> tuple[np.ndarray, np.ndarray]:
    """(articles x categories: the article writes an English noun of the category, images x categories:
    the image shows it)."""
    scenes = ds.image_extras["scenes"]
    n, n_cat = ds.n_images, len(CATEGORIES)
    forms = [set(noun_forms(c.name)[0]) | set(noun_forms(c.name)[1]) for c in CATEGORIES]
    named = np.zeros((n, n_cat), bool)
    shown = np.zeros((n, n_cat), bool)
    for i, (t, s) in enumerate(zip(ds.captions, scenes)):
        words = set(re.findall(r"[a-z0-9]+", t.lower()))                # the course's tokenizer (models.vocab)
        named[i] = [bool(words & f) for f in forms]
        shown[i, s.cat] = True
    return named, shown


def world_properties(ds: ITMDataset) -> dict[str, float]:
    """What makes the world non-literal, measured on a split (percent):

    ``names_own_object`` - articles that write a noun of one of their own image's objects;
    ``names_random_object`` - the same against another image, averaged over all other images (chance);
    ``overlap_same_topic`` / ``overlap_other_topic`` - mean Jaccard overlap of the object categories
    of two images of one topic (a random mate) / of two topics (all such pairs)."""
    topic = np.asarray(ds.image_extras["topic"])
    n = ds.n_images
    named, shown = _named_and_shown(ds)
    hit = (named.astype(np.int32) @ shown.T.astype(np.int32)) > 0       # (articles, images)
    off = ~np.eye(n, dtype=bool)
    inter = shown.astype(np.int32) @ shown.T.astype(np.int32)
    sizes = shown.sum(1)
    jac = inter / (sizes[:, None] + sizes[None, :] - inter)
    same = (topic[:, None] == topic[None, :]) & off
    return {"names_own_object": 100 * float(hit.diagonal().mean()), "names_random_object": 100 * float(hit[off].mean()),
            "overlap_same_topic": 100 * float(jac[same].mean()), "overlap_other_topic": 100 * float(jac[~same & off].mean())}


def text_image_channels(ds: ITMDataset) -> pd.DataFrame:
    """Every way an article's words can name an object category, against the images (percent): for the
    English category nouns (filler) and the symbol words (each stands for one category), the articles
    that carry the channel and, of those, how often a category it names is in the article's **own**
    image, in another image of the **same topic** (all such pairs) and in an image of **another topic**
    (chance, given the category base rates). A channel is literal when *own* exceeds *same topic*: it
    then tells the image apart from its topic's other images, which the paper's premise rules out
    (topic words and entities name no category: they carry the topic, which Ω's purity measures)."""
    topic = np.asarray(ds.image_extras["topic"])
    n, n_cat = ds.n_images, len(CATEGORIES)
    named, shown = _named_and_shown(ds)
    sym = np.zeros((n, n_cat), bool)
    has = np.asarray(ds.image_extras["symbol"]) >= 0
    sym[np.flatnonzero(has), np.asarray(ds.image_extras["symbol"])[has]] = True
    off = ~np.eye(n, dtype=bool)
    same = (topic[:, None] == topic[None, :]) & off
    rows = []
    for name, m in (("category nouns (filler)", named), ("symbol words", sym)):
        carry = m.any(1)
        hit = (m.astype(np.int32) @ shown.T.astype(np.int32)) > 0        # (articles, images)
        c = carry[:, None]
        rows.append({"channel": name, "articles": 100 * float(carry.mean()),
                     "own_image": 100 * float(hit.diagonal()[carry].mean()) if carry.any() else np.nan,
                     "same_topic_image": 100 * float(hit[same & c].mean()) if (same & c).any() else np.nan,
                     "other_topic_image": 100 * float(hit[~same & off & c].mean()) if (~same & off & c).any() else np.nan})
    return pd.DataFrame(rows)
