"""Convergence from made-up dev curves: each state, the arm's majority, the arm labels, the records."""

import json
import math

import pytest

from itmlib.training.convergence import (CONVERGED, FIRST, PLATEAU, RISING, WARMUP, Training, arm_labels, arm_state,
                                         arm_table, read_records, relative_gain, seed_state)


def test_relative_gain_is_over_the_last_two_epochs():
    assert relative_gain([100, 200, 202, 210]) == pytest.approx(10 / 200)  # (210 - 202) / 202 would be one epoch
    assert relative_gain([100, 110]) == pytest.approx(0.1)                 # two epochs: over one
    assert math.isnan(relative_gain([5.0]))


@pytest.mark.parametrize("curve,best,first,state", [
    ([100, 150, 180, 200], 4, 1, RISING),          # best last, +11% over two epochs
    ([100, 198, 199, 199.9], 4, 1, PLATEAU),       # best last, +0.96% over two: at most RISE is a plateau
    ([100, 197, 199, 200], 4, 1, RISING),          # +1.52%
    ([100, 200, 190, 180], 2, 1, PLATEAU),         # dev stopped improving
    ([300, 120, 110, 100], 1, 1, FIRST),           # fell from epoch 1 on, 4 epochs trained
    ([300, 120, 110], 1, 1, PLATEAU),              # only 3 epochs: too few to call it
    ([10, 20, 30, 40, 90, 50, 40, 45], 5, 5, FIRST),   # SSAMT: selected at phase 2's first epoch (5), 4 from there
    ([10, 20, 30, 40, 60, 90, 80, 70], 6, 5, PLATEAU),
])
def test_seed_state_by_hand(curve, best, first, state):
    assert seed_state(curve, best, first) == state


# 09's TERN: dev NDCG climbs through a 3-epoch warm-up, falls once the hardest negatives start, and early stopping
# (patience 3) ends the run at epoch 6 with the warm-up's last epoch selected
TERN = [155.1, 171.3, 179.7, 170.1, 169.7, 172.6]


@pytest.mark.parametrize("curve,best,warmup,state", [
    (TERN, 3, 3, WARMUP),
    (TERN, 3, 0, PLATEAU),                           # no warm-up named: an early stop like any other
    (TERN[:5], 3, 3, PLATEAU),                       # two epochs past the warm-up: too few to call it
    (TERN[:2] + [190.0] + TERN[3:], 3, 2, PLATEAU),  # best after a 2-epoch warm-up: its own loss trained it
    ([300, 120, 110, 100], 1, 3, FIRST),             # epoch 1 keeps its own name
])
def test_a_model_selected_before_its_own_loss_began_did_not_train(curve, best, warmup, state):
    assert seed_state(curve, best, 1, warmup) == state


def test_seed_state_rejects_a_best_epoch_off_the_curve():
    with pytest.raises(ValueError, match="outside"):
        seed_state([1, 2, 3], 4)


def test_arm_state_needs_more_than_half():
    assert arm_state([RISING, RISING, PLATEAU]) == RISING
    assert arm_state([RISING, PLATEAU]) == CONVERGED                 # exactly half: not a majority
    assert arm_state([FIRST, FIRST, FIRST, RISING, PLATEAU]) == "selected at epoch 1"
    assert arm_state([FIRST, FIRST, PLATEAU], first_epoch=5) == "selected at epoch 5"
    assert arm_state([WARMUP, WARMUP, WARMUP, PLATEAU, PLATEAU], warmup_end=3) == "selected in its warm-up, epochs 1-3"
    assert arm_state([WARMUP, PLATEAU, PLATEAU, PLATEAU, PLATEAU], warmup_end=3) == CONVERGED   # 09's MrSw: one seed


def _rec(member, seed, curve, best, fraction=1.0, **config):
    cfg = {"epochs": len(curve), "select_by": "rsum", "seed": seed, "data": f"d|train|{seed}", "warmup_epochs": 1,
           "model": {"kind": "vse", "embed_dim": 8}}
    cfg.update(config)
    return {"record": 1, "member": member, "fraction": fraction, "seed": seed, "config": cfg,
            "rows": [{"best_epoch": best}], "history": {"epoch": list(range(1, len(curve) + 1)), "dev_rsum": curve}}


def test_arm_labels_name_a_recipe_only_where_namesakes_differ():
    recs = [_rec("VSE++", 0, [1, 2], 2, 0.02, warmup_epochs=1), _rec("VSE++", 1, [1, 2], 2, 0.02, warmup_epochs=1),
            _rec("VSE++", 0, [1, 2], 2, 0.02, warmup_epochs=0), _rec("VSE++", 0, [1, 2], 2, 1.0),
            _rec("SAM", 0, [1, 2], 2, 0.02, lr=1e-4, model={"kind": "vse", "embed_dim": 16}),
            _rec("SAM", 1, [1, 2], 2, 0.02, lr=1e-3, model={"kind": "vse", "embed_dim": 8})]
    assert arm_labels(recs) == ["VSE++@0.02[warmup_epochs=1]", "VSE++@0.02[warmup_epochs=1]",
                                "VSE++@0.02[warmup_epochs=0]", "VSE++@1",
                                "SAM@0.02[lr=0.0001,model.embed_dim=16]", "SAM@0.02[lr=0.001,model.embed_dim=8]"]


def test_arm_table_reports_seeds_epochs_best_epochs_gain_and_state(tmp_path):
    recs = [_rec("TERAN", 0, [100, 150, 180, 200], 4, select_by="ndcg"),
            _rec("TERAN", 1, [100, 160, 190, 210], 4, select_by="ndcg"),
            _rec("TERAN", 2, [100, 200, 190, 180], 2, select_by="ndcg")]
    for r in recs:   # ndcg selection reads dev_ndcg_sum
        r["history"]["dev_ndcg_sum"] = r["history"].pop("dev_rsum")
    t = arm_table(recs)
    assert len(t) == 1
    row = t.iloc[0]
    assert (row.arm, row.seeds, row.epochs, row["best epochs"], row.metric, row.state) == \
        ("TERAN@1", 3, "4 4 4", "4 4 2", "dev_ndcg_sum", RISING)
    assert row["gain last 2 (%)"] == pytest.approx(100 * (50 / 150 + 50 / 160 - 20 / 200) / 3, abs=0.01)
    for r in recs:
        (tmp_path / f"{r['member']}-{r['seed']}.json").write_text(json.dumps(r))
    (tmp_path / "figure-x.csv").write_text("a\n1\n")
    assert len(read_records(tmp_path)) == 3
    tr = Training.of(tmp_path)
    assert list(tr.arms(["TERAN"], seeds=[2]).state) == [CONVERGED]
    assert tr.arms(["nobody"]).empty


def test_untrained_members_names_each_member_whose_arm_did_not_converge(tmp_path):
    from itmlib.training.convergence import untrained_members

    recs = [_rec("tau=5 soft -T", s, [280, 140, 170, 160, 150], 1) for s in range(3)]          # best at epoch 1
    recs += [_rec("tau=5 soft +T", s, [100, 150, 170, 175, 174], 4) for s in range(3)]       # plateaued
    recs += [_rec("tau=5 random -T", s, [10, 20, 40, 60, 80], 5) for s in range(3)]          # still rising
    for i, r in enumerate(recs):
        (tmp_path / f"r{i}.json").write_text(json.dumps(r))
    assert untrained_members(tmp_path) == {"tau=5 soft -T": "selected at epoch 1", "tau=5 random -T": RISING}
    assert untrained_members(None) == {}


def test_arm_table_reads_the_warm_up_from_the_config():
    """A max-violation recipe with a 3-epoch warm-up (09's TERAN and TERN): 3 of 5 seeds selected at its end are
    an arm that did not train; the same curves without max violation, or with SSAMT's phases, are not."""
    recs = lambda **cfg: [_rec("TERN", s, TERN if s < 3 else TERN[:3] + [185.0, 186.0], 3 if s < 3 else 5,   # noqa: E731
                               warmup_epochs=3, **cfg) for s in range(5)]
    assert arm_table(recs(max_violation=True)).state.iloc[0] == "selected in its warm-up, epochs 1-3"
    assert arm_table(recs(max_violation=False)).state.iloc[0] == CONVERGED
    ssamt = recs(max_violation=True, model={"kind": "ssamt", "intra_epochs": 3})
    assert arm_table(ssamt).state.iloc[0] == CONVERGED


def test_training_keeps_the_folder_label_of_a_filtered_arm():
    recs = [_rec("VSE++", s, [1, 2, 3, 4], 2, 0.1, warmup_epochs=w) for w in (0, 1) for s in (0, 1, 2)]
    tr = Training(tuple(recs))
    t = tr.arms(["VSE++"], fractions=[0.1], recipe={"warmup_epochs": 0, "setting": "F-10%"})
    assert list(t.arm) == ["VSE++@0.1[warmup_epochs=0]"] and int(t.seeds.iloc[0]) == 3
    assert len(tr.arms(["VSE++"], fractions=[0.1])) == 2


def test_the_gate_withholds_verdicts_on_arms_that_did_not_train():
    """08's "TERAN beats TERN" on 5 seeds with a clear gain: holds when both arms plateaued, ``not judged
    (still rising)`` when TERN's records end still climbing; the arms and their training are named."""
    import pandas as pd

    from itmlib.claims.judge import judge_claims

    runs = pd.DataFrame([{"method": m, "seed": s, "fraction": 1.0, "rsum": 300.0 + 20 * (m == "TERAN mrsw") + s,
                          "t2i_r1": 30.0 + 5 * (m == "TERAN mrsw") + s, "i2t_r1": 40.0 + 5 * (m == "TERAN mrsw") - s % 2,
                          "t2i_ndcg_rouge": 60.0, "grounding": 50.0}
                         for m in ("TERN (global)", "TERAN mwsr", "TERAN mrsw") for s in range(5)])
    flat, rising = [100, 200, 190, 180], [100, 150, 180, 200]
    recs = lambda tern: tuple(_rec(m, s, tern if m == "TERN (global)" else flat, 4 if tern is rising and  # noqa: E731
                                   m == "TERN (global)" else 2) for m in ("TERN (global)", "TERAN mrsw") for s in range(5))
    both = {"runs": runs, "comparisons": runs}        # 08's claims read both tables
    ok = judge_claims("08_teran", both, records=Training(recs(flat))).set_index("id").loc["teran_beats_tern"]
    assert ok.verdict.startswith("holds (n=5") and ok.training == "converged"
    assert (ok.model_arms, ok.baseline_arms) == ("TERAN mrsw@1", "TERN (global)@1")
    gated = judge_claims("08_teran", both, records=Training(recs(rising))).set_index("id").loc["teran_beats_tern"]
    assert gated.verdict == "not judged (still rising)" and gated.training == "TERN (global)@1: still rising"
    assert gated.ci_low == ok.ci_low          # the interval is still shown, only not read as a verdict
    # an arm without records is named as such, never called converged
    mwsr = judge_claims("08_teran", both, records=Training(recs(flat))).set_index("id").loc["teran_mrsw_beats_mwsr_t2i"]
    assert mwsr.baseline_arms == "" and mwsr.training == "TERAN mwsr: no records"
    # a claim with no records behind it names no arm and no training
    bare = judge_claims("08_teran", both).set_index("id").loc["teran_beats_tern"]
    assert (bare.model_arms, bare.training) == ("", "")


def test_the_claims_view_counts_the_arms_that_did_not_train():
    from itmlib.course.viz import training_short

    assert training_short("converged") == "converged" and training_short(float("nan")) == ""
    assert training_short("a@1: selected at epoch 1; b@1: still rising; c@0.25[lr=0.1]: selected at epoch 1") == \
        "selected at epoch 1: 2 arms; still rising: 1 arm"
    # a judgement from probes leads, whatever brackets and semicolons its probe text holds
    assert training_short("collapses (probed: lr 1e-3, 1e-4; warm-up (hardest) 1, 3); a@1: selected at epoch 1; "
                          "b@1: selected at epoch 1") == "collapses; selected at epoch 1: 2 arms"
    assert training_short("rising past its budget (probed: VSE++, 120 epochs (table recipe_probe)); converged") == \
        "rising past its budget; converged"


def test_probe_curves_lay_out_each_recipe_by_hand():
    from itmlib.training.probes import probe_curves

    recs = [_rec("ANG", 0, [52.0, 80.8, 81.0, 81.2], 4, lr=1e-4), _rec("ANG", 0, [83.0, 78.0, 70.0, 59.0], 1, lr=1e-3)]
    curves, t = probe_curves(recs, ["lr", "warmup_epochs"])
    assert len(curves) == 8 and list(curves.lr.unique()) == [1e-4, 1e-3]
    assert list(t.state) == ["plateaued", "selected at its first selectable epoch"]
    assert list(t["dev at best"]) == [81.2, 83.0] and list(t["dev at last"]) == [81.2, 59.0]
    # any arms' curves: each record's arm label and seed, the metric its config selects by
    recs.append(_rec("ANG", 1, [50.0, 79.0], 2, lr=1e-4, epochs=4))   # stopped early under the same budget
    curves, t = probe_curves(recs, [])
    assert list(t.arm) == ["ANG@1[lr=0.0001]", "ANG@1[lr=0.0001]", "ANG@1[lr=0.001]"] and list(t.seed) == [0, 1, 0]
    assert len(curves) == 10 and set(curves.metric) == {"dev_rsum"} and list(t["best epoch"]) == [4, 2, 1]


def test_a_probe_knob_is_read_from_the_config_or_else_its_models_config():
    from itmlib.training.probes import knob_value, probe_curves

    recs = [_rec("+PM", 0, [80.0, 87.0], 2, model={"kind": "ssamt", "embed_dim": 128}),
            _rec("+PM", 0, [90.0, 99.0, 98.0], 2, model={"kind": "ssamt", "embed_dim": 256})]
    assert [knob_value(r["config"], "embed_dim") for r in recs] == [128, 256]
    assert knob_value(recs[0]["config"], "warmup_epochs") == 1 and knob_value(recs[0]["config"], "patience") == 0
    assert knob_value({"embed_dim": 5, "model": {"embed_dim": 7}}, "embed_dim") == 5     # the config's own key first
    _, t = probe_curves(recs, ["embed_dim"])
    assert list(t.embed_dim) == [128, 256] and list(t["dev at best"]) == [87.0, 99.0] and list(t["epochs trained"]) == [2, 3]


def test_a_probe_chooses_the_best_recipe_and_within_one_percent_the_smaller_knob_by_hand():
    import pandas as pd

    from itmlib.training.probes import probe_choice

    t = pd.DataFrame({"warmup_epochs": [3, 6, 20], "dev at best": [200.0, 250.0, 252.0]})
    assert probe_choice(t, "warmup_epochs") == 6                    # 252 x 0.99 = 249.48 <= 250: a tie, the shorter
    assert probe_choice(t.assign(**{"dev at best": [200.0, 249.0, 252.0]}), "warmup_epochs") == 20
    with pytest.raises(ValueError, match="no records"):
        probe_choice(t.iloc[0:0], "warmup_epochs")


def test_a_probe_names_no_choice_until_every_planned_recipe_is_in():
    import pandas as pd

    from itmlib.training.probes import probe_status

    t = pd.DataFrame({"warmup_epochs": [3, 6, 20], "dev at best": [200.0, 250.0, 252.0]})
    assert probe_status(t, "warmup_epochs", [3, 6, 20]) == "the rule chooses 6 of the [3, 6, 20] probed"
    # with 3 alone in, probe_choice would say 3: the status waits instead
    assert probe_status(t.iloc[:1], "warmup_epochs", [3, 6, 20]) == \
        "probed [3] of [3, 6, 20]: the rule chooses once [6, 20] are in"
    assert probe_status(t.iloc[:2], "warmup_epochs", (3, 6, 20)).endswith("once [20] is in")
    assert probe_status(t.iloc[0:0], "warmup_epochs", [3, 6, 20]).startswith("probed none of [3, 6, 20]")


def test_a_claim_whose_arm_collapses_under_every_probed_recipe_is_judged_and_says_so():
    import dataclasses

    import pandas as pd

    from itmlib.claims import claim
    from itmlib.claims.judge import judge_claims

    runs = pd.DataFrame([{"method": m, "seed": s, "fraction": 1.0, "rsum": 300.0 + 20 * (m == "TERAN mrsw") + s,
                          "t2i_r1": 30.0 + 5 * (m == "TERAN mrsw") + s, "i2t_r1": 40.0 + 5 * (m == "TERAN mrsw") - s % 2,
                          "t2i_ndcg_rouge": 60.0, "grounding": 50.0}
                         for m in ("TERN (global)", "TERAN mrsw") for s in range(5)])
    fell = [300.0, 100.0, 90.0, 80.0]                       # best at epoch 1, then down: the recipe did not train
    recs = Training(tuple(_rec(m, s, fell, 1) for m in ("TERN (global)", "TERAN mrsw") for s in range(5)))
    c = claim("teran_beats_tern")
    plain = judge_claims("08_teran", runs, claims=[c], records=recs).iloc[0]
    assert plain.verdict == "not judged (selected at epoch 1)"
    probed = judge_claims("08_teran", runs, claims=[dataclasses.replace(c, collapses="lr 2e-4, 1e-4")], records=recs).iloc[0]
    assert probed.verdict.startswith("holds (n=5") and probed.training.startswith("collapses (probed: lr 2e-4, 1e-4); ")
    # the claim itself says what a verdict against a collapsed arm means
    assert probed.claim == ("TERAN beats TERN - here TERAN mrsw, TERN (global) alone collapses under every recipe probed, so the "
                            "verdict says whether it trains with them, not whether they add to a model that trains")


def test_a_claim_whose_baseline_a_longer_probe_finds_still_rising_is_not_judged():
    """The records' curves end flat (each seed best before its last epoch), so the per-seed gate passes; a probe that
    trained the baseline twice as long found it still rising, and the claim names that probe: not judged."""
    import dataclasses

    import pandas as pd

    from itmlib.claims import claim
    from itmlib.claims.judge import judge_claims

    runs = pd.DataFrame([{"setting": "F-10%", "warmup_epochs": 0, "fraction": 1.0, "method": m, "seed": s,
                          "rsum": 20.0 + 20 * (m == "VSE++ + SAM") + s, "nsum": 10.0}
                         for m in ("VSE++", "VSE++ + SAM") for s in range(5)])
    flat = [10.0, 20.0, 30.0, 30.2, 30.1]
    recs = Training(tuple(_rec(m, s, flat, 4) for m in ("VSE++", "VSE++ + SAM") for s in range(5)))
    plain = claim("sam_scarce_rsum_10")
    assert not plain.rising_past_budget                 # its arms now train the probe's 240 epochs: no flag
    c = dataclasses.replace(plain, rising_past_budget="VSE++ without the warm-up, seed 0, 120 and 240 epochs")
    plain = judge_claims("05_sam_reduced_data", {"runs": runs}, claims=[plain], records=recs).iloc[0]
    assert plain.verdict.startswith("holds (n=5") and plain.training == "converged"
    gated = judge_claims("05_sam_reduced_data", {"runs": runs}, claims=[c], records=recs).iloc[0]
    assert gated.verdict == "not judged (rising past its budget)"
    assert gated.training == f"rising past its budget (probed: {c.rising_past_budget}); converged"


def test_an_arm_rises_when_most_seeds_end_at_their_best_and_the_median_gain_is_over_one_percent():
    """Three of five seeds best at their last epoch, gains over the last two epochs 3.8%, -2.5%, 2.1%, 0.5%, 6.0%
    (median 2.1%): the arm is still rising, although only two of its seeds are on their own (the rule the course's
    independent check uses; 09's +PM arm on real captions is such an arm)."""
    curves = [([90.0, 78.0, 80.0, 81.0], 1), ([81.0, 82.8, 82.8, 80.7], 2), ([87.5, 90.8, 90.7, 92.7], 4),
              ([79.6, 85.8, 85.9, 86.2], 4), ([84.3, 82.7, 85.6, 87.7], 4)]
    t = arm_table([_rec("+PM", s, c, b) for s, (c, b) in enumerate(curves)]).iloc[0]
    assert t.state == RISING and t["seed states"].count("still rising") == 2


def test_ssamt_selection_starts_after_phase_one_and_its_skipped_phase_two_epochs():
    """4 intra epochs then 12 inter: selectable from epoch 5, or from 6 when phase 2's first epoch is skipped; the
    model's 0-based index and the records' 1-based epoch agree."""
    from types import SimpleNamespace

    from itmlib.models.ssamt import SSAMTConfig, SSAMTModel
    from itmlib.training.convergence import _first_epoch

    assert _first_epoch({"epochs": 16, "model": {"intra_epochs": 4}}) == 5
    assert _first_epoch({"epochs": 16, "model": {"intra_epochs": 4, "select_after": 1}}) == 6
    assert _first_epoch({"epochs": 5, "model": {"intra_epochs": 4, "select_after": 3}}) == 5   # never past the last
    assert _first_epoch({"epochs": 15}) == 1
    m = SSAMTConfig(embed_dim=16, ff_dim=32, intra_epochs=4, select_after=1)
    first = lambda epochs: SSAMTModel.first_selectable_epoch(SimpleNamespace(cfg=m), epochs)   # noqa: E731 (0-based)
    assert (first(16), first(5), first(4)) == (5, 4, 0)       # 1-based epochs 6 and 5; intra only: any epoch
    with pytest.raises(ValueError, match="select_after"):
        SSAMTConfig(select_after=-1)


def test_a_claims_arm_is_the_recipe_its_rows_came_from_when_a_member_was_retrained():
    """TERAN MrSw seed 0 under the committed 4-epoch recipe (rsum 397, still rising) and retrained beside it to
    20 epochs (rsum 432, plateaued); seeds 1-4 only under the old one. A claim whose rows hold 397 for seed 0
    reads the old recipe's arm alone (and is gated); rows holding 432 read the new one."""
    import pandas as pd

    from itmlib.claims.judge import _arms

    old = [dict(_rec("TERAN mrsw", s, [100, 150, 180, 200], 4, epochs=4), rows=[{"best_epoch": 4, "rsum": 397.0 + s}])
           for s in range(5)]
    new = dict(_rec("TERAN mrsw", 0, [100, 200, 210, 212, 211, 211], 4, epochs=20, patience=3),
               rows=[{"best_epoch": 4, "rsum": 432.0}])
    tr = Training(tuple(old + [new]))
    claim = type("C", (), {"metric": "rsum", "where": {}})()
    rows = pd.DataFrame({"method": "TERAN mrsw", "seed": range(5), "fraction": 1.0, "rsum": [397.0 + s for s in range(5)]})
    arms, bad = _arms(tr, claim, rows)
    assert arms == "TERAN mrsw@1[epochs=4,patience=None]" and bad == [f"{arms}: still rising"]
    arms, bad = _arms(tr, claim, rows.iloc[:1].assign(rsum=432.0))
    assert arms == "TERAN mrsw@1[epochs=20,patience=3]" and bad == []


def test_a_derived_metric_or_a_pooled_tables_member_finds_its_recipe_by_the_runs_rsum():
    """06's Figure 3 rate is derived from the runs (no record holds it) and its "SSAMT beats VSE++" rows name their
    member in a ``members`` column: where +PM was trained under two recipes, the rows' Rsum names the one they
    came from; rows that carry no Rsum read every recipe of the member, as before."""
    import pandas as pd

    from itmlib.claims.judge import _arms

    old = [dict(_rec("+PM", s, [100, 150, 180, 200], 4, epochs=8), rows=[{"best_epoch": 4, "rsum": 236.0 + s}])
           for s in range(3)]
    new = [dict(_rec("+PM", s, [100, 200, 210, 209], 3, epochs=16), rows=[{"best_epoch": 3, "rsum": 256.0 + s}])
           for s in range(3)]
    tr = Training(tuple(old + new))
    rate = type("C", (), {"metric": "rate", "where": {}})()
    rows = pd.DataFrame({"method": "+PM", "seed": range(3), "rate": 95.0, "rsum": [256.0 + s for s in range(3)]})
    assert _arms(tr, rate, rows) == ("+PM@1[epochs=16]", [])
    assert set(_arms(tr, rate, rows.drop(columns="rsum"))[0].split(";")) == {"+PM@1[epochs=16]", "+PM@1[epochs=8]"}
    versus = type("C", (), {"metric": "rsum", "where": {}})()
    pooled = rows.assign(method="SSAMT", members="+PM", rsum=[236.0 + s for s in range(3)])
    assert _arms(tr, versus, pooled) == ("+PM@1[epochs=8]", ["+PM@1[epochs=8]: still rising"])


def test_a_claim_against_chance_reads_its_trained_arm_alone():
    """06's "the lowest-scoring phrase is a false one, beyond chance": chance is computed from the test split and
    has no records; the claim's training is its trained arm's, not "chance: no records"."""
    import pandas as pd

    from itmlib.claims.judge import judge_claims

    recs = Training(tuple(dict(_rec("+PM (w/ phrases)", s, [100, 200, 210, 209], 3), rows=[{"best_epoch": 3, "rsum": 250.0 + s}])
                          for s in range(5)))
    fig3 = pd.DataFrame([{"method": "+PM (w/ phrases)", "seed": s, "rate": 95.0 + s, "rsum": 250.0 + s} for s in range(5)]
                        + [{"method": "chance", "seed": s, "rate": 70.0 - s} for s in range(5)])
    empty = pd.DataFrame(columns=["method", "seed", "fraction"])
    got = judge_claims("06_phrase_labels", {"runs": empty, "gains": empty, "figure3": fig3, "versus": empty},
                       records=recs).set_index("id").loc["ssamt_false_phrase_found"]
    assert got.verdict.startswith("holds (n=5") and got.training == "converged"
    assert (got.model_arms, got.baseline_arms) == ("+PM (w/ phrases)@1", "")
    # the claim's YAML says its baseline is computed; without that, a baseline with no records was not trained
    import dataclasses

    from itmlib.claims.registry import claim

    c = claim("ssamt_false_phrase_found")
    assert c.computed_baseline
    plain = judge_claims("06_phrase_labels", {"figure3": fig3}, claims=[dataclasses.replace(c, computed_baseline=False)],
                         records=recs).iloc[0]
    assert plain.training == "chance: no records"


def test_a_method_scored_from_another_members_model_is_that_members_arm():
    """08's "TERN (global) mrsw Test" is TERN's model scored by MrSw: a row of TERN's records, no record of its
    own. Its arm is TERN's, under the recipe whose rows hold the claim's values, and it trains as TERN did."""
    import pandas as pd

    from itmlib.claims.judge import _arms

    rows_of = lambda s, v, best: [{"method": "TERN (global)", "best_epoch": best, "i2t_r1": 50.0 + s},   # noqa: E731
                                  {"method": "TERN (global) mrsw Test", "best_epoch": best, "i2t_r1": v + s}]
    old = [dict(_rec("TERN (global)", s, [100, 150, 180, 200], 4, epochs=4), rows=rows_of(s, 20.0, 4)) for s in range(5)]
    new = [dict(_rec("TERN (global)", s, [100, 200, 210, 209], 3, epochs=20), rows=rows_of(s, 21.0, 3)) for s in range(5)]
    claim = type("C", (), {"metric": "i2t_r1", "where": {}})()
    rows = pd.DataFrame({"method": "TERN (global) mrsw Test", "seed": range(5), "fraction": 1.0,
                         "i2t_r1": [21.0 + s for s in range(5)]})
    arms, bad = _arms(Training(tuple(old + new)), claim, rows)
    assert arms == "TERN (global)@1[epochs=20]" and bad == []
    arms, bad = _arms(Training(tuple(old + new)), claim, rows.assign(i2t_r1=rows.i2t_r1 - 1))
    assert arms == "TERN (global)@1[epochs=4]" and bad == [f"{arms}: still rising"]


def test_no_committed_verdict_rests_on_an_arm_that_did_not_train():
    """An independent check of the gate on the committed claims tables of 04-08 and 10, straight from the member
    records (not through :mod:`itmlib.training.convergence`): an arm did not train when more than half its seeds are
    best at their last epoch with the selection metric up more than 1% over the last two epochs, or more than half
    are best at epoch 1 after 4 or more epochs. No holds / does not hold / inconclusive may name such an arm,
    unless its training cell states that it collapses under every recipe probed; and each claim the gate withholds
    names at least one arm this rule finds untrained."""
    import json
    import re
    from pathlib import Path

    import pandas as pd

    root = Path(__file__).resolve().parents[1] / "results"
    key = {"rsum": "dev_rsum", "nsum": "dev_nsum", "ndcg": "dev_ndcg_sum"}
    checked = {False: 0, True: 0}
    for nb in ("04_sam", "05_sam_reduced_data", "06_phrase_labels", "07_semantic_neighborhoods", "08_teran",
               "09_real_language"):
        records = [json.loads(p.read_text()) for p in (root / nb / "members").glob("*.json")]
        claims = pd.read_csv(root / nb / "claims.csv", comment="#")

        def untrained(arm: str) -> bool:
            m = re.fullmatch(r"(.+)@([0-9.]+)(?:\[(.*)\])?", arm.strip())
            assert m, arm
            name, fraction, extra = m.group(1), float(m.group(2)), m.group(3)
            want = dict(kv.split("=", 1) for kv in extra.split(",")) if extra else {}
            seeds = {}

            def at(config: dict, key: str):          # "model.intra_epochs": a key of the nested model config
                for part in key.split("."):
                    config = config.get(part) if isinstance(config, dict) else None
                return config

            for r in records:
                if r["member"] == name and abs(r["fraction"] - fraction) < 1e-9 and \
                        all(str(at(r["config"], k)) == v for k, v in want.items()):
                    seeds[r["seed"]] = (r["rows"][0]["best_epoch"], r["history"][key[r["config"]["select_by"]]])
            assert seeds, f"{nb}: no records for {arm}"
            rising = sum(b == len(h) and len(h) >= 3 and (h[-1] - h[-3]) / abs(h[-3]) > 0.01 for b, h in seeds.values())
            first = sum(b == 1 and len(h) >= 4 for b, h in seeds.values())
            return max(rising, first) > len(seeds) / 2

        for _, c in claims.iterrows():
            judged = str(c.verdict).startswith(("holds", "does not hold", "inconclusive"))
            gated = str(c.verdict).startswith(("not judged (still rising)", "not judged (selected at epoch 1)"))
            if not (judged or gated) or "collapses (probed" in str(c.training):
                continue
            arms = [a for col in ("model_arms", "baseline_arms") if isinstance(c[col], str) for a in c[col].split(";")]
            bad = [a for a in arms if untrained(a)]
            assert bool(bad) == gated, f"{nb} {c.id}: {c.verdict}, arms that did not train by this rule: {bad}"
            checked[gated] += 1
    assert checked[False] > 40     # judged on trained arms (a gated claim, where any remains, is checked the other way)


def test_budget_note_states_each_distinct_budget_once():
    from itmlib.training.probes import budget_note
    from itmlib.training.train import TrainConfig

    stop, fixed = TrainConfig(lr=1e-4, epochs=30, patience=3), TrainConfig(lr=1e-3, epochs=15)
    assert budget_note([stop, stop]) == "lr 0.0001, at most 30 epochs, each stopping after 3 without a better dev rsum"
    assert budget_note([fixed, stop, fixed]) == ("lr 0.001, 15 epochs / "
                                                 "lr 0.0001, at most 30 epochs, each stopping after 3 without a better dev rsum")
    with pytest.raises(ValueError, match="no configs"):
        budget_note([])
