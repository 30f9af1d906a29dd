"""Notebook hygiene, and one headless papermill run per notebook at the smoke scale."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import papermill as pm
import pytest

from itmlib.notebooks import NOTEBOOKS, notebook_paths, run_notebook, scale_overrides
from itmlib.paths import repo_root
from itmlib.results import read_table

PATHS = notebook_paths()
COMMON = {"dataset": "str", "scale": "str", "seed": "int", "device": "str", "results_dir": "str"}


def test_every_notebook_is_a_course_notebook():
    found = sorted(p.stem for p in (repo_root() / "notebooks").glob("*.ipynb"))
    assert found and set(found) <= set(NOTEBOOKS), found
    assert "00_data_tour" in found


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_committed_without_outputs_one_parameters_cell_python3(path: Path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code)
    tagged = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1 and tagged[0]["cell_type"] == "code"


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_parameters_are_typed_and_documented(path: Path):
    import ast

    params = pm.inspect_notebook(str(path))
    nb = json.loads(path.read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))
    src = "".join(cell["source"])
    assigned = {n.target.id for n in ast.parse(src).body if isinstance(n, ast.AnnAssign)}
    assert assigned == set(params), f"papermill could not parse {sorted(assigned - set(params))} (no '=' in comments)"
    for name, typ in COMMON.items():
        assert name in params, f"{path.name} lacks parameter {name}"
        assert params[name]["inferred_type_name"] == typ
    for name, p in params.items():
        assert p["inferred_type_name"] != "None", f"{name} has no type hint"
        assert p["help"].strip(), f"{name} has no help comment"
    assert json.loads(params["results_dir"]["default"]) == "runs/results"


def test_smoke_overrides_parse():
    ov = scale_overrides("smoke")
    assert set(ov) <= set(NOTEBOOKS) | {"all"}


def _tables(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.csv"))}


@pytest.mark.notebook
@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebook_runs_headless_at_smoke_scale(path: Path, tmp_path: Path):
    params = {"scale": "smoke", "results_dir": str(tmp_path / "results"), **scale_overrides("smoke").get("all", {}),
              **scale_overrides("smoke").get(path.stem, {})}
    run_notebook(path, tmp_path / path.name, params)  # cwd: notebooks/, as a user in that folder
    out = tmp_path / "results" / path.stem
    tables = _tables(out)
    assert tables, f"{path.stem} wrote no tables"
    for name in tables:
        meta, df = read_table(out / name)
        assert meta["scale"] == "smoke" and meta["data"] and "paper" in meta
        assert any(c.startswith("paper") for c in df.columns), f"{name}: no paper column beside ours"
        assert (out / name).with_suffix(".md").is_file()
    executed = json.loads((tmp_path / path.name).read_text())
    assert any(c.get("outputs") for c in executed["cells"] if c["cell_type"] == "code")


@pytest.mark.notebook
def test_data_tour_same_seed_same_tables_from_either_cwd(tmp_path: Path):
    nb = repo_root() / "notebooks" / "00_data_tour.ipynb"
    a, b = tmp_path / "a", tmp_path / "b"
    run_notebook(nb, tmp_path / "a.ipynb", {"results_dir": str(a), "device": "cpu", "coco": False, "n_show": 1},
                 cwd=repo_root())
    run_notebook(nb, tmp_path / "b.ipynb", {"results_dir": str(b), "device": "cpu", "coco": False, "n_show": 1},
                 cwd=repo_root() / "notebooks")
    ta, tb = _tables(a / "00_data_tour"), _tables(b / "00_data_tour")
    assert ta and ta == tb


@pytest.mark.notebook
def test_sam_notebook_rejects_a_zero_fraction(tmp_path: Path):
    nb = repo_root() / "notebooks" / "05_sam_reduced_data.ipynb"
    with pytest.raises(pm.PapermillExecutionError, match="fraction"):
        run_notebook(nb, tmp_path / "out.ipynb", {"fractions": [0.0], "results_dir": str(tmp_path)})


@pytest.mark.notebook
def test_teran_notebook_rejects_an_unknown_pooling(tmp_path: Path):
    nb = repo_root() / "notebooks" / "08_teran.ipynb"
    with pytest.raises(pm.PapermillExecutionError, match="pooling"):
        run_notebook(nb, tmp_path / "out.ipynb", {"pooling": "maxmax", "results_dir": str(tmp_path)})


COMMITTED = sorted((repo_root() / "results").glob("*/*.csv"))


@pytest.mark.parametrize("path", COMMITTED, ids=[f"{p.parent.name}/{p.name}" for p in COMMITTED])
def test_committed_tables_state_their_scale_data_and_the_papers_number(path: Path):
    meta, df = read_table(path)
    assert path.parent.name in NOTEBOOKS, f"{path}: results folder is not a notebook's"
    assert meta["scale"] in {"smoke", "medium", "full"} and meta["data"] and "paper" in meta, path
    assert any(c.startswith("paper") for c in df.columns), f"{path}: no paper column beside ours"
    assert path.with_suffix(".md").is_file(), f"{path}: no Markdown twin"


def test_no_run_log_is_committed_under_results():
    """`make tables` leaves `results/<nb>/run.log` in the working tree: git must ignore it
    (checked on what git tracks, so `make tables` followed by `make test` still passes)."""
    root = repo_root()
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("not a git checkout")
    tracked = subprocess.run(["git", "ls-files", "--", "results"], cwd=root, check=True,
                             capture_output=True, text=True).stdout.split()
    assert tracked, "no committed tables under results/"
    assert not [t for t in tracked if t.endswith(".log")], "a run log is committed under results/"
    probe = subprocess.run(["git", "check-ignore", "-q", "results/04_sam/run.log"], cwd=root)
    assert probe.returncode == 0, ".gitignore does not ignore results/<notebook>/run.log"
