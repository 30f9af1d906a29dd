"""Run the course notebooks headless with papermill (``make course``, ``make tables``, tests).

``python -m itmlib.course.notebooks run --scale smoke`` executes every notebook in
``notebooks/`` in order into ``runs/``; parameter overrides per scale come
from ``ci/<scale>.yaml`` (a mapping notebook stem -> parameters). Notebooks
run with ``notebooks/`` as their working directory, like a user who starts
papermill there; their relative paths are resolved against the repo root.

Progress: each notebook's start says how long its last run at this scale took (``timings.json`` in the
output folder), and the grids inside print a line per member - training or loaded from its checkpoint,
with an ETA - to this terminal (:mod:`itmlib.training.progress`, through the file ``ITM_PROGRESS_LOG``); the
executed notebook keeps one line per grid, and tqdm bars are off (``TQDM_DISABLE``), so no progress
clutter is saved.

Executed copies: with ``--keep-executed``, each executed notebook is also copied, cleaned
(:func:`clean_executed`), to ``<results_dir>/<notebook>/<notebook>.ipynb`` - the copies readers open
and ``make site`` renders; ``make tables`` keeps them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any, Iterator

from ..config import check_choice, SCALES
from ..paths import repo_root, resolve_path, shown_path
from ..console import format_duration
from ..training.records import RECORDS_READ, orphan_records
from .params import cli_value

__all__ = ["NOTEBOOKS", "notebook_paths", "scale_overrides", "run_notebook", "clean_executed", "keep_executed",
           "blas_kernel_environ", "main"]

#: the course's notebooks, in order (users quote these names)
NOTEBOOKS = ("00_data_tour", "01_recall_metrics", "02_semantic_metrics", "03_vse_baseline", "04_sam",
             "05_sam_reduced_data", "06_phrase_labels", "07_semantic_neighborhoods", "08_teran", "09_real_language",
             "10_results")   # the results notebook last: it reads every claims table


def notebook_paths() -> list[Path]:
    """The notebooks present in ``notebooks/``, in course order."""
    nb_dir = repo_root() / "notebooks"
    return [nb_dir / f"{n}.ipynb" for n in NOTEBOOKS if (nb_dir / f"{n}.ipynb").is_file()]


def scale_overrides(scale: str) -> dict[str, dict[str, Any]]:
    """Per-notebook papermill parameters for ``scale`` from ``ci/<scale>.yaml`` (empty if none)."""
    check_choice("scale", scale, SCALES)
    path = repo_root() / "ci" / f"{scale}.yaml"
    if not path.is_file():
        return {}
    import yaml

    doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(doc, dict) or not all(isinstance(v, dict) for v in doc.values()):
        raise ValueError(f"{path}: expected a mapping of notebook name -> parameter mapping")
    unknown = set(doc) - set(NOTEBOOKS) - {"all"}
    if unknown:
        raise ValueError(f"{path}: unknown notebook name(s) {sorted(unknown)}")
    return doc


@contextlib.contextmanager
def _environ(**values: str) -> Iterator[None]:
    """Set environment variables for the duration of the block (a kernel started inside inherits them)."""
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class _Tail:
    """Print the lines appended to ``path`` while a notebook runs (a daemon thread polling every second)."""

    def __init__(self, path: Path):
        import threading

        self.path, self._stop = path, threading.Event()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
        self._pos = 0
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _flush(self) -> None:
        with open(self.path, encoding="utf-8") as fh:
            fh.seek(self._pos)
            text = fh.read()
            self._pos = fh.tell()
        if text:
            print(text, end="", flush=True)

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            self._flush()

    def __enter__(self) -> "_Tail":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._flush()


#: a tqdm bar's line: "  37%|███▋      | 38/103 [00:01<00:02, 30.1it/s]"
_BAR = re.compile(r"\d+%\|.*\| *\d+/\d+ \[")


def _joined(text: str | list[str]) -> str:
    """A notebook text field as one string (nbformat allows a list of lines)."""
    return "".join(text) if isinstance(text, list) else text


def _from_root(path: str) -> str:
    """``path`` relative to the repository root where it lies inside it, else its file name (an executed copy names
    no machine's folders)."""
    shown = shown_path(path)
    return Path(shown).name if Path(shown).is_absolute() else shown


#: a styled table's id: pandas Styler's random one, or the one :func:`clean_executed` gave it (a committed copy
#: cleaned again gets the same ids as its run cleaned once)
_STYLE_ID = re.compile(r"T_(?:[0-9a-f]{5}|c\d+o\d+t\d+)(?=[_\" ])")


def clean_executed(nb: Any) -> Any:
    """An executed notebook made fit to commit and read: no widget state or widget views, no
    stderr streams (warnings, tqdm), no execution timings (papermill's start, end and duration included) and
    paths relative to the repository; figures, tables and text kept. Raises when
    a cell carries an error output (an executed copy never shows a traceback). What changes from run to
    run without saying anything - cell ids, a styled table's random id, how the kernel happened to split a cell's
    printed text into stream outputs - is made the same every run, so a rerun's diff shows only what changed."""
    nb.metadata.pop("widgets", None)
    pm = nb.metadata.get("papermill")
    if pm is not None:   # wall-clock times and this machine's paths: they change every run and say nothing to a reader
        for key in ("start_time", "end_time", "duration"):
            pm.pop(key, None)
        for key in ("input_path", "output_path"):
            if pm.get(key):
                pm[key] = _from_root(pm[key])
    nb.nbformat_minor = max(nb.nbformat_minor, 5)   # cell ids exist from nbformat 4.5 on
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i}"
        for key in ("execution", "papermill"):   # every cell's timings, markdown ones too
            cell.get("metadata", {}).pop(key, None)
        if cell.cell_type == "code":
            cell["outputs"] = _stable_style_ids(_kept_outputs(cell), i)
    return nb


def _kept_outputs(cell: Any) -> list[Any]:
    """A code cell's outputs a reader needs, in order: no stderr, progress bar or widget view, and the stdout text
    the kernel split into several stream outputs (as timing had it) joined into one. Raises on an error output."""
    kept: list[Any] = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            raise ValueError(f"cell {cell.get('id', '?')} has an error output ({out.get('ename')}): not a readable copy")
        if out.get("output_type") == "stream" and out.get("name") == "stderr":
            continue
        if out.get("output_type") == "stream":   # a progress bar printed to stdout (a library's own tqdm)
            lines = [ln for ln in _joined(out.get("text", "")).split("\n") if not _BAR.search(ln)]
            out["text"] = "\n".join(lines)
            if not out["text"].strip():
                continue
            if kept and kept[-1].get("output_type") == "stream" and kept[-1].get("name") == out.get("name"):
                kept[-1]["text"] = _joined(kept[-1]["text"]) + out["text"]
                continue
        data = out.get("data")
        if data is not None:
            data.pop("application/vnd.jupyter.widget-view+json", None)
            if "text/html" in data and str(data.get("text/plain", "")).startswith(("<pandas.io.formats.style.Styler",
                                                                                     "<IPython.core.display")):
                data.pop("text/plain")   # an object's address: changes every run, says nothing
            plain = data.get("text/plain", "")
            if set(data) == {"text/plain"} and _BAR.search(_joined(plain)):
                continue   # a notebook progress bar's text form (its widget dropped above)
            if not data:
                continue
        kept.append(out)
    return kept


def _stable_style_ids(outputs: list[Any], cell: int) -> list[Any]:
    """``outputs`` with each styled table's id named by where it stands: ``T_c<cell>o<output>t<k>`` (the k-th
    table of the cell's output-th kept output), not pandas' random one."""
    for j, out in enumerate(outputs):
        html = (out.get("data") or {}).get("text/html")
        if html is not None:
            text = _joined(html)
            ids = {old: f"T_c{cell}o{j}t{k}" for k, old in enumerate(dict.fromkeys(_STYLE_ID.findall(text)))}
            out["data"]["text/html"] = _STYLE_ID.sub(lambda m: ids[m.group(0)], text)
    return outputs


def keep_executed(executed: str | Path, results_dir: str | Path) -> Path:
    """Copy an executed notebook, cleaned, to ``<results_dir>/<stem>/<stem>.ipynb``; returns the path."""
    import nbformat

    src = resolve_path(executed)
    nb = clean_executed(nbformat.read(src, as_version=4))
    dest = resolve_path(results_dir) / src.stem / src.name
    dest.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(dest))
    return dest


def run_notebook(notebook: str | Path, output: str | Path, parameters: dict[str, Any] | None = None,
                 *, cwd: str | Path | None = None, progress: bool = False, cell_timeout: int | None = None) -> float:
    """Execute one notebook with papermill; returns wall seconds. Raises on a failing cell, and with
    ``cell_timeout`` (seconds) raises ``TimeoutError`` naming the cell that ran past it (default: no limit)."""
    import papermill as pm

    nb = resolve_path(notebook)
    if not nb.is_file():
        raise FileNotFoundError(f"no notebook at {nb}")
    out = resolve_path(output)
    out.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    # papermill's kernel is headless: it shows no widget and no progress bar by itself (itmlib.console.interactive)
    pm.execute_notebook(str(nb), str(out), parameters=parameters or {}, kernel_name="python3", language="python",
                        cwd=str(cwd if cwd is not None else nb.parent), progress_bar=progress, log_output=False,
                        execution_timeout=cell_timeout)
    return time.perf_counter() - t0


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m itmlib.course.notebooks", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run", help="execute the notebooks in order")
    run.add_argument("--scale", default="smoke", choices=sorted(SCALES))
    run.add_argument("--output-dir", default="runs", help="executed notebooks go here (relative to the repo root)")
    run.add_argument("--results-dir", default="runs/results", help="tables go here (relative to the repo root)")
    run.add_argument("--only", nargs="*", default=None, help="notebook stems to run (default: all)")
    run.add_argument("-p", "--param", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                     help="extra parameter for every notebook (VALUE parsed as JSON when it can be)")
    run.add_argument("--keep-executed", action="store_true",
                     help="also write each executed notebook, cleaned, to <results-dir>/<nb>/<nb>.ipynb (make tables)")
    run.add_argument("--threads", type=int, default=None,
                     help="torch/BLAS threads of each notebook's kernel (default: torch's, every core); 1 beside a "
                          "running `-p executor processes:N` grid, which already keeps N cores busy")
    return ap


def blas_kernel_environ(machine: str | None = None) -> dict[str, str]:
    """The environment that pins OpenBLAS to one kernel on every x86-64 machine (``OPENBLAS_CORETYPE=Haswell``,
    unless the caller set one): numpy's, scipy's and so gensim's BLAS otherwise pick the kernel of the CPU they
    run on, and the kernels round differently - Doc2Vec trained on the same COCO captions with the same seed
    gave vectors up to 0.026 apart on a Sapphire Rapids CPU under its own kernel and Haswell's, moving notebook
    07's COCO neighbour recall in its 3rd figure (benchmarks/README.md). Empty elsewhere (ARM has no Haswell)."""
    import platform

    machine = platform.machine() if machine is None else machine
    if machine.lower() not in ("x86_64", "amd64") or "OPENBLAS_CORETYPE" in os.environ:
        return {}
    return {"OPENBLAS_CORETYPE": "Haswell"}


def main(argv: list[str] | None = None) -> int:
    ap = _parser()
    args = ap.parse_args(argv)
    if args.threads is not None:
        if args.threads < 1:
            ap.error(f"--threads must be >= 1, got {args.threads}")
        # the kernel inherits this environment; a grid's own workers set theirs (itmlib.training.grid.worker_environ)
        os.environ.update({v: str(args.threads) for v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")})
    os.environ.update(blas_kernel_environ())
    overrides = scale_overrides(args.scale)
    extra = {k: cli_value(v) for k, v in args.param}
    paths = notebook_paths()
    if args.only:
        missing = set(args.only) - {p.stem for p in paths}
        if missing:
            ap.error(f"no such notebook(s): {sorted(missing)}")
        paths = [p for p in paths if p.stem in args.only]
    timings, orphans = [], []
    log = resolve_path(args.output_dir) / "timings.json"
    seen = json.loads(log.read_text()) if log.is_file() else {}
    for nb in paths:
        params = {"scale": args.scale, "results_dir": args.results_dir, **overrides.get("all", {}),
                  **overrides.get(nb.stem, {}), **extra}
        out = resolve_path(args.output_dir) / nb.name
        key = f"{args.scale}/{nb.stem}"
        before = f" (its last run at {args.scale} took {format_duration(seen[key])})" if key in seen else ""
        print(f"[itm-course] {nb.name} -> {out} with {params}{before}", flush=True)
        plog = resolve_path(args.output_dir) / "progress.log"
        # the kernel inherits both: no progress bars saved in the notebook, per-member lines to this terminal
        # HF_HUB_DISABLE_PROGRESS_BARS: transformers' own bars ("Loading weights") ignore TQDM_DISABLE
        read_log = resolve_path(args.output_dir) / f"{nb.stem}.records-read"
        read_log.unlink(missing_ok=True)
        with _environ(TQDM_DISABLE="1", HF_HUB_DISABLE_PROGRESS_BARS="1", ITM_PROGRESS_LOG=str(plog),
                      **{RECORDS_READ: str(read_log)}), _Tail(plog):
            secs = run_notebook(nb, out, params)
        orphans += [(nb.stem, p) for p in orphan_records(resolve_path(args.results_dir) / nb.stem / "members", read_log)]
        timings.append((nb.stem, secs))
        if args.keep_executed:
            print(f"[itm-course] executed copy: {keep_executed(out, args.results_dir)}", flush=True)
        seen[key] = round(secs, 1)
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(json.dumps(seen, indent=1, sort_keys=True))
        print(f"[itm-course] {nb.name}: {secs:.1f} s", flush=True)
    print("[itm-course] done: " + ", ".join(f"{n} {s:.0f} s" for n, s in timings), flush=True)
    if resolve_path(args.results_dir) == resolve_path("results"):   # the committed tables changed: their README too
        from .summary import write_claims_readme

        write_claims_readme("results")
        from .conclusions import write_conclusions

        write_conclusions("README.md", "results")
        print("[itm-course] results/README.md and README.md: claims and conclusions regenerated", flush=True)
    for stem, p in orphans:
        print(f"[itm-course] {stem}: {p.name} is a member record of no grid of the notebook's plan "
              "(a config changed under it, or the plan dropped its member): retrain, or remove it", flush=True)
    return 1 if orphans else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
