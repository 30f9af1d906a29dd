"""The "What we found" section every notebook ends with: this run's claims beside the committed ones.

The committed tables in ``results/<notebook>/`` were made by ``make tables`` at the scale
their header states (``medium`` on the CPU, ``full`` on a GPU); a run at ``smoke`` trains
tiny models on a few hundred images, so its verdicts show that the code runs, not what
holds. :func:`show_findings` prints both, labelled, and says which to believe.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..paths import repo_root
from .results import Run, read_table, styled

__all__ = ["committed_table", "committed_claims", "retraining_changes", "beside_synthetic", "verdict_sentence",
           "claims_findings", "show_findings",
           "findings_text", "unsupported_numbers"]


def committed_table(notebook: str, table: str = "claims") -> tuple[dict[str, str], pd.DataFrame] | None:
    """(header, table) of ``results/<notebook>/<table>.csv`` as committed, or None if there is none."""
    path = repo_root() / "results" / notebook / f"{table}.csv"
    return read_table(path) if path.is_file() else None


def retraining_changes(run: Run, claims: pd.DataFrame, before: str = "claims_before_retraining") -> pd.DataFrame | None:
    """This run's claims beside the verdicts they had before the notebook's arms were retrained: ``before`` is that
    claims table, committed once as data when the recipe changed. Written as the run's ``verdict_changes`` table
    (:func:`itmlib.claims.verdicts.verdict_changes`: the old and new verdict of each claim, and whether it moved)
    and returned; None when no such table is committed or it was made at another scale than this run's."""
    from ..claims.verdicts import verdict_changes

    got = committed_table(run.notebook, before)
    if got is None or got[0].get("scale") != run.scale:
        return None
    header, old = got
    table = verdict_changes(old, claims).assign(paper="not in the paper: our verdicts before and after retraining")
    return run.write_table("verdict_changes", table, data=f"before: {header['data']}; after: this run's claims",
                           paper="not in the paper: our own verdicts, before and after the arms were retrained")


def committed_claims(notebook: str, tables: tuple[str, ...] = ("claims",)) -> pd.DataFrame | None:
    """The committed claims of a notebook, one row per claim, with the scale and seeds they were made at.

    Older committed claims tables (before claims became data) are read too: their
    ``paper claim``/``metric`` and ``verdict`` columns become ``claim`` and ``verdict``."""
    frames = []
    for t in tables:
        got = committed_table(notebook, t)
        if got is None:
            continue
        meta, df = got
        if "claim" not in df.columns and "paper claim" in df.columns:
            df = df.rename(columns={"paper claim": "claim"})
        frames.append(df.assign(scale=meta.get("scale", "?"), table=t))
    return pd.concat(frames, ignore_index=True) if frames else None


def beside_synthetic(claims: pd.DataFrame) -> pd.DataFrame:
    """A replayed claims table (:func:`itmlib.claims.replayed_claims`) as a reader compares it: each claim, the
    paper's numbers, the synthetic world's committed verdict (the original claim's, in its own notebook) and
    this world's, side by side."""
    from ..claims.registry import claim, replayed_from

    rows = []
    for r in claims.to_dict("records"):
        try:                                   # a replay's original; the notebook's own claims have none
            orig = claim(replayed_from(r["id"])) if replayed_from(r["id"]) != r["id"] else None
        except ValueError:
            orig = None
        syn = committed_claims(orig.notebook) if orig is not None else None
        hit = syn[syn.id == orig.id] if syn is not None and "id" in syn.columns else None
        rows.append({"claim": r["claim"], "paper (model vs baseline)": r["paper (model vs baseline)"],
                     "synthetic world verdict": (f"{hit.verdict.iloc[0]}; {hit['ours (model vs baseline)'].iloc[0]} "
                                         f"({orig.notebook})" if hit is not None and len(hit) else "not judged there"),
                     "real-language verdict": _with_ours(r)})
    return pd.DataFrame(rows)


def _with_ours(row: dict[str, Any]) -> str:
    """A claim row's verdict and, where it has them, its numbers: ``"holds (...); 39.6 vs 30.8"``."""
    ours = row.get("ours (model vs baseline)")
    return f"{row['verdict']}; {ours}" if isinstance(ours, str) and ours else str(row["verdict"])


def verdict_sentence(claims: pd.DataFrame) -> str:
    """One line drawn from a claims table: how many of the paper's claims hold, do not hold, are inconclusive
    or not judged - headline claims, our controls, illustrations and deterministic checks named apart (what a
    reader must take away)."""
    from ..claims.registry import claim as find
    from .summary import VERDICT_KINDS, verdict_kind

    if "verdict" not in claims.columns:
        return ""
    def count(df: pd.DataFrame) -> str:
        k = df.verdict.map(verdict_kind).value_counts()
        return ", ".join(f"{int(k[v])} {v}" for v in VERDICT_KINDS if k.get(v, 0)) or "none"

    def attr(i: object, name: str, default: object) -> object:
        try:
            return getattr(find(str(i)), name)
        except ValueError:
            return default

    ids = claims["id"] if "id" in claims.columns else pd.Series([""] * len(claims), index=claims.index)
    kind = ids.map(lambda i: attr(i, "kind", "paper"))
    head = ids.map(lambda i: bool(attr(i, "headline", False))) & (kind == "paper")
    paper = kind == "paper"
    text = f"**{int(paper.sum())} paper claims: {count(claims[paper])}.**"
    if head.any():
        text += f" Headline claims: {count(claims[head])}."
    if (kind == "control").any():
        text += f" Our controls: {count(claims[kind == 'control'])}."
    if (kind == "illustration").any():
        text += f" Illustrations (shown, never judged): {int((kind == 'illustration').sum())}."
    if (kind == "check").any():
        text += f" Deterministic checks of definitions (not reproduced claims): {count(claims[kind == 'check'])}."
    return text


def claims_findings(claims: pd.DataFrame) -> str:
    """The claims as sentences, grouped by verdict (holds, does not hold, inconclusive), each with ours
    against the paper and the interval - the part of "What we found" that is drawn from the table."""
    from .summary import verdict_kind

    if "verdict" not in claims.columns:
        return ""
    kinds = claims.verdict.map(verdict_kind)
    out = []
    for k, title in (("holds", "What holds"), ("does not hold", "What does not hold"), ("inconclusive", "Inconclusive"),
                     ("not judged", "Not judged by this table")):
        g = claims[kinds == k]
        if not len(g):
            continue
        items = []
        for _, r in g.iterrows():
            ours = r.get("ours (model vs baseline)", "")
            ours = ours if isinstance(ours, str) and ours else "-"
            v = str(r.verdict)
            detail = f" {v[len(k):].strip()}" if v.startswith(k) else f"; {v}"   # "not run (...)" stands apart
            paper = str(r.get("paper (model vs baseline)", "-"))
            paper = "a control of ours, not in the paper" if paper.startswith("not in the paper") else f"paper {paper}"
            items.append(f"- {r['claim']}: ours {ours}, {paper}{detail}".rstrip())
        out.append(f"**{title}** ({len(g)}):\n\n" + "\n".join(items))
    return "\n\n".join(out)


def show_findings(run: Run, claims: pd.DataFrame | None = None, *, committed: tuple[str, ...] = ("claims",),
                  columns: tuple[str, ...] = ("claim", "paper (model vs baseline)", "ours (model vs baseline)",
                                              "seeds", "verdict")) -> dict[str, Any]:
    """Display the claims as a reader needs them: the committed ones (``results/<notebook>/`` tables
    ``committed``) with a one-line count drawn from them, and this run's beside them only when this
    run is not the committed one (another scale or results folder).

    Returns ``{"this_run": ..., "committed": ...}`` (DataFrames or None) for further use."""
    from IPython.display import Markdown, display

    old = committed_claims(run.notebook, committed)
    is_committed = old is not None and run.results_dir.resolve() == (repo_root() / "results").resolve()
    if claims is not None and not is_committed:
        cols = [c for c in columns if c in claims.columns] or list(claims.columns)
        display(Markdown(f"**This run** (scale `{run.scale}`, seed {run.seed}): " + verdict_sentence(claims)))
        display(styled(claims[cols]))
    if old is None:
        display(Markdown("No committed claims table for this notebook yet (`make tables` writes it)."))
    else:
        scales = ", ".join(sorted(set(old.scale)))
        cols = [c for c in columns if c in old.columns] or [c for c in old.columns if c not in ("scale", "table")]
        display(Markdown(f"**Committed** (`results/{run.notebook}/`, scale `{scales}`): " + verdict_sentence(old)))
        if "verdict" in old.columns:
            display(Markdown(claims_findings(old)))
        else:
            display(styled(old[cols]))
    if run.scale == "smoke":
        display(Markdown("*This run is at `smoke` scale: a few hundred images and a few epochs, too small to "
                         "decide any claim. Believe the committed table; the prose below discusses it.*"))
    return {"this_run": claims, "committed": old}


_DECIMAL = __import__("re").compile(r"(?<![\w.\-/])[-+−]?\d[\d,]*\.\d+(?![\w.]*\d)")


def findings_text(nb: Any) -> str:
    """The "What we found" of a notebook (an nbformat node): its Markdown cells from the heading on and
    the Markdown its code cells display there (executed copies) - the prose a reader takes away."""
    import re

    cells = nb.cells
    start = next((i for i, c in enumerate(cells) if c.cell_type == "markdown"
                  and re.search(r"^#+ What we found", c.source, re.M)), None)
    if start is None:
        return ""
    parts = []
    for c in cells[start:]:
        if c.cell_type == "markdown":
            parts.append(c.source)
        else:
            for o in c.get("outputs", []):
                md = o.get("data", {}).get("text/markdown")
                if md:
                    parts.append(md if isinstance(md, str) else "".join(md))
    return "\n".join(parts)


def _table_numbers(notebook: str) -> list[float]:
    """Every number in the committed tables of ``notebook`` (cells and numbers inside text cells such as
    "111 vs 87.4" or a verdict's interval) and in the papers' transcribed tables."""
    import re

    from importlib import resources

    out: list[float] = []
    files = sorted((repo_root() / "results" / notebook).glob("*.csv"))
    files += [p for p in resources.files("itmlib.paper_numbers").iterdir() if str(p).endswith(".csv")]
    for f in files:
        text = "\n".join(ln for ln in f.read_text(encoding="utf-8").splitlines() if not ln.startswith("# "))
        out += [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", text)]
    return out


def unsupported_numbers(notebook: str, text: str) -> list[str]:
    """The decimal numbers of ``text`` that no committed table of ``notebook`` (nor the papers' numbers)
    holds, as rounded: a value v supports "12.3" when round(v, 1) == 12.3, also as a percentage
    (100 v) or a magnitude (|v|). Findings prose must come from the tables, so this list must be empty."""
    import re

    values = _table_numbers(notebook)
    bad = []
    prose = re.sub(r"```.*?```|`[^`\n]*`", " ", text, flags=re.S)   # code spans are parameters, not findings
    for raw in _DECIMAL.findall(prose):
        s = raw.replace("−", "-").replace(",", "").lstrip("+")
        x, d = float(s), len(s.split(".")[1])
        ok = any(round(v, d) == round(abs(x), d) or round(v, d) == x or round(100 * v, d) == round(abs(x), d)
                 or round(abs(v), d) == round(abs(x), d) for v in values)
        if not ok:
            bad.append(raw)
    return bad
