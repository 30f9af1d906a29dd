"""The real-language world: verbatim COCO captions, scenes from other annotators' captions, one category per object,
no text in the features."""
import numpy as np
import pandas as pd
import pytest

from itmlib.data import dataset_source, load_dataset
from itmlib.data.coco_scenes import CocoScenesConfig, NUMBERS, _features, build_vocab, scene_of, scene_slots
from itmlib.relevance import scene_graph
from itmlib.relevance.scene_graph import parse_cached

pytest.importorskip("sng_parser")


@pytest.fixture(scope="module")
def test_ds():
    return load_dataset("coco_scenes", "test", scale="smoke")


def test_captions_are_verbatim_coco_captions_of_their_images(test_ds):
    from itmlib.data.coco import coco_captions

    text, img_of = coco_captions()
    assert test_ds.n_images == 200 and test_ds.n_captions == 600 and test_ds.captions_per_image == 3
    assert all(text[int(c)] == cap for c, cap in zip(test_ds.caption_ids, test_ds.captions))
    assert all(img_of[int(c)] == test_ds.image_ids[i] for c, i in zip(test_ds.caption_ids, test_ds.img_of_caption))
    assert "cxc" in test_ds.positives and test_ds.positives["cxc"].shape == (200, 600)


@pytest.mark.parametrize("split", ["train", "dev", "test"])
def test_no_caption_that_queries_an_image_builds_its_scene(split):
    """In every split, an image's two scene captions are its own COCO captions, never one of its three queries;
    together they are its five lowest caption ids, and which two build the scene depends on the image alone."""
    from itmlib.data.coco import coco_captions

    ds = load_dataset("coco_scenes", split, scale="smoke")
    _, img_of = coco_captions()
    scene = np.array(ds.image_extras["scene_caption_ids"])
    assert scene.shape == (ds.n_images, 2)
    for i in range(ds.n_images):
        queries = set(ds.caption_ids[ds.img_of_caption == i].tolist())
        assert len(queries) == 3 and not queries & set(scene[i].tolist())
        assert {img_of[int(c)] for c in scene[i]} == {ds.image_ids[i]}
    assert scene_slots(int(ds.image_ids[0]), 2014) == scene_slots(int(ds.image_ids[0]), 2014)
    assert len({scene_slots(int(i), 2014) for i in ds.image_ids[:50]}) > 3     # drawn per image, not fixed slots


def test_synonyms_share_one_category_and_place_words_name_no_object():
    vocab = build_vocab([[("man",), ("street",)], [("street",), ("background",)]], 82, 60)
    c = vocab.lemma_index
    assert c["guy"] == c["man"] == c["person"] == 0 and c["bike"] == c["bicycle"]
    assert vocab.categories[:2] == ("person", "bicycle") and vocab.categories[80] == "street"
    assert "background" not in c and vocab.category("background") == vocab.other
    assert vocab.category("bear", ["teddy"]) == vocab.categories.index("teddy bear") != vocab.category("bear")
    scene = scene_of([[("guy",), ("bike",)], [("man",), ("bicycle",), ("bear",), ("bear", "teddy")]], vocab, {"teddy": 0})
    assert scene == {0: (1, frozenset()), 1: (1, frozenset()), vocab.categories.index("teddy bear"): (1, frozenset())}


def test_every_category_a_scene_caption_names_is_in_the_scene_with_a_region(test_ds):
    from itmlib.data.coco_scenes import load_coco_scenes  # noqa: F401  (the module under test)

    for i in range(test_ds.n_images):
        scene = test_ds.image_extras["objects"][i]
        assert scene and test_ds.region_counts[i] >= min(sum(n for n, _ in scene.values()), 36)
        for node, k, w in (x for g in test_ds.graphs[3 * i: 3 * i + 3] for x in g["grounding"]):
            assert list(scene)[k] >= 0 and w                            # a grounded word names an object of the scene


def test_counts_come_from_number_words_and_attributes_from_the_vocabulary():
    vocab = build_vocab([[("dog",), ("ball",)]], 81, 60)
    dog, ball = vocab.lemma_index["dog"], vocab.lemma_index["ball"]
    scene = scene_of([[("dog",), ("dog", "two"), ("dog", "brown")], [("dog",), ("dog", "three"), ("ball",)]],
                     vocab, {"brown": 0})
    assert scene == {dog: (3, frozenset({0})), ball: (1, frozenset())}
    assert "two" in NUMBERS and "two" not in build_vocab([[("dog", "two"), ("dog", "red")]], 150, 60).attributes


def test_features_do_not_change_when_every_word_is_renamed():
    """No text leaks into the image side: the features depend on category and attribute *indices* (by frequency,
    ties by first appearance), never on the words' spelling (here words outside CHAIR's list, kept as heads)."""
    caps = [[("zorp",), ("zorp", "brown"), ("flim",)], [("zorp",), ("quax",), ("quax", "tall")], [("cyl",), ("cyl", "brown")]]
    rename = {"zorp": "zq", "brown": "aa", "flim": "mm", "quax": "bb", "tall": "yy", "cyl": "cc"}
    caps2 = [[tuple(rename[w] for w in t) for t in r] for r in caps]
    cfg = CocoScenesConfig(n_categories=83, n_attributes=2)

    def feats(tuples):
        vocab = build_vocab(tuples, cfg.n_categories, cfg.n_attributes)
        scenes = [scene_of([r], vocab, {w: k for k, w in enumerate(vocab.attributes)}) for r in tuples]
        n = vocab.other + 1
        return _features(scenes, np.ones((n, n), np.int64), cfg, seed=0, split="train")

    (*arrays, attrs), (*arrays2, attrs2) = feats(caps), feats(caps2)
    for a, b in zip(arrays, arrays2):
        np.testing.assert_array_equal(a, b)
    assert attrs == attrs2


def test_seeded_and_deterministic(test_ds):
    again = load_dataset("coco_scenes", "test", scale="smoke")
    np.testing.assert_array_equal(again.regions, test_ds.regions)
    other = load_dataset("coco_scenes", "test", scale="smoke", seed=1)
    assert other.captions == test_ds.captions and not np.array_equal(other.regions, test_ds.regions)  # noise, boxes
    with pytest.raises(ValueError, match="noise must be >= 0"):
        load_dataset("coco_scenes", "test", scale="smoke", noise=-1)
    # a plan reads the world's description without building it: the same string, knob and seed included
    assert dataset_source("coco_scenes", scale="smoke") == test_ds.source
    assert dataset_source("coco_scenes", seed=1) == other.source != test_ds.source
    assert ", noise=1.5" in dataset_source("coco_scenes", noise=1.5) and ", noise" not in dataset_source("coco_scenes", noise=0.25)


def test_a_truncated_parse_cache_is_parsed_again(tmp_path, caplog):
    caps = ["A dog chases a red ball.", "Two men ride horses on a beach."]
    first = parse_cached(caps, folder=tmp_path)
    (path,) = (p for p in tmp_path.glob("parse-*.json") if not p.name.endswith(".texts.json"))
    path.write_text(path.read_text()[:-7])
    assert parse_cached(caps, folder=tmp_path) == first and "unreadable" in caplog.text
    assert ("ball", "red") in first[0] and ("man", "two") in first[1]


def test_a_subset_reuses_the_parses_of_a_cached_list_without_the_parser(tmp_path, monkeypatch):
    caps = ["A dog chases a red ball.", "Two men ride horses on a beach.", "A cat sleeps on a sofa."]
    full = parse_cached(caps, folder=tmp_path)
    monkeypatch.setattr(scene_graph, "parse_tuples", lambda *a, **k: pytest.fail("parsed again"))
    assert parse_cached([caps[2], caps[0]], folder=tmp_path) == [full[2], full[0]]
    monkeypatch.undo()
    calls = []
    monkeypatch.setattr(scene_graph, "parse_tuples", lambda c, *a, **k: calls.append(list(c)) or [[("x",)]] * len(c))
    assert parse_cached([caps[1], "A new caption."], folder=tmp_path) == [full[1], [("x",)]]
    assert calls == [["A new caption."]]     # only the caption no cached list holds goes to the parser


def test_vse_learns_the_world_far_above_chance(tmp_path, test_ds):
    """Two epochs of notebook 03's VSE++ at smoke: image-text matching is learnable from scenes that other
    annotators' captions built (R@10 at least 3 times chance, 5% on 200 images, both ways) and not trivial. (A
    query meets two other captions' objects, not its own words: at smoke two epochs reach R@1 ~3.5% image to
    text, where the previous world, built from the query's own words, passed 10 times chance.)"""
    import dataclasses

    import torch

    from itmlib.papers.ncs_sam import vse_config
    from itmlib.training.train import evaluate, train

    torch.manual_seed(0)
    tr, dv = (load_dataset("coco_scenes", s, scale="smoke") for s in ("train", "dev"))
    cfg = dataclasses.replace(vse_config("smoke", data=tr.source), epochs=2)
    r = train(cfg, tr, dv, ckpt_dir=str(tmp_path), name="vse", device="cpu", progress=False)
    m = evaluate(r.model, r.vocab, test_ds, None, device="cpu")
    chance = 100 / test_ds.n_images
    assert m["i2t_r10"] > 3 * 10 * chance and m["t2i_r10"] > 3 * 10 * chance and m["i2t_r1"] < 95, m


def test_relations_place_the_subjects_box_by_the_predicate():
    from itmlib.data.scene_layout import place_boxes, relations_of

    cats = {"cat": 0, "table": 1, "dog": 2, "bed": 3}
    rel = relations_of([[("cat", "sit on", "table"), ("dog", "under", "table"), ("cat", "next to", "dog")],
                        [("cat", "on", "table"), ("man", "hold", "cat"), ("bed", "near", "bed")]], cats, other=4)
    # once per pair, first mention first; "other" (man) and a category with itself are left out
    assert rel == [(0, "on", 1), (2, "under", 1), (0, "beside", 2)]
    boxes = np.array([[0.0, 0.0, 0.2, 0.2], [0.3, 0.5, 0.7, 0.9], [0.8, 0.0, 0.9, 0.1]], np.float32)
    place_boxes(boxes, {0: 0, 1: 1, 2: 2}, rel)
    cat, table, dog = boxes
    np.testing.assert_allclose(cat, [0.4, 0.4, 0.6, 0.6], atol=1e-6)       # centred on the table, a quarter into its top
    np.testing.assert_allclose(dog, [0.45, 0.8, 0.55, 0.9], atol=1e-6)     # from under the table's bottom, kept inside
    np.testing.assert_allclose(table, [0.3, 0.5, 0.7, 0.9])                # objects stay; the cat moved once only


def test_object_words_are_grounded_in_their_categorys_region(test_ds):
    from itmlib.papers.teran import grounding_targets

    t = grounding_targets(test_ds)
    assert len(t) > test_ds.n_captions            # most captions name an object the image holds once
    from itmlib.data.categories import synonyms

    cats = test_ds.image_extras["categories"][0]
    for row in t.sample(200, random_state=0).itertuples():
        scene = test_ds.image_extras["objects"][row.image]
        k = next(k for k, c in enumerate(scene) if cats[c] == synonyms().get(row.word, row.word))   # "guy": person
        assert scene[list(scene)[k]][0] == 1      # one instance: the region is unambiguous
        assert row.region == sum(n for n, _ in list(scene.values())[:k]) < test_ds.region_counts[row.image]


@pytest.fixture(scope="module")
def cal():
    """benchmarks/calibrate_coco_scenes.py as a module."""
    import importlib.util

    from itmlib.paths import repo_root

    spec = importlib.util.spec_from_file_location("cal", repo_root() / "benchmarks" / "calibrate_coco_scenes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_calibration_setting_keeps_its_record_and_a_rerun_reads_it_without_training(cal, tmp_path, monkeypatch):
    import json

    import torch

    import itmlib.training.grid as grid

    threads = torch.get_num_threads()
    try:
        first = cal.vse_on_dev("smoke", 0, {"noise": 0.5, "distractors": 2.0}, 1, "cpu", name="VSE++ (test)",
                               record_dir=str(tmp_path))
        (record,) = tmp_path.glob("VSEpp_test-*.json")
        monkeypatch.setattr(grid, "_timed_member_task", lambda *a, **k: pytest.fail("a recorded setting retrained"))
        again = cal.vse_on_dev("smoke", 0, {"noise": 0.5, "distractors": 2.0}, 1, "cpu", name="VSE++ (test)",
                               record_dir=str(tmp_path))
    finally:
        torch.set_num_threads(threads)
    assert again == first and again["best epoch"] == 1 and again["dev images"] == 150
    assert again["seconds here"] == round(json.loads(record.read_text())["seconds"])   # what it cost, not the replay


def test_the_calibration_rule_asks_the_floor_first_then_the_most_learned_beyond_it(cal):
    t = pd.DataFrame({"noise": [0.25, 0.5, 1.0, 0.5, 0.25], "distractors": [0.0, 0.0, 0.0, 2.0, 3.0],
                      "i2t_r1": [80.0, 45.0, 30.0, 35.0, 9.0], "t2i_r1": [75.0, 40.0, 28.0, 30.0, 12.0],
                      "rsum": [520.0, 360.0, 270.0, 330.0, 150.0], "floor": [250.0, 250.0, 250.0, 200.0, 100.0]})
    out = cal.choose(t)
    # R@1 outside [10, 70] either way: out; 270 < 1.1 x 250: below the floor's margin, out
    assert out.admissible.tolist() == [False, True, False, True, False]
    assert out["over floor"].tolist() == [2.08, 1.44, 1.08, 1.65, 1.5]
    assert out.chosen.tolist() == [False, False, False, True, False]      # 330 / 200 beats 360 / 250
    tie = cal.choose(t.assign(rsum=[520.0, 360.0, 270.0, 288.0, 150.0]))  # 360 / 250 = 288 / 200: the smaller noise
    assert tie.chosen.tolist() == [False, True, False, False, False]
    same = cal.choose(t.assign(noise=0.5, rsum=[520.0, 360.0, 270.0, 288.0, 150.0]))   # then the fewer distractors
    assert same.chosen.tolist() == [False, True, False, False, False]
    none = cal.choose(t.assign(rsum=[520.0, 260.0, 260.0, 210.0, 150.0]))
    assert not none.chosen.any()      # no setting clears its floor: the world fails its gate, nothing is chosen


def test_positives_evaluator_scores_a_ranking_of_the_positives_first_as_perfect(test_ds):
    from types import SimpleNamespace

    from itmlib.papers.ncs_sam import positives_evaluator

    noise = np.random.default_rng(0).uniform(0, 0.5, test_ds.positives["eccv"].shape).astype(np.float32)

    def row_of(pos):   # a model ranking ``pos`` first
        sims = (pos.toarray() > 0).astype(np.float32) + noise
        model = SimpleNamespace(similarity=lambda ds, vocab, device: sims)
        return positives_evaluator(test_ds, None)("m", SimpleNamespace(model=model, vocab=None), test_ds)[0]

    row = row_of(test_ds.positives["eccv"])                          # ECCV's image queries' positives first
    assert row["eccv_i2t_map_at_r"] == row["eccv_i2t_r_precision"] == pytest.approx(100)
    assert row["cxc_i2t_map_at_r"] < 100 or test_ds.positives["cxc"].nnz == 0   # ranked by ECCV's, not CxC's
    assert "rsum" in row and "i2t_n1" not in row                               # no relevance given: no NCS
    # text to image: ECCV's own caption queries (caption_to_image), not the image queries' positives transposed
    t2i = test_ds.positives["eccv_t2i"]
    back = row_of(t2i)
    assert back["eccv_t2i_map_at_r"] == back["eccv_t2i_r_precision"] == pytest.approx(100)
    assert back["eccv_t2i_queries"] == np.count_nonzero(np.diff(t2i.tocsc().indptr)) > 0
    assert t2i.shape == test_ds.positives["eccv"].shape and (t2i != test_ds.positives["eccv"]).nnz > 0


def test_a_split_loads_from_its_text_cache_without_the_coco_or_eccv_files(test_ds, monkeypatch, tmp_path, caplog):
    from itmlib.data import coco, coco_scenes_text

    monkeypatch.setattr(coco, "coco_captions", lambda: pytest.fail("read the jar"))
    monkeypatch.setattr(coco, "_positives", lambda *a: pytest.fail("read eccv-caption"))
    again = load_dataset("coco_scenes", "test", scale="smoke")
    assert again.captions == test_ds.captions and np.array_equal(again.regions, test_ds.regions)
    assert all((again.positives[k] != test_ds.positives[k]).nnz == 0 for k in ("cxc", "eccv"))
    monkeypatch.undo()
    monkeypatch.setenv("ITM_CACHE_DIR", str(tmp_path))       # a fresh cache, then a truncated one: read again
    first = coco_scenes_text.text_side("test", "smoke", 0)
    (path,) = (tmp_path / "coco_scenes").glob("text-*.json")
    path.write_text(path.read_text()[:-9])
    assert coco_scenes_text.text_side("test", "smoke", 0)["captions"] == first["captions"]
    assert len(first["captions"]) == 5 * test_ds.n_images and set(test_ds.captions) < set(first["captions"])
    assert "unreadable" in caplog.text


def test_every_object_lemma_gets_a_category_with_n_categories_0_and_bad_knobs_are_named():
    """Uncapped (``n_categories`` 0) every object lemma the scene captions name is a category of its own, ordered by
    frequency (ties by first appearance); the cap keeps COCO's 80 then the most frequent; a knob out of range is
    named."""
    tuples = [[("zorp",), ("dog",)], [("zorp",), ("flim",)], [("quax",)]]
    assert build_vocab(tuples, 0, 60).categories[80:] == ("zorp", "flim", "quax")
    assert build_vocab(tuples, 81, 60).categories[80:] == ("zorp",)
    with pytest.raises(ValueError, match="n_categories must be 0"):
        CocoScenesConfig(n_categories=40)
    with pytest.raises(ValueError, match="n_test must be 0"):
        CocoScenesConfig(n_test=5001)
    assert "n_categories=150, n_test=5000" in dataset_source("coco_scenes", "test", scale="smoke", n_categories=150, n_test=5000)
    assert "n_test" not in dataset_source("coco_scenes", "test", scale="smoke")


def test_the_worlds_sizes_at_a_scale_name_no_knob_and_are_the_probes_choices():
    """v7: at medium 58,000 training, 5,000 dev and all 5,000 Karpathy test images, given or left 0 one world (one
    source, so one set of checkpoints); smoke keeps the scale's sizes; the training size is the size probe's
    chosen row and the default perception the committed calibration's chosen row (made on v6's 29,000 images)."""
    from itmlib.course.results import read_table
    from itmlib.paths import repo_root

    medium_cfg = CocoScenesConfig().at_scale("medium")
    assert (medium_cfg.n_train, medium_cfg.n_dev, medium_cfg.n_test) == (58000, 5000, 5000)
    assert CocoScenesConfig().at_scale("smoke") == CocoScenesConfig()
    assert CocoScenesConfig(n_train=8000).at_scale("medium").n_train == 8000
    assert CocoScenesConfig(n_dev=500).at_scale("medium").n_dev == 500
    medium = dataset_source("coco_scenes", scale="medium")
    assert dataset_source("coco_scenes", scale="medium", n_train=58000, n_dev=5000, n_test=5000) == medium
    assert "n_train=8000" in dataset_source("coco_scenes", scale="medium", n_train=8000) and "v7" in medium
    folder = repo_root() / "results" / "09_real_language"
    probe = read_table(folder / "size_probe.csv")[1].query("chosen")
    assert len(probe) == 1 and probe["training images"].item() == medium_cfg.n_train
    chosen = read_table(folder / "world_calibration.csv")[1].query("chosen")
    assert len(chosen) == 1 and (chosen.noise.item(), chosen.distractors.item()) == (CocoScenesConfig().noise,
                                                                                   CocoScenesConfig().distractors)
    assert chosen["training images"].item() == 29000 and "n_categories=0" in read_table(
        folder / "world_calibration.csv")[0]["data"]


def test_each_regions_attributes_are_kept_and_are_the_scenes_for_its_objects(test_ds):
    """``region_attributes``: per image, each filled region's attribute indices - its scene object's for the first
    regions (category order, one region per instance), a distractor's own after them."""
    for i in range(20):
        scene, attrs = test_ds.image_extras["objects"][i], test_ds.image_extras["region_attributes"][i]
        cats = np.asarray(test_ds.image_extras["region_category"][i])
        assert len(attrs) == int(test_ds.region_counts[i]) == int((cats >= 0).sum())
        mine = [(c, tuple(sorted(a))) for c, (n, a) in scene.items() for _ in range(n)][: len(attrs)]
        assert [(int(c), a) for c, a in zip(cats, attrs)][: len(mine)] == mine


def test_n_train_draws_nested_training_splits_beside_one_dev_split():
    """With ``n_train`` the training images are the front of the seeded sample of non-test images and the dev images
    its end: a smaller training split lies inside a larger one, every size shares one dev split, and no dev image
    trains; without it the scale's split is unchanged (the same training images as ``n_train`` = the scale's)."""
    from itmlib.data.coco_scenes_text import _split_ids

    small, large = (set(_split_ids("train", "smoke", 0, n_train=n)[0].tolist()) for n in (1000, 3000))
    dev_small, dev_large = (_split_ids("dev", "smoke", 0, n_train=n)[0] for n in (1000, 3000))
    assert small < large and len(large) == 3000 and np.array_equal(dev_small, dev_large)
    assert not large & set(dev_large.tolist())
    assert np.array_equal(_split_ids("train", "smoke", 0)[0], _split_ids("train", "smoke", 0, n_train=1500)[0])
    with pytest.raises(ValueError, match="exceed"):
        _split_ids("train", "smoke", 0, n_train=10 ** 7)
    with pytest.raises(ValueError, match="n_train must be 0"):
        CocoScenesConfig(n_train=-1)


def test_n_dev_draws_nested_dev_splits_from_the_sample_end_apart_from_training():
    """With ``n_dev`` the dev images are that many from the end of the seeded sample: a smaller dev split lies
    inside a larger one, none of them trains, the training split does not move, and the scale's own dev split is
    the ``n_dev`` = the scale's one whenever ``n_train`` is given (as v6's worlds read it)."""
    from itmlib.data.coco_scenes_text import _split_ids

    train = set(_split_ids("train", "smoke", 0, n_train=1000)[0].tolist())
    small, large = (set(_split_ids("dev", "smoke", 0, n_train=1000, n_dev=n)[0].tolist()) for n in (100, 400))
    assert small < large and len(large) == 400 and not train & large
    assert train == set(_split_ids("train", "smoke", 0, n_train=1000, n_dev=400)[0].tolist())
    assert np.array_equal(_split_ids("dev", "smoke", 0, n_train=1000)[0], _split_ids("dev", "smoke", 0, n_train=1000, n_dev=150)[0])
    with pytest.raises(ValueError, match="exceed"):
        _split_ids("dev", "smoke", 0, n_train=1000, n_dev=10 ** 7)
    with pytest.raises(ValueError, match="n_dev must be 0"):
        CocoScenesConfig(n_dev=-1)


def test_the_size_probe_takes_the_fewest_images_that_clear_the_floor_by_ten_percent():
    """benchmarks/coco_scenes_size.py's rule on hand-made rows: 1.1x the higher floor exactly clears, the smallest
    size that clears is taken even when a larger one clears by more, and none is taken when none clears."""
    import importlib.util

    from itmlib.paths import repo_root

    spec = importlib.util.spec_from_file_location("size", repo_root() / "benchmarks" / "coco_scenes_size.py")
    size = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(size)
    rows = pd.DataFrame({"training images": [113287, 29000, 58000], "dev rsum": [250.0, 150.0, 220.0],
                         "floor": [200.0, 160.0, 200.0]})
    t = size.choose(rows)
    assert t["training images"].tolist() == [29000, 58000, 113287] and t["clears"].tolist() == [False, True, True]
    assert t["chosen"].tolist() == [False, True, False] and "58,000 training images" in size.reading(t)
    none = size.choose(rows.assign(**{"dev rsum": [210.0, 150.0, 200.0]}))
    assert not none["chosen"].any() and "at most 1.050x, at 113,287 images" in size.reading(none)


def test_the_world_table_counts_the_eccv_and_cxc_queries_that_keep_a_positive(test_ds):
    """An image query counts when one of its positives is among the split's queries, a caption query when one of
    its positive images is among the split's images: what mAP@R and R-Precision average over."""
    from itmlib.data.coco_scenes import scene_statistics

    stats = scene_statistics(test_ds)
    rows = {int(r) for r in test_ds.positives["eccv"].tocoo().row}
    cols = {int(c) for c in test_ds.positives["eccv_t2i"].tocoo().col}
    assert stats["eccv image queries with a positive"] == len(rows) > 0
    assert stats["eccv caption queries with a positive"] == len(cols) > 0
    assert stats["cxc image queries with a positive"] <= test_ds.n_images
