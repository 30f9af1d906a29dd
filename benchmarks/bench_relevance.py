"""Relevance matrices: speed against pycocoevalcap, side by side in one run, on real COCO captions.

    .venv/bin/python benchmarks/bench_relevance.py            # 1k fold ratios + COCO 5k CIDEr-D / scene-graph F1
    .venv/bin/python benchmarks/bench_relevance.py --quick    # 1k fold ratios only

Per-pair throughput is (candidate, image reference set) pairs per second.
pycocoevalcap's scorers are timed on a random sample of pairs of the same
fold with document frequencies over the same references; ours compute the
whole 1,000 x 5,000 matrix. COCO 5k steps run in a subprocess each, so their
peak RSS is their own.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import numpy as np

_CHILD = r"""
import json, resource, sys, time
import numpy as np
from itmlib.data import load_dataset
from itmlib.relevance import cider_d_matrix, rouge_l_matrix, scene_graph_f1_matrix, parse_tuples
what = sys.argv[1]
ds = load_dataset("coco", "test")
refs = [[c.lower() for c in ds.captions_of(i)] for i in range(ds.n_images)]
cands = [c for g in refs for c in g]
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
out = {}
if what == "cider":
    t = time.perf_counter(); m = cider_d_matrix(refs, cands); out["seconds"] = time.perf_counter() - t
elif what == "rouge":
    t = time.perf_counter(); m = rouge_l_matrix(refs, cands); out["seconds"] = time.perf_counter() - t
else:
    t = time.perf_counter(); tup = parse_tuples(cands); out["parse_seconds"] = time.perf_counter() - t
    r = [tup[5 * i:5 * i + 5] for i in range(ds.n_images)]
    t = time.perf_counter(); m = scene_graph_f1_matrix(r, tup); out["seconds"] = time.perf_counter() - t
out["shape"] = list(m.shape)
out["peak_rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
out["rss_before_gb"] = rss0 / 1e6
print(json.dumps(out))
"""


def _pycoco_cider_us(refs, cands, n_pairs, rng):
    from pycocoevalcap.cider.cider_scorer import CiderScorer

    t = time.perf_counter()
    done = 0
    while done < n_pairs:
        perm = rng.permutation(len(cands))[:len(refs)]
        sc = CiderScorer(n=4, sigma=6.0)
        for i in range(len(refs)):
            sc += (cands[perm[i]], refs[i])
        sc.compute_score()
        done += len(refs)
    return 1e6 * (time.perf_counter() - t) / done


def _pycoco_rouge_us(refs, cands, n_pairs, rng):
    from pycocoevalcap.rouge.rouge import Rouge

    r = Rouge()
    pairs = [(int(rng.integers(len(refs))), int(rng.integers(len(cands)))) for _ in range(n_pairs)]
    t = time.perf_counter()
    for i, j in pairs:
        r.calc_score([cands[j]], refs[i])
    return 1e6 * (time.perf_counter() - t) / n_pairs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="skip the COCO 5k runs")
    ap.add_argument("--rouge-5k", action="store_true", help="also time ROUGE-L on COCO 5k (~1 min)")
    args = ap.parse_args()
    from itmlib.data import load_dataset
    from itmlib.relevance import cider_d_matrix, rouge_l_matrix

    ds = load_dataset("coco", "test1k-0")
    refs = [[c.lower() for c in ds.captions_of(i)] for i in range(ds.n_images)]
    cands = [c for g in refs for c in g]
    rng = np.random.default_rng(0)
    pairs = len(refs) * len(cands)
    print(f"COCO 1k fold 0: {len(refs)} images x {len(cands)} captions = {pairs:,} pairs")
    for name, ours_fn, theirs_fn in (("CIDEr-D", cider_d_matrix, _pycoco_cider_us),
                                     ("ROUGE-L", rouge_l_matrix, _pycoco_rouge_us)):
        t = time.perf_counter()
        ours_fn(refs, cands)
        ours = 1e6 * (time.perf_counter() - t) / pairs
        theirs = theirs_fn(refs, cands, 3000, rng)
        print(f"{name}  pycocoevalcap {theirs:8.1f} us/pair | itmlib {ours:8.4f} us/pair | {theirs / ours:8.0f}x "
              f"(whole matrix {ours * pairs / 1e6:.1f} s; pycocoevalcap would take {theirs * pairs / 6e7:.0f} min)")
    if args.quick:
        return
    steps = ["cider", "sgf1"] + (["rouge"] if args.rouge_5k else [])
    for what in steps:
        res = json.loads(subprocess.run([sys.executable, "-c", _CHILD, what], check=True, capture_output=True,
                                        text=True).stdout.strip().splitlines()[-1])
        extra = f", parsing 25,000 captions once {res['parse_seconds']:.0f} s" if "parse_seconds" in res else ""
        print(f"COCO 5k {what:5s} {res['shape'][0]} x {res['shape'][1]}: {res['seconds']:.1f} s, "
              f"peak RSS {res['peak_rss_gb']:.2f} GB (data loaded: {res['rss_before_gb']:.2f} GB){extra}")


if __name__ == "__main__":
    main()
