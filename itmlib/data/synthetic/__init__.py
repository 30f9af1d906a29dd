"""The synthetic world: the image side of every training notebook.

``generate(split, n_images, seed, config)`` draws scenes, renders them on
demand, imitates a detector's region features, writes five captions per image
from a stochastic grammar (each with its gold scene graph) and gives graded
relevance for any (image, caption) pair. Image ``i`` of a split is drawn from
its own random stream ``(seed, split, i)``, so the smoke-scale test split is
the first 200 images of the full-scale one, and everything is deterministic
per seed. Results are cached under ``data/cache/`` keyed by a hash of every
generator parameter; a cache entry is written atomically and never stale.

See :class:`~itmlib.data.synthetic.scenes.WorldConfig` for the difficulty knobs.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from ...console import bar

from ...paths import cache_dir as default_cache_dir
from ..base import CAPTIONS_PER_IMAGE, ITMDataset
from .captions import generate_captions
from .features import ConceptTable, assemble_features, region_spec
from .relevance import caption_tuples, human_block, image_tuples, relevance_block, tuple_matrix
from .render import render_scene
from .scenes import Scene, WorldConfig, sample_scene
from .vocab import CATEGORY_INDEX, COLORS, PATTERNS, RELATIONS, SIZES

__all__ = ["WorldConfig", "Scene", "generate", "load_synthetic", "scene_from_dict", "GENERATOR_VERSION"]

GENERATOR_VERSION = 1
# What a cached world stores beside the world itself. Bumping it regenerates caches
# without changing a single image or caption (GENERATOR_VERSION seeds the world).
# 2: caption graphs carry "grounding" = [node, scene object, noun word] per single object.
ANNOTATION_SCHEMA = 2
SPLIT_CODES = {"train": 1, "dev": 2, "val": 2, "test": 3}
_REL = {r: i for i, r in enumerate(RELATIONS)}


def scene_from_dict(d: dict[str, Any]) -> Scene:
    """Inverse of :meth:`Scene.to_dict` (boxes are rounded to 4 decimals there)."""
    objs = d["objects"]
    return Scene(
        cat=np.array([CATEGORY_INDEX[o["category"]] for o in objs]),
        color=np.array([COLORS.index(o["color"]) for o in objs]),
        size=np.array([SIZES.index(o["size"]) for o in objs]),
        pattern=np.array([PATTERNS.index(o["pattern"]) for o in objs]),
        box=np.array([o["box"] for o in objs], dtype=np.float32).reshape(-1, 4),
        relations=[(int(s), _REL[r], int(o)) for s, r, o in d["relations"]],
        background=int(d.get("background", 0)),
    )


def _key(split: str, n_images: int, seed: int, cfg: WorldConfig) -> str:
    payload = json.dumps({"v": GENERATOR_VERSION, "schema": ANNOTATION_SCHEMA, "split": SPLIT_CODES[split], "n": n_images, "seed": seed,
                          "cfg": dataclasses.asdict(cfg)}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:20]


def check_split(world: str, split: str, n: int, what: str = "n_images") -> None:
    """A generator's split name and size, or a ``ValueError`` naming the bad one."""
    if split not in SPLIT_CODES:
        raise ValueError(f"{world} split must be one of {sorted(SPLIT_CODES)}, got {split!r}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"{what} must be a positive integer, got {n!r}")


def generate(split: str, n_images: int, seed: int = 0, config: WorldConfig | None = None,
             progress: bool = False) -> dict[str, Any]:
    """Generate ``n_images`` images of ``split``: raw arrays and lists (no cache)."""
    check_split("synthetic", split, n_images)
    cfg = config or WorldConfig()
    concepts = ConceptTable.build(cfg)
    scenes, specs, captions, graphs = [], [], [], []
    code = SPLIT_CODES[split]
    for i in bar(range(n_images), desc=f"synthetic {split}", enabled=progress):
        rng = np.random.default_rng([int(seed), code, i, GENERATOR_VERSION])
        scene = sample_scene(rng, cfg)
        texts, gs = generate_captions(rng, scene, cfg, CAPTIONS_PER_IMAGE)
        specs.append(region_spec(rng, scene, cfg))
        scenes.append(scene)
        captions += texts
        graphs += gs
    regions, boxes, counts = assemble_features(specs, concepts, cfg)
    return {
        "regions": regions, "boxes": boxes, "counts": counts, "captions": captions, "graphs": graphs,
        "scenes": scenes, "object_region": [s.object_region for s in specs],
        "img_tuples": [image_tuples(s) for s in scenes], "cap_tuples": [caption_tuples(g) for g in graphs],
    }


def _save(raw: dict[str, Any], path: Path, meta: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    try:
        np.save(tmp / "regions.npy", raw["regions"])
        np.savez(tmp / "arrays.npz", boxes=raw["boxes"], counts=raw["counts"],
                 object_region=np.concatenate(raw["object_region"]),
                 n_objects=np.array([len(x) for x in raw["object_region"]]))
        doc = {"meta": meta, "captions": raw["captions"], "graphs": raw["graphs"],
               "scenes": [dict(s.to_dict(), background=s.background) for s in raw["scenes"]]}
        with open(tmp / "world.json", "w", encoding="utf-8") as fh:
            json.dump(doc, fh, separators=(",", ":"))
        try:
            os.replace(tmp, path)
        except OSError:
            if not (path / "world.json").is_file():
                raise
            shutil.rmtree(tmp, ignore_errors=True)   # another process wrote the same world first: keep its copy
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _load(path: Path) -> dict[str, Any]:
    with open(path / "world.json", encoding="utf-8") as fh:
        doc = json.load(fh)
    arr = np.load(path / "arrays.npz")
    splits = np.cumsum(arr["n_objects"])[:-1]
    scenes = [scene_from_dict(d) for d in doc["scenes"]]
    return {
        "regions": np.load(path / "regions.npy"), "boxes": arr["boxes"], "counts": arr["counts"],
        "captions": doc["captions"], "graphs": doc["graphs"], "scenes": scenes,
        "object_region": np.split(arr["object_region"], splits),
        "img_tuples": [image_tuples(s) for s in scenes], "cap_tuples": [caption_tuples(g) for g in doc["graphs"]],
    }


def synthetic_source(seed: int = 0) -> str:
    """The world's description (``ITMDataset.source``) without generating it: the generator's version and seed."""
    return f"synthetic world v{GENERATOR_VERSION} (itmlib generator, seed {seed}); rendered shapes, no real images"


def load_synthetic(split: str, n_images: int, seed: int = 0, config: WorldConfig | None = None, *,
                   cache: bool = True, cache_dir: str | os.PathLike[str] | None = None,
                   progress: bool = True) -> ITMDataset:
    """The synthetic split as an :class:`ITMDataset`, from the cache when present."""
    cfg = config or WorldConfig()
    if split == "val":
        split = "dev"
    raw = None
    key = None
    if cache:
        key = _key(split, n_images, seed, cfg)
        path = Path(cache_dir) if cache_dir else default_cache_dir()
        path = path / f"synthetic-{split}-{n_images}-s{seed}-{key}"
        if (path / "world.json").is_file():
            raw = _load(path)
    if raw is None:
        raw = generate(split, n_images, seed, cfg, progress=progress)
        if cache:
            _save(raw, path, {"split": split, "n_images": n_images, "seed": seed, "version": GENERATOR_VERSION,
                              "config": dataclasses.asdict(cfg), "key": key})
    img_mat = tuple_matrix(raw["img_tuples"])
    cap_mat = tuple_matrix(raw["cap_tuples"])
    human_seed = int(seed) * 16 + SPLIT_CODES[split]
    scenes = raw["scenes"]

    def rel(images: np.ndarray, captions: np.ndarray) -> np.ndarray:
        return relevance_block(img_mat, cap_mat, images, captions)

    def human(images: np.ndarray, captions: np.ndarray) -> np.ndarray:
        return human_block(rel(images, captions), human_seed, images, captions, cfg.human_noise)

    def render(i: int, size: int) -> Any:
        return render_scene(scenes[i], size)

    return ITMDataset(
        name="synthetic", split=split, captions=raw["captions"],
        img_of_caption=np.repeat(np.arange(n_images), CAPTIONS_PER_IMAGE),
        regions=raw["regions"], boxes=raw["boxes"], region_counts=raw["counts"],
        image_ids=np.arange(n_images), caption_ids=np.arange(n_images * CAPTIONS_PER_IMAGE),
        graphs=raw["graphs"],
        image_extras={"scenes": scenes, "object_region": raw["object_region"]},
        source=synthetic_source(seed),
        _relevance=rel, _human=human, _render=render,
    )
