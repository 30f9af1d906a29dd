"""How much memory TERAN's frozen-BERT state cache takes, padded against packed, on a world's training captions.

    python benchmarks/bench_teran_states.py                       # 09's real-language world at medium
    python benchmarks/bench_teran_states.py --dataset synthetic   # 08's

Tokenizes the captions with ``TERANModel.text_inputs`` (no BERT forward) and counts float32 states: the
padded (N, T, h) tensor the cache held before :class:`itmlib.models.packed_states.PackedStates`, and the packed
store (each distinct caption's real tokens once).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="coco_scenes")
    ap.add_argument("--scale", default="medium")
    args = ap.parse_args()
    from itmlib.models.teran import TERANConfig, TERANModel
    from itmlib.training.world import load_splits

    t0 = time.time()
    train, _, _ = load_splits(args.dataset, args.scale, 0)
    # finetune_text: the model's own tokenisation of every caption, without the frozen encoder's forward
    model = TERANModel(TERANConfig(region_dim=1, finetune_text=True))
    attn = model.text_inputs(train.captions)["attn"]
    h = int(model.bert.config.hidden_size)
    first: dict[str, int] = {}
    distinct = sorted({first.setdefault(c, i) for i, c in enumerate(train.captions)})
    padded = attn.numel() * h * 4
    packed = int(attn[distinct].sum()) * h * 4
    print(f"{train.source.split('|')[0][:40]}...: {len(train.captions):,} training captions ({len(distinct):,} distinct), "
          f"T = {attn.shape[1]}, {float(attn.sum(1).float().mean()):.1f} tokens a caption, h = {h}")
    print(f"padded (N, T, h) float32: {padded / 2**30:.2f} GiB; packed: {packed / 2**30:.2f} GiB "
          f"({padded / packed:.1f}x less); {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
