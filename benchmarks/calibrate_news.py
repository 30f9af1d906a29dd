"""Calibrate the non-literal world's difficulty on the ANG+NP+SYM baseline alone.

    .venv/bin/python benchmarks/calibrate_news.py --scale medium                      # today's knobs
    .venv/bin/python benchmarks/calibrate_news.py --scale medium --set focus_weight=0.4 --threads 1

Trains the baseline (no neighbour loss, so no claim is looked at) on ``synthetic_news`` built with
the given :class:`~itmlib.data.synthetic.news.NewsConfig` knobs and reports its 5-way accuracy both
ways on the **dev** split (the test split is never read), with the world's properties
(``world_properties``: how often an article names its own image's objects, topic overlap). The
paper's ANG+NP+SYM reaches 62.7 / 62.2 (Politics) and 87.0 / 87.3 (GoodNews); the knobs are set so
that ours lands near the lower of the two at medium, then frozen (``NEWS_VERSION`` bumped) before
any neighbour-loss run. Checkpoints go to ``runs/calibration/`` named by the knobs; a row per run is
appended to ``runs/calibration/news.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from itmlib.data import NewsConfig, load_dataset  # noqa: E402
from itmlib.data.synthetic.news import world_properties  # noqa: E402
from itmlib.training.grid import RunContext, run_grid  # noqa: E402
from itmlib.papers import neighborhoods  # noqa: E402

BASELINE = "ANG+NP+SYM"


def parse_knobs(pairs: list[str]) -> dict[str, float]:
    """``["focus_weight=0.4"]`` -> ``{"focus_weight": 0.4}``; a name NewsConfig lacks is an error."""
    fields = NewsConfig.__dataclass_fields__
    out = {}
    for p in pairs:
        name, sep, value = p.partition("=")
        if not sep or name not in fields:
            raise SystemExit(f"--set takes NAME=VALUE with NAME a NewsConfig field ({', '.join(fields)}), got {p!r}")
        out[name] = type(getattr(NewsConfig(), name))(value)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", default="medium")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="a NewsConfig knob")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (1 to run two candidates side by side)")
    ap.add_argument("--device", default="cpu")
    a = ap.parse_args()
    knobs = parse_knobs(a.set)
    train_ds, dev_ds = (load_dataset("synthetic_news", s, scale=a.scale, seed=a.seed, **knobs) for s in ("train", "dev"))
    tag = ",".join(f"{k}={v}" for k, v in sorted(knobs.items())) or "defaults"
    cfg = neighborhoods.arm_config(a.scale, BASELINE, data=f"{train_ds.source}|calibration {tag}")
    t0 = time.perf_counter()
    runs, hist = run_grid({BASELINE: cfg}, train_ds, dev_ds, dev_ds, seeds=[a.seed],
                          evaluate_fn=neighborhoods.neighborhoods_evaluator(dev_ds, seed=a.seed, device=a.device),
                          context=RunContext(device=a.device, progress=True, ckpt_dir=ROOT / "runs" / "calibration",
                                             threads=a.threads))
    row = {"knobs": tag, "scale": a.scale, "seed": a.seed, "split": "dev", "seconds": round(time.perf_counter() - t0),
           **{k: round(float(runs.iloc[0][k]), 2) for k in ("i2t_acc5", "t2i_acc5", "rsum")},
           **{k: round(v, 1) for k, v in world_properties(dev_ds).items()}}
    print(json.dumps(row))
    with open(ROOT / "runs" / "calibration" / "news.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
