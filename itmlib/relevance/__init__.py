"""Semantic relevance between captions and images' reference sets: the matrix N of the NCS paper.

- :func:`cider_d_matrix` - CIDEr-D, equal to pycocoevalcap's ``Cider``, >1,000x faster
- :func:`rouge_l_matrix` - ROUGE-L, equal to pycocoevalcap's ``Rouge``
- :func:`scene_graph_f1_matrix` + :func:`parse_tuples` - SPICE-style scene-graph F1
- :func:`relevance_matrix` - any of them for a dataset's captions, cached on disk
- :func:`eval_relevance`, :func:`eval_rouge` - the evaluation relevance of a split (scene-graph F1 of
  gold graphs; ROUGE-L)

All matrices are (n_images, n_candidates), the orientation of ``sims``.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..config import check_choice
from .cache import RelevanceCache
from .cider import CiderDIndex, DocumentFrequency, cider_d_matrix, cider_d_pairs
from .rouge import rouge_l_matrix
from .scene_graph import gold_tuples, parse_tuples, scene_graph_f1_matrix, spice_status

__all__ = ["CiderDIndex", "cider_d_matrix", "cider_d_pairs", "DocumentFrequency", "rouge_l_matrix", "scene_graph_f1_matrix",
           "parse_tuples", "gold_tuples", "spice_status", "RelevanceCache", "relevance_matrix", "eval_relevance",
           "eval_rouge", "METRICS"]

METRICS = ("cider_d", "rouge_l", "sg_f1")


def relevance_matrix(metric: str, refs: Sequence[Sequence[str]], candidates: Sequence[str], *,
                     lowercase: bool = True, backend: str = "spacy", graphs: Sequence[dict] | None = None,
                     cache: RelevanceCache | bool = True, progress: bool = False) -> np.ndarray:
    """``metric`` ("cider_d", "rouge_l", "sg_f1") of every candidate vs every image's references.

    ``refs[i]``: image i's reference captions; ``candidates``: the captions to
    score (for NCS: all test captions, so each caption is also one of its own
    image's references, as in the paper's code). ``lowercase`` lower-cases
    both (as the NCS and TERAN code do) before whitespace tokenisation.
    CIDEr-D document frequencies come from ``refs``. ``sg_f1`` parses with
    ``backend`` ("spacy", "gold" with ``graphs`` = per-caption gold graphs of
    the flattened refs followed by those of the candidates, or "spice").
    """
    check_choice("metric", metric, METRICS)
    if lowercase:
        refs = [[s.lower() for s in g] for g in refs]
        candidates = [s.lower() for s in candidates]
    settings: dict[str, Any] = {"lowercase": lowercase, "tokenisation": "str.split" if metric != "rouge_l"
                                else "str.split(' ')"}
    if metric == "cider_d":
        settings |= {"df": "from refs", "n": 4, "sigma": 6.0}
        df = DocumentFrequency.from_refs(refs)
        fn = lambda rows: cider_d_matrix(refs[rows], candidates, df)  # noqa: E731
    elif metric == "rouge_l":
        settings |= {"beta": 1.2}
        fn = lambda rows: rouge_l_matrix(refs[rows], candidates)  # noqa: E731
    else:
        settings |= {"backend": backend}
        flat = [s for g in refs for s in g]
        tuples = parse_tuples(flat + list(candidates), backend, graphs=graphs, progress=progress)
        ref_t, k = [], 0
        for g in refs:
            ref_t.append(tuples[k:k + len(g)])
            k += len(g)
        cand_t = tuples[len(flat):]
        fn = lambda rows: scene_graph_f1_matrix(ref_t[rows], cand_t)  # noqa: E731
    if cache is False:
        return fn(slice(0, len(refs)))
    store = cache if isinstance(cache, RelevanceCache) else RelevanceCache()
    return store.matrix(metric, settings, refs, candidates, fn, progress=progress)


def eval_relevance(ds: Any) -> np.ndarray:
    """The evaluation relevance of a dataset split with gold caption graphs (the synthetic world):
    scene-graph F1 of its gold graphs, every caption against every image's five references
    (the SPICE analogue: the NCS paper evaluates with SPICE), cached on disk."""
    if ds.graphs is None:
        raise ValueError(f"{ds.name}/{ds.split} has no gold caption graphs for the scene-graph F1 relevance")
    refs = [ds.captions_of(i) for i in range(ds.n_images)]
    return relevance_matrix("sg_f1", refs, ds.captions, backend="gold", graphs=list(ds.graphs) + list(ds.graphs))


def eval_rouge(ds: Any) -> np.ndarray:
    """ROUGE-L relevance of every caption of a split against every image's five references
    (TERAN's NDCG relevance), cached on disk."""
    return relevance_matrix("rouge_l", [ds.captions_of(i) for i in range(ds.n_images)], ds.captions)
