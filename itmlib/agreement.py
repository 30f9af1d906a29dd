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
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd
import scipy.sparse as sp

__all__ = ["judged_pairs", "agreement_table"]


def judged_pairs(gt: sp.spmatrix, positives: sp.spmatrix, n_random: int | None = None, seed: int = 0
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(rows, cols, label, is_gt): GT pairs + non-GT positives (label 1) + random non-GT pairs (label 0).

    ``n_random`` defaults to the number of non-GT positives.
    """
    gt = sp.csr_matrix(gt, dtype=bool)
    pos = sp.csr_matrix(positives, dtype=bool)
    if gt.shape != pos.shape:
        raise ValueError(f"gt {gt.shape} and positives {pos.shape} differ in shape")
    g = gt.tocoo()
    extra = (pos.astype(np.int8) - pos.multiply(gt).astype(np.int8)).tocsr()
    extra.eliminate_zeros()
    e = extra.tocoo()
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
    rows = np.concatenate([g.row, e.row, np.array(rr, np.int64)])
    cols = np.concatenate([g.col, e.col, np.array(rc, np.int64)])
    label = np.concatenate([np.ones(g.nnz + e.nnz), np.zeros(n_rand)])
    is_gt = np.concatenate([np.ones(g.nnz, bool), np.zeros(e.nnz + n_rand, bool)])
    return rows, cols, label, is_gt


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
