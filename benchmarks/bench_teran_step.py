"""TERAN's training step on the CPU: where its time goes, and what the length groups and the folded alignment save.

    .venv/bin/python benchmarks/bench_teran_step.py                 # 08's medium world, 12 steps per setting
    .venv/bin/python benchmarks/bench_teran_step.py --steps 4 --groups 1 4

On notebook 08's medium world (the headline arm, TERAN MrSw, frozen MiniLM, batch 128, one thread), it times
whole training steps (forward, backward, Adam) of one model with :data:`itmlib.models.length_groups.LENGTH_GROUPS`
set to each of ``--groups`` in turn (A B A B over ``--repeats``, the same batches, so both see the same machine
load), then the alignment alone, forward and backward on one batch's encoded tokens: the plain masked einsum
(:func:`~itmlib.models.alignment.pool_alignments` of :func:`~itmlib.models.alignment.alignment_matrix`, what
training ran before) beside :func:`~itmlib.models.alignment.pooled_scores`, and the largest difference of
their scores.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))


def _setup(arm: str):
    """(model, training config, training split, its text inputs) of ``arm`` of 08's medium plan, seed 0."""
    from member_pool import home, notebook_params

    from itmlib.models import build_model
    from itmlib.training.grid import trained_config

    p = notebook_params("08_teran", "medium")
    plan = home("08_teran")
    m = next(m for m in plan.members(p) if m.name == arm)
    w = plan.world(m.world, p, "cpu")
    cfg = trained_config(m.config, w.train, m.fraction, m.seed)
    torch.manual_seed(0)
    model, vocab = build_model(cfg.model, w.train, None)
    return model, cfg, w.train, model.text_inputs(w.train.captions, vocab)


def time_steps(model, cfg, train, text, batches: list[np.ndarray]) -> float:
    """Seconds per training step over ``batches`` (caption indices), forward, backward and Adam."""
    from itmlib.training.train import _batch_loss

    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    gen = torch.Generator().manual_seed(0)
    t0 = time.perf_counter()
    for cap in batches:
        loss = _batch_loss(model, cfg, train, text, cap, cfg.warmup_epochs, None, gen, gen, "cpu")
        opt.zero_grad()
        loss.backward()
        opt.step()
    return (time.perf_counter() - t0) / len(batches)


def time_alignment(model, train, text, cap: np.ndarray, repeats: int) -> dict[str, float]:
    """Forward + backward seconds of the two alignments on one batch's tokens, and their largest difference."""
    from itmlib.data.inputs import region_inputs
    from itmlib.models.alignment import alignment_matrix, pool_alignments, pooled_scores

    f, mk = region_inputs(train, train.img_of_caption[cap], model.cfg.use_boxes)
    with torch.no_grad():
        reg, rmask, _ = model.encode_regions(f, mk)
        wrd, wmask, _ = model.encode_words({k: v[torch.from_numpy(cap)] for k, v in text.items()})
    plain = lambda r, w: pool_alignments(alignment_matrix(r, w), rmask, wmask, model.cfg.pooling)  # noqa: E731
    folded = lambda r, w: pooled_scores(r, rmask, w, wmask, model.cfg.pooling)  # noqa: E731
    out, scores = {}, {}
    for name, fn in (("plain", plain), ("folded", folded)) * repeats:
        r, w = reg.clone().requires_grad_(), wrd.clone().requires_grad_()
        t0 = time.perf_counter()
        s = fn(r, w)
        s.sum().backward()
        out[name] = min(out.get(name, np.inf), time.perf_counter() - t0)
        scores[name] = s.detach()
    out["max |difference|"] = float((scores["plain"] - scores["folded"]).abs().max())
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arm", default="TERAN mrsw")
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--groups", type=int, nargs="+", default=[1, 2, 4, 8])
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    from itmlib.models import length_groups

    model, cfg, train, text = _setup(a.arm)
    order = np.random.default_rng(0).permutation(train.n_captions)
    batches = [order[i * cfg.batch_size:(i + 1) * cfg.batch_size] for i in range(a.steps + 2)]
    time_steps(model, cfg, train, text, batches[:2])            # warm-up: allocator, caches
    best: dict[int, float] = {}
    for _ in range(a.repeats):
        for g in a.groups:
            length_groups.LENGTH_GROUPS = g
            best[g] = min(best.get(g, np.inf), time_steps(model, cfg, train, text, batches[2:]))
    print(f"{a.arm}, medium, batch {cfg.batch_size}, one thread: seconds a training step (best of {a.repeats})")
    for g, s in best.items():
        print(f"  {g} length group(s): {s:.3f} s ({best[a.groups[0]] / s:.2f}x of {a.groups[0]})")
    length_groups.LENGTH_GROUPS = a.groups[-1]
    al = time_alignment(model, train, text, batches[0], max(a.repeats, 3))
    print(f"  alignment fwd+bwd: plain einsum {al['plain']:.3f} s, folded {al['folded']:.3f} s "
          f"({al['plain'] / al['folded']:.2f}x), scores differ by at most {al['max |difference|']:.1e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
