"""Ω, the Doc2Vec space of Thomas & Kovashka (ECCV 2020, sec. 3.2), and its neighbour tables.

PV-DM (distributed memory) learns word vectors w and one vector d per document to
maximise ``(1/T) Σ_t log p(w_t | d, w_{t−k}, ..., w_{t+k})`` with hierarchical softmax;
after training, each document's vector is found again by iterative back-propagation
(gensim's ``infer_vector``) - the vectors Ω(y_i) whose neighbours define eq. 5:

    Ψ(Ω(y_i)) = ⟨x_i', y_i'⟩ sampled from the k = 200 nearest training texts to y_i, i' ≠ i

Settings are the paper's (sec. 3.3: 200-d, window 20, min_count 20, 20 epochs - the public code
runs 50 - and PV-DM), the public code's where the paper is silent, and on the output layer, where
the two disagree, the public code's by default for a measured reason. ``mode`` picks it:
``"paper"`` - hierarchical softmax as sec. 3.3 says; ``"code"`` (default) - negative sampling
(5), gensim's default that the public code actually runs; ``"dbow"`` - PV-DBOW with hierarchical
softmax, neither's choice, for comparison. Measured on the non-literal world at medium (8,000
articles, inferred vectors; notebook 07's table ``doc2vec_topic_purity``): the share of a text's 10
nearest that share its latent topic is far lower with ``"paper"`` and ``"code"`` than with ``"dbow"``
(the table gives the shares against chance) - PV-DM with hierarchical
softmax barely learns document vectors on a corpus this small (the paper's had 246k articles), so
the default is the public code's. Also the public code's: its tokenisation
(gensim ``preprocess_string``: lower-case, strip punctuation and stop words, drop words
shorter than 3 letters), ``infer_vector`` for every training text, L2 neighbours over the
raw vectors. Trained on the training texts only, single-threaded and seeded
(``workers=1``; gensim's word-vector seeding hashes strings, so a process-independent hash
is passed: two processes give identical vectors, tested), cached under
``data/cache/doc2vec/`` by a hash of the texts and settings.

**Neighbour sampling** (:func:`neighbor_table`'s ``mode``): ``"paper"`` - uniform over all k nearest (eq. 5);
``"code"`` - the public code's ``get_doc2vec_neighbors``: drop neighbours at distance 0
(duplicates), keep the first 10, pick one uniformly.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import pickle
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from ..knn import knn
from ..paths import atomic_write, cache_dir

log = logging.getLogger(__name__)

__all__ = ["D2V_MODES", "Doc2VecSettings", "tokenize_doc", "train_doc2vec", "doc_vectors", "omega_vectors", "neighbor_table", "MODES"]

MODES = ("paper", "code")
D2V_MODES = ("paper", "code", "dbow")
CODE_FIRST_N = 10   # the public code samples among the first 10 of the 200 neighbours


@dataclass(frozen=True)
class Doc2VecSettings:
    """Ω's settings; the paper's values unless said (``mode``: the module docstring)."""

    vector_size: int = 200    # paper: d ∈ R^200
    window: int = 20          # paper: k = 20
    min_count: int = 20       # paper: "ignoring words that appear less than 20 times"
    epochs: int = 20          # paper: 20 (the public code: 50, "for smaller datasets")
    seed: int = 0
    mode: str = "code"        # output layer: "paper" (hierarchical softmax), "code" (negative sampling), "dbow"

    def __post_init__(self) -> None:
        if self.mode not in D2V_MODES:
            raise ValueError(f"Doc2Vec mode must be one of {D2V_MODES}, got {self.mode!r}")
        for f in ("vector_size", "window", "min_count", "epochs"):
            v = getattr(self, f)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"Doc2Vec {f} must be a positive integer, got {v!r}")


def tokenize_doc(text: str) -> list[str]:
    """Our Doc2Vec preprocessing: gensim's ``preprocess_string`` with its default filters - lower case, tags,
    punctuation, whitespace and numerals stripped, stop words and words under 3 letters removed, Porter
    stemming. Not the public code's tokeniser: its ``convert_text`` keeps the first two sentences of an
    article and neither stems nor strips numerals."""
    from gensim.parsing.preprocessing import preprocess_string

    return preprocess_string(text)


def _stable_hash(s: str) -> int:
    """A process-independent string hash for gensim's vector seeding (Python's ``hash`` is salted)."""
    return zlib.crc32(s.encode("utf-8"))


@contextlib.contextmanager
def _stable_infer() -> Iterator[None]:
    """``infer_vector`` seeds each document's start vector with Python's salted ``hash`` of its words;
    swap in :func:`_stable_hash` so inferred vectors do not depend on the process."""
    import functools

    from gensim.models import doc2vec as d2v
    from gensim.models.keyedvectors import pseudorandom_weak_vector

    old = d2v.pseudorandom_weak_vector
    d2v.pseudorandom_weak_vector = functools.partial(pseudorandom_weak_vector, hashfxn=_stable_hash)
    try:
        yield
    finally:
        d2v.pseudorandom_weak_vector = old


def doc2vec_key(texts: Sequence[str], s: Doc2VecSettings) -> str:
    """The cache key of a Doc2Vec trained on ``texts`` with ``s``: gensim's version, the settings and the texts."""
    import gensim

    h = hashlib.sha256(json.dumps({"v": 1, "gensim": gensim.__version__, **asdict(s)}, sort_keys=True).encode())
    for t in texts:
        h.update(t.encode("utf-8") + b"\x1f")
    return h.hexdigest()[:20]


def train_doc2vec(texts: Sequence[str], settings: Doc2VecSettings = Doc2VecSettings(), *, cache: bool = True,
                  folder: str | Path | None = None):
    """A gensim ``Doc2Vec`` (PV-DM, hierarchical softmax) trained on ``texts``; cached by content hash."""
    from gensim.models.doc2vec import Doc2Vec, TaggedDocument

    if len(texts) < 2:
        raise ValueError(f"Doc2Vec needs at least two training texts, got {len(texts)}")
    path = Path(folder) if folder else cache_dir() / "doc2vec"
    file = path / f"d2v-{doc2vec_key(texts, settings)}.model"
    if cache and file.is_file():
        try:
            return Doc2Vec.load(str(file))
        except (OSError, EOFError, ValueError, pickle.UnpicklingError) as err:   # a cache a killed run left
            log.warning("Doc2Vec cache %s is unreadable (%s); training it again", file, err)
    docs = [TaggedDocument(tokenize_doc(t), [i]) for i, t in enumerate(texts)]
    layer = {"paper": dict(dm=1, hs=1, negative=0), "code": dict(dm=1, hs=0, negative=5),
             "dbow": dict(dm=0, hs=1, negative=0)}[settings.mode]
    model = Doc2Vec(**layer, vector_size=settings.vector_size, window=settings.window,
                    min_count=settings.min_count, epochs=settings.epochs, seed=settings.seed, workers=1,
                    hashfxn=_stable_hash)
    model.build_vocab(docs)
    if len(model.wv) == 0:
        raise ValueError(f"no word occurs {settings.min_count}+ times in the {len(texts)} texts; lower min_count")
    model.train(docs, total_examples=len(docs), epochs=model.epochs)
    if cache:
        path.mkdir(parents=True, exist_ok=True)
        # one file: gensim writes arrays of 10M+ elements (its sep_limit, applied to the model's KeyedVectors
        # too) beside a named file, where a renamed model cannot find them; into a handle it pickles them all
        atomic_write(file, lambda fh: model.save(fh, sep_limit=2**62))
    return model


def doc_vectors(model, texts: Sequence[str], epochs: int | None = None) -> np.ndarray:
    """(n, vector_size) Ω(y) of each text by ``infer_vector`` (deterministic, see :func:`_stable_infer`)."""
    with _stable_infer():
        model.random = np.random.RandomState(model.seed)  # reset: the same texts always get the same vectors
        return np.stack([model.infer_vector(tokenize_doc(t), epochs=epochs) for t in texts]).astype(np.float32)


def omega_vectors(texts: Sequence[str], settings: Doc2VecSettings = Doc2VecSettings(), *,
                  cache: bool = True) -> np.ndarray:
    """Ω(y) of every text of a training set: :func:`train_doc2vec` on ``texts``, then :func:`doc_vectors`
    of the same texts; both cached under one content hash."""
    file = cache_dir() / "doc2vec" / f"omega-{doc2vec_key(texts, settings)}.npy"
    if cache and file.is_file():
        return np.load(file)
    vec = doc_vectors(train_doc2vec(texts, settings, cache=cache), texts)
    if cache:
        file.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(file, lambda fh: np.save(fh, vec))
    return vec


def neighbor_table(vectors: np.ndarray, k: int = 200, mode: str = "paper", *, method: str = "auto") -> np.ndarray:
    """(n, K) candidate neighbours of each row for eq. 5, -1 padded; row i never holds i.

    ``mode="paper"``: the k nearest (L2), K = k. ``mode="code"``: of those, the ones that are not duplicates
    of the row, then the first :data:`CODE_FIRST_N` (K = 10). The public code drops duplicates by
    ``dist > 0``; a float32 distance of two identical 200-d rows comes out near 0.005, not 0, so here the
    distance of each candidate is recomputed directly in float64 and a candidate within 1e-6 of the row's
    norm counts as a duplicate."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    n = vectors.shape[0]
    k = min(int(k), n - 1)
    idx, _ = knn(vectors, k, metric="l2", method=method)
    if mode == "paper":
        return idx
    v = np.asarray(vectors, np.float64)
    exact = np.empty(idx.shape)
    step = max(1, 2_000_000 // max(1, k * v.shape[1]))
    for s in range(0, n, step):                                           # (rows, k, dim) at a time
        exact[s:s + step] = np.linalg.norm(v[idx[s:s + step]] - v[s:s + step, None], axis=-1)
    ok = exact > 1e-6 * np.maximum(np.linalg.norm(v, axis=1), 1e-12)[:, None]   # duplicates dropped
    rank = np.cumsum(ok, axis=1) - 1
    keep = ok & (rank < CODE_FIRST_N)
    out = np.full((n, min(k, CODE_FIRST_N)), -1, np.int64)
    rows, cols = np.nonzero(keep)
    out[rows, rank[rows, cols]] = idx[rows, cols]
    return out
