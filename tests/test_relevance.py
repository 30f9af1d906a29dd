"""CIDEr-D / ROUGE-L against pycocoevalcap on real COCO captions; scene-graph F1 by hand; the cache."""

import numpy as np
import pytest
from pycocoevalcap.cider.cider_scorer import CiderScorer
from pycocoevalcap.rouge.rouge import Rouge

from itmlib.paths import repo_root
from itmlib.data import load_dataset
from itmlib.relevance import (DocumentFrequency, RelevanceCache, cider_d_matrix, cider_d_pairs, relevance_matrix,
                              rouge_l_matrix, scene_graph_f1_matrix)
from itmlib.relevance.rouge import lcs_length, lcs_matrix
from itmlib.relevance.scene_graph import (parse_tuples, spice_status, tuples_from_sng, tuples_from_spice_json)


@pytest.fixture(scope="module")
def coco():
    ds = load_dataset("coco", "test1k-1")
    refs = [[c.lower() for c in ds.captions_of(i)] for i in range(300)]
    return refs, [c for g in refs for c in g]


def _pycoco_cider(pairs, refs, cands):
    """pycocoevalcap's Cider on (image, candidate) pairs, its document frequency over ``refs``."""
    out = []
    by_pos = {}
    # one scorer per permutation: every image once, so df and ref_len come from all of refs
    rng = np.random.default_rng(0)
    for _ in range(int(np.ceil(len(pairs) / len(refs)))):
        perm = rng.permutation(len(cands))[:len(refs)]
        sc = CiderScorer(n=4, sigma=6.0)
        for i in range(len(refs)):
            sc += (cands[perm[i]], refs[i])
        _, scores = sc.compute_score()
        for i in range(len(refs)):
            by_pos[(i, int(perm[i]))] = scores[i]
            out.append((i, int(perm[i]), scores[i]))
    return out


def test_cider_d_equals_pycocoevalcap_on_1200_real_pairs(coco):
    refs, cands = coco
    mat = cider_d_matrix(refs, cands)
    checked = _pycoco_cider(range(1200), refs, cands)
    assert len(checked) >= 1000
    diff = max(abs(mat[i, j] - s) for i, j, s in checked)
    assert diff < 1e-9
    # the ground-truth caption is one of its own image's references (the NCS code's convention)
    sc = CiderScorer(n=4, sigma=6.0)
    for i in range(len(refs)):
        sc += (cands[5 * i], refs[i])
    _, own = sc.compute_score()
    assert np.allclose(mat[np.arange(len(refs)), 5 * np.arange(len(refs))], own, atol=1e-9)


def test_cider_d_with_training_document_frequencies(coco):
    refs, cands = coco
    train, test = refs[:150], refs[150:]
    df = DocumentFrequency.from_refs(train)
    mat = cider_d_matrix(test, cands[:750], df)
    # pycocoevalcap with the same df: inject it, with as many items as training documents (its ref_len)
    rng = np.random.default_rng(1)
    pick = rng.integers(0, 750, size=150)
    sc = CiderScorer(n=4, sigma=6.0)
    for i in range(150):
        sc += (cands[pick[i]], test[i])
    sc.document_frequency.update(df.counts)
    got = sc.compute_cider()
    assert np.allclose(mat[np.arange(150), pick], got, atol=1e-9)
    assert not np.allclose(mat, cider_d_matrix(test, cands[:750]))  # the df source matters


def test_cider_d_pairs_and_edge_cases():
    refs = [["a dog runs", "a brown dog runs fast"], ["a red car", "the car is red"]]
    cands = ["a dog runs", "red car", "zebra"]
    full = cider_d_matrix(refs, cands)
    assert full.shape == (2, 3) and full[:, 2].tolist() == [0.0, 0.0]  # unseen words score 0
    df = DocumentFrequency.from_refs(refs)
    assert np.allclose(cider_d_pairs(refs, cands, [(0, 0), (1, 1), (1, 0)], df), full[[0, 1, 1], [0, 1, 0]])
    assert df.counts[("dog",)] == 1 and df.counts[("a",)] == 2 and df.n_documents == 2
    with pytest.raises(ValueError, match="refs\\[1\\] must be a non-empty list"):
        cider_d_matrix([["x"], []], ["x"])
    with pytest.raises(ValueError, match="not one string"):
        cider_d_matrix(refs, "a dog")
    with pytest.raises(ValueError, match="exceeds the number of documents"):
        DocumentFrequency({("a",): 3.0}, 2)


def test_rouge_l_equals_pycocoevalcap(coco):
    refs, cands = coco
    mat = rouge_l_matrix(refs, cands)
    r = Rouge()
    rng = np.random.default_rng(2)
    for _ in range(1000):
        i, j = int(rng.integers(len(refs))), int(rng.integers(len(cands)))
        assert abs(mat[i, j] - r.calc_score([cands[j]], refs[i])) < 1e-9


def test_rouge_l_long_sentences_and_split_quirk():
    long_a = " ".join(f"w{k % 7}" for k in range(80))   # > 64 tokens: the roles swap
    long_b = " ".join(f"w{k % 5}" for k in range(70))
    refs = [[long_a, "w1 w2  w3"], ["w3 w1", long_b]]
    cands = ["w1 w2 w3 w4", long_b, "w1  w2", "", long_a]
    mat = rouge_l_matrix(refs, cands)
    r = Rouge()
    for i in range(2):
        for j in range(5):
            assert mat[i, j] == pytest.approx(r.calc_score([cands[j]], refs[i]), abs=1e-12), (i, j)


def test_bit_parallel_lcs_equals_dynamic_programming():
    rng = np.random.default_rng(3)
    a = [rng.integers(0, 6, size=rng.integers(0, 65)) for _ in range(40)]
    b = [rng.integers(0, 6, size=rng.integers(0, 30)) for _ in range(30)]
    got = lcs_matrix(a, b, 6)
    for j in range(30):
        for i in range(40):
            assert got[j, i] == lcs_length(list(a[i]), list(b[j]))


def test_scene_graph_f1_by_hand():
    refs = [[[("dog",), ("dog", "brown"), ("car",)], [("dog",), ("dog", "left of", "car")]],
            [[("cat",)]]]
    cands = [[("dog",), ("dog", "black")], [("cat",)], []]
    f = scene_graph_f1_matrix(refs, cands)
    # image 0 has 4 tuples; candidate 0 matches 1 of its 2: P = 1/2, R = 1/4, F1 = 1/3
    assert f[0, 0] == pytest.approx(1 / 3)
    assert f[1, 1] == 1.0 and f[0, 1] == 0.0 and f[:, 2].tolist() == [0.0, 0.0]


def test_tuples_from_a_scene_graph_parser_graph():
    g = {"entities": [{"lemma_head": "Man", "modifiers": [{"dep": "det", "lemma_span": "a"},
                                                          {"dep": "amod", "lemma_span": "tall"}]},
                      {"lemma_head": "horse", "modifiers": [{"dep": "nummod", "lemma_span": "two"}]}],
         "relations": [{"subject": 0, "object": 1, "relation": "riding", "lemma_relation": "ride"}]}
    assert tuples_from_sng(g) == [("horse",), ("horse", "two"), ("man",), ("man", "ride", "horse"),
                                  ("man", "tall")]


def test_spacy_backend_parses_offline():
    t = parse_tuples(["two brown dogs chasing a ball", "two brown dogs chasing a ball"])
    assert t[0] == t[1] and ("dog", "brown") in t[0] and ("ball",) in t[0]


def test_spacy_backend_without_ner_gives_the_full_pipelines_graphs():
    """The backend turns spaCy's entity recogniser off for speed; the graphs must not change."""
    import sng_parser

    from itmlib.relevance.scene_graph import _spacy_parser

    caps = ["A man in a red shirt rides a horse past two old buildings in Paris.",
            "Three children play soccer on a green field near New York City.",
            "A plate with a sandwich and fries sits on a wooden table next to a Coca Cola can.",
            "Two giraffes standing next to each other in a zoo enclosure."]
    assert "ner" in _spacy_parser(None).unwrapped.nlp.disabled
    full = sng_parser.Parser("spacy", model=_spacy_parser(None).unwrapped.model)
    assert "ner" not in full.unwrapped.nlp.disabled
    assert parse_tuples(caps) == [tuples_from_sng(full.parse(c)) for c in caps]


def test_gold_backend_and_bad_backend():
    g = [{"objects": ["dog", "car"], "attributes": [[0, "brown"]], "relations": [[0, "left_of", 1]]}]
    assert parse_tuples(["x"], "gold", graphs=g) == [[("car",), ("dog",), ("dog", "brown"), ("dog", "left_of", "car")]]
    with pytest.raises(ValueError, match="backend must be one of"):
        parse_tuples(["x"], "stanza")
    with pytest.raises(ValueError, match="one gold graph per caption"):
        parse_tuples(["x", "y"], "gold", graphs=g)


def test_spice_status_says_why_and_spice_json_parses():
    ok, why = spice_status()
    if not ok:
        assert why.startswith("SPICE unavailable") and "scene-graph F1" in why
        assert str(repo_root()) not in why and "/site-packages/" not in why    # a reader sees no machine's paths
        with pytest.raises(RuntimeError, match="SPICE unavailable"):
            parse_tuples(["a dog"], "spice")
    items = [{"image_id": 7, "test_tuples": [{"tuple": ["Dog"], "truth_value": True},
                                             {"tuple": ["dog", "brown"], "truth_value": False}]}]
    assert tuples_from_spice_json(items) == {7: [("dog",), ("dog", "brown")]}


def test_cache_resumes_and_is_keyed_by_inputs_and_settings(tmp_path, coco):
    refs, cands = coco
    refs, cands = refs[:40], cands[:200]
    cache = RelevanceCache(tmp_path)
    calls = []

    def flaky(rows):
        calls.append(rows.start)
        if len(calls) == 2:
            raise KeyboardInterrupt  # interrupted after the first block
        return cider_d_matrix(refs[rows], cands, DocumentFrequency.from_refs(refs))

    with pytest.raises(KeyboardInterrupt):
        cache.matrix("cider_d", {"df": "from refs"}, refs, cands, flaky, block=15)
    done = cache.matrix("cider_d", {"df": "from refs"}, refs, cands, flaky, block=15)
    assert calls == [0, 15, 15, 30]  # the first block was not recomputed
    assert np.allclose(done, cider_d_matrix(refs, cands))
    meta = cache.meta("cider_d", {"df": "from refs"}, refs, cands)
    assert meta["metric"] == "cider_d" and meta["settings"] == {"df": "from refs"} and meta["n_images"] == 40
    assert cache.entry("cider_d", {"df": "train"}, refs, cands) != cache.entry("cider_d", {"df": "from refs"}, refs, cands)
    assert cache.entry("cider_d", {}, refs, cands[:-1] + ["other"]) != cache.entry("cider_d", {}, refs, cands)
    # the convenience wrapper gives the same matrix cached and uncached
    a = relevance_matrix("rouge_l", refs, cands, cache=cache)
    assert np.array_equal(a, relevance_matrix("rouge_l", refs, cands, cache=False))


def test_a_complete_cached_matrix_is_mapped_copy_on_write(tmp_path):
    """Read back from one file mapped into memory (pool workers share its pages): equal to what was computed, a
    plain writeable ndarray, and a write stays in the process - the next read sees the file's values."""
    cache = RelevanceCache(tmp_path)
    want = np.arange(12.0).reshape(3, 4)
    calls = []

    def compute(rows):
        calls.append(rows.start)
        return want[rows]

    a = cache.matrix("m", {}, [["x"]] * 3, ["c"] * 4, compute, block=2)
    assert type(a) is np.ndarray and np.array_equal(a, want) and a.flags.writeable and not a.flags.owndata
    assert (cache.entry("m", {}, [["x"]] * 3, ["c"] * 4) / "matrix.npy").is_file()
    a[0, 0] = -1.0
    b = cache.matrix("m", {}, [["x"]] * 3, ["c"] * 4, compute, block=2)
    assert calls == [0, 2] and b[0, 0] == 0.0 and np.array_equal(b, want)


def test_cider_index_pairs_equal_the_matrix(coco):
    from itmlib.relevance import CiderDIndex

    refs, cands = coco
    idx = CiderDIndex(refs[:60], cands[:400], DocumentFrequency.from_refs(refs))
    full = idx.matrix()
    rng = np.random.default_rng(9)
    i, j = rng.integers(0, 60, 500), rng.integers(0, 400, 500)
    assert np.allclose(idx.pairs(i, j), full[i, j], atol=1e-12)
    with pytest.raises(ValueError, match="pair up"):
        idx.pairs(i[:3], j[:4])
