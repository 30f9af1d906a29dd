"""Statistics of a dataset's many-to-many structure (notebook 00) and of the real-language world's scenes
(notebook 09)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .base import ITMDataset

__all__ = ["other_relevant_images", "extra_positives", "positives_summary", "scene_statistics"]


def other_relevant_images(ds: ITMDataset, threshold: float = 1.0, chunk: int = 2048) -> np.ndarray:
    """Per caption: how many images *other than its own* it describes with gold relevance >= ``threshold``.

    Needs graded relevance (synthetic world). Computed in caption chunks, so
    memory stays at ``n_images x chunk`` floats.
    """
    if not (0.0 < threshold <= 1.0):
        raise ValueError(f"threshold must lie in (0, 1], got {threshold!r}")
    out = np.zeros(ds.n_captions, dtype=np.int64)
    for s in range(0, ds.n_captions, chunk):
        cols = np.arange(s, min(s + chunk, ds.n_captions))
        rel = ds.relevance(None, cols)
        hit = rel >= threshold - 1e-6
        hit[ds.img_of_caption[cols], np.arange(cols.size)] = False
        out[cols] = hit.sum(axis=0)
    return out


def extra_positives(ds: ITMDataset, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Human-verified positives beyond ground truth: (per caption #images, per image #captions)."""
    if name not in ds.positives:
        raise ValueError(f"{ds.name}/{ds.split} has no {name!r} positives; it has {sorted(ds.positives)}")
    pos = ds.positives[name].tocsr().astype(np.int8)
    extra = (pos - pos.multiply(ds.gt.astype(np.int8))).tocsr()
    extra.eliminate_zeros()
    return np.asarray(extra.sum(axis=0)).ravel(), np.asarray(extra.sum(axis=1)).ravel()


def positives_summary(ds: ITMDataset) -> pd.DataFrame:
    """One row per positive set (GT, CxC, ECCV): pairs, non-GT pairs, per-caption extra positives."""
    rows = [{"positives": "ground truth (5 per image)", "pairs": int(ds.gt.nnz), "non_gt_pairs": 0,
             "images_with_extra": 0, "captions_with_extra": 0, "mean_extra_images_per_caption": 0.0}]
    for name in sorted(ds.positives):
        per_cap, per_img = extra_positives(ds, name)
        rows.append({"positives": name, "pairs": int(ds.positives[name].nnz), "non_gt_pairs": int(per_cap.sum()),
                     "images_with_extra": int((per_img > 0).sum()), "captions_with_extra": int((per_cap > 0).sum()),
                     "mean_extra_images_per_caption": float(per_cap.mean())})
    return pd.DataFrame(rows)


def scene_statistics(ds: ITMDataset) -> dict[str, float]:
    """What one split of the world holds, for a reader: its size, the objects, relations and regions of an
    image (means), the share of objects outside the named categories, how many of a caption's objects are
    grounded in one region (its ``grounding``; :mod:`itmlib.metrics.grounding` keeps those whose word occurs once), and
    (test split) how many human-verified positives a caption has beyond its
    own image (CxC, ECCV Caption) and how many of their image and caption queries keep a positive among the
    split's images and queries (what mAP@R and R-Precision are averaged over)."""
    objs = ds.image_extras["objects"]
    other = len(ds.image_extras["categories"][0]) - 1
    inst = np.array([sum(n for n, _ in s.values()) for s in objs], np.float64)
    n_other = sum(s[other][0] for s in objs if other in s)
    out = {"images": ds.n_images, "captions": ds.n_captions, "named categories": other,
           "objects per image": float(np.mean([len(s) for s in objs])),
           "instances per image": float(inst.mean()),
           "share of instances outside the named categories (%)": 100 * n_other / max(inst.sum(), 1),
           "relations placing a box per image": float(np.mean([len(r) for r in ds.image_extras["relations"]])),
           "distractor regions per image": float(np.mean(ds.region_counts - np.minimum(inst, ds.regions.shape[1]))),
           "grounded object words per caption": sum(len(g["grounding"]) for g in ds.graphs) / ds.n_captions}
    for name, pos in (ds.positives or {}).items():
        coo = pos.tocoo()
        beyond = coo.row != ds.img_of_caption[coo.col]
        out[f"{name} positive images per caption beyond its own"] = float(beyond.sum()) / ds.n_captions
        if name.endswith("_t2i"):   # the queries mAP@R and R-Precision run on: those that keep a positive here
            out[f"{name[:-4]} caption queries with a positive"] = int((pos.getnnz(0) > 0).sum())
        else:
            out[f"{name} image queries with a positive"] = int((pos.getnnz(1) > 0).sum())
    return out
