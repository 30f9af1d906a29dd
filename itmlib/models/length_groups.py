"""Encoding a padded batch in groups of similar length (TERAN's two transformer stacks, on a CPU).

A batch of B items (regions of an image, word-pieces of a caption) is padded to its longest item; a transformer
layer costs every padded slot as much as a real one (attention: its square). Sorted by length and split into
groups, each group padded only to its own longest item, the layers skip most of that padding. Attention never
sees a padded key (the padding mask), so each item's tokens are unchanged up to float rounding.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

__all__ = ["LENGTH_GROUPS", "by_length"]

#: on a CPU, a batch is encoded in this many groups of similar length, each padded only to its own longest
#: item: the transformer layers then skip most padding (``benchmarks/bench_teran_step.py``). Each item's tokens are
#: those of the whole batch up to float rounding (its attention never sees padding); under dropout the masks
#: drawn differ (another draw of the same distribution). On a GPU one group: its steps are launch-bound.
LENGTH_GROUPS = 4


def by_length(encode: Any, lengths: torch.Tensor, width: int, *rows: torch.Tensor
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``encode(*rows)`` -> (tokens (B, L, e), mask (B, L), vector (B, e)) run on :data:`LENGTH_GROUPS` groups of
    the rows sorted by ``lengths`` (one group on a GPU, or with few rows); each group's tokens and mask padded
    (zeros, False) to ``width`` slots and put back in the rows' order."""
    groups = 1 if rows[0].device.type != "cpu" or len(lengths) < 2 * LENGTH_GROUPS else LENGTH_GROUPS
    order = torch.argsort(lengths, stable=True) if groups > 1 else None
    parts = [encode(*rows)] if order is None else \
        [encode(*(r[idx] for r in rows)) for idx in torch.tensor_split(order, groups)]
    h = torch.cat([nn.functional.pad(p[0], (0, 0, 0, width - p[0].shape[1])) for p in parts])
    m = torch.cat([nn.functional.pad(p[1], (0, width - p[1].shape[1])) for p in parts])
    g = torch.cat([p[2] for p in parts])
    if order is None:
        return h, m, g
    back = torch.argsort(order)
    return h[back], m[back], g[back]
