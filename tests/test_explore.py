"""The ablation explorer reads the committed member records: tables, comparisons by the course's rule, the widget."""

import re

import pytest

from itmlib.course.explore import ablation_table, ablations, arm_training, compare_settings, knobs, load_members


def test_ablation_table_slices_the_committed_records_by_knob():
    t = ablation_table("04_sam", tau=3.0, sampling="soft")
    assert len(t) >= 3 and {"rsum", "seed", "best_epoch", "seconds"} <= set(t.columns)
    assert (t.tau == 3.0).all() and (t.sampling == "soft").all()
    # the grid's knobs, with the values its records hold
    k = knobs("04_sam")
    assert k["tau"] == [3.0, 5.0, 10.0] and k["sampling"] == ["hard", "random", "soft"] and k["keep_triplet"] == [False, True]
    # a knob is what a member was trained with, never a test metric its rows report (08's median ranks)
    k8 = knobs("08_teran")
    assert {"pooling", "objective", "method"} <= set(k8) and not {"i2t_medr", "true_region_rank"} & set(k8)
    with pytest.raises(ValueError, match=r"no member has tau=7.0; its records hold tau in \[3.0, 5.0, 10.0\]"):
        ablation_table("04_sam", tau=7.0)
    with pytest.raises(ValueError, match="no knob 'colour'"):
        ablation_table("04_sam", colour="red")
    with pytest.raises(ValueError, match="no member records"):
        load_members("01_recall_metrics")


def _write_records(folder, members):
    """Made-up member records: ``members`` maps (name, tau) to per-seed (rsum, dev curve)."""
    import json

    folder.mkdir(parents=True)
    for (name, tau), seeds in members.items():
        for seed, (rsum, curve) in enumerate(seeds):
            rec = {"record": 1, "member": name, "fraction": 1.0, "seed": seed, "seconds": 1.0,
                   "config": {"tau": tau, "epochs": len(curve), "select_by": "rsum", "seed": seed, "data": "d",
                              "model": {"kind": "vse"}},
                   "rows": [{"fraction": 1.0, "seed": seed, "method": name, "best_epoch": curve.index(max(curve)) + 1,
                             "rsum": rsum}],
                   "history": {"epoch": list(range(1, len(curve) + 1)), "dev_rsum": curve}}
            (folder / f"{name}-{tau}-{seed}.json").write_text(json.dumps(rec))


def test_compare_settings_pairs_seeds_and_judges_by_hand(tmp_path):
    """Base rsum 100, 102, 104 and new 103, 104, 108: differences 3, 2, 4 -> mean 3, sd 1,
    t(0.975, 2) = 4.303 -> CI 3 +- 4.303 / sqrt(3) = [0.516, 5.48]: holds; a setting matching two members
    per seed is refused; and the arms' training is read off the same records."""
    flat = [50.0, 60.0, 59.0, 58.0]
    _write_records(tmp_path / "99_toy" / "members", {("base", 1.0): [(100.0, flat), (102.0, flat), (104.0, flat)],
                                                      ("new", 1.0): [(103.0, flat), (104.0, flat), (108.0, flat)],
                                                      ("new", 2.0): [(1.0, [1.0, 2.0, 3.0, 9.0])] * 3})
    got = compare_settings("99_toy", {"method": "base"}, {"method": "new", "tau": 1.0}, results_dir=str(tmp_path))
    assert got["difference"] == pytest.approx(3.0) and got["seeds"] == 3
    assert (got["ci_low"], got["ci_high"]) == (pytest.approx(0.516, abs=1e-3), pytest.approx(5.484, abs=1e-3))
    assert got["verdict"] == "holds (n=3, 95% CI [0.52, 5.48])"
    with pytest.raises(ValueError, match="several members per seed"):
        compare_settings("99_toy", {"method": "base"}, {"method": "new"}, results_dir=str(tmp_path))
    states = arm_training("99_toy", results_dir=str(tmp_path)).set_index("arm").state
    assert states["new@1[tau=2]"] == "still rising" and states["new@1[tau=1]"] == "converged"
    # a claim whose longer probe showed its baseline still rising: the explorer says what the claims table says
    (tmp_path / "99_toy" / "claims.csv").write_text("# table: 99_toy/claims\nid,baseline_arms,training\n"
                                                    "c,base@1;new@1[tau=1],rising past its budget (probed: x); converged\n")
    states = arm_training("99_toy", results_dir=str(tmp_path)).set_index("arm").state
    assert states["base@1"] == states["new@1[tau=1]"] == "rising past its budget" and states["new@1[tau=2]"] == "still rising"


def test_outside_a_front_end_the_explorer_is_a_readable_table(capsys):
    assert ablations("04_sam") is None                       # no widget where no person can use it
    out = capsys.readouterr().out
    assert "<IPython" not in out and "\x1b[" not in out and "*" not in out
    assert re.search(r"\d+ member records, their arms \d+ converged", out) and re.search(r"\n  tau +3.0, 5.0, 10.0\n", out)
    assert re.search(r"\.\.\. \(\d+ in all\)", out)                   # a long knob is cut, with its count


def test_the_widget_is_driven_by_its_dropdowns():
    import ipywidgets

    from itmlib.course.explore import Explorer

    ex = Explorer("04_sam", "results")
    assert isinstance(ex.widget, ipywidgets.Widget)
    ex.a["tau"].value = 3.0
    ex.a["sampling"].value = "soft"
    assert len(ex.table) == len(ablation_table("04_sam", tau=3.0, sampling="soft"))
    ex.a["tau"].value, ex.a["sampling"].value = None, None
    ex.a["method"].value = "VSE++ (no SAM)"
    ex.b["method"].value = "tau=3 hard +T"
    assert set(ex.table.method) == {"VSE++ (no SAM)"} and ex.table.seed.is_unique
    assert ex.comparison["verdict"] == compare_settings("04_sam", {"method": "VSE++ (no SAM)"},
                                                        {"method": "tau=3 hard +T"})["verdict"]
    ex.metric.value = "nsum"
    assert ex.comparison["metric"] == "nsum"


def test_the_shown_table_names_the_knobs_that_still_vary():
    """06's +LM runs at four fractions (Table 5) and two epoch counts: each row must say which it is."""
    from itmlib.course.explore import Explorer

    ex = Explorer("06_phrase_labels", "results")
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
