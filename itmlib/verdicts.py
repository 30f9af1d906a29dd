"""Seed statistics and claim verdicts, shared by every paper's notebook.

A run table has one row per (method, seed) (and any grouping columns) with metric
columns. :func:`summarize` gives mean and sample std over seeds; :func:`compare`
the paired seed differences d_s = new_s - base_s; a difference *counts* when

    |mean_s d_s| > 2 · std_s(d_s)            (at least two seeds)

The claims themselves are data: ``itmlib/paper_numbers/claims_<paper>.yaml``
(:mod:`itmlib.claims` reads them), and :func:`judge_claims` judges every claim of a
notebook with :func:`claim_verdict` - the one rule above - on this run's tables. A
claim whose methods were not run stays in the table with the verdict "not run", so
changing a notebook parameter can never make a claim vanish silently.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

__all__ = ["summarize", "paired_differences", "compare", "claim_verdict", "judge_claims", "CLAIM_COLUMNS", "SPREAD_FACTOR"]

#: a difference counts when it exceeds this many standard deviations of the paired seed differences
SPREAD_FACTOR = 2.0

#: the columns of every claims table (the order the notebooks and notebook 09 read)
CLAIM_COLUMNS = ["id", "paper table", "claim", "paper (model vs baseline)", "metric", "model", "baseline",
                 "ours (model vs baseline)", "difference", "spread (std of paired diff)", "seeds", "verdict", "note"]


def summarize(runs: pd.DataFrame, by: list[str], columns: list[str] | None = None) -> pd.DataFrame:
    """Mean and sample std over seeds per group: columns ``<metric>`` and ``<metric>_std``, and ``seeds``.

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
    return out.reset_index()


def paired_differences(runs: pd.DataFrame, base: str, new: str, metric: str, pair_by: str = "seed"
                       ) -> tuple[pd.Series, pd.Series, pd.Series, float, float, bool]:
    """(base values, new values, paired d = new - base, mean d, std d, whether |mean d| > 2 std d).

    Rows of the two methods are paired on ``pair_by``; with fewer than two pairs the std is
    NaN and no difference counts."""
    a = runs[runs.method == base].set_index(pair_by)[metric].astype(float)
    b = runs[runs.method == new].set_index(pair_by)[metric].astype(float)
    if not (a.index.is_unique and b.index.is_unique):
        raise ValueError(f"more than one row per {pair_by} for {base!r} or {new!r} ({metric})")
    d = (b - a).dropna()
    mean = float(d.mean()) if len(d) else float("nan")
    sd = float(d.std(ddof=1)) if len(d) > 1 else float("nan")
    return a, b, d, mean, sd, len(d) >= 2 and abs(mean) > SPREAD_FACTOR * sd


def compare(runs: pd.DataFrame, metric: str, base: str, new: str, by: str = "fraction") -> pd.DataFrame:
    """Per group: mean of ``new`` - ``base`` on ``metric`` over paired seeds, its spread, and a verdict.

    The difference "exceeds the seed-to-seed spread" when |mean diff| > 2 x the
    std of the paired differences (and at least 2 seeds exist); otherwise the
    verdict says the scale cannot tell.
    """
    out = []
    for key, g in runs.groupby(by, sort=False):
        a, b, d, mean, sd, beyond = paired_differences(g, base, new, metric)
        if len(d) < 2:
            verdict = "inconclusive (one seed: no spread)"
        elif beyond:
            verdict = f"{new} {'higher' if mean > 0 else 'lower'} (beyond 2x seed spread)"
        else:
            verdict = "no difference beyond the seed spread"
        out.append({by: key, "metric": metric, f"{base}": float(a.mean()), f"{new}": float(b.mean()),
                    "ratio": float(b.mean() / a.mean()) if a.mean() else float("nan"),
                    "mean_diff": mean, "diff_std": sd, "seeds": len(d), "verdict": verdict})
    return pd.DataFrame(out)


def claim_verdict(runs: pd.DataFrame, base: str, new: str, metric: str, expect: str, claim: str,
                  paper_says: str, *, exact: bool = False, threshold: float | None = None,
                  pair_by: str = "seed") -> dict[str, Any] | None:
    """One row of a claims table: does ``new`` vs ``base`` on ``metric`` behave as the paper says?

    ``expect``: ``"higher"``, ``"lower"`` or ``"same"`` (``new`` against ``base``), or
    ``"at_most"`` / ``"at_least"`` (``new`` against ``threshold``; ``base`` unused). The paired
    seed differences d_s = new_s - base_s decide: a difference counts only when
    |mean d| > 2 std(d). "higher"/"lower" hold when the mean difference has that sign
    (" (within noise)" is added when it does not exceed the spread); "same" holds when it
    does not exceed the spread. With one seed a direction claim says so, and a "same"
    claim cannot be judged. ``exact``: the numbers are deterministic measurements with no
    seed (a metric on a fixed ranking); every instance paired by ``pair_by`` must then
    satisfy the claim ("same": equal to 1e-9). Rows of ``new`` and ``base`` are paired on
    the ``pair_by`` column (default ``seed``).
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
        vals = runs[runs.method == new][metric].astype(float)
        worst = vals.max() if expect == "at_most" else vals.min()
        holds = worst <= threshold + 1e-9 if expect == "at_most" else worst >= threshold - 1e-9
        return {**row, "baseline": f"{expect.replace('_', ' ')} {threshold:g}",
                "ours (model vs baseline)": f"{worst:.3g} ({'max' if expect == 'at_most' else 'min'} of {len(vals)})",
                "difference": round(float(worst - threshold), 3), "spread (std of paired diff)": np.nan,
                "seeds": len(vals), "verdict": ("holds" if holds else "does not hold") + (" (deterministic)" if exact else "")}
    a, b, dd, d, sd, beyond = paired_differences(runs, base, new, metric, pair_by)
    n = len(dd)
    holds: bool | None
    if exact:   # deterministic: every instance must satisfy the claim
        holds = n > 0 and {"higher": bool((dd > 1e-9).all()), "lower": bool((dd < -1e-9).all()),
                           "same": bool((dd.abs() <= 1e-9).all())}[expect]
        note = " (deterministic, every instance)" if n > 1 else " (deterministic)"
    elif n < 2 and expect == "same":
        holds, note = None, "one seed: a 'no change' claim needs the seed spread (n_seeds >= 2)"
    else:
        holds = {"higher": d > 0, "lower": d < 0, "same": not beyond}[expect]
        note = " (one seed: direction only)" if n < 2 else (" (within noise)" if expect != "same" and not beyond else "")
    return {**row, "baseline": base, "ours (model vs baseline)": f"{b.mean():.3g} vs {a.mean():.3g}",
            "difference": round(d, 3), "spread (std of paired diff)": round(sd, 3) if n >= 2 and not exact else np.nan,
            "seeds": n, "verdict": note if holds is None else ("holds" if holds else "does not hold") + note}


def judge_claims(notebook: str, tables: pd.DataFrame | Mapping[str, pd.DataFrame], *,
                 claims: list[Any] | None = None, rename: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The claims table of ``notebook``: every claim of ``itmlib/paper_numbers/claims_*.yaml``
    that names this notebook, judged on this run's ``tables`` by :func:`claim_verdict`.

    ``tables``: one run table, or a mapping table name -> run table when the claims of the
    notebook read several (a claim's ``table:`` names it; default ``"runs"``). Each run
    table has ``method`` and ``seed`` columns and the claims' metric columns. ``rename``
    maps a claim's method names to this run's (e.g. a notebook parameter chose another
    main model). A claim whose methods are absent keeps its row, verdict ``"not run"``.
    """
    from .claims import claims_for, paper_side

    frames = {"runs": tables} if isinstance(tables, pd.DataFrame) else dict(tables)
    rename = dict(rename or {})
    rows = []
    for c in (claims if claims is not None else claims_for(notebook)):
        if c.table not in frames:
            raise ValueError(f"claim {c.id!r} reads run table {c.table!r}; given: {sorted(frames)}")
        runs = frames[c.table]
        if c.where:
            for col, val in c.where.items():
                if col not in runs.columns:
                    raise ValueError(f"claim {c.id!r}: run table {c.table!r} has no column {col!r}")
                runs = runs[np.isclose(runs[col], val)] if isinstance(val, float) else runs[runs[col] == val]
        model, baseline = rename.get(c.model, c.model), rename.get(c.baseline, c.baseline) if c.baseline else ""
        r = claim_verdict(runs, baseline, model, c.metric, c.expect, c.claim, paper_side(c), exact=c.exact,
                          threshold=c.threshold, pair_by=c.pair_by) if len(runs) else None
        if r is None:
            absent = sorted({model, baseline} - set(runs.method) - {""}) if len(runs) else [f"rows with {c.where}"]
            r = {"claim": c.claim, "paper (model vs baseline)": paper_side(c), "metric": c.metric, "model": model,
                 "baseline": baseline, "ours (model vs baseline)": "", "difference": np.nan,
                 "spread (std of paired diff)": np.nan, "seeds": 0, "verdict": f"not run ({', '.join(absent)} absent)"}
        rows.append({"id": c.id, "paper table": c.paper_table, **r, "note": c.note})
    return pd.DataFrame(rows, columns=CLAIM_COLUMNS)
