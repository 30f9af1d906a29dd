"""The data layer, all offline: one entry point, one dataset interface.

>>> ds = load_dataset("synthetic", "test", scale="smoke", seed=0)   # doctest: +SKIP
>>> ds.captions[:1], ds.img_of_caption[:5], ds.regions.shape        # doctest: +SKIP

``name``:

* ``"synthetic"`` - the itmlib world (rendered scenes, detector-like region
  features, five captions per image with gold scene graphs, graded relevance);
  splits ``train``, ``dev`` (``val``), ``test``; sizes from ``scale``.
* ``"synthetic_news"`` - the non-literal variant (notebook 07): one article-like text per
  image, about the image's latent topic rather than a description of it; ``kwargs`` are
  :class:`~itmlib.data.synthetic.news.NewsConfig` fields.
* ``"coco"`` - real MS-COCO captions (no images); splits ``test`` (Karpathy
  5k), ``test1k-0`` ... ``test1k-4``, ``train``; CxC and ECCV positives.
* ``"coco_scenes"`` - real COCO captions beside scenes built from their own scene graphs (idealised
  perception of what the captions mention); ``kwargs`` are
  :class:`~itmlib.data.coco_scenes.CocoScenesConfig` fields.
* ``"precomp"`` - SCAN/VSE precomputed features in ``data_dir``.
"""

from __future__ import annotations

import os
from typing import Any

from ..config import check_choice, get_scale
from .base import CAPTIONS_PER_IMAGE, ITMDataset
from .coco import coco_folds, load_coco
from .precomp import load_precomp
from .synthetic import WorldConfig, load_synthetic
from .synthetic.news import NewsConfig, load_synthetic_news

__all__ = ["load_dataset", "dataset_source", "ITMDataset", "WorldConfig", "CAPTIONS_PER_IMAGE", "coco_folds", "DATASETS", "NewsConfig",
           "surface_words"]

DATASETS = ("synthetic", "synthetic_news", "coco", "coco_scenes", "precomp")


def surface_words(ds: ITMDataset) -> dict[str, frozenset[str]] | None:
    """The surface forms of each lemma of a dataset's own grammar, where it has one (the synthetic world's
    generator: "puppies" is a dog); None for real captions, whose lemmas come from a parser."""
    if ds.name != "synthetic":
        return None
    from .synthetic.vocab import surface_words as forms

    return forms()


def load_dataset(name: str, split: str, *, data_dir: str | os.PathLike[str] | None = None,
                 scale: str = "smoke", seed: int = 0, world: WorldConfig | None = None,
                 cache: bool = True, progress: bool = True, **kwargs: Any) -> ITMDataset:
    """Load one split of a dataset as an :class:`ITMDataset`.

    ``data_dir``: for ``precomp`` the feature folder (required); for
    ``synthetic`` an alternative cache folder; unused for ``coco``.
    ``scale`` sets sizes (synthetic images per split; COCO training images).
    ``seed`` makes the synthetic world (and the COCO train sample) reproducible.
    ``world`` overrides the synthetic generator's knobs; extra ``kwargs`` are
    WorldConfig fields (e.g. ``detector_noise=0.5``).
    """
    check_choice("dataset", name, DATASETS)
    sc = get_scale(scale)
    if name == "synthetic":
        if kwargs:
            world = WorldConfig(**{**(world.__dict__ if world else {}), **kwargs})
        check_choice("split", split, ("train", "dev", "val", "test"))
        return load_synthetic(split, sc.n_images(split), seed, world, cache=cache, cache_dir=data_dir,
                              progress=progress)
    if name == "synthetic_news":
        check_choice("split", split, ("train", "dev", "val", "test"))
        return load_synthetic_news(split, sc.n_images(split), seed, NewsConfig(**kwargs))
    if name == "coco_scenes":
        from .coco_scenes import CocoScenesConfig, load_coco_scenes

        return load_coco_scenes(split, scale=scale, seed=seed, config=CocoScenesConfig(**kwargs))
    if kwargs or world is not None:
        raise ValueError(f"generator options {sorted(kwargs) or ['world']} only apply to dataset 'synthetic'")
    if name == "coco":
        return load_coco(split, scale=scale, seed=seed)
    return load_precomp(data_dir, split)  # type: ignore[arg-type]


def dataset_source(name: str, split: str = "train", *, scale: str = "smoke", seed: int = 0, **kwargs: Any) -> str:
    """What :func:`load_dataset` with these arguments would give as ``source`` (the description every member's
    config carries), without building the generated worlds (``synthetic``, ``synthetic_news``, ``coco_scenes``):
    a plan of members needs only that. The other datasets are loaded."""
    check_choice("dataset", name, DATASETS)
    if name == "synthetic":
        from .synthetic import synthetic_source

        WorldConfig(**kwargs)   # a knob that is not the generator's fails here, as in load_dataset
        return synthetic_source(seed)
    if name == "synthetic_news":
        from .synthetic.news import news_source

        return news_source(seed, NewsConfig(**kwargs))
    if name == "coco_scenes":
        from .coco_scenes import CocoScenesConfig, coco_scenes_source

        return coco_scenes_source(seed, CocoScenesConfig(**kwargs), scale)
    return load_dataset(name, split, scale=scale, seed=seed, **kwargs).source
