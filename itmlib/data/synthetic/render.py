"""Render a synthetic scene as an RGB picture with PIL.

Each category has a shape and an inner mark, each object is filled with its
colour, large or small by its box, striped or spotted by its pattern. The
picture is for people (the data tour, retrieval grids, grounding figures);
models read the region features.
"""

from __future__ import annotations

import math

import numpy as np
from PIL import Image, ImageDraw

from .scenes import Scene
from .vocab import CATEGORIES, COLOR_RGB, COLORS

__all__ = ["render_scene", "BACKGROUND_RGB"]

BACKGROUND_RGB = ((226, 236, 245), (236, 232, 214), (222, 240, 222), (240, 226, 226), (232, 232, 232),
                  (214, 226, 240))


def _darker(rgb: tuple[int, int, int], f: float = 0.55) -> tuple[int, int, int]:
    if sum(rgb) < 120:  # black: lighten instead
        return (110, 110, 110)
    return tuple(int(c * f) for c in rgb)  # type: ignore[return-value]


def _shape(d: ImageDraw.ImageDraw, shape: str, b: tuple[float, float, float, float], fill, line) -> None:
    x1, y1, x2, y2 = b
    w, h = x2 - x1, y2 - y1
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    if shape == "ellipse":
        d.ellipse(b, fill=fill, outline=line, width=2)
    elif shape == "rect":
        d.rectangle(b, fill=fill, outline=line, width=2)
    elif shape == "triangle":
        d.polygon([(cx, y1), (x2, y2), (x1, y2)], fill=fill, outline=line)
    elif shape == "diamond":
        d.polygon([(cx, y1), (x2, cy), (cx, y2), (x1, cy)], fill=fill, outline=line)
    elif shape == "trapezoid":
        d.polygon([(x1, y1 + h * .3), (x2, y1 + h * .3), (x2 - w * .2, y2), (x1 + w * .2, y2)], fill=fill, outline=line)
    elif shape == "star":
        pts = [(cx + (w / 2 if k % 2 == 0 else w / 5) * math.cos(k * math.pi / 5 - math.pi / 2),
                cy + (h / 2 if k % 2 == 0 else h / 5) * math.sin(k * math.pi / 5 - math.pi / 2)) for k in range(10)]
        d.polygon(pts, fill=fill, outline=line)
    elif shape == "person":
        r = min(w, h) * 0.22
        d.ellipse((cx - r, y1, cx + r, y1 + 2 * r), fill=fill, outline=line, width=2)
        d.rectangle((cx - w * .25, y1 + 2 * r, cx + w * .25, y2 - h * .25), fill=fill, outline=line, width=2)
        d.line((cx - w * .15, y2 - h * .25, cx - w * .25, y2), fill=line, width=3)
        d.line((cx + w * .15, y2 - h * .25, cx + w * .25, y2), fill=line, width=3)
    elif shape == "car":
        d.rectangle((x1, y1 + h * .4, x2, y2 - h * .2), fill=fill, outline=line, width=2)
        d.rectangle((x1 + w * .2, y1 + h * .1, x2 - w * .25, y1 + h * .4), fill=fill, outline=line, width=2)
        for wx in (x1 + w * .25, x2 - w * .25):
            d.ellipse((wx - h * .15, y2 - h * .3, wx + h * .15, y2), fill=(30, 30, 30))
    elif shape == "wheels":
        r = min(w / 4, h / 3)
        for wx in (x1 + r, x2 - r):
            d.ellipse((wx - r, y2 - 2 * r, wx + r, y2), outline=fill, width=3)
        d.line((x1 + r, y2 - r, cx, y1 + h * .3, x2 - r, y2 - r), fill=fill, width=4)
    elif shape == "chair":
        d.rectangle((x1, y1, x1 + w * .2, y2), fill=fill, outline=line)
        d.rectangle((x1, cy, x2, cy + h * .15), fill=fill, outline=line)
        d.rectangle((x2 - w * .15, cy, x2, y2), fill=fill, outline=line)
    elif shape == "table":
        d.rectangle((x1, y1 + h * .2, x2, y1 + h * .4), fill=fill, outline=line)
        d.rectangle((x1 + w * .05, y1 + h * .4, x1 + w * .2, y2), fill=fill, outline=line)
        d.rectangle((x2 - w * .2, y1 + h * .4, x2 - w * .05, y2), fill=fill, outline=line)
    elif shape == "umbrella":
        d.pieslice((x1, y1, x2, y2 + h * .2), 180, 360, fill=fill, outline=line)
        d.line((cx, cy, cx, y2), fill=line, width=3)
    elif shape == "tree":
        d.rectangle((cx - w * .1, cy, cx + w * .1, y2), fill=(110, 70, 30))
        d.ellipse((x1, y1, x2, cy + h * .2), fill=fill, outline=line, width=2)
    else:  # pragma: no cover - every category names a known shape
        raise ValueError(f"unknown shape {shape!r}")


def _mark(d: ImageDraw.ImageDraw, mark: str, b: tuple[float, float, float, float], line) -> None:
    x1, y1, x2, y2 = b
    w, h = x2 - x1, y2 - y1
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    r = min(w, h) * 0.12
    if mark == "dot":
        d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=line)
    elif mark == "ring":
        d.ellipse((cx - 2 * r, cy - 2 * r, cx + 2 * r, cy + 2 * r), outline=line, width=2)
    elif mark == "bar":
        d.line((x1 + w * .3, cy, x2 - w * .3, cy), fill=line, width=3)
    elif mark == "ears":
        d.polygon([(x1 + w * .15, y1 + h * .2), (x1 + w * .25, y1 - h * .08), (x1 + w * .35, y1 + h * .15)], fill=line)
        d.polygon([(x2 - w * .15, y1 + h * .2), (x2 - w * .25, y1 - h * .08), (x2 - w * .35, y1 + h * .15)], fill=line)
    elif mark == "windows":
        for k in range(3):
            wx = x1 + w * (0.15 + 0.25 * k)
            d.rectangle((wx, y1 + h * .2, wx + w * .15, y1 + h * .4), fill=(200, 230, 250))
    elif mark == "hands":
        d.line((cx, cy, cx, y1 + h * .25), fill=line, width=2)
        d.line((cx, cy, x2 - w * .3, cy), fill=line, width=2)


def _pattern(img: Image.Image, pattern: int, b: tuple[float, float, float, float], rgb) -> None:
    """Stripes or spots inside the object's own pixels (where it was drawn)."""
    if pattern == 0:
        return
    x1, y1, x2, y2 = (int(round(v)) for v in b)
    if x2 - x1 < 3 or y2 - y1 < 3:
        return
    crop = np.asarray(img.crop((x1, y1, x2, y2))).copy()
    inside = np.all(crop == np.array(rgb, dtype=np.uint8), axis=-1)
    yy, xx = np.mgrid[0:crop.shape[0], 0:crop.shape[1]]
    step = max(3, (x2 - x1) // 6)
    if pattern == 1:
        sel = ((xx + yy) // max(2, step // 2)) % 2 == 0
    else:
        sel = ((xx % step) - step / 2) ** 2 + ((yy % step) - step / 2) ** 2 <= (step / 4) ** 2
    crop[inside & sel] = _darker(rgb)
    img.paste(Image.fromarray(crop), (x1, y1))


def render_scene(scene: Scene, size: int = 256) -> Image.Image:
    """The scene as a ``size`` x ``size`` RGB ``PIL.Image`` (larger objects drawn first)."""
    img = Image.new("RGB", (size, size), BACKGROUND_RGB[scene.background % len(BACKGROUND_RGB)])
    d = ImageDraw.Draw(img)
    area = (scene.box[:, 2] - scene.box[:, 0]) * (scene.box[:, 3] - scene.box[:, 1])
    for k in np.argsort(-area, kind="stable"):
        cat = CATEGORIES[scene.cat[k]]
        rgb = COLOR_RGB[COLORS[scene.color[k]]]
        b = tuple(float(v) * (size - 1) for v in scene.box[k])
        line = _darker(rgb, 0.4)
        _shape(d, cat.shape, b, rgb, line)
        _pattern(img, int(scene.pattern[k]), b, rgb)
        d = ImageDraw.Draw(img)
        _mark(d, cat.mark, b, line)
    return img
