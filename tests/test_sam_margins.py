"""Notebook 04's SAM pieces: the scale's VSE++ config, eq. 7's margin on the negative each sampling picks."""

import numpy as np
import pandas as pd
import pytest

from itmlib.losses import phi_index
from itmlib.papers.ncs_sam import sam_margin_samples, summarize_margins, vse_config
from itmlib.training.grid import RunContext, grid_member
from itmlib.training.train import TrainConfig

from conftest import TINY


def test_vse_config_follows_the_scale():
    c = vse_config("full", loss="sam", tau=5.0)
    assert (c.epochs, c.batch_size, c.model.embed_dim, c.model.word_dim, c.model.hidden_dim) == (30, 128, 1024, 300, 2048)
    assert vse_config("smoke", epochs=2).epochs == 2


def test_sam_margin_samples_are_eq7_on_the_negative_each_sampling_picks(tmp_path, tiny):
    tr, dv = tiny
    _, r = grid_member(TrainConfig(loss="triplet", **TINY), "base", tr, dv, context=RunContext(ckpt_dir=str(tmp_path), device="cpu"))
    m = sam_margin_samples(r, tr, tau=2.0, n_batches=2, batch_size=16, seed=3)
    assert len(m) == 2 * 3 * 16 and set(m.sampling) == {"hard", "soft", "random"}
    assert m.equals(sam_margin_samples(r, tr, tau=2.0, n_batches=2, batch_size=16, seed=3))  # seeded
    idx = phi_index(tr)
    phi_pos = idx.pairs(m.image.to_numpy(), m.caption.to_numpy())
    phi_neg = idx.pairs(m.image.to_numpy(), m.negative_caption.to_numpy())
    assert np.allclose(m.margin_t2i, (phi_pos - phi_neg) / 2.0, atol=1e-5)
    # the margin eq. 7 (as printed) applies to c_m's hinge comes from another negative: equal only by chance
    assert not np.allclose(m.margin_on_negative, m.margin_t2i)
    gold = tr.relevance()
    assert np.allclose(m.gold_rel_of_negative, gold[m.image, m.negative_caption])
    assert (tr.img_of_caption[m.negative_caption] != m.image).all()  # never a caption of the anchor image
    sims = r.model.similarity(tr, r.vocab)
    for (b, smp), g in m.groupby(["batch", "sampling"]):
        caps = g.caption.to_numpy()
        for p, neg in zip(g.image, g.negative_caption):
            others = sims[p, caps[tr.img_of_caption[caps] != p]]
            if smp == "hard":
                assert sims[p, neg] == pytest.approx(others.max(), abs=1e-5)
            elif smp == "soft":
                assert sims[p, neg] == pytest.approx(others.min(), abs=1e-5)
    for kw, match in [({"batch_size": 1}, "batch_size"), ({"batch_size": tr.n_captions + 1}, "batch_size"),
                      ({"tau": 0.0}, "tau"), ({"n_batches": 0}, "n_batches"), ({"samplings": ["closest"]}, "sampling")]:
        with pytest.raises(ValueError, match=match):
            sam_margin_samples(r, tr, **kw)
    import dataclasses

    import torch
    with pytest.raises(ValueError, match="VSE model"):
        sam_margin_samples(dataclasses.replace(r, model=torch.nn.Linear(2, 2)), tr)


def test_summarize_margins_by_hand():
    m = pd.DataFrame({"sampling": ["a", "a", "b", "b", "b"], "margin_t2i": [0.1, 0.3, 0.2, 0.4, 0.6],
                      "margin_on_negative": [0.3, 0.1, 0.6, 0.4, 0.2],
                      "gold_rel_of_negative": [1.0, 0.0, 0.0, 0.5, 1.0]})
    s = summarize_margins(m).set_index("sampling")
    assert s.loc["a", "mean_margin"] == pytest.approx(0.2) and s.loc["a", "std_margin"] == pytest.approx(np.sqrt(0.02))
    assert s.loc["a", "mean_gold_rel_of_negative"] == pytest.approx(0.5)
    assert s.loc["a", "corr_margin_gold"] == pytest.approx(-1.0) and s.loc["b", "corr_margin_gold"] == pytest.approx(1.0)
    assert s.loc["a", "corr_applied_margin_gold"] == pytest.approx(1.0) and s.loc["b", "corr_applied_margin_gold"] == pytest.approx(-1.0)
