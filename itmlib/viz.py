"""Plot helpers shared by the notebooks (matplotlib)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .data.base import ITMDataset

__all__ = ["show_scene"]


def show_scene(ax: Any, ds: ITMDataset, image: int, *, size: int = 256, boxes: bool = True,
               title: str | None = None) -> int:
    """Draw rendered image ``image`` of a synthetic dataset on ``ax`` with its objects' true boxes.

    Returns the number of boxes drawn (one per object).
    """
    from matplotlib.patches import Rectangle

    img = ds.render(image, size)
    ax.imshow(np.asarray(img))
    ax.set_axis_off()
    n = 0
    if boxes and "scenes" in ds.image_extras:
        scene = ds.image_extras["scenes"][image]
        for name, b in zip(scene.names(), scene.box):
            x1, y1, x2, y2 = (float(v) * (size - 1) for v in b)
            ax.add_patch(Rectangle((x1, y1), x2 - x1, y2 - y1, fill=False, lw=1.5, ec="black", ls="--"))
            ax.text(x1, y1, name, fontsize=7, va="bottom", bbox=dict(fc="white", alpha=0.7, lw=0, pad=1))
            n += 1
    if title:
        ax.set_title(title, fontsize=8)
    return n
