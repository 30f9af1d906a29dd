"""A static site of the executed course: ``make site`` (``python -m itmlib.course.site``).

``make tables`` commits each notebook it executed, cleaned, as ``results/<nb>/<nb>.ipynb``
(never in ``notebooks/``, which stay output-free for clean diffs). This renders those copies
to HTML with nbconvert - nothing is trained or executed, so it works offline from a fresh
clone - with figures embedded as data URIs (a page is one file) and every equation turned
into MathML at build time (:func:`math_to_mathml`; browsers draw MathML natively, no MathJax
from a CDN). Every page is headed with what it was run at - scale, seeds, the date papermill
finished it and the itmlib version - and an index page (itself a notebook rendered by
nbconvert: no hand-written HTML templating) lists the papers with their claim counts, the
pages in course order with each one's verdict counts, and every claim. :func:`check_site` reads the pages back as a reader would
look for them: every page has its figures and, where the notebook judges claims, its claims table.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
import nbformat

from .. import __version__
from ..paths import resolve_path
from ..claims.verdicts import RULE

__all__ = ["page_header", "math_to_mathml", "build_site", "check_site", "main"]

_MATH = re.compile(r"(?<!\\)\$\$(.+?)\$\$|(?<![\\$])\$(?!\s)([^$\n]+?)(?<!\s)\$(?!\d)", re.S)
_CODE = re.compile(r"(```.*?```|`[^`\n]*`)", re.S)


def math_to_mathml(markdown: str) -> str:
    """``$...$`` and ``$$...$$`` of a Markdown text as MathML (inline and display); code spans and
    fenced code are left alone, and an expression latex2mathml cannot read stays as written."""
    from latex2mathml.converter import convert

    def one(m: re.Match[str]) -> str:
        tex, display = (m.group(1), "block") if m.group(1) is not None else (m.group(2), "inline")
        try:
            return convert(tex.strip(), display=display)
        except Exception:   # noqa: BLE001 - any parse failure: keep the source visible
            return m.group(0)

    parts = _CODE.split(markdown)
    return "".join(part if i % 2 else _MATH.sub(one, part) for i, part in enumerate(parts))

#: notebooks whose pages must show a claims table (every notebook that judges a paper's claims)
CLAIM_NOTEBOOKS = ("01_recall_metrics", "02_semantic_metrics", "04_sam", "05_sam_reduced_data", "06_phrase_labels",
                   "07_semantic_neighborhoods", "08_teran", "09_real_language", "10_results")
#: notebooks whose pages must show at least one figure
FIGURE_NOTEBOOKS = ("00_data_tour", "02_semantic_metrics", "03_vse_baseline", "04_sam", "05_sam_reduced_data",
                    "06_phrase_labels", "07_semantic_neighborhoods", "08_teran", "09_real_language", "10_results")


def page_header(nb: nbformat.NotebookNode) -> str:
    """The Markdown line that heads a page: scale, seeds, date run, itmlib version (from papermill's metadata)."""
    pm = nb.metadata.get("papermill", {})
    params = dict(pm.get("parameters", {}))
    scale = params.get("scale", "smoke (the notebook's default)")
    first = int(params.get("seed", 0))
    n = int(params.get("n_seeds", 1))
    seeds = f"{first}" if n == 1 else f"{first}-{first + n - 1}"
    more = int(params.get("headline_seeds", 0) or 0)
    if more > n:
        seeds += f" ({first}-{first + more - 1} for the headline claims' models)"
    end = pm.get("end_time")   # an executed copy keeps no wall-clock time (its rerun must write the same bytes)
    date = f"finished {str(end)[:19].replace('T', ' ')} UTC, " if end else ""
    return (f"> **Executed at scale `{scale}`, seed(s) {seeds}, {date}itmlib {__version__}.** "
            f"Parameters: `{', '.join(f'{k}={v}' for k, v in params.items()) or 'defaults'}`.")


#: a script or style sheet the page would fetch from the network (nbconvert's template loads require.js and MathJax)
_REMOTE = re.compile(r'<script\b[^>]*\bsrc="https?://[^"]*"[^>]*>\s*</script>|<link\b[^>]*\bhref="https?://[^"]*"[^>]*/?>', re.I)
#: nbconvert's inline MathJax set-up (the equations are MathML already: no MathJax is loaded)
_MATHJAX_CONFIG = re.compile(r'<script\b[^>]*type="text/x-mathjax-config"[^>]*>.*?</script>', re.S | re.I)


#: an inline script that fetches code from the network when it runs (the lab template's mermaid loader)
_FETCHING = re.compile(r"<script\b[^>]*>(?:(?!</script>).)*?https?://(?:(?!</script>).)*</script>", re.S | re.I)
_MATHJAX_NOTE = re.compile(r"<!--[^>]*mathjax[^>]*-->", re.I)


def offline(html: str) -> str:
    """A page that loads nothing from the network: every remote script and style sheet, every inline script that
    would fetch one, and MathJax's set-up removed."""
    for pattern in (_REMOTE, _MATHJAX_CONFIG, _FETCHING, _MATHJAX_NOTE):
        html = pattern.sub("", html)
    return html


def nav_line(stems: list[str], i: int) -> str:
    """The Markdown line that leads from page ``i`` of ``stems`` to the index and its neighbours."""
    parts = ["[index](index.html)"]
    if i > 0:
        parts.append(f"previous: [{stems[i - 1]}]({stems[i - 1]}.html)")
    if i + 1 < len(stems):
        parts.append(f"next: [{stems[i + 1]}]({stems[i + 1]}.html)")
    return " · ".join(parts)


def link_notebooks(markdown: str, stems: list[str]) -> str:
    """Each mention of a course notebook in backticks (`` `05_sam_reduced_data` ``) as a link to its page."""
    names = "|".join(map(re.escape, stems))
    return re.sub(rf"(?<!\[)`({names})(?:\.ipynb)?`", lambda m: f"[`{m.group(1)}`]({m.group(1)}.html)", markdown) if stems else markdown


def _export(nb: nbformat.NotebookNode) -> str:
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="lab")
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    body, _ = exporter.from_notebook_node(nb)
    return offline(body)


def _executed_path(src: Path, stem: str) -> Path | None:
    for p in (src / stem / f"{stem}.ipynb", src / f"{stem}.ipynb"):   # results/<nb>/<nb>.ipynb, or a flat folder
        if p.is_file():
            return p
    return None


def _verdict_counts(claims: "pd.DataFrame") -> str:   # noqa: F821 - pandas is imported by the caller
    from .summary import VERDICT_KINDS, verdict_kind

    kinds = claims.verdict.map(verdict_kind).value_counts()
    return ", ".join(f"{int(kinds[k])} {k}" for k in VERDICT_KINDS if kinds.get(k, 0))


def build_site(executed_dir: str | os.PathLike[str] = "results", out_dir: str | os.PathLike[str] = "runs/site",
               results_dir: str | os.PathLike[str] | None = None) -> list[Path]:
    """Render every executed course notebook of ``executed_dir`` (``<nb>/<nb>.ipynb`` as committed under
    ``results/``, or ``<nb>.ipynb`` in a flat folder such as ``runs/tables``) to ``out_dir``; returns the
    pages written (index first). ``results_dir`` (default: ``executed_dir`` when it holds claims tables)
    gives the index its claims. Raises when ``executed_dir`` holds no executed notebook."""
    from .notebooks import NOTEBOOKS
    from .summary import PAPERS, all_claims, claim_kinds, claims_markdown

    src, out = resolve_path(executed_dir), resolve_path(out_dir)
    found = [p for n in NOTEBOOKS if (p := _executed_path(src, n)) is not None]
    if not found:
        raise FileNotFoundError(f"no executed course notebook in {src}: run `make tables` (or `make course`) first")
    res = resolve_path(results_dir) if results_dir is not None else src
    table = all_claims(res) if any(res.glob("*/claims.csv")) else None
    out.mkdir(parents=True, exist_ok=True)
    pages, rows = [], []
    stems = [p.stem for p in found]
    for k, path in enumerate(found):
        nb = nbformat.read(path, as_version=4)
        for c in nb.cells:
            if c.cell_type == "markdown":
                c.source = link_notebooks(math_to_mathml(c.source), stems)
        head = page_header(nb)
        nb.cells.insert(0, nbformat.v4.new_markdown_cell(nav_line(stems, k) + "\n\n" + head))
        nb.cells.append(nbformat.v4.new_markdown_cell(nav_line(stems, k)))
        page = out / f"{path.stem}.html"
        page.write_text(_export(nb), encoding="utf-8")
        pages.append(page)
        title = next((c.source.splitlines()[0].lstrip("# ") for c in nb.cells[1:] if c.cell_type == "markdown"), path.stem)
        mine = table[table.notebook == path.stem] if table is not None else None
        found_ = _verdict_counts(mine[claim_kinds(mine) == "paper"]) if mine is not None and len(mine) else ""
        if not found_ and mine is not None and len(mine):   # no paper claim: its checks or controls, counted
            found_ = "; ".join(f"{n} {k}{'s' if n > 1 else ''}" for k, n in claim_kinds(mine).value_counts().items())
        found_ = found_ or "no claims judged"
        rows.append(f"| [{path.stem}]({page.name}) | {title} | {found_} | {head.split('**')[1].rstrip('.')} |")
    missing = [n for n in NOTEBOOKS if _executed_path(src, n) is None]
    papers = ""
    if table is not None:
        papers = "## The papers and what held\n\n" + "\n".join(
            f"- **{name}**: {_verdict_counts(table[(table.paper == name) & (claim_kinds(table) == 'paper')])}"
            + (f" (headline claims: {_verdict_counts(table[(table.paper == name) & table.headline & (claim_kinds(table) == 'paper')])})"
               if (table[table.paper == name].headline).any() else "") for name in PAPERS.values()) + "\n\n"
    index = nbformat.v4.new_notebook()
    index.cells = [nbformat.v4.new_markdown_cell(
        "# itm-course: image-text matching, reproduced\n\nEach page is a notebook as `make tables` ran it, outputs "
        "kept (committed in `results/<notebook>/`); its first line says the scale and seeds it ran at. A claim reads "
        + RULE + ".\n\n"
        + papers + "## The notebooks\n\n| notebook | title | claims | run |\n|---|---|---|---|\n" + "\n".join(rows)
        + (f"\n\nNot yet executed at the committed scale: {', '.join(missing)}." if missing else "")
        + ("\n\n## Every claim\n\n" + claims_markdown(table) if table is not None else ""))]
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
        if 'href="index.html"' not in html:
            miss.append("no link to the index")
        if _REMOTE.search(html) or _FETCHING.search(html) or "mathjax" in html.lower():
            miss.append("loads a script or style from the network")
        if miss:
            problems[page.name] = miss
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m itmlib.course.site", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--executed", default="results",
                    help="executed notebooks: results/ (the committed copies, results/<nb>/<nb>.ipynb) or a flat folder")
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

