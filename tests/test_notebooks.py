"""Notebook hygiene, and one headless papermill run per notebook at the smoke scale."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import papermill as pm
import pytest

from itmlib.course.notebooks import NOTEBOOKS, notebook_paths, run_notebook, scale_overrides
from itmlib.paths import repo_root
from itmlib.course.results import read_table

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


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_tables_are_written_unrounded_and_rounded_once_by_write_table(path: Path):
    """A frame rounded before ``write_table`` is rounded twice (194.2533 -> 194.25 -> "194.2", beside a notebook's
    194.3): a table's places go to ``write_table(..., decimals=k)``, which rounds each value once."""
    import ast

    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in (c for c in nb["cells"] if c["cell_type"] == "code"):
        for node in ast.walk(ast.parse("".join(cell["source"]))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "write_table" and len(node.args) > 1:
                rounded = [n for n in ast.walk(node.args[1]) if isinstance(n, ast.Attribute) and n.attr == "round"]
                assert not rounded, f"{path.name}: {ast.unparse(node.args[1])} is rounded before write_table"


def test_smoke_overrides_parse():
    ov = scale_overrides("smoke")
    assert set(ov) <= set(NOTEBOOKS) | {"all"}


def _tables(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.csv"))}


#: seconds one cell may run at the smoke scale: ~2x the longest whole notebook (08, ~230 s in a fresh clone)
CELL_TIMEOUT = 480


#: the notebook the README's papermill command runs: its smoke test runs that command (papermill's own CLI, from
#: notebooks/, none of our environment variables), with the test's results folder as its one parameter
README_NOTEBOOK = "05_sam_reduced_data"


#: what jupyter_client raises when a kernel never answers at its start: in three fresh-clone CIs on the 2-core
#: machine under ``pytest -n 2`` one notebook's kernel did not (once its TCP port was taken between the two
#: workers' kernels, twice with nothing printed) - the machine's failure, not the notebook's: no cell had run
KERNEL_START_MESSAGES = "Kernel didn't respond|Kernel died before replying"
KERNEL_START_FAILURE = re.compile(rf"^(?:{KERNEL_START_MESSAGES})")


def _readme_command(path: Path, out: Path, params: dict, cell_timeout: int = CELL_TIMEOUT) -> None:
    readme = (repo_root() / "README.md").read_text()
    assert f"papermill {path.name} out.ipynb" in readme, "the README shows this command"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ITM_", "TQDM_", "HF_HUB_DISABLE"))}
    papermill = Path(sys.executable).with_name("papermill")
    done = subprocess.run([str(papermill), path.name, str(out), "-y", json.dumps(params)], cwd=path.parent, env=env,
                          capture_output=True, text=True, timeout=2 * cell_timeout)
    start = re.search(rf"RuntimeError: ((?:{KERNEL_START_MESSAGES}).*)", done.stderr)
    if done.returncode and start:
        raise RuntimeError(start.group(1))   # its kernel did not start: _run_hang_guarded runs it again once
    assert done.returncode == 0, done.stderr[-2000:]


def _run_hang_guarded(path: Path, out: Path, params: dict, run: Any = None) -> None:
    """Run a notebook; a cell that hangs past :data:`CELL_TIMEOUT` (a kernel that stopped answering: once, 08
    sat in one cell for the whole 20-minute test limit in CI, where it takes ~4 minutes) or a kernel that never
    answers at its start (:data:`KERNEL_START_FAILURE`) is reported as a warning naming it and the notebook runs
    once more from a fresh kernel; a second failure fails, and so does any error a cell raised."""
    run = run or (_readme_command if path.stem == README_NOTEBOOK else run_notebook)
    try:
        run(path, out, params, cell_timeout=CELL_TIMEOUT)
    except (TimeoutError, RuntimeError) as e:
        if not isinstance(e, TimeoutError) and not KERNEL_START_FAILURE.search(str(e)):
            raise
        what = f"a cell ran past {CELL_TIMEOUT} s" if isinstance(e, TimeoutError) else "its kernel did not start"
        warnings.warn(f"{path.stem}: {what}, run again once: {e}", stacklevel=2)
        run(path, out, params, cell_timeout=CELL_TIMEOUT)


def test_a_kernel_that_never_answers_at_start_is_run_again_once_and_a_cells_error_is_not(tmp_path: Path):
    calls = []

    def flaky(*errors):
        def run(*args, **kwargs):
            calls.append(args[0].stem)
            if len(calls) <= len(errors):
                raise errors[len(calls) - 1]
        return run
    nb = Path("03_vse_baseline.ipynb")
    with pytest.warns(UserWarning, match="03_vse_baseline: its kernel did not start, run again once"):
        _run_hang_guarded(nb, tmp_path / "out.ipynb", {}, flaky(RuntimeError("Kernel didn't respond in 60 seconds")))
    assert calls == ["03_vse_baseline"] * 2
    calls.clear()
    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="didn't respond"):   # twice: the test fails
        _run_hang_guarded(nb, tmp_path / "out.ipynb", {}, flaky(*[RuntimeError("Kernel didn't respond in 60 seconds")] * 2))
    calls.clear()
    with pytest.raises(RuntimeError, match="a cell's own"):   # a cell's RuntimeError is the notebook's: not run again
        _run_hang_guarded(nb, tmp_path / "out.ipynb", {}, flaky(RuntimeError("a cell's own error")))
    assert calls == ["03_vse_baseline"]


def test_the_readme_command_reports_a_kernel_that_never_started_and_fails_on_any_other_error(tmp_path: Path, monkeypatch):
    done = {}
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a[0], done["rc"], "", done["err"]))
    nb = repo_root() / "notebooks" / f"{README_NOTEBOOK}.ipynb"
    done.update(rc=1, err="Traceback (most recent call last):\n...\nRuntimeError: Kernel died before replying to kernel_info\n")
    with pytest.raises(RuntimeError, match="^Kernel died before replying to kernel_info$") as e:
        _readme_command(nb, tmp_path / "out.ipynb", {})
    assert KERNEL_START_FAILURE.search(str(e.value))   # so _run_hang_guarded runs it again once
    done.update(rc=1, err="papermill.exceptions.PapermillExecutionError: ValueError: a cell's own error\n")
    with pytest.raises(AssertionError, match="a cell's own error"):
        _readme_command(nb, tmp_path / "out.ipynb", {})
    done.update(rc=0, err="RuntimeError: Kernel didn't respond in 60 seconds\n")   # printed, but the run succeeded
    _readme_command(nb, tmp_path / "out.ipynb", {})


def test_a_cell_past_its_timeout_raises_naming_the_cell(tmp_path: Path):
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1"),
                                         nbformat.v4.new_code_cell("import time\ntime.sleep(60)")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    src = tmp_path / "sleeps.ipynb"
    nbformat.write(nb, str(src))
    with pytest.raises(TimeoutError, match="time.sleep"):
        run_notebook(src, tmp_path / "out.ipynb", cell_timeout=3)


#: notebooks run a second time from the repo root (cheap ones: the data tour reads every world a notebook builds)
FROM_EITHER_CWD = {"00_data_tour"}


@pytest.mark.notebook
@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebook_runs_headless_at_smoke_scale(path: Path, tmp_path: Path):
    params = {"scale": "smoke", "results_dir": str(tmp_path / "results"), **scale_overrides("smoke").get("all", {}),
              **scale_overrides("smoke").get(path.stem, {})}
    _run_hang_guarded(path, tmp_path / path.name, params)  # cwd: notebooks/, as a user in that folder
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
    assert_headless(executed)   # papermill's kernel, no environment variable set: no widget, no bar
    SMOKE_CHECKS[path.stem](lambda t: read_table(out / f"{t}.csv")[1])
    if path.stem in FROM_EITHER_CWD:   # the same seed from the repo root writes the same bytes
        again = tmp_path / "from_root"
        run_notebook(path, tmp_path / f"root_{path.name}", {**params, "results_dir": str(again)}, cwd=repo_root())
        assert _tables(again / path.stem) == tables


def assert_headless(executed: dict) -> None:
    """An executed notebook as papermill wrote it (not cleaned) holds no widget view, no widget state and no
    progress-bar text: a headless kernel shows none by itself (itmlib.console.interactive)."""
    assert "widgets" not in executed["metadata"], "widget state saved"
    outs = [o for c in executed["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
    assert not [o for o in outs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})], "a widget output"
    text = json.dumps([(o.get("text", ""), o.get("data", {}).get("text/plain", "")) for o in outs])
    assert not re.search(r"\d+%\|.*?\| *\d+/\d+ \[", text), "progress-bar text saved"


# Chance Rsum on the 200-image smoke test (1,000 captions): i2t R@1/5/10 about 0.5/2.5/4.9,
# t2i 0.5/2.5/5.0 - about 16 in all. A trained model must beat it by a wide margin.
CHANCE_RSUM = 16.0


def _check_00(t):
    m = t("synthetic_many_to_many").set_index("statistic").ours.astype(float)
    assert m["share of captions fully describing >= 1 other image"] > 0.2   # the many-to-many premise


def _check_01(t):
    claims = t("claims")
    assert len(claims) == 5 and claims.verdict.str.startswith("holds").all(), claims.verdict
    fig1 = t("figure1_thought_experiment").set_index("method")
    assert (fig1["i2t R^V@5"] == 100).all()                                # a perfect R^V ranking is 100
    assert fig1.filter(like="B:", axis=0)["i2t NCS@5 (paper eq. 5)"].iloc[0] > 99


def _check_02(t):
    claims = t("claims")
    assert len(claims) == 12 and not claims.verdict.str.startswith("not run").any(), claims.verdict
    t1 = t("table1_human_agreement_coco")
    matched = t1[t1.negatives == "matched"].set_index("metric")
    assert (matched.loc["Binary relevance (GT)", "auc"] == 0.5).all()
    assert matched.filter(like="picks the negatives", axis=0).auc.between(0.4, 0.6).all()   # ~0.5 by construction
    graded = t("table1_human_agreement_synthetic").set_index("metric")
    assert graded.loc["gold relevance (upper bound)", "pearson_non_gt"] > graded.loc["CIDEr-D", "pearson_non_gt"]
    fig3 = t("figure3_recall_vs_semantic_recall")
    trained = fig3[fig3.retriever != "random"]
    assert set(trained.retriever) == {"VSE++ (03)", "TERAN MrSw (08)"}
    assert trained["SR@5"].min() > 2 * fig3[fig3.retriever == "random"]["SR@5"].max()   # trained models beat chance (ties lift it)


def _check_03(t):
    assert t("baseline").rsum.iloc[0] > 10 * CHANCE_RSUM


def _check_04(t):
    t45 = t("tables4_5_ablation")
    assert t45[t45.sampling == "VSE++ baseline"].rsum.iloc[0] > 10 * CHANCE_RSUM
    claims = t("claims").set_index("id")
    assert len(claims) == 14
    assert not claims.loc["sam_beats_shuffled_nsum", "verdict"].startswith("not run")   # the control arms ran
    assert claims.loc["sam_soft_beats_random_ref", "verdict"].startswith("not run")     # no reference mode at smoke


def _check_05(t):
    table = t("table2_reduced_data")
    assert (table[table.method == "VSE++"].rsum > 5 * CHANCE_RSUM).all(), table.rsum
    choice = t("fraction_choice").set_index("setting")
    assert choice.loc["F-10%", "fraction"] < choice.loc["F-25%", "fraction"]   # the scarcer setting, the smaller fraction
    claims = t("claims").set_index("id")
    assert len(claims) == 18
    assert not claims.loc["sam_scarce_rsum_10_warmup_vs_shuffled", "verdict"].startswith("not run")   # warm-up recipe, the default


def _check_08(t):
    table = t("table1_4_teran").set_index("method")
    assert table.loc["TERAN mrsw", "rsum"] > 5 * CHANCE_RSUM
    assert table.loc["TERAN mrsw", "grounding"] > 3 * table.loc["TERAN mrsw", "grounding_chance"]
    assert 0 < table.loc["TERAN mrsw", "t2i_ndcg_rouge"] <= 100                    # NDCG in percent
    assert len(t("claims")) == 13   # every claim of claims_teran.yaml; the medium-only ones say "not run"


def _check_06(t):
    t3 = t("table3_ablation").set_index("method")
    assert (t3.rsum > 5 * CHANCE_RSUM).all(), t3.rsum                       # every arm trains
    claims = t("claims").set_index("id")
    assert len(claims) == 12
    assert not claims.loc["ssamt_pm_helps", "verdict"].startswith("not run")   # a base fraction below 1 (ci/smoke.yaml)
    assert not claims.loc["ssamt_false_phrase_found", "verdict"].startswith("not run")
    assert claims.loc["ssamt_pm_phrase_score_i2t", "metric"] == "thr_phrase_i2t"   # judged as a per-pair classifier
    acc = t("table4_mismatch").set_index("method")
    assert (acc.acc_global_i2t > 60).all(), acc.acc_global_i2t               # chance: 50 (64-67 at base fraction 0.5)
    assert (acc.acc_global_t2i > 58).all(), acc.acc_global_t2i               # chance: 50 (64.5-66.5 at base fraction 0.5)
    assert (acc.thr_global_i2t > 55).all(), acc.thr_global_i2t                 # a per-pair classifier beats chance (50)
    curve = t("rerank_depth").set_index("k")
    assert curve.ms_per_query[10] > curve.ms_per_query[0]                     # re-scoring costs time


def _check_07(t):
    t1 = t("table1_nonliteral").set_index("method")
    assert (t1.i2t_acc5 > 24).all() and (t1.t2i_acc5 > 24).all(), t1                # chance: 20 (5-way)
    lit = t("table1_literal").set_index("method")
    assert (lit.i2t_acc100 > 2).all(), lit                                          # chance: 1 (100-way)
    purity = t("doc2vec_topic_purity").set_index("space")
    assert (purity.same_topic > purity.chance).all() and "image: mean region feature" in purity.index
    ch = t("text_image_channels")
    sym = ch[ch.world.str.startswith("v3") & (ch.channel == "symbol words")].iloc[0]
    assert abs(sym.own_image - sym.same_topic_image) < 8                          # v3: no literal symbol channel
    assert {"nd_img", "nd_txt"} <= set(t("table3_preservation").columns)
    coco = t("coco_caption_neighbours")
    assert (coco.recall > 5 * coco.chance).all()                                  # real text: far above chance
    assert len(t("claims")) == 20


def _check_11(t):
    from itmlib.claims import CLAIM_FILES, load_claims, replayed_claims

    table = t("all_claims")
    every = [*(c for p in CLAIM_FILES for c in load_claims(p)), *replayed_claims(own=False)]
    real = {c.notebook for c in replayed_claims(own=False)}   # the real-language claims count once committed
    every = [c for c in every if c.notebook not in real or (repo_root() / "results" / c.notebook / "claims.csv").is_file()]
    assert len(table) == len(every)                                                # a row for every claim
    committed = repo_root() / "results"
    for f in committed.glob("*/claims.csv"):                                       # ... and every committed verdict
        _, df = read_table(f)
        mine = table[table.notebook == f.parent.name]
        for _, row in df.iterrows():
            key = "id" if "id" in df.columns and isinstance(row.get("id"), str) else "claim"
            if (mine[key] == row[key]).any():
                got = mine[mine[key] == row[key]]
                # an illustration is never judged, whatever a table written before claims had kinds says
                want = "not judged (an illustration)" if got.kind.iloc[0] == "illustration" else row.verdict
                assert got.verdict.iloc[0] == want


def _check_10(t):
    claims = t("claims")
    assert len(claims) == 12 and not claims.verdict.str.startswith("not run").any(), claims.verdict
    world = t("world").set_index("property")
    assert float(world.loc["grounded object words per caption", "test"]) > 0.5   # words know their regions
    sam = t("sam")
    # scenes built from other annotators' captions: one smoke epoch reaches Rsum ~56 (chance ~16)
    assert (sam[(sam.method == "VSE++") & (sam.fraction == 1.0)].rsum > 2.5 * CHANCE_RSUM).all(), sam.rsum
    floor = t("lexical_floor")
    assert floor.rsum.iloc[0] > 2.5 * CHANCE_RSUM and floor.model.iloc[0].startswith("lexical floor")
    # each summary shows the paper's number of the method it stands for (TERAN Table 1; SAM's CVSE at F-10%)
    teran = t("teran").set_index("method")
    assert (teran.loc["TERAN mrsw", "paper t2i_r1"], teran.loc["TERN (global)", "paper i2t_r1"]) == (65.0, 63.7)
    scarce = sam[sam.setting == "F-10%"].set_index("method")["paper_rsum (CVSE, F30K)"]
    assert (scarce["VSE++"], scarce["VSE++ + SAM"]) == (138.7, 303.2)
    assert math.isnan(scarce["VSE++ + SAM shuffled"])   # our control: the paper has no such row


SMOKE_CHECKS = {"00_data_tour": _check_00, "01_recall_metrics": _check_01, "02_semantic_metrics": _check_02,
                "03_vse_baseline": _check_03, "04_sam": _check_04, "05_sam_reduced_data": _check_05,
                "06_phrase_labels": _check_06, "07_semantic_neighborhoods": _check_07, "08_teran": _check_08,
                "10_results": _check_11, "09_real_language": _check_10}


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


# --- claims as data, "What we found", parameters ------------------------------------------------

def _code_cells(path: Path) -> list[str]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def _paper_numbers() -> set[float]:
    import csv
    from importlib import resources

    out = set()
    for f in resources.files("itmlib.paper_numbers").iterdir():
        if f.name.endswith(".csv"):
            for row in csv.reader(f.read_text(encoding="utf-8").splitlines()[1:]):
                for cell in row:
                    try:
                        out.add(float(cell))
                    except ValueError:
                        pass
    return out


def _looks_like_a_reported_number(literal: str) -> bool:
    """A decimal literal with 3+ significant digits or 2+ decimals (65.0, 57.5, 0.734, 0.12): how the
    papers print results. Integers (sizes, seeds) and plotting sizes such as 3.2 are not."""
    if "." not in literal or "j" in literal.lower() or "e" in literal.lower():
        return False
    whole, frac = literal.replace("_", "").split(".")
    digits = (whole + frac).lstrip("0")
    return len(digits) >= 3 or len(frac) >= 2


#: knob values that also occur in the paper tables (tau 3/5/10, fractions, the 0.2 margin, seeds, counts)
KNOBS = {0.0, 0.05, 0.1, 0.2, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0}


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_no_code_cell_types_a_paper_number_or_a_claim(path: Path):
    """Paper numbers live in itmlib/paper_numbers/*.csv and claims in claims_*.yaml: a notebook reads them."""
    import io
    import re
    import tokenize

    from itmlib.claims import CLAIM_FILES, load_claims

    numbers = _paper_numbers() - KNOBS
    claim_texts = {c.claim for p in CLAIM_FILES for c in load_claims(p)}
    for src in _code_cells(path):
        for tok in tokenize.generate_tokens(io.StringIO(src).readline):
            if tok.type == tokenize.NUMBER and _looks_like_a_reported_number(tok.string):
                value = float(tok.string.replace("_", ""))
                assert value not in numbers, f"{path.name}: code types the paper number {tok.string} (line {tok.line.strip()!r})"
            if tok.type == tokenize.STRING:
                assert not re.search(r"\d+\.\d+\s*(/\s*\d+\.\d+)?\s+vs\.?\s+\d", tok.string), \
                    f"{path.name}: a 'paper vs paper' number string in code: {tok.string[:80]}"
                assert not any(t in tok.string for t in claim_texts), f"{path.name}: a claim typed in code: {tok.string[:80]}"


def test_the_number_check_would_catch_a_typed_paper_number():
    numbers = _paper_numbers()
    assert {65.0, 57.5, 0.734, 303.2, 0.12} <= numbers      # TERAN, NCS Table 1 and 2, query times
    assert all(map(_looks_like_a_reported_number, ["65.0", "57.5", "0.734", "303.2", "0.12", "519.8"]))
    assert not any(map(_looks_like_a_reported_number, ["3.2", "0.5", "1000", "5", "2.8"]))


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_every_notebook_ends_with_what_we_found(path: Path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    cells = nb["cells"]
    heads = [i for i, c in enumerate(cells) if c["cell_type"] == "markdown" and "".join(c["source"]).startswith("## What we found")]
    assert len(heads) == 1, f"{path.name}: needs exactly one '## What we found' section"
    tail = cells[heads[0]:]
    assert tail[-1]["cell_type"] == "markdown", f"{path.name}: ends on a code cell, not on the discussion"
    prose = "".join(tail[-1]["source"])
    assert "Knobs to turn" in prose, f"{path.name}: the discussion lacks 'Knobs to turn'"
    # what holds, does not hold and is inconclusive is drawn from the committed claims table by code
    assert any(f in "".join(c["source"]) for c in tail if c["cell_type"] == "code" for f in ("show_findings(", "findings_markdown(")), \
        f"{path.name}: 'What we found' does not show the committed claims by verdict"


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_parameters_are_validated_in_one_place(path: Path):
    """Every notebook hands its parameters to start_run(..., globals()), which checks them all
    (itmlib.course.params); no notebook repeats the checks."""
    cells = _code_cells(path)
    assert any(f'start_run("{path.stem}", globals()' in c for c in cells), path.name
    assert not any(re.search(r"\bcheck_(choice|positive|fraction)\(", c) for c in cells[1:]), path.name


@pytest.mark.parametrize("pooling", ["mrsw", "mwsr", "symm", "mravgw"])
def test_teran_claims_are_all_judged_whatever_the_main_pooling(pooling):
    """Before claims became data, notebook 08 looked up the fixed name "TERAN mrsw": with
    `-p pooling mwsr` that model was not trained and 10 of its 11 claims vanished."""
    import pandas as pd

    from itmlib.papers.teran import comparison_configs, teran_config
    from itmlib.claims.judge import judge_claims

    names = list(comparison_configs(teran_config("medium", pooling=pooling), "medium")) + \
        ["TERN (global) mrsw Test"]
    runs = pd.DataFrame([{"method": n, "seed": s, "rsum": 1.0 + i + s, "t2i_r1": 1.0 + i, "i2t_r1": 2.0 + i * s,
                          "t2i_ndcg_rouge": 50.0 + s, "grounding": 10.0 * i} for i, n in enumerate(names) for s in (0, 1)])
    table = judge_claims("08_teran", {"runs": runs, "comparisons": runs})
    assert len(table) == 13 and not table.verdict.str.startswith("not run").any(), table[["id", "verdict"]]


def test_make_tables_says_how_long_each_notebook_took_last_time(tmp_path: Path, monkeypatch, capsys):
    import itmlib.course.notebooks as nbs

    monkeypatch.setattr(nbs, "run_notebook", lambda nb, out, params: 754.0)   # no kernel: the timing log only
    args = ["run", "--only", "01_recall_metrics", "--output-dir", str(tmp_path), "--results-dir", str(tmp_path / "r")]
    assert nbs.main(args) == 0
    first = capsys.readouterr().out
    assert "took" not in first and json.loads((tmp_path / "timings.json").read_text()) == {"smoke/01_recall_metrics": 754.0}
    nbs.main(args)
    assert "(its last run at smoke took 12.6 min)" in capsys.readouterr().out


def test_threads_option_reaches_the_kernel_environment(tmp_path: Path, monkeypatch):
    """A 2-thread kernel beside a two-worker grid on 2 cores ran VSE++ ~20x slower (18 min vs 45-60 s an
    epoch at medium): `--threads 1` must reach the kernel, which inherits the runner's environment."""
    import itmlib.course.notebooks as nbs

    seen = {}
    monkeypatch.setattr(nbs, "run_notebook", lambda nb, out, params: seen.setdefault("omp", os.environ.get("OMP_NUM_THREADS")) and 1.0)
    for v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        monkeypatch.setenv(v, "4")                                 # restored after the test
    args = ["run", "--only", "01_recall_metrics", "--output-dir", str(tmp_path), "--results-dir", str(tmp_path / "r")]
    assert nbs.main([*args, "--threads", "1"]) == 0
    assert seen["omp"] == "1" and os.environ["MKL_NUM_THREADS"] == "1"
    with pytest.raises(SystemExit):
        nbs.main([*args, "--threads", "0"])


def test_the_notebook_runner_pins_one_blas_kernel_on_x86(monkeypatch):
    import platform

    from itmlib.course.notebooks import blas_kernel_environ

    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    assert blas_kernel_environ("x86_64") == {"OPENBLAS_CORETYPE": "Haswell"}
    assert blas_kernel_environ("AMD64") == {"OPENBLAS_CORETYPE": "Haswell"}
    assert blas_kernel_environ("arm64") == {}                              # no Haswell kernel there
    if platform.machine().lower() == "x86_64" and "avx2" in open("/proc/cpuinfo").read():
        out = subprocess.run([sys.executable, "-c", "import numpy; numpy.show_runtime()"], capture_output=True,
                             text=True, env={**os.environ, **blas_kernel_environ()}, check=True).stdout
        assert "'architecture': 'Haswell'" in out                          # OpenBLAS took the pinned kernel
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Zen")
    assert blas_kernel_environ("x86_64") == {}                             # a caller's own choice stays


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_every_name_a_notebook_uses_is_defined_before_a_run(path: Path, tmp_path: Path):
    """A name no cell defines or imports fails only when its cell runs (minutes into a grid): pyflakes over the
    notebook's code cells in order finds it at once (IPython's ``display`` is a kernel builtin)."""
    import subprocess
    import sys

    import nbformat

    code = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
    script = tmp_path / f"{path.stem}.py"
    script.write_text("from IPython.display import display\n" + code)
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--select", "F821", "--no-cache", "--isolated",
                          str(script)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-2000:]


def test_every_committed_notebook_is_valid_nbformat():
    """A cell id in a notebook older than nbformat 4.5 is invalid JSON schema: Jupyter logs it on every
    open and may drop the ids. Every notebook and executed copy must validate."""
    import nbformat

    paths = sorted((repo_root() / "notebooks").glob("*.ipynb")) + sorted((repo_root() / "results").glob("*/*.ipynb"))
    assert paths
    for p in paths:
        nbformat.validate(nbformat.read(p, as_version=4))   # raises ValidationError naming the problem


def _help_lines(path: Path) -> dict[str, str]:
    cells = json.loads(path.read_text())["cells"]
    src = next("".join(c["source"]) for c in cells if "parameters" in c.get("metadata", {}).get("tags", []))
    return {ln.split(":", 1)[0].strip(): ln.split("#", 1)[1] for ln in src.splitlines() if "#" in ln and ":" in ln.split("#")[0]}


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_parameter_help_quotes_the_committed_scale_and_the_measured_time(path: Path):
    """Help that says what `make tables` uses matches ci/medium.yaml; a smoke time it quotes is within 2x of the
    smoke run's measured seconds (tests/conftest.py's NOTEBOOK_SECONDS)."""
    from conftest import NOTEBOOK_SECONDS

    medium = {**scale_overrides("medium").get("all", {}), **scale_overrides("medium").get(path.stem, {})}
    for name, help_ in _help_lines(path).items():
        if m := re.search(r"make tables uses (\d+)", help_):
            assert medium.get(name) == int(m.group(1)), f"{path.stem} {name}: help says {m.group(0)}, ci/medium.yaml {medium.get(name)}"
        if m := re.search(r"make tables(?: at medium)?: ([\d.]+)", help_):
            assert float(medium.get(name)) == float(m.group(1)), f"{path.stem} {name}: help says {m.group(0)}"
        if name == "scale" and (m := re.search(r'"smoke" \([^)]*?~(\d+) (s|min)', help_)):
            quoted = int(m.group(1)) * (60 if m.group(2) == "min" else 1)
            measured = NOTEBOOK_SECONDS[path.stem]
            assert measured / 2 <= quoted <= 2 * measured, f"{path.stem}: help says ~{m.group(1)} {m.group(2)}, measured {measured} s"
