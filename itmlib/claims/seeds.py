"""Statistics over seeds that do not depend on the order the seeds arrive in.

A member's records can reach two tables in two orders (one table groups by method, another walks every arm's
fraction), and a floating-point sum depends on its order: four R@1 values whose mean is 16.135 sum to
16.134999999999998 in some orders and to 16.135 in others, which two tables then print as 16.13 and 16.14.
Every mean and spread over seeds is therefore taken from the correctly rounded sum (:func:`math.fsum`), the same
number whatever the order:

    mean = fsum(x_s) / n,    std = sqrt(fsum((x_s - mean)^2) / (n - 1))

NaN values are left out, as pandas' ``mean`` and ``std`` leave them out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

__all__ = ["seed_mean", "seed_std", "summarize"]


def _values(values: Iterable[float]) -> np.ndarray:
    x = np.asarray(list(values), dtype=float).ravel()
    return x[~np.isnan(x)]


def seed_mean(values: Iterable[float]) -> float:
    """The mean of ``values`` (NaN left out) from their correctly rounded sum: the same float in every order;
    NaN when no value is left."""
    x = _values(values)
    return math.fsum(x) / len(x) if len(x) else math.nan


def seed_std(values: Iterable[float]) -> float:
    """The sample standard deviation (n - 1) of ``values`` (NaN left out), in every order the same float; NaN
    below two values (a single run shows no spread)."""
    x = _values(values)
    if len(x) < 2:
        return math.nan
    m = seed_mean(x)
    return math.sqrt(math.fsum((x - m) ** 2) / (len(x) - 1))


def summarize(runs: pd.DataFrame, by: list[str], columns: list[str] | None = None) -> pd.DataFrame:
    """Mean and sample std over seeds per group (:func:`seed_mean`, :func:`seed_std`): columns ``<metric>`` and
    ``<metric>_std``, ``seeds``, and where the runs carry ``best_epoch``, ``best epochs`` (each seed's selected
    epoch, in seed order: did the arm train to a plateau, or was it chosen at its last or first epoch?).

    ``columns`` defaults to the :data:`~itmlib.metrics.METRIC_COLUMNS` present in ``runs``.
    With one seed the std is NaN (undefined), not 0: a single run shows no spread."""
    from ..metrics import METRIC_COLUMNS

    columns = columns or [c for c in METRIC_COLUMNS if c in runs]
    g = runs.groupby(by, sort=False)[columns]
    mean, std = g.agg(seed_mean), g.agg(seed_std)
    out = mean.copy()
    for c in columns:
        out[f"{c}_std"] = std[c]
    out["seeds"] = g.size()
    if "best_epoch" in runs and "best_epoch" not in columns:
        ordered = runs.sort_values("seed", kind="stable") if "seed" in runs else runs
        out["best epochs"] = ordered.groupby(by, sort=False)["best_epoch"].agg(
            lambda e: " ".join(str(int(x)) for x in e if pd.notna(x)))
    return out.reset_index()
