"""tools/member_pool.py: the members it trains are the notebooks' own grids at medium (ci/medium.yaml), headline
arms first, and SSAMT members that share a first phase are grouped behind one of them."""
import importlib.util
import json
from collections import Counter
from pathlib import Path

import pytest

from itmlib.training.world import training_source

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def pool():
    spec = importlib.util.spec_from_file_location("member_pool", ROOT / "tools" / "member_pool.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_07_members_are_the_medium_grid_with_five_seeds_for_the_headline_arms(pool):
    from itmlib.claims import headline_methods

    p = pool.notebook_params("07_semantic_neighborhoods", "medium")
    todo = pool.home("07_semantic_neighborhoods").members(p)
    news = [m for m in todo if m.world == "news"]
    heads = headline_methods("07_semantic_neighborhoods", "news")
    seeds = Counter(m.name for m in news)
    assert {n: seeds[n] for n in heads} == {n: 5 for n in heads}
    assert all(seeds[n] == 3 for n in p["news_arms"] if n not in heads) and set(seeds) == set(p["news_arms"])
    assert [m.name for m in todo[:len(heads) * 5]] == [n for n in heads for _ in range(5)]      # headline arms first
    lit = [m for m in todo if m.world == "literal"]
    assert len(lit) == 3 * len(p["literal_arms"]) and {m.fraction for m in lit} == {p["literal_fraction"]}
    assert "TRIP+NP+SYM" in p["literal_arms"] and "OURS (DBOW)" in p["news_arms"]
    # the news arms train under the recipe the probes chose; at news_* 0 they take the shared recipe, and the literal
    # arms keep their configs (and their records) either way
    from itmlib.training.train import config_hash

    assert {(m.config.lr, m.config.epochs, m.config.patience) for m in news} == {(1e-4, 30, 3)}
    shared = pool.home("07_semantic_neighborhoods").members(dict(p, news_lr=0, news_epochs=0, news_patience=0))
    assert {(m.config.lr, m.config.epochs, m.config.patience) for m in shared if m.world == "news"} == \
        {(m.config.lr, m.config.epochs, m.config.patience) for m in lit} == {(1e-3, 15, 0)}
    assert [config_hash(m.config) for m in shared if m.world == "literal"] == [config_hash(m.config) for m in lit]


def test_a_grid_expands_into_its_members_headline_arms_first_by_hand():
    from itmlib.training.grid import Grid, Member

    g = Grid({"a": "cfg-a", "b": "cfg-b"}, (0.5,), range(1, 3), "w", headline=("b", "absent"), headline_seeds=3)
    assert g.members() == [Member("b", "cfg-b", 0.5, s, "w") for s in (1, 2, 3)] + \
        [Member("a", "cfg-a", 0.5, s, "w") for s in (1, 2)]


def test_the_pool_trains_the_plan_the_notebook_runs(pool):
    """06, 07 and 08 run their grids from their paper module's plan (``ssamt.grids``, ``neighborhoods.grids``,
    ``teran.grids``), 10 from ``itmlib.course.real_language.grids`` (its members: the 10 test above); the pool's
    members are that plan's members, one by one and in its order."""
    from itmlib.papers import neighborhoods
    from itmlib.papers import ssamt, teran
    from itmlib.training.train import config_hash

    key = lambda ms: [(m.name, config_hash(m.config), m.fraction, m.seed, m.world) for m in ms]  # noqa: E731
    p6 = pool.notebook_params("06_phrase_labels", "medium")
    plan6 = ssamt.grids(p6, training_source(p6, "synthetic"))
    assert key(pool.home("06_phrase_labels").members(p6)) == key(m for g in plan6.values() for m in g.members())
    assert set(plan6) == {"table3", "rule3", "base", "longer", "vse"} | {f"table5 {f:g}" for f in p6["fractions"] if f < 1}
    p7 = pool.notebook_params("07_semantic_neighborhoods", "medium")
    plan7 = neighborhoods.grids(p7, training_source(p7), training_source(p7, "synthetic"))
    assert key(pool.home("07_semantic_neighborhoods").members(p7)) == key(m for g in plan7.values() for m in g.members())
    p8 = pool.notebook_params("08_teran", "medium")
    plan8 = teran.grids(p8, training_source(p8, "synthetic"))["teran"]
    todo8 = pool.home("08_teran").members(p8)
    assert sorted(key(todo8)) == sorted(key(plan8.members()))
    heads = [m for m in todo8 if m.name in plan8.headline]          # seed by seed: a pool cut short leaves pairs
    assert todo8[:len(heads)] == heads and [m.seed for m in heads] == sorted(m.seed for m in heads)
    assert len(heads) == 5 * len(plan8.headline) and "TERAN mrsw" in plan8.headline
    for nb, call in (("06_phrase_labels", "ssamt.grids("), ("07_semantic_neighborhoods", "neighborhoods.grids("),
                     ("08_teran", "teran.grids("), ("09_real_language", "real_language.grids(")):
        import json
        code = "".join("".join(c["source"]) for c in json.loads((ROOT / "notebooks" / f"{nb}.ipynb").read_text())["cells"]
                       if c["cell_type"] == "code")
        assert call in code and not any(f in code for f in ("table3_configs(", "arm_configs(", "comparison_configs(")), nb
        # ... and evaluates on the worlds the paper's home builds, the ones the pool's workers build
        assert ".world(" in code and not any(f in code for f in ("_evaluator(", "teran_dev_relevance(", "arm_omegas(")), nb
    tool = (ROOT / "tools" / "member_pool.py").read_text()
    assert not any(f in tool for f in ("load_dataset", "_evaluator(", "exec(", "eval_relevance")), "the pool builds no world"


def test_06_members_share_their_first_phase_in_groups(pool):
    """The medium grid's arms (seeds, fractions, both phrase settings, the longer arms, the rule-3 arm, Table 5's
    arms on all the data under the scale's recipe) on the smoke world: the grouping reads the members' configs, not
    the world's size, and the medium world took ~30 s to build. Table 3's three arms of one seed and phrase setting
    share a first phase, and so do Table 5's at each fraction; the rule-3 arm's differs (rule 3 masks phase 1 too)."""
    p = {**pool.notebook_params("06_phrase_labels", "medium"), "scale": "smoke"}
    todo = pool.home("06_phrase_labels").members(p)
    groups = pool.phase_one_groups(todo, p, "06_phrase_labels", "runs/checkpoints")
    assert sum(map(len, groups)) == len(todo) == 70 and Counter(map(len, groups)) == {3: 18, 2: 5, 1: 6}
    for g in groups:                           # one first phase: one seed, one fraction, one phrase setting
        assert len({(m.fraction, m.seed, "w/o" in m.name, " x" in m.name) for m in g}) == 1


def test_a_sweeps_longer_warm_up_waits_for_the_shorter_one_of_its_arm_and_seed(pool, monkeypatch, tmp_path):
    """A recipe probe's runs of one arm and seed that differ by their warm-up form one group, shortest first
    whatever the sweep's order: the longer one then starts from the shorter one's state instead of training the
    shared epochs again beside it. Other arms and seeds stay apart."""
    from types import SimpleNamespace

    settings = pool.sweep_settings([["teran_warmup_epochs", "6", "3"], ["tern_warmup_epochs", "6", "3"]])
    ps = [pool.notebook_params("09_real_language", "smoke", n_seeds=2, papers=["teran"], **{k: int(v) for k, v in s.items()})
          for s in settings]
    todo = list(pool.sweep_members([pool.home("09_real_language").members(q) for q in ps], settings))
    world = SimpleNamespace(train=SimpleNamespace(split="train", n_images=8,     # what trained_config reads
                                                  subset_size=lambda fraction, seed: ("train", int(8 * fraction))))
    monkeypatch.setattr(pool, "home", lambda nb: SimpleNamespace(world=lambda *a: world))
    groups = pool.phase_one_groups(todo, ps[0], "09_real_language", str(tmp_path))
    assert sorted((g[0].name, g[0].seed, [m.config.warmup_epochs for m in g]) for g in groups) == [
        (arm, seed, [3, 6]) for arm in ("TERAN mrsw", "TERAN mwsr", "TERN (global)") for seed in (0, 1)]
    assert [(g[0].name, g[0].seed) for g in groups] == list(dict.fromkeys((m.name, m.seed) for m in todo))  # queue order
    assert all(len({(m.name, m.seed) for m in g}) == 1 for g in groups)
    # once a shorter warm-up's state is on disk, the longer run needs no wait: it starts beside the shorter one
    from itmlib.training.records import checkpoint_name, trained_config
    from itmlib.training.run_config import config_dict
    from itmlib.training.train import checkpoint_folder

    short = next(m for m in todo if m.name == "TERAN mrsw" and m.seed == 0 and m.config.warmup_epochs == 3)
    folder = checkpoint_folder(trained_config(short.config, world.train, short.fraction, 0), checkpoint_name(short.name), tmp_path)
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(config_dict(trained_config(short.config, world.train, short.fraction, 0))))
    (folder / "warmup.pt").write_bytes(b"")
    groups = pool.phase_one_groups(todo, ps[0], "09_real_language", str(tmp_path))
    mrsw0 = [[m.config.warmup_epochs for m in g] for g in groups if (g[0].name, g[0].seed) == ("TERAN mrsw", 0)]
    assert sorted(mrsw0) == [[3], [6]] and len(groups) == 7


def test_06_evaluates_table_3_and_the_rule_3_arm_per_part_as_the_notebook_does(pool):
    """With ``per_part`` the notebook evaluates Table 3's arms and the rule-3 arm with Table 4 per part: the pool
    evaluates those members the same way (their records carry that evaluation), and the rest as before."""
    from itmlib.papers import ssamt

    p = {**pool.notebook_params("06_phrase_labels", "medium"), "scale": "smoke", "rule3_arm": True, "per_part": False}
    before = pool.home("06_phrase_labels").members(p)
    todo = pool.home("06_phrase_labels").members(dict(p, per_part=True))
    table3 = {(m.name, m.seed) for m in before if m.fraction == p["fraction"] and m.world == "ssamt" and " epochs" not in m.name}
    assert ssamt.RULE3_ARM in {n for n, _ in table3} and ssamt.PER_PART_WORLD not in {m.world for m in before}
    assert {(m.name, m.seed) for m in todo if m.world == ssamt.PER_PART_WORLD} == table3
    assert [(m.name, m.fraction, m.seed) for m in todo] == [(m.name, m.fraction, m.seed) for m in before]
    keys = {w: pool.home("06_phrase_labels").world(w, p, "cpu").evaluate.cache_key for w in ("ssamt", ssamt.PER_PART_WORLD)}
    assert keys[ssamt.PER_PART_WORLD] == keys["ssamt"] + "|per part v2"


def test_10_members_are_the_notebooks_arms_and_the_scarce_ones_wait_for_the_baseline(pool):
    from itmlib.course import real_language

    p = pool.notebook_params("09_real_language", "medium")
    assert set(p["papers"]) <= {"sam", "ssamt", "neighborhoods", "teran"}     # the papers whose records are committed
    p = p.replace(papers=["sam", "ssamt", "neighborhoods", "teran"])
    todo = pool.home("09_real_language").members(p)
    kinds = Counter(m.world for m in todo)
    fds, n = p["full_data_seeds"], p["n_seeds"]
    assert kinds == {"sam": fds + len(p["candidate_fractions"]) + fds, "teran": 3 * n, "ssamt": 2 * n, "neighborhoods": 2 * n}
    assert {m.name for m in todo if m.world == "teran"} == {"TERAN mrsw", "TERAN mwsr", "TERN (global)"}
    fractions = {k: {m.fraction for m in todo if m.world == k} for k in ("ssamt", "neighborhoods", "teran")}
    assert fractions == {"ssamt": {p["ssamt_fraction"]}, "neighborhoods": {p["neighborhoods_fraction"]}, "teran": {1.0}}
    assert p["teran_fraction"] == 1.0            # TERAN trains on every image at medium
    first, _ = real_language.followup(p, None)
    waited = [m for m in todo if first(m)]     # the full-data baseline's seeds and the candidate fractions
    assert sorted((m.fraction, m.seed) for m in waited) == \
        sorted([(1.0, s) for s in range(fds)] + [(f, 0) for f in p["candidate_fractions"]])
    assert not pool.home("09_real_language").members(dict(p, papers=[]))
    # the pool's members are the notebook's plan (itmlib.course.real_language), 09's full-data VSE++ once
    from itmlib.training.train import config_hash
    from itmlib.training.world import plan_members

    key = lambda ms: [(m.name, config_hash(m.config), m.fraction, m.seed, m.world) for m in ms]  # noqa: E731
    plan = real_language.grids(p, todo[0].config.data)
    assert key(todo) == key(plan_members(plan)) and len(todo) < sum(len(g.members()) for g in plan.values())


def test_10s_papers_take_the_recipes_their_own_notebooks_chose_and_the_defaults_keep_every_config(pool):
    """Each paper's recipe knob reaches its configs only (TERAN's epochs and patience, TERN's warm-up, SSAMT's phases,
    the neighbourhood losses' lr, epochs and patience); at their defaults every config hashes as before, so no record is
    orphaned."""
    from itmlib.course import real_language
    from itmlib.training.train import config_hash

    p = dict(pool.notebook_params("09_real_language", "smoke"), papers=["sam", "ssamt", "neighborhoods", "teran"])
    base = {k: (n, config_hash(c)) for k, g in real_language.grids(p, "d").items() for n, c in g.configs.items()}
    old = {k: v for k, v in p.items() if not k.startswith(("sam_scarce", "teran_e", "teran_p", "teran_w", "tern_w", "ssamt_e", "ssamt_i",
                                                            "ssamt_s", "neighborhoods_lr", "neighborhoods_e", "neighborhoods_p"))}
    assert base == {k: (n, config_hash(c)) for k, g in real_language.grids(old, "d").items() for n, c in g.configs.items()}
    new = real_language.grids(dict(p, teran_epochs=20, teran_patience=3, ssamt_epochs=16, ssamt_intra_epochs=8,
                                   ssamt_select_after=1, neighborhoods_lr=1e-4,
                                   neighborhoods_epochs=30, neighborhoods_patience=3, sam_scarce_epochs=60,
                                   tern_warmup_epochs=20), "d")
    assert {(c.epochs, c.patience) for c in new["teran"].configs.values()} == {(20, 3)}
    assert {k: c.warmup_epochs for k, c in new["teran"].configs.items()} == {"TERAN mrsw": 1, "TERAN mwsr": 1, "TERN (global)": 20}
    # TERN's own warm-up is the config a probe of it under teran_warmup_epochs trains: the probe's seed 0 record carries over
    probe = real_language.grids(dict(p, teran_epochs=20, teran_patience=3, teran_warmup_epochs=20), "d")["teran"]
    assert config_hash(probe.configs["TERN (global)"]) == config_hash(new["teran"].configs["TERN (global)"])
    assert {(c.epochs, c.model.intra_epochs, c.model.select_after) for c in new["ssamt"].configs.values()} == {(16, 8, 1)}
    assert {(c.lr, c.epochs, c.patience) for c in new["neighborhoods"].configs.values()} == {(1e-4, 30, 3)}
    assert {(c.epochs, c.lr_decay_epochs) for c in new["sam candidates"].configs.values()} == {(60, 30)}
    assert {(c.epochs, c.lr_decay_epochs) for c in real_language.scarce_grid(dict(p, sam_scarce_epochs=60), "d", 0.1)
            .configs.values()} == {(60, 30)}
    for full in ("sam baseline", "sam full"):    # every training image keeps 05's full-data budget
        assert {k: config_hash(c) for k, c in new[full].configs.items()} == \
            {k: config_hash(c) for k, c in real_language.grids(p, "d")[full].configs.items()}


def test_the_schedule_trains_the_chosen_fraction_before_the_held_members_and_a_group_behind_its_first(pool):
    """The baseline's records choose the fraction (A, B); the members that neither choose nor wait (F, and the
    group G1-G3 that shares one first phase) are held, even with a worker free; the arms on the chosen
    fraction (S1, S2) go first once A and B are done; a group trains its first member alone, then the rest."""
    m = lambda name, world="sam": pool.Member(name, None, 1.0, 0, world)   # noqa: E731
    a, b, f, s1, s2 = m("A"), m("B"), m("F"), m("S1"), m("S2")
    g1, g2, g3 = m("G1", "ssamt"), m("G2", "ssamt"), m("G3", "ssamt")
    calls = []
    sched = pool.Schedule([[a], [b], [f], [g1, g2, g3]], first=lambda x: x.name in "AB",
                          then=lambda: calls.append(1) or [s1, s2])
    assert [sched.take(), sched.take()] == [a, b]
    sched.finished(a)
    assert sched.take() is None and calls == []                 # F and the G group are held while B trains
    sched.finished(b)                                           # the fraction is chosen
    assert calls == [1] and [sched.take(), sched.take()] == [s1, s2]
    sched.finished(s1)
    assert [sched.take(), sched.take(), sched.take()] == [f, g1, None]   # G2, G3 wait on G1's first phase
    sched.finished(g1)
    assert [sched.take(), sched.take(), sched.take()] == [g2, g3, None]
    assert sched.total == 8 and calls == [1]                   # the waiting members are asked for once


def test_without_a_fraction_to_choose_the_schedule_keeps_the_groups_order(pool):
    m = lambda name: pool.Member(name, None, 0.25, 0, "neighborhoods")   # noqa: E731
    x, y, z = m("X"), m("Y"), m("Z")
    sched = pool.Schedule([[x, y], [z]])
    assert [sched.take(), sched.take(), sched.take()] == [x, z, None]
    sched.finished(x)
    assert sched.take() == y and sched.total == 3


def test_08_comparisons_train_like_mrsw_and_the_figures_read_the_committed_4_epoch_records(pool):
    """Every arm of 08 trains under the recipe MrSw's probe chose (at most 20 epochs, patience 3), so each
    comparison sits beside MrSw's own seeds with no ``reference`` grid; the pictures and the query time come
    from seed 0's models at ``figure_epochs`` 4 (no early stopping), whose committed figure records a rerun
    reads. ``ablation_epochs`` 4 brings back the short comparisons, set beside MrSw at 4 epochs."""
    from itmlib.papers import teran
    from itmlib.training.train import config_hash

    p = pool.notebook_params("08_teran", "medium")
    plans = teran.grids(p, training_source(p, "synthetic"))
    configs = plans["teran"].configs
    assert list(plans) == ["teran"] and {(c.epochs, c.patience) for c in configs.values()} == {(20, 3)}
    assert sorted(m.seed for m in plans["teran"].members() if m.name == "TERAN symm") == [0, 1, 2]
    figures = teran.figure_configs(p, configs)
    assert {(f.epochs, f.patience) for f in figures.values()} == {(4, 0)}
    committed = {f.name.split("-")[2] for f in (ROOT / "results" / "08_teran" / "members").glob("figure-*-s0.csv")}
    assert {config_hash(figures[n]) for n in ("TERAN mrsw", "TERN (global)")} <= committed
    assert teran.figure_configs({**p, "figure_epochs": 0}, configs) == configs
    short = teran.grids({**p, "ablation_epochs": 4}, training_source(p, "synthetic"))
    assert short["reference"].configs["TERAN mrsw"] == figures["TERAN mrsw"]
    assert short["teran"].configs["TERAN symm"].epochs == 4 and short["teran"].configs["TERAN mrsw"].epochs == 20


def test_arm_keeps_the_named_arms_members_and_an_unknown_arm_is_refused(pool, monkeypatch, capsys):
    """``--arm 'TERAN mrsw'`` (a recipe probe of one baseline) lists that arm's members only; a misspelt arm
    fails naming the notebook's arms instead of training nothing."""
    monkeypatch.setattr(pool, "phase_one_groups", lambda todo, *a: [[m] for m in todo])   # no world loaded
    args = ["09_real_language", "--scale", "smoke", "--list", "-p", "n_seeds", "2", "-p", "papers", '["teran"]']
    assert pool.main([*args, "--arm", "TERAN mrsw"]) == 0
    listed = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("  ")]
    assert len(listed) == 2 and all(ln.strip().startswith("TERAN mrsw, teran,") for ln in listed)
    with pytest.raises(SystemExit):
        pool.main([*args, "--arm", "TERAN mrsww"])
    assert "its arms: ['TERAN mrsw', 'TERAN mwsr', 'TERN (global)']" in capsys.readouterr().err
    # --seeds keeps those seeds' members (a retrain beside the probe training seed 0); a seed the plan lacks fails
    assert pool.main([*args, "--arm", "TERN (global)", "--seeds", "1"]) == 0
    listed = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("  ")]
    assert len(listed) == 1 and listed[0].strip().startswith("TERN (global), teran,") and listed[0].endswith("seed 1, 2 epochs")
    with pytest.raises(SystemExit):
        pool.main([*args, "--seeds", "2"])
    assert "its seeds: [0, 1]" in capsys.readouterr().err
    # the arms train in the order given (the claims answered soonest first), each arm's seeds in order
    assert pool.main([*args, "--arm", "TERN (global)", "TERAN mrsw"]) == 0
    listed = [(ln.split(",")[0].strip(), ln.split("seed ")[1][0]) for ln in capsys.readouterr().out.splitlines()
              if ln.startswith("  ")]
    assert listed == [("TERN (global)", "0"), ("TERN (global)", "1"), ("TERAN mrsw", "0"), ("TERAN mrsw", "1")]


def test_seeds_of_gives_one_arm_its_own_seeds_beside_the_others(pool, monkeypatch, capsys):
    """``--seeds 1 --seeds-of 'TERAN mrsw' 0`` (a probe's seed 0 and another arm's retrain in one pool) lists MrSw's
    seed 0 and TERN's seed 1 only; an unknown arm, an unknown seed or an arm without seeds fail naming why."""
    monkeypatch.setattr(pool, "phase_one_groups", lambda todo, *a: [[m] for m in todo])   # no world loaded
    args = ["09_real_language", "--scale", "smoke", "--list", "-p", "n_seeds", "2", "-p", "papers", '["teran"]',
            "--arm", "TERAN mrsw", "TERN (global)"]
    assert pool.main([*args, "--seeds", "1", "--seeds-of", "TERAN mrsw", "0"]) == 0
    listed = [(ln.split(",")[0].strip(), ln.split("seed ")[1][0]) for ln in capsys.readouterr().out.splitlines()
              if ln.startswith("  ")]
    assert listed == [("TERAN mrsw", "0"), ("TERN (global)", "1")]
    assert pool.main([*args, "--seeds-of", "TERAN mrsw", "1"]) == 0      # without --seeds, the others keep all theirs
    listed = [(ln.split(",")[0].strip(), ln.split("seed ")[1][0]) for ln in capsys.readouterr().out.splitlines()
              if ln.startswith("  ")]
    assert listed == [("TERAN mrsw", "1"), ("TERN (global)", "0"), ("TERN (global)", "1")]
    for bad, why in [(["TERAN mrsww", "0"], "--seeds-of names no arm 'TERAN mrsww'"),
                     (["TERAN mrsw", "7"], "no seed(s) [7]; its seeds: [0, 1]"),
                     (["TERAN mrsw"], "--seeds-of 'TERAN mrsw' needs seeds as whole numbers, got []")]:
        with pytest.raises(SystemExit):
            pool.main([*args, "--seeds-of", *bad])
        assert why in capsys.readouterr().err


def test_threads_sets_each_workers_torch_threads_and_a_pool_without_one_is_refused(pool, monkeypatch, capsys):
    """``--threads 2`` (one member finished sooner, on a machine given back before a one-thread member ends)
    reaches torch in every worker and in the parent that prepares the caches; 0 fails naming why."""
    import torch

    before = torch.get_num_threads()
    try:
        pool._setup("09_real_language", {}, "runs/checkpoints", "cpu", "results", 2)
        assert torch.get_num_threads() == 2
        pool._setup("09_real_language", {}, "runs/checkpoints", "cpu", "results")
        assert torch.get_num_threads() == 1
        monkeypatch.setattr(pool, "phase_one_groups", lambda todo, *a: [[m] for m in todo])   # no world loaded
        args = ["09_real_language", "--scale", "smoke", "--list", "-p", "papers", '["teran"]']
        assert pool.main([*args, "--threads", "2"]) == 0 and torch.get_num_threads() == 2
        with pytest.raises(SystemExit):
            pool.main([*args, "--threads", "0"])
        assert "--threads must be >= 1, got 0" in capsys.readouterr().err
    finally:
        torch.set_num_threads(before)


def test_a_sweep_queues_each_setting_position_by_position_and_a_shared_member_once(pool, monkeypatch, capsys):
    """``--sweep teran_warmup_epochs 3 6 --sweep tern_warmup_epochs 20 3`` (a recipe probe of two baselines in one
    queue) lists MrSw at 3 and TERN at 20, then MrSw at 6 and TERN at 3, each config with its own warm-up; a
    member two settings share trains once; a sweep without values or sweeps of unequal length fail naming why."""
    monkeypatch.setattr(pool, "phase_one_groups", lambda todo, *a: [[m] for m in todo])   # no world loaded
    args = ["09_real_language", "--scale", "smoke", "--list", "-p", "n_seeds", "2", "-p", "papers", '["teran"]',
            "--seeds", "0", "--sweep", "teran_warmup_epochs", "3", "6"]
    assert pool.main([*args, "--sweep", "tern_warmup_epochs", "20", "3", "--arm", "TERAN mrsw", "TERN (global)"]) == 0
    listed = [ln.strip() for ln in capsys.readouterr().out.splitlines() if ln.startswith("  ")]
    assert [ln.split(",")[0] for ln in listed] == ["TERAN mrsw", "TERN (global)", "TERAN mrsw", "TERN (global)"]
    assert listed[2].endswith("teran_warmup_epochs 6, tern_warmup_epochs 3")
    settings = pool.sweep_settings([["teran_warmup_epochs", "3", "6"], ["tern_warmup_epochs", "20", "3"]])
    plans = [pool.home("09_real_language").members(pool.notebook_params(
        "09_real_language", "smoke", n_seeds=2, papers=["teran"], **{k: int(v) for k, v in s.items()})) for s in settings]
    swept = [m for m in pool.sweep_members(plans, settings) if m.seed == 0]
    assert [(m.name, m.config.warmup_epochs) for m in swept] == [
        ("TERAN mrsw", 3), ("TERAN mwsr", 3), ("TERN (global)", 20), ("TERAN mrsw", 6), ("TERAN mwsr", 6),
        ("TERN (global)", 3)]
    # a second setting that changes nothing adds nothing
    assert pool.sweep_members([plans[0], plans[0]], [{}, {}]) == pool.sweep_members([plans[0]], [{}])
    with pytest.raises(ValueError, match="teran_warmup_epochs: 2, tern_warmup_epochs: 1"):
        pool.sweep_settings([["teran_warmup_epochs", "3", "6"], ["tern_warmup_epochs", "20"]])
    with pytest.raises(ValueError, match="--sweep seed would change the data"):    # the workers load one world
        pool.sweep_settings([["seed", "0", "1"]])
    with pytest.raises(SystemExit):
        pool.main([*args, "--sweep", "tern_warmup_epochs"])
    assert "--sweep tern_warmup_epochs names no values" in capsys.readouterr().err


def test_09s_warm_ups_at_medium_are_what_the_committed_probes_choose(pool):
    """TERAN's and TERN's warm-ups at medium (``teran_warmup_epochs``, ``tern_warmup_epochs``) are the ones the
    probe rule (:func:`~itmlib.training.probes.probe_choice`) picks from the committed seed-0 records (the probes'
    and the retrain's own): this world's, once they cover every warm-up of ``WARMUPS_PROBED``; until then the
    previous version's (v5: TERAN over 1 and 3, TERN over 3, 6 and 20). A half-probed world changes nothing."""
    from itmlib.course.real_language import WARMUPS_PROBED, warmup_probes
    from itmlib.data.coco_scenes import coco_scenes_source
    from itmlib.training.probes import probe_choice, probe_curves

    p = pool.notebook_params("09_real_language", "medium")
    folder = ROOT / "results" / "09_real_language"
    seed0 = warmup_probes(folder)
    assert {r["seed"] for r in seed0} == {0} and len({(r["member"], r["config"]["data"], r["config"]["warmup_epochs"])
                                                      for r in seed0}) == len(seed0)
    for member, knob in (("TERAN mrsw", "teran_warmup_epochs"), ("TERN (global)", "tern_warmup_epochs")):
        tables = {}
        for version in (None, 5):
            world = coco_scenes_source(0, scale="medium", **({"version": version} if version else {}))
            seed0 = [r for r in warmup_probes(folder, data=world) if r["member"] == member]
            assert {r["seed"] for r in seed0} <= {0} and len({r["config"]["warmup_epochs"] for r in seed0}) == len(seed0)
            tables[version] = probe_curves(seed0, ["warmup_epochs"])[1]
        here = tables[None]
        if len(here) and set(WARMUPS_PROBED) <= set(here.warmup_epochs):
            assert probe_choice(here, "warmup_epochs") == p[knob], (member, here)
        else:
            assert len(tables[5]) >= 2 and probe_choice(tables[5], "warmup_epochs") == p[knob], (member, tables[5])


def test_09s_patience_stops_sam_and_teran_arms_alike_and_without_it_the_configs_are_05s_and_08s(pool):
    """At medium every SAM arm of notebook 09 (baseline, candidates, full data, scarce) and every TERAN arm stops
    after WORLD_RECIPES' 5 epochs without a better dev score; ``-p patience 0`` gives back 05's configs (no stop,
    the hash the budget probe's record was trained under) and 08's patience for TERAN."""
    from itmlib.course import real_language
    from itmlib.papers import ncs_sam
    from itmlib.training.train import config_hash

    p = pool.notebook_params("09_real_language", "medium")
    assert p["patience"] == real_language.WORLD_RECIPES["medium"]["patience"] == 5
    plan = real_language.grids(p, "d")
    for name in ("sam baseline", "sam candidates", "sam full", "teran"):
        assert {c.patience for c in plan[name].configs.values()} == {5}, name
    assert {c.patience for c in real_language.scarce_grid(p, "d", 0.05).configs.values()} == {5}
    free = real_language.grids(dict(p, patience=0), "d")
    assert {c.patience for c in free["sam full"].configs.values()} == {0}
    assert {c.patience for c in free["teran"].configs.values()} == {3}      # 08's own
    assert config_hash(free["sam baseline"].configs["VSE++"]) == \
        config_hash(ncs_sam.recipe_configs("medium", ["VSE++"], data="d")["VSE++"])
    assert config_hash(plan["sam baseline"].configs["VSE++"]) != config_hash(free["sam baseline"].configs["VSE++"])


def test_09s_budget_probe_shows_the_patience_cuts_only_epochs_past_the_best():
    """The committed budget probe (VSE++ on every training image, seed 0, 05's 30 epochs without a stop) was best
    well before its budget's end: its best epoch plus the patience is below 30, so the patience saves epochs. Once
    the retrain's seed 0 under the patience is in, it is the probe's run cut short: the same dev curve epoch by
    epoch up to its stop, the same best epoch, and it stopped exactly ``patience`` epochs after it."""
    import numpy as np

    from itmlib.course import real_language

    patience = real_language.WORLD_RECIPES["medium"]["patience"]
    # the world the patience was chosen on, as notebook 09 reads the probe (probes/ also holds other worlds' VSE++ seeds)
    records = real_language.patience_probe(ROOT / "results" / "09_real_language", data=real_language.PATIENCE_WORLDS["medium"])
    free = [r for r in records if not r["config"].get("patience")]
    assert len(free) == 1, "the budget probe's record is missing from results/09_real_language/probes/"
    curve, best = np.array(free[0]["history"]["dev_rsum"]), int(free[0]["rows"][0]["best_epoch"])
    assert len(curve) == free[0]["config"]["epochs"] == 30 and best == int(np.argmax(curve)) + 1
    assert best + patience < len(curve)
    for r in records:
        if r["config"].get("patience") == patience:
            cut = np.array(r["history"]["dev_rsum"])
            assert int(r["rows"][0]["best_epoch"]) == best and len(cut) == best + patience
            np.testing.assert_allclose(cut, curve[:len(cut)], rtol=1e-9)


def test_09_takes_the_recipes_05_to_08_chose_from_their_own_notebooks():
    """Notebook 09 restates no other paper's recipe: at medium its plan reads them from what make tables runs
    05-08 with (the values ci/medium.yaml once repeated for 09), and a plan that sets one keeps it."""
    from itmlib.course import real_language

    p = real_language.with_paper_recipes({"scale": "medium"})
    assert {k: p[k] for k in real_language.PAPER_RECIPES} == {
        "sam_scarce_epochs": 60, "ssamt_epochs": 16, "ssamt_intra_epochs": 8, "ssamt_select_after": 1,
        "neighborhoods_epochs": 30, "neighborhoods_patience": 3, "teran_epochs": 20, "teran_patience": 3}
    assert real_language.with_paper_recipes({"scale": "medium", "teran_epochs": 4})["teran_epochs"] == 4
    assert set(real_language.with_paper_recipes({"scale": "smoke"}).values()) == {"smoke", 0}
    scarce = real_language.scarce_grid({"scale": "medium", "seed": 0, "n_seeds": 1, "epochs": 0}, "d", 0.05)
    assert {(c.epochs, c.lr_decay_epochs) for c in scarce.configs.values()} == {(60, 30)}   # 05's scarce budget


def test_a_notebooks_parameters_are_one_typed_object_from_its_parameters_cell(pool):
    """The pool's parameters are the notebook's ``parameters`` cell made a frozen dataclass (type, default, help),
    with ci/<scale>.yaml and the recipe over it; a change is validated again and the object pickles for spawned
    workers."""
    import dataclasses
    import pickle

    p = pool.notebook_params("08_teran", "medium")
    fields = {f.name: f for f in dataclasses.fields(p)}
    assert fields["patience"].type is int and fields["pooling"].type is str
    assert fields["seed"].metadata["help"].startswith("first seed")
    assert (p.epochs, p["patience"], p.scale) == (20, 3, "medium")           # TERAN_RECIPES at medium, by name
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.epochs = 3
    assert p.replace(n_seeds=4).n_seeds == 4 and p.n_seeds == 3
    with pytest.raises(ValueError, match="patience must be an integer >= 0"):
        p.replace(patience=-1)
    with pytest.raises(ValueError, match="no parameter"):
        pool.notebook_params("08_teran", "medium", nope=1)
    assert pickle.loads(pickle.dumps(p)) == p and type(pickle.loads(pickle.dumps(p))) is type(p)


def test_a_second_pool_with_no_followup_never_trains_the_members_that_wait(pool):
    p = pool.notebook_params("09_real_language", "medium").replace(papers=["sam"])
    plan = pool.home("09_real_language")
    todo = [m for m in plan.members(p) if m.name == "VSE++ + SAM"]                 # SAM's full-data arm
    first, then = pool.followup(plan, p, None, todo)                               # the first pool: scarce arms follow
    assert callable(then) and not any(first(m) for m in todo)
    assert pool.followup(plan, p, None, todo, follow=False) is None               # --no-followup: only these members
    assert pool.followup(plan, p.replace(papers=["ssamt"]), None, todo) is None   # no SAM in the plan: nothing waits


def test_09s_ssamt_width_probe_changes_only_the_width(pool):
    """``ssamt_embed_dim`` 256 (VSE++'s width) gives SSAMT's +LM and +PM a 256-wide mask transformer with a 512-wide
    feed-forward layer and nothing else new; 0 keeps notebook 06's 128, the width the committed seed-0 records
    trained at (so the retrain's members keep their records)."""
    import dataclasses

    from itmlib.course import real_language
    from itmlib.training.convergence import read_records

    configs = {d: real_language.grids(real_language.with_paper_recipes(pool.notebook_params(
        "09_real_language", "medium", ssamt_embed_dim=d)), "DATA")["ssamt"].configs for d in (0, real_language.SSAMT_WIDTH_PROBED)}
    assert list(configs[0]) == ["+LM (w/ phrases)", "+PM (w/ phrases)"] == list(configs[256])
    for arm, narrow in configs[0].items():
        wide = configs[256][arm]
        assert (narrow.model.embed_dim, narrow.model.ff_dim, wide.model.embed_dim, wide.model.ff_dim) == (128, 256, 256, 512)
        assert dataclasses.replace(wide, model=dataclasses.replace(wide.model, embed_dim=128, ff_dim=256)) == narrow
    seed0 = [r for r in read_records(ROOT / "results" / "09_real_language" / "members") if r["member"] in configs[0] and r["seed"] == 0]
    assert seed0 and {r["config"]["model"]["embed_dim"] for r in seed0} == {128}


def test_09s_width_probe_table_reads_each_width_against_ssamts_level(tmp_path):
    """Seed 0 of +LM and +PM at 128 (the retrain's, in members/) and +PM at 256 (the probe's, in probes/): one row
    per arm and width with its test Rsum against the level; the reading names the width not yet run and its command."""
    from itmlib.course import real_language
    from itmlib.course.results import shown_float
    from itmlib.training.grid import RECORD_VERSION

    def record(folder, member, width, dev, test, seed=0, data="w|train[0.25@seed0]|14500"):
        (tmp_path / folder).mkdir(exist_ok=True)
        cfg = {"epochs": len(dev), "select_by": "rsum", "seed": seed, "data": data, "warmup_epochs": 1,
               "model": {"kind": "ssamt", "embed_dim": width}}
        best = dev.index(max(dev)) + 1
        rec = {"record": RECORD_VERSION, "member": member, "fraction": 0.25, "seed": seed, "config": cfg,
               "rows": [{"best_epoch": best, "rsum": test}], "history": {"epoch": list(range(1, len(dev) + 1)), "dev_rsum": dev}}
        (tmp_path / folder / f"{member[:3]}-{width}-{seed}-{data[0]}.json").write_text(json.dumps(rec))

    record("members", "+LM (w/ phrases)", 128, [60.0, 80.0, 84.0, 84.5], 85.0)
    record("members", "+PM (w/ phrases)", 128, [60.0, 82.0, 86.0, 86.5], 87.44)
    record("members", "+PM (w/ phrases)", 128, [1.0, 2.0], 1.5, seed=1)                    # not seed 0: not the probe's
    record("probes", "+PM (w/ phrases)", 256, [70.0, 100.0, 118.0, 118.2], 120.5)
    record("probes", "+PM (w/ phrases)", 256, [9.0, 9.0], 9.0, data="another world|train|1")  # another world's
    t = real_language.width_probe_table(tmp_path, 114.4, data="w")
    assert list(zip(t.member, t.embed_dim, t["test rsum"], t.reaches)) == [
        ("+LM (w/ phrases)", 128, 85.0, False), ("+PM (w/ phrases)", 128, 87.44, False), ("+PM (w/ phrases)", 256, 120.5, True)]
    assert set(t.level) == {114.4} and list(t["best epoch"]) == [4, 4, 4]
    said = real_language.width_reading(t, shown_float).splitlines()
    assert said[0].startswith("+LM (w/ phrases), seed 0: width 128: test Rsum 85, below its level 114.4 (best epoch 4 of 4")
    assert said[0].endswith("(best epoch 4 of 4, still rising); width 256: not run yet")
    assert "width 256: test Rsum 120.5, reaches its level 114.4" in said[1] and "not run yet" not in said[1]
    assert said[2] == f"The probe trains +LM (w/ phrases) at width 256 with {real_language.WIDTH_PROBE_COMMAND}"
    assert "no SSAMT seed 0 records" in real_language.width_reading(real_language.width_probe_table(tmp_path / "none", 114.4), shown_float)
