"""Time per training batch: plain triplet loss vs SAM (CIDEr-D margins per batch), side by side.

    .venv/bin/python benchmarks/bench_sam.py --scale smoke     # batch 64, 128-d
    .venv/bin/python benchmarks/bench_sam.py --scale medium    # batch 128, 256-d

Each step is a full training step (encode both towers, loss, backward, Adam)
on batches drawn from the synthetic training split; SAM's CIDEr-D index over
the training subset is built once beforehand (timed separately).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from itmlib.data import load_dataset
from itmlib.losses import SAMConfig, batch_phi, phi_index, sam_loss, triplet_loss
from itmlib.models import build_model
from itmlib.papers.ncs_sam import vse_config
from itmlib.training.train import score_batch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", default="smoke")
    ap.add_argument("--steps", type=int, default=40)
    args = ap.parse_args()
    ds = load_dataset("synthetic", "train", scale=args.scale, progress=False)
    cfg = vse_config(args.scale)
    t = time.perf_counter()
    cider = phi_index(ds)
    print(f"{args.scale}: {ds.n_images} training images; CIDEr-D index built once in {time.perf_counter() - t:.1f} s")
    rng = np.random.default_rng(0)
    batches = [rng.choice(ds.n_captions, cfg.batch_size, replace=False) for _ in range(args.steps)]
    res = {}
    for name in ("triplet", "sam"):
        torch.manual_seed(0)
        model, vocab = build_model(cfg.model, ds)
        text = model.text_inputs(ds.captions, vocab)
        opt = torch.optim.Adam(model.parameters(), 1e-3)
        times = []
        for cap_idx in batches:
            t = time.perf_counter()
            scores, same, img_idx = score_batch(model, ds, text, cap_idx)   # the training loop's own step
            if name == "triplet":
                loss = triplet_loss(scores, 0.2, True, same)
            else:
                loss, _ = sam_loss(scores, batch_phi(cider, img_idx, cap_idx), SAMConfig(tau=5.0, sampling="soft", keep_triplet=True),
                                   positive_mask=same)
            opt.zero_grad()
            loss.backward()
            opt.step()
            times.append(time.perf_counter() - t)
        res[name] = float(np.median(times[5:]))
        print(f"{name:8s} median {1e3 * res[name]:7.1f} ms per batch of {cfg.batch_size}")
    print(f"SAM / triplet time per batch: {res['sam'] / res['triplet']:.2f}x (goal <= 1.5x)")


if __name__ == "__main__":
    main()
