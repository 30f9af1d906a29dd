"""Notebook @@09's table of every claim, the effect sizes, and results/README.md generated from it."""

import math

import numpy as np

import pandas as pd
import pytest

from itmlib.claims import CLAIM_FILES, load_claims
from itmlib.course.results import write_table
from itmlib.course.summary import (README_END, README_START, _ours, all_claims, claims_markdown, verdict_kind,
                            write_claims_readme)
from itmlib.paths import repo_root


def test_ours_cells_parse():
    assert _ours("397 vs 306") == (397.0, 306.0)
    assert _ours("0.385 (min of 1)")[0] == 0.385 and math.isnan(_ours("0.385 (min of 1)")[1])
    assert _ours("-1.5e-3 vs 2") == (-0.0015, 2.0)
    assert all(math.isnan(v) for v in _ours("")) and all(math.isnan(v) for v in _ours(float("nan")))


def _meta(scale="medium"):
    return {"data": "test", "dataset": "synthetic", "scale": scale, "seed": 0, "device": "cpu", "paper": "x"}


def test_every_claim_has_a_row_and_committed_rows_are_joined(tmp_path):
    # nothing committed: every claim listed, but the real-language notebook's, which join with its first table
    n_claims = sum(1 for p in CLAIM_FILES for c in load_claims(p) if c.notebook != "09_real_language")
    assert len(all_claims(tmp_path)) == n_claims
    assert set(all_claims(tmp_path).verdict) == {"no committed run (make tables)"}
    c = next(c for c in load_claims("teran") if c.id == "teran_beats_tern")
    old = next(c for c in load_claims("teran") if c.id == "teran_mrsw_beats_mwsr_t2i")
    claims = pd.DataFrame([{"id": c.id, "claim": c.claim, "ours (model vs baseline)": "300 vs 200", "difference": 100.0,
                            "spread (std of paired diff)": 5.0, "seeds": 3, "verdict": "holds"},
                           # a table from before ids: matched by its text
                           {"id": float("nan"), "claim": old.claim, "ours (model vs baseline)": "10 vs 20",
                            "difference": -10.0, "spread (std of paired diff)": 1.0, "seeds": 2, "verdict": "does not hold"}])
    write_table(claims, tmp_path, "08_teran", "claims", _meta("full"))
    t = all_claims(tmp_path).set_index("id")
    row = t.loc["teran_beats_tern"]
    assert row.verdict == "holds" and row.seeds == 3 and row.scale == "full"
    assert row.our_effect == pytest.approx(0.5)                                 # (300 - 200) / 200
    assert row.paper_effect > 0 and row.same_sign
    assert t.loc["teran_mrsw_beats_mwsr_t2i"].verdict == "does not hold" and not t.loc["teran_mrsw_beats_mwsr_t2i"].same_sign
    assert t.loc["teran_avg_words_loses"].verdict == "not in the committed table (regenerate it)"
    assert "65.0 vs 57.5" in t.loc["teran_mrsw_beats_mwsr_t2i", "paper (model vs baseline)"]   # the paper's side always shown


def test_verdicts_are_counted_by_what_they_say():
    """A heading counts the three labels; deterministic checks of definitions are counted apart."""
    kinds = {v: verdict_kind(v) for v in ["holds (n=5, 95% CI [1.0, 2.0])", "holds (deterministic, every instance)",
                                          "inconclusive (n=2, 95% CI [-3.0, 4.0])", "does not hold (n=3, 95% CI [-3, -1])",
                                          "does not hold (deterministic)", "not run", "no committed run (make tables)",
                                          float("nan")]}
    assert list(kinds.values()) == ["holds", "holds", "inconclusive", "does not hold", "does not hold", "not judged",
                                    "not judged", "not judged"]
    table = pd.DataFrame({"paper": "P", "notebook": "n", "paper table": "T", "claim": list("abcdefgh"),
                          "headline": [True, False, False, True, False, False, True, False],
                          "check": [False, False, False, False, False, True, False, False],
                          "kind": ["paper"] * 5 + ["check", "control", "illustration"],
                          "paper (model vs baseline)": "", "ours (model vs baseline)": "", "seeds": 5,
                          "scale": "medium", "verdict": ["holds (n=5)", "inconclusive (n=2)", "inconclusive (n=2)",
                                                         "does not hold (n=5)", "not run", "holds (deterministic)",
                                                         "holds (n=5)", "not judged (an illustration)"]})
    md = claims_markdown(table)
    # the paper's claims are counted; the control beside them, the illustration named, neither among them
    assert ("5 paper claims: 1 holds, 1 does not hold, 2 inconclusive, 1 not judged. Headline claims: 1 holds, "
            "1 does not hold. Our 1 control: 1 holds. 1 illustration, shown and not judged. Apart from these, 1 of 1 "
            "deterministic checks of definitions hold") in md
    # headline claims first, marked; the controls, the illustrations and the checks in lists of their own after them
    assert md.index("**H** a") < md.index("**H** d") < md.index("| b ") < md.index("Our controls") < \
        md.index("**H** g") < md.index("Illustrations") < md.index("| h ") < md.index("Deterministic checks") < md.index("| f ")


def test_p_values_and_benjamini_hochberg_by_hand():
    from itmlib.course.summary import (benjamini_hochberg, claim_p, fdr_marked, fdr_summary, shown_q,
                                         with_fdr)

    # mean 3, sd 0.7906, n 5: t = 3 / (0.7906 / sqrt 5) = 8.485 on 4 df -> p = 0.00106
    assert claim_p(pd.Series({"difference": 3.0, "spread": 0.7906, "seeds": 5, "ci_low": 2.0, "expect": "higher"})) == \
        pytest.approx(0.00106, abs=2e-5)
    for no in ({"expect": "same"}, {"seeds": 1}, {"ci_low": float("nan")}):   # no null, no spread, no interval
        row = {"difference": 3.0, "spread": 0.79, "seeds": 5, "ci_low": 2.0, "expect": "higher", **no}
        assert np.isnan(claim_p(pd.Series(row)))
    # p 0.01, 0.04, 0.03, 0.20 (m = 4): sorted 0.01 0.03 0.04 0.20 -> 0.04, 0.0533, 0.0533, 0.20
    q = benjamini_hochberg(pd.Series([0.01, 0.04, 0.03, 0.20, np.nan]))
    assert list(q.round(4)[:4]) == [0.04, 0.0533, 0.0533, 0.2] and np.isnan(q.iloc[4])
    t = pd.DataFrame({"kind": "paper", "verdict": ["holds (n=5)", "holds (n=5)", "does not hold (n=5)", "inconclusive"],
                      "q": [0.04, 0.0533, 0.0533, 0.2]})
    assert fdr_summary(t).startswith("Of the 3 decisive verdicts among the paper claims judged by interval, 1 survive")
    assert list(fdr_marked(t)) == ["holds (n=5)", "holds (n=5) †", "does not hold (n=5) †", "inconclusive"]
    # a claim that reads not judged (3 of 5 seeds, or below its level) keeps its p but joins no family: m stays 2
    rows = pd.DataFrame({"kind": "paper", "expect": "higher", "seeds": 5, "spread": 0.7906, "ci_low": 2.0,
                         "difference": [3.0, 3.0, 3.0],
                         "verdict": ["holds (n=5)", "holds (n=5)", "not judged (still training: 3 of 5 seeds in)"]})
    out = with_fdr(rows)
    assert out.p.notna().all() and np.isnan(out.q.iloc[2])
    assert list(out.q[:2].round(5)) == [round(out.p.iloc[0], 5)] * 2   # equal p, m = 2: q = p * 2 / 2
    # one format down a q column: the CSV's 4 significant figures, "<0.001" below 0.001 (never 1.211e-08)
    assert [shown_q(v) for v in (0.873, 0.05333, 0.001, 0.0009999, 1.211e-08, np.nan)] == \
        ["0.873", "0.05333", "0.001", "<0.001", "<0.001", ""]


def test_readme_block_is_rewritten_in_place(tmp_path):
    (tmp_path / "README.md").write_text(f"# results/\nintro\n\n{README_START}\nstale\n{README_END}\n\nafter\n")
    text = write_claims_readme(tmp_path)
    assert "stale" not in text and text.startswith("# results/\nintro") and text.rstrip().endswith("after")
    assert claims_markdown(all_claims(tmp_path)) in text and text.count(README_START) == 1


def test_committed_results_readme_agrees_with_the_committed_tables():
    """results/README.md's claims block is generated (`make tables`): it must equal what the committed
    claims tables give today, so no claim number in it is typed by hand or left stale."""
    text = (repo_root() / "results" / "README.md").read_text(encoding="utf-8")
    assert README_START in text, "results/README.md has no generated claims block: run make tables"
    block = text.split(README_START, 1)[1].split(README_END, 1)[0].strip()
    assert block == claims_markdown(all_claims(repo_root() / "results")).strip(), \
        "results/README.md disagrees with results/*/claims.csv: run write_claims_readme('results')"


def test_the_real_language_claims_join_the_summary_with_their_first_table(tmp_path):
    from itmlib.claims import replayed_claims

    base = len(all_claims(tmp_path))
    write_table(pd.DataFrame([{"id": "real_teran_beats_tern", "claim": "x", "ours (model vs baseline)": "3 vs 2",
                               "difference": 1.0, "spread (std of paired diff)": 0.5, "seeds": 5, "verdict": "holds"}]),
                tmp_path, "09_real_language", "claims", _meta("medium"))
    t = all_claims(tmp_path)
    assert len(t) == base + len(replayed_claims())             # the replays and the notebook's own claim
    row = t.set_index("id").loc["real_teran_beats_tern"]
    assert row.verdict == "holds" and row.paper == t.set_index("id").loc["teran_beats_tern", "paper"]
    assert row.claim.endswith("(real captions)")



def test_conclusions_count_the_headline_claims_not_judged_yet_instead_of_listing_them(tmp_path):
    from itmlib.course.conclusions import paper_conclusions

    t = all_claims(tmp_path)                                   # nothing committed: every verdict "no committed run"
    t.loc[t.id == "teran_beats_tern", "verdict"] = "holds (n=5, 95% CI [1.0, 2.0])"
    line = next(s for s in paper_conclusions(t).splitlines() if "TERAN" in s)
    assert "TERAN beats TERN - *holds*" in line and "MrSw beats MwSr" not in line
    n = int(((t.paper == t.set_index("id").loc["teran_beats_tern", "paper"]) & t.headline).sum()) - 1
    assert n > 1 and line.endswith(f" {n} more headline claims are not judged yet.")
    t.loc[t.paper == t.set_index("id").loc["teran_beats_tern", "paper"], "verdict"] = "holds (n=5, 95% CI [1.0, 2.0])"
    t.loc[t.id == "teran_mrsw_beats_mwsr_i2t", "verdict"] = "no committed run"
    line = next(s for s in paper_conclusions(t).splitlines() if "TERAN" in s)
    assert line.endswith(" 1 more headline claim is not judged yet.")


def test_conclusions_give_a_claim_judged_on_real_captions_beside_its_first_verdict(tmp_path):
    from itmlib.course.conclusions import paper_conclusions

    row = {"claim": "x", "ours (model vs baseline)": "3 vs 2", "difference": 1.0, "spread (std of paired diff)": 0.5, "seeds": 5}
    write_table(pd.DataFrame([{**row, "id": "real_teran_beats_tern", "verdict": "inconclusive (n=5, 95% CI [-1.0, 2.0])"},
                              {**row, "id": "real_teran_grounds_above_chance", "verdict": "holds (n=5, 95% CI [3.0, 4.0])"}]),
                tmp_path, "09_real_language", "claims", _meta("medium"))
    t = all_claims(tmp_path)
    t.loc[t.id == "teran_beats_tern", "verdict"] = "holds (n=5, 95% CI [1.0, 2.0])"
    line = next(s for s in paper_conclusions(t).splitlines() if "TERAN" in s)
    assert "TERAN beats TERN - *holds* (real captions: *inconclusive*)" in line
    assert "TERAN beats TERN (real captions)" not in line            # once, beside its synthetic verdict
    grounding = t.set_index("id").loc["real_teran_grounds_above_chance", "claim"]
    assert grounding not in line                   # our controls: results/README.md, not the README's one line a paper



def test_a_real_verdict_a_gate_withheld_carries_the_gates_word(tmp_path):
    from itmlib.course.conclusions import paper_conclusions

    row = {"claim": "x", "ours (model vs baseline)": "3 vs 2", "difference": 1.0, "spread (std of paired diff)": 0.5, "seeds": 5}
    gate = "not judged (world below its floor: VSE++ on every training image Rsum 178.9, lexical floor (no training) 179.0)"
    write_table(pd.DataFrame([{**row, "id": "real_teran_beats_tern", "verdict": gate}]), tmp_path, "09_real_language",
                "claims", _meta("medium"))
    t = all_claims(tmp_path)
    t.loc[t.id == "teran_beats_tern", "verdict"] = "holds (n=5, 95% CI [1.0, 2.0])"
    line = next(s for s in paper_conclusions(t).splitlines() if "TERAN" in s)
    assert "TERAN beats TERN - *holds* (real captions: *not judged: world below its floor*)" in line
    write_table(pd.DataFrame([{**row, "id": "real_teran_beats_tern", "verdict": "not run (its runs absent)"}]), tmp_path,
                "09_real_language", "claims", _meta("medium"))
    retraining = all_claims(tmp_path)
    retraining.loc[retraining.id == "teran_beats_tern", "verdict"] = "holds (n=5, 95% CI [1.0, 2.0])"
    assert "TERAN beats TERN - *holds* (real captions: *not run*)" in next(
        s for s in paper_conclusions(retraining).splitlines() if "TERAN" in s)
    near = "not judged (world within 10% of its floor: VSE++ on every training image Rsum 155.2, lexical floor (no training) 150.6)"
    write_table(pd.DataFrame([{**row, "id": "real_teran_beats_tern", "verdict": near}]), tmp_path, "09_real_language",
                "claims", _meta("medium"))
    within = all_claims(tmp_path)
    within.loc[within.id == "teran_beats_tern", "verdict"] = "holds (n=5, 95% CI [1.0, 2.0])"
    assert "TERAN beats TERN - *holds* (real captions: *not judged: world within 10% of its floor*)" in next(
        s for s in paper_conclusions(within).splitlines() if "TERAN" in s)
    from itmlib.course.summary import claim_kinds, verdict_kind

    g = t[t.paper == t.set_index("id").loc["teran_beats_tern", "paper"]]
    head = g[g.headline & (claim_kinds(g) == "paper")]
    n = int((head.verdict.map(verdict_kind) == "not judged").sum()) - 1      # not the replay shown beside its claim
    assert line.endswith(f" {n} more headline claims are not judged yet.")
