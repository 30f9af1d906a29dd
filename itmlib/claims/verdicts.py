"""Seed statistics and claim verdicts, shared by every paper's notebook.

A run table has one row per (method, seed) (and any grouping columns) with metric
columns. :func:`summarize` gives mean and sample std over seeds (:mod:`.seeds`: the same numbers in every seed
order); :func:`compare` the paired seed differences d_s = new_s - base_s over n seeds and the 95% confidence interval
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
- with fewer than :data:`MIN_SEEDS` seeds :func:`decide` says **inconclusive**; a claims table reads such a claim
  ``not judged (2 seeds)`` (:func:`not_judged_seeds`), as it does one whose arms did not train;
- deterministic measurements (``exact``: a metric on a fixed ranking, no seed) keep their
  rule - every paired instance must satisfy the claim - and say "(deterministic)".

The claims themselves are data: ``itmlib/paper_numbers/claims_<paper>.yaml``
(:mod:`itmlib.claims` reads them), and :func:`itmlib.claims.judge.judge_claims` judges every claim of
a notebook with :func:`claim_verdict` on this run's tables.

Every form a claim takes (paired seeds, a deterministic measurement, a ratio, a
sample's bootstrap draws) is read by one :func:`decide` and written by one :func:`format_verdict`; apart, the
forms would drift.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .seeds import seed_mean, seed_std, summarize

__all__ = ["verdict_changes", "summarize", "paired_differences", "mean_interval", "decide", "format_verdict", "compare",
           "claim_verdict", "ClaimRule", "bootstrap_verdict", "MIN_DRAWS",
           "CLAIM_COLUMNS", "LEVEL", "MIN_SEEDS", "LABELS", "HEADLINE_SEEDS",
           "not_judged_seeds", "RULE", "ours_number"]

#: the confidence level of every interval
LEVEL = 0.95
#: no decisive (holds / does not hold) verdict on fewer seeds than this
MIN_SEEDS = 3
#: the three verdicts a claim can get
LABELS = ("holds", "does not hold", "inconclusive")

#: the columns of every claims table (the order the notebooks and notebook 10 read)
CLAIM_COLUMNS = ["id", "paper table", "claim", "paper (model vs baseline)", "metric", "model", "baseline",
                 "ours (model vs baseline)", "difference", "spread (std of paired diff)", "ci_low", "ci_high",
                 "seeds", "verdict", "note", "model_arms", "baseline_arms", "training"]
#: a headline claim is judged on at least this many seeds
HEADLINE_SEEDS = 5
#: the rule in a reader's words: the one wording the README, results/README.md, the site's index and the notebooks
#: show (a test finds it in each)
RULE = (f"**holds** when the {LEVEL:.0%} interval of the mean paired seed difference lies on the claimed side of 0, "
        "**does not hold** when it lies on the other side, **inconclusive** when it straddles 0 (a \"no change\" claim: "
        "inside, outside or across its declared margin); **not judged** below "
        f"{MIN_SEEDS} seeds ({HEADLINE_SEEDS} for a headline claim) or when an arm it compares did not train to a plateau")


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
    mean, sd = seed_mean(d), seed_std(d)
    return a, b, d, mean, sd, mean_interval(mean, sd, len(d))


def decide(expect: str, lo: float, hi: float, n: int, margin: float = 0.0, *, headline: bool = False) -> str:
    """The verdict of an interval [lo, hi] of mean(new - base) (or of mean(new) - threshold for
    ``at_most`` / ``at_least``, or of the mean ratio - its threshold for ``ratio``) from ``n`` seeds: one of
    :data:`LABELS` (see the module docstring). ``margin``: a ``same`` claim's equivalence margin (inside
    [-m, m]), a ``non_inferior`` claim's (lo above -m), or the slack of ``at_most`` / ``at_least`` (hi below +m,
    lo above -m: "no better than chance" holds for a model at chance).

    >>> decide("higher", 0.5, 2.0, 5), decide("higher", -2.0, -0.5, 5), decide("higher", -1.0, 2.0, 5)
    ('holds', 'does not hold', 'inconclusive')
    >>> decide("same", -0.5, 0.4, 5, margin=1.0), decide("same", -0.5, 0.4, 5), decide("higher", 1.0, 2.0, 2)
    ('holds', 'inconclusive', 'inconclusive')
    >>> decide("non_inferior", -0.5, 3.0, 5, margin=1.0), decide("at_most", -0.4, 0.3, 5, margin=0.5)
    ('holds', 'holds')
    """
    if expect not in ("higher", "lower", "same", "non_inferior", "ratio", "at_most", "at_least"):
        raise ValueError(f"expect must be 'higher', 'lower', 'same', 'non_inferior', 'ratio', 'at_most' or "
                         f"'at_least', got {expect!r}")
    if margin < 0:
        raise ValueError(f"a margin must be >= 0, got {margin}")
    if headline and n < HEADLINE_SEEDS:
        raise ValueError(f"a headline claim is judged on at least {HEADLINE_SEEDS} seeds, got {n}")
    if n < MIN_SEEDS or not (np.isfinite(lo) and np.isfinite(hi)):
        return "inconclusive"
    if expect == "same":
        if -margin <= lo and hi <= margin:
            return "holds"
        return "does not hold" if lo > margin or hi < -margin else "inconclusive"
    up = expect in ("higher", "at_least", "non_inferior", "ratio")    # the claimed side: above 0 (or the threshold)
    slack = margin if expect in ("non_inferior", "at_most", "at_least") else 0.0
    if (lo > -slack) if up else (hi < slack):
        return "holds"
    if (hi < -slack) if up else (lo > slack):
        return "does not hold"
    return "inconclusive"


def ours_number(x: float) -> str:
    """An "ours" cell's number: three significant digits with their trailing zeros (``42.0``, ``0.500``, as the
    papers print theirs), whole from 100 up (``397``, never ``3.97e+02``)."""
    x = float(x)
    return f"{x:.0f}" if np.isfinite(x) and abs(x) >= 100 else f"{x:#.3g}"


def _ours_vs(model: float, baseline: float) -> str:
    """The ours cell of a two-arm claim: ``"42.0 vs 44.7"``."""
    return f"{ours_number(model)} vs {ours_number(baseline)}"


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
        ma, mb = seed_mean(a), seed_mean(b)
        out.append({by: key, "metric": metric, f"{base}": ma, f"{new}": mb, "ratio": mb / ma if ma else math.nan,
                    "mean_diff": mean, "diff_std": sd, "ci_low": lo, "ci_high": hi, "seeds": len(d),
                    "verdict": format_verdict(decide("higher", lo, hi, len(d)), len(d), lo, hi)})
    return pd.DataFrame(out)


def not_judged_seeds(n: int, need: int = MIN_SEEDS) -> str:
    """``"not judged (2 seeds)"`` below ``need`` seeds (no interval a verdict could rest on), else ``""``."""
    if n >= need:
        return ""
    extra = "" if need == MIN_SEEDS else f"; a headline claim needs {need}"
    return f"not judged ({n} seed{'' if n == 1 else 's'}{extra})"


#: fewer bootstrap draws than this give no interval ("not run")
MIN_DRAWS = 200


def bootstrap_verdict(runs: pd.DataFrame, base: str, new: str, metric: str, expect: str, *,
                      threshold: float | None = None, margin: float | None = None) -> dict[str, Any]:
    """The verdict columns of a claim on a statistic of one sample: ``runs`` holds the sample's value as
    ``replicate`` 0 and the same statistic on B bootstrap draws of its items as replicates 1..B (model and
    baseline computed on the same draws, so their difference is paired draw by draw). The estimate is the
    sample's (new - base, or new - ``threshold`` for ``at_most`` / ``at_least``), the interval the 2.5th and
    97.5th percentiles of the draws' differences, the spread their standard deviation (the bootstrap standard
    error); :func:`decide` reads the interval as it reads a seed interval. Under :data:`MIN_DRAWS` draws it
    reads "not run"."""
    if "replicate" not in runs:
        raise ValueError(f"a bootstrap claim on {metric!r} needs a 'replicate' column (0: the sample, 1..B: draws)")

    def values(method: str) -> pd.Series:
        v = runs[runs.method == method].set_index("replicate")[metric].astype(float)
        if not v.index.is_unique:
            raise ValueError(f"more than one row per replicate for {method!r} ({metric})")
        return v

    mine = values(new)
    if expect in ("at_most", "at_least"):
        if threshold is None:
            raise ValueError(f"expect {expect!r} needs a threshold")
        d, side, ours = mine - threshold, f"{expect.replace('_', ' ')} {threshold:g}", ours_number(mine.get(0, math.nan))
    else:
        other = values(base)
        d, side = (mine - other).dropna(), base
        ours = _ours_vs(mine.get(0, math.nan), other.get(0, math.nan))
    point, draws = float(d.get(0, math.nan)), d.drop(0, errors="ignore").dropna()
    out = {"baseline": side, "ours (model vs baseline)": ours, "difference": _r(point), "seeds": 1}
    if len(draws) < MIN_DRAWS or not np.isfinite(point):
        return {**out, "spread (std of paired diff)": math.nan, "ci_low": math.nan, "ci_high": math.nan,
                "verdict": f"not run ({len(draws)} bootstrap draws, {MIN_DRAWS} needed)"}
    lo, hi = (float(x) for x in np.percentile(draws, [100 * (1 - LEVEL) / 2, 100 * (1 + LEVEL) / 2]))
    m = margin if expect in ("same", "non_inferior", "at_most", "at_least") else None
    label = decide(expect, lo, hi, len(draws), m or 0.0)
    shown = f", margin ±{_num(m)}" if m else ""
    return {**out, "spread (std of paired diff)": _r(float(draws.std(ddof=1))), "ci_low": _r(lo), "ci_high": _r(hi),
            "verdict": f"{label} (bootstrap, {len(draws)} draws, {LEVEL:.0%} CI [{_num(lo)}, {_num(hi)}]{shown})"}


def _r(x: float) -> float:
    return round(float(x), 3) if np.isfinite(x) else math.nan


@dataclass(frozen=True)
class ClaimRule:
    """How a claim is read besides its methods and metric (:func:`claim_verdict`): ``exact`` (deterministic
    measurements, every instance must satisfy it), ``threshold`` (of an ``at_most`` / ``at_least`` or ratio
    claim), ``pair_by`` (the column rows are paired on), ``margin`` (a "same" claim's equivalence margin),
    ``headline`` (needs :data:`HEADLINE_SEEDS` seeds) and ``bootstrap`` (one sample's bootstrap draws)."""

    exact: bool = False
    threshold: float | None = None
    pair_by: str = "seed"
    margin: float | None = None
    headline: bool = False
    bootstrap: bool = False


def claim_verdict(runs: pd.DataFrame, base: str, new: str, metric: str, expect: str, claim: str,
                  paper_says: str, **rule: Any) -> dict[str, Any] | None:
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
    ``bootstrap``: a statistic of one sample (an AUC over judged pairs), ``runs`` holding it as ``replicate`` 0
    and its bootstrap draws as 1..B (:func:`bootstrap_verdict`). ``rule``: the fields of :class:`ClaimRule`.
    Returns None when a method is absent from ``runs``.
    """
    r = ClaimRule(**rule)
    if expect not in ("higher", "lower", "same", "non_inferior", "ratio", "at_most", "at_least"):
        raise ValueError(f"expect must be 'higher', 'lower', 'same', 'non_inferior', 'ratio', 'at_most' or "
                         f"'at_least', got {expect!r}")
    if metric not in runs.columns:
        raise ValueError(f"claim {claim!r}: no column {metric!r} in the run table (columns: {list(runs.columns)})")
    methods = set(runs.method)
    if new not in methods or (expect not in ("at_most", "at_least") and base not in methods):
        return None
    row = {"claim": claim, "paper (model vs baseline)": paper_says, "metric": metric, "model": new}
    if r.bootstrap:
        return {**row, **bootstrap_verdict(runs, base, new, metric, expect, threshold=r.threshold, margin=r.margin)}
    if expect in ("at_most", "at_least"):
        if r.threshold is None:
            raise ValueError(f"claim {claim!r}: expect {expect!r} needs a threshold")
        return {**row, **_threshold_verdict(runs, new, metric, expect, r, claim)}
    if expect == "ratio" and r.threshold is None:
        raise ValueError(f"claim {claim!r}: a ratio claim needs its threshold (itmlib.claims.ratio_threshold)")
    return {**row, "baseline": base, **_paired_verdict(runs, base, new, metric, expect, r)}


def _no_instance(n: int, why: str, side: str) -> dict[str, Any]:
    return {"baseline": side, "ours (model vs baseline)": "", "difference": math.nan,
            "spread (std of paired diff)": math.nan, "ci_low": math.nan, "ci_high": math.nan, "seeds": n,
            "verdict": f"not run ({why})"}


def _cells(ours: str, diff: float, sd: float, lo: float, hi: float, n: int, verdict: str) -> dict[str, Any]:
    return {"ours (model vs baseline)": ours, "difference": _r(diff), "spread (std of paired diff)": _r(sd),
            "ci_low": _r(lo), "ci_high": _r(hi), "seeds": n, "verdict": verdict}


def _threshold_verdict(runs: pd.DataFrame, new: str, metric: str, expect: str, r: ClaimRule,
                       claim: str) -> dict[str, Any]:
    """An ``at_most`` / ``at_least`` claim: ``new``'s rows against the threshold (every one if ``exact``)."""
    side = f"{expect.replace('_', ' ')} {r.threshold:g}"
    mine = runs[runs.method == new]
    if r.pair_by in mine and not mine[r.pair_by].is_unique:
        raise ValueError(f"claim {claim!r}: more than one row per {r.pair_by} for {new!r} ({metric})")
    vals = mine[metric].astype(float)
    n = len(vals)
    if r.exact and (n == 0 or vals.isna().any()):
        return _no_instance(n, "no instance" if n == 0 else f"{int(vals.isna().sum())} of {n} values are NaN", side)
    if r.exact:
        worst = vals.max() if expect == "at_most" else vals.min()
        holds = worst <= r.threshold + 1e-9 if expect == "at_most" else worst >= r.threshold - 1e-9
        return {"baseline": side, **_cells(f"{ours_number(worst)} ({'max' if expect == 'at_most' else 'min'} of {n})",
                                           worst - r.threshold, math.nan, math.nan, math.nan, n,
                                           ("holds" if holds else "does not hold") + " (deterministic)")}
    diff = seed_mean(vals) - r.threshold
    sd = seed_std(vals)
    lo, hi = mean_interval(diff, sd, n)
    verdict = not_judged_seeds(n, HEADLINE_SEEDS if r.headline else MIN_SEEDS) or \
        format_verdict(decide(expect, lo, hi, n, r.margin or 0.0, headline=r.headline), n, lo, hi, r.margin)
    return {"baseline": side, **_cells(f"{ours_number(seed_mean(vals))} (mean of {n})", diff, sd, lo, hi, n, verdict)}


def _paired_verdict(runs: pd.DataFrame, base: str, new: str, metric: str, expect: str, r: ClaimRule) -> dict[str, Any]:
    """``new`` against ``base`` paired on ``r.pair_by``: the per-pair ratio against its threshold, every
    instance (``exact``), or the interval of the mean paired difference."""
    need = HEADLINE_SEEDS if r.headline else MIN_SEEDS
    a, b, dd, d, sd, (lo, hi) = paired_differences(runs, base, new, metric, r.pair_by)
    n = len(dd)
    if expect == "ratio":   # the per-seed ratio new / base against the threshold the claim's rule sets
        q = (b / a).replace([np.inf, -np.inf], np.nan).dropna()
        rm, rsd = seed_mean(q), seed_std(q)
        rlo, rhi = mean_interval(rm, rsd, len(q))
        verdict = not_judged_seeds(len(q), need) or format_verdict(
            decide("ratio", rlo - r.threshold, rhi - r.threshold, len(q), headline=r.headline), len(q), rlo,
            rhi)[:-1] + f", x{r.threshold:.2f} needed)"
        return _cells(f"{_ours_vs(seed_mean(b), seed_mean(a))} ({rm:.2f}x)", rm, rsd, rlo, rhi, len(q), verdict)
    if r.exact:   # deterministic: every instance must satisfy the claim
        raw = runs[runs.method.isin([base, new])][metric].astype(float)
        if n == 0 or raw.isna().any():
            return _no_instance(n, "no paired instance" if n == 0 else f"{int(raw.isna().sum())} NaN values", base)
        holds = {"higher": bool((dd > 1e-9).all()), "lower": bool((dd < -1e-9).all()),
                 "same": bool((dd.abs() <= 1e-9).all())}[expect]
        verdict = ("holds" if holds else "does not hold") + (" (deterministic, every instance)" if n > 1 else " (deterministic)")
        return _cells(_ours_vs(seed_mean(b), seed_mean(a)), d, math.nan, math.nan, math.nan, n, verdict)
    m = r.margin if expect in ("same", "non_inferior") else None
    verdict = not_judged_seeds(n, need) or format_verdict(decide(expect, lo, hi, n, m or 0.0, headline=r.headline), n, lo, hi, m)
    return _cells(_ours_vs(seed_mean(b), seed_mean(a)), d, sd, lo, hi, n, verdict)


def verdict_word(verdict: str) -> str:
    """The verdict without its details: ``"inconclusive (n=5, 95% CI [-1, 2])"`` -> ``"inconclusive"``."""
    return str(verdict).split(" (")[0].strip()


def verdict_changes(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """Two claims tables of one notebook side by side (e.g. before and after its arms were retrained), one row per
    claim of ``after`` by ``id``: the claim and metric, ours (model vs baseline) and the verdict before and after,
    and ``moved`` when the verdict's word changed (:func:`verdict_word`). A claim ``before`` lacks reads
    "new claim" before; a claim only ``before`` has is listed last, "dropped" after."""
    cols = ["ours (model vs baseline)", "verdict"]
    for name, t in (("before", before), ("after", after)):
        missing = {"id", "claim", "metric", *cols} - set(t.columns)
        if missing:
            raise ValueError(f"the {name} claims table lacks {sorted(missing)}")
    old = before.set_index("id")
    rows = []
    for _, r in after.iterrows():
        b = old.loc[r["id"]] if r["id"] in old.index else None
        was = b["verdict"] if b is not None else "new claim"
        rows.append({"id": r["id"], "claim": r["claim"], "metric": r["metric"],
                     "ours before": b["ours (model vs baseline)"] if b is not None else "", "verdict before": was,
                     "ours after": r["ours (model vs baseline)"], "verdict after": r["verdict"],
                     "moved": verdict_word(was) != verdict_word(r["verdict"])})
    for cid, b in old[~old.index.isin(after["id"])].iterrows():
        rows.append({"id": cid, "claim": b["claim"], "metric": b["metric"], "ours before": b["ours (model vs baseline)"],
                     "verdict before": b["verdict"], "ours after": "", "verdict after": "dropped", "moved": True})
    return pd.DataFrame(rows)
