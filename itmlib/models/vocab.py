"""A word vocabulary for GRU text encoders: lower-cased alphanumeric tokens, built on training captions."""

from __future__ import annotations

import re
from collections import Counter
from typing import Sequence

import torch

__all__ = ["Vocab", "tokenize"]

_TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(caption: str) -> list[str]:
    return _TOKEN.findall(caption.lower())


class Vocab:
    """Words seen at least ``min_count`` times; id 0 is padding, 1 unknown."""

    PAD, UNK = 0, 1

    def __init__(self, words: Sequence[str]) -> None:
        self.itos = ["<pad>", "<unk>"] + list(words)
        self.stoi = {w: i for i, w in enumerate(self.itos)}

    @classmethod
    def build(cls, captions: Sequence[str], min_count: int = 1) -> "Vocab":
        counts = Counter(w for c in captions for w in tokenize(c))
        return cls(sorted(w for w, n in counts.items() if n >= min_count))

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, captions: Sequence[str], max_len: int = 40) -> tuple[torch.Tensor, torch.Tensor]:
        """(padded ids (N, T), lengths (N,)); every caption keeps at least one token."""
        ids = [[self.stoi.get(w, self.UNK) for w in tokenize(c)][:max_len] or [self.UNK] for c in captions]
        T = max(len(x) for x in ids) if ids else 1
        out = torch.zeros(len(ids), T, dtype=torch.long)
        for i, x in enumerate(ids):
            out[i, :len(x)] = torch.tensor(x)
        return out, torch.tensor([len(x) for x in ids], dtype=torch.long)
