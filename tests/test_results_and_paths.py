from pathlib import Path

import pandas as pd
import pytest

import itmlib
from itmlib.paths import repo_root, resolve_path
from itmlib.course.results import read_table, start_run, table_number, write_table

META = {"data": "unit-test data", "dataset": "synthetic", "scale": "smoke", "seed": 0, "device": "cpu",
        "paper": "Biten et al., Table 1"}


def test_repo_root_is_the_checkout():
    root = repo_root()
    assert (root / "pyproject.toml").is_file() and (root / "itmlib" / "__init__.py").is_file()


def test_relative_paths_ignore_the_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert resolve_path("runs/results") == repo_root() / "runs" / "results"
    assert resolve_path(tmp_path / "x") == tmp_path / "x"


def test_write_table_header_roundtrip_and_identical_bytes(tmp_path):
    df = pd.DataFrame({"metric": ["R@1", "R@5"], "ours": [12.3456789, 50.0], "paper": [13.0, 16.2]})
    written = write_table(df, tmp_path, "01_x", "t", META)
    csv1, md1 = tmp_path / "01_x" / "t.csv", tmp_path / "01_x" / "t.md"
    meta, back = read_table(csv1)
    assert meta["table"] == "01_x/t" and meta["scale"] == "smoke" and meta["seed"] == "0"
    # what it returns is the table as its CSV holds it, named; read back, it is the same frame
    assert written["ours"].tolist() == [12.35, 50.0] and df["ours"][0] == 12.3456789
    assert written.attrs["table"] == back.attrs["table"] == "01_x/t" and written.equals(back)
    assert meta["itmlib"] == itmlib.__version__ and meta["paper"] == "Biten et al., Table 1"
    assert list(back.columns) == ["metric", "ours", "paper"]
    assert back["ours"].tolist() == [12.35, 50.0]  # %.4g
    first = csv1.read_bytes()
    write_table(df, tmp_path, "01_x", "t", META)
    assert csv1.read_bytes() == first  # no clock or host in the header
    md = md1.read_text()
    assert "> dataset: synthetic" in md and "| metric" in md
    assert not [p for p in (tmp_path / "01_x").iterdir() if p.name.startswith(".")]  # no temp files left


def test_write_table_writes_a_count_past_10000_in_full_and_leaves_other_columns_as_they_were(tmp_path):
    df = pd.DataFrame({"property": ["images", "captions", "objects"], "train": [8000.0, 24000.0, 3.4461],
                       "test": [1000.0, 46228.0, float("nan")], "share": [0.12345, 3.0, 24.671]})
    write_table(df, tmp_path, "nb", "t", META)
    csv, md = tmp_path / "nb" / "t.csv", tmp_path / "nb" / "t.md"
    assert csv.read_text().splitlines()[-3:] == ["images,8000,1000,0.1235", "captions,24000,46228,3",
                                                 "objects,3.446,,24.67"]          # not 2.4e+04 / 4.623e+04
    body = md.read_text().split("\n\n", 1)[1]
    assert "e+0" not in body and "| captions   |   24000 |  46228 |  3      |" in body      # right-aligned in full
    assert "| objects    |   3.446 |      - | 24.67   |" in body        # a column with no big count: decimal-aligned
    plain = pd.DataFrame({"x": ["a"], "v": [3.4461]})
    write_table(plain, tmp_path, "nb", "p", META)
    assert (tmp_path / "nb" / "p.md").read_text().endswith(plain.to_markdown(index=False, floatfmt=".4g") + "\n")


def test_write_table_writes_a_gap_as_a_dash_in_markdown_and_leaves_it_empty_in_the_csv(tmp_path):
    # tabulate writes a NaN as "nan"; a reader of the Markdown table sees the "-" a notebook shows (styled)
    df = pd.DataFrame({"model": ["floor", "VSE++"], "fraction": [float("nan"), 0.25], "paper": [float("nan")] * 2,
                       "note": [None, "x"], "seeds": [0, 5]})
    write_table(df, tmp_path, "nb", "g", META)
    assert (tmp_path / "nb" / "g.csv").read_text().splitlines()[-2:] == ["floor,,,,0", "VSE++,0.25,,x,5"]
    body = (tmp_path / "nb" / "g.md").read_text().split("\n\n", 1)[1].splitlines()
    assert body[1:] == ["|:--------|-----------:|--------:|:-------|--------:|",   # a column of gaps alone stays right-aligned
                        "| floor   |       -    |       - | -      |       0 |",
                        "| VSE++   |       0.25 |       - | x      |       5 |"]
    assert "nan" not in "".join(body)


@pytest.mark.parametrize("v, decimals, shown", [(194.2533, 2, 194.3), (194.25, 2, 194.2), (0.12345, 2, 0.12),
                                                (0.0999, 2, 0.1), (12.3456, 3, 12.35), (24000.4, 2, 24000.0),
                                                (-0.123456, 3, -0.123), (1.2e-05, 2, 0.0)])
def test_table_number_rounds_once_to_the_fewer_of_the_places_and_four_figures(v, decimals, shown):
    assert table_number(v, decimals) == shown
    assert table_number(float("nan"), 2) != table_number(float("nan"), 2)     # NaN stays NaN


def test_write_table_with_decimals_rounds_once_where_a_rounded_frame_rounded_twice(tmp_path):
    # TERN's two-seed mean Rsum, 194.2533: df.round(2) made it 194.25, which %.4g prints 194.2, one below the
    # 194.3 a notebook shows from the unrounded value; decimals rounds the value itself
    df = pd.DataFrame({"method": ["TERN"], "rsum": [194.2533], "grounding": [0.123456]})
    write_table(df.round(2), tmp_path, "nb", "twice", META)
    shown = write_table(df, tmp_path, "nb", "once", META, decimals=2)
    twice, once, md = (tmp_path / "nb" / f for f in ("twice.csv", "once.csv", "once.md"))
    assert twice.read_text().splitlines()[-1] == "TERN,194.2,0.12"
    assert once.read_text().splitlines()[-1] == "TERN,194.3,0.12"
    assert "| TERN     |  194.3 |        0.12 |" in md.read_text()
    assert df.rsum.tolist() == [194.2533]          # the caller's frame is left as it was
    assert shown.rsum.tolist() == [194.3] and shown.grounding.tolist() == [0.12]   # what a notebook then shows


def test_write_table_rejects_bad_input(tmp_path):
    df = pd.DataFrame({"a": [1]})
    with pytest.raises(ValueError, match="missing"):
        write_table(df, tmp_path, "nb", "t", {"data": "x"})
    with pytest.raises(ValueError, match="table must be a plain file name"):
        write_table(df, tmp_path, "nb", "../evil", META)
    with pytest.raises(ValueError, match="non-empty"):
        write_table(pd.DataFrame(), tmp_path, "nb", "t", META)
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="decimals must be a whole number"):
            write_table(pd.DataFrame({"a": [0.5]}), tmp_path, "nb", "t", META, decimals=bad)


def test_start_run_resolves_against_repo_root_and_logs(tmp_path, monkeypatch):
    monkeypatch.setenv("ITM_COURSE_ROOT", str(tmp_path))
    monkeypatch.chdir(Path(__file__).parent)
    run = start_run("00_test", dataset="synthetic", scale="smoke", seed=3, device="cpu", results_dir="out/res")
    assert run.table_dir == tmp_path / "out" / "res" / "00_test"
    run.write_table("t", pd.DataFrame({"a": [1]}), data="d", paper="p", dataset="coco")
    meta, _ = read_table(run.table_dir / "t.csv")
    assert meta["dataset"] == "coco" and meta["seed"] == "3"
    assert "run 00_test" in (run.table_dir / "run.log").read_text()
    # what a reader sees names the repository's folder, never this machine's path
    assert run.describe() == "00_test: scale smoke, seed 3, device cpu; tables go to out/res/00_test/"
    outside = start_run("00_test", scale="smoke", device="cpu", results_dir=tmp_path.parent / "elsewhere")
    assert outside.describe().endswith(f"tables go to {tmp_path.parent / 'elsewhere' / '00_test'}/")


@pytest.mark.parametrize("kw,match", [({"dataset": "flickr"}, "dataset"), ({"scale": "huge"}, "scale"),
                                      ({"seed": -2}, "seed"), ({"device": "gpu"}, "device")])
def test_start_run_rejects_bad_parameters(tmp_path, kw, match):
    args = dict(dataset="synthetic", scale="smoke", seed=0, device="cpu", results_dir=str(tmp_path))
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        start_run("nb", **args)


def test_retraining_changes_reads_the_committed_before_table_at_the_runs_scale_only(tmp_path, monkeypatch):
    from itmlib.course import findings
    from itmlib.course.results import start_run

    row = lambda v: {"id": "c", "claim": "x beats y", "metric": "rsum", "ours (model vs baseline)": "2 vs 1",   # noqa: E731
                     "verdict": v}
    before = pd.DataFrame([row("not judged (still rising)")])
    after = pd.DataFrame([row("holds (n=5, 95% CI [0.5, 1.5])")])
    run = start_run("08_teran", scale="medium", device="cpu", results_dir=tmp_path)
    monkeypatch.setattr(findings, "committed_table", lambda nb, t: None)
    assert findings.retraining_changes(run, after) is None                      # nothing committed: no table
    monkeypatch.setattr(findings, "committed_table", lambda nb, t: ({"scale": "smoke", "data": "d"}, before))
    assert findings.retraining_changes(run, after) is None                      # another scale's verdicts: not compared
    monkeypatch.setattr(findings, "committed_table", lambda nb, t: ({"scale": "medium", "data": "4 epochs"}, before))
    t = findings.retraining_changes(run, after)
    assert t.moved.tolist() == [True] and t["verdict before"].iloc[0] == "not judged (still rising)"
    meta, written = read_table(tmp_path / "08_teran" / "verdict_changes.csv")
    assert meta["data"].startswith("before: 4 epochs") and written["verdict after"].iloc[0].startswith("holds")
