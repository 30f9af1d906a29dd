"""Plot helpers shared by the notebooks (matplotlib)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .data.base import ITMDataset

__all__ = ["show_scene", "show_word_grounding", "show_phrase_scores"]


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


def show_word_grounding(ax: Any, ds: ITMDataset, caption: int, regions: Any, region_mask: Any, words: Any,
                        word_index: Any, *, size: int = 256, skip: frozenset[str] = frozenset(),
                        region_offset: int = 1) -> list[tuple[str, int, float]]:
    """TERAN's Figure 7 on a rendered image: each word of ``caption`` boxed at its best-aligned
    region, labelled with the word and its cosine. Returns (word, region slot, cosine) per word."""
    from matplotlib.patches import Rectangle

    from .grounding import word_region_scores
    from .models.vocab import tokenize

    image = int(ds.img_of_caption[caption])
    ax.imshow(np.asarray(ds.render(image, size)))
    ax.set_axis_off()
    colors = ["tab:red", "tab:blue", "tab:green", "tab:orange", "tab:purple", "tab:brown", "tab:pink", "tab:olive"]
    out = []
    for j, w in enumerate(tokenize(ds.captions[caption])):
        if w in skip or not bool((word_index[caption] == j).any()):
            continue
        cos = word_region_scores(regions, region_mask, words, word_index, image, caption, j)
        r = int(np.argmax(cos))
        slot = r - region_offset
        x1, y1, x2, y2 = (float(v) * (size - 1) for v in ds.boxes[image, slot])
        c = colors[len(out) % len(colors)]
        ax.add_patch(Rectangle((x1, y1), x2 - x1, y2 - y1, fill=False, lw=1.5, ec=c))
        ax.text(x1 + 2, y1 + 9 + 9 * (len(out) % 3), f"{w} {cos[r]:.2f}", fontsize=6, color=c,
                bbox=dict(fc="white", alpha=0.7, lw=0, pad=0.5))
        out.append((w, slot, float(cos[r])))
    ax.set_title(ds.captions[caption], fontsize=7)
    return out


def show_phrase_scores(ax: Any, parts: list[tuple[str, ...]], scores: Any, *, truth: list[bool] | None = None,
                       title: str = "") -> None:
    """SSAMT's Figure 3 as text on ``ax``: each token / phrase of a caption with its phrase-to-image score
    s(p, I), blue above the caption's median, red below (darker = further), a cross on parts that are
    false of the image (``truth`` False)."""
    from matplotlib import colormaps

    s = np.asarray(scores, dtype=float)
    if len(parts) != len(s):
        raise ValueError(f"one score per part: {len(parts)} parts, {len(s)} scores")
    ax.set_axis_off()
    ax.set_title(title, fontsize=9, loc="left")
    span = max(float(np.abs(s - np.median(s)).max()), 1e-6)
    cmap = colormaps["coolwarm_r"]
    n = len(parts)
    for j, (p, v) in enumerate(zip(parts, s)):
        mark = "" if truth is None or truth[j] else "  ✗ false"
        ax.text(0.0, 1 - (j + 0.5) / max(n, 1), f"{' '.join(p):<28s} {v:+.2f}{mark}", family="monospace", fontsize=8,
                va="center", transform=ax.transAxes,
                bbox=dict(facecolor=cmap(0.5 + 0.5 * (v - np.median(s)) / span), edgecolor="none", pad=1.5))
