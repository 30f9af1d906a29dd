"""Hand-computed examples for every metric, plus cross-checks and bad input."""

import numpy as np
import pytest
import scipy.sparse as sp

from itmlib.metrics import coco_1k, map_at_r, ncs, ndcg, r_precision, retrieval_recall, semantic_recall

# 3 images x 2 captions
IOC = np.repeat(np.arange(3), 2)
S = np.array([[.9, .1, .8, .2, .3, .4],
              [.1, .2, .9, .8, .1, .1],
              [.5, .5, .5, .5, .6, .1]])


def test_recall_first_hit_and_ir_by_hand():
    # image 0 ranks c0 c2 c5 c4 c3 c1 (GT c0 at 0, c1 at 5); image 1: GT c2, c3 at 0, 1;
    # image 2 ranks c4 first, c5 last (ties .5 ahead). Caption c5's column [.4 .1 .1]:
    # its GT image 2 ties image 1 at .1 -> rank 2 (ties count against the GT); c1 -> rank 2.
    rv = retrieval_recall(S, IOC, ks=(1, 2, 3))
    assert rv["i2t_r1"] == rv["i2t_r2"] == rv["i2t_r3"] == 100.0
    assert rv["t2i_r1"] == pytest.approx(400 / 6) and rv["t2i_r3"] == 100.0
    assert rv["t2i_meanr"] == pytest.approx(10 / 6) and rv["t2i_medr"] == 1.0
    ir = retrieval_recall(S, IOC, ks=(1, 2, 3), kind="ir")
    assert ir["i2t_r1"] == pytest.approx(50.0)            # each image: 1 of its 2 GT at rank 0
    assert ir["i2t_r2"] == pytest.approx(100 * 2 / 3)     # (1/2 + 2/2 + 1/2) / 3
    assert ir["t2i_r1"] == rv["t2i_r1"]                   # one GT image: both kinds agree
    assert rv["rsum"] == pytest.approx(sum(rv[f"{d}_r{k}"] for d in ("i2t", "t2i") for k in (1, 2, 3)))


def test_ir_recall_at_1_tops_out_at_20_with_five_captions():
    ioc = np.repeat(np.arange(12), 5)
    sims = (ioc[None, :] == np.arange(12)[:, None]).astype(float)
    sims += np.linspace(0, 0.01, 60)[None, :]
    assert retrieval_recall(sims, ioc, ks=(1, 5), kind="ir")["i2t_r1"] == pytest.approx(20.0)
    r = retrieval_recall(sims, ioc, ks=(1, 5, 10))
    assert r["rsum"] == pytest.approx(600.0) and r["i2t_medr"] == 1.0


def test_constant_scores_are_not_perfect():
    assert retrieval_recall(np.zeros((3, 6)), IOC, ks=(1,))["t2i_r1"] == 0.0


# NCS: 2 images x 2 captions
IOC2 = np.array([0, 0, 1, 1])
REL2 = np.array([[1.0, 0.6, 0.8, 0.3], [0.2, 0.0, 1.0, 0.9]])
SIM2 = np.array([[0.9, 0.1, 0.2, 0.8], [0.0, 0.1, 0.5, 0.7]])


def test_ncs_paper_vs_reference_by_hand():
    # image 0 ranks c0 c3 c2 c1; ideal top-2 {c0 (1.0), c2 (0.8)}.
    #   K=2 paper: c3 is outside the ideal set -> 1.0 / 1.8; reference: mean(1.0, .3) / mean(1.0, .8)
    #   K=1 both: 1.0 / 1.0
    # image 1 ranks c3 c2 c1 c0; ideal {c2 (1.0), c3 (.9)}.
    #   K=2 both 1.0;  K=1 paper: c3 is not the top item -> 0; reference: .9 / 1.0
    p = ncs(SIM2, REL2, IOC2, ks=(1, 2), mode="paper")
    r = ncs(SIM2, REL2, IOC2, ks=(1, 2), mode="reference")
    assert p["i2t_n2"] == pytest.approx(100 * (1 / 1.8 + 1) / 2)
    assert r["i2t_n2"] == pytest.approx(100 * (0.65 / 0.9 + 1) / 2, rel=1e-8)
    assert p["i2t_n1"] == pytest.approx(50.0)
    assert r["i2t_n1"] == pytest.approx(95.0, rel=1e-8)
    assert p["nsum"] == pytest.approx(sum(v for k, v in p.items() if k != "nsum"))


def test_ncs_without_gt_items():
    # image 0 without its captions: gallery {c2, c3}, ranked c3 (.8) c2 (.2); ideal top-1 is c2 (.8)
    # image 1 without its captions: gallery {c0, c1}, ranked c1 c0; ideal c0 (.2)
    p = ncs(SIM2, REL2, IOC2, ks=(1,), mode="paper", include_gt=False)
    r = ncs(SIM2, REL2, IOC2, ks=(1,), mode="reference", include_gt=False)
    assert p["i2t_n1"] == 0.0
    assert r["i2t_n1"] == pytest.approx(100 * (0.3 / 0.8 + 0.0 / 0.2) / 2, rel=1e-8)


def test_reference_quirks_pinned():
    # perfect ranking: paper 100, reference 100 * x / (x + 1e-10)
    p = ncs(REL2, REL2, IOC2, ks=(1,), mode="paper")
    r = ncs(REL2, REL2, IOC2, ks=(1,), mode="reference")
    assert p["i2t_n1"] == 100.0 and p["t2i_n1"] == 100.0
    assert r["i2t_n1"] == pytest.approx(100 * 1 / (1 + 1e-10), abs=1e-12) and r["i2t_n1"] < 100.0
    # a query with zero relevance everywhere: skipped by the paper mode, scored 0 by the reference
    rel = REL2.copy()
    rel[1] = 0.0
    assert ncs(SIM2, rel, IOC2, ks=(1,), mode="paper")["i2t_n1"] == 100.0  # only image 0 counts
    assert ncs(SIM2, rel, IOC2, ks=(1,), mode="reference")["i2t_n1"] == pytest.approx(50.0, rel=1e-8)


def test_perfect_ranking_gives_100_recall_and_paper_ncs_with_ties():
    rng = np.random.default_rng(0)
    ioc = np.repeat(np.arange(20), 5)
    rel = np.round(rng.random((20, 100)), 1)  # many ties
    rel[ioc, np.arange(100)] = 1.0
    sims = rel + 10.0 * (ioc[None, :] == np.arange(20)[:, None])  # GT first, then by relevance
    assert retrieval_recall(sims, ioc)["rsum"] == 600.0
    assert ncs(rel, rel, ioc, mode="paper")["nsum"] == pytest.approx(600.0)
    assert ncs(sims, rel, ioc, mode="paper")["nsum"] == pytest.approx(600.0)  # ties among rel = 1 items


def test_semantic_recall_by_hand():
    # without GT: image 0 retrieves c3 first, its most relevant non-GT caption is c2; image 1 retrieves
    # c1 first, its most relevant non-GT caption is c0
    sr = semantic_recall(SIM2, REL2, IOC2, k=1, m=1)
    assert sr["i2t_sr1"] == 0.0
    i2t = {"directions": ("i2t",)}  # the t2i gallery without the GT image has 1 item: K=2 would not fit
    assert semantic_recall(SIM2, REL2, IOC2, k=2, m=1, **i2t) == {"i2t_sr2": 100.0, "i2t_skipped": 0}
    # m=2: image 0's set {c2, c3} holds its first retrieved c3 -> 1 hit of 2; image 1's non-GT c1 has
    # relevance 0, so its set is {c0} alone and its first retrieved c1 is no hit (counting zeros: 100 / 50)
    assert semantic_recall(SIM2, REL2, IOC2, k=1, m=2, kind="first_hit", **i2t)["i2t_sr1"] == 50.0
    assert semantic_recall(SIM2, REL2, IOC2, k=1, m=2, **i2t)["i2t_sr1"] == 25.0
    with pytest.raises(ValueError, match="larger than"):
        semantic_recall(SIM2, REL2, IOC2, k=2, m=1)


def test_semantic_recall_never_counts_zero_relevance():
    # only GT entries relevant: every non-GT item has relevance 0, so no query has a relevant item
    ioc = np.repeat(np.arange(4), 2)
    rel = (ioc[None, :] == np.arange(4)[:, None]).astype(float)
    sims = np.random.default_rng(0).random((4, 8))
    sr = semantic_recall(sims, rel, ioc, k=2, m=1)
    assert np.isnan(sr["i2t_sr2"]) and np.isnan(sr["t2i_sr2"])   # was 100 both ways
    assert sr["i2t_skipped"] == 4 and sr["t2i_skipped"] == 8
    # one relevant non-GT item for image 0 (c2), m=3: |G~_0| = 1, and the zeros image 0 retrieves never hit
    rel[0, 2] = 0.5
    sims = np.zeros((4, 8))
    sims[0, [2, 4, 6]] = [0.9, 0.8, 0.7]                              # c2 first, then two zero-relevance items
    sr = semantic_recall(sims, rel, ioc, k=3, m=3, directions=("i2t",))
    assert sr == {"i2t_sr3": 100.0, "i2t_skipped": 3}
    sims[0, 2] = -1.0                                                 # c2 out of the top 3: no hit at all
    assert semantic_recall(sims, rel, ioc, k=3, m=3, directions=("i2t",))["i2t_sr3"] == 0.0


def test_random_retriever_scores_chance_on_sparse_relevance():
    # scene-graph-F1-like relevance: most non-GT entries are 0; a random retriever must score about k/n
    rng = np.random.default_rng(3)
    n, k = 300, 5
    ioc = np.repeat(np.arange(n), 5)
    rel = rng.random((n, 5 * n)) * (rng.random((n, 5 * n)) < 0.01)
    rel[ioc, np.arange(5 * n)] = 1.0
    sims = rng.random((n, 5 * n))
    sr = semantic_recall(sims, rel, ioc, k=k, m=1, directions=("t2i",))
    assert sr["t2i_skipped"] > 0
    assert sr["t2i_sr5"] == pytest.approx(100 * k / (n - 1), rel=0.35)   # ~1.7, not inflated by the zeros


# the public ncs_metric code's Semantic Recall: 3 images x 2 captions
IOC3 = np.repeat(np.arange(3), 2)
REL3 = np.array([[1.0, 1.0, 0.2, 0.0, 0.5, 0.0],
                 [0.6, 0.0, 1.0, 1.0, 0.1, 0.3],
                 [0.0, 0.4, 0.0, 0.3, 1.0, 1.0]])
# non-GT top-1: image 0 -> c4, image 1 -> c0, image 2 -> c1; captions c0..c5 -> images 1 2 0 2 0 1
SIM3 = np.array([[9.0, 9.0, 0.5, 0.1, 0.9, 0.2],
                 [0.9, 0.1, 9.0, 9.0, 0.3, 0.4],
                 [0.1, 0.9, 0.2, 0.3, 9.0, 9.0]])


def test_semantic_recall_reference_mode_by_hand():
    # paper mode, m=1: each query's own most relevant non-GT item; SIM3 retrieves exactly those
    p = semantic_recall(SIM3, REL3, IOC3, k=1, m=1)
    assert p["i2t_sr1"] == 100.0 and p["t2i_sr1"] == 100.0
    # reference, pool 2: each caption's top-2 images, summed over the image's captions, self dropped:
    #   image 0 (c0, c1): {0: 2.0, 1: .6, 2: .4} -> R_0 = {1};  image 1 (c2, c3): {0: .2, 2: .3} -> {2};
    #   image 2 (c4, c5): {0: .5, 1: .3} -> {0}
    r = semantic_recall(SIM3, REL3, IOC3, k=1, m=1, mode="reference", pool=2)
    # t2i: a caption's set is its image's: c0 (1 in R_0) hit, c1 (2) miss, c2 (0 not in R_1) miss, c3 hit,
    # c4 hit, c5 (1 not in R_2) miss -> 50, where the paper mode gives 100
    assert r["t2i_sr1"] == pytest.approx(50.0)
    # i2t: targets are both captions of each image in R_i, over 2m = 2; image 0 retrieves c4 (image 2,
    # not R_0) 0, image 1 retrieves c0 (image 0, not R_1) 0, image 2 retrieves c1 (image 0 = R_2) 1/2
    assert r["i2t_sr1"] == pytest.approx(100 * 0.5 / 3)
    assert r["i2t_skipped"] == r["t2i_skipped"] == 0
    # i2t tops out at 100/captions-per-image at k=1 even for the ideal ranking of the reference's own sets
    ideal = np.zeros((3, 6))
    ideal[[0, 0, 1, 1, 2, 2], [2, 3, 4, 5, 0, 1]] = [2, 1, 2, 1, 2, 1]
    assert semantic_recall(ideal, REL3, IOC3, k=1, m=1, mode="reference", pool=2)["i2t_sr1"] == pytest.approx(50.0)
    assert semantic_recall(ideal, REL3, IOC3, k=2, m=1, mode="reference", pool=2)["i2t_sr2"] == pytest.approx(100.0)
    # zeros may fill the reference set: no query is skipped even where the paper mode skips
    only_gt = (IOC3[None, :] == np.arange(3)[:, None]).astype(float)
    assert semantic_recall(SIM3, only_gt, IOC3, k=1, m=1, mode="reference")["t2i_skipped"] == 0
    assert semantic_recall(SIM3, only_gt, IOC3, k=1, m=1)["t2i_skipped"] == 6


def test_semantic_recall_falls_while_hit_recall_rises_with_m():
    rng = np.random.default_rng(1)
    ioc = np.repeat(np.arange(50), 5)
    rel = rng.random((50, 250))
    sims = rel + 0.6 * rng.standard_normal((50, 250))
    ir = [semantic_recall(sims, rel, ioc, k=5, m=m)["i2t_sr5"] for m in (1, 5, 20)]
    hit = [semantic_recall(sims, rel, ioc, k=5, m=m, kind="first_hit")["i2t_sr5"] for m in (1, 5, 20)]
    assert hit[0] <= hit[1] <= hit[2]
    assert ir[2] < hit[2]


def test_ndcg_by_hand_with_teran_quirks():
    ioc = np.arange(4)
    rel = np.zeros((4, 4))
    rel[0] = [1.0, 0.5, 0.0, 0.0]
    sims = np.zeros((4, 4))
    sims[0] = [0.1, 0.9, 0.5, 0.0]  # ranks c1 (.5), c2 (0), c0 (1.0)
    dcg = (2 ** 0.5 - 1) / 1 + 0 / np.log2(3) + 1 / np.log2(4)
    idcg = 1 / 1 + (2 ** 0.5 - 1) / np.log2(3)
    # percent, like every metric (TERAN prints the fraction)
    assert ndcg(sims, rel, ioc, k=3)["i2t_ndcg3"] == pytest.approx(100 * dcg / idcg)  # zero-NDCG queries left out
    assert ndcg(sims, rel, ioc, k=3, exclude_zero=False)["i2t_ndcg3"] == pytest.approx(100 * dcg / idcg / 4)
    lin = (0.5 + 1.0 / 2) / (1.0 + 0.5 / np.log2(3))
    assert ndcg(sims, rel, ioc, k=3, gain="linear")["i2t_ndcg3"] == pytest.approx(100 * lin)
    assert ndcg(rel, rel, ioc, k=3)["i2t_ndcg3"] == 100.0
    assert set(ndcg(rel, rel, ioc, k=3)) == {"i2t_ndcg3", "t2i_ndcg3"}


def test_map_at_r_by_hand():
    ioc = np.array([0, 0, 0])
    pos = np.array([[1, 0, 1]])
    sims = np.array([[0.2, 0.3, 0.9]])  # ranks c2 (pos), c1, c0 (pos); R = 2
    m = map_at_r(sims, pos, ioc)
    assert m["i2t_map_at_r"] == pytest.approx(50.0) and m["i2t_r_precision"] == pytest.approx(50.0)
    assert r_precision(sims, pos, ioc)["i2t_r_precision"] == pytest.approx(50.0)
    assert (m["i2t_queries"], m["t2i_queries"]) == (1, 2)      # captions 0 and 2 are the transpose's queries


def test_map_at_r_reads_caption_queries_of_their_own_by_hand():
    """Two images, two captions. Image queries: image 0's positive is caption 0. Caption queries (their own set):
    only caption 1, whose positives are images 0 and 1: found in its top 2, 100. The transpose asks caption 0 for
    image 0 instead (R = 1): ranked second, 0."""
    ioc = np.array([0, 1])
    sims = np.array([[0.9, 0.4], [0.1, 0.8]])
    i2t, t2i = np.array([[1, 0], [0, 0]]), np.array([[0, 1], [0, 1]])
    own = map_at_r(sims, i2t, ioc, t2i)
    assert own["t2i_map_at_r"] == pytest.approx(100.0) and own["t2i_queries"] == 1
    sims_bad = np.array([[0.1, 0.4], [0.9, 0.8]])   # caption 0 now ranks image 1 first
    assert map_at_r(sims_bad, i2t, ioc)["t2i_map_at_r"] == 0.0 and map_at_r(sims_bad, i2t, ioc, t2i)["t2i_map_at_r"] == 100
    with pytest.raises(ValueError, match="t2i_positives must have the shape"):
        map_at_r(sims, i2t, ioc, np.ones((1, 2)))


def test_map_at_r_matches_eccv_caption():
    from eccv_caption._metrics import compute_eccv_metrics

    rng = np.random.default_rng(3)
    ioc = np.repeat(np.arange(40), 5)
    sims = rng.standard_normal((40, 200))
    pos = (rng.random((40, 200)) < 0.04)
    pos[ioc, np.arange(200)] = True
    mine = map_at_r(sims, sp.csr_matrix(pos), ioc)
    for d, s, p in (("i2t", sims, pos), ("t2i", sims.T, pos.T)):
        ranked = {q: list(np.argsort(-s[q], kind="stable")) for q in range(s.shape[0])}
        gts = {q: list(np.flatnonzero(p[q])) for q in range(s.shape[0]) if p[q].any()}
        ref = compute_eccv_metrics(ranked, gts)
        assert mine[f"{d}_map_at_r"] == pytest.approx(100 * ref["eccv_map_at_r"], abs=1e-9)
        assert mine[f"{d}_r_precision"] == pytest.approx(100 * ref["eccv_rprecision"], abs=1e-9)


def test_coco_1k_is_the_mean_of_five_folds():
    rng = np.random.default_rng(4)
    ioc = np.repeat(np.arange(50), 5)
    sims = rng.standard_normal((50, 250))
    one = coco_1k(retrieval_recall, sims, ioc)
    folds = [retrieval_recall(sims[10 * k:10 * k + 10, 50 * k:50 * k + 50], np.repeat(np.arange(10), 5))
             for k in range(5)]
    assert one["rsum"] == pytest.approx(np.mean([f["rsum"] for f in folds]))
    rel = rng.random((50, 250))
    two = coco_1k(ncs, sims, ioc, rel)
    assert two["nsum"] == pytest.approx(np.mean([ncs(sims[10 * k:10 * k + 10, 50 * k:50 * k + 50],
                                                      rel[10 * k:10 * k + 10, 50 * k:50 * k + 50],
                                                      np.repeat(np.arange(10), 5))["nsum"] for k in range(5)]))


@pytest.mark.parametrize("fn", [lambda s, i: retrieval_recall(s, i, ks=(1,)),
                                lambda s, i: ncs(s, np.ones(s.shape) if s.ndim == 2 else s, i, ks=(1,)),
                                lambda s, i: ndcg(s, np.ones(s.shape) if s.ndim == 2 else s, i, k=1)])
def test_bad_input(fn):
    with pytest.raises(ValueError, match="2-D"):
        fn(np.zeros(6), IOC)
    bad = S.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        fn(bad, IOC)
    with pytest.raises(ValueError, match="outside"):
        fn(S, np.array([0, 0, 1, 1, 2, 3]))
    with pytest.raises(ValueError, match="one entry per caption"):
        fn(S, IOC[:5])


def test_k_larger_than_gallery():
    with pytest.raises(ValueError, match="larger than"):
        retrieval_recall(S, IOC, ks=(1, 5))  # t2i gallery: 3 images
    with pytest.raises(ValueError, match="larger than"):
        ncs(SIM2, REL2, IOC2, ks=(3,), include_gt=False)
    with pytest.raises(ValueError, match="larger than"):
        ndcg(SIM2, REL2, IOC2, k=25)
    with pytest.raises(ValueError, match="relevance must have the shape"):
        ncs(SIM2, REL2[:, :3], IOC2, ks=(1,))
    with pytest.raises(ValueError, match="mode must be one of"):
        ncs(SIM2, REL2, IOC2, ks=(1,), mode="soft")


def test_one_direction_only():
    r = retrieval_recall(S, IOC, ks=(1, 5), directions=("i2t",))
    assert set(r) == {"i2t_r1", "i2t_r5", "rsum", "i2t_medr", "i2t_meanr"}
    assert r["rsum"] == r["i2t_r1"] + r["i2t_r5"]
    assert r["i2t_r1"] == retrieval_recall(S, IOC, ks=(1,))["i2t_r1"]


def test_topk_helpers_match_a_full_sort_under_ties():
    from itmlib.metrics._ranking import topk_indices, topk_values

    rng = np.random.default_rng(7)
    a = np.round(rng.random((50, 40)), 1)
    for k in (1, 3, 10, 40):
        full = np.argsort(-a, axis=1, kind="stable")[:, :k]
        assert np.array_equal(topk_indices(a, k), full)
        assert np.array_equal(topk_values(a, k), np.take_along_axis(a, full, axis=1))


def test_figure3_table_pattern_and_chance_control():
    from itmlib.papers.ncs_sam import figure3_runs, figure3_table
    from itmlib.course.retrievers import random_scores

    rng = np.random.default_rng(5)
    n = 120
    ioc = np.repeat(np.arange(n), 5)
    rel = rng.random((n, 5 * n)) ** 4
    rel[ioc, np.arange(5 * n)] = 1.0
    good = rel + 0.05 * rng.standard_normal(rel.shape)     # ranks by relevance, a little noise
    fig3 = figure3_table({"random": random_scores(n, 5 * n, seed=1), "good": good}, rel, ioc, k=5, m_values=(1, 3, 5))
    g = fig3[fig3.retriever == "good"].set_index("m")
    assert g["R@5 (any of m)"][5] >= g["R@5 (any of m)"][1] and g["SR@5"][5] < g["SR@5"][1]
    r = fig3[fig3.retriever == "random"].set_index("m")
    assert r["SR@5"].between(100 * 5 / n / 3, 100 * 5 / n * 3).all()   # chance ~ k / n whatever m
    runs = figure3_runs(fig3)
    assert set(runs.retriever) == {"good"} and runs.method.tolist() == ["smallest m", "largest m"]
    assert runs.semantic_recall.tolist() == [g["SR@5"][1], g["SR@5"][5]]
