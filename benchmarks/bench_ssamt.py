"""SSAMT's inter-modality scoring: one batched pass over all candidate pairs vs a per-pair loop.

    python benchmarks/bench_ssamt.py [--scale smoke] [--pairs 2000] [--batch 512]

Scores ``--pairs`` (image, caption) pairs of the synthetic test split with an untrained SSAMT
of the scale's size (timing does not depend on the weights), both ways, checks they agree,
and prints pairs/s. Also times a training step with and without dropout (the config's default
is 0 on the CPU because attention dropout doubles a step), and the phrase-matching masks of one
phase-2 step (``part_masks``: a Python loop over the step's 2B negative pairs) beside it.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from itmlib.data import load_dataset
from itmlib.models import build_model
from itmlib.papers.ssamt import ssamt_config


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", default="smoke")
    ap.add_argument("--pairs", type=int, default=2000)
    ap.add_argument("--loop-pairs", type=int, default=200, help="pairs scored one at a time (extrapolated)")
    ap.add_argument("--batch", type=int, default=512)
    a = ap.parse_args()
    test = load_dataset("synthetic", "test", scale=a.scale, progress=False)
    train = load_dataset("synthetic", "train", scale=a.scale, progress=False)
    cfg = ssamt_config(a.scale)
    torch.manual_seed(0)
    model, vocab = build_model(cfg.model, train)
    model.phase.fill_(1)
    text = model.dataset_inputs(test, vocab)
    rng = np.random.default_rng(0)
    img, cap = rng.integers(test.n_images, size=a.pairs), rng.integers(test.n_captions, size=a.pairs)
    t0 = time.perf_counter()
    batched = model.score_pairs(test, text, img, cap, batch_size=a.batch)
    tb = time.perf_counter() - t0
    n = min(a.loop_pairs, a.pairs)
    t0 = time.perf_counter()
    loop = np.concatenate([model.score_pairs(test, text, img[i:i + 1], cap[i:i + 1])["inter"] for i in range(n)])
    tl = time.perf_counter() - t0
    assert np.allclose(loop, batched["inter"][:n], atol=1e-5)
    print(f"{a.scale}: batched {a.pairs / tb:,.0f} pairs/s, per-pair loop {n / tl:,.0f} pairs/s "
          f"(x{(a.pairs / tb) / (n / tl):.1f}); threads {torch.get_num_threads()}")
    for dropout in (0.0, 0.1):
        m, _ = build_model(cfg.with_model(dropout=dropout, intra_epochs=0).model, train)
        tt = m.dataset_inputs(train, vocab)
        steps = []
        for s in range(12):
            idx = rng.choice(train.n_captions, cfg.batch_size, replace=False)
            t0 = time.perf_counter()
            m.batch_loss(train, tt, idx, epoch=1, margin=0.2, hardest=True).backward()
            steps.append(time.perf_counter() - t0)
        print(f"  phase-2 training step, dropout {dropout}: {1000 * np.median(steps[2:]):.0f} ms")
    from itmlib.relevance.phrases import part_masks

    tt = model.dataset_inputs(train, vocab)
    B = cfg.batch_size
    times = []
    for s in range(20):
        caps = rng.choice(train.n_captions, 2 * B, replace=False)
        imgs = train.img_of_caption[rng.choice(train.n_captions, 2 * B, replace=False)]
        t0 = time.perf_counter()
        part_masks(tt["labels"], tt["parts"], tt["lengths"], imgs, caps, int(tt["lengths"][caps].max()), 64)
        times.append(time.perf_counter() - t0)
    print(f"  part_masks for one phase-2 step ({2 * B} negative pairs): {1000 * np.median(times):.1f} ms")


if __name__ == "__main__":
    main()
