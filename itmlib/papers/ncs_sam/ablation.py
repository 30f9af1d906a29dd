"""Notebook 04's side of Biten et al.: the VSE++ configs sized by scale, the Tables 4/5 grid of SAM settings
with its control arms, the margins SAM draws (sec. 3.3) and the pooled run tables its claims read."""

from __future__ import annotations

import dataclasses
import itertools
from typing import Collection, Iterable, Sequence

import numpy as np
import pandas as pd

from ...config import check_choice, check_positive, get_scale
from ...data.base import ITMDataset
from ...models.vse import VSEConfig, VSEModel
from ...paper_numbers import paper_table
from ...training.train import TrainConfig, TrainResult, score_batch


def vse_config(scale: str, *, epochs: int | None = None, data: str = "", **overrides) -> TrainConfig:
    """A VSE++ :class:`~itmlib.training.train.TrainConfig` sized by the named scale (epochs, batch, embedding)."""
    sc = get_scale(scale)
    model = VSEConfig(embed_dim=sc.embed_dim, word_dim=min(300, sc.embed_dim), hidden_dim=2 * sc.embed_dim)
    return TrainConfig.of(epochs=epochs or sc.epochs, batch_size=sc.batch_size, data=data, model=model, **overrides)


def ablation_settings(scale: str, taus: Sequence[float], samplings: Sequence[str],
                      keep_triplets: Sequence[bool]) -> list[tuple[float, str, bool]]:
    """(tau, sampling, keep_triplet) settings of Tables 4/5: the full product, or at ``smoke`` a
    reduced grid (every sampling at tau 5 and every tau with soft negatives, triplet kept)."""
    for t in taus:
        check_positive("tau", t)
    for s in samplings:
        check_choice("sampling", s, ("soft", "random", "hard"))
    if get_scale(scale).name == "smoke":
        return sorted({(5, s, True) for s in samplings} | {(t, "soft", True) for t in taus}, key=str)
    return list(itertools.product(taus, samplings, keep_triplets))


#: SAM alone (-T, paper mode) sums its hinge over every negative for the whole run (``warmup_epochs`` = ``epochs``),
#: the recipe its probe chose on ``tau=5 soft -T``'s dev curve (seed 0, 2,000 images, 15 epochs;
#: ``results/04_sam/probes/``, notebook 04's probe table): under the grid's one-epoch warm-up, at lr 1e-3, 2e-4 or
#: 1e-4, and under a 3-epoch warm-up, dev Rsum fell as soon as the hardest negative took over (best at the warm-up's
#: last epoch); summed throughout it reached its plateau (best at epoch 9 of 15)
SAM_ALONE_SUMS_EVERY_NEGATIVE = True


def sam_configs(scale: str, settings: Iterable[tuple[float, str, bool]], *, data: str, epochs: int | None = None,
                baseline: str | None = "VSE++ (no SAM)", sam_modes: Sequence[str] = ("paper",), controls: bool = False,
                sam_warmup: bool = False, **common) -> dict[str, TrainConfig]:
    """One SAM config per (tau, sampling, keep_triplet) setting and SAM mode, named ``"tau=5 soft +T"``
    (``" ref"`` appended in the public code's ``"reference"`` mode), plus the VSE++ baseline under
    ``baseline`` (first; None: none). ``controls``: each setting also as its shuffled twin (``" shuffled"``
    appended, ``phi_control="shuffled"``). ``sam_warmup``: the settings without the triplet (-T) sum
    the SAM hinge over every negative during the warm-up, as the triplet does (with the triplet kept,
    the triplet's warm-up already holds the model); the paper-mode -T settings (not their shuffled twins, not the
    reference mode, whose arms were not retrained) warm up for the whole run (:data:`SAM_ALONE_SUMS_EVERY_NEGATIVE`)."""
    out = {}
    if baseline:   # first: a grid trains setting by setting, and every claim needs the baseline
        out[baseline] = vse_config(scale, epochs=epochs, loss="triplet", data=data)
    for mode in sam_modes:
        check_choice("sam_mode", mode, ("paper", "reference"))
        for t, smp, k in settings:
            name = f"tau={t:g} {smp} {'+T' if k else '-T'}" + (" ref" if mode == "reference" else "")
            cfg = vse_config(scale, epochs=epochs, loss="sam", tau=float(t), sampling=smp, keep_triplet=bool(k), data=data,
                             sam_mode=mode, sam_warmup=bool(sam_warmup and not k), **common)
            out[name] = cfg
            if controls:
                out[name + " shuffled"] = cfg.with_sam(phi_control="shuffled")
            if sam_warmup and not k and mode == "paper" and SAM_ALONE_SUMS_EVERY_NEGATIVE:
                out[name] = dataclasses.replace(cfg, warmup_epochs=cfg.epochs)
    return out


def sam_margin_samples(result: TrainResult, ds: ITMDataset, *, tau: float = 5.0, samplings: Iterable[str] = ("hard", "soft", "random"),
                       mode: str = "paper", n_batches: int = 20, batch_size: int = 64, seed: int = 0) -> pd.DataFrame:
    """The margins SAM (eq. 7) gives the negatives each sampling picks, on random training batches of ``ds``.

    Per batch (``batch_size`` captions c_p drawn without replacement, with their images p)
    the trained model of ``result`` scores every image against every caption
    (:func:`~itmlib.training.train.score_batch`, the training loop's own step); each sampling picks
    the negative caption c_m of every image anchor p, whose margin is
    α = (φ(G_p, c_p) - φ(G_p, c_m)) / τ (eq. 7 as printed names it α_t2i; φ = CIDEr-D of
    :func:`~itmlib.losses.phi_index`, i.e. ``ds``'s own document frequencies). ``ds``
    must be the set the model was trained on; the model a VSE one. Returns one row per
    (batch, sampling, anchor): batch, sampling, image p, caption c_p, negative_caption c_m,
    margin_t2i (computed from c_m), margin_on_negative (the margin eq. 7 as printed applies to the
    hinge whose negative *is* c_m: α_i2t, computed from the t2i negative's caption c_l),
    gold_rel_of_negative (``ds.relevance(p, c_m)``, the world's graded relevance).
    """
    import torch

    from ...losses import SAMPLINGS, SAMConfig, batch_phi, phi_index, sam_loss

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
    device = next(model.parameters()).device
    text = model.text_inputs(ds.captions, result.vocab)
    was_training = model.training
    model.eval()
    rows = []
    try:
        with torch.no_grad():
            for b in range(n_batches):
                cap_idx = rng.choice(ds.n_captions, size=batch_size, replace=False)
                scores, same, img_idx = score_batch(model, ds, text, cap_idx, device)
                scores, same = scores.cpu(), same.cpu()
                gold = ds.relevance(img_idx, cap_idx)
                phi = batch_phi(cider, img_idx, cap_idx)
                for smp in samplings:
                    _, d = sam_loss(scores, phi, SAMConfig(tau=tau, sampling=smp, sam_mode=mode), positive_mask=same,
                                    generator=torch.Generator().manual_seed(seed))
                    nc = d["neg_c"].numpy()
                    rows.append(pd.DataFrame({"batch": b, "sampling": smp, "image": img_idx, "caption": cap_idx,
                                              "negative_caption": cap_idx[nc],
                                              "margin_t2i": d["margin_t2i"].numpy().astype(float),
                                              "margin_on_negative": d["margin_i2t"].numpy().astype(float),
                                              "gold_rel_of_negative": gold[np.arange(batch_size), nc].astype(float)}))
    finally:
        model.train(was_training)
    return pd.concat(rows, ignore_index=True)


def phi_pos_variance_share(ds: ITMDataset, *, n_pairs: int = 20000, seed: int = 0) -> pd.DataFrame:
    """How much of SAM's margin numerator φ(G_p, c_p) - φ(G_p, c_m) varies through the positive's φ.

    ``n_pairs`` random positives (p, c_p) of ``ds``, each with a random caption c_m of another
    image (random negatives). Per φ (G_p with c_p, as eq. 7 and the public code; without it,
    leave-one-out): the variances of φ_pos, φ_m and their difference, the covariance, and the share
    of the difference's variance carried by φ_pos, (var φ_pos - cov) / var(φ_pos - φ_m). Needs text
    only: run it on real COCO captions. With c_p among its own five references, φ_pos = (self + 4 φ_loo) / 5
    where a caption's CIDEr-D with itself is 10 from four words up (fewer words leave 3/4-gram terms
    empty: "a cow" scores 5), so every φ_pos gains ~2.0 and the rest is scaled by 4/5."""
    from ...losses import batch_phi, phi_index

    check_positive("n_pairs", n_pairs, integer=True)
    rng = np.random.default_rng(seed)
    cap = rng.integers(0, ds.n_captions, n_pairs)
    img = ds.img_of_caption[cap]
    neg = rng.integers(0, ds.n_captions, n_pairs)
    clash = ds.img_of_caption[neg] == img
    while clash.any():
        neg[clash] = rng.integers(0, ds.n_captions, int(clash.sum()))
        clash = ds.img_of_caption[neg] == img
    index, rows = phi_index(ds), []
    p = np.arange(n_pairs)
    both = np.concatenate([cap, neg])
    for name, loo in (("G_p with c_p (eq. 7, public code)", False), ("G_p without c_p (leave-one-out)", True)):
        phi = batch_phi(index, np.concatenate([img, img]), both, leave_one_out=loo)
        pos, m = phi(p, p), phi(p, p + n_pairs)
        cov = float(np.cov(pos, m)[0, 1])
        var_d = float(np.var(pos - m, ddof=1))
        rows.append({"phi": name, "pairs": n_pairs, "mean_phi_pos": float(pos.mean()), "mean_phi_neg": float(m.mean()),
                     "var_phi_pos": float(np.var(pos, ddof=1)), "var_phi_neg": float(np.var(m, ddof=1)), "cov": cov,
                     "var_margin": var_d, "share_of_margin_variance_from_phi_pos": (float(np.var(pos, ddof=1)) - cov) / var_d})
    return pd.DataFrame(rows)


def summarize_margins(margins: pd.DataFrame) -> pd.DataFrame:
    """Per sampling: mean and (sample) std of the margin, mean gold relevance of the negative c_m, and
    the Pearson correlation of that relevance with the margin computed from c_m (``corr_margin_gold``,
    the tie SAM intends) and with the margin eq. 7 as printed applies to c_m's hinge
    (``corr_applied_margin_gold``, the tie the loss has)."""
    def corr(col: str):
        return lambda g: float(np.corrcoef(g[col], g.gold_rel_of_negative)[0, 1]) if len(g) > 1 else float("nan")

    out = margins.groupby("sampling").agg(mean_margin=("margin_t2i", "mean"), std_margin=("margin_t2i", "std"),
                                          mean_gold_rel_of_negative=("gold_rel_of_negative", "mean"))
    by = margins.groupby("sampling")
    out["corr_margin_gold"] = by[["margin_t2i", "gold_rel_of_negative"]].apply(corr("margin_t2i"))
    out["corr_applied_margin_gold"] = by[["margin_on_negative", "gold_rel_of_negative"]].apply(corr("margin_on_negative"))
    return out.reset_index()


def _settings_frame(configs: dict[str, TrainConfig], control: str | None = "none", mode: str | None = "paper") -> pd.DataFrame:
    """The SAM configs' settings; only those with ``phi_control == control`` and ``sam_mode == mode`` (None: all)."""
    return pd.DataFrame([{"method": n, "tau": c.sam.tau, "sampling": c.sam.sampling, "keep_triplet": c.sam.keep_triplet,
                          "sam_mode": c.sam.sam_mode, "phi_control": c.sam.phi_control}
                         for n, c in configs.items() if c.loss == "sam" and control in (None, c.sam.phi_control)
                         and mode in (None, c.sam.sam_mode)],
                        columns=["method", "tau", "sampling", "keep_triplet", "sam_mode", "phi_control"])


def by_control(runs: pd.DataFrame, configs: dict[str, TrainConfig],
               metrics: Sequence[str] = ("nsum", "rsum", "nsum_nogt"), baseline: str = "VSE++ (no SAM)",
               untrained: Collection[str] = ()) -> pd.DataFrame:
    """Per seed and SAM mode: the mean of ``metrics`` over the SAM settings that have a shuffled twin
    (method ``"SAM"``), over those twins (``"SAM shuffled"``), and the baseline's row (repeated per
    mode) - the run table of "SAM beats the baseline" and "SAM beats its shuffled control". A setting with an
    arm in ``untrained`` (its own or its twin's) is left out (:func:`trained_settings`)."""
    cols = ["seed", "sam_mode", "method", *metrics, "members"]
    st = _settings_frame(configs, control=None, mode=None)
    # a twin is the SAM setting with its margins shuffled and nothing else changed (the -T settings retrained under
    # their own recipe are no longer twins of their shuffled arms, which kept the grid's)
    twins = {m for m in st.method[st.phi_control == "shuffled"]
             if configs[m] == configs[m[: -len(" shuffled")]].with_sam(phi_control="shuffled")}
    st = st[st.method.isin(twins) | st.method.map(lambda m: f"{m} shuffled" in twins)]
    by = ["tau", "sampling", "keep_triplet", "sam_mode"]
    sam = trained_settings(runs.merge(st, on="method"), untrained, by)
    sam = sam[(sam.groupby(by)["phi_control"].transform("nunique") == 2).astype(bool)]   # both halves of the pair ran
    if sam.empty:
        return pd.DataFrame(columns=cols)
    sam = sam.assign(members=sam.method, method=sam.phi_control.map({"none": "SAM", "shuffled": "SAM shuffled"}))
    out = _pooled(sam, ["seed", "sam_mode", "method"], metrics)
    base = runs[runs.method == baseline].assign(members=baseline)
    reps = [base.assign(sam_mode=m)[cols] for m in sorted(sam.sam_mode.unique())] if len(base) else []
    return pd.concat([out[cols], *reps], ignore_index=True)


def trained_settings(sam: pd.DataFrame, untrained: Collection[str], by: Sequence[str]) -> pd.DataFrame:
    """``sam`` (runs with their settings) without every group of ``by`` holding a method in ``untrained`` or a method
    that lacks one of the table's seeds: a mean over settings compares like with like only over the settings each of
    whose arms trained on every seed (a -T setting whose soft arm was selected at epoch 1 leaves the soft-vs-random
    mean whole, random's -T arm included). Where no setting trained, every one stays: the claim's gate then names the
    arms' states (a smoke run's two epochs, still rising) instead of finding no rows."""
    if sam.empty:
        return sam
    bad = sam.groupby(list(by))["method"].transform(lambda m: m.isin(list(untrained)).any()).astype(bool)
    if "seed" in sam:   # and each setting an arm of which lacks a seed the others have (a grid cut off part-way)
        seeds = sam.seed.nunique()
        short = sam.groupby("method")["seed"].transform("nunique") < seeds
        bad |= short.groupby([sam[k] for k in by]).transform("any").astype(bool)
    return sam if bad.all() else sam[~bad]   # none trained: all stay, and the claim's gate says why


def _pooled(runs: pd.DataFrame, by: list[str], metrics: Sequence[str]) -> pd.DataFrame:
    """The mean of ``metrics`` per group, and ``members``: the ``;``-joined methods (grid members) each group
    pools, so a claim on the pooled row can name the arms it rests on."""
    g = runs.groupby(by, as_index=False)
    return g[list(metrics)].mean().merge(
        g["members"].agg(lambda m: ";".join(sorted(set(m)))), on=by)


def by_sampling(runs: pd.DataFrame, configs: dict[str, TrainConfig], keep: Sequence[bool] = (True, False),
                metrics: Sequence[str] = ("nsum", "rsum"), mode: str = "paper", untrained: Collection[str] = ()) -> pd.DataFrame:
    """Per seed and sampling: the mean of ``metrics`` over the SAM runs in ``mode`` (no control arm)
    with ``keep_triplet`` in ``keep``, over the taus that every sampling was trained with (Tables 4/5's
    "on average"), leaving out each (tau, keep_triplet) setting in which a sampling's arm is in ``untrained``
    (:func:`trained_settings`). One row per (seed, method=sampling): the run table of the "soft negatives best" claims."""
    sam = runs.merge(_settings_frame(configs, mode=mode), on="method")
    sam = trained_settings(sam[sam.keep_triplet.isin(list(keep))], untrained, ["tau", "keep_triplet"])
    if sam.empty:
        return pd.DataFrame(columns=["seed", "method", *metrics, "members"])
    common = set.intersection(*(set(g.tau) for _, g in sam.groupby("sampling")))
    sam = sam[sam.tau.isin(common)].assign(members=lambda d: d.method)
    return _pooled(sam, ["seed", "sampling"], metrics).rename(columns={"sampling": "method"})


def by_triplet(runs: pd.DataFrame, configs: dict[str, TrainConfig],
               metrics: Sequence[str] = ("rsum", "nsum"), untrained: Collection[str] = ()) -> pd.DataFrame:
    """Per seed: the mean of ``metrics`` over the SAM settings with the triplet kept (method "SAM + triplet") and
    without it ("SAM alone") - Table 4's complementarity claim - over the (tau, sampling) settings run both ways
    whose arms trained (:func:`trained_settings`), so the two means pair like with like."""
    sam = runs.merge(_settings_frame(configs), on="method").assign(members=lambda d: d.method)
    sam = trained_settings(sam, untrained, ["tau", "sampling"])
    both = sam.groupby(["tau", "sampling"])["keep_triplet"].transform("nunique") == 2
    sam = sam[both.astype(bool)]
    out = _pooled(sam, ["seed", "keep_triplet"], metrics)
    out["method"] = out.keep_triplet.map({True: "SAM + triplet", False: "SAM alone"})
    return out.drop(columns="keep_triplet")


def tables45_paper() -> pd.DataFrame:
    """Tables 4 and 5 (Flickr30K columns) as one frame keyed by (tau, sampling, keep_triplet)."""
    p45 = pd.concat([paper_table("ncs_sam_table4"), paper_table("ncs_sam_table5")], ignore_index=True)
    return p45[["tau", "sampling", "keep_triplet", "f30k_nsum", "f30k_nsum_nogt", "f30k_rsum"]].rename(
        columns=lambda c: c.replace("f30k", "paper_f30k"))
