"""A claim's paper side: the transcribed cells it cites (``paper: {source: ..., column: ..., model: {...}}`` of its
YAML entry, :mod:`itmlib.paper_numbers`), the paper's ratio, and the thresholds and margins those numbers fix
by a claim's stated rule (never by our results)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:   # a type only: registry imports this module to check each claim's cells
    from .registry import Claim

__all__ = ["paper_side", "paper_cells", "paper_ratio", "ratio_threshold", "rule_margin"]


def _select(spec: dict[str, Any], default_source: Any, column: Any, scale: float = 1.0) -> tuple[list[float], int]:
    """Values of ``column`` (one or a list) of the rows matching ``spec``; averaged when several rows match."""
    from ..paper_numbers import paper_rows

    spec = dict(spec)
    keys = spec.pop("source", default_source)
    agg = spec.pop("agg", None)
    cols = column if isinstance(column, list) else [column]
    rows = paper_rows(keys, **spec)
    if rows.empty or (len(rows) > 1 and agg != "mean"):
        raise ValueError(f"paper table(s) {keys}: {len(rows)} rows match {spec} (several need agg: mean)")
    for c in cols:
        if c not in rows.columns:
            raise ValueError(f"paper table(s) {keys} have no column {c!r}")
    return [float(rows[c].mean()) * scale for c in cols], len(rows)


def _fmt(v: float, averaged: bool) -> str:
    if averaged:
        return f"{v:.1f}" if abs(v) >= 1 else f"{v:.3f}"
    return f"{v:.1f}" if float(v).is_integer() else f"{v:.10g}"


def paper_cells(c: Claim) -> tuple[list[float], list[float]]:
    """The paper's numbers for the claim: (model's cells, baseline's cells); empty when the paper gives none."""
    p = c.paper_cells
    if "text" in p and "column" not in p:
        return [], []
    m, _ = _select(p["model"], p.get("source"), p["column"], p.get("scale", 1.0))
    b, _ = _select(p["baseline"], p.get("source"), p["column"], p.get("scale", 1.0)) if "baseline" in p else ([], 0)
    return m, b


def paper_ratio(c: Claim) -> float:
    """The paper's model over its baseline (means of their cells), NaN where it gives no pair of numbers."""
    m, b = paper_cells(c)
    return sum(m) / len(m) / (sum(b) / len(b)) if m and b and sum(b) else float("nan")


def ratio_threshold(c: Claim) -> float:
    """A ``ratio`` claim's threshold by its rule ``half_paper_gain``: 1 + (r - 1) / 2 with r the paper's ratio - our
    ratio must reach half the paper's relative gain for "multiplies" to hold (2.19x at F-10% -> 1.59x)."""
    return 1 + (paper_ratio(c) - 1) / 2


def rule_margin(c: Claim, baseline_mean: float | None = None) -> float | None:
    """The margin of a claim by its ``margin_rule`` (None without one): ``paper_gap`` - |model - baseline| of the
    paper's cells, rounded to the paper's 0.1 (its figure of "no change"); ``share`` - that share of ``baseline``
    (our baseline arm's mean, ``baseline_mean``) or of the claim's ``threshold``; ``precision`` - the value given."""
    rule = c.margin_rule
    if not rule:
        return None
    kind, value = next(iter(rule.items()))
    if kind == "paper_gap":
        m, b = paper_cells(c)
        return round(abs(sum(m) / len(m) - sum(b) / len(b)), 1)
    if kind == "share":
        of = rule.get("of", "baseline")
        base = c.threshold if of == "threshold" else baseline_mean
        if base is None:
            raise ValueError(f"claim {c.id!r}: margin rule 'share of {of}' needs our baseline's mean")
        return abs(float(value) * float(base))
    return float(value)


def paper_side(c: Claim) -> str:
    """The paper's side of a claim as the claims table prints it, e.g. ``"65.0/77.7 vs 57.5/70.8"``."""
    p = c.paper_cells
    if "column" not in p:
        if "text" not in p:
            raise ValueError(f"claim {c.id!r}: paper needs column/model (cells) or text")
        return str(p["text"])
    m, nm = _select(p["model"], p.get("source"), p["column"], p.get("scale", 1.0))
    out = "/".join(_fmt(v, nm > 1) for v in m)
    if "baseline" in p:
        b, nb = _select(p["baseline"], p.get("source"), p["column"], p.get("scale", 1.0))
        out += " vs " + "/".join(_fmt(v, nb > 1) for v in b)
    if "text" in p:
        out += f" ({p['text']})"
    return out
