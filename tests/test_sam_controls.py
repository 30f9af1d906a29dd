"""The fair SAM test as notebooks 04 and 05 run it: the control arms, the fraction choice, the run tables."""


import numpy as np
import pandas as pd
import pytest

from itmlib.papers.ncs_sam import (by_control, by_sampling, by_triplet, choose_fractions, label_fractions, paper_method, paper_scarcity,
                                   sam_configs, scarce_budgets, scarce_configs, scarce_schedule, vse_config)
from itmlib.training.train import config_hash


def test_sam_configs_add_shuffled_twins_and_reference_mode_and_keep_old_names():
    cfgs = sam_configs("smoke", [(5, "soft", True), (5, "hard", False)], data="w", sam_modes=("paper", "reference"),
                       controls=True, sam_warmup=True)
    assert list(cfgs) == ["VSE++ (no SAM)", "tau=5 soft +T", "tau=5 soft +T shuffled", "tau=5 hard -T", "tau=5 hard -T shuffled",
                          "tau=5 soft +T ref", "tau=5 soft +T ref shuffled", "tau=5 hard -T ref", "tau=5 hard -T ref shuffled"]
    a, b = cfgs["tau=5 soft +T"], cfgs["tau=5 soft +T shuffled"]
    assert b.with_sam(phi_control="none") == a and b.sam.phi_control == "shuffled"   # the twin differs in that alone
    assert not a.sam.sam_warmup and cfgs["tau=5 hard -T"].sam.sam_warmup        # only -T warms its own hinge up
    assert cfgs["tau=5 hard -T ref"].sam.sam_mode == "reference"
    # the paper-mode, no-control config is the one the grid trained before: same hash, its checkpoints stay valid
    old = vse_config("smoke", loss="sam", tau=5.0, sampling="soft", keep_triplet=True, data="w")
    assert config_hash(a) == config_hash(old)
    assert list(sam_configs("smoke", [(5, "soft", True)], data="w")) == ["VSE++ (no SAM)", "tau=5 soft +T"]
    with pytest.raises(ValueError, match="sam_mode"):
        sam_configs("smoke", [(5, "soft", True)], data="w", sam_modes=("papers",))


def _runs_04():
    # two seeds; SAM settings a (+T) and b (-T) with shuffled twins, a reference-mode setting without a twin
    vals = {"tau=5 soft +T": (10, 12), "tau=5 soft +T shuffled": (8, 8), "tau=5 hard -T": (4, 6),
            "tau=5 hard -T shuffled": (6, 2), "tau=5 soft +T ref": (100, 100), "VSE++ (no SAM)": (5, 7)}
    return pd.DataFrame([{"seed": s, "method": m, "nsum": float(v[s]), "rsum": 2.0 * v[s], "nsum_nogt": 1.0}
                         for m, v in vals.items() for s in (0, 1)])


def test_by_control_means_over_twinned_settings_by_hand():
    cfgs = sam_configs("smoke", [(5, "soft", True), (5, "hard", False)], data="w", controls=True)
    cfgs["tau=5 soft +T ref"] = vse_config("smoke", loss="sam", tau=5.0, sampling="soft", sam_mode="reference", data="w")
    t = by_control(_runs_04(), cfgs).set_index(["sam_mode", "method", "seed"]).nsum
    assert t[("paper", "SAM", 0)] == 7.0 and t[("paper", "SAM", 1)] == 9.0            # (10 + 4) / 2, (12 + 6) / 2
    assert t[("paper", "SAM shuffled", 0)] == 7.0 and t[("paper", "SAM shuffled", 1)] == 5.0
    assert t[("paper", "VSE++ (no SAM)", 1)] == 7.0
    assert ("reference", "SAM", 0) not in t.index                                     # no twin: not in the control table
    # each pooled row names the grid members it averages (the arms its claims rest on)
    m = by_control(_runs_04(), cfgs).set_index(["sam_mode", "method", "seed"]).members
    assert m[("paper", "SAM", 0)] == "tau=5 hard -T;tau=5 soft +T" and m[("paper", "VSE++ (no SAM)", 0)] == "VSE++ (no SAM)"
    # the sampling claims read paper-mode SAM without its controls
    bs = by_sampling(_runs_04(), cfgs).set_index(["method", "seed"]).nsum
    assert bs[("soft", 0)] == 10.0 and bs[("hard", 1)] == 6.0
    assert by_sampling(_runs_04(), cfgs, mode="reference").set_index(["method", "seed"]).nsum[("soft", 0)] == 100.0


def test_a_setting_retrained_under_another_recipe_than_its_shuffled_arm_is_no_control_pair():
    # with sam_warmup the paper-mode -T setting sums over every negative; its shuffled arm kept the grid's warm-up
    cfgs = sam_configs("smoke", [(5, "soft", True), (5, "hard", False)], data="w", controls=True, sam_warmup=True)
    assert cfgs["tau=5 hard -T"].warmup_epochs == cfgs["tau=5 hard -T"].epochs != cfgs["tau=5 hard -T shuffled"].warmup_epochs
    t = by_control(_runs_04(), cfgs).set_index(["sam_mode", "method", "seed"])
    assert t.nsum[("paper", "SAM", 0)] == 10.0 and t.nsum[("paper", "SAM shuffled", 1)] == 8.0     # the +T pair alone
    assert t.members[("paper", "SAM shuffled", 0)] == "tau=5 soft +T shuffled"
    # a setting whose shuffled arm has no rows is no pair either
    runs = _runs_04()
    t = by_control(runs[runs.method != "tau=5 hard -T shuffled"], sam_configs(
        "smoke", [(5, "soft", True), (5, "hard", False)], data="w", controls=True)).set_index(["sam_mode", "method", "seed"])
    assert t.members[("paper", "SAM", 0)] == "tau=5 soft +T"


def test_pooled_claims_leave_out_the_settings_whose_arms_did_not_train():
    cfgs = sam_configs("smoke", [(5, "soft", True), (5, "hard", False)], data="w", controls=True)
    # the -T setting's shuffled twin did not train: the control table pools the +T setting alone, on both sides
    t = by_control(_runs_04(), cfgs, untrained={"tau=5 hard -T shuffled"}).set_index(["sam_mode", "method", "seed"])
    assert t.nsum[("paper", "SAM", 0)] == 10.0 and t.nsum[("paper", "SAM shuffled", 1)] == 8.0
    assert t.members[("paper", "SAM", 0)] == "tau=5 soft +T" and t.members[("paper", "SAM shuffled", 0)] == "tau=5 soft +T shuffled"
    assert t.nsum[("paper", "VSE++ (no SAM)", 1)] == 7.0                          # the baseline is no setting
    # by sampling: a (tau, keep) setting goes whole, every sampling's arm with it
    runs = pd.DataFrame([{"seed": 0, "method": f"tau={t:g} {smp} {k}", "nsum": v, "rsum": v}
                         for (t, smp, k), v in {(5, "soft", "+T"): 10.0, (5, "random", "+T"): 6.0,
                                                (5, "soft", "-T"): 1.0, (5, "random", "-T"): 9.0}.items()])
    grid = sam_configs("smoke", [(5, s, k) for s in ("soft", "random") for k in (True, False)], data="w", baseline=None)
    whole = by_sampling(runs, grid).set_index("method").nsum
    assert whole["soft"] == 5.5 and whole["random"] == 7.5                      # (10 + 1) / 2, (6 + 9) / 2
    kept = by_sampling(runs, grid, untrained={"tau=5 soft -T"}).set_index("method")
    assert kept.nsum["soft"] == 10.0 and kept.nsum["random"] == 6.0 and kept.members["random"] == "tau=5 random +T"
    # a setting one of whose arms lacks a seed the others have (a grid cut off part-way) goes too
    two = pd.concat([runs, runs.assign(seed=1)], ignore_index=True)
    two = two[~((two.method == "tau=5 random -T") & (two.seed == 1))]
    cut = by_sampling(two, grid).set_index(["method", "seed"]).nsum
    assert cut[("soft", 1)] == 10.0 and cut[("random", 0)] == 6.0
    # no setting trained (a smoke run's two epochs): every one stays, and the claim's gate names the arms' states
    every = {"tau=5 soft +T", "tau=5 random +T", "tau=5 soft -T", "tau=5 random -T"}
    assert by_sampling(runs, grid, untrained=every).set_index("method").nsum["soft"] == 5.5
    # keep the triplet: only the (tau, sampling) settings run both ways and trained
    trip = by_triplet(runs, grid, untrained={"tau=5 soft -T"}).set_index("method")
    assert trip.nsum["SAM + triplet"] == 6.0 and trip.nsum["SAM alone"] == 9.0          # random's pair alone
    assert trip.members["SAM alone"] == "tau=5 random -T"


def test_paper_scarcity_and_the_fraction_choice_by_hand():
    s = paper_scarcity()
    assert s["F-10%"] == pytest.approx(138.7 / 471.6) and s["F-25%"] == pytest.approx(294.1 / 471.6)
    base = pd.DataFrame({"fraction": [0.05, 0.05, 0.1, 0.2, 0.4], "rsum": [50.0, 70.0, 110.0, 190.0, 260.0]})
    c = choose_fractions(base, 400.0, {"F-10%": 0.29, "F-25%": 0.62}).set_index("setting")
    # shares: 0.05 -> 60/400 = 0.15, 0.1 -> 0.275, 0.2 -> 0.475, 0.4 -> 0.65
    assert c.loc["F-10%", "fraction"] == 0.1 and c.loc["F-25%", "fraction"] == 0.4
    assert c.loc["F-10%", "share"] == pytest.approx(0.275) and c.loc["F-10%", "baseline rsum"] == 110.0
    with pytest.raises(ValueError, match="full_rsum"):
        choose_fractions(base, 0.0, {"F-10%": 0.29})
    lab = label_fractions([0.25, 0.1, 0.5])
    assert lab.setting.tolist() == ["F-10%", "F-25%", "ours 0.5"] and lab.fraction.tolist() == [0.1, 0.25, 0.5]
    assert c.loc["F-25%", "paper share"] == 0.62                       # the paper's figure beside ours
    lab = label_fractions([0.25, 0.1, 0.5], {"F-10%": 0.29, "F-25%": 0.62})
    assert lab["paper share"].tolist()[:2] == [0.29, 0.62] and np.isnan(lab["paper share"].iloc[2])


def test_scarce_configs_differ_by_their_margins_alone():
    cfgs = scarce_configs("smoke", ["VSE++", "VSE++ + SAM", "VSE++ + SAM shuffled", "VSE++ + SAM leave-one-out"], data="w",
                          warmup_epochs=1, tau=5.0, sampling="soft", keep_triplet=True, **scarce_schedule("smoke"))
    sam = cfgs["VSE++ + SAM"]
    assert sam.loss == "sam" and sam.sam.sam_warmup and sam.epochs == 3 and sam.lr_decay_epochs == 1
    assert cfgs["VSE++"].loss == "triplet" and cfgs["VSE++"].epochs == 3 and cfgs["VSE++"].warmup_epochs == 1
    assert scarce_schedule("medium") == {"epochs": 30, "lr_decay_epochs": 15}    # twice the scale's 15
    assert cfgs["VSE++ + SAM shuffled"].with_sam(phi_control="none") == sam
    assert cfgs["VSE++ + SAM leave-one-out"].with_sam(phi_self="include") == sam
    assert scarce_schedule("medium", 40) == {"epochs": 40, "lr_decay_epochs": 20}
    with pytest.raises(ValueError, match="arm"):
        scarce_configs("smoke", ["SAM"], data="w", warmup_epochs=0)
    assert paper_method("VSE++ + SAM shuffled") is None and paper_method("VSE++ + SAM") == "CVSE+SAM"


def test_paper_columns_read_each_rows_setting_from_either_table():
    from itmlib.papers.ncs_sam import with_paper_columns

    t = pd.DataFrame({"method": ["VSE++", "VSE++ + SAM", "VSE++ + SAM shuffled", "VSE++ + SAM"],
                      "setting": ["F-10%", "F-10%", "F-10%", "F30K"]})
    both = with_paper_columns(t, ("ncs_sam_table2", "ncs_sam_table3"), t.setting)
    rsum = both["paper_rsum (CVSE, F30K)"]
    assert list(rsum[[0, 1, 3]]) == [138.7, 303.2, 478.9] and np.isnan(rsum[2])   # Table 2 at F-10%, Table 3 full
    alone = with_paper_columns(t, "ncs_sam_table2", t.setting)["paper_rsum (CVSE, F30K)"]
    assert list(alone[:2]) == [138.7, 303.2] and np.isnan(alone[3])              # one table: no full-data row


def test_scarce_budgets_give_larger_fractions_as_many_steps_without_the_warm_up():
    # 240 epochs at 0.02 are 4.8 passes over the training set; 0.08 takes them in 60, 0.04 in 120, 0.5 in 10 -> 60
    got = scarce_budgets("medium", [0.08, 0.02, 0.04, 0.5], 0, 60, 240)
    assert got == [({"epochs": 240, "lr_decay_epochs": 120}, [0.02]), ({"epochs": 120, "lr_decay_epochs": 60}, [0.04]),
                   ({"epochs": 60, "lr_decay_epochs": 30}, [0.08, 0.5])]
    assert scarce_budgets("medium", [0.02, 0.08], 1, 60, 240) == [({"epochs": 60, "lr_decay_epochs": 30}, [0.02, 0.08])]
    assert scarce_budgets("medium", [0.02], 0, 60) == [({"epochs": 60, "lr_decay_epochs": 30}, [0.02])]
    with pytest.raises(ValueError, match="no fractions"):
        scarce_budgets("medium", [], 0)


def test_the_recipe_notebook_10_reuses_is_05s_defaults():
    from itmlib.course.params import declared_parameters
    from itmlib.papers.ncs_sam import SCARCE_RECIPE, recipe_configs

    d = {k: v for k, (_, v) in declared_parameters("05_sam_reduced_data").items()}
    assert SCARCE_RECIPE == {"warmup_epochs": d["warmups"][0], "tau": d["tau"], "sampling": d["sampling"],
                             "sam_mode": d["sam_mode"], "keep_triplet": d["keep_triplet"]}
    arms = ["VSE++", "VSE++ + SAM", "VSE++ + SAM shuffled"]
    explicit = scarce_configs("medium", arms, data="w", warmup_epochs=1, tau=5.0, sampling="soft", sam_mode="paper",
                              keep_triplet=True, **scarce_schedule("medium", 12))
    assert recipe_configs("medium", arms, data="w", epochs=12) == explicit      # the same models, so the same records
    assert recipe_configs("medium", ["VSE++"], data="w")["VSE++"].epochs == 30


def test_every_04_config_takes_its_warm_up_step():
    # train() calls sam_loss with all_negatives during the warm-up of every -T config, in both SAM modes: each
    # config's warm-up step and a later step must run
    import torch

    from itmlib.losses import sam_loss
    cfgs = sam_configs("medium", [(5, s, k) for s in ("soft", "hard", "random") for k in (True, False)], data="w",
                       sam_modes=("paper", "reference"), controls=True, sam_warmup=True)
    S = torch.randn(6, 6, generator=torch.Generator().manual_seed(0), requires_grad=True)
    phi = lambda p, c: np.where(np.asarray(p) == np.asarray(c), 3.0, 0.5)  # noqa: E731
    warmed = 0
    for name, c in cfgs.items():
        if c.loss != "sam":
            continue
        for warm in (True, False):
            loss, _ = sam_loss(S, phi, c.sam, margin=c.margin, max_violation=not warm, generator=torch.Generator().manual_seed(1),
                               all_negatives=warm and c.sam.sam_warmup and c.max_violation)
            assert torch.isfinite(loss) and loss.item() > 0, name
            warmed += warm and c.sam.sam_warmup
    assert warmed == 12   # 3 samplings x 2 modes x (SAM, shuffled), -T only
