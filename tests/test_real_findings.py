"""Notebook 09's per-paper findings (itmlib.course.real_findings), on hand-made tables."""
import pandas as pd

from itmlib.course.real_findings import PAPERS, paper_findings


def _tables(rows):
    """claims and worlds tables from (id, verdict here, synthetic verdict) rows."""
    claims = pd.DataFrame({"id": [r[0] for r in rows], "claim": [f"claim {r[0]}" for r in rows],
                           "verdict": [r[1] for r in rows]})
    worlds = pd.DataFrame({"claim": claims.claim, "paper (model vs baseline)": "65.0 vs 57.5",
                           "synthetic world verdict": [r[2] for r in rows], "real-language verdict": claims.verdict})
    return claims, worlds


FLOOR = pd.DataFrame({"model": ["lexical floor (no training)", "word-category co-occurrence (training counts)", "VSE++",
                                "TERAN mrsw", "TERAN mrsw"],
                      "fraction": [float("nan"), float("nan"), 1.0, 1.0, 0.5], "rsum": [170.0, 190.0, 180.0, 150.0, 120.0],
                      "rsum - floor": [-20.0, 0.0, -10.0, -40.0, -70.0]})


def _section(text, key):
    return text.split(f"#### {PAPERS[key][0]}")[1].split("####")[0]


def test_agreeing_verdicts_say_the_claim_does_not_rest_on_the_language():
    claims, worlds = _tables([("real_teran_mrsw_beats_mwsr_t2i", "holds (n=5, 95% CI [1, 2])", "holds (n=5)"),
                              ("real_teran_beats_tern", "holds (n=5, 95% CI [3, 4])", "holds (n=5)"),
                              ("real_teran_grounds_tern_not", "does not hold (n=5)", "holds (n=5)")])  # a control
    text = _section(paper_findings(claims, worlds), "teran")
    assert "Both worlds judged all 2 of its claims, and their verdicts agree (holds in both: " in text and "A hypothesis" not in text
    assert "claim real_teran_grounds_tern_not: our control, not in the paper" in text
    assert "claim real_teran_beats_tern: paper 65.0 vs 57.5; synthetic world: holds (n=5); here: holds" in text


def test_differing_verdicts_give_the_papers_hypothesis_and_its_experiment():
    claims, worlds = _tables([("real_ssamt_pm_helps", "does not hold (n=5)", "holds (n=5)"),
                              ("real_ssamt_pm_phrase_score_i2t", "holds (n=5)", "holds (n=5)"),
                              ("real_ssamt_pm_phrase_score_t2i", "holds (n=5)", "not judged (2 seeds)")])  # one world
    text = _section(paper_findings(claims, worlds), "ssamt")
    assert "1 of the 2 verdicts both worlds gave differs (holds in one world, does not hold in the other): what those claims say" in text
    # every verdict both worlds gave differs; a paper with one claim
    claims, worlds = _tables([("real_teran_mrsw_beats_mwsr_t2i", "inconclusive (n=5)", "holds (n=5)"),
                              ("real_teran_mrsw_beats_mwsr_i2t", "does not hold (n=5)", "holds (n=5)")])
    teran = _section(paper_findings(claims, worlds), "teran")
    assert "1 of the 2 verdicts both worlds gave differs (holds in one world, does not hold in the other)" in teran
    # inconclusive in one world, decided in the other: no conflict, no hypothesis
    assert ("1 of the 2 verdicts both worlds gave differs only in resolution (inconclusive here, holds in the synthetic "
            "world): one world's interval settles what the other's leaves open. That is no conflict") in teran
    claims, worlds = _tables([("real_teran_mrsw_beats_mwsr_t2i", "does not hold (n=5)", "holds (n=5)"),
                              ("real_teran_mrsw_beats_mwsr_i2t", "does not hold (n=5)", "holds (n=5)")])
    assert "Each of the 2 verdicts both worlds gave differs (holds in one" in _section(paper_findings(claims, worlds), "teran")
    claims, worlds = _tables([("real_nbr_ours_not_on_literal", "holds (n=5)", "inconclusive (n=3)")])
    nbr = _section(paper_findings(claims, worlds), "neighborhoods")
    assert "The verdict both worlds gave differs only in resolution (holds here, inconclusive in the synthetic world)" in nbr
    assert "A hypothesis" not in nbr
    claims, worlds = _tables([("real_nbr_ours_not_on_literal", "inconclusive (n=5)", "inconclusive (n=3)")])
    assert "Both worlds judged its one claim, and their verdicts agree (inconclusive in both" in \
        _section(paper_findings(claims, worlds), "neighborhoods")
    assert f"A hypothesis, not measured: {PAPERS['ssamt'][1]}" in text and PAPERS["ssamt"][2] in text


def test_a_paper_not_judged_says_why_and_reads_its_model_against_the_floor():
    gate = "not judged (below its level: TERAN mrsw Rsum 150.0 < 0.8x VSE++'s 200.0)"
    claims, worlds = _tables([("real_teran_beats_tern", gate, "holds (n=5)"),
                              ("real_sam_full_raises_ncs", "not run (VSE++ + SAM absent)", "inconclusive (n=5)")])
    text = paper_findings(claims, worlds, FLOOR)
    assert text.startswith("**The world.** VSE++ on every training image reaches test Rsum 180.0 against the higher floor's 190.0")
    teran = _section(text, "teran")
    assert "Nothing yet: its model has not learned this world: TERAN mrsw Rsum 150.0 < 0.8x VSE++'s 200.0." in teran
    # the model on every training image (fraction 1, not 0.5) against the floor
    assert "Its model (TERAN mrsw, test Rsum 150.0) stays below the higher floor (190.0)" in teran
    sam = _section(text, "ncs_sam")
    assert "Nothing yet: not every arm it compares has records on this world yet." in sam and "below the higher" not in sam
    assert "####" + " " + PAPERS["neighborhoods"][0] not in text        # a paper with no claims in the table


def test_a_world_the_gate_withholds_says_it_cannot_test_the_papers_claims():
    gate = ("not judged (world within 10% of its floor: VSE++ on every training image Rsum 157.7, lexical floor "
            "(no training) 150.6; the gate needs 165.6)")
    claims, worlds = _tables([("real_sam_full_raises_ncs", gate, "inconclusive (n=5)")])
    sam = _section(paper_findings(claims, worlds, FLOOR), "ncs_sam")
    assert ("Nothing: this world cannot test its claims (world within 10% of its floor: VSE++ on every training "
            "image Rsum 157.7, lexical floor (no training) 150.6; the gate needs 165.6).") in sam
    assert "Nothing yet" not in sam
