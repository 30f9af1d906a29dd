import numpy as np
import pandas as pd
import pytest

from itmlib.experiments import compare, summarize, vse_config


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


def test_vse_config_follows_the_scale():
    c = vse_config("full", loss="sam", tau=5.0)
    assert (c.epochs, c.batch_size, c.embed_dim, c.word_dim) == (30, 128, 1024, 300)
    assert vse_config("smoke", epochs=2).epochs == 2


def test_timed_returns_the_result_and_a_duration():
    import time

    from itmlib.experiments import timed
    t, r = timed(lambda: (time.sleep(0.02), 7)[1])
    assert r == 7 and 0.02 <= t < 1.0
