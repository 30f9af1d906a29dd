"""The one rule: seed statistics, paired differences, the 95% interval and the verdicts it gives, by hand."""

import numpy as np
import pandas as pd
import pytest

from itmlib.claims.verdicts import claim_verdict, compare, decide, summarize, verdict_changes


def _runs():
    rows = []
    for s, (b, n) in enumerate([(100.0, 150.0), (110.0, 158.0), (90.0, 145.0)]):
        rows += [{"fraction": 0.1, "seed": s, "method": "base", "rsum": b},
                 {"fraction": 0.1, "seed": s, "method": "sam", "rsum": n}]
    rows += [{"fraction": 1.0, "seed": s, "method": m, "rsum": v} for s, (m, v) in
             enumerate([("base", 300.0), ("sam", 301.0)]) for _ in [0]]
    rows += [{"fraction": 1.0, "seed": 1, "method": "base", "rsum": 310.0},
             {"fraction": 1.0, "seed": 1, "method": "sam", "rsum": 300.0},
             {"fraction": 1.0, "seed": 0, "method": "sam", "rsum": 301.0}]
    return pd.DataFrame(rows).drop_duplicates(["fraction", "seed", "method"], keep="last")


def test_summarize_mean_and_std_by_hand():
    s = summarize(_runs(), ["fraction", "method"], ["rsum"]).set_index(["fraction", "method"])
    assert s.loc[(0.1, "base"), "rsum"] == pytest.approx(100.0)
    assert s.loc[(0.1, "base"), "rsum_std"] == pytest.approx(10.0)
    assert s.loc[(0.1, "sam"), "seeds"] == 3
    one = summarize(_runs()[_runs().seed == 0], ["fraction", "method"], ["rsum"])
    assert one.rsum_std.isna().all() and (one.seeds == 1).all()  # one seed: no spread, not a zero spread


def test_seed_means_are_the_same_float_in_every_order_of_the_seeds():
    import itertools, math
    from itmlib.claims.seeds import seed_mean, seed_std
    # TERN's four i2t R@1 values: pandas' mean is 16.134999999999998 in some orders and 16.135 in others, which
    # two tables then printed as 16.13 and 16.14
    vals = [15.54, 15.90, 16.38, 16.72]
    orders = list(itertools.permutations(vals))
    assert len({pd.Series(o).mean() for o in orders}) > 1          # the order-dependence this guards against
    assert {seed_mean(o) for o in orders} == {math.fsum(vals) / 4}
    assert len({seed_std(o) for o in orders}) == 1
    assert seed_std([100.0, 110.0, 90.0]) == pytest.approx(10.0) and math.isnan(seed_std([3.0]))
    assert seed_mean([1.0, float("nan"), 3.0]) == 2.0 and math.isnan(seed_mean([]))    # NaN left out, as pandas does
    runs = pd.DataFrame({"method": "TERN", "seed": range(4), "i2t_r1": vals})
    means = {summarize(runs.iloc[list(p)], ["method"], ["i2t_r1"]).i2t_r1.iloc[0] for p in itertools.permutations(range(4))}
    assert means == {math.fsum(vals) / 4}


def test_compare_verdicts():
    c = compare(_runs(), "rsum", "base", "sam").set_index("fraction")
    # paired differences 50, 48, 55: mean 51, std 3.606, t(0.975, 2) = 4.303 -> CI 51 +- 8.96 = [42.0, 60.0]
    assert c.loc[0.1, "mean_diff"] == pytest.approx(51.0) and c.loc[0.1, "ratio"] == pytest.approx(151 / 100)
    assert c.loc[0.1, "ci_low"] == pytest.approx(51 - 4.3027 * 3.6056 / 3 ** 0.5, abs=1e-3)
    assert c.loc[0.1, "verdict"] == "holds (n=3, 95% CI [42.0, 60.0])"
    # differences +1 and -10 at full data: two seeds are never decisive
    assert c.loc[1.0, "verdict"].startswith("inconclusive (n=2")
    one = compare(_runs()[_runs().seed == 0], "rsum", "base", "sam")
    assert (one.verdict == "inconclusive (n=1, no interval)").all()


def _pairs(diffs, base=100.0):
    return pd.DataFrame([{"seed": s, "method": m, "rsum": v} for s, d in enumerate(diffs)
                         for m, v in (("base", base + s), ("new", base + s + d))])


def test_interval_rule_by_hand():
    # two noisy seeds (+10, -8): mean 1, std 12.73, t(0.975, 1) = 12.706 -> CI [-113.4, 115.4], not judged
    two = claim_verdict(_pairs([10.0, -8.0]), "base", "new", "rsum", "higher", "c", "p")
    assert two["verdict"] == "not judged (2 seeds)"
    assert two["ci_low"] == pytest.approx(1 - 12.7062 * 12.7279 / 2 ** 0.5, abs=1e-2)
    # two seeds are never decisive, however clear the gain
    assert claim_verdict(_pairs([10.0, 10.5]), "base", "new", "rsum", "higher", "c", "p")["verdict"] == "not judged (2 seeds)"
    # five seeds with a clear gain: mean 3, std 0.7906, t(0.975, 4) = 2.776 -> CI [2.02, 3.98]
    gain = claim_verdict(_pairs([2.0, 3.0, 4.0, 3.5, 2.5]), "base", "new", "rsum", "higher", "c", "p")
    assert gain["verdict"] == "holds (n=5, 95% CI [2.02, 3.98])" and gain["seeds"] == 5
    assert (gain["ci_low"], gain["ci_high"]) == (pytest.approx(2.018, abs=1e-3), pytest.approx(3.982, abs=1e-3))
    # a clear loss: the claim "higher" does not hold, the claim "lower" holds
    loss = _pairs([-2.0, -3.0, -4.0, -3.5, -2.5])
    assert claim_verdict(loss, "base", "new", "rsum", "higher", "c", "p")["verdict"] == "does not hold (n=5, 95% CI [-3.98, -2.02])"
    assert claim_verdict(loss, "base", "new", "rsum", "lower", "c", "p")["verdict"].startswith("holds (n=5")
    # a sign inside the noise is no result
    assert claim_verdict(_pairs([1.0, -1.0, 2.0, -1.5, 0.5]), "base", "new", "rsum", "higher", "c", "p"
                         )["verdict"].startswith("inconclusive (n=5")


def test_same_claims_need_a_margin():
    # differences 0.1, -0.2, 0.0, 0.2, -0.1: mean 0, std 0.158 -> CI [-0.196, 0.196]
    flat = _pairs([0.1, -0.2, 0.0, 0.2, -0.1])
    assert claim_verdict(flat, "base", "new", "rsum", "same", "c", "p", margin=0.5)["verdict"] == \
        "holds (n=5, 95% CI [-0.20, 0.20], margin ±0.50)"
    # no margin declared: m = 0, so noise can never show equivalence
    assert claim_verdict(flat, "base", "new", "rsum", "same", "c", "p")["verdict"].startswith("inconclusive (n=5")
    # the interval wholly outside the margin: does not hold; straddling its edge: inconclusive
    assert claim_verdict(_pairs([2.0, 3.0, 4.0, 3.5, 2.5]), "base", "new", "rsum", "same", "c", "p", margin=1.0
                         )["verdict"].startswith("does not hold")
    assert claim_verdict(_pairs([2.0, 3.0, 4.0, 3.5, 2.5]), "base", "new", "rsum", "same", "c", "p", margin=3.0
                         )["verdict"].startswith("inconclusive")
    with pytest.raises(ValueError, match="margin"):
        decide("same", -1.0, 1.0, 5, margin=-1.0)


def test_deterministic_and_threshold_claims():
    fixed = pd.DataFrame({"retriever": ["a", "a", "b", "b"], "method": ["A", "B"] * 2, "x": [1.0, 2.0, 3.0, 3.5]})
    assert claim_verdict(fixed, "A", "B", "x", "higher", "c", "p", exact=True, pair_by="retriever")["verdict"] == \
        "holds (deterministic, every instance)"
    assert claim_verdict(fixed, "A", "B", "x", "same", "c", "p", exact=True, pair_by="retriever")["verdict"] == \
        "does not hold (deterministic, every instance)"
    assert claim_verdict(fixed, "", "B", "x", "at_most", "c", "p", exact=True, threshold=3.5, pair_by="retriever"
                         )["verdict"] == "holds (deterministic)"
    # seeded values against a threshold: the interval of their mean (50.2, 49.8, 50.0, 50.1, 49.9 -> [49.8, 50.2])
    vals = pd.DataFrame({"seed": range(5), "method": "m", "acc": [50.2, 49.8, 50.0, 50.1, 49.9]})
    assert claim_verdict(vals, "", "m", "acc", "at_most", "c", "p", threshold=60.0)["verdict"].startswith("holds (n=5")
    assert claim_verdict(vals, "", "m", "acc", "at_most", "c", "p", threshold=40.0)["verdict"].startswith("does not hold")
    assert claim_verdict(vals, "", "m", "acc", "at_most", "c", "p", threshold=50.0)["verdict"].startswith("inconclusive")


def test_rejudge_a_committed_table_from_its_stored_columns():
    from itmlib.claims.judge import rejudge_claims

    t = pd.DataFrame({"id": ["teran_beats_tern", "teran_shared_weights_same", "ncs_fig1_b_beats_a"],
                      "ours (model vs baseline)": ["397 vs 304", "375 vs 397", "99.7 vs 20"],
                      "difference": [92.5, -1.0, 79.7], "spread (std of paired diff)": [2.376, 1.0, np.nan],
                      "seeds": [5, 5, 1], "verdict": ["holds (within noise)", "holds", "holds (deterministic)"]})
    v = rejudge_claims(t).set_index("id")
    # 92.5 +- 2.776 * 2.376 / sqrt(5) = [89.55, 95.45]
    assert v.loc["teran_beats_tern", "verdict"] == "holds (n=5, 95% CI [89.5, 95.5])"
    # shared weights: margin 1% of the baseline's 397 (its rule), CI -1 +- 1.24 inside [-3.97, 3.97]
    assert v.loc["teran_shared_weights_same", "verdict"].startswith("holds (n=5, 95% CI [-2.24, 0.24], margin ±3.97")
    assert v.loc["ncs_fig1_b_beats_a", "verdict"] == "holds (deterministic)"


def test_rejudge_a_ratio_claim_against_its_rules_threshold():
    """SAM multiplies Rsum: the stored mean and std are the per-seed ratio's; 1.31 +- 2.776 * 0.1 / sqrt(5) =
    [1.19, 1.43] lies below half the paper's gain, 2.0 +- 0.124 = [1.88, 2.12] above it."""
    from itmlib.claims import claim, ratio_threshold
    from itmlib.claims.judge import rejudge_claims

    need = ratio_threshold(claim("sam_scarce_rsum_10"))
    assert 1.5 < need < 1.7                     # 1 + (2.19 - 1) / 2: half the paper's CVSE gain at F-10%
    t = pd.DataFrame({"id": ["sam_scarce_rsum_10"] * 2, "ours (model vs baseline)": ["112 vs 85.3 (1.31x)", "x"],
                      "difference": [1.31, 2.0], "spread (std of paired diff)": [0.1, 0.1], "seeds": [5, 5],
                      "verdict": ["holds", "holds"]})
    v = rejudge_claims(t)
    assert list(v.verdict) == [f"does not hold (n=5, 95% CI [1.19, 1.43], x{need:.2f} needed)",
                               f"holds (n=5, 95% CI [1.88, 2.12], x{need:.2f} needed)"]


def test_claim_verdict_rows_by_hand():
    scarce, full = _runs()[lambda r: r.fraction == 0.1], _runs()[lambda r: r.fraction == 1.0]
    # paired differences 50, 48, 55: mean 51, CI [42.0, 60.0]
    row = claim_verdict(scarce, "base", "sam", "rsum", "higher", "SAM lifts Rsum", "303.2 vs 138.7")
    assert row["verdict"] == "holds (n=3, 95% CI [42.0, 60.0])" and row["difference"] == pytest.approx(51.0)
    assert row["spread (std of paired diff)"] == pytest.approx(np.std([50, 48, 55], ddof=1), abs=1e-3)
    assert row["ours (model vs baseline)"] == "151 vs 100" and row["seeds"] == 3
    assert claim_verdict(scarce, "base", "sam", "rsum", "lower", "c", "p")["verdict"].startswith("does not hold")
    assert claim_verdict(scarce, "base", "sam", "rsum", "same", "c", "p", margin=5.0)["verdict"].startswith("does not hold")
    # differences +1 and -10: two seeds, not judged whatever is claimed
    for expect in ("same", "lower", "higher"):
        assert claim_verdict(full, "base", "sam", "rsum", expect, "c", "p")["verdict"] == "not judged (2 seeds)"
    one = scarce[scarce.seed == 0]
    assert claim_verdict(one, "base", "sam", "rsum", "higher", "c", "p")["verdict"] == "not judged (1 seed)"
    assert np.isnan(claim_verdict(one, "base", "sam", "rsum", "higher", "c", "p")["spread (std of paired diff)"])
    assert claim_verdict(scarce, "base", "absent", "rsum", "higher", "c", "p") is None
    with pytest.raises(ValueError, match="expect"):
        claim_verdict(scarce, "base", "sam", "rsum", "better", "c", "p")


def test_extra_seeds_of_one_arm_are_left_out_of_its_pairs_and_named_in_the_header():
    from itmlib.training.grid import devices_note, trained_where

    # the model has five seeds (2-4 on a GPU), its baseline two: only seeds 0 and 1 pair
    runs = pd.DataFrame({"method": ["new"] * 5 + ["base"] * 2, "seed": [0, 1, 2, 3, 4, 0, 1],
                         "rsum": [110.0, 112.0, 500.0, 500.0, 500.0, 100.0, 101.0],
                         "device": ["cpu", "cpu", "cuda (X)", "cuda (X)", "cuda (X)", "cpu", None]})
    row = claim_verdict(runs, "base", "new", "rsum", "higher", "c", "p")
    assert row["seeds"] == 2 and row["difference"] == pytest.approx(10.5)
    assert row["ours (model vs baseline)"] == "111 vs 100"       # the paired seeds' means, not 326.8 vs 100.5
    assert devices_note(runs, "cpu") == "seeds 2-4 of new trained on cuda (X), the rest on cpu"
    assert devices_note(runs[runs.seed > 1], "cpu") == "every member trained on cuda (X)"
    assert devices_note(runs[runs.seed < 2], "cpu") == "" and devices_note(runs.drop(columns="device"), "cpu") == ""
    assert trained_where(runs[runs.seed < 2], "cpu") == "every member on cpu"
    assert trained_where(runs[runs.seed > 1], "cpu") == "every member trained on cuda (X)"


def test_a_claim_on_one_sample_is_judged_on_its_bootstrap_draws_by_hand():
    """200 draws with new - base = 0.01, 0.02, ..., 2.00 (shuffled): the 2.5th percentile sits 0.975 of the way
    from the 5th to the 6th value (0.05975), the 97.5th 0.025 past the 195th (1.95025); the estimate is the
    sample's own difference (replicate 0), never the draws' mean."""
    from itmlib.claims.verdicts import bootstrap_verdict

    d = np.random.default_rng(0).permutation(np.arange(1, 201) / 100)
    runs = pd.DataFrame({"replicate": np.tile(np.arange(201), 2), "method": ["base"] * 201 + ["new"] * 201,
                         "auc": np.r_[np.full(201, 0.5), 0.5 + np.r_[0.7, d]]})
    out = bootstrap_verdict(runs, "base", "new", "auc", "higher")
    assert (out["ci_low"], out["ci_high"]) == (pytest.approx(0.05975, abs=5e-4), pytest.approx(1.950, abs=5e-4))
    assert out["difference"] == pytest.approx(0.7) and out["verdict"].startswith("holds (bootstrap, 200 draws")
    assert bootstrap_verdict(runs, "base", "new", "auc", "lower")["verdict"].startswith("does not hold")
    # against a threshold: new's own draws (0.51 ... 2.5) sit above 0.5 and straddle 1.0
    assert bootstrap_verdict(runs, "", "new", "auc", "at_least", threshold=0.5)["verdict"].startswith("holds")
    assert bootstrap_verdict(runs, "", "new", "auc", "at_least", threshold=1.0)["verdict"].startswith("inconclusive")
    few = runs[runs.replicate < 50]
    assert bootstrap_verdict(few, "base", "new", "auc", "higher")["verdict"] == "not run (49 bootstrap draws, 200 needed)"
    with pytest.raises(ValueError, match="'replicate' column"):
        bootstrap_verdict(runs.drop(columns="replicate"), "base", "new", "auc", "higher")


def test_a_bootstrap_claims_p_value_is_its_estimate_over_its_standard_error():
    from scipy.stats import norm

    from itmlib.course.summary import claim_p

    row = pd.Series({"difference": 0.02, "spread": 0.01, "seeds": 1, "ci_low": 0.0, "expect": "higher",
                     "verdict": "holds (bootstrap, 1000 draws, 95% CI [0.001, 0.04])"})
    assert claim_p(row) == pytest.approx(2 * norm.sf(2.0))


def test_verdict_changes_pairs_claims_by_id_and_marks_the_ones_whose_verdict_moved():
    row = lambda i, ours, v: {"id": i, "claim": f"claim {i}", "metric": "rsum", "ours (model vs baseline)": ours,   # noqa: E731
                              "verdict": v}
    before = pd.DataFrame([row("a", "400 vs 380", "holds (n=5, 95% CI [3.1, 37.0])"),
                           row("b", "300 vs 310", "not judged (still rising)"),
                           row("gone", "1 vs 2", "inconclusive (n=3, 95% CI [-1.0, 2.0])")])
    after = pd.DataFrame([row("b", "350 vs 352", "inconclusive (n=5, 95% CI [-9.0, 5.0])"),
                          row("a", "420 vs 401", "holds (n=5, 95% CI [2.0, 36.0])"),
                          row("new", "5 vs 4", "holds (n=5, 95% CI [0.5, 1.5])")])
    t = verdict_changes(before, after).set_index("id")
    assert list(t.index) == ["b", "a", "new", "gone"]                  # after's order, then what it dropped
    assert t.moved.to_dict() == {"b": True, "a": False, "new": True, "gone": True}   # a's interval moved, not its verdict
    assert t.loc["b", "verdict before"] == "not judged (still rising)" and t.loc["b", "ours after"] == "350 vs 352"
    assert t.loc["new", "verdict before"] == "new claim" and t.loc["gone", "verdict after"] == "dropped"
    with pytest.raises(ValueError, match="before claims table lacks \\['verdict'\\]"):
        verdict_changes(before.drop(columns="verdict"), after)


def test_ours_numbers_keep_their_trailing_zeros():
    from itmlib.claims.verdicts import ours_number

    # three significant digits as the papers print them: 42.0 beside 72.8, not "42"; whole from 100 up
    assert [ours_number(x) for x in (42.0, 72.84, 65, 0.5, 0.04531, 397.4, 1234.5, -5.0)] == \
        ["42.0", "72.8", "65.0", "0.500", "0.0453", "397", "1234", "-5.00"]
    assert ours_number(float("nan")) == "nan"
