"""A static site of the executed course: ``make site`` (``python -m itmlib.site``).

``make tables`` keeps the notebooks it executed, outputs and all, in ``runs/tables/`` (never
in ``notebooks/``, which stay output-free for clean diffs). This renders each of them to HTML
with nbconvert (figures embedded as data URIs, so a page is one file), heads every page with
what it was run at - scale, seeds, the date papermill finished it and the itmlib version - and
writes an index page (itself a notebook rendered by nbconvert: no hand-written HTML templating)
linking the pages in course order. :func:`check_site` reads the pages back as a reader would
look for them: every page has its figures and, where the notebook judges claims, its claims table.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
import nbformat

from . import __version__
from .paths import resolve_path

__all__ = ["page_header", "build_site", "check_site", "main"]

#: notebooks whose pages must show a claims table (every notebook that judges a paper's claims)
CLAIM_NOTEBOOKS = ("01_recall_metrics", "02_semantic_metrics", "04_sam", "05_sam_reduced_data", "06_phrase_labels",
                   "07_semantic_neighborhoods", "08_teran", "09_results")
#: notebooks whose pages must show at least one figure
FIGURE_NOTEBOOKS = ("00_data_tour", "02_semantic_metrics", "03_vse_baseline", "04_sam", "05_sam_reduced_data",
                    "06_phrase_labels", "07_semantic_neighborhoods", "08_teran", "09_results")


def page_header(nb: nbformat.NotebookNode) -> str:
    """The Markdown line that heads a page: scale, seeds, date run, itmlib version (from papermill's metadata)."""
    pm = nb.metadata.get("papermill", {})
    params = dict(pm.get("parameters", {}))
    scale = params.get("scale", "smoke (the notebook's default)")
    first = int(params.get("seed", 0))
    n = int(params.get("n_seeds", 1))
    seeds = f"{first}" if n == 1 else f"{first}-{first + n - 1}"
    date = str(pm.get("end_time") or pm.get("start_time") or "unknown")[:19].replace("T", " ")
    return (f"> **Executed at scale `{scale}`, seed(s) {seeds}, finished {date} UTC, itmlib {__version__}.** "
            f"Parameters: `{', '.join(f'{k}={v}' for k, v in params.items()) or 'defaults'}`.")


def _export(nb: nbformat.NotebookNode) -> str:
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="lab")
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    body, _ = exporter.from_notebook_node(nb)
    return body


def build_site(executed_dir: str | os.PathLike[str] = "runs/tables", out_dir: str | os.PathLike[str] = "runs/site") -> list[Path]:
    """Render every executed course notebook of ``executed_dir`` to ``out_dir``; returns the pages written
    (index first). Raises when ``executed_dir`` holds none."""
    from .notebooks import NOTEBOOKS

    src, out = resolve_path(executed_dir), resolve_path(out_dir)
    found = [src / f"{n}.ipynb" for n in NOTEBOOKS if (src / f"{n}.ipynb").is_file()]
    if not found:
        raise FileNotFoundError(f"no executed course notebook in {src}: run `make tables` (or `make course`) first")
    out.mkdir(parents=True, exist_ok=True)
    pages, rows = [], []
    for path in found:
        nb = nbformat.read(path, as_version=4)
        head = page_header(nb)
        nb.cells.insert(0, nbformat.v4.new_markdown_cell(head))
        page = out / f"{path.stem}.html"
        page.write_text(_export(nb), encoding="utf-8")
        pages.append(page)
        title = next((c.source.splitlines()[0].lstrip("# ") for c in nb.cells[1:] if c.cell_type == "markdown"), path.stem)
        rows.append(f"| [{path.stem}]({page.name}) | {title} | {head.split('**')[1].rstrip('.')} |")
    index = nbformat.v4.new_notebook()
    index.cells = [nbformat.v4.new_markdown_cell(
        "# itm-course: the executed notebooks\n\nEach page is a notebook as `make tables` (or `make course`) ran it, "
        "outputs kept; its first line says the scale and seeds it ran at. The committed tables are in `results/`, "
        "every claim in one table on page 09.\n\n| notebook | title | run |\n|---|---|---|\n" + "\n".join(rows))]
    index.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    (out / "index.html").write_text(_export(index), encoding="utf-8")
    return [out / "index.html", *pages]


def check_site(out_dir: str | os.PathLike[str] = "runs/site") -> dict[str, list[str]]:
    """Problems per page, as a reader would find them: a missing figure, a missing claims table, no run header.
    An empty dict means every page is whole."""
    out = resolve_path(out_dir)
    problems: dict[str, list[str]] = {}
    pages = sorted(out.glob("*.html"))
    if not (out / "index.html").is_file():
        problems["index.html"] = ["missing"]
    for page in pages:
        if page.name == "index.html":
            continue
        html = page.read_text(encoding="utf-8")
        miss = []
        if "Executed at scale" not in html:
            miss.append("no run header (scale, seeds, date, version)")
        if page.stem in FIGURE_NOTEBOOKS and not re.search(r'<img[^>]+src="data:image/(png|jpeg|svg)', html):
            miss.append("no embedded figure")
        if page.stem in CLAIM_NOTEBOOKS and not re.search(r"<table[^>]*>(?:(?!</table>).)*verdict", html, re.S):
            miss.append("no claims table (a table with a 'verdict' column)")
        if miss:
            problems[page.name] = miss
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m itmlib.site", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--executed", default="runs/tables", help="folder of executed notebooks (make tables writes runs/tables)")
    ap.add_argument("--out", default="runs/site", help="where the HTML pages go")
    args = ap.parse_args(argv)
    pages = build_site(args.executed, args.out)
    problems = check_site(args.out)
    print(f"[itm-course] site: {len(pages)} pages in {resolve_path(args.out)}; open {pages[0]}")
    for page, miss in problems.items():
        print(f"[itm-course] {page}: {'; '.join(miss)}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

