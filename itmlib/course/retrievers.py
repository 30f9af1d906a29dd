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
  attributes) it names that the image's regions hold, with no training - what word overlap alone achieves;
  :func:`cooccurrence_scores` the same learned from training counts alone (no network); :func:`scene_ceiling`
  the world's ceiling (images whose scenes are identical cannot be told apart).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.sparse as sp

from ..data.base import CAPTIONS_PER_IMAGE

__all__ = ["random_scores", "noisy_oracle", "gt_first", "figure1_rankings", "tfidf_vectors", "caption_proxy",
           "lexical_floor", "cooccurrence_scores", "scene_ceiling", "CEILINGS"]


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


def _jitter(shape: tuple[int, int], seed: int) -> np.ndarray:
    """Ties broken by a seeded jitter far below any score step, so that no image is favoured by its index."""
    return 1e-9 * np.random.default_rng(seed).random(shape)


def _caption_pairs(graph: dict, vocab, attrs: dict[str, int]) -> tuple[list[int], list[tuple[int, int]]]:
    """A caption graph's categories and (category, attribute) pairs, read the way the world reads its scene
    captions (:meth:`~itmlib.data.coco_scenes_vocab.Vocabulary.category`: CHAIR's synonyms, and a two-word name
    read off an attribute and its object - "hot dog" is no dog - whose attribute is then no attribute);
    ``attrs``: the vocabulary's attribute -> index."""
    from ..data.categories import synonyms

    syn = synonyms()
    of: dict[int, list[str]] = {}
    for node, a in graph["attributes"]:
        of.setdefault(node, []).append(a)
    cats, pairs = [], []
    for node, w in enumerate(graph["objects"]):
        c = vocab.category(w, of.get(node, ()))
        if c == vocab.other:
            continue
        cats.append(c)
        pairs += [(c, attrs[a]) for a in of.get(node, ()) if a in attrs and f"{a} {w}" not in syn]
    return cats, pairs


def lexical_floor(ds, attr_weight: float = 0.5, seed: int = 0) -> np.ndarray:
    """A training-free retriever on the real-language world (``coco_scenes``): caption c scores image i by

        |C(c) ∩ C(i)| / sqrt(|C(c)| |C(i)|)  +  attr_weight · |A(c) ∩ A(i)| / max(|A(c)|, 1)

    with C(c) the categories its parsed objects name, read as the world reads its scene captions
    (:func:`_caption_pairs`; "other" never counts), C(i) the categories of every region of the image, and A the
    (category, attribute) pairs of the caption and of every region of the image - the distractors' too, which a
    model meets in their features as well. Perfect perception, no learning, and nothing a model lacks: a trained
    model that does not beat it has learned no more than word overlap."""
    from ..data.coco_scenes_vocab import dataset_vocab

    if "region_attributes" not in ds.image_extras:
        raise ValueError("lexical_floor needs a coco_scenes split (image_extras['region_attributes'])")
    vocab = dataset_vocab(ds)
    other, n_a = vocab.other, max(len(vocab.attributes), 1)
    n_i, n_c = ds.n_images, ds.n_captions
    img_cat = _region_categories(ds, other)[:, :other]                    # "other" never counts
    img_att = _binary((n_i, other * n_a), [
        (i, c * n_a + k)
        for i, (row, attrs) in enumerate(zip(ds.image_extras["region_category"], ds.image_extras["region_attributes"]))
        for c, a in zip(np.asarray(row)[: len(attrs)], attrs) if 0 <= c < other for k in a])
    attr_index = {a: k for k, a in enumerate(vocab.attributes)}
    cat_cells, att_pairs = [], []
    for j, g in enumerate(ds.graphs):
        cats, pairs = _caption_pairs(g, vocab, attr_index)
        cat_cells += [(j, c) for c in cats]
        att_pairs += [(j, c * n_a + k) for c, k in pairs]
    cap_cat, cap_att = _binary((n_c, other), cat_cells), _binary((n_c, other * n_a), att_pairs)
    norm = np.sqrt(np.outer(np.asarray(img_cat.sum(1)).ravel(), np.asarray(cap_cat.sum(1)).ravel()))
    scores = np.divide((img_cat @ cap_cat.T).toarray(), norm, out=np.zeros((n_i, n_c)), where=norm > 0)
    shared = (img_att @ cap_att.T).toarray()
    scores += attr_weight * shared / np.maximum(np.asarray(cap_att.sum(1)).ravel(), 1)[None, :]
    return scores + _jitter((n_i, n_c), seed)


def _binary(shape: tuple[int, int], cells: Sequence[tuple[int, int]] | np.ndarray) -> sp.csr_matrix:
    """A ``shape`` matrix with 1 at each (row, column) of ``cells``, however often a cell is named."""
    rows, cols = (np.asarray(cells, dtype=np.int64).reshape(-1, 2).T if len(cells) else (np.zeros(0, int),) * 2)
    m = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=shape)
    m.sum_duplicates()
    m.data[:] = 1.0
    return m


def _region_categories(ds, n_categories: int) -> sp.csr_matrix:
    """(images, categories + 1) binary: which categories (distractors' too; "other" last) an image's regions hold."""
    cats = np.asarray([np.asarray(r) for r in ds.image_extras["region_category"]])      # (images, regions), -1 empty
    rows, cols = np.nonzero(cats >= 0)
    return _binary((ds.n_images, n_categories + 1), np.stack([rows, cats[rows, cols]], 1))


def cooccurrence_scores(train_ds, ds, min_count: int = 2, smoothing: float = 0.01, seed: int = 0) -> np.ndarray:
    """A learned baseline with no network: what the training split's captions say next to each region category,
    read as a query likelihood against the background (a translation model in the manner of Berger & Lafferty),

        score(i, c) = (1 / |W(c)|) Σ_{w ∈ W(c)} log(1 + P(w | i) / P(w)),     P(w | i) = mean_{k ∈ C(i)} P(w | k)

    with W(c) the caption's words (lower-cased tokens, English stop words out, seen in at least ``min_count``
    training captions), C(i) the categories of the image's regions (distractors included, as a model sees them),
    P(w | k) the share of w among the words of the training captions whose image has a region of category k
    (each count plus ``smoothing``) and P(w) w's share of all training words. It learns from the training counts
    alone what the word-overlap floor is given (CHAIR's synonyms: "guy" meets person regions), and more ("kitchen"
    meets oven regions); averaging over the caption's words makes a caption's scores comparable across images
    and captions alike."""
    from sklearn.feature_extraction.text import CountVectorizer

    n_k = len(train_ds.image_extras["categories"][0])
    if len(ds.image_extras["categories"][0]) != n_k:
        raise ValueError("cooccurrence_scores: the two splits come from different vocabularies (categories differ)")
    words = CountVectorizer(lowercase=True, stop_words="english", binary=True, min_df=min_count)
    q_train = words.fit_transform(train_ds.captions).tocsr().astype(np.float64)
    pairs = np.asarray((q_train.T @ _region_categories(train_ds, n_k - 1)[train_ds.img_of_caption]).todense())
    p_w = np.asarray(q_train.sum(0)).ravel() / q_train.sum()
    p_wk = (pairs + smoothing) / (pairs + smoothing).sum(0, keepdims=True)           # words x categories
    v = _region_categories(ds, n_k - 1)
    v = sp.diags(1 / np.maximum(np.asarray(v.sum(1)).ravel(), 1)) @ v               # mean over the image's categories
    q = words.transform(ds.captions).tocsr().astype(np.float64)
    q = sp.diags(1 / np.maximum(np.asarray(q.sum(1)).ravel(), 1)) @ q                # mean over the caption's words
    scores = np.asarray(q @ np.log1p(np.asarray(v @ p_wk.T) / p_w[None, :]).T).T
    return scores + _jitter(scores.shape, seed)


#: what a scene ceiling lets a retriever tell apart (:func:`scene_ceiling`)
CEILINGS = ("categories", "scene")


def scene_ceiling(ds, by: str = "categories", seed: int = 0) -> np.ndarray:
    """The ceiling of the real-language world: a retriever that knows each query's image up to what its scene
    holds, and nothing else. Caption c scores 1 every image whose scene equals its own image's - by its set of
    categories (``by="categories"``) or by its whole scene, counts and attributes included (``"scene"``) - and 0
    the rest, ties at random. The captions say nothing of what tells two such images apart (their distractors,
    noise and box jitter are drawn per image), so in expectation no model of the world ranks better."""
    from ..config import check_choice

    check_choice("by", by, CEILINGS)
    scenes = ds.image_extras["objects"]
    keys = [frozenset(s) if by == "categories" else tuple(sorted(s.items())) for s in scenes]
    ids = {k: n for n, k in enumerate(dict.fromkeys(keys))}
    key = np.array([ids[k] for k in keys])
    scores = (key[:, None] == key[np.asarray(ds.img_of_caption)][None, :]).astype(np.float64)
    return scores + _jitter(scores.shape, seed)
