"""Member records and checkpoint names, for :mod:`itmlib.training.grid`: one small JSON per finished grid
member (its rows, its training history, the config as trained, what evaluated it, when, in how long, on
which device and under which packages and CPU), the name of its checkpoint folder, figure records (a
figure's data from one trained model, kept as CSV), and the table headers' "where it trained"."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import platform
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

import numpy as np
import pandas as pd

from ..config import array_key, check_fraction
from ..data.base import ITMDataset
from ..paths import atomic_write_text, resolve_path
from .train import TrainConfig, config_dict, config_hash

if TYPE_CHECKING:
    from .grid import Member

__all__ = ["RECORD_VERSION", "RECORDS_READ", "note_records_read", "orphan_records",
           "checkpoint_name", "member_config", "trained_config", "figure_record", "member_record_path",
           "recorded_seconds", "trained_where", "devices_note", "environment", "cpu_model"]


#: bump when a record's layout changes (older records are then ignored, not misread)
RECORD_VERSION = 1


def checkpoint_name(name: str) -> str:
    """A grid method's name as one checkpoint folder name: '+' becomes 'p', spaces '_', and every
    other character outside ``[A-Za-z0-9_=-]`` (a '/' would nest folders) is dropped."""
    return re.sub(r"[^A-Za-z0-9_=-]", "", name.replace(" ", "_").replace("+", "p"))


def figure_record(record_dir: str | os.PathLike[str], name: str, cfg: TrainConfig, compute: Callable[[], pd.DataFrame], *,
                  fraction: float = 1.0, seed: int = 0) -> pd.DataFrame:
    """What a figure draws from one trained model, kept beside the member records as a small CSV
    (``figure-<name>-<config hash>-f<fraction>-s<seed>.csv``): a rerun from a fresh clone reads it instead of
    retraining the model (whose retrained weights need not match the committed ones bit for bit, moving the
    figure's table). ``compute`` trains or loads the model and returns the figure's data; it runs only when no
    record exists."""
    path = resolve_path(record_dir) / f"figure-{name}-{config_hash(cfg)}-f{fraction:g}-s{seed}.csv"
    if path.is_file():
        return pd.read_csv(path)
    df = compute()
    atomic_write_text(path, df.to_csv(index=False, float_format="%.6g", lineterminator="\n"))
    return pd.read_csv(path)   # what a rerun will read, to the digit


def member_config(cfg: TrainConfig, train_ds: ITMDataset, fraction: float, seed: int) -> tuple[ITMDataset, TrainConfig]:
    """The training subset of a member and its config as trained (seed and data replaced)."""
    sub = train_ds if check_fraction("fraction", fraction) == 1.0 else train_ds.subset(fraction, seed=seed)
    return sub, trained_config(cfg, train_ds, fraction, seed)


def trained_config(cfg: TrainConfig, train_ds: ITMDataset, fraction: float, seed: int) -> TrainConfig:
    """A member's config as trained, from the subset's name and size alone (its features are not copied)."""
    split, n = (train_ds.split, train_ds.n_images) if fraction == 1.0 else train_ds.subset_size(fraction, seed)
    return dataclasses.replace(cfg, seed=int(seed), data=f"{cfg.data}|{split}|{n}")


def _safe_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def _json_number(v: Any) -> Any:
    if isinstance(v, (np.integer, np.bool_)):
        return v.item()
    if isinstance(v, np.floating):
        return float(v)
    raise TypeError(f"an evaluator row holds {type(v).__name__}, not a number or string: {v!r}")


def _record_key(evaluate_fn: Callable | None, dev_ds: ITMDataset, test_ds: ITMDataset,
                test_relevance: np.ndarray | None) -> str | None:
    """What a member record's rows depend on besides the member itself (None: records are not kept)."""
    if evaluate_fn is None:
        evaluation = f"evaluate|rel {array_key(test_relevance)}"
    else:
        evaluation = getattr(evaluate_fn, "cache_key", None)
        if not evaluation:
            return None
    return (f"record-v{RECORD_VERSION}|{evaluation}|test {test_ds.source}|{test_ds.split}|{test_ds.n_images}|"
            f"dev {dev_ds.source}|{dev_ds.split}|{dev_ds.n_images}")


def member_record_path(cfg: TrainConfig, name: str, fraction: float, seed: int, train_ds: ITMDataset,
                       record_dir: str | os.PathLike[str], key: str) -> Path:
    """``<record_dir>/<checkpoint folder name>-<hash of key>.json``: the record of one grid member
    (``key``: what evaluated it, see :func:`run_grid`)."""
    return _record_path(trained_config(cfg, train_ds, fraction, seed), name, record_dir, key)


def _record_path(trained: TrainConfig, name: str, record_dir: str | os.PathLike[str], key: str) -> Path:
    return resolve_path(record_dir) / f"{_record_stem(trained, name)}-{_safe_key(key)}.json"


def _record_stem(trained: TrainConfig, name: str) -> str:
    """A member record's name up to the hash of what evaluated it: its checkpoint folder's name."""
    return f"{checkpoint_name(name)}-{config_hash(trained)}"


def recorded_seconds(cfg: TrainConfig, name: str, train_ds: ITMDataset, record_dir: str | os.PathLike[str],
                     seed: int, fraction: float = 1.0) -> float | None:
    """The training seconds the member record of ``name`` (``cfg`` on ``fraction`` of ``train_ds``, ``seed``)
    states, whatever evaluated it; None where ``record_dir`` holds none (or its share of an interrupted call is
    unknown)."""
    stem = _record_stem(trained_config(cfg, train_ds, fraction, seed), name)
    hits = sorted(resolve_path(record_dir).glob(f"{stem}-*.json"))
    return json.loads(hits[0].read_text()).get("seconds") if hits else None


def _from_record(rec: dict[str, Any]) -> tuple[list[dict[str, Any]], pd.DataFrame] | None:
    """(rows, history) of a parsed member record; None for one of another layout. A record that names the
    device it trained on passes it on as each row's ``device`` (a record without that field names none)."""
    if rec.get("record") != RECORD_VERSION:
        return None
    rows = [{**r, "device": rec["device"]} for r in rec["rows"]] if "device" in rec else rec["rows"]
    return rows, pd.DataFrame(rec["history"])


def _read_record(path: Path | None) -> tuple[list[dict[str, Any]], pd.DataFrame] | None:
    """(rows, history) of a member record, or None where there is none (or one of another layout)."""
    return _from_record(json.loads(path.read_text())) if path is not None and path.is_file() else None


def _seconds(seconds: float) -> float | None:
    """A record's training seconds, or None (JSON null) where an interrupted call's share is unknown."""
    return None if np.isnan(seconds) else round(float(seconds), 1)


def cpu_model() -> str:
    """The CPU's model name (Linux's ``/proc/cpuinfo``; else :func:`platform.processor`, possibly "")."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            return next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), "")
    except OSError:
        return platform.processor()


def environment() -> dict[str, Any]:
    """What a member trained under, beyond its device: Python, torch and NumPy versions, the CPU's model and
    torch's thread count. A record keeps it because a retrain on another CPU or package set need not reproduce
    the record's numbers (benchmarks/README.md, "Does a retrain reproduce the records?"); no table reads it."""
    import torch

    return {"python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__,
            "cpu": cpu_model(), "threads": torch.get_num_threads()}


def _write_record(path: Path, member: Member, trained: TrainConfig, key: str,
                  out: tuple[list[dict[str, Any]], pd.DataFrame], seconds: float,
                  trained_on: str) -> tuple[list[dict[str, Any]], pd.DataFrame]:
    """Write a member's record; returns its (rows, history) as parsed back from the JSON written, so a grid
    gives the same tables whether its members were just trained or came from their records."""
    rows, history = out
    rec = {"record": RECORD_VERSION, "member": member.name, "fraction": member.fraction, "seed": member.seed,
           "evaluation": key,
           "written": datetime.now(timezone.utc).strftime("%Y-%m-%d"), "seconds": _seconds(seconds),
           "device": trained_on, "environment": environment(),
           "config": config_dict(trained), "rows": rows, "history": history.to_dict(orient="list")}
    text = json.dumps(rec, default=_json_number, indent=1) + "\n"
    atomic_write_text(path, text)
    return _from_record(json.loads(text))


def trained_where(runs: pd.DataFrame, default: str) -> str:
    """A table header's "where it trained": :func:`devices_note`, or "every member on ``default``" when all
    rows trained on ``default``."""
    return devices_note(runs, default) or f"every member on {default}"


def devices_note(runs: pd.DataFrame, default: str) -> str:
    """Where a run table's members trained, for its header: "" when every row trained on ``default`` (rows
    from records that name no device are taken as ``default``, the device of the run that reads them), else
    e.g. "seeds 2-4 of TERAN mrsw, TERN (global) trained on cuda (NVIDIA H200), the rest on cpu", or
    "every member trained on cuda (NVIDIA H200)" when none trained on ``default``."""
    where = runs["device"].fillna(default) if "device" in runs else pd.Series(default, index=runs.index)
    other = runs[where != default]
    if other.empty:
        return ""
    if len(other) == len(runs) and where.nunique() == 1:
        return f"every member trained on {where.iloc[0]}"
    parts = []
    for d, g in other.groupby(where[where != default], sort=False):
        seeds = sorted(int(s) for s in g.seed.unique())
        span = f"{seeds[0]}-{seeds[-1]}" if seeds == list(range(seeds[0], seeds[-1] + 1)) and len(seeds) > 1 else \
            ", ".join(map(str, seeds))
        parts.append(f"seed{'s' if len(seeds) > 1 else ''} {span} of {', '.join(g.method.unique())} trained on {d}")
    return "; ".join(parts) + f", the rest on {default}"


#: the environment variable naming a file where every grid of this process notes the member records of its plan
#: (:func:`note_records_read`; set by ``python -m itmlib.course.notebooks run`` for each notebook it runs)
RECORDS_READ = "ITM_RECORDS_READ"


def note_records_read(paths: Iterable[Path]) -> None:
    """Append the record paths a grid's plan names (found or not) to the file :data:`RECORDS_READ` names, if set."""
    log = os.environ.get(RECORDS_READ)
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.writelines(f"{Path(p).resolve()}\n" for p in paths)


def orphan_records(members_dir: str | os.PathLike[str], read_log: str | os.PathLike[str]) -> list[Path]:
    """The member records in ``members_dir`` that no grid of the run logged in ``read_log`` named: records of no
    member of the notebook's plan (a config changed under them, or a member the plan dropped)."""
    folder = Path(members_dir)
    if not folder.is_dir():
        return []
    log = Path(read_log)
    named = set(log.read_text(encoding="utf-8").split("\n")) if log.is_file() else set()
    return sorted(p for p in folder.glob("*.json") if str(p.resolve()) not in named)
