"""The real-language world: verbatim COCO captions, scenes from their own parses, no text in the features."""
import numpy as np
import pytest

from itmlib.data import load_dataset
from itmlib.data.coco_scenes import CocoScenesConfig, NUMBERS, _features, build_vocab, parse_cached, scene_of

pytest.importorskip("sng_parser")


@pytest.fixture(scope="module")
def test_ds():
    return load_dataset("coco_scenes", "test", scale="smoke")


def test_captions_are_verbatim_coco_captions_of_their_images(test_ds):
    from itmlib.data.coco import coco_captions

    text, img_of = coco_captions()
    assert test_ds.n_images == 200 and test_ds.n_captions == 1000
    assert all(text[int(c)] == cap for c, cap in zip(test_ds.caption_ids, test_ds.captions))
    assert all(img_of[int(c)] == test_ds.image_ids[i] for c, i in zip(test_ds.caption_ids, test_ds.img_of_caption))
    assert "cxc" in test_ds.positives and test_ds.positives["cxc"].shape == (200, 1000)


def test_every_named_category_is_in_the_scene_with_a_region(test_ds):
    cats = test_ds.image_extras["categories"][0]
    index, other = {w: k for k, w in enumerate(cats[:-1])}, len(cats) - 1
    for i in range(test_ds.n_images):
        scene = test_ds.image_extras["objects"][i]
        named = {index.get(o, other) for g in test_ds.graphs[5 * i: 5 * i + 5] for o in g["objects"]}
        assert named <= set(scene)
        assert test_ds.region_counts[i] >= min(sum(n for n, _ in scene.values()), 36)


def test_counts_come_from_number_words_and_attributes_from_the_vocabulary():
    scene = scene_of([[("dog",), ("dog", "two"), ("dog", "brown")], [("dog",), ("dog", "three"), ("ball",)]],
                     {"dog": 0, "ball": 1}, {"brown": 0}, other=2)
    assert scene == {0: (3, frozenset({0})), 1: (1, frozenset())}
    assert "two" in NUMBERS and "two" not in build_vocab([[("dog", "two"), ("dog", "red")]], CocoScenesConfig())[1]


def test_features_do_not_change_when_every_word_is_renamed():
    """No text leaks into the image side: the features depend on category and attribute *indices* (by frequency,
    ties by first appearance), never on the words' spelling."""
    caps = [[("dog",), ("dog", "brown"), ("frisbee",)], [("dog",), ("man",), ("man", "tall")], [("cat",), ("cat", "brown")]]
    rename = {"dog": "zq", "brown": "aa", "frisbee": "mm", "man": "bb", "tall": "yy", "cat": "cc"}
    caps2 = [[tuple(rename[w] for w in t) for t in r] for r in caps]
    cfg = CocoScenesConfig(n_categories=3, n_attributes=2)

    def feats(tuples):
        cats, attrs = build_vocab(tuples, cfg)
        ci, ai = {w: k for k, w in enumerate(cats)}, {w: k for k, w in enumerate(attrs)}
        scenes = [scene_of([r], ci, ai, len(cats)) for r in tuples]
        return _features(scenes, np.ones((4, 4), np.int64), cfg, seed=0, split="train")

    for a, b in zip(feats(caps), feats(caps2)):
        np.testing.assert_array_equal(a, b)


def test_seeded_and_deterministic(test_ds):
    again = load_dataset("coco_scenes", "test", scale="smoke")
    np.testing.assert_array_equal(again.regions, test_ds.regions)
    other = load_dataset("coco_scenes", "test", scale="smoke", seed=1)
    assert other.captions == test_ds.captions and not np.array_equal(other.regions, test_ds.regions)  # noise, boxes
    with pytest.raises(ValueError, match="noise must be >= 0"):
        load_dataset("coco_scenes", "test", scale="smoke", noise=-1)


def test_a_truncated_parse_cache_is_parsed_again(tmp_path, caplog):
    caps = ["A dog chases a red ball.", "Two men ride horses on a beach."]
    first = parse_cached(caps, folder=tmp_path)
    (path,) = tmp_path.glob("parse-*.json")
    path.write_text(path.read_text()[:-7])
    assert parse_cached(caps, folder=tmp_path) == first and "unreadable" in caplog.text
    assert ("ball", "red") in first[0] and ("man", "two") in first[1]


def test_vse_learns_the_world_far_above_chance(tmp_path, test_ds):
    """Two epochs of notebook 03's VSE++ at smoke: image-text matching is learnable from the scenes (chance
    R@1 on 200 images is 0.5%; six epochs reach ~46 i2t), so the world is neither noise nor trivial."""
    import dataclasses

    import torch

    from itmlib.papers.ncs_sam import vse_config
    from itmlib.train import evaluate, train

    torch.manual_seed(0)
    tr, dv = (load_dataset("coco_scenes", s, scale="smoke") for s in ("train", "dev"))
    cfg = dataclasses.replace(vse_config("smoke", data=tr.source), epochs=2)
    r = train(cfg, tr, dv, ckpt_dir=str(tmp_path), name="vse", device="cpu", progress=False)
    m = evaluate(r.model, r.vocab, test_ds, None, device="cpu")
    assert m["i2t_r1"] > 10 and m["t2i_r1"] > 10 and m["i2t_r1"] < 95
