"""TERAN retrieval at scale: chunked ``score_matrix`` vs a per-pair loop, and full-test timings.

    .venv/bin/python benchmarks/bench_teran.py                          # 1k x 5k on the CPU, d=1024
    .venv/bin/python benchmarks/bench_teran.py --images 5000 --captions 25000 --device cuda   # GPU goal <= 10 s
    .venv/bin/python benchmarks/bench_teran.py --images 200 --captions 1000 --dim 64         # quick look

Features are random unit vectors with the paper's shapes: R = 36 regions + the
CLS slot per image, 8-25 word-pieces per caption (padding masked), joint
dimension d (the paper: 1024). Timings are independent of the values.

1. Speed-up: the per-pair loop (one ``A = V S^T`` and pooling per pair, in
   torch, valid rows only - what a straightforward implementation does) is
   timed on ``--loop-pairs`` pairs; ``score_matrix`` is checked against it on
   the same pairs and its time per pair over the whole matrix gives the
   speed-up (goal >= 20x on the CPU). Both do the same multiply-adds, so the
   loop loses only its per-call overhead: the speed-up shrinks as d grows.
2. The whole ``images x captions`` matrix, one image query (all captions) and
   one caption query (all images). The paper quotes ~0.12 s per image query
   over 5k sentences and ~0.02 s per sentence query over 1k images (GTX 1080 Ti).
"""

from __future__ import annotations

import argparse
import platform
from types import SimpleNamespace
import numpy as np
import torch

from itmlib.config import resolve_device
from itmlib.papers.teran import query_times
from itmlib.training.timing import timed
from itmlib.models.alignment import POOLINGS, score_matrix


def random_features(n: int, length: int | tuple[int, int], d: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(n, L, d) unit vectors and an (n, L) mask; a range ``(lo, hi)`` draws per-item lengths."""
    g = torch.Generator().manual_seed(seed)
    if isinstance(length, tuple):
        lens = torch.randint(length[0], length[1] + 1, (n,), generator=g)
        L = length[1]
    else:
        lens, L = torch.full((n,), length), length
    x = torch.nn.functional.normalize(torch.randn(n, L, d, generator=g), dim=-1)
    mask = torch.arange(L)[None, :] < lens[:, None]
    return x * mask[..., None], mask


def per_pair_scores(im: torch.Tensor, im_m: torch.Tensor, tx: torch.Tensor, tx_m: torch.Tensor,
                    pairs: np.ndarray, pooling: str) -> np.ndarray:
    """The straightforward way: for each (image, caption) pair, A = V S^T over valid rows, then pool."""
    out = np.empty(len(pairs), np.float32)
    regs = [im[i][im_m[i]] for i in range(len(im))]
    for k, (i, t) in enumerate(pairs):
        A = regs[i] @ tx[t][tx_m[t]].T
        if pooling == "mrsw":
            s = A.max(0).values.sum()
        elif pooling == "mwsr":
            s = A.max(1).values.sum()
        elif pooling == "symm":
            s = A.max(0).values.sum() + A.max(1).values.sum()
        else:
            s = A.max(0).values.mean()
        out[k] = float(s)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--images", type=int, default=1000)
    ap.add_argument("--captions", type=int, default=5000)
    ap.add_argument("--dim", type=int, default=1024)
    ap.add_argument("--regions", type=int, default=37, help="regions per image incl. the CLS slot (paper: 36 + 1)")
    ap.add_argument("--pooling", default="mrsw", choices=POOLINGS)
    ap.add_argument("--device", default="cpu", help="cpu, cuda or auto")
    ap.add_argument("--loop-pairs", type=int, default=5000, help="pairs timed in the per-pair loop")
    ap.add_argument("--queries", type=int, default=5, help="single queries timed per direction (mean)")
    args = ap.parse_args()
    dev = resolve_device(args.device)
    torch.manual_seed(0)
    im, im_m = random_features(args.images, args.regions, args.dim, 0)
    tx, tx_m = random_features(args.captions, (8, 25), args.dim, 1)
    if dev.startswith("cuda"):
        im, im_m, tx, tx_m = (x.to(dev) for x in (im, im_m, tx, tx_m))
    name = torch.cuda.get_device_name() if dev.startswith("cuda") else f"{platform.processor() or 'cpu'}, {torch.get_num_threads()} threads"
    print(f"device {dev} ({name}); torch {torch.__version__}; {args.images} images x {args.captions} captions, "
          f"d={args.dim}, R={args.regions}, W=8-25 ({float(tx_m.sum(1).float().mean()):.1f} on average), {args.pooling}")

    # 1. speed-up over the per-pair loop, on the same pairs
    rng = np.random.default_rng(0)
    n_loop_img = max(1, min(args.images, args.loop_pairs // args.captions or 1))
    pairs = np.stack([rng.integers(0, n_loop_img, args.loop_pairs), rng.integers(0, args.captions, args.loop_pairs)], 1)
    timed(lambda: per_pair_scores(im, im_m, tx, tx_m, pairs[:50], args.pooling), dev)      # warm-up
    t_loop, loop = timed(lambda: per_pair_scores(im, im_m, tx, tx_m, pairs, args.pooling), dev)
    timed(lambda: score_matrix(im[:1], im_m[:1], tx[:100], tx_m[:100], args.pooling), dev)  # warm-up
    t_chunk, block = timed(lambda: score_matrix(im[:n_loop_img], im_m[:n_loop_img], tx, tx_m, args.pooling), dev)
    err = float(np.abs(block[pairs[:, 0], pairs[:, 1]] - loop).max())
    per_loop, per_chunk = t_loop / len(pairs), t_chunk / (n_loop_img * args.captions)
    print(f"per-pair loop: {len(pairs)} pairs in {t_loop:.2f} s = {1e6 * per_loop:.1f} us/pair")
    print(f"score_matrix:  {n_loop_img} x {args.captions} (one image chunk) in {t_chunk:.2f} s = {1e6 * per_chunk:.2f} us/pair "
          f"-> {per_loop / per_chunk:.0f}x faster; max |difference| {err:.2e}")

    # 2. the whole matrix, and single queries
    q = query_times(SimpleNamespace(regions=im, region_mask=im_m, words=tx, word_mask=tx_m), args.pooling, dev,
                    n_queries=args.queries)
    t_full, qi, qt = q["full_matrix_s"], q["image_query_s"], q["caption_query_s"]
    per_full = t_full / (args.images * args.captions)
    print(f"full {args.images} x {args.captions} matrix: {t_full:.2f} s = {1e6 * per_full:.2f} us/pair "
          f"-> {per_loop / per_full:.1f}x the per-pair loop, goal >= 20x (loop estimate {per_loop * args.images * args.captions:.0f} s)")
    print(f"one image query over {args.captions} captions: {qi:.3f} s (paper: 0.12 s over 5k, 1080 Ti)")
    print(f"one caption query over {args.images} images: {qt:.3f} s (paper: 0.02 s over 1k, 1080 Ti)")


if __name__ == "__main__":
    main()
