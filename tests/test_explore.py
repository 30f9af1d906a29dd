"""The ablation explorer reads the committed member records: tables, comparisons by the course's rule, the widget."""

import pandas as pd
import pytest

from itmlib.course.explore import ablation_table, ablations, compare, knobs, load_members
from itmlib.claims.verdicts import claim_verdict


def test_ablation_table_slices_the_committed_records_by_knob():
    t = ablation_table("04_sam", tau=3.0, sampling="soft")
    assert len(t) >= 3 and {"rsum", "seed", "best_epoch", "seconds"} <= set(t.columns)
    assert (t.tau == 3.0).all() and (t.sampling == "soft").all()
    # the grid's knobs, with the values its records hold
    k = knobs("04_sam")
    assert k["tau"] == [3.0, 5.0, 10.0] and k["sampling"] == ["hard", "random", "soft"] and k["keep_triplet"] == [False, True]
    # a knob is what a member was trained with, never a test metric its rows report (08's median ranks)
    k8 = knobs("08_teran")
    assert {"pooling", "shared_weights", "method"} <= set(k8) and not {"i2t_medr", "true_region_rank"} & set(k8)
    with pytest.raises(ValueError, match=r"no member has tau=7.0; its records hold tau in \[3.0, 5.0, 10.0\]"):
        ablation_table("04_sam", tau=7.0)
    with pytest.raises(ValueError, match="no knob 'colour'"):
        ablation_table("04_sam", colour="red")
    with pytest.raises(ValueError, match="no member records"):
        load_members("01_recall_metrics")


def test_compare_is_the_course_verdict_on_the_same_records():
    base, new = {"method": "VSE++ (no SAM)"}, {"method": "tau=3 hard -T"}
    got = compare("04_sam", base, new, "rsum")
    m = load_members("04_sam")
    runs = pd.concat([m[m.method == "VSE++ (no SAM)"].assign(method="base"), m[m.method == "tau=3 hard -T"].assign(method="new")])
    ref = claim_verdict(runs[["seed", "method", "rsum"]], "base", "new", "rsum", "higher", "c", "p")
    assert got["verdict"] == ref["verdict"] and got["difference"] == ref["difference"] and got["seeds"] == 3
    with pytest.raises(ValueError, match="several members per seed"):
        compare("04_sam", {"tau": 3.0}, new, "rsum")


def test_the_widget_is_driven_by_its_dropdowns():
    import ipywidgets

    w = ablations("04_sam")
    assert isinstance(w, ipywidgets.Widget)
    ex = w.explorer
    ex.a["tau"].value = 3.0
    ex.a["sampling"].value = "soft"
    assert len(ex.table) == len(ablation_table("04_sam", tau=3.0, sampling="soft"))
    ex.a["tau"].value, ex.a["sampling"].value = None, None
    ex.a["method"].value = "VSE++ (no SAM)"
    ex.b["method"].value = "tau=3 hard -T"
    assert len(ex.table) == 3
    assert ex.comparison["verdict"] == compare("04_sam", {"method": "VSE++ (no SAM)"}, {"method": "tau=3 hard -T"})["verdict"]
    ex.metric.value = "nsum"
    assert ex.comparison["metric"] == "nsum"


def test_the_shown_table_names_the_knobs_that_still_vary():
    """06's +LM runs at four fractions (Table 5) and two epoch counts: each row must say which it is."""
    ex = ablations("06_phrase_labels").explorer
    ex.a["method"].value = "+LM (w/ phrases)"
    assert {"fraction", "epochs", "seed", "rsum"} <= set(ex.shown.columns)
    assert len(ex.shown) == len(ablation_table("06_phrase_labels", method="+LM (w/ phrases)"))
    ex.a["fraction"].value = 0.25                # of all 8,000 images: Table 3's runs
    assert "fraction" not in ex.shown.columns and set(ex.shown.seed) == {0, 1, 2, 3, 4}


def test_train_this_one_now_adds_a_smoke_member_apart_from_the_committed_ones(tmp_path, monkeypatch):
    from itmlib.course import explore

    monkeypatch.setattr(explore, "SESSION", {})
    row = explore.train_setting("04_sam", method="tau=5 soft +T", epochs=1)
    assert row["method"] == "tau=5 soft +T" and row["tau"] == 5.0 and row["sampling"] == "soft"
    assert row["rsum"] > 6 * 100 * 5 / 200      # above a random ranking's Rsum on the 200-image smoke test split
    t = ablation_table("04_sam", method="tau=5 soft +T")
    assert (t.source == "this session, smoke").sum() == 1 and (t.source == "committed, medium").sum() == 3
    with pytest.raises(ValueError, match="pick one"):
        explore.train_setting("04_sam", tau=5.0)
