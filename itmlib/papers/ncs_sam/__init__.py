"""Biten et al., *Is an image worth five sentences?* (WACV 2022): the paper's home in itmlib.

Notebooks 01-05. The metrics (Recall, Semantic Recall eq. 4, NCS eq. 5) live in
:mod:`itmlib.metrics`, the relevance (CIDEr-D, SPICE-like scene-graph F1) in
:mod:`itmlib.relevance`, the losses in :mod:`itmlib.losses` (triplet eq. 6, SAM eq. 7):

    L_SAM = Σ_{(p, c_p)} [α_t2i - S(p, c_p) + S(p, c_m)]_+ + [α_i2t - S(p, c_p) + S(m, c_p)]_+
    α     = (φ(G_p, c_p) - φ(G_p, c_m)) / τ,        φ = CIDEr-D against the image's captions G_p

This package holds what is the paper's alone, by notebook: :mod:`.metrics` (01-02: Table 1's rows,
Figure 3, positives), :mod:`.ablation` (04: the VSE++ configs sized by scale, the Tables 4/5 grid with its
control arms, the margin analysis, the pooled run tables its claims read) and :mod:`.scarce` (05: the
scarce-data arms, their budgets and fraction choice, Tables 2/3 beside ours).

The control arms ask whether CIDEr-D *semantics* in the margin matter: "shuffled"
permutes the negatives' φ within the batch (same negatives, same hinges, margins no longer
tied to their negative), "leave-one-out" drops c_p from G_p (φ(G_p, c_p) otherwise gains
exactly 2.0 from matching itself). Every SAM claim is judged twice: against the baseline
and against its shuffled twin.
"""

from __future__ import annotations

from .ablation import (vse_config, ablation_settings, sam_configs, SAM_ALONE_SUMS_EVERY_NEGATIVE, by_control,
                       sam_margin_samples, summarize_margins, trained_settings, by_sampling, by_triplet,
                       tables45_paper, phi_pos_variance_share)
from .scarce import (SCARCE_ARMS, scarce_configs, SCARCE_RECIPE, recipe_configs, paper_scarcity,
                     choose_fractions, scarce_schedule, scarce_budgets, label_fractions, paper_method,
                     with_paper_columns, fraction_setting)
from .metrics import TABLE1_ROWS, with_table1_columns, figure3_table, figure3_runs, positives_evaluator

__all__ = ["vse_config", "ablation_settings", "sam_configs", "SAM_ALONE_SUMS_EVERY_NEGATIVE", "by_control",
           "sam_margin_samples", "summarize_margins", "trained_settings", "by_sampling", "by_triplet",
           "tables45_paper", "phi_pos_variance_share", "SCARCE_ARMS", "scarce_configs", "SCARCE_RECIPE",
           "recipe_configs", "paper_scarcity", "choose_fractions", "scarce_schedule", "scarce_budgets",
           "label_fractions", "paper_method", "with_paper_columns", "fraction_setting", "TABLE1_ROWS",
           "with_table1_columns", "figure3_table", "figure3_runs", "positives_evaluator"]
