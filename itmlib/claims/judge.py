"""A notebook's claims judged on its run tables: :func:`judge_claims` (every claim of the notebook, the rule of
:mod:`itmlib.claims.verdicts`, each claim's arms and whether they trained, :mod:`itmlib.training.convergence`)
and :func:`rejudge_claims` (a committed claims table re-judged from its stored columns).

A claim whose methods were not run stays in the table with the verdict "not run", so changing a notebook
parameter can never make a claim vanish silently.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from .seeds import seed_mean
from .verdicts import (CLAIM_COLUMNS, LABELS, MIN_SEEDS, _r, claim_verdict, decide, format_verdict, mean_interval,
                       ours_number)

__all__ = ["judge_claims", "rejudge_claims", "DERIVED_METRICS"]

#: metrics a claim may name that a run table does not hold but adds up from its columns: ``r1_sum`` is the R@1 of
#: both directions, the pair TERAN's Table 1 and 4 quote ("65.0/77.7"), judged as one number
DERIVED_METRICS = {"r1_sum": ("t2i_r1", "i2t_r1")}


def _with_derived(runs: pd.DataFrame, metric: str) -> pd.DataFrame:
    """``runs`` with the derived ``metric`` (:data:`DERIVED_METRICS`) added where it is missing and its parts are there."""
    parts = DERIVED_METRICS.get(metric)
    if metric in runs or not parts or not all(p in runs for p in parts):
        return runs
    return runs.assign(**{metric: sum(runs[p].astype(float) for p in parts)})


def _ours_as_the_paper(c: Any, runs: pd.DataFrame, model: str, baseline: str) -> str:
    """Our side in the columns the paper quotes, where it quotes several ("39.6/67.6 vs 30.8/56.8" beside the
    paper's "65.0/77.7 vs 57.5/70.8"): the arms' means over the seeds both ran; "" where it quotes one column or
    the rows lack one of them."""
    cols = (c.paper_cells or {}).get("column")
    if not isinstance(cols, list) or set(cols) != set(DERIVED_METRICS.get(c.metric, ())) or not all(k in runs for k in cols) \
            or not baseline:   # shown only where the judged metric is their sum: the cell and the difference agree
        return ""
    m, b = runs[runs.method == model], runs[runs.method == baseline]
    if "seed" in runs:
        both = set(m.seed) & set(b.seed)
        m, b = m[m.seed.isin(both)], b[b.seed.isin(both)]
    if not len(m) or not len(b):
        return ""
    side = lambda d: "/".join(ours_number(d[k].astype(float).mean()) for k in cols)   # noqa: E731
    return f"{side(m)} vs {side(b)}"


def _arms(training: Any, c: Any, rows: pd.DataFrame) -> tuple[str, list[str]]:
    """(the ``;``-joined arm labels of a claim's rows of one method, the states of those that did not converge):
    the rows' members (a pooled table's ``members`` column, else the method), fractions and seeds, and the
    claim's ``where`` values that are config keys (:class:`itmlib.training.convergence.Training`). Rows of single
    runs (one member a row) are matched to the records that hold their values - the claim's metric, or the run's
    Rsum where a table derived the metric (06's Figure 3 rate) - so that a member trained under two recipes
    names the one the rows came from."""
    if training is None or not len(rows):
        return "", []
    names = rows["members"].astype(str) if "members" in rows else rows.method
    members = sorted({m for v in names for m in v.split(";")})
    by_images = "train_images" in rows and rows.train_images.notna().all()   # a fraction a table relabelled (06)
    single = "seed" in rows and not names.str.contains(";").any()

    def values(col: str) -> dict[tuple[str, int], float]:
        return {(m, int(s)): float(v) for m, s, v in zip(names, rows.seed, pd.to_numeric(rows[col], errors="coerce"))
                if np.isfinite(v)}

    def arms(col: str | None) -> pd.DataFrame:
        return training.arms(members, fractions=rows.fraction.unique() if "fraction" in rows and not by_images else None,
                             seeds=rows.seed.unique() if "seed" in rows else None,
                             images=rows.train_images.unique() if by_images else None,
                             recipe={k: v for k, v in c.where.items() if k != "fraction"},
                             values=values(col) if col else None, metric=col or c.metric)

    keys = [k for k in dict.fromkeys((c.metric, "rsum")) if k in rows] if single else []
    t = min((arms(k) for k in keys), key=len) if keys else arms(None)   # the narrowest: the records the rows hold
    return ";".join(t.arm), [f"{a}: {st}" for a, st in zip(t.arm, t.state) if st != "converged"]


def _margin(c: Any, runs: pd.DataFrame, baseline: str) -> float | None:
    """A claim's margin by its rule (:func:`itmlib.claims.rule_margin`): a share of our baseline arm is taken of
    the baseline's mean over the seeds judged (measured with it, never from the claim's difference)."""
    from .paper_side import rule_margin

    if not c.margin_rule:
        return c.margin
    base = seed_mean(runs[runs.method == baseline][c.metric]) if baseline and baseline in set(runs.method) \
        else None
    if base is None and c.margin_rule.get("of", "baseline") == "baseline" and "share" in c.margin_rule:
        return None        # the baseline was not run: the claim reads "not run"
    return rule_margin(c, base)


def judge_claims(notebook: str, tables: pd.DataFrame | Mapping[str, pd.DataFrame], *,
                 claims: list[Any] | None = None, rename: Mapping[str, str] | None = None,
                 records: Any = None, planned: Mapping[str, int] | None = None) -> pd.DataFrame:
    """The claims table of ``notebook``: every claim of ``itmlib/paper_numbers/claims_*.yaml``
    that names this notebook, judged on this run's ``tables`` by :func:`claim_verdict`.

    ``tables``: one run table, or a mapping table name -> run table when the claims of the
    notebook read several (a claim's ``table:`` names it; default ``"runs"``). Each run
    table has ``method`` and ``seed`` columns and the claims' metric columns. ``rename``
    maps a claim's method names to this run's (e.g. a notebook parameter chose another
    main model). A claim whose methods are absent keeps its row, verdict ``"not run"``.

    ``records`` (the notebook's ``members/`` folder, or a :class:`~itmlib.training.convergence.Training`) names each
    claim's arms (``model_arms``, ``baseline_arms``) and their ``training``: ``converged``, or the arms that
    did not train and why. **The gate**: a claim resting on an arm that is still rising or was selected at
    its first epoch reads ``not judged (still rising)`` / ``not judged (selected at epoch 1)``, never a
    verdict; one on fewer than :data:`MIN_SEEDS` seeds ``not judged (2 seeds)``, a headline claim on fewer
    than :data:`HEADLINE_SEEDS` likewise. A claim whose YAML names the recipes under which its arm collapses
    (``collapses``) is judged, its ``training`` cell ``collapses (probed: ...)``: a finding about the method.
    One whose YAML names a probe on which its baseline still rises past the arms' budget (``rising_past_budget``)
    reads ``not judged (rising past its budget)``, whatever the records' own curves say.

    ``planned`` (arm -> seeds its grid plans; :meth:`~itmlib.training.grid.Grid.seeds_planned`): a grid read while
    it still trains. A claim on an arm with fewer seeds in than planned reads ``not judged (still training: <arm>
    <k> of <n> seeds in)``, not ``not run``: the arm is on its way, and the verdict waits for all its seeds.
    """
    from .paper_side import paper_side, ratio_threshold
    from .registry import claims_for
    from ..training.convergence import Training

    training = records if isinstance(records, Training) or records is None else Training.of(records)

    frames = {"runs": tables} if isinstance(tables, pd.DataFrame) else dict(tables)
    rename = dict(rename or {})
    rows = []
    for c in (claims if claims is not None else claims_for(notebook)):
        runs = _claim_runs(c, frames)
        model, baseline = rename.get(c.model, c.model), rename.get(c.baseline, c.baseline) if c.baseline else ""
        runs = _with_derived(runs, c.metric) if len(runs) else runs
        r = claim_verdict(runs, baseline, model, c.metric, c.expect, c.claim, paper_side(c), exact=c.exact, bootstrap=c.bootstrap,
                          threshold=ratio_threshold(c) if c.expect == "ratio" else c.threshold, pair_by=c.pair_by,
                          margin=_margin(c, runs, baseline), headline=c.headline) if len(runs) else None
        if r is None:
            r = _absent_row(c, runs, model, baseline)
        if r.get("ours (model vs baseline)") and (paper_way := _ours_as_the_paper(c, runs, model, baseline)):
            r["ours (model vs baseline)"] = paper_way   # the paper's columns; the judged metric is their sum
        marms, barms, state, bad = _training(training, c, runs, model, baseline)
        state = _gate(c, r, state, bad)
        if waiting := _still_training(planned or {}, runs, (model, baseline), training.records if training else ()):
            r["verdict"], state = f"not judged (still training: {waiting})", "still training"
        rows.append({"id": c.id, "paper table": c.paper_table, **r, "note": c.note, "model_arms": marms,
                     "baseline_arms": barms, "training": state})
    return pd.DataFrame(rows, columns=CLAIM_COLUMNS)


def _gate(c: Any, r: dict[str, Any], state: str, bad: list[str]) -> str:
    """The gate of :func:`judge_claims` on claim ``c``'s row ``r`` (changed in place), given its arms'
    ``training`` cell ``state`` and the arms that did not train (``bad``); returns the training cell."""
    from ..training.convergence import RISING_PAST

    if bad and c.collapses:   # probed recipes all collapse: judged, and the training cell and the claim say so
        fell = ", ".join(dict.fromkeys(b.split("@")[0] for b in bad))
        r["claim"] = (f"{r['claim']} - here {fell} alone collapses under every recipe probed, so the verdict says "
                      "whether it trains with them, not whether they add to a model that trains")
        state, bad = f"collapses (probed: {c.collapses}); {state}", []
    if c.rising_past_budget and state:   # a longer probe: the baseline had not finished at the arms' budget
        state, bad = f"{RISING_PAST} (probed: {c.rising_past_budget}); {state}", [*bad, f"baseline: {RISING_PAST}"]
    v = str(r["verdict"])
    judged = v.split(" (")[0] in LABELS and "deterministic" not in v
    if c.kind == "illustration" and v.split(" (")[0] in LABELS:   # shown, never judged
        r["verdict"] = "not judged (an illustration)"
    elif judged and bad:
        r["verdict"] = f"not judged ({bad[0].rsplit(': ', 1)[1]})"
    return state


def _still_training(planned: Mapping[str, int], runs: pd.DataFrame, arms: tuple[str, ...],
                    records: Iterable[Mapping[str, Any]] = ()) -> str:
    """The arms among ``arms`` with fewer seeds in ``runs`` than ``planned`` gives them, as ``<arm> <k> of <n>
    seeds in``, then the training time the missing seeds would take by :func:`_hours_left` where the member
    ``records`` state seconds (empty when every planned arm is complete)."""
    if not any(a in planned for a in arms):
        return ""
    have = runs.groupby("method").seed.nunique() if len(runs) else pd.Series(dtype=int)
    seeds_in = {a: int(have.get(a, 0)) for a in arms if a in planned and int(have.get(a, 0)) < planned[a]}
    text = "; ".join(f"{a} {k} of {planned[a]} seeds in" for a, k in seeds_in.items())
    missing = {a: planned[a] - k for a, k in seeds_in.items()}
    records = list(records)
    hours = _hours_left(missing, records)
    where = "/".join(sorted({str(r["device"]) for r in records if r.get("device")})) or "its machine"
    return f"{text}; ~{hours:.1f} h more on {where} at the records' median member" if text and hours else text


def _hours_left(missing: Mapping[str, int], records: list[Mapping[str, Any]]) -> float:
    """The hours ``missing`` (arm -> seeds it lacks) would train: per seed, the median ``seconds`` of the arm's
    own member records, or, for an arm none is in yet, of every record given (0 where none states seconds)."""
    def median(recs: Iterable[Mapping[str, Any]]) -> float:
        secs = [float(r["seconds"]) for r in recs if r.get("seconds") is not None]
        return float(np.median(secs)) if secs else 0.0

    every = median(records)
    return sum(k * (median(r for r in records if r.get("member") == a) or every) for a, k in missing.items()) / 3600


def _claim_runs(c: Any, frames: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The rows of the run table claim ``c`` reads, narrowed to its ``where`` (an empty table - the arms were
    not trained - stays empty and reads "not run")."""
    if c.table not in frames:
        raise ValueError(f"claim {c.id!r} reads run table {c.table!r}; given: {sorted(frames)}")
    runs = frames[c.table]
    if c.where and len(runs):
        for col, val in c.where.items():
            if col not in runs.columns:
                raise ValueError(f"claim {c.id!r}: run table {c.table!r} has no column {col!r}")
            runs = runs[np.isclose(runs[col], val)] if isinstance(val, float) else runs[runs[col] == val]
    return runs


def _absent_row(c: Any, runs: pd.DataFrame, model: str, baseline: str) -> dict[str, Any]:
    """The row of a claim whose methods (or rows) are absent from its run table: ``not run (... absent)``."""
    from .paper_side import paper_side

    absent = (sorted({model, baseline} - set(runs.method) - {""}) if len(runs) else
              [f"rows with {', '.join(f'{k} {v}' for k, v in c.where.items())}"] if c.where else ["its runs"])
    return {"claim": c.claim, "paper (model vs baseline)": paper_side(c), "metric": c.metric, "model": model,
            "baseline": baseline, "ours (model vs baseline)": "", "difference": math.nan,
            "spread (std of paired diff)": math.nan, "ci_low": math.nan, "ci_high": math.nan, "seeds": 0,
            "verdict": f"not run ({', '.join(absent)} absent)"}


def _training(training: Any, c: Any, runs: pd.DataFrame, model: str, baseline: str) -> tuple[str, str, str, list[str]]:
    """(model arms, baseline arms, the training cell, the arms that did not train): ``converged``, the arms
    that did not train and why, or ``<method>: no records`` for an arm no record holds (a computed baseline,
    chance, never has records)."""
    marms, mbad = _arms(training, c, runs[runs.method == model]) if len(runs) else ("", [])
    barms, bbad = _arms(training, c, runs[runs.method == baseline]) if len(runs) and baseline else ("", [])
    bad = mbad + bbad
    missing = [a for a, rows_of, computed in ((model, marms, False), (baseline, barms, c.computed_baseline))
               if a and not computed and not rows_of]
    state = ("" if not (marms or barms) else "; ".join(bad) if bad else
             f"{', '.join(missing)}: no records" if missing else "converged")
    return marms, barms, state, bad

def rejudge_claims(table: pd.DataFrame) -> pd.DataFrame:
    """A committed claims table re-judged by :func:`decide` from its own stored columns (mean
    paired difference, its std, seeds): for tables whose run records are not committed.

    Deterministic rows, rows not run, and non-deterministic ``at_most`` / ``at_least`` rows that
    stored the worst seed rather than the mean (tables written before the interval rule; they
    become inconclusive unless re-run) are handled as said; every other row gets ``ci_low``,
    ``ci_high`` and a verdict from the interval. Claims are looked up by ``id``."""
    from .paper_side import ratio_threshold, rule_margin
    from .registry import claim

    out = table.copy()
    for col in ("ci_low", "ci_high"):
        if col not in out.columns:
            out[col] = math.nan
    for i, r in out.iterrows():
        v = str(r["verdict"])
        if "deterministic" in v or "bootstrap" in v or v.startswith("not run"):
            continue   # no seeds to build an interval from: a bootstrap row keeps the interval its draws gave
        c = claim(str(r["id"]))
        n = int(r["seeds"])
        sd = float(r["spread (std of paired diff)"])
        mean = float(r["difference"])
        if c.expect in ("at_most", "at_least") and "(mean of" not in str(r["ours (model vs baseline)"]):
            lo = hi = math.nan   # stored the worst seed, not the mean: nothing to build an interval on
            label = "inconclusive" if n < MIN_SEEDS else None
            if label is None:
                raise ValueError(f"claim {c.id!r}: the committed row stores the worst of {n} seeds, not their mean; "
                                 "re-run the notebook to judge it")
            out.at[i, "verdict"] = f"inconclusive (n={n}, no interval: re-run to judge)"
        elif c.expect == "ratio":   # the stored mean and std are the per-seed ratio's; judged against the rule's threshold
            threshold = ratio_threshold(c)
            lo, hi = mean_interval(mean, sd, n)
            label = decide("ratio", lo - threshold, hi - threshold, n)
            out.at[i, "verdict"] = format_verdict(label, n, lo, hi)[:-1] + f", x{threshold:.2f} needed)"
        else:
            lo, hi = mean_interval(mean, sd, n)
            margin = c.margin
            if c.margin_rule:   # a share of our baseline: its mean is the "vs" side of the stored "ours" cell
                side = str(r.get("ours (model vs baseline)", "")).split(" vs ")
                base = float(side[1].split()[0]) if len(side) > 1 else None
                margin = rule_margin(c, base) if base is not None or "share" not in c.margin_rule else None
            shown = margin if c.expect in ("same", "non_inferior") else None
            out.at[i, "verdict"] = format_verdict(decide(c.expect, lo, hi, n, margin or 0.0), n, lo, hi, shown)
        out.at[i, "ci_low"], out.at[i, "ci_high"] = _r(lo), _r(hi)
    return out[[c for c in CLAIM_COLUMNS if c in out.columns] + [c for c in out.columns if c not in CLAIM_COLUMNS]]
