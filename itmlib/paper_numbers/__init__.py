"""The papers' reported numbers, transcribed once from ``../shared/papers/``.

Each table is a CSV file beside this module; :data:`SOURCES` says which paper
and which table it came from. Notebooks put these numbers in a ``paper``
column beside ``ours`` so that every results table can be compared at a glance.
The NCS/SAM tables 2 and 3 were transcribed by parsing the paper's text (the
``<b>`` bold markers removed); the rest by hand. Numbers stay in the paper's own
units (TERAN prints NDCG as a fraction; the joins scale it to our percent).
The papers' *claims* are data too: ``claims_<paper>.yaml`` beside the tables
(:mod:`itmlib.claims`).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import Any

import pandas as pd

__all__ = ["PaperTable", "SOURCES", "paper_table", "paper_rows", "paper_value", "list_tables"]


@dataclass(frozen=True)
class PaperTable:
    """Where a transcribed table came from."""

    key: str
    paper: str
    table: str
    description: str

    @property
    def citation(self) -> str:
        return f"{self.paper}, {self.table}"


_NCS = "Biten et al., 'Is an image worth five sentences?' (WACV 2022)"
_TERAN = "Messina et al., TERAN (ACM TOMM 2021)"
_SSAMT = "Fan et al., phrase-level semantic labels / SSAMT (arXiv 2109.05523)"
_NBR = "Thomas & Kovashka, 'Preserving semantic neighborhoods' (ECCV 2020)"

SOURCES: dict[str, PaperTable] = {
    t.key: t
    for t in (
        PaperTable("datasets", f"{_NCS}; {_TERAN}", "sections 3.4, 5.2 and 7",
                   "sizes of Flickr30K, MS-COCO and CxC as the papers state them"),
        PaperTable("ncs_sam_table1", _NCS, "Table 1",
                   "Pearson-R with CxC human judgements, all pairs and non-GT pairs"),
        PaperTable("ncs_sam_table2", _NCS, "Table 2",
                   "reduced training data (F-10%, F-25%, C-3%, C-5%): baseline vs +SAM, R@K and N@K"),
        PaperTable("ncs_sam_table3", _NCS, "Table 3",
                   "full data: VSRN, CVSE, SGR with and without SAM on F30K, COCO 1K, COCO 5K"),
        PaperTable("ncs_sam_table4", _NCS, "Table 4",
                   "tau x soft negatives x keep-triplet: Nsum, Nsum without GT, Rsum"),
        PaperTable("ncs_sam_table5", _NCS, "Table 5",
                   "tau x random/hard negatives x keep-triplet on F30K"),
        PaperTable("teran_table1", _TERAN, "Table 1",
                   "MS-COCO 1K test: Recall@K and NDCG (ROUGE-L, SPICE relevance) of VSE++, TERN and TERAN poolings; "
                   "image retrieval = t2i, sentence retrieval = i2t"),
        PaperTable("teran_table4", _TERAN, "Table 4",
                   "MS-COCO 1K ablations: shared weights, MrAvgw, stop-word filter, Bi-GRU/Bi-LSTM text encoders"),
        PaperTable("ssamt_table1", _SSAMT, "Table 1",
                   "MS-COCO 1K and Flickr30K test: Recall@K of VSE++ and SSAMT (other models omitted)"),
        PaperTable("ssamt_table3", _SSAMT, "Table 3",
                   "MS-COCO 1K ablation: mask transformer with global (GM), local (LM), phrase matching (PM), "
                   "with and without phrase nodes"),
        PaperTable("ssamt_table4", _SSAMT, "Table 4",
                   "MS-COCO test: accuracy (%) of telling a positive pair from one sampled negative by each score"),
        PaperTable("ssamt_table5", _SSAMT, "Table 5",
                   "Flickr30K: Rsum with 100/75/50/25% of the training data"),
        PaperTable("neighborhoods_table1", _NBR, "Table 1",
                   "k-way retrieval accuracy (fraction; 5-way Politics/GoodNews, 20-way ConcCap, 100-way COCO); "
                   "method names as the paper's (OURS = ANG + L_text + L_img; OURS (ANG) in Tables 3-4)"),
        PaperTable("neighborhoods_table2", _NBR, "Table 2",
                   "COCO 100-way accuracy: OURS (TRIP) vs STRUC with ground-truth or Doc2Vec (NN) neighbours"),
        PaperTable("neighborhoods_table3", _NBR, "Table 3",
                   "neighbourhood preservation at 200 neighbours (fraction), images (img) and texts (txt)"),
        PaperTable("neighborhoods_table4", _NBR, "Table 4", "ablation: OURS (ANG) without L_text or without L_img"),
        PaperTable("teran_query_times", _TERAN, "sec. 7 (query times)",
                   "seconds per image query (5k captions) and per caption query (1k images) on a GTX 1080 Ti"),
    )
}


def list_tables() -> list[str]:
    """Keys of every transcribed table."""
    return sorted(SOURCES)


def paper_table(key: str) -> pd.DataFrame:
    """The transcribed table ``key`` as a DataFrame (``df.attrs['source']`` is its citation)."""
    if key not in SOURCES:
        raise ValueError(f"unknown paper table {key!r}; known: {list_tables()}")
    with resources.files(__name__).joinpath(f"{key}.csv").open("r", encoding="utf-8") as fh:
        df = pd.read_csv(fh)
    df.attrs["source"] = SOURCES[key].citation
    return df


def paper_rows(keys: str | list[str], **where: Any) -> pd.DataFrame:
    """The rows of one transcribed table (or several, concatenated) whose columns equal ``where``."""
    keys = [keys] if isinstance(keys, str) else list(keys)
    df = pd.concat([paper_table(k) for k in keys], ignore_index=True)
    mask = pd.Series(True, index=df.index)
    for col, val in where.items():
        if col not in df.columns:
            raise ValueError(f"paper table(s) {keys} have no column {col!r}")
        mask &= df[col] == val
    return df[mask]


def paper_value(key: str, column: str, **where: Any) -> Any:
    """One number of a transcribed table: the ``column`` of the single row matching ``where``.

    >>> paper_value("ncs_sam_table1", "non_gt_pairs", metric="NCS with SPICE")
    0.536
    """
    rows = paper_rows(key, **where)
    if column not in rows.columns:
        raise ValueError(f"paper table {key!r} has no column {column!r}; columns: {list(rows.columns)}")
    if len(rows) != 1:
        raise ValueError(f"paper table {key!r}: {len(rows)} rows match {where}, expected exactly 1")
    return rows.iloc[0][column].item() if hasattr(rows.iloc[0][column], "item") else rows.iloc[0][column]
