"""Training throughput: seconds per epoch and per dev evaluation, this tree beside another revision.

    .venv/bin/python benchmarks/bench_train.py --scale smoke                      # this tree only
    .venv/bin/python benchmarks/bench_train.py --scale medium --against HEAD~1   # side by side, same run
    python benchmarks/bench_train.py --scale full --device cuda --repeats 1      # a GPU (benchmarks/gpu_figures.sh)

For each model (VSE++ with the triplet loss, VSE++ with SAM, TERAN MrSw with its scale's
MiniLM: frozen at smoke and medium, fine-tuned at full) it trains 1 and then 3 epochs from scratch in a fresh checkpoint folder; one
epoch costs (T(3) - T(1)) / 2 minus one dev evaluation (timed on its own), T being the training
loop's own seconds (``TrainResult.seconds``), so model building, the vocabulary, SAM's CIDEr-D index
and TERAN's BERT states (cached by the first run, which a wall-clock difference would charge to T(1))
are not counted, nor a GPU's warm-up in the first epoch.
Reports seconds per epoch, steps/s, captions/s, the dev evaluation and the peak RSS of
the process. ``--against REV`` checks REV out into a temporary git worktree and runs the
same measurement there in a child process, interleaved with this tree's (A B A B over
``--repeats``), so both see the same machine load; the table gives the range over repeats
and the speed-up. Only the public API is used (``train``, ``evaluate`` and the configs),
found where each revision keeps it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS = ("vse_triplet", "vse_sam", "teran")


def _configs(scale: str):
    """(name -> TrainConfig) from whichever module this revision keeps them in."""
    try:
        from itmlib.papers.ncs_sam import vse_config
        from itmlib.papers.teran import teran_config
    except ImportError:                                           # before the papers/ refactor
        from itmlib.experiments import teran_config, vse_config
    return {"vse_triplet": lambda data: vse_config(scale, loss="triplet", data=data),
            "vse_sam": lambda data: vse_config(scale, loss="sam", tau=5.0, sampling="soft", keep_triplet=True, data=data),
            "teran": lambda data: teran_config(scale, data=data)}


def measure(scale: str, models: list[str], fraction: float, device: str = "cpu") -> dict[str, dict[str, float]]:
    """This process's itmlib: per model, seconds per epoch, per dev evaluation, steps/s, captions/s."""
    import dataclasses

    import torch

    from itmlib.data import load_dataset
    from itmlib.training.train import evaluate, train
    try:
        from itmlib.training.timing import timed
    except ImportError:                      # a revision before itmlib.training.timing (--against): the CPU needs no sync

        def timed(fn, device="cpu"):
            t = time.perf_counter()
            r = fn()
            return time.perf_counter() - t, r

    train_ds = load_dataset("synthetic", "train", scale=scale, progress=False)
    if fraction < 1.0:
        train_ds = train_ds.subset(fraction, seed=0)
    dev_ds = load_dataset("synthetic", "dev", scale=scale, progress=False)
    out = {}
    for name in models:
        cfg = _configs(scale)[name](train_ds.source)
        extra = {}
        if getattr(cfg, "select_by", "rsum") == "ndcg":           # TERAN selects its epoch by dev NDCG
            from itmlib.papers.teran import teran_dev_relevance
            extra["dev_relevance"] = teran_dev_relevance(dev_ds)
        times, walls = {}, {}
        with tempfile.TemporaryDirectory() as ck:
            for epochs in (1, 3):
                c = dataclasses.replace(cfg, epochs=epochs)
                walls[epochs], r = timed(lambda: train(c, train_ds, dev_ds, ckpt_dir=ck, name=f"{name}{epochs}",
                                                       device=device, progress=False, **extra), device)
                times[epochs] = getattr(r, "seconds", walls[epochs])   # older revisions: wall clock
        with torch.no_grad():
            ev, _ = timed(lambda: evaluate(r.model, r.vocab, dev_ds, None, device), device)
        epoch = (times[3] - times[1]) / 2 - ev
        steps = -(-train_ds.n_captions // cfg.batch_size)
        out[name] = {"epoch_s": epoch, "dev_eval_s": ev, "steps_per_s": steps / epoch,
                     "captions_per_s": train_ds.n_captions / epoch, "setup_s": walls[1] - times[1],
                     "train_captions": train_ds.n_captions, "batch_size": cfg.batch_size}
    out["_peak_rss_mb"] = {"value": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    return out


def _child(tree: Path, args: argparse.Namespace) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(tree), os.environ.get("PYTHONPATH")]))}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--scale", args.scale, "--fraction", str(args.fraction),
           "--device", args.device, "--models", *args.models, "--json"]
    res = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"benchmark in {tree} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", default="smoke", choices=("smoke", "medium", "full"))
    ap.add_argument("--fraction", type=float, default=1.0, help="share of the training images (medium: 04 uses 0.25)")
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    ap.add_argument("--against", default=None, help="a git revision to measure side by side (e.g. HEAD~1)")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--device", default="cpu", help="cpu, cuda or auto (itmlib.config.resolve_device)")
    ap.add_argument("--json", action="store_true", help="print one JSON line (used for the child processes)")
    args = ap.parse_args()
    from itmlib.config import resolve_device

    args.device = resolve_device(args.device)
    if args.json:
        print(json.dumps(measure(args.scale, args.models, args.fraction, args.device)))
        return
    trees = {"this tree": ROOT}
    tmp = None
    if args.against:
        tmp = Path(tempfile.mkdtemp(prefix="bench-train-"))
        rev = subprocess.run(["git", "rev-parse", "--short", args.against], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout.strip()
        subprocess.run(["git", "worktree", "add", "--detach", str(tmp / "tree"), rev], cwd=ROOT, check=True,
                       capture_output=True)
        trees = {f"{args.against} ({rev})": tmp / "tree", "this tree": ROOT}
    try:
        runs: dict[str, list[dict]] = {k: [] for k in trees}
        for rep in range(args.repeats):
            for label, tree in trees.items():
                print(f"[bench_train] repeat {rep + 1}/{args.repeats}: {label} ...", flush=True)
                runs[label].append(_child(tree, args))
    finally:
        if tmp is not None:
            subprocess.run(["git", "worktree", "remove", "--force", str(tmp / "tree")], cwd=ROOT)
    where = f"{os.cpu_count()} CPU cores"
    if args.device.startswith("cuda"):
        import torch
        where = f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}"
    print(f"\nscale {args.scale}, fraction {args.fraction}, device {args.device} ({where}), {args.repeats} repeats (min-max)")
    print(f"{'model':12s} {'tree':22s} {'s/epoch':>15s} {'steps/s':>13s} {'captions/s':>15s} {'dev eval s':>13s} {'peak RSS MB':>12s}")
    for m in args.models:
        for label in trees:
            rs = runs[label]

            def rng(key: str, fmt: str = "{:.1f}") -> str:
                vals = [r[m][key] for r in rs]
                return f"{fmt.format(min(vals))}-{fmt.format(max(vals))}"
            rss = max(r["_peak_rss_mb"]["value"] for r in rs)
            print(f"{m:12s} {label:22s} {rng('epoch_s'):>15s} {rng('steps_per_s', '{:.2f}'):>13s} "
                  f"{rng('captions_per_s', '{:.0f}'):>15s} {rng('dev_eval_s', '{:.2f}'):>13s} {rss:12.0f}")
        if len(trees) == 2:
            old, new = (runs[k] for k in trees)
            ratios = [o[m]["epoch_s"] / n[m]["epoch_s"] for o in old for n in new]
            print(f"{m:12s} {'speed-up (epochs/s)':22s} {min(ratios):.2f}x-{max(ratios):.2f}x")


if __name__ == "__main__":
    main()
