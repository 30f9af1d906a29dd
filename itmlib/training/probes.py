"""Recipe probes: a baseline trained under several recipes (seed 0), laid out and chosen by one rule, and the
budget line a table's header states. The states come from :mod:`itmlib.training.convergence`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from .convergence import SELECT_COLUMNS, _first_epoch, _warmup_end, arm_labels, seed_state

__all__ = ["probe_curves", "probe_choice", "probe_status", "budget_note", "knob_value"]


def knob_value(config: Mapping[str, Any], knob: str) -> Any:
    """A recipe knob's value in a record's ``config``: its own key (``warmup_epochs``), else its model config's
    (``embed_dim``), else 0 (a knob the config predates)."""
    return config[knob] if knob in config else config.get("model", {}).get(knob, 0)


def probe_curves(records: list[Mapping[str, Any]], knobs: Iterable[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A recipe probe's evidence (records of baseline members trained under several recipes), or any arms' dev
    curves: one row per record and epoch (``member``, ``arm`` (:func:`arm_labels` over ``records``), ``seed``,
    each knob, ``epoch``, ``dev`` and the ``metric`` it is) and one row per record (``member``, ``arm``, ``seed``,
    the knobs, epochs, best epoch, dev at the best and at the last epoch, the seed's state)."""
    knobs = list(knobs)
    curves, rows = [], []   # a knob is a config key or its model config's (:func:`knob_value`)
    for rec, arm in zip(records, arm_labels(list(records))):
        cfg = rec["config"]
        col = SELECT_COLUMNS[cfg.get("select_by", "rsum")]
        v = [float(x) for x in rec["history"][col]]
        best = int(rec["rows"][0]["best_epoch"])
        k = {"member": rec["member"], "arm": arm, "seed": rec["seed"], **{name: knob_value(cfg, name) for name in knobs}}
        curves += [{**k, "epoch": e + 1, "dev": x, "metric": col} for e, x in enumerate(v)]
        rows.append({**k, "epochs trained": len(v), "best epoch": best, "dev at best": v[best - 1],
                     "dev at last": v[-1], "state": seed_state(v, best, _first_epoch(cfg), _warmup_end(cfg))})
    order = ["member", *knobs, "arm", "seed"]
    return (pd.DataFrame(curves).sort_values([*order, "epoch"]).reset_index(drop=True) if curves else pd.DataFrame(),
            pd.DataFrame(rows).sort_values(order).reset_index(drop=True) if rows else pd.DataFrame())


def probe_choice(table: pd.DataFrame, knob: str, tie: float = 0.01) -> Any:
    """The recipe a probe's rule chooses from its table (:func:`probe_curves`, one member): the ``knob`` value with
    the highest dev at the best epoch; of those within ``tie`` (relative) of it, the smallest."""
    if not len(table):
        raise ValueError("a probe with no records chooses nothing")
    top = float(table["dev at best"].max())
    return min(table.loc[table["dev at best"] >= top * (1 - tie), knob])


def probe_status(table: pd.DataFrame, knob: str, planned: Iterable[Any]) -> str:
    """What a probe's rule says of its table (one member) so far: its choice (:func:`probe_choice`) once every
    ``planned`` value of ``knob`` has a record, otherwise which values are in and which it waits on (a rule that
    chose among the values probed so far could choose another once the rest are in)."""
    planned = list(planned)
    tried = sorted(set(table[knob])) if len(table) else []
    if missing := [v for v in planned if v not in tried]:
        return f"probed {tried or 'none'} of {planned}: the rule chooses once {missing} {'is' if len(missing) == 1 else 'are'} in"
    return f"the rule chooses {probe_choice(table, knob)} of the {tried} probed"


def budget_note(configs: Iterable[Any]) -> str:
    """How long a grid's arms trained, for a table's header, from their configs (:class:`~itmlib.training.train.TrainConfig`):
    ``"lr 0.0001, at most 30 epochs, each stopping after 3 without a better dev rsum"`` with early stopping,
    ``"lr 0.001, 15 epochs"`` without; the distinct budgets of a grid whose arms differ joined by ``" / "``."""
    notes = []
    for c in configs:
        stop = f"at most {c.epochs} epochs, each stopping after {c.patience} without a better dev {c.select_by}"
        note = f"lr {c.lr:g}, " + (stop if c.patience else f"{c.epochs} epochs")
        if note not in notes:
            notes.append(note)
    if not notes:
        raise ValueError("budget_note: no configs given")
    return " / ".join(notes)
