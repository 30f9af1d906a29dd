"""How well a relevance matrix agrees with human judgements (the NCS paper's Table 1, in spirit).

The paper correlates metric scores with CxC's graded human ratings over the
44k judged COCO test pairs (25k of them ground truth), on all pairs and on
non-GT pairs only. Offline we have CxC's and ECCV Caption's *positives* (pairs
humans accepted), not their ratings or their judged negatives. So a
comparable pair set is built: every GT pair, every non-GT human positive, and
as many non-GT pairs drawn at random (almost surely negatives; labelled 0).
On the synthetic world the graded 1-5 stand-in judgements play CxC's ratings.

For each metric: Pearson r with the human label over all pairs and over
non-GT pairs, and ROC AUC of telling human positives from the rest. Binary GT
relevance is 1 on GT pairs and 0 elsewhere, so on non-GT pairs it is constant:
its correlation there is 0 by definition (the paper prints 0.00).

**With 0/1 human labels the binary-GT row is decided by the sample mix.** With
``a`` GT pairs, ``b`` non-GT positives and ``c`` negatives, GT relevance and the
label form a 2x2 table whose Pearson r (the phi coefficient) is

    r_GT = sqrt(a c / ((a + b) (b + c)))                      (:func:`binary_gt_pearson`)

so choosing ``c`` chooses the verdict "metric beats GT". Random negatives are
also far easier than CxC's judged near-misses. A statistic that does not depend
on the mix is the ranking AUC of the non-GT positives against negatives of
the same images, chosen by a text encoder's proxy score (``judged_pairs(...,
negatives=..., proxy=...)``): ``"hardest"``, each image's highest-scoring
non-positive captions, as many as it has non-GT positives (harder than the
positives themselves, and likely to hold positives no rater saw); ``"matched"``,
for each positive the unused non-positive caption of its image whose proxy score
is nearest its own (the proxy's own AUC is then ~0.5 by construction, so a
metric scores above 0.5 only with information beyond the encoder's). On the synthetic world every pair has a
graded judgement, so :func:`agreement_table` runs on *all* pairs (no sample to choose).
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..config import check_choice

__all__ = ["judged_pairs", "hardest_negatives", "matched_negatives", "binary_gt_pearson", "agreement_table", "all_pairs",
           "auc_draws"]


def binary_gt_pearson(a: int, b: int, c: int) -> float:
    """Pearson r of binary GT relevance with 0/1 human labels, from the sample counts alone:
    ``a`` GT pairs (label 1), ``b`` non-GT positives (label 1), ``c`` negatives (label 0)."""
    if min(a, b, c) < 0 or a == 0 or c == 0:
        raise ValueError(f"need a > 0 GT pairs, b >= 0 non-GT positives and c > 0 negatives, got {a}, {b}, {c}")
    return float(np.sqrt(a * c / ((a + b) * (b + c))))


def _candidate_rows(known: sp.csr_matrix, proxy: np.ndarray, imgs: np.ndarray) -> np.ndarray:
    """``proxy`` rows of ``imgs`` (a copy of those rows only) with every GT and positive pair at -inf."""
    block = np.array(proxy[imgs], np.float64)
    sub = known[imgs].tocoo()
    block[sub.row, sub.col] = -np.inf
    return block


def _known(gt: sp.spmatrix, positives: sp.spmatrix, proxy: np.ndarray) -> sp.csr_matrix:
    if np.shape(proxy) != gt.shape:
        raise ValueError(f"proxy must have the shape of gt {gt.shape}, got {np.shape(proxy)}")
    return (sp.csr_matrix(gt, dtype=bool) + sp.csr_matrix(positives, dtype=bool)).tocsr()


def hardest_negatives(gt: sp.spmatrix, positives: sp.spmatrix, proxy: np.ndarray, per_image: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols): for each image ``i``, its ``per_image[i]`` non-GT, non-positive captions with the
    highest ``proxy[i]`` score (ties by caption index)."""
    known = _known(gt, positives, proxy)
    per_image = np.asarray(per_image, np.int64)
    rows, cols = [], []
    for n in np.unique(per_image[per_image > 0]):
        imgs = np.flatnonzero(per_image == n)
        top = np.argsort(-_candidate_rows(known, proxy, imgs), axis=1, kind="stable")[:, :n]
        rows.append(np.repeat(imgs, n))
        cols.append(top.ravel())
    if not rows:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(rows), np.concatenate(cols)


def matched_negatives(gt: sp.spmatrix, positives: sp.spmatrix, proxy: np.ndarray, pos_rows: np.ndarray,
                      pos_cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols): for each positive pair (``pos_rows[t]``, ``pos_cols[t]``), the non-GT, non-positive
    caption of the same image whose ``proxy`` score is nearest the positive's, each used once per
    image (positives taken in order of score; ties to the lower score, then the lower index)."""
    known = _known(gt, positives, proxy)
    rows, cols = [], []
    order = np.lexsort((np.asarray(proxy[pos_rows, pos_cols], np.float64), pos_rows))
    for i, idx, count in zip(*np.unique(pos_rows[order], return_index=True, return_counts=True)):
        cand = _candidate_rows(known, proxy, np.array([i]))[0]
        free = np.flatnonzero(np.isfinite(cand))
        free = free[np.argsort(cand[free], kind="stable")]
        vals = cand[free]
        used = np.zeros(free.size, bool)
        for t in order[idx: idx + count]:
            target = float(proxy[i, pos_cols[t]])
            j = int(np.searchsorted(vals, target))
            lo, hi = j - 1, j
            while lo >= 0 and used[lo]:
                lo -= 1
            while hi < free.size and used[hi]:
                hi += 1
            if lo < 0 and hi >= free.size:
                break
            pick = lo if hi >= free.size or (lo >= 0 and target - vals[lo] <= vals[hi] - target) else hi
            used[pick] = True
            rows.append(i)
            cols.append(free[pick])
    return np.asarray(rows, np.int64), np.asarray(cols, np.int64)


def judged_pairs(gt: sp.spmatrix, positives: sp.spmatrix, n_random: int | None = None, seed: int = 0,
                 negatives: str = "random", proxy: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(rows, cols, label, is_gt): GT pairs + non-GT positives (label 1) + non-GT negatives (label 0).

    ``negatives``: ``"random"`` non-GT pairs (``n_random``, default the number of non-GT positives);
    ``"hardest"`` each image's highest-``proxy`` non-positive captions, as many as its non-GT
    positives (:func:`hardest_negatives`); ``"matched"`` one per positive, the same image's
    non-positive caption nearest it in ``proxy`` score (:func:`matched_negatives`). ``proxy``: an
    (n_images, n_captions) text-encoder score, needed by the last two.
    """
    negatives = check_choice("negatives", negatives, ("random", "hardest", "matched"))
    if negatives != "random" and proxy is None:
        raise ValueError(f"negatives={negatives!r} needs a proxy score matrix (n_images, n_captions)")
    gt = sp.csr_matrix(gt, dtype=bool)
    pos = sp.csr_matrix(positives, dtype=bool)
    if gt.shape != pos.shape:
        raise ValueError(f"gt {gt.shape} and positives {pos.shape} differ in shape")
    g = gt.tocoo()
    extra = (pos.astype(np.int8) - pos.multiply(gt).astype(np.int8)).tocsr()
    extra.eliminate_zeros()
    e = extra.tocoo()
    if negatives == "hardest":
        return _stack(g, e, *hardest_negatives(gt, pos, proxy, np.diff(extra.indptr)))
    if negatives == "matched":
        return _stack(g, e, *matched_negatives(gt, pos, proxy, e.row.astype(np.int64), e.col.astype(np.int64)))
    n_rand = e.nnz if n_random is None else int(n_random)
    rng = np.random.default_rng(seed)
    known = set(zip(g.row.tolist(), g.col.tolist())) | set(zip(e.row.tolist(), e.col.tolist()))
    rr, rc = [], []
    while len(rr) < n_rand:
        i = rng.integers(0, gt.shape[0], size=2 * n_rand)
        j = rng.integers(0, gt.shape[1], size=2 * n_rand)
        for a, b in zip(i.tolist(), j.tolist()):
            if (a, b) not in known:
                known.add((a, b))
                rr.append(a)
                rc.append(b)
                if len(rr) == n_rand:
                    break
    return _stack(g, e, np.array(rr, np.int64), np.array(rc, np.int64))


def _stack(g: sp.coo_matrix, e: sp.coo_matrix, rr: np.ndarray, rc: np.ndarray):
    rows = np.concatenate([g.row, e.row, rr]).astype(np.int64)
    cols = np.concatenate([g.col, e.col, rc]).astype(np.int64)
    label = np.concatenate([np.ones(g.nnz + e.nnz), np.zeros(rr.size)])
    is_gt = np.concatenate([np.ones(g.nnz, bool), np.zeros(e.nnz + rr.size, bool)])
    return rows, cols, label, is_gt


def all_pairs(gt: np.ndarray | sp.spmatrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, cols, is_gt) of every (image, caption) pair, image-major: the synthetic world's full judgement."""
    gt = sp.csr_matrix(gt, dtype=bool)
    n_img, n_cap = gt.shape
    rows, cols = np.repeat(np.arange(n_img), n_cap), np.tile(np.arange(n_cap), n_img)
    return rows, cols, gt.toarray().ravel()


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    if x.size < 2 or np.std(x) == 0 or np.std(y) == 0:
        return 0.0
    return float(np.corrcoef(x, y)[0, 1])


def _auc(score: np.ndarray, label: np.ndarray) -> float:
    pos, neg = label > 0.5, label <= 0.5
    if not pos.any() or not neg.any():
        return float("nan")
    from scipy.stats import rankdata

    r = rankdata(score)
    return float((r[pos].sum() - pos.sum() * (pos.sum() + 1) / 2) / (pos.sum() * neg.sum()))


def auc_draws(scores: Mapping[str, np.ndarray], label: np.ndarray, *, n_draws: int = 1000, seed: int = 0) -> pd.DataFrame:
    """The AUC of each score on one sample of labelled pairs (``replicate`` 0) and on ``n_draws`` bootstrap draws
    of it (1..B): positives and negatives each resampled with replacement at their own count (the AUC's two
    samples), every score on the same draw, so two scores' AUCs are paired draw by draw
    (:func:`itmlib.claims.verdicts.bootstrap_verdict`). Columns ``replicate``, ``method``, ``auc``."""
    from scipy.stats import rankdata

    label = np.asarray(label, float) > 0.5
    pos, neg = np.flatnonzero(label), np.flatnonzero(~label)
    rng = np.random.default_rng(seed)
    draws = np.stack([np.concatenate([rng.choice(pos, len(pos)), rng.choice(neg, len(neg))]) for _ in range(n_draws)]) \
        if n_draws else np.empty((0, len(label)), int)   # (B, n): each draw's positives first
    n_pos, n_neg = len(pos), len(neg)
    rows = []
    for name, s in scores.items():
        s = np.asarray(s, float)
        auc = np.concatenate([(rankdata(s[block], axis=1)[:, :n_pos].sum(1) - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)
                              for block in np.array_split(draws, max(1, len(draws) // 100))]) if n_draws else []
        rows += [{"replicate": 0, "method": name, "auc": _auc(s, label.astype(float))}]
        rows += [{"replicate": b + 1, "method": name, "auc": float(a)} for b, a in enumerate(auc)]
    return pd.DataFrame(rows)


def agreement_table(metrics: Mapping[str, np.ndarray], rows: np.ndarray, cols: np.ndarray, human: np.ndarray,
                    is_gt: np.ndarray, positive_at: float = 0.5) -> pd.DataFrame:
    """One row per metric (plus binary GT relevance): Pearson r on all / non-GT pairs, AUC on non-GT pairs.

    ``human``: the human label of each pair (0/1 positives, or graded 1-5);
    ``positive_at``: the label from which a pair counts as a human positive
    for the AUC (0.5 for 0/1 labels, e.g. 4 for 1-5 ratings).
    """
    human = np.asarray(human, float)
    is_gt = np.asarray(is_gt, bool)
    items = {"Binary relevance (GT)": is_gt.astype(float)}
    items |= {name: np.asarray(m)[rows, cols].astype(float) for name, m in metrics.items()}
    positive = (human >= positive_at).astype(float)
    out = []
    for name, v in items.items():
        out.append({"metric": name, "pearson_all": _pearson(v, human),
                    "pearson_non_gt": _pearson(v[~is_gt], human[~is_gt]),
                    "auc_non_gt": _auc(v[~is_gt], positive[~is_gt])})
    return pd.DataFrame(out)
