"""Retrieval metrics. All take ``sims``, an (n_images, n_captions) score matrix
(higher = closer), and ``img_of_caption``, the image index of every caption, and
return a dict of percentages keyed ``<direction>_<metric><cut-off>`` (``i2t_r5``,
``t2i_n10``, ``i2t_sr5``, ``t2i_ndcg25``, ``i2t_map_at_r``). Cut-offs are ``ks`` (several)
or ``k`` (one); Semantic Recall's relevant-set size is ``m``.

- :func:`retrieval_recall` - R^V (VSE convention) or IR recall, medr/meanr
- :func:`semantic_recall`  - Semantic Recall (Biten et al., eq. 4)
- :func:`ncs`              - Normalized Cumulative Semantic score (eq. 5; or the public code's variant)
- :func:`ndcg`             - NDCG@k with exponential (TERAN) or linear gain
- :func:`map_at_r`, :func:`r_precision` - ECCV Caption's metrics on binary positives
- :func:`coco_1k`          - the COCO 1k protocol: mean over five folds of 1,000 images
- :func:`k_way_accuracy`, :func:`neighborhood_preservation` - Thomas & Kovashka's pair metrics (embeddings in)
"""

from .binary import map_at_r, r_precision
from .ndcg import ndcg
from .protocols import coco_1k, fold_slices
from .recall import retrieval_recall
from .kway import k_way_accuracy, neighbor_distance, neighborhood_preservation
from .semantic import ncs, semantic_recall

#: the metric bundle every trained model is evaluated on (:func:`itmlib.training.train.evaluate`): Recall@K
#: (R^V, percent) and NCS@K (percent, SPICE-analogue relevance) both ways, their sums, Nsum without GT items
METRIC_COLUMNS = ["i2t_r1", "i2t_r5", "i2t_r10", "t2i_r1", "t2i_r5", "t2i_r10", "rsum",
                  "i2t_n1", "i2t_n5", "i2t_n10", "t2i_n1", "t2i_n5", "t2i_n10", "nsum", "nsum_nogt"]

__all__ = ["METRIC_COLUMNS", "retrieval_recall", "semantic_recall", "ncs", "ndcg", "map_at_r", "r_precision", "coco_1k",
           "fold_slices", "k_way_accuracy", "neighborhood_preservation", "neighbor_distance"]
