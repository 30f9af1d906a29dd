"""Time the synthetic world: generation per scale, cache reload, relevance blocks.

    .venv/bin/python benchmarks/bench_synthetic.py --scale smoke
    .venv/bin/python benchmarks/bench_synthetic.py --scale full      # Flickr30K-sized, minutes

Generation and reload use a temporary cache folder, so the numbers are for a
cold and a warm cache respectively.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time

from itmlib.config import get_scale
from itmlib.data.synthetic import load_synthetic


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", default="smoke")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    sc = get_scale(args.scale)
    with tempfile.TemporaryDirectory() as tmp:
        total = 0.0
        for split in ("train", "dev", "test"):
            n = sc.n_images(split)
            t = time.perf_counter()
            load_synthetic(split, n, args.seed, cache_dir=tmp, progress=False)
            gen = time.perf_counter() - t
            t = time.perf_counter()
            load_synthetic(split, n, args.seed, cache_dir=tmp, progress=False)
            reload = time.perf_counter() - t
            total += gen
            print(f"{args.scale:6s} {split:5s} {n:6d} images: generate+cache {gen:7.2f} s "
                  f"({1e3 * gen / n:.2f} ms/image), reload {reload:6.2f} s")
        test = load_synthetic("test", sc.n_test, args.seed, cache_dir=tmp, progress=False)
        t = time.perf_counter()
        rel = test.relevance()
        print(f"relevance, all {rel.shape[0]} x {rel.shape[1]} test pairs: {time.perf_counter() - t:.3f} s")
        t = time.perf_counter()
        test.human_relevance()
        print(f"human 1-5 judgements, same pairs: {time.perf_counter() - t:.3f} s")
        print(f"total generation {total:.1f} s; peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.2f} GB")


if __name__ == "__main__":
    main()
