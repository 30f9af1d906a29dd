"""Model inputs read off a dataset: the region features (with box geometry) of a batch of images.

Every model of the course (VSE++, TERAN, and the SSAMT / neighbourhood models to
come) sees an image as its padded region features plus a validity mask:

    x_r = [f_r, x1_r, y1_r, x2_r, y2_r, area_r]   for r < n_regions(i), masked after
"""

from __future__ import annotations

import numpy as np
import torch

from .base import ITMDataset

__all__ = ["region_inputs"]


def region_inputs(ds: ITMDataset, idx: np.ndarray, use_boxes: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """(features (B, R, D[+5]), valid-region mask (B, R)) of images ``idx`` of ``ds``.

    With ``use_boxes`` the box ``[x1, y1, x2, y2]`` and its area are appended to
    each region (zeros when the dataset has no boxes)."""
    feats = torch.from_numpy(np.ascontiguousarray(ds.regions[idx], dtype=np.float32))
    B, R, _ = feats.shape
    if ds.region_counts is not None:
        mask = torch.arange(R)[None, :] < torch.from_numpy(ds.region_counts[idx])[:, None]
    else:
        mask = torch.ones(B, R, dtype=torch.bool)
    if use_boxes:
        if ds.boxes is not None:
            b = torch.from_numpy(ds.boxes[idx])
            area = ((b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1]))[..., None]
            geo = torch.cat([b, area], dim=-1)
        else:
            geo = torch.zeros(B, R, 5)
        feats = torch.cat([feats, geo], dim=-1)
    return feats, mask
