"""make site: executed notebooks to HTML pages with a run header, figures embedded, claims tables kept."""

import base64
import io
import re

import nbformat
import pytest

from itmlib.course.site import build_site, check_site, link_notebooks, nav_line, offline, page_header


def _executed(stem: str, *, figure: bool, claims: bool) -> nbformat.NotebookNode:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                   "papermill": {"parameters": {"scale": "medium", "seed": 0, "n_seeds": 3},
                                 "end_time": "2026-11-23T12:00:00.000000"}}
    cell = nbformat.v4.new_code_cell("plot()")
    if figure:
        fig, ax = plt.subplots(figsize=(2, 1))
        ax.plot([0, 1], [1, 0])
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        plt.close(fig)
        cell.outputs.append(nbformat.v4.new_output("display_data", data={"image/png": base64.b64encode(buf.getvalue()).decode()}))
    if claims:
        cell.outputs.append(nbformat.v4.new_output("execute_result", execution_count=1, data={
            "text/html": "<table><tr><th>claim</th><th>verdict</th></tr><tr><td>x</td><td>holds</td></tr></table>",
            "text/plain": "claims"}))
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {stem} title"), cell]
    return nb


def test_page_header_says_scale_seeds_date_version():
    h = page_header(_executed("04_sam", figure=False, claims=False))
    assert "scale `medium`" in h and "seed(s) 0-2" in h and "2026-11-23 12:00:00" in h and "itmlib" in h
    nb = _executed("08_teran", figure=False, claims=False)
    nb.metadata["papermill"]["parameters"] |= {"n_seeds": 2, "headline_seeds": 5}
    assert "seed(s) 0-1 (0-4 for the headline claims' models)" in page_header(nb)
    del nb.metadata["papermill"]["end_time"]           # an executed copy keeps no wall-clock time: no date, no "unknown"
    assert "finished" not in page_header(nb) and "unknown" not in page_header(nb)


def test_a_page_loads_nothing_from_the_network_and_links_its_neighbours():
    html = ('<script src="https://cdnjs.cloudflare.com/ajax/libs/require.js/2.1.10/require.min.js"></script>'
            '<script type="text/x-mathjax-config">MathJax.Hub.Config({});</script>'
            '<link rel="stylesheet" href="https://cdn.example.org/x.css"/><!-- Load mathjax -->'
            '<script type="module">await import("https://cdn.example.org/mermaid.mjs");</script>'
            '<script>var local = 1;</script><p>kept</p>')
    assert offline(html) == "<script>var local = 1;</script><p>kept</p>"
    stems = ["00_data_tour", "01_recall_metrics", "02_semantic_metrics"]
    assert nav_line(stems, 0) == "[index](index.html) · next: [01_recall_metrics](01_recall_metrics.html)"
    assert nav_line(stems, 1) == ("[index](index.html) · previous: [00_data_tour](00_data_tour.html) · "
                                  "next: [02_semantic_metrics](02_semantic_metrics.html)")
    md = "see `00_data_tour` and `02_semantic_metrics.ipynb`, not `08_teran` or [`00_data_tour`](x)"
    assert link_notebooks(md, stems) == ("see [`00_data_tour`](00_data_tour.html) and [`02_semantic_metrics`](02_semantic_metrics.html),"
                                         " not `08_teran` or [`00_data_tour`](x)")


def test_site_pages_keep_figures_and_claims_and_check_site_finds_what_is_missing(tmp_path):
    src = tmp_path / "executed"
    src.mkdir()
    nbformat.write(_executed("04_sam", figure=True, claims=True), src / "04_sam.ipynb")
    nbformat.write(_executed("08_teran", figure=True, claims=False), src / "08_teran.ipynb")   # its claims table lost
    nbformat.write(_executed("not_a_course_notebook", figure=True, claims=True), src / "not_a_course_notebook.ipynb")
    pages = build_site(src, tmp_path / "site")
    assert [p.name for p in pages] == ["index.html", "04_sam.html", "08_teran.html"]   # course order, index first
    html = pages[1].read_text()
    assert 'src="data:image/png;base64,' in html and "Executed at scale" in html     # one self-contained file
    index = pages[0].read_text()
    assert 'href="04_sam.html"' in index and 'href="08_teran.html"' in index
    assert 'href="index.html"' in html and 'href="08_teran.html"' in html                # back to the index, on to the next
    assert not re.search(r'(src|href)="https?://', html.split("<body", 1)[0]) and "mathjax" not in html.lower()   # no CDN
    assert check_site(tmp_path / "site") == {"08_teran.html": ["no claims table (a table with a 'verdict' column)"]}
    with pytest.raises(FileNotFoundError, match="make tables"):
        build_site(tmp_path / "nothing", tmp_path / "site2")
