"""Seed statistics and claim verdicts, shared by every paper's notebook.

A run table has one row per (method, seed) (and any grouping columns) with metric
columns. :func:`summarize` gives mean and sample std over seeds; :func:`compare` the
paired seed differences d_s = new_s - base_s over n seeds and the 95% confidence interval
of their mean with Student's t on n - 1 degrees of freedom:

    CI = mean(d) ± t_{0.975, n-1} · std(d) / sqrt(n)

and one rule turns the interval into a verdict (:func:`decide`), exactly one of
``holds``, ``does not hold`` or ``inconclusive``:

- a direction claim ("higher", "lower") **holds** when the interval excludes 0 on the
  claimed side, **does not hold** when it excludes 0 on the other side, and is
  **inconclusive** otherwise;
- a "same" claim carries an equivalence margin m (its YAML entry says why; no margin: m = 0,
  so noise can never prove equivalence): **holds** when the interval lies inside [-m, m],
  **does not hold** when it lies wholly outside, **inconclusive** otherwise;
- ``at_most`` / ``at_least`` a threshold: the interval of the model's mean against the threshold;
- with fewer than :data:`MIN_SEEDS` seeds every verdict is **inconclusive**, interval shown;
- deterministic measurements (``exact``: a metric on a fixed ranking, no seed) keep their
  rule - every paired instance must satisfy the claim - and say "(deterministic)".

The claims themselves are data: ``itmlib/paper_numbers/claims_<paper>.yaml``
(:mod:`itmlib.claims` reads them), and :func:`judge_claims` judges every claim of a
notebook with :func:`claim_verdict` on this run's tables. A claim whose methods were not
run stays in the table with the verdict "not run", so changing a notebook parameter can
never make a claim vanish silently. :func:`rejudge_claims` applies the rule to a committed
claims table from its stored mean, spread and seeds, without the run tables.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np
import pandas as pd

__all__ = ["summarize", "paired_differences", "mean_interval", "decide", "format_verdict", "compare", "claim_verdict",
           "judge_claims", "rejudge_claims", "CLAIM_COLUMNS", "LEVEL", "MIN_SEEDS", "LABELS", "HEADLINE_SEEDS",
           "not_judged_seeds"]

#: the confidence level of every interval
LEVEL = 0.95
#: no decisive (holds / does not hold) verdict on fewer seeds than this
MIN_SEEDS = 3
#: the three verdicts a claim can get
LABELS = ("holds", "does not hold", "inconclusive")

#: the columns of every claims table (the order the notebooks and notebook 09 read)
CLAIM_COLUMNS = ["id", "paper table", "claim", "paper (model vs baseline)", "metric", "model", "baseline",
                 "ours (model vs baseline)", "difference", "spread (std of paired diff)", "ci_low", "ci_high",
                 "seeds", "verdict", "note", "model_arms", "baseline_arms", "training"]
#: a headline claim is judged on at least this many seeds
HEADLINE_SEEDS = 5


def summarize(runs: pd.DataFrame, by: list[str], columns: list[str] | None = None) -> pd.DataFrame:
    """Mean and sample std over seeds per group: columns ``<metric>`` and ``<metric>_std``, ``seeds``, and
    where the runs carry ``best_epoch``, ``best epochs`` (each seed's selected epoch, in seed order: did the
    arm train to a plateau, or was it chosen at its last or first epoch?).

    ``columns`` defaults to the :data:`~itmlib.metrics.METRIC_COLUMNS` present in ``runs``.
    With one seed the std is NaN (undefined), not 0: a single run shows no spread."""
    from .metrics import METRIC_COLUMNS

    columns = columns or [c for c in METRIC_COLUMNS if c in runs]
    g = runs.groupby(by, sort=False)[columns]
    mean, std = g.mean(), g.std(ddof=1)
    out = mean.copy()
    for c in columns:
        out[f"{c}_std"] = std[c]
    out["seeds"] = g.size()
    if "best_epoch" in runs and "best_epoch" not in columns:
        ordered = runs.sort_values("seed", kind="stable") if "seed" in runs else runs
        out["best epochs"] = ordered.groupby(by, sort=False)["best_epoch"].agg(
            lambda e: " ".join(str(int(x)) for x in e if pd.notna(x)))
    return out.reset_index()


def mean_interval(mean: float, sd: float, n: int, level: float = LEVEL) -> tuple[float, float]:
    """The ``level`` confidence interval of a mean of ``n`` values with sample std ``sd``:
    mean ± t_{(1+level)/2, n-1} · sd / sqrt(n). (NaN, NaN) for n < 2 (no spread to scale)."""
    if n < 2 or not (np.isfinite(mean) and np.isfinite(sd)):
        return math.nan, math.nan
    from scipy.stats import t

    half = float(t.ppf((1 + level) / 2, n - 1)) * sd / math.sqrt(n)
    return mean - half, mean + half


def paired_differences(runs: pd.DataFrame, base: str, new: str, metric: str, pair_by: str = "seed"
                       ) -> tuple[pd.Series, pd.Series, pd.Series, float, float, tuple[float, float]]:
    """(base values, new values, paired d = new - base, mean d, std d, 95% interval of mean d).

    Rows of the two methods are paired on ``pair_by``, and only paired rows count: where one method has
    more seeds than the other (a headline arm's extra seeds), the base and new values returned are those
    of the shared seeds, so "model vs baseline" and the difference describe the same runs. With fewer
    than two pairs the std and the interval are NaN."""
    a = runs[runs.method == base].set_index(pair_by)[metric].astype(float)
    b = runs[runs.method == new].set_index(pair_by)[metric].astype(float)
    if not (a.index.is_unique and b.index.is_unique):
        raise ValueError(f"more than one row per {pair_by} for {base!r} or {new!r} ({metric})")
    d = (b - a).dropna()
    a, b = a[d.index], b[d.index]
    mean = float(d.mean()) if len(d) else math.nan
    sd = float(d.std(ddof=1)) if len(d) > 1 else math.nan
    return a, b, d, mean, sd, mean_interval(mean, sd, len(d))


def decide(expect: str, lo: float, hi: float, n: int, margin: float = 0.0, *, headline: bool = False) -> str:
    """The verdict of an interval [lo, hi] of mean(new - base) (or of mean(new) - threshold for
    ``at_most`` / ``at_least``) from ``n`` seeds: one of :data:`LABELS` (see the module docstring).

    >>> decide("higher", 0.5, 2.0, 5), decide("higher", -2.0, -0.5, 5), decide("higher", -1.0, 2.0, 5)
    ('holds', 'does not hold', 'inconclusive')
    >>> decide("same", -0.5, 0.4, 5, margin=1.0), decide("same", -0.5, 0.4, 5), decide("higher", 1.0, 2.0, 2)
    ('holds', 'inconclusive', 'inconclusive')
    """
    if expect not in ("higher", "lower", "same", "at_most", "at_least"):
        raise ValueError(f"expect must be 'higher', 'lower', 'same', 'at_most' or 'at_least', got {expect!r}")
    if margin < 0:
        raise ValueError(f"an equivalence margin must be >= 0, got {margin}")
    if headline and n < HEADLINE_SEEDS:
        raise ValueError(f"a headline claim is judged on at least {HEADLINE_SEEDS} seeds, got {n}")
    if n < MIN_SEEDS or not (np.isfinite(lo) and np.isfinite(hi)):
        return "inconclusive"
    if expect == "same":
        if -margin <= lo and hi <= margin:
            return "holds"
        return "does not hold" if lo > margin or hi < -margin else "inconclusive"
    up = expect in ("higher", "at_least")    # the claimed side: above 0 (or the threshold)
    if (lo > 0) if up else (hi < 0):
        return "holds"
    if (hi < 0) if up else (lo > 0):
        return "does not hold"
    return "inconclusive"


def _num(x: float) -> str:
    a = abs(x)
    return f"{x:.1f}" if a >= 10 else f"{x:.2f}" if a >= 0.1 else f"{x:.2g}"


def format_verdict(label: str, n: int, lo: float, hi: float, margin: float | None = None) -> str:
    """``"inconclusive (n=2, 95% CI [-34.5, 34.6])"``; the margin of a "same" claim is named when given."""
    if label not in LABELS:
        raise ValueError(f"a verdict is one of {LABELS}, got {label!r}")
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return f"{label} (n={n}, no interval)"
    m = f", margin ±{_num(margin)}" if margin is not None else ""
    return f"{label} (n={n}, {LEVEL:.0%} CI [{_num(lo)}, {_num(hi)}]{m})"


def compare(runs: pd.DataFrame, metric: str, base: str, new: str, by: str = "fraction") -> pd.DataFrame:
    """Per group: mean of ``new`` - ``base`` on ``metric`` over paired seeds, its spread, the 95%
    interval and the verdict of ":data:`new` is higher" (:func:`decide`)."""
    out = []
    for key, g in runs.groupby(by, sort=False):
        a, b, d, mean, sd, (lo, hi) = paired_differences(g, base, new, metric)
        out.append({by: key, "metric": metric, f"{base}": float(a.mean()), f"{new}": float(b.mean()),
                    "ratio": float(b.mean() / a.mean()) if a.mean() else math.nan,
                    "mean_diff": mean, "diff_std": sd, "ci_low": lo, "ci_high": hi, "seeds": len(d),
                    "verdict": format_verdict(decide("higher", lo, hi, len(d)), len(d), lo, hi)})
    return pd.DataFrame(out)


def not_judged_seeds(n: int, need: int = MIN_SEEDS) -> str:
    """``"not judged (2 seeds)"`` below ``need`` seeds (no interval a verdict could rest on), else ``""``."""
    if n >= need:
        return ""
    extra = "" if need == MIN_SEEDS else f"; a headline claim needs {need}"
    return f"not judged ({n} seed{'' if n == 1 else 's'}{extra})"


def _r(x: float) -> float:
    return round(float(x), 3) if np.isfinite(x) else math.nan


def claim_verdict(runs: pd.DataFrame, base: str, new: str, metric: str, expect: str, claim: str,
                  paper_says: str, *, exact: bool = False, threshold: float | None = None,
                  pair_by: str = "seed", margin: float | None = None, headline: bool = False) -> dict[str, Any] | None:
    """One row of a claims table: does ``new`` vs ``base`` on ``metric`` behave as the paper says?

    ``expect``: ``"higher"``, ``"lower"`` or ``"same"`` (``new`` against ``base``), or
    ``"at_most"`` / ``"at_least"`` (``new`` against ``threshold``; ``base`` unused). The 95%
    interval of the mean paired difference d_s = new_s - base_s decides (:func:`decide`);
    ``margin``: the equivalence margin of a "same" claim (None: 0). ``exact``: the numbers are
    deterministic measurements with no seed (a metric on a fixed ranking); every instance
    paired by ``pair_by`` must then satisfy the claim ("same": equal to 1e-9); with no instance, or a NaN
    among them, it reads "not run". Rows of ``new`` and ``base`` are paired on the ``pair_by`` column
    (default ``seed``), one row per value (an ``at_most`` / ``at_least`` claim's rows too). A ``headline``
    claim needs :data:`HEADLINE_SEEDS` seeds, any other :data:`MIN_SEEDS`, else it reads "not judged".
    Returns None when a method is absent from ``runs``.
    """
    if expect not in ("higher", "lower", "same", "at_most", "at_least"):
        raise ValueError(f"expect must be 'higher', 'lower', 'same', 'at_most' or 'at_least', got {expect!r}")
    if metric not in runs.columns:
        raise ValueError(f"claim {claim!r}: no column {metric!r} in the run table (columns: {list(runs.columns)})")
    methods = set(runs.method)
    if new not in methods or (expect not in ("at_most", "at_least") and base not in methods):
        return None
    row = {"claim": claim, "paper (model vs baseline)": paper_says, "metric": metric, "model": new}
    if expect in ("at_most", "at_least"):
        if threshold is None:
            raise ValueError(f"claim {claim!r}: expect {expect!r} needs a threshold")
        mine = runs[runs.method == new]
        if pair_by in mine and not mine[pair_by].is_unique:
            raise ValueError(f"claim {claim!r}: more than one row per {pair_by} for {new!r} ({metric})")
        vals = mine[metric].astype(float)
        n = len(vals)
        if exact and (n == 0 or vals.isna().any()):
            why = "no instance" if n == 0 else f"{int(vals.isna().sum())} of {n} values are NaN"
            return {**row, "baseline": f"{expect.replace('_', ' ')} {threshold:g}", "ours (model vs baseline)": "",
                    "difference": math.nan, "spread (std of paired diff)": math.nan, "ci_low": math.nan,
                    "ci_high": math.nan, "seeds": n, "verdict": f"not run ({why})"}
        if exact:
            worst = vals.max() if expect == "at_most" else vals.min()
            holds = worst <= threshold + 1e-9 if expect == "at_most" else worst >= threshold - 1e-9
            ours, diff, sd, (lo, hi) = f"{worst:.3g} ({'max' if expect == 'at_most' else 'min'} of {n})", \
                worst - threshold, math.nan, (math.nan, math.nan)
            verdict = ("holds" if holds else "does not hold") + " (deterministic)"
        else:
            diff = float(vals.mean()) - threshold
            sd = float(vals.std(ddof=1)) if n > 1 else math.nan
            lo, hi = mean_interval(diff, sd, n)
            ours = f"{vals.mean():.3g} (mean of {n})"
            need = HEADLINE_SEEDS if headline else MIN_SEEDS
            verdict = not_judged_seeds(n, need) or format_verdict(decide(expect, lo, hi, n, headline=headline), n, lo, hi)
        return {**row, "baseline": f"{expect.replace('_', ' ')} {threshold:g}", "ours (model vs baseline)": ours,
                "difference": _r(diff), "spread (std of paired diff)": _r(sd), "ci_low": _r(lo), "ci_high": _r(hi),
                "seeds": n, "verdict": verdict}
    a, b, dd, d, sd, (lo, hi) = paired_differences(runs, base, new, metric, pair_by)
    n = len(dd)
    if exact:   # deterministic: every instance must satisfy the claim
        raw = runs[runs.method.isin([base, new])][metric].astype(float)
        if n == 0 or raw.isna().any():
            why = "no paired instance" if n == 0 else f"{int(raw.isna().sum())} NaN values"
            return {**row, "baseline": base, "ours (model vs baseline)": "", "difference": math.nan,
                    "spread (std of paired diff)": math.nan, "ci_low": math.nan, "ci_high": math.nan, "seeds": n,
                    "verdict": f"not run ({why})"}
        holds = {"higher": bool((dd > 1e-9).all()), "lower": bool((dd < -1e-9).all()),
                           "same": bool((dd.abs() <= 1e-9).all())}[expect]
        verdict = ("holds" if holds else "does not hold") + (" (deterministic, every instance)" if n > 1 else " (deterministic)")
        sd, lo, hi = math.nan, math.nan, math.nan
    else:
        m = margin if expect == "same" else None
        need = HEADLINE_SEEDS if headline else MIN_SEEDS
        verdict = not_judged_seeds(n, need) or \
            format_verdict(decide(expect, lo, hi, n, m or 0.0, headline=headline), n, lo, hi, m)
    return {**row, "baseline": base, "ours (model vs baseline)": f"{b.mean():.3g} vs {a.mean():.3g}",
            "difference": _r(d), "spread (std of paired diff)": _r(sd), "ci_low": _r(lo), "ci_high": _r(hi),
            "seeds": n, "verdict": verdict}


def _arms(training: Any, c: Any, rows: pd.DataFrame) -> tuple[str, list[str]]:
    """(the ``;``-joined arm labels of a claim's rows of one method, the states of those that did not converge):
    the rows' members (a pooled table's ``members`` column, else the method), fractions and seeds, and the
    claim's ``where`` values that are config keys (:class:`itmlib.convergence.Training`)."""
    if training is None or not len(rows):
        return "", []
    members = sorted({m for v in rows["members"] for m in str(v).split(";")}) if "members" in rows else \
        sorted(set(rows.method))
    by_images = "train_images" in rows and rows.train_images.notna().all()   # a fraction a table relabelled (06)
    t = training.arms(members, fractions=rows.fraction.unique() if "fraction" in rows and not by_images else None,
                      seeds=rows.seed.unique() if "seed" in rows else None,
                      images=rows.train_images.unique() if by_images else None,
                      recipe={k: v for k, v in c.where.items() if k != "fraction"})
    return ";".join(t.arm), [f"{a}: {st}" for a, st in zip(t.arm, t.state) if st != "converged"]


def judge_claims(notebook: str, tables: pd.DataFrame | Mapping[str, pd.DataFrame], *,
                 claims: list[Any] | None = None, rename: Mapping[str, str] | None = None,
                 records: Any = None) -> pd.DataFrame:
    """The claims table of ``notebook``: every claim of ``itmlib/paper_numbers/claims_*.yaml``
    that names this notebook, judged on this run's ``tables`` by :func:`claim_verdict`.

    ``tables``: one run table, or a mapping table name -> run table when the claims of the
    notebook read several (a claim's ``table:`` names it; default ``"runs"``). Each run
    table has ``method`` and ``seed`` columns and the claims' metric columns. ``rename``
    maps a claim's method names to this run's (e.g. a notebook parameter chose another
    main model). A claim whose methods are absent keeps its row, verdict ``"not run"``.

    ``records`` (the notebook's ``members/`` folder, or a :class:`~itmlib.convergence.Training`) names each
    claim's arms (``model_arms``, ``baseline_arms``) and their ``training``: ``converged``, or the arms that
    did not train and why. **The gate**: a claim resting on an arm that is still rising or was selected at
    its first epoch reads ``not judged (still rising)`` / ``not judged (selected at epoch 1)``, never a
    verdict; one on fewer than :data:`MIN_SEEDS` seeds ``not judged (2 seeds)``, a headline claim on fewer
    than :data:`HEADLINE_SEEDS` likewise.
    """
    from .claims import claims_for, paper_side
    from .convergence import Training

    training = records if isinstance(records, Training) or records is None else Training.of(records)

    frames = {"runs": tables} if isinstance(tables, pd.DataFrame) else dict(tables)
    rename = dict(rename or {})
    rows = []
    for c in (claims if claims is not None else claims_for(notebook)):
        if c.table not in frames:
            raise ValueError(f"claim {c.id!r} reads run table {c.table!r}; given: {sorted(frames)}")
        runs = frames[c.table]
        if c.where and len(runs):                  # an empty table (the arms were not trained): "not run" below
            for col, val in c.where.items():
                if col not in runs.columns:
                    raise ValueError(f"claim {c.id!r}: run table {c.table!r} has no column {col!r}")
                runs = runs[np.isclose(runs[col], val)] if isinstance(val, float) else runs[runs[col] == val]
        model, baseline = rename.get(c.model, c.model), rename.get(c.baseline, c.baseline) if c.baseline else ""
        r = claim_verdict(runs, baseline, model, c.metric, c.expect, c.claim, paper_side(c), exact=c.exact,
                          threshold=c.threshold, pair_by=c.pair_by, margin=c.margin, headline=c.headline) \
            if len(runs) else None
        if r is None:
            absent = sorted({model, baseline} - set(runs.method) - {""}) if len(runs) else [f"rows with {c.where}"]
            r = {"claim": c.claim, "paper (model vs baseline)": paper_side(c), "metric": c.metric, "model": model,
                 "baseline": baseline, "ours (model vs baseline)": "", "difference": math.nan,
                 "spread (std of paired diff)": math.nan, "ci_low": math.nan, "ci_high": math.nan, "seeds": 0,
                 "verdict": f"not run ({', '.join(absent)} absent)"}
        marms, mbad = _arms(training, c, runs[runs.method == model]) if len(runs) else ("", [])
        barms, bbad = _arms(training, c, runs[runs.method == baseline]) if len(runs) and baseline else ("", [])
        bad = mbad + bbad
        state = "" if not (marms or barms) else "; ".join(bad) if bad else "converged"
        v = str(r["verdict"])
        judged = v.split(" (")[0] in LABELS and "deterministic" not in v
        if c.kind == "illustration" and v.split(" (")[0] in LABELS:   # shown, never judged
            r["verdict"] = "not judged (an illustration)"
        elif judged and bad:
            r["verdict"] = f"not judged ({bad[0].rsplit(': ', 1)[1]})"
        rows.append({"id": c.id, "paper table": c.paper_table, **r, "note": c.note, "model_arms": marms,
                     "baseline_arms": barms, "training": state})
    return pd.DataFrame(rows, columns=CLAIM_COLUMNS)


def rejudge_claims(table: pd.DataFrame) -> pd.DataFrame:
    """A committed claims table re-judged by :func:`decide` from its own stored columns (mean
    paired difference, its std, seeds): for tables whose run records are not committed.

    Deterministic rows, rows not run, and non-deterministic ``at_most`` / ``at_least`` rows that
    stored the worst seed rather than the mean (tables written before the interval rule; they
    become inconclusive unless re-run) are handled as said; every other row gets ``ci_low``,
    ``ci_high`` and a verdict from the interval. Claims are looked up by ``id``."""
    from .claims import claim

    out = table.copy()
    for col in ("ci_low", "ci_high"):
        if col not in out.columns:
            out[col] = math.nan
    for i, r in out.iterrows():
        v = str(r["verdict"])
        if "deterministic" in v or v.startswith("not run"):
            continue
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
        else:
            lo, hi = mean_interval(mean, sd, n)
            m = (c.margin or 0.0) if c.expect == "same" else None
            out.at[i, "verdict"] = format_verdict(decide(c.expect, lo, hi, n, m or 0.0), n, lo, hi,
                                                  c.margin if c.expect == "same" else None)
        out.at[i, "ci_low"], out.at[i, "ci_high"] = _r(lo), _r(hi)
    return out[[c for c in CLAIM_COLUMNS if c in out.columns] + [c for c in out.columns if c not in CLAIM_COLUMNS]]

