"""Triplet and SAM losses on hand-made batches, both SAM modes, sampling, gradients, bad knobs."""

import numpy as np
import pytest
import torch

from itmlib.losses import SAMConfig, batch_phi, sam_loss, sample_negatives, triplet_loss
from itmlib.losses.triplet import positive_mask_from_ids

S = torch.tensor([[0.9, 0.5, 0.1], [0.2, 0.8, 0.4], [0.35, 0.55, 0.7]], dtype=torch.float64)
P = np.array([[4.0, 1.0, 0.0], [0.5, 3.0, 2.0], [0.0, 1.5, 5.0]])  # φ(G_p, c): row p, column caption c


def phi(p, c):
    return P[np.asarray(p), np.asarray(c)]


def test_triplet_by_hand():
    # image anchors, hardest negative captions: row0 .5, row1 .4, row2 .55 -> [.2+.5-.9]+ [.2+.4-.8]+ [.2+.55-.7]+
    # caption anchors, hardest negative images: col0 .35, col1 .55, col2 .4 -> [.2+.35-.9]+ [.2+.55-.8]+ [.2+.4-.7]+
    assert triplet_loss(S).item() == pytest.approx(0.05)
    # sum over all negatives: rows (0 + 0 + 0.05 + ...) computed explicitly
    m = 0.2
    c = (m + S - S.diagonal()[:, None]).clamp(min=0).fill_diagonal_(0).sum()
    i = (m + S - S.diagonal()[None, :]).clamp(min=0).fill_diagonal_(0).sum()
    assert triplet_loss(S, max_violation=False).item() == pytest.approx((c + i).item())
    # two captions of the same image are not negatives of each other
    same = positive_mask_from_ids(torch.tensor([0, 0, 1]))
    s2 = S.clone()
    s2[0, 1] = 0.95  # caption 1 outscores image 0's own caption: a violation, unless caption 1 is image 0's too
    assert triplet_loss(s2, max_violation=False).item() == pytest.approx(0.05 + 0.25 + 0.35)
    assert triplet_loss(s2, positive_mask=same, max_violation=False).item() == pytest.approx(0.05)


def test_sam_paper_mode_by_hand():
    # hard negatives: captions [1, 2, 1] for images 0-2; images [2, 2, 1] for captions 0-2
    # a_i2t = (P[p,p] - P[p, neg_i[p]]) / 5 = [.8, .2, .7];  a_t2i = (P[p,p] - P[p, neg_c[p]]) / 5 = [.6, .2, .7]
    # i2t: [.8+.5-.9]+ [.2+.4-.8]+ [.7+.55-.7]+ = .4, 0, .55;  t2i: [.6+.35-.9]+ [.2+.55-.8]+ [.7+.4-.7]+ = .05, 0, .4
    loss, d = sam_loss(S, phi, SAMConfig(tau=5.0, sampling="hard", sam_mode="paper"))
    assert d["neg_c"].tolist() == [1, 2, 1] and d["neg_i"].tolist() == [2, 2, 1]
    assert d["margin_i2t"].tolist() == pytest.approx([0.8, 0.2, 0.7])
    assert d["margin_t2i"].tolist() == pytest.approx([0.6, 0.2, 0.7])
    assert loss.item() == pytest.approx(1.4)


def test_sam_reference_mode_by_hand():
    # reference "soft" = second-largest cost: captions [1, 2, 1], images [1, 2, 1]
    # margins (clamped at 1): margin_s = (pos - P[k, neg_i[k]]) / 5 = [.6, .2, .7], margin_im = [.6, .2, .7]
    # broadcast per column: cost_s[0, 1] = -.4 + margin_s[1] = -.2 -> 0; cost_s[1, 2] = -.4 + .7 = .3;
    # cost_s[2, 1] = -.15 + .2 = .05; cost_im[0, 1] = -.3 + .2 -> 0; cost_im[1, 2] = -.3 + .7 = .4;
    # cost_im[2, 1] = -.25 + .2 -> 0
    loss, d = sam_loss(S, phi, SAMConfig(tau=5.0, sampling="soft", sam_mode="reference"))
    assert d["neg_c"].tolist() == [1, 2, 1] and d["neg_i"].tolist() == [1, 2, 1]
    assert loss.item() == pytest.approx(0.75)
    # the applied margin is the one of the *column* (broadcasting): row 0 gets margin_s[1] = .2, not .6
    assert d["margin_i2t"].tolist() == pytest.approx([0.2, 0.7, 0.2])


def test_reference_clamps_margins_at_one_paper_does_not():
    _, d_ref = sam_loss(S, phi, SAMConfig(tau=0.5, sampling="soft", sam_mode="reference"))
    _, d_pap = sam_loss(S, phi, SAMConfig(tau=0.5, sampling="hard", sam_mode="paper"))
    assert d_ref["margin_i2t"].max().item() == 1.0
    assert d_pap["margin_i2t"].max().item() == pytest.approx(8.0)  # (4 - 0) / .5


def test_each_sampling_picks_the_expected_negative():
    s = torch.tensor([[0.9, 0.6, 0.1, 0.3],
                      [0.2, 0.8, 0.5, 0.4],
                      [0.7, 0.1, 0.6, 0.2],
                      [0.3, 0.2, 0.4, 0.95]])
    c, i = sample_negatives(s, "hard", "paper")
    assert c.tolist() == [1, 2, 0, 2] and i.tolist() == [2, 0, 1, 1]       # closest non-positive
    c, i = sample_negatives(s, "soft", "paper")
    assert c.tolist() == [2, 0, 1, 1] and i.tolist() == [1, 2, 0, 2]       # furthest
    # the reference code: "hard" = second-smallest cost, "soft" = second-largest
    c, _ = sample_negatives(s, "hard", "reference")
    assert c.tolist() == [3, 3, 3, 0]
    c, _ = sample_negatives(s, "soft", "reference")
    assert c.tolist() == [1, 2, 2, 2]  # row 2: caption 0 already violates, so the second largest is the positive
    # a violating negative: the reference "soft" returns the positive itself
    v = s.clone()
    v[0, 1] = 0.95
    assert sample_negatives(v, "soft", "reference")[0][0].item() == 0
    # same-image items are never paper negatives; random never picks a positive
    same = positive_mask_from_ids(torch.tensor([0, 0, 1, 2]))
    assert sample_negatives(s, "hard", "paper", same)[0][0].item() == 3
    g = torch.Generator().manual_seed(0)
    for _ in range(20):
        c, i = sample_negatives(s, "random", "paper", same, g)
        assert not same[torch.arange(4), c].any() and not same[i, torch.arange(4)].any()


def test_zero_loss_when_every_margin_is_met():
    s = torch.eye(3, dtype=torch.float64) * 2.0  # positives 2, negatives 0
    loss, _ = sam_loss(s, phi, SAMConfig(tau=10.0, sampling="hard", sam_mode="paper", keep_triplet=True))
    assert loss.item() == 0.0


def test_gradients_flow_to_both_towers():
    torch.manual_seed(0)
    im = torch.randn(3, 8, dtype=torch.float64, requires_grad=True)
    cap = torch.randn(3, 8, dtype=torch.float64, requires_grad=True)
    scores = torch.nn.functional.normalize(im, dim=1) @ torch.nn.functional.normalize(cap, dim=1).T
    loss, _ = sam_loss(scores, phi, SAMConfig(tau=3.0, sampling="soft", keep_triplet=True))
    loss.backward()
    assert loss.item() > 0 and im.grad.abs().sum() > 0 and cap.grad.abs().sum() > 0


def test_batch_phi_uses_cider_of_the_subset():
    from itmlib.relevance import CiderDIndex, DocumentFrequency

    refs = [["a dog runs", "a brown dog"], ["a red car", "a car on a road"], ["a cat", "a black cat sleeps"]]
    caps = [c for g in refs for c in g]
    idx = CiderDIndex(refs, caps, DocumentFrequency.from_refs(refs))
    f = batch_phi(idx, img_ids=np.array([2, 0]), cap_ids=np.array([5, 1]))
    full = idx.matrix()
    assert np.allclose(f([0, 1, 0], [0, 1, 1]), [full[2, 5], full[0, 1], full[2, 1]])


@pytest.mark.parametrize("kw,match", [({"tau": 0}, "tau"), ({"tau": -1}, "tau"), ({"sampling": "semi"}, "sampling"),
                                      ({"sam_mode": "official"}, "sam_mode")])
def test_bad_knobs(kw, match):
    args = {"tau": 5.0, "sampling": "soft", "sam_mode": "paper"} | kw
    with pytest.raises(ValueError, match=match):
        SAMConfig(**args)


# ----- SAM's controls and variants -----------------------------------------------------

def test_shuffled_phi_keeps_negatives_and_permutes_the_negatives_phi():
    g = lambda: torch.Generator().manual_seed(3)   # noqa: E731
    _, d = sam_loss(S, phi, SAMConfig(tau=5.0, sampling="hard", sam_mode="paper"))
    _, ds = sam_loss(S, phi, SAMConfig(tau=5.0, sampling="hard", sam_mode="paper", phi_control="shuffled"), control_generator=g())
    assert torch.equal(d["neg_c"], ds["neg_c"]) and torch.equal(d["neg_i"], ds["neg_i"])   # same negatives
    perm = torch.randperm(3, generator=g())
    assert torch.equal(ds["phi_m"], d["phi_m"][perm]) and torch.equal(ds["phi_l"], d["phi_l"][perm])
    assert torch.equal(ds["phi_pos"], d["phi_pos"])
    # margins from a constant φ do not care about the shuffle: identical losses
    flat = lambda p, c: np.where(np.asarray(p) == np.asarray(c), 3.0, 1.0)   # noqa: E731
    a, _ = sam_loss(S, flat, SAMConfig(tau=5.0, sampling="hard"))
    b, _ = sam_loss(S, flat, SAMConfig(tau=5.0, sampling="hard", phi_control="shuffled"), control_generator=g())
    assert a.item() == b.item()


def test_sam_over_all_negatives_by_hand():
    # α_pj = (P[p,p] - P[p,j]) / τ; i2t hinge on caption j of image p, t2i hinge on image j for caption p
    tau = 5.0
    alpha = (np.diag(P)[:, None] - P) / tau
    Sn = S.numpy()
    d = np.diag(Sn)
    i2t = np.clip(alpha + Sn - d[:, None], 0, None)
    t2i = np.clip(alpha + Sn.T - d[:, None], 0, None)
    np.fill_diagonal(i2t, 0)
    np.fill_diagonal(t2i, 0)
    loss, det = sam_loss(S, phi, SAMConfig(tau=tau), all_negatives=True)
    assert loss.item() == pytest.approx(i2t.sum() + t2i.sum())
    np.testing.assert_allclose(det["margin"].numpy(), alpha)
    w, _ = sam_loss(S, phi, SAMConfig(tau=tau, sam_weight=5.0), all_negatives=True)
    assert w.item() == pytest.approx(5 * loss.item())
    # the public code's mode warms up the same way, its margins clamped at 1 from above
    # (the 04 grid's -T "ref" members crashed in their warm-up while this mode raised)
    tau = 0.5
    alpha = np.minimum((np.diag(P)[:, None] - P) / tau, 1.0)
    assert ((np.diag(P)[:, None] - P) / tau > 1).any()  # the clamp bites on this example
    i2t = np.clip(alpha + Sn - d[:, None], 0, None)
    t2i = np.clip(alpha + Sn.T - d[:, None], 0, None)
    np.fill_diagonal(i2t, 0)
    np.fill_diagonal(t2i, 0)
    ref, det = sam_loss(S, phi, SAMConfig(tau=tau, sam_mode="reference"), all_negatives=True)
    assert ref.item() == pytest.approx(i2t.sum() + t2i.sum())
    np.testing.assert_allclose(det["margin"].numpy(), alpha)
    assert ref.item() != pytest.approx(sam_loss(S, phi, SAMConfig(tau=tau), all_negatives=True)[0].item())


def test_leave_one_out_phi_drops_the_positive_caption_from_its_references(smoke_split):
    from itmlib.losses import phi_index
    from itmlib.relevance import CiderDIndex, DocumentFrequency

    ds = smoke_split("train", 12)
    index = phi_index(ds)
    img = np.array([0, 0, 3, 5])
    cap = np.flatnonzero(ds.img_of_caption == 0)[:2].tolist() + [int(np.flatnonzero(ds.img_of_caption == 3)[1]),
                                                                  int(np.flatnonzero(ds.img_of_caption == 5)[4])]
    cap = np.array(cap)
    loo = batch_phi(index, img, cap, leave_one_out=True)
    full = batch_phi(index, img, cap)
    refs = [[c.lower() for c in ds.captions_of(i)] for i in range(ds.n_images)]
    df = DocumentFrequency.from_refs(refs)
    for p in range(4):   # by hand: CIDEr-D against G_p minus c_p, with the same document frequencies
        own = ds.captions[cap[p]].lower()
        others = [r for r in refs[img[p]] if r != own]
        want = CiderDIndex([others], [c.lower() for c in ds.captions], df).pairs(np.array([0]), np.array([cap[p]]))
        assert loo(np.array([p]), np.array([p]))[0] == pytest.approx(want[0], rel=1e-9)
    # the self-match: a positive's φ with its own caption among five references is ~2.0 CIDEr-D higher
    gap = full(np.arange(4), np.arange(4)) - loo(np.arange(4), np.arange(4))
    assert (gap > 1.0).all()


def test_sam_options_are_validated_and_keep_old_checkpoint_names():
    from itmlib.training.train import TrainConfig, config_dict, config_hash

    assert config_hash(TrainConfig()) == "4c4a939eeca1a07d"     # the name every earlier default run carries
    assert "phi_control" not in config_dict(TrainConfig()) and "lr_warmup_iters" not in config_dict(TrainConfig())
    assert config_hash(TrainConfig.of(loss="sam", phi_control="shuffled")) != config_hash(TrainConfig(loss="sam"))
    for kw, match in (({"phi_control": "random"}, "phi_control"), ({"phi_self": "drop"}, "phi_self"),
                      ({"sam_weight": -1.0}, "sam_weight")):
        with pytest.raises(ValueError, match=match):
            TrainConfig.of(loss="sam", **kw)


def test_self_inclusion_adds_exactly_two_cider_to_each_positive(smoke_split):
    # with c_p among its image's 5 references: φ = (self + 4 φ_loo) / 5, where CIDEr-D of a caption with
    # itself is 10 x (its n-gram orders present) / 4: 10 from four words up ("a cow" scores 5)
    from itmlib.losses import phi_index
    from itmlib.models.vocab import tokenize
    from itmlib.papers.ncs_sam import phi_pos_variance_share

    ds = smoke_split("train", 20)
    index = phi_index(ds)
    cap = np.arange(ds.n_captions)
    img = ds.img_of_caption[cap]
    p = np.arange(cap.size)
    with_self = batch_phi(index, img, cap)(p, p)
    loo = batch_phi(index, img, cap, leave_one_out=True)(p, p)
    self_sim = np.array([10.0 * min(len(ds.captions[c].lower().split()), 4) / 4 for c in cap])
    np.testing.assert_allclose(with_self, (self_sim + 4 * loo) / 5, rtol=1e-9)
    assert min(len(tokenize(c)) for c in ds.captions) < 4 < max(len(tokenize(c)) for c in ds.captions)   # both kinds
    t = phi_pos_variance_share(ds, n_pairs=500, seed=1).set_index("phi")
    assert t.mean_phi_pos.iloc[0] > 1.5 + t.mean_phi_pos.iloc[1]
    assert (t.share_of_margin_variance_from_phi_pos.between(0, 1.05)).all()
