"""Grids: members trained, loaded or read from their records, on any executor, in one order; progress lines."""

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest
import torch

from itmlib.training.grid import RunContext, grid_member, run_grid
from itmlib.training.train import TrainConfig, evaluate

from conftest import TINY


def test_timed_returns_the_result_and_a_duration():
    import time

    from itmlib.training.timing import timed
    t, r = timed(lambda: (time.sleep(0.02), 7)[1])
    assert r == 7 and 0.02 <= t < 1.0




def test_grid_member_gives_back_the_run_grids_model_without_training(tmp_path, tiny):
    tr, dv = tiny
    cfgs = {"tau=5 soft +T": TrainConfig.of(loss="sam", sampling="soft", keep_triplet=True, data="w", **TINY)}
    runs, _ = run_grid(cfgs, tr, dv, dv, dv.relevance(), fractions=[0.5], seeds=[1],
                       context=RunContext(ckpt_dir=str(tmp_path), device="cpu"))
    folders = sorted(p.name for p in tmp_path.iterdir())
    assert len(folders) == 1 and folders[0].startswith("tau=5_soft_pT-")
    sub, r = grid_member(cfgs["tau=5 soft +T"], "tau=5 soft +T", tr, dv, fraction=0.5, seed=1,
                         context=RunContext(ckpt_dir=str(tmp_path), device="cpu"))
    assert sorted(p.name for p in tmp_path.iterdir()) == folders  # the same checkpoint, nothing retrained
    assert sub.n_images == runs.train_images[0] == 40 and r.best_epoch == runs.best_epoch[0]
    assert evaluate(r.model, r.vocab, dv, dv.relevance())["rsum"] == pytest.approx(runs.rsum[0])
    with pytest.raises(ValueError, match="fraction"):
        grid_member(cfgs["tau=5 soft +T"], "x", tr, dv, fraction=0.0, context=RunContext(ckpt_dir=str(tmp_path)))


def test_checkpoint_name_is_one_safe_folder_name():
    from itmlib.training.grid import checkpoint_name
    assert checkpoint_name("MT+GM (w/ phrases)") == "MTpGM_w_phrases"  # a '/' nested folders before
    assert checkpoint_name("VSE++ + SAM") == "VSEpp_p_SAM"
    assert checkpoint_name("tau=5 soft +T") == "tau=5_soft_pT"


def _rsum_and_worker_environ(name, result, ds):
    """A grid's evaluation that also reports the worker's allocator and thread settings."""
    import os as worker_os

    from itmlib.training.train import evaluate as evaluate_model
    return [{"rsum": evaluate_model(result.model, result.vocab, ds)["rsum"],
             "trim": worker_os.environ.get("MALLOC_TRIM_THRESHOLD_", "unset"),
             "omp": worker_os.environ.get("OMP_NUM_THREADS"), "arenas": worker_os.environ.get("MALLOC_ARENA_MAX")}]


def test_two_local_workers_give_byte_identical_tables_and_take_the_members_setting_major(tmp_path, tiny, capsys,
                                                                                         monkeypatch):
    """Members trained apart give the same bytes. And given every member at once, Dask ran 04's medium grid
    out of order (configs 12, 11, ..., 1; most likely work stealing): members go out one per free worker
    thread, setting-major (each config over every fraction and seed). The workers run without the
    MALLOC_TRIM_THRESHOLD_ that Dask's stock worker environment sets (it made a torch member 2x slower per
    epoch than inline, bench_executor.py, and a stock cluster leaks it into our process)."""
    import os

    from itmlib.training.grid import worker_environ

    assert "MALLOC_TRIM_THRESHOLD_" not in worker_environ(1) and worker_environ(2)["OMP_NUM_THREADS"] == 2
    tr, dv = tiny
    cfgs = {"VSE++": TrainConfig(loss="triplet", data="w", **TINY),
            "SAM": TrainConfig.of(loss="sam", sampling="random", keep_triplet=True, data="w", **TINY)}
    kw = dict(fractions=[0.5, 1.0], seeds=[0, 1])
    on = RunContext(device="cpu", threads=1)
    seq, hs = run_grid(cfgs, tr, dv, dv, dv.relevance(), **kw, context=on.replace(ckpt_dir=tmp_path / "a"))
    default_rsum = seq.rsum.tolist()
    seq, hs = run_grid(cfgs, tr, dv, dv, dv.relevance(), **kw, context=on.replace(ckpt_dir=tmp_path / "a"),
                       evaluate_fn=_rsum_and_worker_environ)     # the same members, loaded, under our evaluation
    assert seq.rsum.tolist() == default_rsum
    capsys.readouterr()
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")                 # as a stock cluster leaves it
    par, hp = run_grid(cfgs, tr, dv, dv, dv.relevance(), **kw, evaluate_fn=_rsum_and_worker_environ,
                       context=on.replace(ckpt_dir=tmp_path / "b", executor="processes:2", progress=True))
    assert os.environ["MALLOC_TRIM_THRESHOLD_"] == "65536"                # ours is given back
    assert set(par.trim) == {"unset"} and set(par.omp) == {"1"} and set(par.arenas) == {"1"}
    as_csv = lambda df: df.drop(columns=["trim", "omp", "arenas"]).to_csv(index=False)   # noqa: E731
    assert len(seq) == 8 and as_csv(seq) == as_csv(par)            # trained apart, the same bytes
    assert hs.to_csv(index=False) == hp.to_csv(index=False)
    assert len(list((tmp_path / "b").iterdir())) == 8              # each worker wrote its members' checkpoints
    lines = capsys.readouterr().out.splitlines()
    started = [ln.split("[grid] ")[1].split(": training")[0] for ln in lines if ": training epochs" in ln]
    assert started == [f"{i}/8 {m}, fraction {f:g}, seed {s}" for m, k in (("VSE++", 1), ("SAM", 2))
                       for (f, s), i in zip(((0.5, 0), (0.5, 1), (1.0, 0), (1.0, 1)), (k, k + 2, k + 4, k + 6))]
    first_done = next(n for n, ln in enumerate(lines) if ": done in" in ln)
    assert sum(": training epochs" in ln for ln in lines[:first_done]) == 2     # one member per worker thread


def test_bad_executors_name_the_forms():
    from itmlib.training.grid import parse_executor

    assert parse_executor("inline") == ("inline", None) and parse_executor("processes:3") == ("processes", 3)
    assert parse_executor("dask:tcp://10.0.0.1:8786") == ("dask", "tcp://10.0.0.1:8786")
    assert parse_executor("tcp://h:1") == ("dask", "tcp://h:1")
    for bad in ("processes:0", "processes:x", "threads", "dask:", ""):
        with pytest.raises(ValueError, match="executor"):
            parse_executor(bad)


def test_a_run_context_is_checked_once_and_a_notebook_run_makes_its_own(tmp_path):
    """The context refuses what a grid would fail on later (a bad executor, records with nowhere to read
    them, zero threads); a notebook's run makes one from its own parameters and member records."""
    from itmlib.course.results import start_run

    for bad in (dict(executor="threads"), dict(executor="records"), dict(threads=0), dict(ckpt_dir="")):
        with pytest.raises(ValueError, match=next(iter(bad)).replace("executor", "executor|record_dir")):
            RunContext(**bad)
    assert RunContext(executor="records", record_dir=tmp_path).replace(threads=2).threads == 2
    with pytest.raises(ValueError, match="executor"):
        RunContext().replace(executor="processes:0")
    run = start_run("04_sam", scale="smoke", device="cpu", results_dir=tmp_path, executor="processes:2",
                    ckpt_dir="elsewhere")
    ctx = run.grid_context()
    assert (ctx.device, ctx.executor, ctx.ckpt_dir, ctx.progress) == ("cpu", "processes:2", "elsewhere", True)
    assert ctx.record_dir == tmp_path / "04_sam" / "members"
    plain = start_run("04_sam", scale="smoke", device="cpu", results_dir=tmp_path).grid_context(progress=False)
    assert (plain.executor, str(plain.ckpt_dir), plain.progress) == ("inline", "runs/checkpoints", False)


def test_grid_progress_says_what_trains_what_loads_and_the_eta(tmp_path, tiny, capsys):
    from itmlib.training.progress import GridProgress, MemberStatus
    from itmlib.training.train import epochs_done

    tr, dv = tiny
    cfgs = {"VSE++": TrainConfig(loss="triplet", data="w", **{**TINY, "epochs": 2})}
    run_grid(cfgs, tr, dv, dv, dv.relevance(), seeds=[0, 1], context=RunContext(ckpt_dir=str(tmp_path), device="cpu", progress=True))
    first = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("[grid]")]
    assert first[0] == "[grid] 2 members: 0 from checkpoints, 0 partly trained, 2 to train (4 of 4 epochs left)"
    assert first[1] == "[grid] 1/2 VSE++, fraction 1, seed 0: training epochs 0 -> 2"
    assert "per epoch); grid ETA" in first[2]                     # one member measured: an ETA for the other
    assert first[-1].startswith("[grid] all 2 members (2 trained) in")
    run_grid(cfgs, tr, dv, dv, dv.relevance(), seeds=[0, 1], context=RunContext(ckpt_dir=str(tmp_path), device="cpu", progress=True))
    again = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("[grid]")]
    assert again[0].startswith("[grid] 2 members: 2 from checkpoints, 0 partly trained, 0 to train (0 of 4")
    assert again[1] == "[grid] 1/2 VSE++, fraction 1, seed 0: from checkpoint"
    assert again[2].startswith("[grid] 1/2 VSE++, fraction 1, seed 0: loaded and evaluated in")
    from itmlib.training.grid import member_config
    from itmlib.training.train import checkpoint_folder

    _, c = member_config(cfgs["VSE++"], tr, 1.0, 0)
    assert json.loads((checkpoint_folder(c, "VSEpp", tmp_path) / "progress.json").read_text()) == {"epoch": 2, "epochs": 2,
                                                                                             "stopped": False}
    (checkpoint_folder(c, "VSEpp", tmp_path) / "progress.json").unlink()   # a checkpoint from before it: last.pt
    assert epochs_done(c, "VSEpp", tmp_path) == 2 and epochs_done(dataclasses.replace(c, epochs=5), "VSEpp", tmp_path) == 0
    # the ETA by hand: 10 s for 2 epochs measured, 3 + 1 epochs left on 2 workers -> 4 * 5 / 2 = 10 s
    lines = []
    rep = GridProgress([MemberStatus("a", 0, 2), MemberStatus("b", 1, 4), MemberStatus("c", 3, 4), MemberStatus("d", 5, 5)],
                       workers=2, streams=[type("S", (), {"write": lambda self, t: lines.append(t), "flush": lambda self: None})()])
    assert rep.eta_seconds() is None
    rep.finish(0, 10.0)
    assert rep.eta_seconds() == pytest.approx(10.0)
    assert "a: done in 10 s (5.0 s per epoch); grid ETA 10 s" in "".join(lines)
    rep.begin()
    assert "4 members: 1 from checkpoints, 2 partly trained, 1 to train (6 of 15 epochs left), 2 workers" in "".join(lines)
    # epochs weigh by training images: 4 s for 2 epochs of 100 images; 3 epochs of 50 left -> 150 * 0.02 = 3 s
    rep = GridProgress([MemberStatus("a", 0, 2, 100), MemberStatus("b", 0, 3, 50)], streams=[])
    rep.finish(0, 4.0)
    assert rep.eta_seconds() == pytest.approx(3.0)


def test_grid_progress_goes_to_the_progress_file_when_a_runner_watches(tmp_path, monkeypatch, capsys):
    """Under `python -m itmlib.course.notebooks run` (ITM_PROGRESS_LOG set) the per-member lines go to the file the runner
    prints to its terminal, not to the notebook's output."""
    from itmlib.console import log_line
    from itmlib.training.progress import GridProgress, MemberStatus

    log = tmp_path / "progress.log"
    monkeypatch.setenv("ITM_PROGRESS_LOG", str(log))
    rep = GridProgress([MemberStatus("a", 0, 2)])
    rep.begin(); rep.start(0); rep.finish(0, 4.0); rep.end()
    log_line("[train] vsepp: training epochs 0 -> 2")
    lines = log.read_text().splitlines()
    assert lines[0].startswith("[grid] 1 members: 0 from checkpoints") and lines[-1] == "[train] vsepp: training epochs 0 -> 2"
    assert lines[-2].startswith("[grid] all 1 members (1 trained) in")
    assert "[grid]" not in capsys.readouterr().out


def test_members_train_setting_major_and_rows_keep_the_grids_order(tmp_path, tiny, capsys):
    tr, dv = tiny
    cfgs = {m: TrainConfig(loss="triplet", data="w", **{**TINY, "margin": g}) for m, g in (("A", 0.2), ("B", 0.1))}
    runs, _ = run_grid(cfgs, tr, dv, dv, dv.relevance(), seeds=[0, 1],
                       context=RunContext(ckpt_dir=str(tmp_path), device="cpu", progress=True))
    started = [ln.split(": training")[0] for ln in capsys.readouterr().out.splitlines() if ": training epochs" in ln]
    # every seed of A before B (a grid cut off after two members has A's whole spread) ...
    assert started == ["[grid] 1/4 A, fraction 1, seed 0", "[grid] 3/4 A, fraction 1, seed 1",
                       "[grid] 2/4 B, fraction 1, seed 0", "[grid] 4/4 B, fraction 1, seed 1"]
    # ... while the rows stay seed-major, as the tables have always read them
    assert list(zip(runs.seed, runs.method)) == [(0, "A"), (0, "B"), (1, "A"), (1, "B")]


def test_an_evaluator_with_a_cache_key_runs_once_per_checkpoint(tmp_path, tiny):
    tr, dv = tiny
    calls = []

    def fn(name, r, ds):
        calls.append(name)
        return [{"score": np.float32(0.5) + len(calls), "n": np.int64(3), "label": "x"}]

    cfgs = {"VSE++": TrainConfig(loss="triplet", data="w", **TINY)}
    a, _ = run_grid(cfgs, tr, dv, dv, evaluate_fn=fn, context=RunContext(ckpt_dir=str(tmp_path), device="cpu"))
    b, _ = run_grid(cfgs, tr, dv, dv, evaluate_fn=fn, context=RunContext(ckpt_dir=str(tmp_path), device="cpu"))
    assert len(calls) == 2 and b.score[0] == 2.5                 # no key: evaluated every time
    fn.cache_key = "test-eval-v1"
    c, _ = run_grid(cfgs, tr, dv, dv, evaluate_fn=fn, context=RunContext(ckpt_dir=str(tmp_path), device="cpu"))
    d, _ = run_grid(cfgs, tr, dv, dv, evaluate_fn=fn, context=RunContext(ckpt_dir=str(tmp_path), device="cpu"))
    assert len(calls) == 3 and c.score[0] == d.score[0] == 3.5 and d.n[0] == 3 and d.label[0] == "x"
    assert c.to_csv() == d.to_csv()                              # a cached run gives the same table
    fn.cache_key = "test-eval-v2"                                # a new evaluator version evaluates again
    run_grid(cfgs, tr, dv, dv, evaluate_fn=fn, context=RunContext(ckpt_dir=str(tmp_path), device="cpu"))
    assert len(calls) == 4


def test_member_records_stand_in_for_training_and_give_the_same_tables(tmp_path, tiny, capsys, monkeypatch):
    """A grid cut off (or run on a machine whose checkpoints are gone) is finished from its member records:
    the members it holds are neither trained nor evaluated, and the tables are the same bytes."""
    import shutil

    from itmlib.training.grid import member_record_path

    tr, dv = tiny
    cfgs = {"VSE++": TrainConfig(loss="triplet", data="w", **TINY),
            "SAM": TrainConfig.of(loss="sam", sampling="random", keep_triplet=True, data="w", **TINY)}
    kw = dict(seeds=[0, 1])
    on = RunContext(device="cpu", threads=1)
    plain, hp = run_grid(cfgs, tr, dv, dv, dv.relevance(), **kw, context=on.replace(ckpt_dir=tmp_path / "a"))
    rec = tmp_path / "members"
    first, h1 = run_grid(cfgs, tr, dv, dv, dv.relevance(), **kw, context=on.replace(ckpt_dir=tmp_path / "b", record_dir=rec))
    as_csv = lambda df: df.to_csv(index=False)   # noqa: E731
    assert as_csv(first) == as_csv(plain) and as_csv(h1) == as_csv(hp)   # a record changes no number
    assert len(list(rec.glob("*.json"))) == 4
    saved = json.loads(next(rec.glob("VSEpp-*.json")).read_text())
    assert saved["config"]["seed"] in (0, 1) and saved["rows"][0]["method"] == "VSE++" and saved["history"]["epoch"]
    assert saved["device"] == "cpu" and set(first.device) == {"cpu"}   # a record names where it trained
    assert saved["environment"]["torch"] == torch.__version__ and saved["environment"]["threads"] == 1   # ... and how

    shutil.rmtree(tmp_path / "b")                                     # the checkpoints are gone ...
    one = member_record_path(cfgs["SAM"], "SAM", 1.0, 1, tr, rec, "x").name.rsplit("-", 1)[0]
    for p in rec.glob(one + "-*.json"):
        p.unlink()                                                    # ... and one member never finished
    capsys.readouterr()
    # executor "records" trains nothing and names the member without a record in an error ...
    from itmlib.training.grid import MissingMembers

    with pytest.raises(MissingMembers, match=r"1 of 4 members of the grid have no member record: SAM, fraction 1, seed 1 "):
        run_grid(cfgs, tr, dv, dv, dv.relevance(), **kw,
                 context=on.replace(ckpt_dir=tmp_path / "b", record_dir=rec, executor="records"))
    # ... and "records:partial" reads the three recorded members, the fourth named as left out
    held, _ = run_grid(cfgs, tr, dv, dv, dv.relevance(), **kw,
                       context=on.replace(ckpt_dir=tmp_path / "b", record_dir=rec, executor="records:partial"))
    assert "1 of 4 members have no record yet and are left out: SAM, fraction 1, seed 1" in capsys.readouterr().out
    # several missing members read as each arm's seeds, in plan order
    from itmlib.training.grid import Member, _members_label

    assert _members_label([Member("TERAN mrsw", None, 1.0, s) for s in (0, 1, 2)] + [Member("TERN", None, 1.0, 0),
                           Member("TERAN mrsw", None, 0.5, 3)]) == \
        "TERAN mrsw, fraction 1, seeds 0, 1, 2; TERN, fraction 1, seed 0; TERAN mrsw, fraction 0.5, seed 3"
    assert not (tmp_path / "b").exists()
    assert as_csv(held) == as_csv(plain[~((plain.method == "SAM") & (plain.seed == 1))].reset_index(drop=True))
    with pytest.raises(ValueError, match="record_dir"):
        run_grid(cfgs, tr, dv, dv, dv.relevance(), **kw, context=on.replace(executor="records"))
    again, h2 = run_grid(cfgs, tr, dv, dv, dv.relevance(), **kw, context=on.replace(ckpt_dir=tmp_path / "b", record_dir=rec, progress=True))
    out = capsys.readouterr().out
    assert "3 from their records" in out and out.count("from its member record") == 3
    assert len(list((tmp_path / "b").iterdir())) == 1                 # only the missing member trained
    assert as_csv(again) == as_csv(plain) and as_csv(h2) == as_csv(hp)
    # every committed record is a member of the plan: a config changed under one names it missing, and the
    # record of the config as it was is an orphan of the run (what `make tables` reports and fails on)
    import dataclasses

    from itmlib.training.grid import MissingMembers
    from itmlib.training.records import orphan_records

    log = tmp_path / "read.log"
    monkeypatch.setenv("ITM_RECORDS_READ", str(log))
    run_grid(cfgs, tr, dv, dv, dv.relevance(), **kw, context=on.replace(record_dir=rec, executor="records"))
    assert orphan_records(rec, log) == []                              # the plan names all four
    log.unlink()
    changed = {**cfgs, "SAM": dataclasses.replace(cfgs["SAM"], lr=2 * cfgs["SAM"].lr)}
    with pytest.raises(MissingMembers, match=r"2 of 4 members of the grid have no member record: SAM, fraction 1, seeds 0, 1 "):
        run_grid(changed, tr, dv, dv, dv.relevance(), **kw, context=on.replace(record_dir=rec, executor="records"))
    assert sorted(p.name.split("-")[0] for p in orphan_records(rec, log)) == ["SAM", "SAM"]
    monkeypatch.delenv("ITM_RECORDS_READ")
    # another test split is another evaluation: its records are not taken
    other, _ = run_grid(cfgs, tr, dv, tr, tr.relevance(), **kw, context=on.replace(ckpt_dir=tmp_path / "b", record_dir=rec))
    assert len(list(rec.glob("*.json"))) == 8 and not other.rsum.equals(again.rsum)
    # an evaluator that does not name itself keeps no record
    run_grid(cfgs, tr, dv, dv, evaluate_fn=lambda name, r, ds: [{"x": 1.0}], **kw,
             context=on.replace(ckpt_dir=tmp_path / "b", record_dir=tmp_path / "none"))
    assert not (tmp_path / "none").exists()


def test_a_record_of_a_resumed_member_states_its_whole_training_time(tmp_path, tiny):
    """A member finished from its checkpoints (an interrupted pool) records the seconds its earlier calls
    spent training, not just this call's evaluation; where a checkpoint predates keeping them, null."""
    import torch

    from itmlib.training.grid import member_record_path

    tr, dv = tiny
    cfg = TrainConfig(loss="triplet", data="w", **TINY)
    rec = tmp_path / "members"
    kw = dict(seeds=[0])
    on = RunContext(device="cpu", threads=1)
    run_grid({"VSE++": cfg}, tr, dv, dv, dv.relevance(), **kw, context=on.replace(ckpt_dir=tmp_path / "c"))   # no record kept
    stem = member_record_path(cfg, "VSE++", 1.0, 0, tr, rec, "x").name.rsplit("-", 1)[0]
    (last,) = (tmp_path / "c").glob("*/last.pt")
    spent = torch.load(last, weights_only=True)["seconds"]
    assert spent > 0
    run_grid({"VSE++": cfg}, tr, dv, dv, dv.relevance(), **kw, context=on.replace(ckpt_dir=tmp_path / "c", record_dir=rec))
    (saved,) = rec.glob(stem + "-*.json")
    assert json.loads(saved.read_text())["seconds"] >= round(spent, 1)      # the training, plus this evaluation
    state = torch.load(last, weights_only=True)
    del state["seconds"]                                                # a checkpoint from before they were kept
    torch.save(state, last)
    saved.unlink()
    run_grid({"VSE++": cfg}, tr, dv, dv, dv.relevance(), **kw, context=on.replace(ckpt_dir=tmp_path / "c", record_dir=rec))
    assert json.loads(saved.read_text())["seconds"] is None


def test_a_figure_record_stands_in_for_retraining_its_model(tmp_path):
    from itmlib.training.grid import figure_record
    from itmlib.training.train import TrainConfig

    calls = []

    def compute():
        calls.append(1)
        return pd.DataFrame({"sampling": ["hard", "soft"], "margin": [0.1234567891, 0.5]})

    cfg = TrainConfig.of(loss="sam", tau=5.0)
    first = figure_record(tmp_path, "margins", cfg, compute, fraction=0.25, seed=0)
    again = figure_record(tmp_path, "margins", cfg, compute, fraction=0.25, seed=0)
    assert calls == [1] and again.equals(first) and first.margin[0] == pytest.approx(0.123457)
    figure_record(tmp_path, "margins", cfg, compute, fraction=0.25, seed=1)     # another seed: another record
    assert calls == [1, 1] and len(list(tmp_path.glob("figure-margins-*-f0.25-s*.csv"))) == 2


def test_a_plans_grid_runs_its_members_and_its_headline_arms_on_their_extra_seeds(tmp_path, tiny):
    from itmlib.training.grid import Grid

    tr, dv = tiny
    cfg = TrainConfig(loss="triplet", data="w", **TINY)
    g = Grid({"a": cfg, "b": dataclasses.replace(cfg, margin=0.1)}, (0.5,), range(1, 2), "w", headline=("b",),
             headline_seeds=3)
    runs, history = g.run(tr, dv, dv, dv.relevance(), context=RunContext(ckpt_dir=str(tmp_path), device="cpu"))
    got = sorted(zip(runs.method, runs.seed, runs.fraction))
    assert got == sorted((m.name, m.seed, m.fraction) for m in g.members()) == \
        [("a", 1, 0.5), ("b", 1, 0.5), ("b", 2, 0.5), ("b", 3, 0.5)]
    assert sorted(set(zip(history.method, history.seed))) == [("a", 1), ("b", 1), ("b", 2), ("b", 3)]
    alone, _ = run_grid(g.configs, tr, dv, dv, dv.relevance(), fractions=[0.5], seeds=[1],
                        context=RunContext(ckpt_dir=str(tmp_path), device="cpu"))
    pd.testing.assert_frame_equal(runs.iloc[:2].reset_index(drop=True), alone)   # the plain grid first, as run_grid gives it


def test_load_splits_hands_every_world_the_same_datasets():
    """Notebook 09 and each of its four worlds loaded the splits apiece (five ~2 GB copies at medium): they share
    one now, and other arguments load their own."""
    from itmlib.training.world import load_splits

    first = load_splits("synthetic", "smoke", 0)
    assert [d.split for d in first] == ["train", "dev", "test"]
    assert all(a is b for a, b in zip(first, load_splits("synthetic", "smoke", 0)))
    other = load_splits("synthetic", "smoke", 1)
    assert other[0] is not first[0] and other[0].captions != first[0].captions
