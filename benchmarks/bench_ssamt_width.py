"""What SSAMT's width costs a training step: the mask transformer at notebook 06's medium width (128) and at
VSE++'s (256, notebook 09's width probe), one phase-1 and one phase-2 step each.

    python benchmarks/bench_ssamt_width.py [--widths 128 256] [--steps 12] [--threads 1]

Untrained models (a step's time does not depend on the weights) on the synthetic smoke world's training
captions, the medium batch size; prints each width's median step time and its ratio to the first width's,
the factor a member's measured time is extrapolated by.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from itmlib.config import get_scale
from itmlib.data import load_dataset
from itmlib.models import build_model
from itmlib.papers.ssamt import ssamt_config


def step_ms(cfg, train, phase: int, steps: int, batch: int) -> float:
    torch.manual_seed(0)
    model, vocab = build_model(cfg.model, train)
    model.phase.fill_(phase)
    text = model.dataset_inputs(train, vocab)
    rng = np.random.default_rng(0)
    times = []
    for _ in range(steps):
        idx = rng.choice(train.n_captions, batch, replace=False)
        t0 = time.perf_counter()
        model.batch_loss(train, text, idx, epoch=1, margin=0.2, hardest=bool(phase)).backward()
        times.append(time.perf_counter() - t0)
    return 1000 * float(np.median(times[2:]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--widths", type=int, nargs="+", default=[128, 256])
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    train = load_dataset("synthetic", "train", scale="smoke", progress=False)
    batch = get_scale("medium").batch_size
    first = {}
    for w in a.widths:
        cfg = ssamt_config("medium", embed_dim=w, ff_dim=2 * w)
        for phase in (0, 1):
            ms = step_ms(cfg, train, phase, a.steps, batch)
            first.setdefault(phase, ms)
            print(f"width {w}, phase {phase + 1}: {ms:.0f} ms a step of {batch} ({ms / first[phase]:.2f}x width {a.widths[0]}); "
                  f"threads {torch.get_num_threads()}")


if __name__ == "__main__":
    main()
