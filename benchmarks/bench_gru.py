"""Packed vs padded bidirectional GRU on the CPU: where does packing stop paying?

    python benchmarks/bench_gru.py [--batch 128 256] [--lengths 5-15 10-30 15-40 40-80] [--threads 1]

For each batch size and range of text lengths (uniform), times one forward + backward of the
VSE++ text GRU (word_dim 200, hidden 256 as at medium) through a packed sequence (torch's
``nn.GRU``) and through :func:`itmlib.models.vse.padded_bigru`, interleaved, and checks that both
give the same masked-mean output. The crossover sets ``itmlib.models.vse.PADDED_GRU_FROM``.
"""

from __future__ import annotations

import argparse
import time

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from itmlib.models.vse import padded_bigru


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, nargs="+", default=[128, 256])
    ap.add_argument("--lengths", nargs="+", default=["5-15", "10-30", "15-40", "40-80"])
    ap.add_argument("--word-dim", type=int, default=200)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    gru = nn.GRU(a.word_dim, a.hidden, batch_first=True, bidirectional=True)
    print(f"torch {torch.__version__}, {a.threads} thread(s), word_dim {a.word_dim}, hidden {a.hidden}; "
          "seconds per forward + backward, best of the repeats")
    for B in a.batch:
        for rng in a.lengths:
            lo, hi = (int(v) for v in rng.split("-"))
            lengths = torch.randint(lo, hi + 1, (B,))
            T = int(lengths.max())
            x = torch.randn(B, T, a.word_dim, requires_grad=True)
            m = torch.arange(T)[None, :] < lengths[:, None]

            def packed() -> torch.Tensor:
                out, _ = gru(pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False))
                out, _ = pad_packed_sequence(out, batch_first=True, total_length=T)
                return ((out[..., :a.hidden] + out[..., a.hidden:]) * m.unsqueeze(-1)).sum(1)

            def padded() -> torch.Tensor:
                f, b = padded_bigru(gru, x, lengths, m)
                return ((f + b) * m.unsqueeze(-1)).sum(1)

            assert torch.allclose(packed(), padded(), atol=1e-4)
            best = {"packed": float("inf"), "padded": float("inf")}
            for _ in range(a.repeats):
                for name, fn in (("packed", packed), ("padded", padded)):
                    t0 = time.perf_counter()
                    fn().sum().backward()
                    best[name] = min(best[name], time.perf_counter() - t0)
            print(f"batch {B:>4}  lengths {rng:>6} (padded to {T:>3})  packed {best['packed']:6.3f} s   "
                  f"padded {best['padded']:6.3f} s   padded speed-up {best['packed'] / best['padded']:.2f}x",
                  flush=True)


if __name__ == "__main__":
    main()
