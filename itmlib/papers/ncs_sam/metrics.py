"""Notebooks 01-02's side of Biten et al.: Table 1's rows beside ours, Figure 3's Semantic Recall curves,
and the evaluation with human-verified positives (CxC, ECCV Caption)."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ...data.base import ITMDataset
from ...metrics import semantic_recall
from ...paper_numbers import paper_table
from ...training.train import TrainResult


#: our relevance rows of Table 1 -> the paper's rows ("SPICE-like": whichever scene-graph F1 parses text as SPICE does)
TABLE1_ROWS = {"Binary relevance (GT)": "Binary relevance (GT)", "CIDEr-D": "NCS with CIDEr", "SPICE-like": "NCS with SPICE"}


def with_table1_columns(table: pd.DataFrame, spice_like: str) -> pd.DataFrame:
    """``table`` (a ``metric`` column of relevance names) with the paper's Table 1 Pearson r beside the
    matching rows: binary GT, CIDEr(-D), and SPICE beside ``spice_like`` (the row that parses captions
    into scene graphs, as SPICE does); NaN beside the others."""
    paper = paper_table("ncs_sam_table1").set_index("metric")
    rows = table.metric.map(lambda m: TABLE1_ROWS.get("SPICE-like" if m == spice_like else m))
    out = table.copy()
    for ours, theirs in (("paper_pearson_all", "all_pairs"), ("paper_pearson_non_gt", "non_gt_pairs")):
        out[ours] = [paper.loc[r, theirs] if isinstance(r, str) else np.nan for r in rows]
    return out


def figure3_table(sims: Mapping[str, np.ndarray], relevance: np.ndarray, img_of_caption: np.ndarray, *,
                  k: int = 5, m_values: Sequence[int] = (1, 2, 3, 5)) -> pd.DataFrame:
    """Figure 3's curves, text-to-image: per retriever and m, R@k over the m most relevant non-GT
    images (a hit if any is in the top k) and Semantic Recall@k (eq. 4, the share found), with the
    number of captions skipped because fewer than one image has relevance > 0."""
    rows = []
    for name, s in sims.items():
        for m in m_values:
            hit = semantic_recall(s, relevance, img_of_caption, k=k, m=m, kind="first_hit", directions=("t2i",))
            sr = semantic_recall(s, relevance, img_of_caption, k=k, m=m, directions=("t2i",))
            rows.append({"retriever": name, "m": m, f"R@{k} (any of m)": hit[f"t2i_sr{k}"], f"SR@{k}": sr[f"t2i_sr{k}"],
                         "queries skipped": sr["t2i_skipped"]})
    return pd.DataFrame(rows)


def figure3_runs(fig3: pd.DataFrame, *, control: str = "random") -> pd.DataFrame:
    """The run table Figure 3's claims read: each retriever but the ``control`` at its smallest
    and largest m (methods ``"smallest m"`` / ``"largest m"``, paired by retriever)."""
    k = next(c for c in fig3.columns if c.startswith("SR@"))[3:]
    lo, hi = fig3.m.min(), fig3.m.max()
    ends = fig3[fig3.m.isin([lo, hi]) & (fig3.retriever != control)]
    return pd.DataFrame({"retriever": ends.retriever.to_numpy(),
                         "method": np.where(ends.m == lo, "smallest m", "largest m"),
                         "recall_any": ends[f"R@{k} (any of m)"].to_numpy(), "semantic_recall": ends[f"SR@{k}"].to_numpy()})


def positives_evaluator(test_ds: ITMDataset, relevance: np.ndarray | None, *, device: str = "auto"):
    """An ``evaluate_fn`` for :func:`itmlib.training.grid.run_grid`: the default evaluation (Recall, NCS with
    ``relevance``) plus, for every set of human-verified positives ``test_ds`` carries (CxC, ECCV Caption on
    real COCO ids), mAP@R and R-Precision both ways (:func:`itmlib.metrics.map_at_r`, checked against
    ``eccv_caption``'s own function), columns ``<set>_<direction>_map_at_r`` / ``..._r_precision``. On a
    subset of the Karpathy 5k test (1,000 images at medium) a query's positives are those inside it: not the
    ECCV benchmark's numbers, which rank all 5,000 images. Text-to-image reads a set's own caption queries where
    the dataset carries them (``<set>_t2i``: ECCV Caption's ``caption_to_image``), and each direction names how
    many queries it evaluated (``<set>_<direction>_queries``)."""
    from ...config import array_key, resolve_device
    from ...metrics import map_at_r
    from ...training.train import evaluate

    device = resolve_device(device)

    def fn(name: str, result: TrainResult, ds: ITMDataset) -> list[dict[str, float]]:
        sims = result.model.similarity(ds, result.vocab, device)
        row = evaluate(result.model, result.vocab, ds, relevance, sims=sims)
        positives = ds.positives or {}
        for kind, pos in sorted(positives.items()):
            if not kind.endswith("_t2i"):   # its caption queries, where the set defines them apart
                row |= {f"{kind}_{k}": v for k, v in map_at_r(sims, pos, ds.img_of_caption,
                                                               positives.get(f"{kind}_t2i")).items()}
        return [row]

    fn.cache_key = (f"positives-eval-v2|{test_ds.source}|{test_ds.split}|{test_ds.n_images}|"
                    f"relevance {array_key(relevance) if relevance is not None else 'none'}|"
                    f"positives {','.join(sorted(test_ds.positives or {}))}")
    return fn
