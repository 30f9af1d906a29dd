import dataclasses

import numpy as np
import pytest

from itmlib.data import WorldConfig, load_dataset
from itmlib.data.stats import other_relevant_images
from itmlib.data.synthetic import generate, load_synthetic, scene_from_dict
from itmlib.data.synthetic.relevance import caption_tuples, image_tuples, relevance_block, tuple_matrix, TUPLES
from itmlib.data.synthetic.scenes import Scene, spatial_relations
from itmlib.data.synthetic.vocab import CATEGORY_INDEX, COLORS, RELATIONS


@pytest.fixture(scope="module")
def test_split(cache_tmp):
    return load_dataset("synthetic", "test", scale="smoke", seed=0, data_dir=cache_tmp, progress=False)


def test_same_seed_same_data_other_seed_other_data():
    a = generate("test", 30, seed=5)
    b = generate("test", 30, seed=5)
    c = generate("test", 30, seed=6)
    assert a["captions"] == b["captions"] and np.array_equal(a["regions"], b["regions"])
    assert np.array_equal(a["boxes"], b["boxes"]) and a["graphs"] == b["graphs"]
    assert a["captions"] != c["captions"] and not np.array_equal(a["regions"], c["regions"])


def test_prefix_stable_and_splits_differ():
    small, big = generate("test", 10, seed=1), generate("test", 25, seed=1)
    assert big["captions"][:50] == small["captions"] and np.array_equal(big["regions"][:10], small["regions"])
    assert generate("dev", 10, seed=1)["captions"] != small["captions"]


def test_shapes_padding_and_object_regions(test_split):
    ds = test_split
    cfg = WorldConfig()
    assert ds.regions.shape == (200, cfg.n_regions, cfg.feature_dim) and ds.n_captions == 1000
    for i in range(20):
        n = ds.region_counts[i]
        assert not ds.regions[i, n:].any() and np.abs(ds.regions[i, :n]).sum(axis=1).min() > 0
        scene = ds.image_extras["scenes"][i]
        assert 2 <= scene.n <= 6
        # each object's region carries the object's true box
        assert np.allclose(ds.boxes[i, ds.image_extras["object_region"][i]], scene.box, atol=1e-4)
    assert ((ds.boxes >= 0) & (ds.boxes <= 1)).all()


def test_gold_relevance_of_own_image_is_maximal(test_split):
    rel = test_split.relevance()
    own = rel[test_split.img_of_caption, np.arange(test_split.n_captions)]
    assert np.all(own == 1.0)
    assert np.all(rel.max(axis=0) == own) and rel.min() >= 0


def test_many_to_many_exists(test_split):
    other = other_relevant_images(test_split, 1.0)
    assert 0.1 < (other > 0).mean() < 0.9  # many captions describe other images too, not all


def _scene() -> Scene:
    # a brown dog left of a red car (both small), plus a second dog
    box = np.array([[0.0, 0.4, 0.2, 0.6], [0.6, 0.4, 0.8, 0.6], [0.0, 0.0, 0.1, 0.1]], np.float32)
    return Scene(cat=np.array([CATEGORY_INDEX["dog"], CATEGORY_INDEX["car"], CATEGORY_INDEX["dog"]]),
                 color=np.array([COLORS.index("brown"), COLORS.index("red"), COLORS.index("black")]),
                 size=np.array([0, 0, 0]), pattern=np.array([0, 0, 0]), box=box,
                 relations=spatial_relations(box))


def test_relevance_hand_computed():
    sc = _scene()
    assert (0, RELATIONS.index("left_of"), 1) in sc.relations
    graphs = [
        # "a brown dog to the left of a car": (dog), (dog, brown), (car), (dog, left_of, car) -> 4/4
        {"objects": ["dog", "car"], "attributes": [[0, "brown"]], "relations": [[0, "left_of", 1]]},
        # "a white animal to the right of a car": (animal), (animal, white), (car), (animal, right_of, car) -> 2/4
        {"objects": ["animal", "car"], "attributes": [[0, "white"]], "relations": [[0, "right_of", 1]]},
        # "two dogs": (dog), (dog, two) -> 2/2 ; "three dogs" -> 1/2
        {"objects": ["dog"], "attributes": [[0, "two"]], "relations": []},
        {"objects": ["dog"], "attributes": [[0, "three"]], "relations": []},
        # "a cat": 0/1
        {"objects": ["cat"], "attributes": [], "relations": []},
    ]
    img = tuple_matrix([image_tuples(sc)])
    cap = tuple_matrix([caption_tuples(g) for g in graphs])
    rel = relevance_block(img, cap, np.array([0]), np.arange(5))
    assert rel.tolist() == [[1.0, 0.5, 1.0, 0.5, 0.0]]
    assert TUPLES.index[("animal", "brown")] in image_tuples(sc)  # hypernyms expanded


def test_human_judgements_deterministic_and_in_range(test_split):
    h1 = test_split.human_relevance(np.arange(50), np.arange(300))
    h2 = test_split.human_relevance(np.arange(50), np.arange(300))
    assert np.array_equal(h1, h2) and h1.min() >= 1 and h1.max() <= 5
    # a block equals the matching slice of a bigger block (noise is per pair, not per call)
    big = test_split.human_relevance(np.arange(100), np.arange(600))
    assert np.array_equal(big[:50, :300], h1)
    rel = test_split.relevance(np.arange(50), np.arange(300))
    assert h1[rel == 1].mean() > 4.5 > 1.5 > h1[rel == 0].mean()


def test_cache_roundtrip_equals_fresh(tmp_path):
    fresh = load_synthetic("dev", 12, seed=3, cache=False, progress=False)
    first = load_synthetic("dev", 12, seed=3, cache_dir=tmp_path, progress=False)
    entries = list(tmp_path.iterdir())
    assert len(entries) == 1 and (entries[0] / "world.json").is_file()
    cached = load_synthetic("dev", 12, seed=3, cache_dir=tmp_path, progress=False)
    for ds in (first, cached):
        assert ds.captions == fresh.captions and np.array_equal(ds.regions, fresh.regions)
        assert np.array_equal(ds.relevance(), fresh.relevance())
    # another knob -> another cache entry, never a stale one
    other = load_synthetic("dev", 12, seed=3, config=WorldConfig(detector_noise=0.1), cache_dir=tmp_path,
                           progress=False)
    assert len(list(tmp_path.iterdir())) == 2 and not np.array_equal(other.regions, fresh.regions)
    assert other.captions == fresh.captions  # the detector knob does not change the scenes


def test_scene_dict_roundtrip(test_split):
    sc = test_split.image_extras["scenes"][3]
    back = scene_from_dict(sc.to_dict())
    assert np.array_equal(back.cat, sc.cat) and back.relations == sc.relations
    assert np.allclose(back.box, sc.box, atol=1e-4)


@pytest.mark.parametrize("kw,match", [({"detector_noise": -1}, "detector_noise"),
                                      ({"caption_detail": 1.5}, "caption_detail"),
                                      ({"min_objects": 4, "max_objects": 3}, "min_objects"),
                                      ({"distractor_regions": (5, 2)}, "distractor_regions")])
def test_bad_world_knobs(kw, match):
    with pytest.raises(ValueError, match=match):
        WorldConfig(**kw)


def test_load_dataset_bad_arguments():
    with pytest.raises(ValueError, match="dataset must be one of"):
        load_dataset("flickr", "test")
    with pytest.raises(ValueError, match="split must be one of"):
        load_dataset("synthetic", "testall")
    with pytest.raises(ValueError, match="scale"):
        load_dataset("synthetic", "test", scale="xxl")
    with pytest.raises(ValueError, match="only apply to dataset 'synthetic'"):
        load_dataset("coco", "test", detector_noise=0.1)


def test_render_draws_objects(test_split):
    img = np.asarray(test_split.render(0, 128))
    assert img.shape == (128, 128, 3)
    bg = img[0, 0]
    scene = test_split.image_extras["scenes"][0]
    for b in scene.box:  # every object changes pixels inside its box
        x1, y1, x2, y2 = (int(v * 127) for v in b)
        assert (img[y1:y2 + 1, x1:x2 + 1] != bg).any()


def test_world_config_is_hashable_dataclass():
    """A world's config keys caches: equal configs hash equal, a changed knob changes the hash, and it is frozen."""
    a, b = WorldConfig(), WorldConfig()
    assert dataclasses.asdict(a)["n_regions"] == 36
    assert hash(a) == hash(b) and {a: 1}[b] == 1
    assert hash(dataclasses.replace(a, n_regions=35)) != hash(a)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.n_regions = 1


def test_a_world_two_processes_write_side_by_side_is_kept_once(tmp_path):
    """Two test workers build one world at once: the second to finish finds the first's entry in place (its
    rename fails: the folder is not empty) and keeps it rather than failing."""
    from itmlib.data import synthetic

    load_synthetic("dev", 12, seed=3, cache_dir=tmp_path, progress=False)
    (entry,) = list(tmp_path.iterdir())
    raw = synthetic._load(entry)
    synthetic._save(raw, entry, {"split": "dev"})          # the late writer: no error, one entry, intact
    assert list(tmp_path.iterdir()) == [entry] and (entry / "world.json").is_file()
