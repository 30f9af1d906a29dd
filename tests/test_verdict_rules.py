"""The verdict rule's edges: deterministic claims with nothing (or NaN) to judge, one row per seed for a
threshold claim, and the seeds a claim needs (3, and 5 for a headline claim)."""

import math

import pandas as pd
import pytest

from itmlib.claims.verdicts import HEADLINE_SEEDS, claim_verdict, decide


def _rows(method_values, pair_by="seed"):
    return pd.DataFrame([{pair_by: i, "method": m, "x": v} for m, vals in method_values.items() for i, v in enumerate(vals)])


def test_an_exact_claim_with_no_instance_or_a_nan_is_not_run_rather_than_failed():
    apart = pd.DataFrame([{"seed": 0, "method": "a", "x": 1.0}, {"seed": 1, "method": "b", "x": 2.0}])   # nothing paired
    none = claim_verdict(apart, "a", "b", "x", "higher", "c", "p", exact=True)
    nan = claim_verdict(_rows({"a": [1.0, 2.0], "b": [3.0, math.nan]}), "a", "b", "x", "higher", "c", "p", exact=True)
    assert none["verdict"] == "not run (no paired instance)"
    assert nan["verdict"] == "not run (1 NaN values)"
    thr = claim_verdict(_rows({"b": [0.1, math.nan]}), "", "b", "x", "at_most", "c", "p", exact=True, threshold=0.5)
    assert thr["verdict"] == "not run (1 of 2 values are NaN)"
    ok = claim_verdict(_rows({"a": [1.0, 2.0], "b": [3.0, 4.0]}), "a", "b", "x", "higher", "c", "p", exact=True)
    assert ok["verdict"] == "holds (deterministic, every instance)"


def test_a_threshold_claim_refuses_two_rows_of_one_seed():
    twice = pd.DataFrame([{"seed": 0, "method": "b", "x": 0.1}, {"seed": 0, "method": "b", "x": 0.2},
                          {"seed": 1, "method": "b", "x": 0.3}])
    with pytest.raises(ValueError, match="more than one row per seed"):
        claim_verdict(twice, "", "b", "x", "at_most", "c", "p", threshold=0.5)


def test_a_headline_claim_needs_five_seeds_and_decide_refuses_fewer():
    three = _rows({"a": [1.0, 2.0, 3.0], "b": [5.0, 6.1, 7.0]})
    assert claim_verdict(three, "a", "b", "x", "higher", "c", "p")["verdict"].startswith("holds (n=3")
    assert claim_verdict(three, "a", "b", "x", "higher", "c", "p", headline=True)["verdict"] == \
        f"not judged (3 seeds; a headline claim needs {HEADLINE_SEEDS})"
    with pytest.raises(ValueError, match="headline"):
        decide("higher", 1.0, 2.0, 3, headline=True)
    assert decide("higher", 1.0, 2.0, 5, headline=True) == "holds"


def test_every_margin_is_recomputed_from_its_rule():
    """No margin is typed from our results: a paper_gap margin equals the gap between the paper's own two numbers
    (e.g. 478.9 - 471.6 = 7.3 for "keeps recall"), a share rule is computed when the claim is judged."""
    from itmlib.claims import CLAIM_FILES, load_claims, rule_margin

    seen = 0
    for key in CLAIM_FILES:
        for c in load_claims(key):
            if c.margin_rule.get("paper_gap"):
                assert c.margin == rule_margin(c), c.id
                seen += 1
            elif "share" in c.margin_rule:
                assert c.margin is None, f"{c.id}: a share margin is computed, never typed"
                if c.margin_rule.get("of") == "threshold":
                    assert rule_margin(c) == pytest.approx(c.margin_rule["share"] * c.threshold)
            assert not (c.margin is not None and not c.margin_rule), f"{c.id}: a margin without its rule"
    assert seen >= 4


def test_the_claim_forms_by_hand():
    from itmlib.claims import claim, ratio_threshold

    # ratio: 303.2 / 138.7 = 2.186 -> the threshold is half the paper's gain, 1.593
    assert ratio_threshold(claim("sam_scarce_rsum_10_warmup")) == pytest.approx(1 + (303.2 / 138.7 - 1) / 2)
    runs = _rows({"a": [100.0, 100.0, 100.0], "b": [130.0, 131.0, 132.0]})     # ratios 1.30, 1.31, 1.32
    low = claim_verdict(runs, "a", "b", "x", "ratio", "c", "p", threshold=1.59)
    assert low["verdict"].startswith("does not hold (n=3") and low["verdict"].endswith("x1.59 needed)")
    assert low["difference"] == pytest.approx(1.31) and "(1.31x)" in low["ours (model vs baseline)"]
    assert claim_verdict(runs, "a", "b", "x", "ratio", "c", "p", threshold=1.2)["verdict"].startswith("holds")
    # non-inferior: differences -1, -2, -1.5 (CI [-2.74, -0.26]) inside a margin of 3, outside a margin of 0.1
    worse = _rows({"a": [100.0, 100.0, 100.0], "b": [99.0, 98.0, 98.5]})
    assert claim_verdict(worse, "a", "b", "x", "non_inferior", "c", "p", margin=3.0)["verdict"].startswith("holds")
    assert claim_verdict(worse, "a", "b", "x", "non_inferior", "c", "p", margin=0.1)["verdict"].startswith("does not hold")
    # at most chance with a margin: a model at chance (50.2, 49.8, 50.0) holds with a margin of 1, not without
    chance = _rows({"b": [50.2, 49.8, 50.0]})
    assert claim_verdict(chance, "", "b", "x", "at_most", "c", "p", threshold=50, margin=1.0)["verdict"].startswith("holds")
    assert claim_verdict(chance, "", "b", "x", "at_most", "c", "p", threshold=50)["verdict"].startswith("inconclusive")
