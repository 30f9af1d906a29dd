"""A slice of notebook 04's grid, inline on every core vs on two one-thread workers: what does
``-p executor processes:2`` buy for ``make tables``?

    .venv/bin/python benchmarks/bench_grid_workers.py [--scale medium] [--members 4] [--skip 0] [--epochs 3] [--fraction 0.25]
    python benchmarks/bench_grid_workers.py --device cuda --executors inline processes:2   # one GPU (benchmarks/gpu_figures.sh)

Takes ``--members`` configs of 04's medium grid (``sam_configs`` over the full ``ablation_settings``,
the order ``run_grid`` trains them in), after the first ``--skip`` of them (the first config is the
VSE++ baseline; ``--skip 1`` times SAM members only, which are most of the grid), shortened to
``--epochs``, and trains
them twice from empty checkpoint folders on seed 0: ``inline`` (one process, torch's default
threads: every core, what ``make tables`` does without ``-p executor``) and ``processes:2`` (two
one-thread Dask workers; on a GPU both share it). ``--executors`` picks others. Prints each wall
time, the speed-up, and both extrapolated to 04's whole
medium grid (members x epochs x seeds of the scale's overrides, ``ci/medium.yaml``), which no 3-hour session can time end to end.

Run it on an otherwise idle machine; the figures in the README come from it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from itmlib.config import resolve_device  # noqa: E402
from itmlib.data import load_dataset  # noqa: E402
from itmlib.training.grid import RunContext, run_grid  # noqa: E402
from itmlib.course.notebooks import scale_overrides  # noqa: E402
from itmlib.papers.ncs_sam import ablation_settings, sam_configs  # noqa: E402
from itmlib.relevance import eval_relevance  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", default="medium")
    ap.add_argument("--members", type=int, default=4, help="configs of 04's grid to train (>= 2: both workers busy)")
    ap.add_argument("--skip", type=int, default=0, help="configs of 04's grid to pass over first (1: SAM members only)")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--fraction", type=float, default=0.25, help="04's medium fraction (ci/medium.yaml)")
    ap.add_argument("--device", default="cpu", help="cpu, cuda or auto (itmlib.config.resolve_device)")
    ap.add_argument("--executors", nargs="+", default=["inline", "processes:2"], help="run_grid executors to time, in order")
    a = ap.parse_args()
    if a.members < 2 or a.epochs < 1 or a.skip < 0:
        ap.error("--members must be >= 2, --epochs >= 1 and --skip >= 0")
    medium = scale_overrides(a.scale).get("04_sam", {})
    modes, seeds = medium.get("sam_modes", ["paper"]), int(medium.get("n_seeds", 1))
    train, dev, test = (load_dataset("synthetic", s, scale=a.scale) for s in ("train", "dev", "test"))
    rel = eval_relevance(test)
    grid = ablation_settings(a.scale, [3, 5, 10], ["soft", "random", "hard"], [True, False])
    full = sam_configs(a.scale, grid, data=train.source, sam_modes=modes, controls=True, sam_warmup=True)
    names = list(full)[a.skip: a.skip + a.members]
    if len(names) < a.members:
        ap.error(f"04's grid at {a.scale} has {len(full)} configs: --skip {a.skip} leaves {len(names)}, not {a.members}")
    part = sam_configs(a.scale, grid, data=train.source + "|bench_grid_workers", epochs=a.epochs, sam_modes=modes,
                       controls=True, sam_warmup=True)
    part = {n: part[n] for n in names}
    full_epochs = sum(c.epochs for c in full.values()) * seeds
    print(f"{len(part)} of 04's {len(full)} configs ({', '.join(names)}) x {a.epochs} epochs, fraction {a.fraction}, {a.scale}; "
          f"04 at {a.scale}: {len(full)} x {seeds} seeds, {full_epochs} epochs")
    kw = dict(fractions=[a.fraction], seeds=[0])
    device = resolve_device(a.device)
    if device == "cuda":
        import torch
        print(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    wall = {}
    for executor in a.executors:
        t0 = time.perf_counter()
        run_grid(part, train, dev, test, rel, context=RunContext(device=device, ckpt_dir=tempfile.mkdtemp(prefix="bench_grid_"),
                                                                 executor=executor), **kw)
        wall[executor] = time.perf_counter() - t0
        per_epoch = wall[executor] / (len(part) * a.epochs)
        print(f"{executor:>12}: {wall[executor]:7.1f} s, {per_epoch:5.1f} s per member-epoch of the grid; "
              f"04 whole: ~{per_epoch * full_epochs / 3600:.1f} h")
    first = a.executors[0]
    for executor in a.executors[1:]:
        print(f"speed-up of {executor} over {first}: {wall[first] / wall[executor]:.2f}x")


if __name__ == "__main__":
    main()
