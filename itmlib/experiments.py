"""Experiment grids shared by notebooks 03-05: configs from a scale, runs over seeds, mean +- spread, verdicts."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterable, Mapping

import numpy as np
import pandas as pd

from .config import check_choice, check_fraction, check_positive, get_scale, resolve_device
from .data.base import ITMDataset
from .train import TrainConfig, TrainResult, evaluate, train

__all__ = ["vse_config", "teran_config", "eval_relevance", "eval_rouge", "recall_ndcg", "grid_member", "run_grid",
           "summarize", "compare", "claim_verdict", "sam_margin_samples", "summarize_margins", "query_times", "timed",
           "METRIC_COLUMNS", "TERAN_SIZES"]

METRIC_COLUMNS = ["i2t_r1", "i2t_r5", "i2t_r10", "t2i_r1", "t2i_r5", "t2i_r10", "rsum",
                  "i2t_n1", "i2t_n5", "i2t_n10", "t2i_n1", "t2i_n5", "t2i_n10", "nsum", "nsum_nogt"]


def vse_config(scale: str, *, epochs: int | None = None, data: str = "", **overrides: Any) -> TrainConfig:
    """A :class:`TrainConfig` sized by the named scale (epochs, batch size, embedding size)."""
    sc = get_scale(scale)
    return TrainConfig(epochs=epochs or sc.epochs, batch_size=sc.batch_size, embed_dim=sc.embed_dim,
                       word_dim=min(300, sc.embed_dim), hidden_dim=2 * sc.embed_dim, data=data, **overrides)


# TERAN sizes per scale (paper: joint 1024, visual TE 4 layers at 2048, FF 2048, BERT fine-tuned at lr 1e-5,
# 30 epochs). CPU scales keep BERT frozen (its states cached once), train the rest from scratch at lr 2e-4
# and train fewer epochs (one TERAN batch costs ~10x a VSE++ batch on a CPU).
TERAN_SIZES: dict[str, dict[str, Any]] = {
    "smoke": dict(embed_dim=64, lr=2e-4, epochs=2,
                  teran=dict(visual_dim=64, visual_layers=1, ff_dim=128, finetune_text=False)),
    "medium": dict(embed_dim=128, lr=2e-4, epochs=4,
                   teran=dict(visual_dim=128, visual_layers=2, ff_dim=256, finetune_text=False)),
    "full": dict(embed_dim=1024, lr=1e-5, epochs=30,
                 teran=dict(visual_dim=1024, visual_layers=4, ff_dim=2048, finetune_text=True)),
}


def teran_config(scale: str, *, epochs: int | None = None, data: str = "", lr: float | None = None,
                 **teran_options: Any) -> TrainConfig:
    """A TERAN :class:`TrainConfig` sized by the scale; ``teran_options`` override
    :class:`~itmlib.models.teran.TERANConfig` fields (pooling, shared_weights, stopwords, text_encoder, ...)."""
    sc = get_scale(scale)
    size = TERAN_SIZES[sc.name]
    return TrainConfig(model="teran", epochs=epochs or size["epochs"], batch_size=sc.batch_size, embed_dim=size["embed_dim"],
                       word_dim=300, lr=lr or size["lr"], data=data, teran={**size["teran"], **teran_options})


def eval_rouge(ds: ITMDataset) -> np.ndarray:
    """ROUGE-L relevance of every caption against every image's five references (TERAN's NDCG relevance)."""
    from .relevance import relevance_matrix

    return relevance_matrix("rouge_l", [ds.captions_of(i) for i in range(ds.n_images)], ds.captions)


def recall_ndcg(sims: np.ndarray, ds: ITMDataset, relevances: Mapping[str, np.ndarray], p: int = 25) -> dict[str, float]:
    """Recall@1/5/10 both ways, Rsum, and NDCG@p (TERAN's exponential gain) per relevance and direction."""
    from .metrics import ndcg, retrieval_recall

    out = {k: v for k, v in retrieval_recall(sims, ds.img_of_caption).items()}
    for name, rel in relevances.items():
        n = ndcg(sims, rel, ds.img_of_caption, p=p)
        out[f"i2t_ndcg_{name}"], out[f"t2i_ndcg_{name}"] = n["i2t"], n["t2i"]
    return out


def eval_relevance(ds: ITMDataset) -> np.ndarray:
    """The evaluation relevance of a synthetic split: scene-graph F1 of its gold caption graphs
    (the SPICE analogue: the NCS paper evaluates with SPICE), cached on disk."""
    from .relevance import relevance_matrix

    if ds.graphs is None:
        raise ValueError(f"{ds.name}/{ds.split} has no gold caption graphs for the scene-graph F1 relevance")
    refs = [ds.captions_of(i) for i in range(ds.n_images)]
    return relevance_matrix("sg_f1", refs, ds.captions, backend="gold", graphs=list(ds.graphs) + list(ds.graphs))


def grid_member(cfg: TrainConfig, name: str, train_ds: ITMDataset, dev_ds: ITMDataset, *, fraction: float = 1.0,
                seed: int = 0, dev_relevance: np.ndarray | None = None, ckpt_dir: str = "runs/checkpoints",
                device: str = "auto", progress: bool = False) -> tuple[ITMDataset, TrainResult]:
    """Train (or load from its checkpoint) one run of :func:`run_grid`; returns (its training subset, the result).

    The run of config ``cfg`` named ``name`` at (``fraction``, ``seed``) trains on
    ``train_ds.subset(fraction, seed)`` (image-level; all of ``train_ds`` at 1.0) with
    the config's seed replaced by ``seed``, so seeds vary both the data and the init.
    A notebook gets a grid run's model back through here without training it again.
    """
    check_fraction("fraction", fraction)
    sub = train_ds if fraction == 1.0 else train_ds.subset(fraction, seed=seed)
    c = dataclasses.replace(cfg, seed=int(seed), data=f"{cfg.data}|{sub.split}|{sub.n_images}")
    return sub, train(c, sub, dev_ds, dev_relevance=dev_relevance, ckpt_dir=ckpt_dir,
                      name=name.replace(" ", "_").replace("+", "p"), device=device, progress=progress)


def run_grid(configs: Mapping[str, TrainConfig], train_ds: ITMDataset, dev_ds: ITMDataset, test_ds: ITMDataset,
             test_relevance: np.ndarray, *, fractions: Iterable[float] = (1.0,), seeds: Iterable[int] = (0,),
             dev_relevance: np.ndarray | None = None, ckpt_dir: str = "runs/checkpoints", device: str = "auto",
             progress: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Train every config on every (fraction, seed) subset (see :func:`grid_member`);
    returns (test metrics per run, training histories)."""
    rows, hist = [], []
    for f in fractions:
        for s in seeds:
            for name, cfg in configs.items():
                sub, r = grid_member(cfg, name, train_ds, dev_ds, fraction=f, seed=s, dev_relevance=dev_relevance,
                                     ckpt_dir=ckpt_dir, device=device, progress=progress)
                m = evaluate(r.model, r.vocab, test_ds, test_relevance, device=resolve_device(device))
                rows.append({"fraction": f, "seed": s, "method": name, "train_images": sub.n_images,
                             "best_epoch": r.best_epoch, **{k: m[k] for k in METRIC_COLUMNS}})
                hist.append(r.history.assign(fraction=f, seed=s, method=name))
    return pd.DataFrame(rows), pd.concat(hist, ignore_index=True)


def summarize(runs: pd.DataFrame, by: list[str], columns: list[str] | None = None) -> pd.DataFrame:
    """Mean and sample std over seeds per group: columns ``<metric>`` and ``<metric>_std``.

    With one seed the std is NaN (undefined), not 0: a single run shows no spread."""
    columns = columns or [c for c in METRIC_COLUMNS if c in runs]
    g = runs.groupby(by, sort=False)[columns]
    mean, std = g.mean(), g.std(ddof=1)
    out = mean.copy()
    for c in columns:
        out[f"{c}_std"] = std[c]
    out["seeds"] = g.size()
    return out.reset_index()


def compare(runs: pd.DataFrame, metric: str, base: str, new: str, by: str = "fraction") -> pd.DataFrame:
    """Per group: mean of ``new`` - ``base`` on ``metric`` over paired seeds, its spread, and a verdict.

    The difference "exceeds the seed-to-seed spread" when |mean diff| > 2 x the
    std of the paired differences (and at least 2 seeds exist); otherwise the
    verdict says the scale cannot tell.
    """
    out = []
    for key, g in runs.groupby(by, sort=False):
        a = g[g.method == base].set_index("seed")[metric]
        b = g[g.method == new].set_index("seed")[metric]
        d = (b - a).dropna()
        mean = float(d.mean()) if len(d) else float("nan")
        sd = float(d.std(ddof=1)) if len(d) > 1 else float("nan")
        if len(d) < 2:
            verdict = "inconclusive (one seed: no spread)"
        elif abs(mean) > 2 * sd:
            verdict = f"{new} {'higher' if mean > 0 else 'lower'} (beyond 2x seed spread)"
        else:
            verdict = "no difference beyond the seed spread"
        out.append({by: key, "metric": metric, f"{base}": float(a.mean()), f"{new}": float(b.mean()),
                    "ratio": float(b.mean() / a.mean()) if a.mean() else float("nan"),
                    "mean_diff": mean, "diff_std": sd, "seeds": len(d), "verdict": verdict})
    return pd.DataFrame(out)


def claim_verdict(runs: pd.DataFrame, base: str, new: str, metric: str, expect: str, claim: str,
                  paper_says: str) -> dict[str, Any] | None:
    """One row of a claims table: does ``new`` vs ``base`` on ``metric`` behave as the paper says?

    ``expect`` is ``"higher"``, ``"lower"`` or ``"same"``. The paired seed differences
    d_s = new_s - base_s decide (see :func:`compare`): a difference counts only when
    |mean d| > 2 std(d). "higher"/"lower" hold when the mean difference has that sign
    (" (within noise)" is added when it does not exceed the spread); "same" holds when it
    does not exceed the spread. With one seed a direction claim says so, and a "same"
    claim cannot be judged. Returns None when either method is absent from ``runs``.
    """
    if expect not in ("higher", "lower", "same"):
        raise ValueError(f"expect must be 'higher', 'lower' or 'same', got {expect!r}")
    if base not in set(runs.method) or new not in set(runs.method):
        return None
    c = compare(runs.assign(group=0), metric, base, new, by="group").iloc[0]
    d, n = c["mean_diff"], int(c["seeds"])
    beyond = n >= 2 and abs(d) > 2 * c["diff_std"]
    holds = {"higher": d > 0, "lower": d < 0, "same": not beyond}[expect]
    if n < 2 and expect == "same":
        holds, note = None, "one seed: a 'no change' claim needs the seed spread (n_seeds >= 2)"
    elif n < 2:
        note = " (one seed: direction only)"
    elif expect != "same" and not beyond:
        note = " (within noise)"
    else:
        note = ""
    return {"claim": claim, "paper (model vs baseline)": paper_says, "metric": metric, "model": new, "baseline": base,
            "ours (model vs baseline)": f"{c[new]:.3g} vs {c[base]:.3g}", "difference": round(d, 3),
            "spread (std of paired diff)": round(c["diff_std"], 3) if n >= 2 else np.nan, "seeds": n,
            "verdict": note if holds is None else ("holds" if holds else "does not hold") + note}


def sam_margin_samples(result: TrainResult, ds: ITMDataset, *, tau: float = 5.0, samplings: Iterable[str] = ("hard", "soft", "random"),
                       mode: str = "paper", n_batches: int = 20, batch_size: int = 64, seed: int = 0) -> pd.DataFrame:
    """The margins SAM (eq. 7) gives the negatives each sampling picks, on random training batches of ``ds``.

    Per batch (``batch_size`` captions c_p drawn without replacement, with their images p)
    the trained model of ``result`` scores every image against every caption; each
    sampling picks the negative caption c_m of every image anchor p, whose margin is
    α = (φ(G_p, c_p) - φ(G_p, c_m)) / τ (eq. 7 as printed names it α_t2i; φ = CIDEr-D of
    :func:`~itmlib.losses.phi_index`, i.e. ``ds``'s own document frequencies). ``ds``
    must be the set the model was trained on; the model a VSE one (``model="vse"``). Returns one row per (batch, sampling,
    anchor): batch, sampling, image p, caption c_p, negative_caption c_m, margin_t2i,
    gold_rel_of_negative (``ds.relevance(p, c_m)``, the world's graded relevance).
    """
    import torch

    from .losses import SAMPLINGS, batch_phi, phi_index, sam_loss
    from .losses.triplet import positive_mask_from_ids
    from .models.vse import VSEModel, region_inputs

    check_positive("tau", tau)
    samplings = list(samplings)
    for smp in samplings:
        check_choice("sampling", smp, SAMPLINGS)
    check_positive("n_batches", n_batches, integer=True)
    check_positive("batch_size", batch_size, integer=True)
    if not 2 <= batch_size <= ds.n_captions:
        raise ValueError(f"batch_size must be between 2 and the {ds.n_captions} captions of {ds.name}/{ds.split}, got {batch_size}")
    if not isinstance(result.model, VSEModel):
        raise ValueError(f"sam_margin_samples needs a VSE model (SAM trains VSE here), got {type(result.model).__name__}")
    model, cider, rng = result.model, phi_index(ds), np.random.default_rng(seed)
    dev = next(model.parameters()).device
    text = model.text_inputs(ds.captions, result.vocab)
    was_training = model.training
    model.eval()
    rows = []
    try:
        with torch.no_grad():
            for b in range(n_batches):
                cap_idx = rng.choice(ds.n_captions, size=batch_size, replace=False)
                img_idx = ds.img_of_caption[cap_idx]
                f, m = region_inputs(ds, img_idx, model.cfg.use_boxes)
                sel = torch.from_numpy(cap_idx)
                scores = model.batch_scores(f.to(dev), m.to(dev), {k: v[sel].to(dev) for k, v in text.items()}).cpu()
                gold = ds.relevance(img_idx, cap_idx)
                phi, same = batch_phi(cider, img_idx, cap_idx), positive_mask_from_ids(torch.from_numpy(img_idx))
                for smp in samplings:
                    _, d = sam_loss(scores, phi, tau=tau, sampling=smp, mode=mode, positive_mask=same,
                                    generator=torch.Generator().manual_seed(seed))
                    nc = d["neg_c"].numpy()
                    rows.append(pd.DataFrame({"batch": b, "sampling": smp, "image": img_idx, "caption": cap_idx,
                                              "negative_caption": cap_idx[nc],
                                              "margin_t2i": d["margin_t2i"].numpy().astype(float),
                                              "gold_rel_of_negative": gold[np.arange(batch_size), nc].astype(float)}))
    finally:
        model.train(was_training)
    return pd.concat(rows, ignore_index=True)


def summarize_margins(margins: pd.DataFrame) -> pd.DataFrame:
    """Per sampling: mean and (sample) std of the margin, mean gold relevance of the negative,
    and the Pearson correlation between margin and that relevance (the tie SAM relies on)."""
    def corr(g: pd.DataFrame) -> float:
        return float(np.corrcoef(g.margin_t2i, g.gold_rel_of_negative)[0, 1]) if len(g) > 1 else float("nan")

    out = margins.groupby("sampling").agg(mean_margin=("margin_t2i", "mean"), std_margin=("margin_t2i", "std"),
                                          mean_gold_rel_of_negative=("gold_rel_of_negative", "mean"))
    out["corr_margin_gold"] = margins.groupby("sampling")[["margin_t2i", "gold_rel_of_negative"]].apply(corr)
    return out.reset_index()


def teran_grid(configs: Mapping[str, TrainConfig], train_ds: ITMDataset, dev_ds: ITMDataset, test_ds: ITMDataset,
               relevances: Mapping[str, np.ndarray], *, seeds: Iterable[int] = (0,), ckpt_dir: str = "runs/checkpoints",
               device: str = "auto", progress: bool = False, test_poolings: Mapping[str, str] | None = None
               ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Train every TERAN/TERN config per seed; test Recall, NDCG per relevance and grounding accuracy.

    Returns (one row per (method, seed), {method: (model, vocab, features) of the first seed}).
    ``test_poolings`` maps a method to extra rows scored with a forced pooling
    (TERN "MrSw Test": a global-trained model scored by region-word alignment)."""
    from .grounding import grounding_accuracy, grounding_targets
    from .models.alignment import score_matrix

    dev = resolve_device(device)
    targets = grounding_targets(test_ds)
    rows, keep = [], {}
    seeds = list(seeds)
    for s in seeds:
        for name, cfg in configs.items():
            c = dataclasses.replace(cfg, seed=int(s))
            r = train(c, train_ds, dev_ds, ckpt_dir=ckpt_dir, name=name.replace(" ", "_").replace("+", "p").replace(".", ""),
                      device=device, progress=progress)
            f = r.model.extract(test_ds, r.vocab, dev)
            g = grounding_accuracy(f.regions, f.region_mask, f.words, f.word_index, targets, test_ds)
            extra = {"grounding": g["accuracy"], "grounding_iou50": g["accuracy_iou50"],
                     "grounding_chance": g["chance"], "grounding_chance_iou50": g["chance_iou50"],
                     "best_epoch": r.best_epoch, "train_seconds": r.seconds}
            sims = r.model.similarity(test_ds, r.vocab, dev, features=f)
            rows.append({"method": name, "seed": s, **recall_ndcg(sims, test_ds, relevances), **extra})
            for label, pooling in (test_poolings or {}).items():
                if label.startswith(name):
                    sims_p = score_matrix(f.regions, f.region_mask, f.words, f.word_mask, pooling, device=dev)
                    rows.append({"method": label, "seed": s, **recall_ndcg(sims_p, test_ds, relevances), **extra})
            if s == seeds[0]:
                keep[name] = (r.model, r.vocab, f)
    return pd.DataFrame(rows), keep


def timed(fn: Callable[[], Any], device: str = "cpu") -> tuple[float, Any]:
    """(seconds, result) of ``fn()``; on a GPU synchronised before and after, so the time is the work's."""
    import time

    import torch

    if str(device).startswith("cuda"):
        torch.cuda.synchronize()
    t = time.perf_counter()
    r = fn()
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter() - t, r


def query_times(features: Any, pooling: str = "mrsw", device: str = "cpu", n_queries: int = 20) -> dict[str, float]:
    """Seconds to score the whole test matrix, one image query (all captions) and one caption
    query (all images) with :func:`~itmlib.models.alignment.score_matrix` (mean over ``n_queries``).

    ``features``: anything with ``regions``, ``region_mask``, ``words``, ``word_mask`` tensors."""
    from .models.alignment import score_matrix

    f = features
    dev = resolve_device(device)
    full = timed(lambda: score_matrix(f.regions, f.region_mask, f.words, f.word_mask, pooling, device=dev), dev)[0]
    n_i, n_t = len(f.regions), len(f.words)
    qi = [timed(lambda i=i: score_matrix(f.regions[i:i + 1], f.region_mask[i:i + 1], f.words, f.word_mask, pooling,
                                         device=dev), dev)[0] for i in range(min(n_queries, n_i))]
    qt = [timed(lambda t=t: score_matrix(f.regions, f.region_mask, f.words[t:t + 1], f.word_mask[t:t + 1], pooling,
                                         device=dev), dev)[0] for t in range(min(n_queries, n_t))]
    return {"images": n_i, "captions": n_t, "full_matrix_s": full, "image_query_s": float(np.mean(qi)),
            "caption_query_s": float(np.mean(qt))}
