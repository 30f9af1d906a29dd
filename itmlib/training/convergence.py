"""Did an arm train? Convergence read off the member records' dev curves, in one place.

An **arm** is the members of a grid that share a method name, a training fraction and a recipe - every
seed of one config. Its label is ``MEMBER@FRACTION`` (``"VSE++@0.1"``), followed by ``[key=value,...]``
over the config keys in which records of that name and fraction differ (``"VSE++@0.02[warmup_epochs=1]"``
and ``"VSE++@0.02[warmup_epochs=0]"`` are two arms); a claim that pools arms (notebook 04's averages over
settings) names them joined by ``;``.

Each seed's curve is the dev selection metric per epoch (``dev_rsum``, ``dev_nsum`` or ``dev_ndcg_sum`` as
its config's ``select_by``); with E epochs trained, best (selected) epoch b and first selectable epoch f
(1, or the first epoch of an SSAMT second phase), a seed is

* **still rising** when it was selected at its last epoch and its dev metric gained more than
  :data:`RISE` = 1% over the last two epochs, ``(v_E - v_{E-2}) / |v_{E-2}| > 0.01``: a curve still climbing
  that fast has not reached its plateau, and the next epochs would move the model the claim judges;
* **selected at its first selectable epoch** when b = f and it trained at least :data:`MIN_EPOCHS_AFTER` = 4 epochs
  from f: dev fell from the first selectable epoch on, so the recipe did not train (collapse, or an lr that
  overshoots);
* **selected in its warm-up** when its recipe warms up for W >= 2 epochs before the hardest negatives
  (``warmup_epochs`` with ``max_violation``; SSAMT's phases aside), b <= W and it trained at least
  :data:`MIN_EPOCHS_AFTER` epochs from W: dev fell once the method's own loss began, so the model judged was
  never trained by it (W = 1 is the case above);
* otherwise **plateaued**: selected before its last epoch (dev stopped improving, as early stopping with
  patience ends a run), or at its last epoch with a gain of at most 1% over two epochs.

An arm is ``still rising`` when more than half its seeds were selected at their last epoch and the median of its
seeds' gains over their last two epochs exceeds 1%; ``selected at epoch f`` when more than half its seeds were
selected at their first epoch (as above); ``selected in its warm-up`` likewise; ``converged`` otherwise.
Why 1% over two epochs: on our grids the
seed-to-seed spread of a converged arm's dev metric is of that order, so a smaller gain would be lost in the
spread the claim's interval already carries; why a majority of seeds: the verdict is on the arm's mean,
which one seed's late gain moves by a fifth of it. These are the rules the claims' ``training`` column and
the verdict gate of :func:`itmlib.claims.verdicts.judge_claims` read.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["RISE", "MIN_EPOCHS_AFTER", "SELECT_COLUMNS", "CONVERGED", "RISING", "WARMUP", "RISING_PAST", "seed_state", "relative_gain",
           "arm_state", "read_records", "arm_labels", "arm_table",
           "untrained_members", "Training"]

#: a seed whose dev metric gained more than this (relative) over its last two epochs, selected at its last, is rising
RISE = 0.01
#: a seed selected at its first selectable epoch is flagged once it trained at least this many epochs from there
MIN_EPOCHS_AFTER = 4
#: the history column of each ``select_by``
SELECT_COLUMNS = {"rsum": "dev_rsum", "nsum": "dev_nsum", "ndcg": "dev_ndcg_sum"}
CONVERGED, RISING, PLATEAU, FIRST = "converged", "still rising", "plateaued", "selected at its first selectable epoch"
WARMUP = "selected in its warm-up"
#: a claim's baseline whose own curve ends flat but which a longer probe showed still rising (the claims' gate)
RISING_PAST = "rising past its budget"


def relative_gain(values: Iterable[float]) -> float:
    """The relative change of the last value over the one two epochs before, ``(v_E - v_{E-2}) / |v_{E-2}|``
    (over one epoch for a two-epoch curve; NaN for one epoch or a zero base)."""
    v = [float(x) for x in values]
    if len(v) < 2:
        return math.nan
    base = v[-3] if len(v) >= 3 else v[-2]
    return (v[-1] - base) / abs(base) if base else math.nan


def seed_state(values: Iterable[float], best_epoch: int, first_epoch: int = 1, warmup_end: int = 0) -> str:
    """``"still rising"``, ``"selected at its first selectable epoch"``, ``"selected in its warm-up"`` or ``"plateaued"`` for
    one seed's dev curve ``values`` (epoch 1 first), its selected epoch, its first selectable epoch and the last
    epoch of a warm-up of two or more epochs before the hardest negatives (0: none; module docstring)."""
    v = [float(x) for x in values]
    if not v:
        raise ValueError("a seed's dev curve has no epoch")
    if not 1 <= best_epoch <= len(v):
        raise ValueError(f"best epoch {best_epoch} is outside the curve's {len(v)} epochs")
    if best_epoch == len(v) and relative_gain(v) > RISE:
        return RISING
    if best_epoch == first_epoch and len(v) - first_epoch + 1 >= MIN_EPOCHS_AFTER:
        return FIRST
    if warmup_end >= 2 and best_epoch <= warmup_end and len(v) - warmup_end + 1 >= MIN_EPOCHS_AFTER:
        return WARMUP
    return PLATEAU


def arm_state(states: Iterable[str], first_epoch: int = 1, warmup_end: int = 0) -> str:
    """An arm's training from its seeds' states: ``"still rising"``, ``"selected at epoch f"`` or ``"selected in
    its warm-up, epochs 1-W"`` when more than half its seeds are, else ``"converged"``."""
    s = list(states)
    if not s:
        raise ValueError("an arm needs at least one seed")
    if sum(x == RISING for x in s) * 2 > len(s):
        return RISING
    return _selected_early(s, first_epoch, warmup_end)


def _selected_early(states: list[str], first_epoch: int, warmup_end: int) -> str:
    """``"selected at epoch f"`` or ``"selected in its warm-up, epochs 1-W"`` when more than half the seeds are,
    else ``"converged"``."""
    if sum(x == FIRST for x in states) * 2 > len(states):
        return f"selected at epoch {first_epoch}"
    if sum(x == WARMUP for x in states) * 2 > len(states):
        return f"{WARMUP}, epochs 1-{warmup_end}"
    return CONVERGED


def _arm_state(r: Mapping[str, Any]) -> str:
    """An arm's state from its seeds' epochs, best epochs, gains and seed states (module docstring)."""
    n = len(r["seeds"])
    at_last = sum(b == e for b, e in zip(r["best"], r["epochs"]))
    gains = [g for g in r["gain"] if np.isfinite(g)]
    if at_last * 2 > n and gains and float(np.median(gains)) > RISE:
        return RISING
    return _selected_early(r["states"], r["first"], r["warmup"])


def read_records(record_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every member record (``*.json`` of the current layout) in a notebook's ``members/`` folder."""
    from .grid import RECORD_VERSION

    folder = Path(record_dir)
    out = []
    for p in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        rec = json.loads(p.read_text())
        if rec.get("record") == RECORD_VERSION and "history" in rec:
            out.append(rec)
    return out


def _flat(config: Mapping[str, Any]) -> dict[str, Any]:
    """A config's recipe keys: the top-level keys less seed and data, the model's as ``model.<key>``."""
    out = {k: v for k, v in config.items() if k not in ("seed", "data", "model")}
    out.update({f"model.{k}": v for k, v in (config.get("model") or {}).items()})
    return out


def _value(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else json.dumps(v) if isinstance(v, (list, dict)) else str(v)


def arm_labels(records: list[Mapping[str, Any]]) -> list[str]:
    """Each record's arm label (module docstring), in the records' order."""
    recipes = [_flat(r["config"]) for r in records]
    groups: dict[tuple[str, float], list[int]] = {}
    for i, r in enumerate(records):
        groups.setdefault((r["member"], float(r["fraction"])), []).append(i)
    labels = [""] * len(records)
    for (member, fraction), idx in groups.items():
        keys = sorted({k for i in idx for k in recipes[i]})
        differ = [k for k in keys if len({_value(recipes[i].get(k)) for i in idx}) > 1]
        for i in idx:
            tail = ",".join(f"{k}={_value(recipes[i].get(k))}" for k in differ)
            labels[i] = f"{member}@{fraction:g}" + (f"[{tail}]" if tail else "")
    return labels


def _first_epoch(config: Mapping[str, Any]) -> int:
    """The first epoch a run may be selected at: 1, or the first of an SSAMT second phase after its
    ``select_after`` epochs."""
    model = config.get("model") or {}
    intra, epochs = int(model.get("intra_epochs", 0) or 0), int(config.get("epochs", 0))
    return min(intra + 1 + int(model.get("select_after", 0) or 0), epochs) if 0 < intra < epochs else 1


def _warmup_end(config: Mapping[str, Any]) -> int:
    """The last epoch of a warm-up before the hardest negatives start (``warmup_epochs`` of a ``max_violation``
    loss), when it lasts two or more epochs; 0 otherwise, and for SSAMT, whose warm-up is its first phase."""
    w = int(config.get("warmup_epochs", 0) or 0)
    intra = int((config.get("model") or {}).get("intra_epochs", 0) or 0)
    return w if w >= 2 and config.get("max_violation") and not intra else 0


def arm_table(records: list[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per arm of the records: ``arm``, ``member``, ``fraction``, ``seeds``, ``budget`` (the config's
    most epochs; ``patience`` where it stops early), ``epochs`` trained (per seed), ``best epochs`` (per seed),
    ``gain last 2 (%)`` (the mean relative gain of the dev metric over each seed's last two epochs), the
    selection metric, the seeds' states and the arm's ``state`` (:func:`arm_state`)."""
    labels = arm_labels(list(records))
    rows: dict[str, dict[str, Any]] = {}
    for rec, label in zip(records, labels):
        cfg = rec["config"]
        col = SELECT_COLUMNS[cfg.get("select_by", "rsum")]
        hist = rec["history"]
        if col not in hist:
            raise ValueError(f"record of {rec['member']} (seed {rec['seed']}) has no {col!r} in its history")
        v = [float(x) for x in hist[col]]
        best = int(rec["rows"][0]["best_epoch"])
        first, warm = _first_epoch(cfg), _warmup_end(cfg)
        row = rows.setdefault(label, {"arm": label, "member": rec["member"], "fraction": float(rec["fraction"]),
                                      "metric": col, "first": first, "warmup": warm, "seeds": [], "epochs": [], "best": [], "gain": [],
                                      "states": [], "budget": int(cfg.get("epochs", len(v))),
                                      "patience": int(cfg.get("patience", 0))})
        row["seeds"].append(int(rec["seed"]))
        row["epochs"].append(len(v))
        row["best"].append(best)
        row["gain"].append(relative_gain(v))
        row["states"].append(seed_state(v, best, first, warm))
    out = []
    for r in rows.values():
        order = np.argsort(r["seeds"])
        pick = lambda k: [r[k][i] for i in order]   # noqa: E731 - per-seed lists in seed order
        gains = [g for g in r["gain"] if np.isfinite(g)]
        out.append({"arm": r["arm"], "member": r["member"], "fraction": r["fraction"], "seeds": len(r["seeds"]),
                    "budget": f"{r['budget']} epochs" + (f", patience {r['patience']}" if r["patience"] else ""),
                    "epochs": " ".join(map(str, pick("epochs"))), "best epochs": " ".join(map(str, pick("best"))),
                    "gain last 2 (%)": round(100 * float(np.mean(gains)), 2) if gains else math.nan,
                    "metric": r["metric"], "seed states": ", ".join(pick("states")),
                    "state": _arm_state(r)})
    return pd.DataFrame(out, columns=["arm", "member", "fraction", "seeds", "budget", "epochs", "best epochs",
                                      "gain last 2 (%)", "metric", "seed states", "state"])


def untrained_members(record_dir: str | os.PathLike[str] | None) -> dict[str, str]:
    """{member: its arm's state} for every member of a notebook's records (``members/``) whose arm did not converge
    (:func:`arm_table`); a member trained under several recipes is listed by its first arm that did not. A claim
    that pools settings (notebook 04's means) leaves these out instead of being gated by them."""
    table = arm_table(read_records(record_dir)) if record_dir is not None else arm_table([])
    out: dict[str, str] = {}
    for member, state in zip(table.member, table.state):
        if state != CONVERGED:
            out.setdefault(member, state)
    return out


@dataclass(frozen=True)
class Training:
    """The arms of a notebook's member records, for the claims: which arms a claim's rows come from and
    whether they trained. ``records`` is :func:`read_records` of the notebook's ``members/`` folder."""

    records: tuple[Mapping[str, Any], ...]

    @classmethod
    def of(cls, record_dir: str | os.PathLike[str] | None) -> "Training":
        return cls(tuple(read_records(record_dir)) if record_dir is not None else ())

    def arms(self, members: Iterable[str], fractions: Iterable[float] | None = None,
             seeds: Iterable[int] | None = None, recipe: Mapping[str, Any] | None = None,
             images: Iterable[int] | None = None, values: Mapping[tuple[str, int], float] | None = None,
             metric: str = "") -> pd.DataFrame:
        """:func:`arm_table` of the records of ``members`` (at ``fractions``, on ``seeds``, trained on ``images``
        training images, each where given).
        ``recipe`` (a claim's ``where`` values) narrows a member's records to those whose config has these
        values, where some of them do: a value that none of a member's records carries describes other rows
        (a baseline repeated beside each SAM mode) and leaves that member's records as they are. ``values``
        ({(member, seed): the claim row's ``metric``}) narrows them, likewise, to the records whose rows hold
        exactly those values: where one member was trained under two recipes (a retrain beside the committed
        runs), the arm is the recipe the claim's rows came from."""
        # a method no record trains but whose rows a record holds (08's TERN scored by MrSw) is that record's model
        trained = {rec["member"] for rec in self.records}
        scored_by = {r["method"]: rec["member"] for rec in self.records for r in rec["rows"]
                     if r.get("method") and r["method"] not in trained}
        asked = {m: m if m in trained else scored_by.get(m, m) for m in members}
        names, fr = set(asked.values()), None if fractions is None else {round(float(f), 6) for f in fractions}
        im = None if images is None else {int(n) for n in images}
        sd = None if seeds is None else {int(s) for s in seeds}
        labels = arm_labels(list(self.records))
        cand = [(rec, label) for rec, label in zip(self.records, labels)
                if rec["member"] in names and (fr is None or round(float(rec["fraction"]), 6) in fr)
                and (sd is None or int(rec["seed"]) in sd)
                and (im is None or int(rec["rows"][0].get("train_images", -1)) in im)]
        fits = lambda rec: all(_value(_flat(rec["config"]).get(k)) == _value(v)   # noqa: E731
                               for k, v in (recipe or {}).items() if k in _flat(rec["config"]))
        fitting = {rec["member"] for rec, _ in cand if fits(rec)}
        keep = [(rec, label) for rec, label in cand if rec["member"] not in fitting or fits(rec)]
        if values:
            shown = lambda rec, r: r.get("method", rec["member"])   # noqa: E731
            same = lambda rec: any(asked.get(shown(rec, r)) == rec["member"] and metric in r   # noqa: E731
                                   and (shown(rec, r), int(rec["seed"])) in values
                                   and math.isclose(float(r[metric]), values[(shown(rec, r), int(rec["seed"]))],
                                                    rel_tol=1e-9, abs_tol=1e-9) for r in rec["rows"])
            matched = {rec["member"] for rec, _ in keep if same(rec)}
            keep = [(rec, label) for rec, label in keep if rec["member"] not in matched or same(rec)]
        if not keep:
            return arm_table([])
        table = arm_table([r for r, _ in keep])
        # the labels are those of the whole folder (they name what tells this arm from its namesakes there)
        relabel = dict(zip(arm_labels([r for r, _ in keep]), (lbl for _, lbl in keep)))
        return table.assign(arm=table.arm.map(lambda a: relabel.get(a, a)))
