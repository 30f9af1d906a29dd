"""Losses: the hinge triplet loss (VSE++), the Semantic Adaptive Margin (SAM) and SSAMT's matching
losses (:mod:`itmlib.losses.phrase`, eqs. 1-3)."""

from .sam import SAMPLINGS, SAMConfig, batch_phi, phi_index, sam_loss, sample_negatives
from .triplet import triplet_loss

__all__ = ["triplet_loss", "sam_loss", "sample_negatives", "batch_phi", "phi_index", "SAMPLINGS", "SAMConfig"]
