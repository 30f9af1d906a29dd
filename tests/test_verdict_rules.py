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
