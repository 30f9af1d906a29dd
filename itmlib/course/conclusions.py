"""What the course concluded, drawn from the committed claims tables (:func:`itmlib.course.summary.all_claims`):
notebook 10's interval plot (:func:`verdict_plot`) and findings (:func:`findings_markdown`), the
README's per-paper lines (:func:`write_conclusions`), and re-judging a committed claims table by the
interval rule without its run tables (:func:`rejudge_committed`, ``python -m itmlib.course.conclusions NOTEBOOK ...``).
"""

from __future__ import annotations

import math
import os

import numpy as np
import pandas as pd

from ..paths import resolve_path
from .summary import PAPERS, _heading_counts, _ours, all_claims, claim_kinds, verdict_kind

__all__ = ["VERDICT_COLOURS", "verdict_plot", "findings_markdown", "paper_conclusions", "write_conclusions",
           "CONCLUSIONS_START", "CONCLUSIONS_END", "rejudge_committed"]


#: the colour of each verdict in every plot of the course
VERDICT_COLOURS = {"holds": "#1b9e77", "does not hold": "#d95f02", "inconclusive": "#7570b3", "not judged": "#bbbbbb"}


def _baseline_scale(row: pd.Series) -> float:
    """|baseline mean| of a claim, from its "ours" cell (or its threshold): intervals are drawn relative to it."""
    m, b = _ours(row.get("ours (model vs baseline)"))
    return abs(b) if np.isfinite(b) and b != 0 else math.nan


def verdict_plot(table: pd.DataFrame, *, ax_width: float = 4.6):
    """One panel per paper: every judged, non-deterministic claim's 95% interval of the paired seed
    difference, relative to the baseline's mean ((new - base) / |base|), coloured by verdict, with the
    paper's own relative effect as a black tick. Claims right of 0 move the way "higher" claims expect;
    for a "lower" claim the sign is flipped so that right of 0 is always "the paper's way"."""
    import matplotlib.pyplot as plt

    t = table[claim_kinds(table).isin(["paper", "control"])].copy()   # illustrations are never judged
    t["kind"] = t.verdict.map(verdict_kind)
    t["scale_"] = t.apply(_baseline_scale, axis=1)
    t = t[np.isfinite(pd.to_numeric(t.ci_low, errors="coerce")) & np.isfinite(t.scale_)]
    flip = np.where(t.expect == "lower", -1.0, 1.0)
    t["lo_"], t["hi_"] = (np.minimum(t.ci_low * flip, t.ci_high * flip) / t.scale_,
                          np.maximum(t.ci_low * flip, t.ci_high * flip) / t.scale_)
    t["mid_"] = t.difference * flip / t.scale_
    t["paper_"] = t.paper_effect * flip
    papers = [p for p in PAPERS.values() if (t.paper == p).any()]
    heights = [max(len(t[t.paper == p]), 2) for p in papers]
    fig, axes = plt.subplots(len(papers), 1, figsize=(ax_width + 4.4, 0.28 * sum(heights) + 1.2 * len(papers)),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax, paper in zip(axes[:, 0], papers):
        g = t[t.paper == paper].reset_index(drop=True)
        y = np.arange(len(g))[::-1]
        for yi, (_, r) in zip(y, g.iterrows()):
            c = VERDICT_COLOURS[r.kind]
            ax.plot([r.lo_, r.hi_], [yi, yi], color=c, lw=2.5, solid_capstyle="butt")
            ax.plot([r.mid_], [yi], "o", color=c, ms=4)
            if np.isfinite(r.paper_):
                ax.plot([r.paper_], [yi], "|", color="black", ms=9, mew=1.5)
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_yticks(y, [("★ " if h else "") + i for i, h in zip(g.id, g.headline)], fontsize=8)   # ids: distinct, short
        ax.set_xscale("symlog", linthresh=0.1, linscale=0.6)
        lo, hi = ax.get_xlim()
        ticks = [x for x in (-10, -1, -0.1, 0, 0.1, 1, 10) if lo <= x <= hi]
        ax.set_xticks(ticks, [f"{x:+.0%}" if x else "0" for x in ticks])
        ax.minorticks_off()
        ax.set_title(paper, fontsize=9, loc="left")
        ax.tick_params(axis="x", labelsize=8)
    axes[-1, 0].set_xlabel("(new - baseline) / |baseline|, the paper's way to the right  (95% CI; | = the paper)", fontsize=8)
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=VERDICT_COLOURS[k], lw=2.5, label=k) for k in ("holds", "does not hold", "inconclusive", "not judged")]
    handles.append(Line2D([], [], color="black", marker="|", ls="", ms=9, label="the paper's effect"))
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.45 / fig.get_figheight()))   # room above the panels for the legend
    fig.legend(handles=handles, fontsize=8, loc="upper center", ncol=len(handles), frameon=False)   # over no data
    return fig


def _claim_list(g: pd.DataFrame) -> str:
    return "; ".join(f"{c} ({notebook}, n={int(s)})" for c, notebook, s in zip(g.claim, g.notebook, g.seeds))


def findings_markdown(table: pd.DataFrame) -> str:
    """The "What we found" of the whole course, drawn from the claims tables: per paper, the verdict
    counts, each headline claim with its verdict, and which claims hold and do not hold."""
    out = []
    for paper, g in table.groupby("paper", sort=False):
        claims = g[claim_kinds(g) == "paper"]
        kinds = claims.verdict.map(verdict_kind)
        lines = [f"**{paper}.** {_heading_counts(g)}"]
        for _, r in claims[claims.headline].iterrows():
            lines.append(f"- headline: *{r.claim}* ({r.notebook}) - paper {r['paper (model vs baseline)']}, "
                         f"ours {r['ours (model vs baseline)'] or '-'}: **{r.verdict}**")
        for _, r in g[g.headline & (claim_kinds(g) == "control")].iterrows():
            lines.append(f"- our control: *{r.claim}* ({r.notebook}), ours {r['ours (model vs baseline)'] or '-'}: "
                         f"**{r.verdict}**")
        for k in ("holds", "does not hold"):
            rest = claims[(kinds == k) & ~claims.headline]
            if len(rest):
                lines.append(f"- other claims that {'hold' if k == 'holds' else 'do not hold'}: {_claim_list(rest)}")
        n_inc = int(((kinds == "inconclusive") & ~claims.headline).sum())
        if n_inc:
            lines.append(f"- {n_inc} other claims are inconclusive: their interval includes no effect")
        n_nj = int(((kinds == "not judged") & ~claims.headline).sum())
        if n_nj:
            lines.append(f"- {n_nj} other claims are not judged: their arms did not train to a plateau, or ran on "
                         "fewer than 3 seeds, or not at all (each claims table says which)")
        out.append("\n".join(lines))
    return "\n\n".join(out)


def _real_word(verdict: str) -> str:
    """A verdict on real captions as the README gives it: its kind, with the gate's word beside a ``not judged``
    a gate withheld ("not judged: world below its floor", "not judged: world within 10% of its floor", "not
    judged: below its level"), or "not run" for a claim whose arms have no runs yet."""
    if verdict.startswith("not run"):
        return "not run"
    gate = verdict.split(" (", 1)[1].split(":", 1)[0] if verdict.startswith("not judged (") else ""
    kind = verdict_kind(verdict)
    return f"{kind}: {gate}" if gate.startswith("world ") or gate == "below its level" else kind


def paper_conclusions(table: pd.DataFrame) -> str:
    """One line per paper for the top README: counts and the headline claims' verdicts, a claim judged again on
    real captions (``real_<id>``, :func:`itmlib.claims.replayed_claims`) beside its first verdict; our controls
    are in ``results/README.md``."""
    from ..claims.registry import replayed_from

    def listed(rows: pd.DataFrame, every: pd.DataFrame) -> list[str]:
        verdicts = dict(zip(every.id, every.verdict.map(verdict_kind)))
        reals = dict(zip(every.id, every.verdict.astype(str).map(_real_word)))
        parts, shown = [], set(rows.id)
        for i, c in zip(rows.id, rows.claim):
            if replayed_from(i) != i and replayed_from(i) in shown:
                continue                                 # a replay stands beside its first verdict
            real = reals.get(f"real_{i}")
            parts.append(f"{c} - *{verdicts[i]}*" + (f" (real captions: *{real}*)" if real else ""))
        return parts

    out = []
    for paper, g in table.groupby("paper", sort=False):
        kind = claim_kinds(g)
        head = g[g.headline & (kind == "paper")]
        judged = head[head.verdict.map(verdict_kind) != "not judged"]
        shown = set(judged.id)
        beside = head.id.map(lambda i: replayed_from(i) != i and replayed_from(i) in shown)   # shown in ( )
        waiting = int(((head.verdict.map(verdict_kind) == "not judged") & ~beside).sum())   # e.g. arms not trained yet
        parts = listed(judged, g)
        line = f"- **{paper}**: {_heading_counts(g).split(' Headline claims')[0].split(' Our ')[0].split(' Apart from')[0]}"
        if parts:
            line += " Headline: " + "; ".join(parts) + "."
        if waiting:
            line += f" {waiting} more headline claim{'s are' if waiting > 1 else ' is'} not judged yet."
        out.append(line)
    return "\n".join(out)


CONCLUSIONS_START = "<!-- conclusions:start (generated by itmlib.course.summary.write_conclusions; do not edit) -->"
CONCLUSIONS_END = "<!-- conclusions:end -->"


def write_conclusions(readme: str | os.PathLike[str] = "README.md", results_dir: str | os.PathLike[str] = "results") -> str:
    """Rewrite the generated per-paper conclusions block of the top ``README.md`` (between
    :data:`CONCLUSIONS_START` and :data:`CONCLUSIONS_END`) from the committed claims tables."""
    path = resolve_path(readme)
    text = path.read_text(encoding="utf-8")
    if CONCLUSIONS_START not in text or CONCLUSIONS_END not in text:
        raise ValueError(f"{path} has no conclusions block ({CONCLUSIONS_START} ... {CONCLUSIONS_END})")
    head, rest = text.split(CONCLUSIONS_START, 1)
    text = head + CONCLUSIONS_START + "\n" + paper_conclusions(all_claims(results_dir)) + "\n" + CONCLUSIONS_END \
        + rest.split(CONCLUSIONS_END, 1)[1]
    path.write_text(text, encoding="utf-8")
    return text


def rejudge_committed(notebook: str, results_dir: str = "results", table: str = "claims") -> pd.DataFrame:
    """Re-judge ``<results_dir>/<notebook>/<table>.csv`` in place by :func:`rejudge_claims`, header
    kept (``python -m itmlib.course.summary NOTEBOOK ...``); returns the new table."""
    from .results import read_table, write_table
    from ..claims.judge import rejudge_claims

    meta, df = read_table(f"{results_dir}/{notebook}/{table}.csv")
    meta = {k: v for k, v in meta.items() if k not in ("table", "itmlib")}
    new = rejudge_claims(df)
    write_table(new, results_dir, notebook, table, meta)
    return new


if __name__ == "__main__":  # pragma: no cover
    import sys

    for nb in sys.argv[1:]:
        t = rejudge_committed(nb)
        print(f"{nb}: " + ", ".join(f"{k} {v}" for k, v in t.verdict.str.extract(r"^(\w[\w ]*?)(?: \(|$)")[0]
                                     .value_counts().items()))
