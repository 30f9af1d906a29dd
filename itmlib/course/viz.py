"""Plot helpers shared by the notebooks (matplotlib)."""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np

from ..data.base import ITMDataset

__all__ = ["show_scene", "show_regions", "show_word_grounding", "word_groundings", "draw_word_grounding", "show_phrase_scores",
           "show_angular_geometry", "compact", "claims_view", "training_short"]


def show_regions(ax: Any, ds: ITMDataset, image: int, *, title: str | None = None) -> int:
    """Draw the region boxes of a world without pictures (``coco_scenes``), each labelled with its category
    (distractor regions dashed: they show a category no caption of the image names). Returns the boxes drawn."""
    from matplotlib.patches import Rectangle

    cats = ds.image_extras["categories"][image]
    named = set(ds.image_extras["objects"][image])
    ax.set(xlim=(0, 1), ylim=(1, 0), xticks=[], yticks=[], aspect="equal")
    n = int(ds.region_counts[image])
    for j in range(n):
        c = int(ds.image_extras["region_category"][image][j])
        x1, y1, x2, y2 = ds.boxes[image, j]
        colour = _colour(c)
        ax.add_patch(Rectangle((x1, y1), x2 - x1, y2 - y1, fill=False, lw=1.5, ec=colour, ls="-" if c in named else "--"))
        ax.text(x1, y1, cats[c], fontsize=8, color=colour, va="bottom")
    if title:
        ax.set_title(title, fontsize=8)
    return n


def _colour(k: int) -> Any:
    """A fixed colour per category index."""
    import matplotlib.pyplot as plt

    return plt.get_cmap("tab20")(k % 20)


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
            ax.text(x1, y1, name, fontsize=8, va="bottom", bbox=dict(fc="white", alpha=0.7, lw=0, pad=1))
            n += 1
    if title:
        ax.set_title(title, fontsize=8)
    return n


def word_groundings(ds: ITMDataset, caption: int, regions: Any, region_mask: Any, words: Any, word_index: Any, *,
                    skip: frozenset[str] = frozenset(), region_offset: int = 1) -> list[tuple[str, int, float]]:
    """TERAN's Figure 7 as data: (word, region slot, cosine) of each word of ``caption`` at its best-aligned
    region (:func:`itmlib.metrics.grounding.word_region_scores`); a figure record keeps these rows."""
    from ..metrics.grounding import word_region_scores
    from ..models.vocab import tokenize

    image = int(ds.img_of_caption[caption])
    out = []
    for j, w in enumerate(tokenize(ds.captions[caption])):
        if w in skip or not bool((word_index[caption] == j).any()):
            continue
        cos = word_region_scores(regions, region_mask, words, word_index, image, caption, j)
        r = int(np.argmax(cos))
        out.append((w, r - region_offset, float(cos[r])))
    return out


def draw_word_grounding(ax: Any, ds: ITMDataset, caption: int, rows: Any, *, size: int = 256) -> None:
    """TERAN's Figure 7 on a rendered image: each (word, region slot, cosine) of ``rows`` boxed at its region,
    labelled with the word and its cosine."""
    from matplotlib.patches import Rectangle

    image = int(ds.img_of_caption[caption])
    ax.imshow(np.asarray(ds.render(image, size)))
    ax.set_axis_off()
    import textwrap

    colors = ["tab:red", "tab:blue", "tab:green", "tab:orange", "tab:purple", "tab:brown", "tab:pink", "tab:olive"]
    stacked: dict[int, int] = {}   # labels already at a region: the next goes below them, never on top
    for k, (w, slot, cos) in enumerate(rows):
        x1, y1, x2, y2 = (float(v) * (size - 1) for v in ds.boxes[image, int(slot)])
        c = colors[k % len(colors)]
        j = stacked.get(int(slot), 0)
        stacked[int(slot)] = j + 1
        ax.add_patch(Rectangle((x1, y1), x2 - x1, y2 - y1, fill=False, lw=1.5, ec=c))
        ax.text(x1 + 2, min(y1 + 12 + 13 * j, size - 4), f"{w} {cos:.2f}", fontsize=8, color=c,
                bbox=dict(fc="white", alpha=0.8, lw=0, pad=0.6))
    ax.set_title("\n".join(textwrap.wrap(ds.captions[caption], 48)), fontsize=8)


def show_word_grounding(ax: Any, ds: ITMDataset, caption: int, regions: Any, region_mask: Any, words: Any,
                        word_index: Any, *, size: int = 256, skip: frozenset[str] = frozenset(),
                        region_offset: int = 1) -> list[tuple[str, int, float]]:
    """:func:`word_groundings` drawn by :func:`draw_word_grounding`; returns the rows."""
    rows = word_groundings(ds, caption, regions, region_mask, words, word_index, skip=skip, region_offset=region_offset)
    draw_word_grounding(ax, ds, caption, rows, size=size)
    return rows


def show_phrase_scores(ax: Any, parts: list[tuple[str, ...]], scores: Any, *, truth: list[bool] | None = None,
                       title: str = "") -> None:
    """SSAMT's Figure 3 as text on ``ax``: each token / phrase of a caption with its phrase-to-image score
    s(p, I), coloured by its sign as the paper does - blue positive, red negative, darker further from 0 -
    and a cross on parts that are false of the image (``truth`` False)."""
    from matplotlib import colormaps

    s = np.asarray(scores, dtype=float)
    if len(parts) != len(s):
        raise ValueError(f"one score per part: {len(parts)} parts, {len(s)} scores")
    ax.set_axis_off()
    ax.set_title(textwrap.fill(title, 44), fontsize=9, loc="left")   # a long caption wraps, never runs into its neighbour
    span = max(float(np.abs(s).max()), 1e-6)
    cmap = colormaps["coolwarm_r"]
    n = len(parts)
    for j, (p, v) in enumerate(zip(parts, s)):
        mark = "" if truth is None or truth[j] else "  ✗ false"
        ax.text(0.0, 1 - (j + 0.5) / max(n, 1), f"{' '.join(p):<28s} {v:+.2f}{mark}", family="monospace", fontsize=8,
                va="center", transform=ax.transAxes,
                bbox=dict(facecolor=cmap(0.5 + 0.5 * v / span), edgecolor="none", pad=1.5))


def show_attention_mask(ax: Any, allowed: Any, labels: list[str], title: str = "") -> None:
    """SSAMT's attention mask (sec. 2.3) as a grid on ``ax``: row = the node that attends (query), column =
    the node it may see (key); dark where allowed. ``labels`` name the nodes in order."""
    a = np.asarray(allowed, dtype=float)
    if a.shape != (len(labels), len(labels)):
        raise ValueError(f"a square mask with one label per node: mask {a.shape}, {len(labels)} labels")
    ax.imshow(a, cmap="Greys", vmin=0, vmax=1.4)
    ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=8)
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.set_xlabel("key (may be seen)")
    ax.set_ylabel("query (attends)")
    ax.set_title(title, fontsize=9)


def show_angular_geometry(ax: Any, tan2: float = 1.0, steps: int = 201) -> None:
    """Eq. 2 in the plane: ``[‖a − p‖² − 4 tan²α ‖n − C‖²]_+`` for every negative ``n`` around an anchor
    a = (−1, 0) and positive p = (1, 0), computed by :func:`itmlib.losses.angular.angular_hinge`. It is zero
    unless ``n`` falls inside the circle of radius ‖a − p‖ / (2 tan α) around C = (a + p)/2 (for tan²α = 1,
    the circle on a-p as diameter), however close ``n`` is to the anchor outside it."""
    import torch

    from ..losses.angular import angular_hinge

    xs = np.linspace(-2.5, 2.5, steps)
    gx, gy = np.meshgrid(xs, xs)
    n = torch.tensor(np.stack([gx.ravel(), gy.ravel()], 1), dtype=torch.float64)
    a = torch.tensor([[-1.0, 0.0]], dtype=torch.float64).expand_as(n)
    p = torch.tensor([[1.0, 0.0]], dtype=torch.float64).expand_as(n)
    loss = angular_hinge(a, p, n, tan2).numpy().reshape(gx.shape)
    im = ax.imshow(loss, extent=(xs[0], xs[-1], xs[0], xs[-1]), origin="lower", cmap="magma")
    r = 1.0 / np.sqrt(tan2)
    t = np.linspace(0, 2 * np.pi, 200)
    ax.plot(r * np.cos(t), r * np.sin(t), color="white", lw=1, ls="--")
    for (x, y), name in (((-1, 0), "a"), ((1, 0), "p"), ((0, 0), "C")):
        ax.plot(x, y, "o", color="cyan")
        ax.annotate(name, (x, y), xytext=(4, 6), textcoords="offset points", color="cyan", fontsize=11)
    ax.set(title=f"eq. 2's loss for a negative at each point (tan²α = {tan2:g})", xlabel="n₁", ylabel="n₂")
    ax.figure.colorbar(im, ax=ax, shrink=0.8)


def compact(table: Any, index: list[str], metrics: tuple[str, ...] = ("rsum", "nsum"), *,
            paper: dict[str, str] | None = None) -> Any:
    """A summarised table (:func:`itmlib.claims.verdicts.summarize`, with ``<metric>_std`` and ``seeds``) as a reader
    needs it: the ``index`` columns, each metric as "mean ± std", the seeds, each seed's best epoch (where the
    table has ``best epochs``), and the paper's number beside (``paper``: metric -> the column holding the
    paper's value, headed by that column's name where it starts "paper "). Other columns are left out (the full
    table is committed as CSV). ``table`` is the frame :func:`~itmlib.course.results.write_table` returned (or
    :func:`~itmlib.course.results.read_table` read), so each mean and std is shown exactly as the committed CSV
    holds it (20.78 ± 0.08, never a 0.085 the CSV does not hold), each column's means and stds at one precision
    (:func:`~itmlib.course.results.shown_column`: 2.00 beside 1.79, not 2); any other frame is refused."""
    import pandas as pd

    from .results import aligned, shown_column, shown_float as as_written

    if not getattr(table, "attrs", {}).get("table"):
        raise ValueError("compact shows a committed table: pass the frame write_table returned (or read_table read), "
                         "not the unrounded one")

    out = pd.DataFrame({c: [as_written(v) if pd.notna(v) else "-" for v in table[c]] if pd.api.types.is_float_dtype(table[c])
                        else table[c].astype(object).where(table[c].notna(), "-") for c in index})   # 0.15, not 0.150000
    places = table.attrs.get("decimals", "inferred")   # write_table's places for our means and stds (a paper column keeps its own)
    for m in metrics:
        if m not in table:
            continue
        sd = table[f"{m}_std"] if f"{m}_std" in table else pd.Series(np.nan, index=table.index)
        out[m] = [v + (f" ± {s}" if s else "") for v, s in zip(shown_column(table[m], places), shown_column(sd, places))]
        col = (paper or {}).get(m)
        if col and col in table:   # "paper_rsum (CVSE, F30K)" keeps the method it names; else per row's method
            head = col.replace("_", " ", 1) if col.startswith("paper_") else col if col.startswith("paper ") else f"paper {m}"
            floats = shown_column([v if isinstance(v, float) else np.nan for v in table[col]])   # the paper's 65.0 by 57.5
            out[head] = [f if f else f"{v}" if isinstance(v, (int, np.integer)) else "" for v, f in zip(table[col], floats)]
    if "seeds" in table:
        out["seeds"] = table["seeds"]
    if "best epochs" in table:    # each seed's selected epoch: did the arm train to a plateau?
        out["best epochs"] = table["best epochs"]
    return aligned(out.reset_index(drop=True))


def claims_view(claims: Any) -> Any:
    """A claims table (:data:`itmlib.claims.verdicts.CLAIM_COLUMNS`) as a reader reads it: the claim, the paper's
    numbers, ours, the seeds, the verdict (with its interval) and whether its arms trained; the rest is in
    the committed CSV."""
    cols = [c for c in ("claim", "paper (model vs baseline)", "ours (model vs baseline)", "seeds", "verdict", "training")
            if c in claims and (c != "training" or claims[c].fillna("").ne("").any())]
    from .results import aligned

    shown = claims[cols].assign(training=claims["training"].map(training_short)) if "training" in cols else claims[cols]
    return aligned(shown)


def training_short(text: Any) -> str:
    """A claims table's ``training`` cell as a reader scans it: ``converged``, or how many of its arms are in
    each state (``"selected at epoch 1: 3 arms; still rising: 1 arm"``); the arms are named in the CSV."""
    t = "" if not isinstance(text, str) else text
    if not t or t == "converged":
        return t
    head, t = _probed(t)
    counts: dict[str, int] = {}
    for part in t.split("; ") if t else []:
        state = part.rsplit(": ", 1)[-1]
        counts[state] = counts.get(state, 0) + 1
    shown = [f"{s}: {n} arm{'s' if n > 1 else ''}" if s != "converged" else s for s, n in counts.items()]
    return "; ".join([head] * bool(head) + shown)


def _probed(text: str) -> tuple[str, str]:
    """A training cell's leading judgement from probes (``collapses (probed: ...); ...`` or ``rising past its budget
    (probed: ...); ...``, :func:`itmlib.claims.judge.judge_claims`) apart from its arms' states: (head, the rest).
    The probes' text may hold parentheses and semicolons of its own, so the head ends where its bracket closes."""
    import re

    m = re.match(r"(collapses|rising past its budget) \(probed: ", text)
    if not m:
        return "", text
    depth, i = 1, m.end()
    while i < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    return m.group(1), text[i:].removeprefix("; ")
