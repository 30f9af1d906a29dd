"""Notebook 09's level gate: a paper's claims are judged on the real-language world only once its main model
learned that world as well as the papers say it should, measured against VSE++ trained on no more images.

A comparison between two arms of a model that did not learn the world says nothing about the paper (on the
previous version of the world TERAN reached a third of VSE++'s Rsum and SSAMT half), so each gated paper
states its level before any run, from the paper's own standing against VSE++ (:data:`LEVELS`):

* TERAN MrSw reaches at least 0.8x VSE++'s test Rsum (the paper's Table 1, COCO 1K: 1.10x);
* SSAMT's +PM (w/ phrases) reaches VSE++'s (1.0x; the paper's Table 1, F30K: 1.20x).

The reference is VSE++ at the largest fraction of the training images not above the model's, its test Rsum
averaged over its seeds (:func:`levels`). A level is a bar for the model to clear, read on seed means, not a
claim: :func:`level_gate` turns a gated paper's verdicts into ``not judged (below its level: ...)``.

The world itself has a level too: :func:`floor_reading` reads VSE++ against the higher of two floors - the
training-free word overlap (:func:`itmlib.course.retrievers.lexical_floor`) and the co-occurrence counts of the
training captions (:func:`~itmlib.course.retrievers.cooccurrence_scores`) - and the world's ceiling
(:func:`~itmlib.course.retrievers.scene_ceiling`); a floor within :data:`FLOOR_MATCH` of VSE++ leaves the
papers' ideas no room to show, and :func:`world_gate` judges none of this world's claims while VSE++ on every
training image stays within it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from ..claims.seeds import seed_mean

__all__ = ["LEVELS", "levels", "level_gate", "world_gate", "FLOOR_MATCH", "FLOORS", "CEILINGS", "floor_reading"]

#: paper (the prefix of its replayed claims' ids, ``real_<paper>_``) -> (its main model, the share of VSE++'s
#: test Rsum it must reach, the paper's table, model and dataset the share is read against)
LEVELS = {"teran": ("TERAN mrsw", 0.8, ("teran_table1", "TERAN MrSw", None)),
          "ssamt": ("+PM (w/ phrases)", 1.0, ("ssamt_table1", "SSAMT", "F30K"))}


def _paper_ratio(key: str, model: str, dataset: str | None) -> str:
    """The paper's own model against its VSE++ row: ``"Table 1 (F30K): SSAMT Rsum 488.7 = 1.20x VSE++'s 407.9"``."""
    from ..metrics import METRIC_COLUMNS
    from ..paper_numbers import paper_table

    recalls = METRIC_COLUMNS[:METRIC_COLUMNS.index("rsum")]    # the six R@K an Rsum adds
    t = paper_table(key)
    if dataset:
        t = t[t.dataset == dataset]
    own, vse = (float(t[t.model == m][recalls].sum(axis=1).iloc[0]) for m in (model, "VSE++"))
    where = f" ({dataset})" if dataset else " (COCO 1K)"
    return f"Table 1{where}: {model} Rsum {own:.1f} = {own / vse:.2f}x VSE++'s {vse:.1f}"


def levels(vse: pd.DataFrame, runs: Mapping[str, tuple[pd.DataFrame, float]]) -> pd.DataFrame:
    """Each gated paper's main model beside the VSE++ it must reach. ``vse``: VSE++ runs (``method``,
    ``fraction``, ``seed``, ``rsum``; duplicates of one member dropped); ``runs``: paper -> (its runs, the
    fraction of the training images its models trained on). One row per paper of :data:`LEVELS` in ``runs``:
    ``claims of``, ``model``, ``fraction``, ``seeds``, ``rsum`` (mean), ``reference fraction``, ``reference
    seeds``, ``reference rsum``, ``share needed``, ``needed``, ``reached`` (None where either side has no runs),
    ``paper`` (the paper's own ratio)."""
    cols = ["method", "fraction", "seed", "rsum"]
    ref_all = (vse[cols][vse.method == "VSE++"].drop_duplicates(["fraction", "seed"])
               if len(vse) and set(cols) <= set(vse.columns) else pd.DataFrame(columns=cols))
    rows = []
    for paper, (model, share, source) in LEVELS.items():
        if paper not in runs:
            continue
        r, f = runs[paper]
        own = r[r.method == model] if len(r) and "rsum" in r.columns else pd.DataFrame(columns=cols)
        pool = ref_all[ref_all.fraction <= f + 1e-9]
        rf = float(pool.fraction.max()) if len(pool) else math.nan
        ref = pool[pool.fraction == rf]
        m, b = seed_mean(own.rsum), seed_mean(ref.rsum)
        rows.append({"claims of": paper, "model": model, "fraction": f, "seeds": int(own.seed.nunique()), "rsum": m,
                     "reference fraction": rf, "reference seeds": int(ref.seed.nunique()), "reference rsum": b,
                     "share needed": share, "needed": share * b,
                     "reached": None if math.isnan(m) or math.isnan(b) else bool(m >= share * b),
                     "paper": _paper_ratio(*source)})
    return pd.DataFrame(rows)


#: a verdict not judged for too few seeds (:func:`~itmlib.claims.verdicts.not_judged_seeds`): a gate's reason replaces
#: it, since more seeds of a model below its level (or on a world below its floor) still would not be judged
_TOO_FEW_SEEDS = r"^not judged \((\d+) seeds?(?:; a headline claim needs \d+)?\)$"


def _not_judged(out: pd.DataFrame, rows: pd.Series, why: str, *, not_run: bool = False) -> None:
    """``rows`` of ``out`` that hold a verdict, or are not judged for too few seeds (the count kept: "...; on 2
    seeds"), and, with ``not_run``, those whose arms did not run, turned into ``not judged (why)``; a row not
    judged for another reason keeps it."""
    from ..claims.verdicts import LABELS

    verdict = out.verdict.astype(str)
    kind = verdict.str.split(" (", regex=False).str[0]
    counted = verdict.str.extract(_TOO_FEW_SEEDS, expand=False)     # the seed count, NaN for any other verdict
    rows = rows & (kind.isin(LABELS) | counted.notna() | (not_run & (kind == "not run")))
    out.loc[rows, "verdict"] = [f"not judged ({why}; on {n} seed{'' if n == '1' else 's'})" if isinstance(n, str)
                                else f"not judged ({why})" for n in counted[rows]]
    out.loc[rows, "training"] = out.loc[rows, "training"].fillna("").astype(str).map(lambda s: f"{why}; {s}" if s else why)


def _against_floor(table: pd.DataFrame) -> tuple[str, float, float, float] | None:
    """(the higher floor's name, its Rsum, VSE++'s Rsum on every training image, VSE++'s Rsum less the floor's) from
    the floor table, or None while either is missing. The difference is the table's own ``rsum - floor`` where it
    has one (a committed table rounds Rsum to one decimal and the difference to two), else the Rsums'."""
    floors = table[table.model.isin(FLOORS)].sort_values("rsum")
    vse = table[(table.model == "VSE++") & (table.fraction == 1.0)]
    if not (len(floors) and len(vse)):
        return None
    f, v = float(floors.rsum.iloc[-1]), float(vse.rsum.iloc[0])
    gap = (float(vse["rsum - floor"].iloc[0]) - float(floors["rsum - floor"].iloc[-1])
           if "rsum - floor" in table.columns else v - f)
    return str(floors.model.iloc[-1]), f, v, gap


def world_gate(claims: pd.DataFrame, floors: pd.DataFrame) -> pd.DataFrame:
    """``claims`` with every verdict of this world turned into ``not judged (world below its floor: ...)`` or
    ``not judged (world within 10% of its floor: ...)`` unless VSE++ on every training image (``floors``: the floor
    table, :func:`floor_reading`) scores a test Rsum at least :data:`FLOOR_MATCH` above the higher of the two floors
    (:data:`FLOORS`): a world whose baseline has not learned more than word overlap retrieves cannot show what an
    idea adds to learning (the rule :func:`floor_reading` states, fixed before any run of the world). A claim whose
    arms have not run, or that has too few seeds, reads so too: no run of them could be judged on this world. With
    no VSE++ records the claims keep their verdicts (they say "not run" already)."""
    out, read = claims.copy(), _against_floor(floors)
    if read is None or read[2] >= read[1] * (1 + FLOOR_MATCH):
        return out
    name, f, v, _ = read
    where = "below its floor" if v <= f else f"within {FLOOR_MATCH:.0%} of its floor"
    why = (f"world {where}: VSE++ on every training image Rsum {v:.1f}, {name} {f:.1f}; "
           f"the gate needs {f * (1 + FLOOR_MATCH):.1f}")
    _not_judged(out, out.id.str.startswith("real_"), why, not_run=True)   # no run of any arm could be judged here
    return out


def level_gate(claims: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """``claims`` (a judged claims table) with every verdict of a paper whose model is below its level
    (:func:`levels`) turned into ``not judged (below its level: ...)``, or ``not judged (no VSE++ on no more
    images to set its level)`` when the model ran and the reference did not; the reason also goes to the
    ``training`` column. A row not judged for too few seeds takes the level's reason (more seeds of a model below
    its level would not be judged either; the count stays: "...; on 2 seeds"); one not judged for another reason
    keeps it."""
    out = claims.copy()
    for _, lv in table.iterrows():
        known = lv.reached is not None and not (isinstance(lv.reached, float) and math.isnan(lv.reached))
        if (known and bool(lv.reached)) or (not known and math.isnan(lv.rsum)):
            continue                 # reached, or the model did not run (its claims already say "not run")
        why = ("no VSE++ on no more images to set its level" if not known else
               f"below its level: {lv.model} Rsum {lv.rsum:.1f} < {lv['share needed']:g}x VSE++'s {lv['reference rsum']:.1f}")
        _not_judged(out, out.id.str.startswith(f"real_{lv['claims of']}_"), why)
    return out


#: the lexical floor "matches" a model when the model's test Rsum is less than this share above it
FLOOR_MATCH = 0.1
#: the floor table's rows (:func:`floor_reading`): the two floors a trained model is read against, and the ceiling
FLOORS = ("lexical floor (no training)", "word-category co-occurrence (training counts)")
CEILINGS = ("ceiling: identical category sets tie", "ceiling: identical scenes tie")


def floor_reading(table: pd.DataFrame) -> str:
    """One paragraph reading VSE++ on every training image against the higher of the two floors (:data:`FLOORS`:
    the training-free word overlap, the co-occurrence counts of the training captions) and the ceiling of identical
    scenes, from the floor table (``model``, ``fraction``, ``rsum``): a world whose VSE++ is less than
    :data:`FLOOR_MATCH` above the higher floor cannot show what the papers' ideas add to learning."""
    read = _against_floor(table)
    if read is None:
        return "VSE++ on every training image has no records on this world yet: nothing is read against the floor."
    name, f, v, gap = read
    verdict = ("VSE++ stays below it: a model that has not learned what word overlap retrieves cannot show what the "
               "papers' ideas add, so this world cannot test them" if v < f else
               f"It matches VSE++ (VSE++ less than {FLOOR_MATCH:.0%} above): this world cannot test the papers' ideas"
               if v < f * (1 + FLOOR_MATCH) else "Learning retrieves more than the floors here, so the papers' ideas have room to show")
    out = (f"VSE++ on every training image reaches test Rsum {v:.1f} against the higher floor's {f:.1f} ({name}; "
           f"{gap:+.2f}). {verdict}.")
    top = table[table.model == CEILINGS[-1]].rsum
    if len(top) and float(top.iloc[0]) > f and v > f:
        c = float(top.iloc[0])
        out += (f" The ceiling (no model can tell apart images whose scenes are identical) is {c:.1f}: VSE++ covers "
                f"{100 * gap / (c - f):.0f}% of the way from that floor to it.")
    elif len(top):
        out += f" The ceiling (no model can tell apart images whose scenes are identical) is {float(top.iloc[0]):.1f}."
    return out
