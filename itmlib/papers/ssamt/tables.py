"""Notebook 06's tables for Fan et al.: the per-seed gains its claims read and the paper's numbers beside ours."""

from __future__ import annotations


import numpy as np
import pandas as pd

from ...config import check_choice, check_fraction
from .configs import PAPER_NAMES, arm_name


def pm_gains(runs: pd.DataFrame, metric: str = "rsum") -> pd.DataFrame:
    """Table 5's question per seed: the gain of PM (SSAMT - SSAMT w/o PM) and of LM (w/o PM - w/o PM&LM) at
    every fraction, plus ``method`` rows "PM gain, smallest fraction" / "PM gain, all data" for the claim."""
    names = {v: k for k, v in PAPER_NAMES.items()}
    rows = []
    for (f, s), g in runs.groupby(["fraction", "seed"]):
        v = g.set_index("method")[metric]
        for gain, (a, b) in {"PM gain": ("SSAMT", "SSAMT w/o PM"), "LM gain": ("SSAMT w/o PM", "SSAMT w/o PM&LM")}.items():
            if names[a] in v and names[b] in v:
                rows.append({"fraction": f, "seed": s, "gain": gain, metric: v[names[a]] - v[names[b]]})
    out = pd.DataFrame(rows, columns=["fraction", "seed", "gain", metric])
    if out.empty:
        return out.assign(method=[])
    pm = out[out.gain == "PM gain"]
    lo, hi = pm.fraction.min(), pm.fraction.max()
    tagged = []
    if hi == 1.0 and lo < hi:
        tagged = [pm[pm.fraction == lo].assign(method="PM gain, smallest fraction"),
                  pm[pm.fraction == hi].assign(method="PM gain, all data")]
    return pd.concat([out.assign(method=out.gain + " at " + out.fraction.map("{:g}".format)), *tagged],
                     ignore_index=True)


def with_paper_columns(table: pd.DataFrame, which: str) -> pd.DataFrame:
    """``table`` (a ``method`` column; ``fraction`` for Table 5) with the paper's numbers beside ours:
    ``"table3"`` (paper R@1 both ways and Rsum, MS-COCO 1K), ``"table4"`` (the six accuracies, MS-COCO),
    ``"table5"`` (Rsum at the fraction, Flickr30K), ``"table1"`` (methods ``SSAMT`` and ``VSE++``: Rsum and R@1
    on Flickr30K, where the paper prints every VSE++ cell)."""
    from ...paper_numbers import paper_table

    check_choice("which", which, ("table1", "table3", "table4", "table5"))
    out = table.copy()
    if which == "table1":
        p = paper_table("ssamt_table1")
        p = p[p.dataset == "F30K"].set_index("model")
        for c in ("i2t_r1", "t2i_r1", "rsum"):
            out[f"paper {c} (F30K)"] = [p.loc[m, c] if m in p.index else np.nan for m in out.method]
        return out
    if which == "table3":
        p = paper_table("ssamt_table3")
        p["rsum"] = p[["i2t_r1", "i2t_r5", "i2t_r10", "t2i_r1", "t2i_r5", "t2i_r10"]].sum(1)
        keyed = {arm_name(r.model, bool(r.phrases)): r for r in p.itertuples()}
        for c in ("i2t_r1", "t2i_r1", "rsum"):
            out[f"paper {c}"] = [getattr(keyed[m], c) if m in keyed else np.nan for m in out.method]
        return out
    out["paper row"] = out.method.map(PAPER_NAMES)
    if which == "table4":
        p = paper_table("ssamt_table4").set_index("model")
        for c in p.columns:
            out[f"paper {c}"] = [p.loc[r, c] if r in p.index else np.nan for r in out["paper row"]]
        return out
    p = paper_table("ssamt_table5").set_index(["model", "fraction"])["rsum"]
    out["paper rsum"] = [p.get((r, float(f)), np.nan) for r, f in zip(out["paper row"], out.fraction)]
    return out


def relative_fractions(runs: pd.DataFrame, base: float) -> pd.DataFrame:
    """``runs`` with ``fraction`` counted in the base subset every run starts from (``make tables`` trains on a
    ``base`` fraction of the images): Table 3's runs are then 1.0 ("all data"), Table 5's 0.75 ... 0.25, as the
    claims (``where: {fraction: 1.0}``) and the paper count them."""
    check_fraction("base", base)
    return runs.assign(fraction=(runs.fraction / base).round(4))


def figure3_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Per seed: how often the lowest-scoring phrase of a negative caption is false of the image (``rate``),
    for every run with phrase nodes, and the ``chance`` of picking a false one at random."""
    r = runs[runs.fraction == 1.0].dropna(subset=["false_hit"])
    # with each run's training images and Rsum: what names the member record a rate came from (the claims' arms)
    model_rows = r[["seed", "method", "false_hit"] + [c for c in ("train_images", "rsum") if c in r]
                   ].rename(columns={"false_hit": "rate"})
    chance = r.groupby("seed", as_index=False)["false_chance"].first().rename(columns={"false_chance": "rate"})
    return pd.concat([model_rows, chance.assign(method="chance")], ignore_index=True)


def longer_table(runs: pd.DataFrame, longer_runs: pd.DataFrame, longer: float) -> pd.DataFrame:
    """The "starved of training" test: per longer arm (``"<arm> x<longer> epochs"`` in ``longer_runs``), its Rsum
    beside its twin's in ``runs``, the paired seed difference, its 95% interval and the verdict of "longer is
    higher" (:func:`itmlib.claims.verdicts.compare`)."""
    from ...claims.verdicts import compare

    both = pd.concat([runs, longer_runs], ignore_index=True)
    rows = []
    for k in dict.fromkeys(longer_runs.method):
        base = k.rsplit(" x", 1)[0]
        if base not in set(runs.method):
            raise ValueError(f"longer arm {k!r} has no twin {base!r} among the runs")
        c = compare(both, "rsum", base, k).iloc[0]
        rows.append({"arm": base, "rsum": c[base], f"rsum, x{longer:g} epochs": c[k], "difference": c["mean_diff"],
                     "ci_low": c["ci_low"], "ci_high": c["ci_high"], "seeds": c["seeds"], "verdict": c["verdict"]})
    return pd.DataFrame(rows).assign(paper="not in the paper: tests our explanation of the low Rsum")
