"""What a reader sees of a summarised table: mean ± std, each seed's best epoch, and a paper column that
names the method whose number it shows."""

import pandas as pd

from itmlib.claims.verdicts import summarize
from itmlib.course.viz import compact


def test_compact_names_the_papers_method_and_shows_each_seeds_best_epoch():
    runs = pd.DataFrame({"method": ["A", "A", "B", "B"], "seed": [1, 0, 0, 1], "rsum": [10.0, 12.0, 20.0, 22.0],
                         "best_epoch": [7, 3, 15, 15]})
    t = summarize(runs, ["method"], ["rsum"])
    assert list(t["best epochs"]) == ["3 7", "15 15"]          # in seed order, whatever the rows' order
    t["paper_rsum (CVSE, F30K)"] = [471.6, 478.9]
    t["paper_rsum (SGR, F30K)"] = [488.4, 495.3]
    shown = compact(t, ["method"], ("rsum",), paper={"rsum": "paper_rsum (CVSE, F30K)"}).data
    assert list(shown.columns) == ["method", "rsum", "paper rsum (CVSE, F30K)", "seeds", "best epochs"]
    assert list(shown["paper rsum (CVSE, F30K)"]) == ["471.6", "478.9"] and shown.rsum[0] == "11.0 ± 1.41"


def test_a_table_is_shown_at_the_precision_its_csv_carries():
    from itmlib.course.viz import as_written

    t = pd.DataFrame({"metric": ["scene-graph F1"], "r": [0.040351234], "auc": [0.5], "pairs": [46228], "q": [float("nan")]})
    html = as_written(t).to_html()
    assert ">0.04035<" in html and ">0.5<" in html and ">46228<" in html and ">-<" in html
    assert "0.040351" not in html and "0.500000" not in html
