"""The one dataset interface shared by the synthetic world, real COCO text and
SCAN/VSE precomputed features.

An :class:`ITMDataset` holds ``n_images`` images and the same number of captions
per image, in image order: five for captioning data (captions ``5i .. 5i+4``
belong to image ``i``, the VSE/SCAN convention), one for image-article pairs
(``synthetic_news``, notebook 07), as ``captions_per_image`` says. Validation happens once, at construction, and every
problem raises ``ValueError`` naming it; nothing is half-built.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import scipy.sparse as sp

from ..config import check_fraction

__all__ = ["ITMDataset", "CAPTIONS_PER_IMAGE", "validate_features"]

CAPTIONS_PER_IMAGE = 5

RelevanceFn = Callable[[np.ndarray, np.ndarray], np.ndarray]


def validate_features(regions: np.ndarray, where: str) -> np.ndarray:
    """Check a region-feature array: 3-D (images, regions, dim) float, all finite."""
    regions = np.asarray(regions)
    if regions.ndim == 2:  # (N, D) global features -> one region each
        regions = regions[:, None, :]
    if regions.ndim != 3:
        raise ValueError(f"{where}: region features must have shape (images, regions, dim) or (images, dim), "
                         f"got shape {regions.shape}")
    if not np.issubdtype(regions.dtype, np.floating):
        raise ValueError(f"{where}: region features must be floating point, got dtype {regions.dtype}")
    if regions.size:
        finite = np.isfinite(regions).all(axis=(1, 2))
        if not finite.all():
            bad = np.flatnonzero(~finite)
            raise ValueError(f"{where}: {bad.size} image(s) have NaN/inf features, first at image index {bad[0]}")
    return regions


@dataclass
class ITMDataset:
    """Images (as region features) and their captions, one interface for every source.

    Attributes
    ----------
    name, split : which dataset and split this is.
    captions : list of str, ``captions_per_image * n_images`` of them, image-major.
    img_of_caption : (n_captions,) int64, the image index of every caption.
    regions : (n_images, n_regions, dim) float32 region features; COCO text has
        no images, so its array has shape (n_images, 0, 0).
    boxes : optional (n_images, n_regions, 4) float32, ``x1, y1, x2, y2`` in [0, 1].
    region_counts : optional (n_images,) int, valid regions per image (rest is padding).
    image_ids, caption_ids : ids in the source dataset (COCO ids for COCO).
    positives : named sparse (n_images x n_captions) 0/1 matrices of extra
        human-verified positives (``"cxc"``, ``"eccv"``), besides ground truth.
    graphs : optional per-caption scene graphs (dict of objects/attributes/relations).
    image_extras : optional per-image lists/arrays (synthetic world: ``scenes``,
        ``object_region``), sliced along with the images by :meth:`take`.
    source : one line saying where the data came from (used in table headers).
    captions_per_image : texts per image (5 for captions; 1 for image-article pairs).
    """

    name: str
    split: str
    captions: list[str]
    img_of_caption: np.ndarray
    regions: np.ndarray
    boxes: np.ndarray | None = None
    region_counts: np.ndarray | None = None
    image_ids: np.ndarray | None = None
    caption_ids: np.ndarray | None = None
    positives: dict[str, sp.csr_matrix] = field(default_factory=dict)
    graphs: list[dict[str, Any]] | None = None
    image_extras: dict[str, Any] = field(default_factory=dict)
    source: str = ""
    captions_per_image: int = CAPTIONS_PER_IMAGE
    _relevance: RelevanceFn | None = field(default=None, repr=False)
    _human: RelevanceFn | None = field(default=None, repr=False)
    _render: Callable[[int, int], Any] | None = field(default=None, repr=False)
    _image_index: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        where = f"{self.name}/{self.split}"
        self.regions = validate_features(self.regions, where)
        n_img = self.regions.shape[0]
        k = self.captions_per_image
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"{where}: captions_per_image must be a positive integer, got {k!r}")
        if not isinstance(self.captions, list):
            self.captions = list(self.captions)
        for i, c in enumerate(self.captions):
            if not isinstance(c, str) or not c.strip():
                raise ValueError(f"{where}: caption {i} (image {i // k}) is empty")
        if len(self.captions) != k * n_img:
            raise ValueError(f"{where}: expected {k} captions per image, got "
                             f"{len(self.captions)} captions for {n_img} images")
        ioc = np.asarray(self.img_of_caption)
        if ioc.shape != (len(self.captions),):
            raise ValueError(f"{where}: img_of_caption has shape {ioc.shape}, expected ({len(self.captions)},)")
        if not np.array_equal(ioc, np.repeat(np.arange(n_img), k)):
            raise ValueError(f"{where}: captions must be image-major, {k} consecutive per image")
        self.img_of_caption = ioc.astype(np.int64)
        if self.boxes is not None:
            self.boxes = np.asarray(self.boxes, dtype=np.float32)
            if self.boxes.shape != self.regions.shape[:2] + (4,):
                raise ValueError(f"{where}: boxes have shape {self.boxes.shape} but features have "
                                 f"shape {self.regions.shape}; expected boxes {self.regions.shape[:2] + (4,)}")
            if not np.isfinite(self.boxes).all():
                raise ValueError(f"{where}: boxes contain NaN/inf")
        if self.region_counts is not None:
            rc = np.asarray(self.region_counts, dtype=np.int64)
            if rc.shape != (n_img,) or (rc < 0).any() or (rc > self.regions.shape[1]).any():
                raise ValueError(f"{where}: region_counts must be ({n_img},) ints in [0, {self.regions.shape[1]}]")
            self.region_counts = rc
        for key, ids, n in (("image_ids", self.image_ids, n_img), ("caption_ids", self.caption_ids, len(self.captions))):
            if ids is not None:
                ids = np.asarray(ids)
                if ids.shape != (n,):
                    raise ValueError(f"{where}: {key} has shape {ids.shape}, expected ({n},)")
                setattr(self, key, ids)
        for key, mat in self.positives.items():
            if mat.shape != (n_img, len(self.captions)):
                raise ValueError(f"{where}: positives[{key!r}] has shape {mat.shape}, "
                                 f"expected {(n_img, len(self.captions))}")
        for key, val in self.image_extras.items():
            if len(val) != n_img:
                raise ValueError(f"{where}: image_extras[{key!r}] has {len(val)} entries for {n_img} images")
        if self.graphs is not None and len(self.graphs) != len(self.captions):
            raise ValueError(f"{where}: {len(self.graphs)} scene graphs for {len(self.captions)} captions")
        if self._image_index is None:
            self._image_index = np.arange(n_img)

    # ----- sizes -------------------------------------------------------------
    @property
    def n_images(self) -> int:
        return int(self.regions.shape[0])

    @property
    def n_captions(self) -> int:
        return len(self.captions)

    def __len__(self) -> int:
        return self.n_captions

    def captions_of(self, image: int) -> list[str]:
        """The captions of image ``image`` (five for captioning data)."""
        k = self.captions_per_image
        return self.captions[k * image: k * (image + 1)]

    @property
    def gt(self) -> sp.csr_matrix:
        """Ground-truth pairs as a sparse (n_images x n_captions) 0/1 matrix."""
        n = self.n_captions
        return sp.csr_matrix((np.ones(n, dtype=np.float32), (self.img_of_caption, np.arange(n))),
                             shape=(self.n_images, n))

    # ----- optional capabilities ----------------------------------------------
    @property
    def has_relevance(self) -> bool:
        return self._relevance is not None

    @property
    def has_pixels(self) -> bool:
        return self._render is not None

    def _indices(self, idx: Any, n: int) -> np.ndarray:
        if idx is None:
            return np.arange(n)
        idx = np.atleast_1d(np.asarray(idx, dtype=np.int64))
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise ValueError(f"index out of range [0, {n}): min {idx.min()}, max {idx.max()}")
        return idx

    def relevance(self, images: Any = None, captions: Any = None) -> np.ndarray:
        """Graded relevance in [0, 1] of every (image, caption) pair asked for.

        Returns a dense float32 array (len(images), len(captions)); ``None``
        means all. Only datasets with gold scene graphs (the synthetic world)
        have it; real COCO text has :attr:`positives` instead.
        """
        if self._relevance is None:
            raise ValueError(f"{self.name}/{self.split} has no graded relevance (no gold scene graphs)")
        i = self._indices(images, self.n_images)
        c = self._indices(captions, self.n_captions)
        return self._relevance(self._image_index[i], self._caption_global(c))

    def human_relevance(self, images: Any = None, captions: Any = None) -> np.ndarray:
        """Stand-in human judgements on a 1-5 scale (like CxC), deterministic per pair."""
        if self._human is None:
            raise ValueError(f"{self.name}/{self.split} has no simulated human judgements")
        i = self._indices(images, self.n_images)
        c = self._indices(captions, self.n_captions)
        return self._human(self._image_index[i], self._caption_global(c))

    def _caption_global(self, c: np.ndarray) -> np.ndarray:
        k = self.captions_per_image
        img = self._image_index[c // k]
        return img * k + c % k

    def render(self, image: int, size: int = 256) -> Any:
        """The rendered RGB image (a ``PIL.Image``) of image ``image``; synthetic world only."""
        if self._render is None:
            raise ValueError(f"{self.name}/{self.split} has no pixels")
        i = int(self._indices(image, self.n_images)[0])
        return self._render(int(self._image_index[i]), size)

    # ----- reduced data -------------------------------------------------------
    def subset(self, fraction: float, seed: int = 0) -> "ITMDataset":
        """A seeded, image-level random subset holding ``fraction`` of the images.

        At least one image is kept; images keep their original order, each with
        all its captions. The same (fraction, seed) always picks the same images.
        """
        split, k = self.subset_size(fraction, seed)
        rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0x5B5E7]))
        keep = np.sort(rng.choice(self.n_images, size=k, replace=False))
        return self.take(keep, split=split)

    def subset_size(self, fraction: float, seed: int = 0) -> tuple[str, int]:
        """(split name, images) of :meth:`subset` ``(fraction, seed)``, without building it (no features copied)."""
        fraction = check_fraction("fraction", fraction)
        return f"{self.split}[{fraction:g}@seed{seed}]", max(1, int(round(fraction * self.n_images)))

    def take(self, images: Any, split: str | None = None) -> "ITMDataset":
        """The dataset restricted to the given image indices (in that order)."""
        keep = self._indices(images, self.n_images)
        k = self.captions_per_image
        cap = (keep[:, None] * k + np.arange(k)).ravel()
        return ITMDataset(
            name=self.name,
            split=split or self.split,
            captions=[self.captions[j] for j in cap],
            img_of_caption=np.repeat(np.arange(keep.size), k),
            regions=self.regions[keep],
            boxes=None if self.boxes is None else self.boxes[keep],
            region_counts=None if self.region_counts is None else self.region_counts[keep],
            image_ids=None if self.image_ids is None else self.image_ids[keep],
            caption_ids=None if self.caption_ids is None else self.caption_ids[cap],
            positives={k: m[keep][:, cap].tocsr() for k, m in self.positives.items()},
            graphs=None if self.graphs is None else [self.graphs[j] for j in cap],
            image_extras={k: (v[keep] if isinstance(v, np.ndarray) else [v[j] for j in keep])
                          for k, v in self.image_extras.items()},
            source=self.source,
            captions_per_image=k,
            _relevance=self._relevance,
            _human=self._human,
            _render=self._render,
            _image_index=self._image_index[keep],
        )
