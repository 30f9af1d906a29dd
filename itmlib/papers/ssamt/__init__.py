"""Fan et al., *Constructing phrase-level semantic labels* (SSAMT, arXiv 2109.05523): the paper's home in itmlib.

Notebook 06. The phrase labels and their positive/negative split live in
:mod:`itmlib.relevance.phrases`, the mask transformer in :mod:`itmlib.models.ssamt`, the
losses (eqs. 1-4) in :mod:`itmlib.losses.phrase`; training is the course's one loop
(:func:`itmlib.training.train.train`, which runs SSAMT's phase 1 once for every arm that shares it).

    L = λ_GM L_GM + λ_LM L_LM + λ_PM L_PM          (eq. 4)
    S(I, T) = s_intra + λ_inter s_inter + λ_loc s_loc   (eq. 5)

This package holds what is the paper's alone: :mod:`.configs` (configs by scale, the Table 3 arms, the
grids), :mod:`.evaluation` (Recall/NCS with re-ranking, Table 4's mismatch classification by two protocols,
Figure 3 made measurable: is the lowest-scoring phrase of a negative caption a truly false one?, re-ranking
depth against Recall and time) and :mod:`.tables` (the per-seed tables its claims are judged on); :mod:`.worlds` gives the notebook and
the member pool the same members and worlds.
No public code exists; every choice is stated in the model module's docstring.

Table 4's protocol. The paper reports global accuracies of 76.9 (i2t) and 83.9 (t2i) for a model whose
R@10 is over 95%: ranking a positive above one sampled negative would score ~99% with such a model, so the
paper most likely classifies each pair on its own against a threshold. :func:`classifier_accuracy` does
that (a balanced set of positive and sampled negative pairs, the threshold chosen on dev pairs, and at 0);
:func:`mismatch_accuracy` keeps the ranking protocol as a second column. The claims are judged on the
threshold protocol.
"""

from __future__ import annotations

from .configs import (grids, ARMS, RULE3_ARM, PER_PART_WORLD, arm_name, PAPER_NAMES, ssamt_config,
                      fixed_updates, scaled_epochs, table3_configs)
from .evaluation import (negative_pairs, mismatch_accuracy, mask_of_pair, best_threshold, threshold_accuracy,
                         classifier_accuracy, pair_thresholds, part_accuracy, false_phrases, ssamt_evaluator,
                         rerank_curve, true_tuples)
from .worlds import members, world
from .tables import (relative_fractions, pm_gains, with_paper_columns, figure3_table, longer_table)

__all__ = ["grids", "members", "world", "ARMS", "RULE3_ARM", "PER_PART_WORLD", "arm_name", "PAPER_NAMES", "ssamt_config",
           "fixed_updates", "scaled_epochs", "table3_configs", "negative_pairs", "mismatch_accuracy",
           "mask_of_pair", "best_threshold", "threshold_accuracy", "classifier_accuracy", "pair_thresholds",
           "part_accuracy", "false_phrases", "ssamt_evaluator", "rerank_curve", "true_tuples",
           "relative_fractions", "pm_gains", "with_paper_columns", "figure3_table", "longer_table"]
