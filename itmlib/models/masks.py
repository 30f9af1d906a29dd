"""SSAMT's attention masks (Fan et al., sec. 2.3): who may attend to whom in the mask transformer.

The sequence is ``[v_g, r_1..r_R] + [t_g, w_1..w_n, q_1..q_P]``. Three rules shape the inter encoder:

1. no region is visible to the sentence node t_g;
2. no token or phrase node is visible to the image node v_g;
3. a phrase node q sees only the tokens of its own phrase.

Rule 3 has two readings, both implemented (``rule3``): the extracted text says a phrase node is "connected to"
its words. ``"phrase_attends"`` (the default, as every committed run): a phrase node attends only to its own
words (the other tokens still see it). Rules 1-2, though, are worded as what is *not visible* to a node, read
here as what the node may not attend to; worded the same way, rule 3's "words outside the phrase are not
visible to it" could as well mean ``"words_hidden"``: words outside a phrase cannot attend to its node (the node
itself sees every word). Tests lock in both.
"""

from __future__ import annotations

import torch

__all__ = ["attention_mask", "float_mask", "RULE3"]

#: the two readings of rule 3 (module docstring)
RULE3 = ("phrase_attends", "words_hidden")


def attention_mask(region_valid: torch.Tensor, token_valid: torch.Tensor, phrase_valid: torch.Tensor,
                   cover: torch.Tensor, *, image: bool = True, text: bool = True,
                   rule3: str = "phrase_attends") -> torch.Tensor:
    """(B, L, L) bool, True where query q may attend to key k, for the sequence
    ``[v_g, regions (R)] + [t_g, tokens (T), phrases (P)]`` (either half alone with
    ``image=False`` / ``text=False``, as the intra encoders see it).

    Padding keys are hidden; the three rules of sec. 2.3 (inter: both halves present):
    (1) no region is visible to t_g, (2) no token or phrase is visible to v_g, (3) a
    phrase node sees only the tokens of ``cover`` (B, P, T) (``rule3="phrase_attends"``), or a token outside
    ``cover`` does not see the phrase node (``"words_hidden"``). Every query sees itself."""
    if rule3 not in RULE3:
        raise ValueError(f"rule3 must be one of {RULE3}, got {rule3!r}")
    B = token_valid.shape[0] if text else region_valid.shape[0]
    device = (token_valid if text else region_valid).device
    one = torch.ones(B, 1, dtype=torch.bool, device=device)
    parts, kinds = [], []
    if image:
        parts += [one, region_valid]
        kinds += [0] * (1 + region_valid.shape[1])
    if text:
        parts += [one, token_valid, phrase_valid]
        kinds += [1] + [2] * token_valid.shape[1] + [3] * phrase_valid.shape[1]
    valid = torch.cat(parts, 1)                                   # (B, L)
    L = valid.shape[1]
    allowed = valid[:, None, :].expand(B, L, L).clone()
    kind = torch.tensor(kinds, device=device)
    if image and text:
        v_g, t_g = 0, 1 + region_valid.shape[1]
        allowed[:, t_g, 1:t_g] = False                                # rule (1): regions hidden from t_g
        allowed[:, v_g, t_g + 1:] = False                             # rule (2): tokens, phrases hidden from v_g
    if text:
        tok = (kind == 2).nonzero().squeeze(1)
        phr = (kind == 3).nonzero().squeeze(1)
        if phr.numel() and tok.numel():
            own = cover.to(device).bool()                             # (B, P, T): the tokens of each phrase
            if rule3 == "phrase_attends":                             # rule (3): a phrase sees its own words only
                rows = allowed[:, phr]                                # (B, P, L)
                rows[:, :, tok] = own & token_valid[:, None, :]
                allowed[:, phr] = rows
            else:                                                     # rule (3): outside words do not see the phrase
                cols = allowed[:, :, phr]                             # (B, L, P)
                cols[:, tok] = own.transpose(1, 2) & phrase_valid[:, None, :]
                allowed[:, :, phr] = cols
    idx = torch.arange(L, device=device)
    allowed[:, idx, idx] = True
    return allowed


def float_mask(allowed: torch.Tensor, heads: int) -> torch.Tensor:
    """Additive (B * heads, L, L) float mask of ``allowed``: 0 where attending is allowed, -inf elsewhere."""
    m = torch.zeros(allowed.shape, dtype=torch.float32, device=allowed.device).masked_fill(~allowed, float("-inf"))
    return m.repeat_interleave(heads, dim=0)
