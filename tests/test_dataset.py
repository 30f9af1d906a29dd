import numpy as np
import pytest

from itmlib.data import ITMDataset, dataset_source, load_dataset


def _ds(n=4, **kw):
    args = dict(name="toy", split="test", captions=[f"caption {k}" for k in range(5 * n)],
                img_of_caption=np.repeat(np.arange(n), 5), regions=np.ones((n, 3, 2), np.float32))
    args.update(kw)
    return ITMDataset(**args)


def test_caption_count_error_gives_both_counts():
    with pytest.raises(ValueError, match="19 captions for 4 images"):
        _ds(captions=[f"c{k}" for k in range(19)], img_of_caption=np.zeros(19, int))


def test_empty_caption():
    caps = [f"c{k}" for k in range(20)]
    caps[11] = "  "
    with pytest.raises(ValueError, match="caption 11 \\(image 2\\) is empty"):
        _ds(captions=caps)


def test_nan_and_inf_features():
    r = np.ones((4, 3, 2), np.float32)
    r[1, 0, 0] = np.inf
    with pytest.raises(ValueError, match="NaN/inf features, first at image index 1"):
        _ds(regions=r)


def test_box_shape_mismatch():
    with pytest.raises(ValueError, match="boxes have shape"):
        _ds(boxes=np.zeros((4, 2, 4)))


def test_captions_must_be_image_major():
    with pytest.raises(ValueError, match="image-major"):
        _ds(img_of_caption=np.tile(np.arange(4), 5))


def test_subset_is_seeded_image_level_and_keeps_five_captions(cache_tmp):
    ds = load_dataset("synthetic", "train", scale="smoke", seed=0, data_dir=cache_tmp, progress=False)
    a, b, c = ds.subset(0.1, seed=1), ds.subset(0.1, seed=1), ds.subset(0.1, seed=2)
    assert a.n_images == round(0.1 * ds.n_images) and a.n_captions == 5 * a.n_images
    assert np.array_equal(a.image_ids, b.image_ids) and not np.array_equal(a.image_ids, c.image_ids)
    keep = a.image_ids
    assert a.captions[5:10] == ds.captions_of(int(keep[1]))
    assert np.array_equal(a.regions, ds.regions[keep])
    # relevance of the subset equals the parent's block on the same pairs
    caps = (keep[:, None] * 5 + np.arange(5)).ravel()
    assert np.array_equal(a.relevance(), ds.relevance(keep, caps))
    assert ds.subset(1.0).n_images == ds.n_images
    for f, s in ((0.1, 1), (1e-6, 3), (0.5, 0)):   # the name and size a grid keys its records by, without the copy
        sub = ds.subset(f, seed=s)
        assert ds.subset_size(f, s) == (sub.split, sub.n_images)
    assert ds.subset_size(1e-6, 3)[1] == 1                  # at least one image
    for bad in (0, -0.5, 1.01):
        with pytest.raises(ValueError, match="fraction"):
            ds.subset(bad)
        with pytest.raises(ValueError, match="fraction"):
            ds.subset_size(bad)


def test_gt_matrix():
    ds = _ds(n=3)
    gt = ds.gt.toarray()
    assert gt.shape == (3, 15) and gt.sum() == 15 and gt[1, 5:10].all() and not gt[1, :5].any()


def test_relevance_missing_is_a_clear_error():
    with pytest.raises(ValueError, match="no graded relevance"):
        _ds().relevance()
    with pytest.raises(ValueError, match="no pixels"):
        _ds().render(0)


@pytest.mark.parametrize("name, knobs", [("synthetic", {}), ("synthetic", {"seed": 3}),
                                         ("synthetic_news", {}), ("synthetic_news", {"n_topics": 12, "seed": 2})])
def test_a_worlds_description_without_building_it_is_the_built_worlds(name, knobs):
    kw = dict(knobs)
    seed = kw.pop("seed", 0)
    built = load_dataset(name, "train", scale="smoke", seed=seed, **kw).source
    assert dataset_source(name, "train", scale="smoke", seed=seed, **kw) == built
    assert dataset_source(name, seed=seed + 1, **kw) != built          # the seed is in it


def test_a_description_with_a_knob_the_world_lacks_fails_as_loading_would():
    with pytest.raises(TypeError, match="no_such_knob"):
        dataset_source("synthetic", no_such_knob=1)
    with pytest.raises(ValueError, match="dataset"):
        dataset_source("flickr")
