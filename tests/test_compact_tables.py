"""What a reader sees of a summarised table: mean ± std, each seed's best epoch, and a paper column that
names the method whose number it shows."""

import numpy as np
import pandas as pd
import pytest

from itmlib.claims.verdicts import summarize
from itmlib.course.results import write_table
from itmlib.course.viz import compact

META = {"data": "unit-test data", "dataset": "synthetic", "scale": "smoke", "seed": 0, "device": "cpu", "paper": "p"}


def test_compact_names_the_papers_method_and_shows_each_seeds_best_epoch(tmp_path):
    runs = pd.DataFrame({"method": ["A", "A", "B", "B"], "seed": [1, 0, 0, 1], "rsum": [10.0, 12.0, 20.0, 22.0],
                         "best_epoch": [7, 3, 15, 15]})
    t = summarize(runs, ["method"], ["rsum"])
    assert list(t["best epochs"]) == ["3 7", "15 15"]          # in seed order, whatever the rows' order
    t["paper_rsum (CVSE, F30K)"] = [471.6, 478.9]
    t["paper_rsum (SGR, F30K)"] = [488.4, 495.3]
    t = write_table(t, tmp_path, "nb", "t", META, decimals=2)
    shown = compact(t, ["method"], ("rsum",), paper={"rsum": "paper_rsum (CVSE, F30K)"}).data
    assert list(shown.columns) == ["method", "rsum", "paper rsum (CVSE, F30K)", "seeds", "best epochs"]
    assert list(shown["paper rsum (CVSE, F30K)"]) == ["471.6", "478.9"] and shown.rsum[0] == "11 ± 1.41"


def test_compact_shows_each_number_as_the_committed_table_holds_it(tmp_path):
    """20.7849 ± 0.0849 written at 2 decimals is 20.78 and 0.08 in the CSV; the notebook once showed 0.085. A paper
    column named "paper <its metric>" heads itself (the paper's phrase accuracy beside our thresholded one)."""
    t = pd.DataFrame({"method": ["A"], "r1": [20.7849], "r1_std": [0.0849], "rank": [0.059431], "rank_std": [0.004771],
                      "seeds": [2], "paper acc_r1": [77.7]})
    with pytest.raises(ValueError, match="pass the frame write_table returned"):
        compact(t, ["method"], ("r1", "rank"))          # the unrounded frame: its digits are not the CSV's
    shown = compact(write_table(t, tmp_path, "nb", "two", META, decimals=2), ["method"], ("r1", "rank"),
                    paper={"r1": "paper acc_r1"}).data
    assert shown.r1[0] == "20.78 ± 0.08" and shown["rank"][0] == "0.06 ± 0"
    assert list(shown.columns) == ["method", "r1", "paper acc_r1", "rank", "seeds"]
    four = compact(write_table(t, tmp_path, "nb", "four", META), ["method"], ("r1", "rank")).data   # 4 significant figures
    assert four.r1[0] == "20.78 ± 0.0849" and four["rank"][0] == "0.05943 ± 0.004771"
    assert (tmp_path / "nb" / "four.csv").read_text().splitlines()[-1] == "A,20.78,0.0849,0.05943,0.004771,2,77.7"
    index = write_table(pd.DataFrame({"fraction": [0.123456], "pairs": [1234567.0], "r1": [1.0]}), tmp_path, "nb", "ix", META)
    shown = compact(index, ["fraction", "pairs"], ("r1",)).data      # index floats as the CSV holds them, too
    assert (shown.fraction[0], shown.pairs[0]) == ("0.1235", "1234567")


def test_compact_shows_a_columns_means_and_stds_at_one_precision(tmp_path):
    """Written at 2 decimals, a std of 2.0004 is "2" in the CSV and a mean of 152.01 is "152" (4 figures): beside
    1.79 and 140.8 a reader could not tell their places, so they read 2.00 and 152.0; a count stays whole, and the
    paper's 65.0 (TERAN's R@1) beside its 57.5 reads as the paper prints it."""
    t = pd.DataFrame({"method": ["A", "B", "C"], "rsum": [152.01, 140.84, 0.04035], "rsum_std": [1.794, 2.0004, 0.4],
                      "n": [5000.0, 46228.0, 3.0], "n_std": [1.0, 2.0, 3.0], "paper_rsum": [65.0, 57.5, np.nan]})
    written = write_table(t, tmp_path, "nb", "places", META, decimals=2)
    assert (tmp_path / "nb" / "places.csv").read_text().splitlines()[-3:] == ["A,152,1.79,5000,1,65", "B,140.8,2,46228,2,57.5",
                                                                              "C,0.04,0.4,3,3,"]
    shown = compact(written, ["method"], ("rsum", "n"), paper={"rsum": "paper_rsum"}).data
    assert list(shown.rsum) == ["152.0 ± 1.79", "140.8 ± 2.00", "0.04 ± 0.40"]
    assert list(shown["paper rsum"]) == ["65.0", "57.5", ""]    # the paper's places: its 65.0 beside 57.5
    assert list(shown.n) == ["5000 ± 1", "46228 ± 2", "3 ± 3"]



def test_a_notebook_shows_its_frames_at_the_precision_their_csv_carries(tmp_path):
    from itmlib.course.results import start_run

    t = pd.DataFrame({"r": [0.040351234, 0.5, 46228.0, 18.8748], "pairs": [1, 2, 3, 4]})
    with pd.option_context("display.float_format", None):
        assert "0.040351" in t.to_html()                                      # pandas' six decimals
        start_run("04_sam", dataset="synthetic", results_dir=str(tmp_path))
        html = t.to_html()
    for shown in (">0.04035<", ">0.5<", ">46228<", ">18.87<"):
        assert shown in html
    assert "0.040351" not in html and "0.500000" not in html and "e+04" not in html


def test_a_styled_table_shows_floats_as_a_notebook_frame_does():
    from itmlib.course.results import styled

    html = styled(pd.DataFrame({"method": ["VSE++ (ours)"], "rsum": [45.7], "q": [float("nan")], "n": [3]})).to_html()
    assert ">45.7<" in html and ">-<" in html and ">3<" in html and "45.700000" not in html
    # a float in a column of mixed values (a transposed table) is shown so too
    html = styled(pd.DataFrame({"quantity": ["rsum", "method"], "value": [194.3, "VSE++"]})).to_html()
    assert ">194.3<" in html and "194.300000" not in html and ">VSE++<" in html


def test_a_styled_table_aligns_its_columns_of_words_left_and_its_numbers_right():
    import re

    from itmlib.course.results import styled, text_columns

    t = pd.DataFrame({"claim": ["SAM beats VSE++", "soft beats hard"], "ours": ["151 vs 139", "123 vs 129 (0.96x)"],
                      "seeds": [3, 5], "rsum": ["70.08 ± 2.00", "-"], "q": ["<0.001", "0.065"], "share": ["35%", "1,024"],
                      "verdict": ["holds (n=3)", None], "note": ["", float("nan")], "best epochs": ["7 7 6", "9 8"],
                      "setting": ["F30K", "F-10%"]})
    assert text_columns(t) == [0, 6, 9]    # numbers with their "vs", "±", "x", "%", "<", "," and gaps read as numbers
    html = styled(t).to_html()
    left = sorted(map(int, re.findall(r"\.col(\d+) \{\s*text-align: left;", html)))
    assert left == [0, 6, 9]
    assert 'class="col_heading level0 col0"' in html and 'class="data row0 col0"' in html   # heading and cells alike
    assert text_columns(pd.DataFrame({"quantity": ["rsum", "n", "method"], "value": [194.3, 3.0, "VSE++"]})) == [0]
    cells = pd.DataFrame({"vector": [np.zeros(3), np.ones(3)], "n": pd.array([1, None], dtype="Int64"),
                          "tag": pd.array(["a b", pd.NA], dtype="string")})
    assert text_columns(cells) == [2]      # an array cell or pd.NA is no error (v == "" would be)


def test_a_bare_frame_in_a_kernel_is_drawn_as_a_styled_table(monkeypatch):
    """A frame a cell shows bare loses its row numbers and reads as styled() draws it; a pivot keeps its index."""
    import types

    from IPython.core.formatters import HTMLFormatter

    from itmlib.course.results import show_frames_styled

    html = HTMLFormatter()
    shell = types.SimpleNamespace(display_formatter=types.SimpleNamespace(formatters={"text/html": html}))
    monkeypatch.setattr("IPython.get_ipython", lambda: shell)
    show_frames_styled()
    bare = pd.DataFrame({"split": ["train", "test"], "images": [58000, 5000], "share": [0.92063, float("nan")]})
    out = html(bare.iloc[[1, 0]])               # a filtered frame: integer row labels 1, 0
    assert "text-align: left" in out and ">train<" in out and ">0.9206<" in out and ">-<" in out
    assert "<th" in out and ">1<" not in out and 'class="dataframe"' not in out   # no row-number column
    pivot = pd.DataFrame({"m": [1, 2], "SR@5": [0.5, 0.4]}).set_index("m")
    assert 'class="dataframe"' in html(pivot) and "text-align: left" not in html(pivot)   # pandas' own, index kept


def test_a_styled_table_shows_each_float_column_at_one_precision(tmp_path):
    """A dev R@1 of 43.0 written at 2 decimals is "43" in the CSV; beside 40.2 (40.20) a reader cannot tell its
    places, so it reads 43.00, as compact's columns do. A count column stays whole, a paper column keeps the places
    the paper printed, a table written at 4 significant figures shows a zero as 0 (not at 0.002605's six places),
    and a table whose rows are its quantities shows each value at its own figures."""
    import re

    from itmlib.course.results import styled

    def cells(style):
        return [re.sub("<.*?>", "", c) for c in re.findall(r"<td[^>]*>.*?</td>", style.to_html())]

    t = pd.DataFrame({"noise": [0.25, 0.5], "i2t_r1": [43.0, 40.2], "t2i_r1": [36.2, 33.2667], "seeds": [5.0, 3.0],
                      "rsum": [399.54, 380.0], "paper_r1": [65.0, 57.5]})
    written = write_table(t, tmp_path, "nb", "cal", META, decimals=2)
    assert (tmp_path / "nb" / "cal.csv").read_text().splitlines()[-2:] == ["0.25,43,36.2,5,399.5,65", "0.5,40.2,33.27,3,380,57.5"]
    assert cells(styled(written.drop(columns="noise"))) == ["43.00", "36.20", "5", "399.5", "65.0",
                                                             "40.20", "33.27", "3", "380.0", "57.5"]
    assert cells(styled(written.head(1)[["t2i_r1"]])) == ["36.20"]           # the places come with the frame
    four = write_table(pd.DataFrame({"pearson": [0.0, 0.033112, 0.0026051], "auc": [0.5, 0.52531, 0.50134]}),
                       tmp_path, "nb", "sig", META)
    assert cells(styled(four)) == ["0", "0.5000", "0.03311", "0.5253", "0.002605", "0.5013"]
    stats = pd.DataFrame({"statistic": ["captions", "mean", "median", "share"], "ours": [5000.0, 18.8748, 1.0, 0.51263]})
    assert cells(styled(stats)) == ["captions", "5000", "mean", "18.87", "median", "1", "share", "0.5126"]   # by its header
    assert cells(styled(stats.rename(columns={"statistic": "s"}))) == ["captions", "5000", "mean", "18.87", "median", "1.000",
                                                                        "share", "0.5126"]
    assert cells(styled(stats.rename(columns={"statistic": "s"}), by_row=True))[5] == "1"
    grid = write_table(pd.DataFrame({"fraction": [0.02, 1.0], "noise": [0.25, 0.5], "rsum": [12.5, 30.25]}), tmp_path, "nb", "g",
                       META, decimals=2)
    assert cells(styled(grid)) == ["0.02", "0.25", "12.50", "1", "0.5", "30.25"]   # settings as given, never 1.00 or 0.50


def test_no_committed_table_rounds_a_learning_rate_to_zero():
    """A recipe column keeps its value: ``.round(2)`` before :func:`write_table` (which keeps 4 significant
    figures) once wrote 07's probed lr 1e-4 as 0."""
    import glob

    from itmlib.paths import repo_root

    zero = []
    for path in sorted(glob.glob(str(repo_root() / "results" / "*" / "*.csv"))):
        t = pd.read_csv(path, comment="#")
        zero += [f"{path}: {c}" for c in t.columns if c in ("lr", "learning rate")
                 and (pd.to_numeric(t[c], errors="coerce") == 0).any()]
    assert not zero, zero
