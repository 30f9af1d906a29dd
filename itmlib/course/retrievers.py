"""Simple, training-free retrievers whose rankings the metric notebooks evaluate.

Each returns an (n_images, n_captions) score matrix, the ``sims`` every metric takes.

* :func:`random_scores` - chance.
* :func:`noisy_oracle` - gold relevance plus Gaussian noise (synthetic world):
  a controllable stand-in for a model that knows the semantics more or less well.
* :func:`gt_first` - ground truth ranked first, the rest ordered by ``then``:
  equal Recall^V for every ``then``, which is the paper's Figure 1 point.
* :func:`caption_proxy` - *caption-proxy* retrieval on real text with no images:
  an image is represented by its other captions, and a caption scores an
  image by its mean cosine to them (leave-one-out: a caption never sees
  itself). Vectors from TF-IDF (:func:`tfidf_vectors`) or a sentence encoder.
* :func:`lexical_floor` - the real-language world's floor: a caption scores an image by the categories (and
  attributes) it names that the image's regions hold, with no training - what word overlap alone achieves.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.sparse as sp

from ..data.base import CAPTIONS_PER_IMAGE

__all__ = ["random_scores", "noisy_oracle", "gt_first", "figure1_rankings", "tfidf_vectors", "caption_proxy",
           "lexical_floor"]


def random_scores(n_images: int, n_captions: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).random((n_images, n_captions))


def noisy_oracle(relevance: np.ndarray, sigma: float, seed: int = 0) -> np.ndarray:
    """``relevance + sigma * N(0, 1)``."""
    if sigma < 0:
        raise ValueError(f"sigma must be >= 0, got {sigma}")
    return np.asarray(relevance, np.float64) + sigma * np.random.default_rng(seed).standard_normal(relevance.shape)


def gt_first(then: np.ndarray, img_of_caption: np.ndarray) -> np.ndarray:
    """Scores that rank every query's ground truth first and everything else by ``then``."""
    then = np.asarray(then, np.float64)
    span = float(then.max() - then.min()) + 1.0
    gt = img_of_caption[None, :] == np.arange(then.shape[0])[:, None]
    return then + 2 * span * gt


def figure1_rankings(relevance: np.ndarray, img_of_caption: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The two methods of the NCS paper's Figure 1 (image-to-text), for every image query at once.

    Both put exactly one ground-truth caption first (the image's first; its
    other captions last), so both have the same Recall^V@K and IR recall. Then
    method A ranks the remaining captions from the *least* relevant up, method
    B from the most relevant down. Returns (scores_A, scores_B), each
    (n_images, n_captions); read only their i2t metrics (a caption's own image
    is not put first, so the t2i direction is not the figure's).
    """
    rel = np.asarray(relevance, np.float64)
    n_img, n_cap = rel.shape
    gt = img_of_caption[None, :] == np.arange(n_img)[:, None]
    first = np.zeros_like(gt)
    first_cap = np.full(n_img, -1)
    for c in range(n_cap - 1, -1, -1):
        first_cap[img_of_caption[c]] = c
    has = first_cap >= 0
    first[np.flatnonzero(has), first_cap[has]] = True
    out = []
    for sign in (-1.0, 1.0):
        s = sign * rel
        out.append(np.where(first, 10.0, np.where(gt, -10.0, s)))  # one GT first, the other GT last
    return out[0], out[1]


def tfidf_vectors(captions: Sequence[str]) -> sp.csr_matrix:
    """L2-normalised TF-IDF rows (scikit-learn, English stop words kept: they matter in captions)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(lowercase=True, sublinear_tf=True).fit_transform(captions).tocsr()


def caption_proxy(vectors: np.ndarray | sp.spmatrix, img_of_caption: np.ndarray, chunk: int = 2048) -> np.ndarray:
    """sims[i, c] = mean cosine of caption c to image i's captions other than c itself.

    ``vectors``: one L2-normalised row per caption, captions image-major with
    five per image.
    """
    ioc = np.asarray(img_of_caption)
    n_cap = ioc.size
    if n_cap % CAPTIONS_PER_IMAGE or not np.array_equal(ioc, np.repeat(np.arange(n_cap // 5), 5)):
        raise ValueError("caption_proxy needs image-major captions, five per image")
    n_img = n_cap // CAPTIONS_PER_IMAGE
    X = vectors.tocsr() if sp.issparse(vectors) else np.asarray(vectors, np.float64)
    out = np.empty((n_img, n_cap))
    for s in range(0, n_cap, chunk):
        e = min(n_cap, s + chunk)
        cos = X[s:e] @ X.T
        cos = cos.toarray() if sp.issparse(cos) else np.asarray(cos)
        rows = np.arange(e - s)
        self_sim = cos[rows, s + rows].copy()
        per_img = cos.reshape(e - s, n_img, CAPTIONS_PER_IMAGE).sum(axis=2)  # (chunk captions, images)
        own = ioc[s:e]
        per_img[rows, own] -= self_sim
        denom = np.full(n_img, float(CAPTIONS_PER_IMAGE))
        out[:, s:e] = (per_img / denom[None, :]).T
        out[own, s + rows] = per_img[rows, own] / (CAPTIONS_PER_IMAGE - 1)
    return out


def lexical_floor(ds, attr_weight: float = 0.5, seed: int = 0) -> np.ndarray:
    """A training-free retriever on the real-language world (``coco_scenes``): caption c scores image i by

        |C(c) ∩ C(i)| / sqrt(|C(c)| |C(i)|)  +  attr_weight · |A(c) ∩ A(i)| / max(|A(c)|, 1)

    with C(c) the categories its parsed objects name (CHAIR's synonyms: *guy* is a person; "other" never
    counts), C(i) the categories of every region of the image (its scene's objects and its distractors), and
    A the (category, attribute) pairs of the caption and of the image's scene. Ties are broken by a seeded
    jitter far below any score step, so no image is favoured by its index. Perfect perception, no learning:
    a trained model that does not beat it has learned no more than word overlap."""
    from ..data.categories import synonyms

    cats = ds.image_extras["categories"][0]
    index, other = {w: k for k, w in enumerate(cats[:-1])}, len(cats) - 1
    attrs = {a: k for k, a in enumerate(ds.image_extras["attributes"][0])}
    syn = synonyms()
    cat_of = lambda w: index.get(syn.get(w, w), other)   # noqa: E731
    n_i, n_c = ds.n_images, ds.n_captions
    img_cat = np.zeros((n_i, other), np.float64)
    for i, row in enumerate(ds.image_extras["region_category"]):
        row = np.asarray(row)
        img_cat[i, np.unique(row[(row >= 0) & (row < other)])] = 1
    n_a = len(attrs)
    img_att = sp.lil_matrix((n_i, other * max(n_a, 1)))
    for i, scene in enumerate(ds.image_extras["objects"]):
        for c, (_, a) in scene.items():
            if c < other:
                for k in a:
                    img_att[i, c * n_a + k] = 1
    cap_cat = np.zeros((n_c, other), np.float64)
    cap_att = sp.lil_matrix((n_c, other * max(n_a, 1)))
    for j, g in enumerate(ds.graphs):
        cs = [cat_of(w) for w in g["objects"]]
        for c in cs:
            if c < other:
                cap_cat[j, c] = 1
        for node, a in g["attributes"]:
            c = cs[node]
            if c < other and a in attrs:
                cap_att[j, c * n_a + attrs[a]] = 1
    norm = np.sqrt(np.outer(img_cat.sum(1), cap_cat.sum(1)))
    scores = np.divide(img_cat @ cap_cat.T, norm, out=np.zeros((n_i, n_c)), where=norm > 0)
    cap_att = cap_att.tocsr()
    shared = (img_att.tocsr() @ cap_att.T).toarray()
    scores += attr_weight * shared / np.maximum(np.asarray(cap_att.sum(1)).ravel(), 1)[None, :]
    return scores + 1e-9 * np.random.default_rng(seed).random((n_i, n_c))
