import numpy as np
import pandas as pd
import pytest

from itmlib.experiments import claim_verdict, compare, summarize, vse_config


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


def test_compare_verdicts():
    c = compare(_runs(), "rsum", "base", "sam").set_index("fraction")
    # paired differences 50, 48, 55: mean 51, std 3.6 -> beyond the spread
    assert c.loc[0.1, "mean_diff"] == pytest.approx(51.0) and c.loc[0.1, "ratio"] == pytest.approx(151 / 100)
    assert c.loc[0.1, "verdict"].startswith("sam higher")
    # differences +1 and -10 at full data: no difference beyond the spread
    assert c.loc[1.0, "verdict"] == "no difference beyond the seed spread"
    one = compare(_runs()[_runs().seed == 0], "rsum", "base", "sam")
    assert one.verdict.str.startswith("inconclusive").all()


def test_claim_verdict_rows_by_hand():
    scarce, full = _runs()[lambda r: r.fraction == 0.1], _runs()[lambda r: r.fraction == 1.0]
    # paired differences 50, 48, 55: mean 51, std 3.61 -> beyond 2x the spread
    row = claim_verdict(scarce, "base", "sam", "rsum", "higher", "SAM lifts Rsum", "303.2 vs 138.7")
    assert row["verdict"] == "holds" and row["difference"] == pytest.approx(51.0)
    assert row["spread (std of paired diff)"] == pytest.approx(np.std([50, 48, 55], ddof=1), abs=1e-3)
    assert row["ours (model vs baseline)"] == "151 vs 100" and row["seeds"] == 3
    assert claim_verdict(scarce, "base", "sam", "rsum", "lower", "c", "p")["verdict"] == "does not hold"
    assert claim_verdict(scarce, "base", "sam", "rsum", "same", "c", "p")["verdict"] == "does not hold"
    # differences +1 and -10: mean -4.5, std 7.8 -> within the spread
    assert claim_verdict(full, "base", "sam", "rsum", "same", "c", "p")["verdict"] == "holds"
    assert claim_verdict(full, "base", "sam", "rsum", "lower", "c", "p")["verdict"] == "holds (within noise)"
    assert claim_verdict(full, "base", "sam", "rsum", "higher", "c", "p")["verdict"] == "does not hold (within noise)"
    one = scarce[scarce.seed == 0]
    assert claim_verdict(one, "base", "sam", "rsum", "higher", "c", "p")["verdict"] == "holds (one seed: direction only)"
    assert claim_verdict(one, "base", "sam", "rsum", "same", "c", "p")["verdict"].startswith("one seed: a 'no change' claim")
    assert np.isnan(claim_verdict(one, "base", "sam", "rsum", "higher", "c", "p")["spread (std of paired diff)"])
    assert claim_verdict(scarce, "base", "absent", "rsum", "higher", "c", "p") is None
    with pytest.raises(ValueError, match="expect"):
        claim_verdict(scarce, "base", "sam", "rsum", "better", "c", "p")


def test_vse_config_follows_the_scale():
    c = vse_config("full", loss="sam", tau=5.0)
    assert (c.epochs, c.batch_size, c.embed_dim, c.word_dim) == (30, 128, 1024, 300)
    assert vse_config("smoke", epochs=2).epochs == 2


def test_timed_returns_the_result_and_a_duration():
    import time

    from itmlib.experiments import timed
    t, r = timed(lambda: (time.sleep(0.02), 7)[1])
    assert r == 7 and 0.02 <= t < 1.0
