"""Semantic Recall and the Normalized Cumulative Semantic score (Biten et al., WACV 2022).

``relevance`` is the paper's matrix ``N`` in our (n_images, n_captions)
orientation: ``N[i, j] = phi(G_i, c_j)``, a captioning metric (CIDEr-D,
SPICE-style scene-graph F1, ...) of caption ``j`` against image ``i``'s
references; i2t queries read a row, t2i queries a column.

Semantic Recall (eq. 4), with ``G~_i`` the ``m`` items most relevant to
query ``i`` (GT items excluded unless ``include_gt``) and ``Q_ik`` its top-k:

    SR_i@k = |G~_i ∩ Q_ik| / |G~_i|                   (kind="ir")
    1[G~_i ∩ Q_ik ≠ ∅]                                 (kind="first_hit", the R@K of the paper's Fig. 3)

An item of relevance 0 is never relevant: ``|G~_i| = min(m, #items with
relevance > 0)``, and a query with no relevant item is skipped; the count of
skipped queries is returned as ``<direction>_skipped``. (Counting zeros as
relevant would let a random retriever score 100 on a sparse matrix such as
scene-graph F1, where most entries are 0.)

``mode="reference"`` builds the relevant set as the public ``ncs_metric`` code
does (its ``get_intersection``), image-level in both directions:

    score_i(j) = Σ_{c ∈ captions(i)} N_jc · 1[j ∈ top-P images of caption c]
    R_i        = the m images j ≠ i with the largest score_i(j)   (P = ``pool``, the code's TOP_K)

t2i: caption ``c`` of image ``i`` counts a hit per image of ``R_i`` in its top-k,
over ``m``; i2t: image ``i`` counts the captions of the images of ``R_i`` in its
top-k, over ``5m`` (captions per image x m). Differences from our paper mode,
each pinned by a test: every caption of an image shares the image's set (not
its own column's top-m); i2t targets are whole images' captions, so i2t
SR@1 tops out at 100/(captions per image); zeros may fill ``R_i`` (the code
sorts and takes the top m whatever their score), so no query is skipped.

NCS, ``mode="paper"`` (eq. 5), with ``G~_i`` the k most relevant items:

    N_i@k = Σ_{j ∈ G~_i ∩ Q_ik} N_ij / Σ_{l ∈ G~_i} N_il

Queries whose k most relevant items all have relevance 0 are skipped (0/0).
Ties at the boundary of ``G~_i`` are resolved in the retrieval's favour:
with ``t`` the k-th largest relevance, a retrieved item belongs to ``G~_i`` if
its relevance is above ``t``, and items equal to ``t`` fill the slots that
``G~_i`` has for that value. So any ranking that sorts by relevance scores
100, whichever tied item it puts first (the same rule serves Semantic Recall).

``mode="reference"``, as the public ``ncs_metric`` code computes it:

    NCS@k = 100 · mean_i( mean(N_i[Q_ik]) / (mean(N_i[G~_i]) + 1e-10) )

Differences from the paper, each pinned by a test: retrieved items outside
``G~_i`` still count (with their own relevance); the ratio has ``+1e-10`` so a
perfect ranking scores 99.99999999 and an all-zero query scores 0 (it is not
skipped). In both modes ``include_gt=False`` removes the query's GT items from
the ranking and from the ideal (the paper's "Nsum(N)").

Retrieval order: by score descending, ties by gallery index ascending.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
import scipy.sparse as sp

from ..config import check_choice
from ._ranking import check_inputs, check_ks, check_relevance, query_chunks, topk_indices, topk_values

__all__ = ["semantic_recall", "ncs"]

_EXCLUDED = -np.inf


def _directions(sims: np.ndarray, rel: np.ndarray, ioc: np.ndarray, include_gt: bool,
                directions: tuple[str, ...] = ("i2t", "t2i")):
    """Yield (direction, query indices, scores, relevance, excluded-mask) per query chunk."""
    n_img, n_cap = sims.shape
    for sl in (query_chunks(n_img, n_cap) if "i2t" in directions else ()):
        rows = np.arange(n_img)[sl]
        gt = ioc[None, :] == rows[:, None]
        yield "i2t", rows, sims[sl], rel[sl], (gt if not include_gt else None)
    for sl in (query_chunks(n_cap, n_img) if "t2i" in directions else ()):
        cols = np.arange(n_cap)[sl]
        gt = np.zeros((cols.size, n_img), bool)
        gt[np.arange(cols.size), ioc[cols]] = True
        yield "t2i", cols, sims[:, sl].T, rel[:, sl].T, (gt if not include_gt else None)


def _masked(a: np.ndarray, excl: np.ndarray | None) -> np.ndarray:
    return a if excl is None else np.where(excl, _EXCLUDED, a)


def _in_ideal(rel_retrieved: np.ndarray, ideal_sorted: np.ndarray) -> np.ndarray:
    """Which retrieved items lie in the ideal set (the top of ``ideal_sorted``), tie-robust.

    ``rel_retrieved``: (q, k) relevance of the retrieved items in rank order;
    ``ideal_sorted``: (q, m) the m largest relevances, descending. Items above
    the m-th value are in; items equal to it are in while slots remain.
    """
    t = ideal_sorted[:, -1:]
    slots = (ideal_sorted == t).sum(axis=1, keepdims=True)
    eq = rel_retrieved == t
    return (rel_retrieved > t) | (eq & (np.cumsum(eq, axis=1) <= slots))


def _gallery(sims: np.ndarray, ioc: np.ndarray, include_gt: bool, directions: tuple[str, ...]) -> int:
    """Smallest gallery a query of the given directions ranks (GT items removed unless include_gt)."""
    per_img = int(np.bincount(ioc, minlength=sims.shape[0]).max(initial=0))
    sizes = {"i2t": sims.shape[1] - (0 if include_gt else per_img), "t2i": sims.shape[0] - (0 if include_gt else 1)}
    return min(sizes[d] for d in directions)


def _reference_sets(rel: np.ndarray, ioc: np.ndarray, m: int, pool: int, include_gt: bool) -> np.ndarray:
    """(n_images, m) the public code's relevant images of each image (``get_intersection``), best first."""
    n_img, n_cap = rel.shape
    pool = min(pool, n_img)
    top = topk_indices(rel.T, pool)                                    # (n_cap, P) images per caption
    cols = np.repeat(np.arange(n_cap), pool)
    hit = sp.csr_matrix((rel.T[cols, top.ravel()], (top.ravel(), cols)), shape=(n_img, n_cap))
    owner = sp.csr_matrix((np.ones(n_cap), (np.arange(n_cap), ioc)), shape=(n_cap, n_img))
    score = (hit @ owner).toarray().T                                  # score[i, j] = score_i(j)
    if not include_gt:
        score[np.arange(n_img), np.arange(n_img)] = _EXCLUDED          # drop the image itself
    return topk_indices(score, m)


def _semantic_recall_reference(sims: np.ndarray, rel: np.ndarray, ioc: np.ndarray, k: int, m: int, kind: str,
                               include_gt: bool, directions: tuple[str, ...], pool: int) -> dict[str, float]:
    n_img, n_cap = sims.shape
    per_img = np.bincount(ioc, minlength=n_img)
    sets = _reference_sets(rel, ioc, m, max(pool, m), include_gt)
    member = np.zeros((n_img, n_img), bool)                            # member[i, j]: j in R_i
    member[np.repeat(np.arange(n_img), m), sets.ravel()] = True
    acc: dict[str, list[np.ndarray]] = {d: [] for d in directions}
    for d, idx, s, _, excl in _directions(sims, rel, ioc, include_gt, directions):
        q = topk_indices(_masked(s, excl), k)
        if d == "i2t":                                                 # retrieved captions of R_i's images
            hits, size = member[idx[:, None], ioc[q]].sum(axis=1), per_img[sets[idx]].sum(axis=1)
        else:                                                          # retrieved images in R_(image of c)
            hits, size = member[ioc[idx][:, None], q].sum(axis=1), np.full(idx.size, m)
        acc[d].append(hits / size if kind == "ir" else (hits > 0).astype(float))
    out: dict[str, float] = {}
    for d, v in acc.items():
        out[f"{d}_sr{k}"] = 100.0 * float(np.concatenate(v).mean())
        out[f"{d}_skipped"] = 0
    return out


def semantic_recall(sims: np.ndarray, relevance: np.ndarray, img_of_caption: np.ndarray, k: int, m: int,
                    *, include_gt: bool = False, kind: str = "ir", mode: str = "paper", pool: int = 30,
                    directions: tuple[str, ...] = ("i2t", "t2i")) -> dict[str, float]:
    """Semantic Recall@k with the ``m`` most relevant items as positives.

    Returns percent under ``i2t_sr{k}`` / ``t2i_sr{k}`` (mean over the queries that have a relevant
    item; NaN when none has) and the number of skipped queries under ``i2t_skipped`` / ``t2i_skipped``. ``mode`` is
    ``"paper"`` (eq. 4) or ``"reference"`` (the public code; ``pool`` is its TOP_K).
    """
    sims, ioc = check_inputs(sims, img_of_caption)
    rel = check_relevance(relevance, sims.shape)
    kind = check_choice("kind", kind, ("ir", "first_hit"))
    mode = check_choice("mode", mode, ("paper", "reference"))
    directions = tuple(check_choice("direction", d, ("i2t", "t2i")) for d in directions)
    gallery = _gallery(sims, ioc, include_gt, directions)
    check_ks(k, gallery, "non-GT" if not include_gt else "smaller")
    check_ks(m, gallery, "non-GT" if not include_gt else "smaller")
    if mode == "reference":
        check_ks(m, sims.shape[0] - 1, "non-GT image")
        return _semantic_recall_reference(sims, rel, ioc, k, m, kind, include_gt, directions, pool)
    acc: dict[str, list[np.ndarray]] = {d: [] for d in directions}
    for d, _, s, r, excl in _directions(sims, rel, ioc, include_gt, directions):
        rm = _masked(r, excl)
        rq = np.take_along_axis(rm, topk_indices(_masked(s, excl), k), axis=1)
        ideal = topk_values(rm, m)
        n_rel = (ideal > 0).sum(axis=1)                                # |G~_i| = min(m, #relevance > 0)
        hits = (_in_ideal(rq, ideal) & (rq > 0)).sum(axis=1)          # |G~_i ∩ Q_ik|, zeros never hit
        with np.errstate(invalid="ignore", divide="ignore"):
            val = np.where(n_rel > 0, hits / n_rel if kind == "ir" else (hits > 0).astype(float), np.nan)
        acc[d].append(val)
    out: dict[str, float] = {}
    for d, v in acc.items():
        v = np.concatenate(v)
        out[f"{d}_sr{k}"] = 100.0 * float(np.nanmean(v)) if np.isfinite(v).any() else float("nan")
        out[f"{d}_skipped"] = int(np.isnan(v).sum())
    return out


def ncs(sims: np.ndarray, relevance: np.ndarray, img_of_caption: np.ndarray, ks: Iterable[int] = (1, 5, 10),
        mode: str = "paper", include_gt: bool = True) -> dict[str, float]:
    """NCS@K both ways in percent (``i2t_n{k}``, ``t2i_n{k}``) and their sum ``nsum``."""
    sims, ioc = check_inputs(sims, img_of_caption)
    rel = check_relevance(relevance, sims.shape)
    mode = check_choice("mode", mode, ("paper", "reference"))
    ks = check_ks(ks, _gallery(sims, ioc, include_gt, ("i2t", "t2i")), "smaller" if include_gt else "non-GT")
    kmax = max(ks)
    num: dict[tuple[str, int], list[np.ndarray]] = {}
    for d, _, s, r, excl in _directions(sims, rel, ioc, include_gt):
        rm = _masked(r, excl)
        rq = np.take_along_axis(rm, topk_indices(_masked(s, excl), kmax), axis=1)
        rg = topk_values(rm, kmax)
        for k in ks:
            ideal = rg[:, :k].sum(axis=1)
            if mode == "paper":
                got = (rq[:, :k] * _in_ideal(rq[:, :k], rg[:, :k])).sum(axis=1)
                with np.errstate(invalid="ignore", divide="ignore"):
                    val = np.where(ideal > 0, got / ideal, np.nan)
            else:
                val = rq[:, :k].mean(axis=1) / (rg[:, :k].mean(axis=1) + 1e-10)
            num.setdefault((d, k), []).append(val)
    out: dict[str, float] = {}
    for d in ("i2t", "t2i"):
        for k in ks:
            v = np.concatenate(num[(d, k)])
            out[f"{d}_n{k}"] = 100.0 * float(np.nanmean(v)) if np.isfinite(v).any() else 0.0
    out["nsum"] = float(sum(out[f"{d}_n{k}"] for d in ("i2t", "t2i") for k in ks))
    return out
