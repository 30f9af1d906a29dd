"""The training loop: seeds, checkpoints, resume, selection, bad knobs."""

import json

import pytest
import torch

from itmlib.models import VSEConfig
from itmlib.training.train import TrainConfig, config_dict, config_hash, evaluate, train, warmup_source

SMALL = dict(epochs=2, batch_size=32, model=VSEConfig(embed_dim=32, word_dim=32, hidden_dim=64))


@pytest.fixture(scope="module")
def data(smoke_split):
    return smoke_split("train", 120), smoke_split("dev", 40)


def _states_equal(a, b):
    return all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("loss", ["triplet", "sam"])
def test_same_seed_same_checkpoint_and_table(tmp_path, data, loss):
    tr, dv = data
    cfg = TrainConfig(loss=loss, **SMALL)
    a = train(cfg, tr, dv, ckpt_dir=tmp_path / "a", device="cpu", progress=False)
    b = train(cfg, tr, dv, ckpt_dir=tmp_path / "b", device="cpu", progress=False)
    assert _states_equal(a.model.state_dict(), b.model.state_dict())
    assert a.history.equals(b.history)
    c = train(TrainConfig(loss=loss, seed=1, **SMALL), tr, dv, ckpt_dir=tmp_path / "c", device="cpu", progress=False)
    assert not _states_equal(a.model.state_dict(), c.model.state_dict())


def test_resume_after_interruption_is_identical(tmp_path, data):
    tr, dv = data
    cfg = TrainConfig.of(loss="sam", sampling="random", **SMALL)
    full = train(cfg, tr, dv, ckpt_dir=tmp_path / "full", device="cpu", progress=False)
    part = train(cfg, tr, dv, ckpt_dir=tmp_path / "part", device="cpu", progress=False, stop_after=1)
    assert len(part.history) == 1 and part.earlier_seconds == 0
    resumed = train(cfg, tr, dv, ckpt_dir=tmp_path / "part", device="cpu", progress=False)
    assert _states_equal(full.model.state_dict(), resumed.model.state_dict())
    assert full.history.equals(resumed.history)
    # the interrupted call's training time is kept: a resumed run can state what it cost in all
    assert 0 < resumed.earlier_seconds <= part.seconds
    done = train(cfg, tr, dv, ckpt_dir=tmp_path / "part", device="cpu", progress=False)   # loaded, not trained
    assert resumed.earlier_seconds < done.earlier_seconds <= resumed.earlier_seconds + resumed.seconds


def test_a_longer_warmup_starts_where_a_shorter_one_ended(tmp_path, data):
    tr, dv = data
    base = dict(SMALL, epochs=4)
    short, long = TrainConfig(warmup_epochs=1, **base), TrainConfig(warmup_epochs=3, **base)
    scratch = train(long, tr, dv, ckpt_dir=tmp_path / "scratch", device="cpu", progress=False)
    assert scratch.earlier_seconds == 0
    assert warmup_source(long, "vse", tmp_path / "shared") is None      # nothing to start from yet
    first = train(short, tr, dv, ckpt_dir=tmp_path / "shared", device="cpu", progress=False)
    snap = first.checkpoint.parent / "warmup.pt"
    assert torch.load(snap, weights_only=True)["epoch"] == 1
    assert warmup_source(long, "vse", tmp_path / "shared") == snap
    branched = train(long, tr, dv, ckpt_dir=tmp_path / "shared", device="cpu", progress=False)
    # the shared epoch came from the short run: same weights and dev curve as from scratch, its cost carried over
    assert _states_equal(scratch.model.state_dict(), branched.model.state_dict())
    assert scratch.history.equals(branched.history) and branched.best_epoch == scratch.best_epoch
    assert branched.earlier_seconds > 0
    # the sum over every negative throughout (warm-up = every epoch) starts where the longest shorter warm-up ended
    every = TrainConfig(warmup_epochs=4, **base)
    assert warmup_source(every, "vse", tmp_path / "shared") == branched.checkpoint.parent / "warmup.pt"
    alone = train(every, tr, dv, ckpt_dir=tmp_path / "alone", device="cpu", progress=False)
    joined = train(every, tr, dv, ckpt_dir=tmp_path / "shared", device="cpu", progress=False)
    assert _states_equal(alone.model.state_dict(), joined.model.state_dict()) and alone.history.equals(joined.history)
    # only a longer warm-up of the same run: not a shorter one, another name, lr or seed, nor without the max
    for cfg, name in ((TrainConfig(warmup_epochs=1, **base), "vse"), (long, "other"),
                      (TrainConfig.of(warmup_epochs=3, lr=5e-4, **base), "vse"),
                      (TrainConfig(warmup_epochs=3, seed=1, **base), "vse"),
                      (TrainConfig(warmup_epochs=3, max_violation=False, **base), "vse")):
        assert warmup_source(cfg, name, tmp_path / "shared") is None


def test_checkpoint_named_by_config_holds_it_and_loads_weights_only(tmp_path, data):
    tr, dv = data
    cfg = TrainConfig(**SMALL)
    r = train(cfg, tr, dv, ckpt_dir=tmp_path, name="base", device="cpu", progress=False)
    assert r.checkpoint.parent.name == f"base-{config_hash(cfg)}"
    ck = torch.load(r.checkpoint, weights_only=True)
    assert ck["config"]["loss"] == "triplet" and ck["epoch"] == r.best_epoch
    assert ck["config"]["model"] == {"kind": "vse", "region_dim": 0, "vocab_size": 0, "embed_dim": 32, "word_dim": 32,
                                     "hidden_dim": 64, "use_boxes": True}   # the typed model config, nested
    again = train(cfg, tr, dv, ckpt_dir=tmp_path, name="base", device="cpu", progress=False)  # finished: no training
    assert again.history.equals(r.history) and _states_equal(again.model.state_dict(), r.model.state_dict())
    assert config_hash(cfg) != config_hash(TrainConfig.of(tau=3.0, **SMALL))
    assert config_hash(cfg) != config_hash(cfg.with_model(hidden_dim=32))


def test_selection_by_nsum_needs_relevance(tmp_path, data):
    tr, dv = data
    with pytest.raises(ValueError, match="dev_relevance"):
        train(TrainConfig(select_by="nsum", **SMALL), tr, dv, ckpt_dir=tmp_path, device="cpu", progress=False)
    r = train(TrainConfig(select_by="nsum", **SMALL), tr, dv, dev_relevance=dv.relevance(), ckpt_dir=tmp_path,
              device="cpu", progress=False)
    best = r.history.loc[r.history.dev_nsum.idxmax(), "epoch"]
    assert r.best_epoch == best
    ev = evaluate(r.model, r.vocab, dv, dv.relevance())
    assert {"rsum", "nsum", "nsum_nogt"} <= set(ev)


def test_selection_by_ndcg_logs_every_relevance_and_picks_its_best_epoch(tmp_path, data):
    from itmlib.metrics import ndcg

    tr, dv = data
    cfg = TrainConfig(select_by="ndcg", **{**SMALL, "epochs": 3})
    with pytest.raises(ValueError, match="dev_relevance"):
        train(cfg, tr, dv, ckpt_dir=tmp_path, device="cpu", progress=False)
    rels = {"gold": dv.relevance(), "flat": (dv.relevance() > 0.5).astype(float)}
    r = train(cfg, tr, dv, dev_relevance=rels, ckpt_dir=tmp_path, device="cpu", progress=False)
    h = r.history
    cols = {f"dev_ndcg_{n}_{d}" for n in rels for d in ("i2t", "t2i")}
    assert cols <= set(h.columns) and "dev_nsum" not in h.columns
    assert h[sorted(cols)].sum(axis=1).round(9).equals(h.dev_ndcg_sum.round(9))
    assert r.best_epoch == h.loc[h.dev_ndcg_sum.idxmax(), "epoch"]
    # the logged value of the best epoch is NDCG@25 of the returned model on dev
    sims = r.model.similarity(dv, r.vocab, "cpu")
    best = h[h.epoch == r.best_epoch].iloc[0]
    assert ndcg(sims, rels["gold"], dv.img_of_caption, k=25)["t2i_ndcg25"] == pytest.approx(best.dev_ndcg_gold_t2i)


def test_teran_config_trains_as_teran_does():
    from itmlib.papers.teran import teran_config

    cfg = teran_config("medium")
    assert cfg.max_violation and cfg.select_by == "ndcg"                               # selected by dev NDCG
    assert cfg.warmup_epochs == 1            # hardest negatives from the start collapse at our scales (docstring)
    full = teran_config("full")
    assert full.lr_decay_epochs == 20 and full.model.visual_dim == 2048 and full.model.embed_dim == 1024
    assert teran_config("medium", warmup_epochs=0, lr_warmup_iters=1000).lr_warmup_iters == 1000   # TERAN's protocol


@pytest.mark.parametrize("kw,match", [({"tau": 0}, "tau"), ({"sampling": "semi-hard"}, "sampling"),
                                      ({"loss": "contrastive"}, "loss"), ({"epochs": 0}, "epochs"),
                                      ({"batch_size": 1}, "batch_size")])
def test_bad_knobs(kw, match):
    with pytest.raises(ValueError, match=match):
        TrainConfig.of(**kw)


def test_bad_model_sizes():
    with pytest.raises(ValueError, match="embed_dim"):
        VSEConfig(embed_dim=0)
    with pytest.raises(ValueError, match="VSEConfig, TERANConfig, SSAMTConfig or NeighborhoodsConfig"):
        TrainConfig(model="vse")


def test_valid_region_mlp_gives_the_masked_mean_loss_and_gradients(data):
    """Speed: VSEModel.encode_image runs its MLP on the valid regions only. A fixed
    batch gives the loss and gradients of the masked mean over all padded regions to 1e-5."""
    from itmlib.data.inputs import region_inputs
    from itmlib.losses import triplet_loss
    from itmlib.losses.triplet import positive_mask_from_ids
    from itmlib.models import build_model

    tr, _ = data
    torch.manual_seed(0)
    model, vocab = build_model(VSEConfig(embed_dim=32, word_dim=32, hidden_dim=64), tr)
    cap_idx = torch.arange(0, 96, 3).numpy()
    img_idx = tr.img_of_caption[cap_idx]
    f, m = region_inputs(tr, img_idx)
    assert 0 < m.float().mean() < 1            # the batch has padded regions to skip
    tok, ln = vocab.encode([tr.captions[i] for i in cap_idx])

    def masked_mean_reference(feats, mask):   # the encoder before the change
        h = model.region_mlp(feats)
        mm = mask.unsqueeze(-1).to(h.dtype)
        return torch.nn.functional.normalize((h * mm).sum(1) / mm.sum(1).clamp(min=1.0), dim=-1)

    same = positive_mask_from_ids(torch.from_numpy(img_idx))
    out = []
    for enc in (model.encode_image, masked_mean_reference):
        model.zero_grad()
        loss = triplet_loss(enc(f, m) @ model.encode_text(tok, ln).T, 0.2, True, same)
        loss.backward()
        out.append((loss.detach(), {n: p.grad.clone() for n, p in model.named_parameters()}))
    (la, ga), (lb, gb) = out
    assert torch.allclose(la, lb, atol=1e-5)
    assert all(torch.allclose(ga[n], gb[n], atol=1e-5) for n in ga)
    assert ga["region_mlp.0.weight"].abs().sum() > 0


def test_lr_warmup_rises_linearly_then_follows_the_step_schedule(tmp_path, data):
    tr, dv = data
    seen = []
    orig = torch.optim.Adam.step

    def spy(self, *a, **k):
        seen.append(self.param_groups[0]["lr"])
        return orig(self, *a, **k)

    torch.optim.Adam.step = spy
    try:
        cfg = TrainConfig(lr_warmup_iters=5, lr_decay_epochs=1, **{**SMALL, "epochs": 2})
        train(cfg, tr, dv, ckpt_dir=tmp_path, device="cpu", progress=False)
    finally:
        torch.optim.Adam.step = orig
    per_epoch = len(seen) // 2
    assert seen[:5] == pytest.approx([cfg.lr * k / 5 for k in range(1, 6)])
    assert seen[5:per_epoch] == pytest.approx([cfg.lr] * (per_epoch - 5))
    assert seen[per_epoch:] == pytest.approx([cfg.lr * 0.1] * per_epoch)          # the decay after epoch 1


@pytest.mark.parametrize("max_len", [12, 45])
def test_padded_bigru_gives_the_packed_loss_and_gradients(monkeypatch, max_len):
    """Speed: on the CPU, texts padded to >= PADDED_GRU_FROM tokens skip packing
    (itmlib.models.vse.padded_bigru). A fixed batch of texts of lengths 1..max_len gives the
    packed GRU's loss and gradients to 1e-5, whichever path the threshold picks."""
    from itmlib.models import vse
    from itmlib.models.vocab import Vocab

    torch.manual_seed(0)
    model = vse.VSEModel(VSEConfig(region_dim=8, vocab_size=60, embed_dim=16, word_dim=12, hidden_dim=16))
    B = 24
    lengths = torch.randint(1, max_len + 1, (B,))
    lengths[0] = max_len
    tok = torch.randint(3, 60, (B, max_len))
    tok[torch.arange(max_len)[None, :] >= lengths[:, None]] = Vocab.PAD
    target = torch.randn(B, 16)
    calls = []
    real = vse.padded_bigru
    monkeypatch.setattr(vse, "padded_bigru", lambda *a: calls.append(1) or real(*a))
    out = []
    for threshold in (10**9, 1):                        # 10**9: always packed (the code before); 1: always padded
        monkeypatch.setattr(vse, "PADDED_GRU_FROM", threshold)
        model.zero_grad()
        t = model.encode_text(tok, lengths)
        loss = ((t - target) ** 2).sum() + (t @ t.T).logsumexp(1).sum()
        loss.backward()
        out.append((t.detach(), loss.detach(), {n: p.grad.clone() for n, p in model.named_parameters()
                                                if p.grad is not None}))
    (ta, la, ga), (tb, lb, gb) = out
    assert len(calls) == 1                              # the second pass, and only it, ran unpacked
    assert torch.allclose(ta, tb, atol=1e-5) and torch.allclose(la, lb, atol=1e-5)
    assert ga.keys() == gb.keys() and "gru.weight_hh_l0_reverse" in ga
    assert all(torch.allclose(ga[n], gb[n], atol=1e-5) for n in ga)
    assert ga["gru.weight_hh_l0_reverse"].abs().sum() > 0
    with torch.no_grad():                               # eval (no dropout, no grad) too
        model.eval()
        assert torch.allclose(model.encode_text(tok, lengths), tb, atol=1e-5)


def test_padded_bigru_rejects_gru_it_cannot_run():
    from itmlib.models.vse import padded_bigru

    x, ln = torch.zeros(2, 3, 4), torch.tensor([3, 1])
    m = torch.arange(3)[None] < ln[:, None]
    with pytest.raises(ValueError, match="one-layer bidirectional"):
        padded_bigru(torch.nn.GRU(4, 5, batch_first=True), x, ln, m)


def test_patience_stops_when_dev_stalls_and_a_stopped_run_trains_no_more(tmp_path, data, monkeypatch):
    """Scripted dev Rsum 10, 20, 15, 14, 30, 40: with patience 2 the run stops after epoch 4 (two epochs
    without beating epoch 2), keeps epoch 2, and a second call neither trains nor moves the selection."""
    import itmlib.training.train as tr_mod
    from itmlib.training.train import epochs_done

    script = iter([10.0, 20.0, 15.0, 14.0, 30.0, 40.0])
    monkeypatch.setattr(tr_mod, "dev_scores", lambda *a, **k: {"rsum": next(script)})
    tr, dv = data
    cfg = TrainConfig(**{**SMALL, "epochs": 6}, patience=2)
    r = train(cfg, tr, dv, ckpt_dir=tmp_path, device="cpu", progress=False)
    assert list(r.history.dev_rsum) == [10.0, 20.0, 15.0, 14.0] and r.best_epoch == 2
    assert epochs_done(cfg, "vse", tmp_path) == 6          # nothing left: the pool and the grid load it
    again = train(cfg, tr, dv, ckpt_dir=tmp_path, device="cpu", progress=False)
    assert len(again.history) == 4 and again.best_epoch == 2
    assert next(script) == 30.0                             # the second call evaluated nothing


def test_patience_zero_keeps_the_hash_of_configs_written_before_it():
    assert "patience" not in json.dumps(config_dict(TrainConfig(**SMALL)))
    assert config_hash(TrainConfig(**SMALL)) != config_hash(TrainConfig(**SMALL, patience=3))
    with pytest.raises(ValueError, match="patience"):
        TrainConfig(**SMALL, patience=-1)


def test_every_committed_member_record_still_loads_under_its_config_hash():
    """Each committed record's stored config, rebuilt as a TrainConfig (SAM's settings nested, the model typed),
    gives back the same stored dict and the hash in the record's file name: a refactor of the configs that moved
    a hash would orphan the records behind every committed table."""
    import dataclasses
    import json
    from pathlib import Path

    from itmlib.models.neighborhoods import NeighborhoodsConfig
    from itmlib.models.ssamt import SSAMTConfig
    from itmlib.models.teran import TERANConfig
    from itmlib.training.train import SAM_FIELDS, config_dict

    kinds = {c.kind: c for c in (VSEConfig, TERANConfig, SSAMTConfig, NeighborhoodsConfig)}
    records = sorted(Path(__file__).resolve().parents[1].glob("results/*/members/*.json"))
    assert len(records) > 400
    for path in records:
        stored = json.loads(path.read_text())["config"]
        model = dict(stored["model"])
        mcls = kinds[model.pop("kind")]
        types = {f.name: f.type for f in dataclasses.fields(mcls)}
        model = {k: tuple(v) if isinstance(v, list) and "tuple" in str(types[k]) else v for k, v in model.items()}
        cfg = TrainConfig.of(**{k: v for k, v in stored.items() if k != "model"}, model=mcls(**model))
        assert json.dumps(config_dict(cfg), sort_keys=True) == json.dumps(stored, sort_keys=True), path.name
        assert f"-{config_hash(cfg)}-" in path.name, path.name
        assert list(config_dict(cfg)) == list(stored), path.name       # the stored order too: records rewrite byte-identical
    assert {"tau", "sampling", "sam_mode", "keep_triplet"} <= set(json.loads(records[0].read_text())["config"]) <= \
        {f.name for f in dataclasses.fields(TrainConfig)} | set(SAM_FIELDS)   # flat, as before the nesting
