"""Notebook 09's level gate (itmlib.course.real_levels), by hand."""
import pandas as pd

from itmlib.course.real_levels import level_gate, levels


def _runs(method, fraction, rsums):
    return pd.DataFrame({"method": method, "fraction": fraction, "seed": range(len(rsums)), "rsum": rsums})


VSE = pd.concat([_runs("VSE++", 1.0, [200.0, 220.0]), _runs("VSE++", 1.0, [200.0]),   # one member in two grids
                 _runs("VSE++", 0.15, [100.0]), _runs("VSE++", 0.4, [150.0])], ignore_index=True)


def test_levels_read_each_model_against_vse_on_no_more_images():
    t = levels(VSE, {"teran": (_runs("TERAN mrsw", 1.0, [160.0, 170.0]), 1.0),
                     "ssamt": (_runs("+PM (w/ phrases)", 0.0, [110.0, 120.0]), 0.25)}).set_index("claims of")
    assert (t.loc["teran", "rsum"], t.loc["teran", "reference rsum"], t.loc["teran", "needed"]) == (165.0, 210.0, 168.0)
    assert t.loc["teran", "reference seeds"] == 2 and not t.loc["teran", "reached"]   # 165 < 0.8 x 210
    assert (t.loc["ssamt", "reference fraction"], t.loc["ssamt", "reference rsum"]) == (0.15, 100.0)  # not the 0.4
    assert t.loc["ssamt", "reached"]
    assert t.loc["teran", "paper"] == "Table 1 (COCO 1K): TERAN MrSw Rsum 524.8 = 1.10x VSE++'s 478.6"
    assert t.loc["ssamt", "paper"] == "Table 1 (F30K): SSAMT Rsum 488.7 = 1.20x VSE++'s 407.9"


def test_the_gate_turns_only_the_judged_verdicts_of_a_paper_below_its_level():
    claims = pd.DataFrame({"id": ["real_teran_beats_tern", "real_teran_grounds_tern_not", "real_ssamt_pm_helps",
                                  "real_sam_full_raises_ncs", "real_teran_mrsw_beats_mwsr_t2i",
                                  "real_teran_grounds_above_chance"],
                           "verdict": ["holds (n=5, 95% CI [1, 2])", "not judged (2 seeds)",
                                       "inconclusive (n=5, 95% CI [-1, 2])", "holds (n=5, 95% CI [1, 2])",
                                       "not judged (1 seed; a headline claim needs 5)", "not judged (arms did not train)"],
                           "training": ["converged"] * 6})
    t = levels(VSE, {"teran": (_runs("TERAN mrsw", 1.0, [160.0, 170.0]), 1.0),
                     "ssamt": (_runs("+PM (w/ phrases)", 0.25, [110.0]), 0.25)})
    out = level_gate(claims, t).set_index("id")
    why = "below its level: TERAN mrsw Rsum 165.0 < 0.8x VSE++'s 210.0"
    assert out.loc["real_teran_beats_tern", "verdict"] == f"not judged ({why})"
    assert out.loc["real_teran_beats_tern", "training"] == f"{why}; converged"
    # too few seeds: the level's reason instead (more seeds would not be judged either), the count kept; another
    # reason stays
    assert out.loc["real_teran_grounds_tern_not", "verdict"] == f"not judged ({why}; on 2 seeds)"
    assert out.loc["real_teran_mrsw_beats_mwsr_t2i", "verdict"] == f"not judged ({why}; on 1 seed)"
    assert out.loc["real_teran_grounds_above_chance", "verdict"] == "not judged (arms did not train)"
    assert out.loc["real_ssamt_pm_helps", "verdict"].startswith("inconclusive")
    assert out.loc["real_sam_full_raises_ncs", "verdict"].startswith("holds")
    # a model with no VSE++ on no more images is not judged either; a model that did not run is left to "not run"
    none = levels(VSE[VSE.fraction == 1.0], {"ssamt": (_runs("+PM (w/ phrases)", 0.25, [110.0]), 0.25),
                                             "teran": (_runs("TERAN mrsw", 1.0, [])[:0], 1.0)})
    out = level_gate(claims, none).set_index("id")
    assert out.loc["real_ssamt_pm_helps", "verdict"] == "not judged (no VSE++ on no more images to set its level)"
    assert out.loc["real_teran_beats_tern", "verdict"].startswith("holds")


def test_the_floor_reading_reads_vse_against_the_higher_floor_and_the_ceiling():
    from itmlib.course.real_levels import CEILINGS, FLOORS, floor_reading

    t = pd.DataFrame({"model": [FLOORS[0], FLOORS[1], CEILINGS[1], "VSE++", "VSE++"],
                      "fraction": [float("nan")] * 3 + [1.0, 0.15], "rsum": [200.0, 190.0, 500.0, 215.0, 120.0]})
    assert floor_reading(t) == ("VSE++ on every training image reaches test Rsum 215.0 against the higher floor's 200.0 "
                                "(lexical floor (no training); +15.00). It matches VSE++ (VSE++ less than 10% above): this "
                                "world cannot test the papers' ideas. The ceiling (no model can tell apart images whose "
                                "scenes are identical) is 500.0: VSE++ covers 5% of the way from that floor to it.")
    higher = floor_reading(t.assign(rsum=[200.0, 230.0, 500.0, 215.0, 120.0]))          # the co-occurrence floor is higher
    assert "against the higher floor's 230.0 (word-category co-occurrence (training counts); -15.00). VSE++ stays below" in higher
    assert higher.endswith("identical) is 500.0.")                                        # below the floor: no share of the way
    assert "room to show" in floor_reading(t.assign(rsum=[200.0, 190.0, 500.0, 221.0, 120.0]))    # 10.5% above
    # a committed table rounds Rsum to one decimal: the difference is its own unrounded column, not 215.0 - 200.0
    assert "Rsum 215.0 against the higher floor's 200.0 (lexical floor (no training); +15.04)" in floor_reading(
        t.assign(**{"rsum - floor": [0.0, -10.0, 300.0, 15.04, -80.0]}))
    assert "no records" in floor_reading(t[t.fraction != 1.0])
    assert "ceiling" not in floor_reading(t[t.model != CEILINGS[1]])


def test_the_world_gate_withholds_every_real_verdict_while_vse_is_not_10_percent_above_the_higher_floor():
    from itmlib.course.real_levels import FLOORS, world_gate

    claims = pd.DataFrame({"id": ["real_sam_full_raises_ncs", "real_teran_beats_tern", "teran_beats_tern"],
                           "verdict": ["holds (n=5, 95% CI [1, 2])", "not judged (2 seeds)", "holds (n=5, 95% CI [1, 2])"],
                           "training": ["converged", "converged", "converged"]})
    floors = pd.DataFrame({"model": [FLOORS[0], FLOORS[1], "VSE++"], "fraction": [float("nan"), float("nan"), 1.0],
                           "rsum": [150.0, 120.0, 149.9]})
    out = world_gate(claims, floors).set_index("id")
    why = "world below its floor: VSE++ on every training image Rsum 149.9, lexical floor (no training) 150.0; the gate needs 165.0"
    assert out.loc["real_sam_full_raises_ncs", "verdict"] == f"not judged ({why})"
    assert out.loc["real_sam_full_raises_ncs", "training"] == f"{why}; converged"
    assert out.loc["real_teran_beats_tern", "verdict"] == f"not judged ({why}; on 2 seeds)"   # more seeds: no verdict either
    assert out.loc["teran_beats_tern", "verdict"].startswith("holds")                   # not this world's claim
    near = world_gate(claims, floors.assign(rsum=[150.0, 120.0, 164.9])).set_index("id")   # 9.9% above: within 10%
    assert near.loc["real_sam_full_raises_ncs", "verdict"] == ("not judged (world within 10% of its floor: VSE++ on every "
                                                               "training image Rsum 164.9, lexical floor (no training) 150.0; "
                                                               "the gate needs 165.0)")
    above = world_gate(claims, floors.assign(rsum=[150.0, 120.0, 165.0])).set_index("id")  # exactly 10% above
    assert above.loc["real_sam_full_raises_ncs", "verdict"].startswith("holds")
    unrun = claims.assign(verdict=["not run (its runs absent)", "not judged (2 seeds)", "not run (its runs absent)"])
    gated = world_gate(unrun, floors).set_index("id")          # a world below its floor judges no run of any arm
    assert gated.loc["real_sam_full_raises_ncs", "verdict"] == f"not judged ({why})"
    assert world_gate(unrun.assign(verdict=["not judged (no dev curve)"] * 3), floors).equals(
        unrun.assign(verdict=["not judged (no dev curve)"] * 3))                          # another reason: kept
    assert gated.loc["teran_beats_tern", "verdict"] == "not run (its runs absent)"       # not this world's claim
    assert world_gate(unrun, floors.assign(rsum=[150.0, 120.0, 170.0])).equals(unrun)   # a world that passes: kept
    higher = world_gate(claims, floors.assign(rsum=[150.0, 160.0, 170.0])).set_index("id")  # the co-occurrence floor is higher
    assert "co-occurrence" in higher.loc["real_sam_full_raises_ncs", "verdict"]
    assert world_gate(claims, floors[floors.model != "VSE++"]).equals(claims)           # no VSE++ records: kept
