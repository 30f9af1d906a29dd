"""Retrieval metrics. All take ``sims``, an (n_images, n_captions) score matrix
(higher = closer), and ``img_of_caption``, the image index of every caption.

- :func:`retrieval_recall` - R^V (VSE convention) or IR recall, medr/meanr
- :func:`semantic_recall`  - Semantic Recall (Biten et al., eq. 4)
- :func:`ncs`              - Normalized Cumulative Semantic score (eq. 5; or the public code's variant)
- :func:`ndcg`             - NDCG@p with exponential (TERAN) or linear gain
- :func:`map_at_r`, :func:`r_precision` - ECCV Caption's metrics on binary positives
- :func:`coco_1k`          - the COCO 1k protocol: mean over five folds of 1,000 images
"""

from .binary import map_at_r, r_precision
from .ndcg import ndcg
from .protocols import coco_1k, fold_slices
from .recall import retrieval_recall
from .semantic import ncs, semantic_recall

__all__ = ["retrieval_recall", "semantic_recall", "ncs", "ndcg", "map_at_r", "r_precision", "coco_1k",
           "fold_slices"]
