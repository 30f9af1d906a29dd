"""Thomas & Kovashka (notebook 07): losses, metrics, kNN, Doc2Vec, the non-literal world, the model."""

import math
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import torch

from itmlib.data import load_dataset
from itmlib.knn import knn
from itmlib.losses.angular import angular_hinge, angular_npair, struc_loss, symmetric_npair, triplet_npair
from itmlib.metrics import k_way_accuracy, neighborhood_preservation
from itmlib.relevance.doc2vec import CODE_FIRST_N, neighbor_table


def _unit(*rows):
    t = torch.tensor(rows, dtype=torch.float64)
    return t / t.norm(dim=1, keepdim=True)


# ----- losses ------------------------------------------------------------------
def test_angular_smooth_npair_by_hand():
    a, p, n = _unit([1, 0]), _unit([0, 1]), _unit([1, 0], [0, -1])
    # f = 4 t (a + p)·n − 2 (1 + t) a·p with t = 1: n1 -> 4·1 − 0 = 4, n2 -> 4·(−1) = −4
    want = math.log(1 + math.exp(4) + math.exp(-4))
    assert angular_npair(a, p, n).item() == pytest.approx(want)
    mask = torch.tensor([[False, True]])
    assert angular_npair(a, p, n, mask).item() == pytest.approx(math.log(1 + math.exp(-4)))


def test_angular_hinge_is_eq2_and_vanishes_where_the_smooth_form_does_not():
    a, p, n = _unit([1, 0]), _unit([0.6, 0.8]), _unit([0.8, 0.6])
    c = (a + p) / 2
    eq2 = max(0.0, ((a - p) ** 2).sum().item() - 4 * ((n - c) ** 2).sum().item())
    assert angular_hinge(a, p, n).item() == pytest.approx(eq2)
    assert angular_npair(a, p, n, form="hinge").item() == pytest.approx(eq2)
    # unit vectors, tan²α = 1: eq. 2 == [f − 4]_+, so at random init almost every term is 0
    g = torch.Generator().manual_seed(0)
    x = torch.nn.functional.normalize(torch.randn(64, 32, generator=g, dtype=torch.float64), dim=1)
    y = torch.nn.functional.normalize(torch.randn(64, 32, generator=g, dtype=torch.float64), dim=1)
    neg = ~torch.eye(64, dtype=torch.bool)
    assert angular_npair(x, y, y, neg, form="hinge").item() == 0.0
    assert angular_npair(x, y, y, neg).item() > 1.0


def test_triplet_npair_and_symmetric_by_hand():
    a, p, n = _unit([1, 0]), _unit([0, 1]), _unit([0, -1], [1, 0])
    # ‖a−p‖² = 2; ‖a−n‖² = 2 and 0; m = 0.2 -> [0.2]_+ + [2.2]_+
    assert triplet_npair(a, p, n, margin=0.2).item() == pytest.approx(2.4)
    # eq. 4 by hand: x = (e1, e2), y = (e2, e1): every anchor is sqrt(2) from its positive (‖·‖² = 2) and on
    # top of its one negative (0): [2 - 0 + 0.2]_+ = 2.2 per anchor, both directions -> 2.2 + 2.2
    x, y = _unit([1, 0], [0, 1]), _unit([0, 1], [1, 0])
    neg = ~torch.eye(2, dtype=torch.bool)
    assert symmetric_npair(x, y, neg, "triplet", margin=0.2).item() == pytest.approx(4.4)
    with pytest.raises(ValueError, match="angular' or 'triplet"):
        symmetric_npair(x, y, neg, "hinge")


def test_struc_loss_by_hand_and_ignore():
    e = _unit([1, 0], [1, 0.2], [0, 1], [-1, 0])
    group = torch.tensor([[False, True, False, False]])           # anchor 0: neighbour 1; 2, 3 non-neighbours
    d = lambda i, j: ((e[i] - e[j]) ** 2).sum().item()             # noqa: E731
    want = max(0, d(0, 1) - d(0, 2) + 1.5) + max(0, d(0, 1) - d(0, 3) + 1.5)
    assert struc_loss(e, group, 1, margin=1.5).item() == pytest.approx(want)
    ignore = torch.tensor([[False, False, True, False]])
    assert struc_loss(e, group, 1, margin=1.5, ignore=ignore).item() == pytest.approx(max(0, d(0, 1) - d(0, 3) + 1.5))


def test_angular_gradients_match_finite_differences():
    g = torch.Generator().manual_seed(1)
    a, p, n = (torch.randn(3, 4, generator=g, dtype=torch.float64, requires_grad=True) for _ in range(3))
    assert torch.autograd.gradcheck(lambda a, p, n: angular_npair(a, p, n), (a, p, n))


# ----- metrics -------------------------------------------------------------------
def test_k_way_distractors_are_distinct_pairs_of_other_images():
    from itmlib.metrics.kway import _distractors

    rng = np.random.default_rng(0)
    idx = _distractors(rng, np.arange(6), 6)                   # k - 1 = 5 of the 5 other pairs: all of them
    assert all(set(row) == set(range(6)) - {i} for i, row in enumerate(idx))
    groups = np.repeat(np.arange(20), 5)                        # 5 captions per image
    idx = _distractors(rng, groups, 10)
    assert all(len(set(row)) == 9 for row in idx) and not (groups[idx] == groups[:, None]).any()


def test_k_way_accuracy_by_hand_and_seeded():
    x = np.eye(4, dtype=np.float32)
    assert k_way_accuracy(x, x, 4, n_draws=3) == {"i2t_acc4": 100.0, "t2i_acc4": 100.0}
    # every text equal: the partner never scores strictly highest
    assert k_way_accuracy(x, np.ones((4, 4), np.float32) / 2, 2)["i2t_acc2"] == 0.0
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((50, 8)), rng.standard_normal((50, 8))
    assert k_way_accuracy(a, b, 5, seed=3) == k_way_accuracy(a, b, 5, seed=3)
    # groups: two pairs of one image; the only other image's pair is always the distractor
    img = np.array([[1, 0], [1, 0], [0, 1]], np.float32)
    txt = np.array([[0, 1], [0, 1], [1, 0]], np.float32)                 # every pair mismatched
    assert k_way_accuracy(img, txt, 2, groups=np.array([0, 0, 1]))["i2t_acc2"] == 0.0
    with pytest.raises(ValueError, match="distinct images"):
        k_way_accuracy(img, txt, 3, groups=np.array([0, 0, 1]))


def test_neighborhood_preservation_by_hand():
    # points on a line: 1-NN of each in the reference; the learned space swaps the order of the last two
    ref = np.array([[0.0], [1.0], [2.0], [10.0]])
    emb = np.array([[1.0, 0.0], [0.99, 0.14], [0.95, 0.31], [0.96, 0.28]])
    # reference 1-NN: 0->1, 1->0 (tie 0/2 at distance 1, index order), 2->1, 3->2
    # cosine 1-NN in emb: 0->1, 1->0, 2->3, 3->2
    assert neighborhood_preservation(emb, ref, 1) == pytest.approx(75.0)


# ----- kNN and neighbour tables --------------------------------------------------------
def test_knn_exact_matches_brute_force_and_hnsw_agrees():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((300, 16)).astype(np.float32)
    idx, dist = knn(x, 5, method="exact")
    d = ((x[:, None] - x[None]) ** 2).sum(-1)
    np.fill_diagonal(d, np.inf)
    assert np.array_equal(idx, np.argsort(d, axis=1)[:, :5])
    assert np.allclose(dist, np.sqrt(np.sort(d, axis=1)[:, :5]), atol=1e-4)
    h, _ = knn(x, 5, method="hnsw")
    assert not (h == np.arange(300)[:, None]).any()
    overlap = np.mean([len(set(a) & set(b)) / 5 for a, b in zip(idx, h)])
    assert overlap > 0.95


def test_neighbor_table_code_mode_drops_duplicates_and_keeps_first_ten():
    x = np.arange(30, dtype=np.float32)[:, None]
    x[1] = x[0]                                                         # a duplicate text
    paper = neighbor_table(x, 20, "paper")
    code = neighbor_table(x, 20, "code")
    assert paper.shape == (30, 20) and 1 in paper[0]
    assert code.shape == (30, CODE_FIRST_N) and 1 not in code[0] and 0 not in code[1]
    assert np.array_equal(code[15], paper[15][:CODE_FIRST_N])


def test_neighbor_table_never_returns_a_rows_exact_float_duplicate():
    """float32 L2 of two identical 200-d rows is not 0 (the public code's `dist > 0` keeps such a duplicate):
    the code mode must still drop it."""
    rng = np.random.default_rng(0)
    v = (5 * rng.standard_normal((300, 200))).astype(np.float32)
    v[100:150] = v[:50]                                                 # 50 texts twice
    _, dist = knn(v, 5, metric="l2")
    assert (dist[:50, 0] > 0).any()                                     # the float32 distance of a copy
    code = neighbor_table(v, 20, "code")
    for i, row in enumerate(code):
        assert not any(np.array_equal(v[j], v[i]) for j in row if j >= 0), i


# ----- Doc2Vec -----------------------------------------------------------------------
def test_doc2vec_is_identical_across_processes(tmp_path):
    script = (
        "import numpy as np, sys\n"
        "from itmlib.relevance.doc2vec import Doc2VecSettings, train_doc2vec, doc_vectors\n"
        "texts = [f'the storm hit the harbour town {i % 5} boats lost' for i in range(40)] + "
        "[f'the senate passed the budget bill {i % 5} votes' for i in range(40)]\n"
        "m = train_doc2vec(texts, Doc2VecSettings(vector_size=16, window=3, min_count=2, epochs=5), cache=False)\n"
        "np.save(sys.argv[1], doc_vectors(m, texts[:5]))\n")
    outs = []
    for hs in ("1", "2"):
        f = tmp_path / f"v{hs}.npy"
        subprocess.run([sys.executable, "-c", script, str(f)], check=True, env={**os.environ, "PYTHONHASHSEED": hs})
        outs.append(np.load(f))
    assert np.array_equal(outs[0], outs[1])


def test_doc2vec_cache_over_10mb_is_one_file_and_a_broken_cache_is_retrained(tmp_path, caplog):
    """13,200 documents x 800 dimensions = 10.6M elements, over gensim's sep_limit: by default it stores
    them beside the model under the temporary name, and the renamed cache then failed to load (found
    at medium, on the 100k real COCO captions)."""
    from itmlib.relevance.doc2vec import Doc2VecSettings, train_doc2vec

    words = "storm harbour senate budget boats votes market river school train music garden doctor".split()
    texts = [f"{words[i % 7]} {words[i % 11]} {words[i % 13]}" for i in range(13_200)]
    s = Doc2VecSettings(vector_size=800, window=2, min_count=1, epochs=1)
    first = train_doc2vec(texts, s, folder=tmp_path)
    assert first.dv.vectors.size >= 10 * 2**20
    files = sorted(p.name for p in tmp_path.iterdir())
    assert len(files) == 1 and files[0].endswith(".model")
    again = train_doc2vec(texts, s, folder=tmp_path)                  # from the cache
    assert np.array_equal(again.dv.vectors, first.dv.vectors)
    (tmp_path / files[0]).write_bytes(b"truncated by a killed run")
    with caplog.at_level("WARNING"):
        third = train_doc2vec(texts, s, folder=tmp_path)
    assert "unreadable" in caplog.text and np.array_equal(third.dv.vectors, first.dv.vectors)


# ----- the non-literal world ------------------------------------------------------------
@pytest.fixture(scope="module")
def news():
    return load_dataset("synthetic_news", "train", scale="smoke")


def test_news_world_shape_and_determinism(news):
    assert news.captions_per_image == 1 and news.n_captions == news.n_images == 1500
    lengths = [len(t.split()) for t in news.captions]
    assert min(lengths) >= 41 and max(lengths) <= 82                   # 40-80 words + 1-2 symbol words
    again = load_dataset("synthetic_news", "test", scale="smoke")
    medium_prefix = load_dataset("synthetic_news", "test", scale="medium").captions[:200]
    assert again.captions == medium_prefix                                # pair i has its own stream
    sub = news.subset(0.1, seed=1)
    assert sub.n_captions == sub.n_images == 150 and sub.captions_per_image == 1


def test_news_world_is_non_literal(news):
    from itmlib.data.synthetic.news import world_properties

    p = world_properties(news)
    assert abs(p["names_own_object"] - p["names_random_object"]) < 4       # nouns no more than chance
    assert p["overlap_same_topic"] > 1.8 * p["overlap_other_topic"]       # motifs tie a topic's scenes...
    assert p["overlap_same_topic"] < 40                                   # ...loosely


def test_channel_table_sees_the_symbol_channel_and_its_closing(news):
    """The symbol words of v2 named the focus motif: 90% of articles then name a category of their own
    image against ~46% of a same-topic image's - a literal channel. v3 draws the motif independently of
    the image: own and same-topic rates agree (both sampled from one distribution), nouns stay at chance."""
    from itmlib.data.synthetic.news import text_image_channels

    ch = text_image_channels(news).set_index("channel")
    sym, nouns = ch.loc["symbol words"], ch.loc["category nouns (filler)"]
    assert sym.articles == 100 and abs(sym.own_image - sym.same_topic_image) < 4
    assert sym.same_topic_image > 3 * sym.other_topic_image                # a topic channel, as the paper's
    assert nouns.own_image < nouns.other_topic_image + 3                  # nouns name the image at chance
    v2 = text_image_channels(load_dataset("synthetic_news", "test", scale="smoke", symbol_words="focus")).set_index("channel")
    assert v2.loc["symbol words"].own_image > v2.loc["symbol words"].same_topic_image + 30
    v3 = text_image_channels(load_dataset("synthetic_news", "test", scale="smoke")).set_index("channel")
    assert v2.loc["category nouns (filler)"].equals(v3.loc["category nouns (filler)"])   # only symbol words differ
    none = text_image_channels(load_dataset("synthetic_news", "test", scale="smoke", symbol_words="none")).set_index("channel")
    assert none.loc["symbol words"].articles == 0


def test_news_source_names_the_version_and_every_changed_knob(news):
    """Checkpoints are keyed by the data's source: a changed knob must change it."""
    from itmlib.data.synthetic.news import NEWS_VERSION

    assert news.source.startswith(f"synthetic_news v{NEWS_VERSION} ") and "=" not in news.source.split(";")[0]
    other = load_dataset("synthetic_news", "dev", scale="smoke", focus_weight=0.4)
    assert "focus_weight=0.4" in other.source and other.source != load_dataset("synthetic_news", "dev", scale="smoke").source


def test_dataset_rejects_a_wrong_caption_count():
    from itmlib.data.base import ITMDataset

    with pytest.raises(ValueError, match="expected 1 captions per image"):
        ITMDataset(name="x", split="t", captions=["a", "b", "c"], img_of_caption=np.arange(3),
                   regions=np.zeros((2, 1, 4), np.float32), captions_per_image=1)


# ----- the model -------------------------------------------------------------------------
def test_nbr_model_trains_a_step_and_keeps_its_word_init_on_resume(news):
    from itmlib.models import build_model
    from itmlib.papers.neighborhoods import arm_config

    cfg = arm_config("smoke", "OURS").model
    torch.manual_seed(0)
    model, vocab = build_model(cfg, news)
    text = model.dataset_inputs(news, vocab)
    assert bool(model.words_ready) and model.init_word_vectors(news, vocab) == 0   # once per model
    assert text["neighbors"].shape == (1500, 40) and (text["neighbors"] != torch.arange(1500)[:, None]).all()
    loss = model.batch_loss(news, text, np.arange(32), epoch=0, margin=0.2, hardest=False)
    loss.backward()
    assert torch.isfinite(loss) and model.region_mlp[0].weight.grad.abs().sum() > 0
    fresh, _ = build_model(cfg, news, vocab)
    fresh.load_state_dict(model.state_dict())
    assert bool(fresh.words_ready)                                        # a resumed run is not re-initialised


def test_gt_and_image_candidate_tables():
    from itmlib.models.neighborhoods import candidate_table
    from itmlib.papers.neighborhoods import arm_config

    lit = load_dataset("synthetic", "test", scale="smoke")
    gt = candidate_table(arm_config("smoke", "STRUC (GT, Text)").model, lit)
    assert gt.shape == (1000, 4) and set(gt[7]) == {5, 6, 8, 9}
    img = candidate_table(arm_config("smoke", "OURS (Img NNs)").model, lit)
    assert (img[:, 0] // 5 != np.arange(1000) // 5).all() and (img % 5 == np.arange(1000)[:, None] % 5).all()
    with pytest.raises(ValueError, match="several captions per image"):
        candidate_table(arm_config("smoke", "STRUC (GT, Text)").model, load_dataset("synthetic_news", "test"))


def test_angular_and_symmetric_losses_by_hand():
    """Eq. 2 + 3 (the public code's smooth form) and eq. 4 on two orthogonal pairs, computed by hand:
    f = 4 tan²α (a + p)ᵀn − 2 (1 + tan²α) aᵀp = 4 (2, 0)ᵀ(0, 1) − 4 = −4 for every (anchor, negative),
    so each anchor's loss is log(1 + e⁻⁴); eq. 4 sums the image- and the text-anchored terms."""
    import math

    import torch

    from itmlib.losses.angular import angular_npair, symmetric_npair

    a = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    other = torch.tensor([[False, True], [True, False]])          # each pair's negative: the other pair
    one = math.log(1 + math.exp(-4))
    assert float(angular_npair(a, a, a, other)) == pytest.approx(one, rel=1e-5)
    assert float(symmetric_npair(a, a, other, "angular")) == pytest.approx(2 * one, rel=1e-5)
    # the hinge form (eq. 2): the negative is outside the circle on a-p (here a = p: radius 0) -> no loss
    assert float(angular_npair(a, a, a, other, form="hinge")) == 0.0
    # a negative inside the circle: a = (1, 0), p = (-1, 0), n = (0, 0.5): ||a - p||² - 4 tan²α ||c - n||² = 4 - 1
    hinge = angular_npair(torch.tensor([[1.0, 0.0]]), torch.tensor([[-1.0, 0.0]]), torch.tensor([[0.0, 0.5]]),
                          torch.tensor([[True]]), form="hinge")
    assert float(hinge) == pytest.approx(3.0)


def test_a_sampled_neighbour_in_the_batch_is_never_a_negative_of_eqs_6_7(news, monkeypatch):
    from itmlib.models import build_model
    from itmlib.models import neighborhoods as model_module
    from itmlib.papers.neighborhoods import arm_config

    cfg = arm_config("smoke", "OURS").model
    torch.manual_seed(0)
    model, vocab = build_model(cfg, news)
    text = model.dataset_inputs(news, vocab)
    caps = np.arange(0, 160, 5)                                          # 32 captions of 32 different images
    monkeypatch.setattr(model, "_sample", lambda t, cap, n: torch.roll(cap, -1))   # i's neighbour: anchor i + 1
    seen = []
    real = model_module.angular_npair
    monkeypatch.setattr(model_module, "angular_npair", lambda a, p, n, mask, *x, **k: seen.append(mask) or real(a, p, n, mask, *x, **k))
    model.batch_loss(news, text, caps, epoch=0, margin=0.2, hardest=False)
    within = seen[-1]                                                    # eq. 7's mask (eq. 6's is the same)
    assert not within[torch.arange(31), torch.arange(1, 32)].any()      # the neighbour is the positive only
    assert within[0, 2] and within[5, 0]                                # other captions stay negatives


def test_neighbor_distance_by_hand():
    """Four points on a line, Ω = the same line, k = 1: the nearest of 0, 1, 3, 6 are 1, 0, 1, 3, squared
    distances 1, 1, 4, 9 (mean 3.75); the six distinct pairs' squared distances sum to 84 (mean 14)."""
    from itmlib.metrics import neighbor_distance

    x = np.array([[0.0], [1.0], [3.0], [6.0]])
    assert neighbor_distance(x, x, 1) == pytest.approx(100 * 3.75 / 14)
    rng = np.random.default_rng(0)
    e = rng.normal(size=(50, 8))
    assert neighbor_distance(e, rng.normal(size=(50, 3)), 5) == pytest.approx(100, abs=15)   # unrelated Ω: ~random pairs
    assert neighbor_distance(e, e, 5) < 60                                                   # Ω = M: neighbours are near
    with pytest.raises(ValueError, match="equal n"):
        neighbor_distance(e, e[:10], 5)


def test_a_doc2vec_tag_changes_omega_but_not_the_word_vectors():
    from itmlib.papers.neighborhoods import arm_config, split_arm, with_paper_columns

    assert split_arm("OURS (DBOW)") == ("OURS", "dbow") and split_arm("OURS (random NNs)") == ("OURS (random NNs)", None)
    tagged, plain = arm_config("smoke", "OURS (DBOW)").model, arm_config("smoke", "OURS").model
    assert (tagged.d2v_mode, tagged.words_mode) == ("dbow", "code") and (plain.d2v_mode, plain.words_mode) == ("code", "")
    assert arm_config("smoke", "OURS (NS)").model == plain                # the notebook's own mode: the same arm
    assert split_arm("OURS (random NNs) (DBOW)") == ("OURS (random NNs)", "dbow")
    with pytest.raises(ValueError, match="arm must be one of"):
        arm_config("smoke", "OURS (XX)")
    t = with_paper_columns(pd.DataFrame({"method": ["OURS", "OURS (DBOW)"]}), "table1", "synthetic_news")
    assert t["paper i2t (Politics)"].iloc[0] == t["paper i2t (Politics)"].iloc[1] == pytest.approx(64.67)
    assert not any("GoodNews" in c for c in t.columns)                    # nothing here models GoodNews
    real = with_paper_columns(pd.DataFrame({"method": ["ANG+NP+SYM", "OURS"]}), "table1", "coco_scenes")
    assert list(real["paper i2t (COCO)"]) == pytest.approx([69.76, 69.0])  # real captions beside the paper's COCO


def test_the_settings_table_names_every_deviation_the_notebook_discusses():
    from itmlib.papers.neighborhoods import settings_table

    t = settings_table()
    assert list(t.columns) == ["setting", "paper", "ours (medium)", "why"] and t.notna().all().all()
    for s in ("Doc2Vec tokeniser", "Doc2Vec output layer", "optimiser", "model selection", "STRUC", "Img NNs features",
              "k-way distractors", "VSE++ + OURS"):
        assert s in set(t.setting)


@pytest.mark.parametrize("arm, expected", [("OURS", 1 + 0.2 * 10 + 0.3 * 100),          # angular: α 0.2, β 0.3
                                           ("OURS (TRIP)", 1 + 0.3 * 10 + 0.1 * 100),   # triplet: α 0.3, β 0.1
                                           ("VSE++ + OURS", 2 + 32 * (0.2 * 10 + 0.3 * 100)),   # x B: hinge is a sum
                                           ("ANG+NP+SYM", 1)])
def test_eq_8_assembles_its_terms_with_the_papers_weights(news, monkeypatch, arm, expected):
    """Eq. 8, L = L^{NP+SYM} + α L_text + β L_img, with each term replaced by a constant: L_text = 10 (eq. 6,
    the texts: called first), L_img = 100 (eq. 7), eq. 4 = 1 (VSE++'s hinge = 2)."""
    from itmlib.models import build_model
    from itmlib.models import neighborhoods as model_module
    from itmlib.papers.neighborhoods import arm_config

    torch.manual_seed(0)
    model, vocab = build_model(arm_config("smoke", arm).model, news)
    text = model.dataset_inputs(news, vocab)
    calls = []
    one = torch.tensor(1.0)
    monkeypatch.setattr(model_module, "symmetric_npair", lambda *a, **k: one)
    monkeypatch.setattr(model_module, "triplet_loss", lambda *a, **k: 2 * one)
    within = lambda a, p, n, mask, *x, **k: calls.append(a) or one * (10 if len(calls) == 1 else 100)
    monkeypatch.setattr(model_module, "angular_npair", within)
    monkeypatch.setattr(model_module, "triplet_npair", within)
    loss = model.batch_loss(news, text, np.arange(32), epoch=0, margin=0.2, hardest=False)
    assert float(loss) == pytest.approx(expected)


def test_each_arm_is_measured_in_its_own_omega_and_omega_is_keyed_by_its_recipe():
    from types import SimpleNamespace

    from itmlib.papers.neighborhoods import Omega, neighborhoods_evaluator

    test = load_dataset("synthetic_news", "test", scale="smoke")
    rng = np.random.default_rng(0)
    unit = lambda x: x / np.linalg.norm(x, axis=1, keepdims=True)   # noqa: E731 (cosine and dot agree)
    own = {m: Omega(unit(rng.normal(size=(test.n_images, 8))), f"d2v {m} recipe") for m in ("code", "dbow")}

    def result(space):   # a model whose images and texts are exactly ``space``: it keeps that Ω's neighbours
        return SimpleNamespace(model=SimpleNamespace(embed_dataset=lambda ds, vocab, device: (space, space)), vocab=None)

    fn = neighborhoods_evaluator(test, omega=own, d2v_mode="code", preservation_k=10, n_draws=1)
    dbow = fn("OURS (DBOW)", result(own["dbow"].vectors), test)[0]
    plain = fn("OURS", result(own["dbow"].vectors), test)[0]
    assert dbow["np_img"] == dbow["np_txt"] == 100.0          # measured in PV-DBOW's Ω, which it reproduces
    assert plain["np_img"] < 20                               # the untagged arm is measured in the notebook's Ω
    # the record key names Ω's recipe, not its bytes: last-bit differences between machines keep the key
    nudged = {m: Omega(o.vectors + 1e-12, o.key) for m, o in own.items()}
    key = lambda omega: neighborhoods_evaluator(test, omega=omega, preservation_k=10).cache_key   # noqa: E731
    assert key(nudged) == key(own)
    assert key({**own, "dbow": Omega(own["dbow"].vectors, "d2v dbow another recipe")}) != key(own)
    assert "omega none" in neighborhoods_evaluator(test, preservation_k=10).cache_key


def test_vector_neighbor_recall_counts_each_captions_neighbours_by_hand():
    import scipy.sparse as sp

    from itmlib.data.base import ITMDataset
    from itmlib.papers.neighborhoods import vector_neighbor_recall

    # captions 0, 1 show image 0 and 2, 3 image 1; an extra positive says caption 2 fits image 0 as well
    extra = sp.csr_matrix(np.array([[1, 0, 1, 0], [0, 0, 0, 0]], np.int8))
    ds = ITMDataset(name="x", split="t", captions=list("abcd"), img_of_caption=np.array([0, 0, 1, 1]),
                    regions=np.zeros((2, 1, 4), np.float32), captions_per_image=2, positives={"extra": extra})
    vec = np.array([[0.0, 0], [0.1, 0], [0.05, 0], [5.0, 0]], np.float32)
    t = vector_neighbor_recall(ds, vec, ks=(1, 2)).set_index(["positives", "k"])
    # k = 1: 0 -> 2, 1 -> 2, 2 -> 0, 3 -> 1, none its image's other caption; k = 2 adds 1, 0, 1, 2: three of four
    assert t.loc[("same image", 1), "recall"] == 0.0 and t.loc[("same image", 2), "recall"] == 75.0
    assert t.loc[("same image", 2), "chance"] == pytest.approx(200 / 3) and t.loc[("same image", 2), "captions"] == 4
    # the extra positive (its own image's caption excluded) belongs to captions 0 and 1, both of which find it first
    assert t.loc[("extra", 1), "recall"] == 100.0 and t.loc[("extra", 1), "captions"] == 2
    with pytest.raises(ValueError, match="vec has 3 rows but the dataset has 4 captions"):
        vector_neighbor_recall(ds, vec[:3])
