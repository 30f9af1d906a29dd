"""Losses: the hinge triplet loss (VSE++) and the Semantic Adaptive Margin (SAM)."""

from .sam import SAMPLINGS, batch_phi, phi_index, sam_loss, sample_negatives
from .triplet import triplet_loss

__all__ = ["triplet_loss", "sam_loss", "sample_negatives", "batch_phi", "phi_index", "SAMPLINGS"]
