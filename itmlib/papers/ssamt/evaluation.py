"""Notebook 06's evaluation for Fan et al.: Recall/NCS with re-ranking, Table 4's mismatch classification by
its two protocols, Figure 3 made measurable (is the lowest-scoring phrase of a negative a false one?) and the
re-ranking depth against Recall and time."""

from __future__ import annotations

import time
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ...config import array_key, resolve_device
from ...data.base import CAPTIONS_PER_IMAGE, ITMDataset
from ...training.train import TrainResult, evaluate


def negative_pairs(ds: ITMDataset, seed: int = 0) -> dict[str, np.ndarray]:
    """Table 4's sampling (sec. 4.1): for every caption c of image i, another caption c⁻ (of another image)
    and another image i⁻, seeded. Returns arrays ``image``, ``caption``, ``neg_caption``, ``neg_image``."""
    rng = np.random.default_rng(seed)
    img = ds.img_of_caption
    n, m = ds.n_captions, ds.n_images
    if m < 2:
        raise ValueError("negative pairs need at least two images")
    neg_c = (np.arange(n) + CAPTIONS_PER_IMAGE * rng.integers(1, m, size=n)) % n      # a caption of another image
    neg_i = (img + rng.integers(1, m, size=n)) % m                    # another image
    return {"image": img, "caption": np.arange(n), "neg_caption": neg_c, "neg_image": neg_i}


def mismatch_accuracy(pos: dict[str, np.ndarray], neg_caption: dict[str, np.ndarray],
                      neg_image: dict[str, np.ndarray]) -> dict[str, float]:
    """Table 4: percent of positive pairs scored above their sampled negative, by each score
    (``global`` = s_inter, ``local`` = s_loc, ``phrase`` = the lowest s(p, I)); i2t against the
    negative caption, t2i against the negative image."""
    out = {}
    for s in ("global", "local", "phrase"):
        key = "inter" if s == "global" else s
        for d, neg in (("i2t", neg_caption), ("t2i", neg_image)):
            ok = np.isfinite(pos[key]) & np.isfinite(neg[key])   # a phrase score needs a phrase on both sides
            out[f"acc_{s}_{d}"] = 100 * float(np.mean(pos[key][ok] > neg[key][ok])) if ok.any() else float("nan")
    return out


def best_threshold(pos: np.ndarray, neg: np.ndarray) -> float:
    """The threshold t that maximises the balanced accuracy of "a pair matches iff its score > t" on
    positive scores ``pos`` and negative scores ``neg`` (chosen on dev, applied to test): the midpoint
    between two neighbouring distinct scores, or below / above them all. Ties break to the lowest t."""
    pos, neg = np.asarray(pos, float), np.asarray(neg, float)
    pos, neg = pos[np.isfinite(pos)], neg[np.isfinite(neg)]   # pairs without a phrase score take no part
    if not (len(pos) and len(neg)):
        raise ValueError(f"a threshold needs positive and negative scores, got {len(pos)} and {len(neg)}")
    v = np.unique(np.concatenate([pos, neg]))
    cands = np.concatenate([[v[0] - 1.0], (v[:-1] + v[1:]) / 2, [v[-1] + 1.0]])
    # positives above and negatives at or below each candidate, from sorted scores; balanced accuracy
    # tp/P + tn/N compared as the integer tp N + tn P, so that equal accuracies tie exactly
    tp = len(pos) - np.searchsorted(np.sort(pos), cands, side="right")
    tn = np.searchsorted(np.sort(neg), cands, side="right")
    return float(cands[int(np.argmax(tp * len(neg) + tn * len(pos)))])


def threshold_accuracy(pos: np.ndarray, neg: np.ndarray, threshold: float) -> float:
    """Percent of a balanced set of pairs classified right by "matches iff score > threshold": the mean
    of the positives' and the negatives' accuracies (Table 4 as a per-pair classifier)."""
    pos, neg = np.asarray(pos, float), np.asarray(neg, float)
    pos, neg = pos[np.isfinite(pos)], neg[np.isfinite(neg)]
    if not (len(pos) and len(neg)):
        return float("nan")
    return 100 * (float(np.mean(pos > threshold)) + float(np.mean(neg <= threshold))) / 2


def classifier_accuracy(pos: dict[str, np.ndarray], neg_caption: dict[str, np.ndarray], neg_image: dict[str, np.ndarray],
                        thresholds: Mapping[str, float]) -> dict[str, float]:
    """Table 4 by the paper's protocol as we read it: each pair classified on its own, positive iff its score
    exceeds a threshold - ``thr_<score>_<dir>`` with the threshold chosen on dev (``thresholds``, keyed
    ``<score>_<dir>``) and ``thr0_<score>_<dir>`` at 0 (every score is a cosine, so signed). Positive pairs
    against the sampled negative captions (i2t) or images (t2i), half and half."""
    out = {}
    for s in ("global", "local", "phrase"):
        key = "inter" if s == "global" else s
        for d, neg in (("i2t", neg_caption), ("t2i", neg_image)):
            out[f"thr_{s}_{d}"] = threshold_accuracy(pos[key], neg[key], thresholds[f"{s}_{d}"])
            out[f"thr0_{s}_{d}"] = threshold_accuracy(pos[key], neg[key], 0.0)
    return out


def pair_thresholds(pos: dict[str, np.ndarray], neg_caption: dict[str, np.ndarray],
                    neg_image: dict[str, np.ndarray]) -> dict[str, float]:
    """Dev thresholds for :func:`classifier_accuracy`: one per score and direction (:func:`best_threshold`)."""
    def thr(p: np.ndarray, n: np.ndarray) -> float:
        return best_threshold(p, n) if np.isfinite(p).any() and np.isfinite(n).any() else float("nan")

    return {f"{s}_{d}": thr(pos[k], neg[k]) for s, k in (("global", "inter"), ("local", "local"), ("phrase", "phrase"))
            for d, neg in (("i2t", neg_caption), ("t2i", neg_image))}


def mask_of_pair(model: Any, ds: ITMDataset, text: dict[str, Any], image: int, caption: int, regions: int = 6
                 ) -> tuple[np.ndarray, list[str]]:
    """The inter encoder's attention mask (:func:`~itmlib.models.ssamt.attention_mask`) for one pair, padding
    dropped, and a name for each node: ``v_g``, ``r1..``, ``t_g``, the caption's words, its phrases. Only the
    first ``regions`` regions are kept (they all follow the same rules)."""
    import torch

    from ...data.inputs import region_inputs
    from ...models.masks import attention_mask

    _, rv = region_inputs(ds, np.array([image]), model.cfg.use_boxes)
    rows = model._rows(text, np.array([caption]))          # one caption: no token or phrase padding
    n_tok, n_phr = rows["tokens"].shape[1], rows["kinds"].shape[1]
    tv, pv = torch.ones(1, n_tok, dtype=torch.bool), torch.ones(1, n_phr, dtype=torch.bool)
    allowed = attention_mask(rv, tv, pv, rows["cover"])[0]
    parts = text["parts"][caption]
    names = (["v_g"] + [f"r{j + 1}" for j in range(rv.shape[1])] + ["t_g"] + [p[0] for p in parts[:n_tok]]
             + ["(" + " ".join(p) + ")" for p in parts[n_tok:n_tok + n_phr]])
    shown = rv[0] & (torch.arange(rv.shape[1]) < regions)
    keep = torch.cat([torch.ones(1, dtype=torch.bool), shown, torch.ones(1 + n_tok + n_phr, dtype=torch.bool)])
    return allowed[keep][:, keep].numpy(), [n for n, k in zip(names, keep.tolist()) if k]


def true_tuples(ds: ITMDataset, image: int) -> set[tuple[str, ...]]:
    """Every phrase true of a synthetic image (its scene's objects, attributes, counts, relations)."""
    from ...data.synthetic.relevance import TUPLES, image_tuples

    return {TUPLES.items[t] for t in image_tuples(ds.image_extras["scenes"][image])}


def false_phrases(ds: ITMDataset, text: dict[str, Any], images: np.ndarray, captions: np.ndarray,
                  nodes: Sequence[np.ndarray]) -> dict[str, float]:
    """Figure 3 made measurable on the synthetic world, for negative pairs (image, caption of another image):
    over pairs whose caption has both a phrase true of the image and a false one, how often the
    lowest-scoring *phrase* is a false one (``false_hit``) against picking one at random
    (``false_chance``); and how often a phrase the labels call negative is truly false
    (``label_precision``: the rest are true but never said by the image's captions)."""
    if "scenes" not in ds.image_extras:
        raise ValueError(f"{ds.name} has no scenes: phrase truth is known on the synthetic world only")
    hits, chance, lab_neg, lab_false = [], [], 0, 0
    labels = text["labels"]
    truths: dict[int, set[tuple[str, ...]]] = {}
    for i, c, s in zip(images, captions, nodes):
        n_tok = int(text["lengths"][c])
        phr = text["parts"][c][n_tok:]
        if not phr:
            continue
        if int(i) not in truths:  # each image's truth once, not once per caption
            truths[int(i)] = true_tuples(ds, int(i))
        truth = truths[int(i)]
        false = np.array([p not in truth for p in phr])
        for p, f in zip(phr, false):
            if not labels.positive(int(i), p):
                lab_neg += 1
                lab_false += int(f)
        if false.all() or not false.any():
            continue
        hits.append(bool(false[int(np.argmin(s[n_tok:n_tok + len(phr)]))]))
        chance.append(false.mean())
    nan = float("nan")
    return {"false_hit": 100 * float(np.mean(hits)) if hits else nan,
            "false_chance": 100 * float(np.mean(chance)) if chance else nan,
            "false_pairs": float(len(hits)), "label_precision": 100 * lab_false / lab_neg if lab_neg else nan}


def part_accuracy(text: dict[str, Any], images: np.ndarray, captions: np.ndarray, nodes: Sequence[np.ndarray]
                  ) -> dict[str, float]:
    """Table 4 per part: each phrase of each (image, caption) pair is classified as relevant to the image when
    its score s(p, I) is positive - the sign the paper's Figure 3 colours the parts by - against the phrase
    labels' split (:class:`~itmlib.relevance.phrases.LabelIndex`: relevant iff the image's captions say it).
    Over the pairs of a negative caption it measures what the paper describes, "determining the irrelevant
    parts of the negative sentence"; unlike a threshold chosen on dev (whose accuracy cannot fall far below
    50%: it may always call every pair positive), it falls below 50% when the scores' signs run against the
    labels. Returns, in %: ``accuracy`` (the share of parts classified right), ``balanced`` (the mean of the
    rates on the parts the labels call true and on those they call false: 50 for any score of one sign,
    whatever the share of true parts), ``true_share`` (the share of true parts: a model that calls every
    part false scores 100 - ``true_share`` in plain accuracy) and ``parts`` (how many; NaN rates with none)."""
    labels, said, positive = text["labels"], [], []
    for i, c, s in zip(images, captions, nodes):
        n_tok = int(text["lengths"][c])
        phr = text["parts"][c][n_tok:]
        said += [labels.positive(int(i), p) for p in phr]
        positive.append(np.asarray(s[n_tok:n_tok + len(phr)]) > 0)
    said_a = np.array(said, bool)
    pos = np.concatenate(positive) if positive else np.zeros(0, bool)
    nan = float("nan")
    rate = lambda m: 100 * float((pos[m] == said_a[m]).mean()) if m.any() else nan   # noqa: E731
    return {"accuracy": 100 * float((pos == said_a).mean()) if len(said_a) else nan,
            "balanced": (rate(said_a) + rate(~said_a)) / 2,
            "true_share": 100 * float(said_a.mean()) if len(said_a) else nan, "parts": float(len(said_a))}


def ssamt_evaluator(test_ds: ITMDataset, test_relevance: np.ndarray | None, *, seed: int = 0, device: str = "cpu",
                    dev_ds: ITMDataset | None = None, per_part: bool = False
                    ) -> Callable[[str, TrainResult, ITMDataset], list[dict[str, Any]]]:
    """:func:`~itmlib.training.grid.run_grid`'s ``evaluate_fn`` for SSAMT runs: Recall and NCS (eq. 5 with re-ranking),
    Table 4's accuracies - ranked against one sampled negative (``acc_*``) and, with ``dev_ds``, as a per-pair
    classifier whose thresholds are chosen on dev pairs sampled the same way (``thr_*``, ``thr0_*``:
    :func:`classifier_accuracy`), with ``per_part`` the per-part protocol (``part_phrase_i2t``: the parts of
    the negative captions against the image; ``part_phrase_t2i``: the caption's parts against the negative
    image; ``part_bal_*`` balanced, ``part_true_*`` the share of true parts; :func:`part_accuracy`) - and, with
    phrase nodes on the synthetic world, Figure 3's false-phrase rates."""
    pairs = negative_pairs(test_ds, seed)
    dev_pairs = negative_pairs(dev_ds, seed) if dev_ds is not None else None
    device = resolve_device(device)

    def fn(name: str, result: TrainResult, ds: ITMDataset) -> list[dict[str, Any]]:
        model, vocab = result.model, result.vocab
        text = model.dataset_inputs(ds, vocab)
        t0 = time.perf_counter()
        sims = model.similarity(ds, vocab, device, text=text)
        row: dict[str, Any] = evaluate(model, vocab, ds, test_relevance, device, sims=sims)
        row["seconds_per_query"] = (time.perf_counter() - t0) / (ds.n_images + ds.n_captions)
        pos = model.score_pairs(ds, text, pairs["image"], pairs["caption"], device)
        nc = model.score_pairs(ds, text, pairs["image"], pairs["neg_caption"], device)
        ni = model.score_pairs(ds, text, pairs["neg_image"], pairs["caption"], device)
        row |= mismatch_accuracy(pos, nc, ni)
        if dev_pairs is not None:
            dev_text = model.dataset_inputs(dev_ds, vocab)
            dev = [model.score_pairs(dev_ds, dev_text, dev_pairs[a], dev_pairs[b], device)
                   for a, b in (("image", "caption"), ("image", "neg_caption"), ("neg_image", "caption"))]
            row |= classifier_accuracy(pos, nc, ni, pair_thresholds(*dev))
        if per_part:
            for d, (ims, caps, scored) in {"i2t": (pairs["image"], pairs["neg_caption"], nc),
                                           "t2i": (pairs["neg_image"], pairs["caption"], ni)}.items():
                got = part_accuracy(text, ims, caps, scored["nodes"])
                row |= {f"part_phrase_{d}": got["accuracy"], f"part_bal_{d}": got["balanced"],
                        f"part_true_{d}": got["true_share"], f"parts_{d}": got["parts"]}
        if model.cfg.phrases and "scenes" in ds.image_extras:
            row |= false_phrases(ds, text, pairs["image"], pairs["neg_caption"], nc["nodes"])
        return [row]

    # run_grid keeps the rows beside each checkpoint under this key (bump "v1" when the evaluation changes)
    fn.cache_key = (f"ssamt-eval-v2|{test_ds.source}|{test_ds.split}|{test_ds.n_images}|seed {seed}|rel {array_key(test_relevance)}"
                    + (f"|thresholds on {dev_ds.source}|{dev_ds.split}|{dev_ds.n_images}" if dev_ds is not None else "")
                    + ("|per part v2" if per_part else ""))
    return fn


def rerank_curve(result: TrainResult, ds: ITMDataset, ks: Sequence[int] = (0, 5, 10, 20), device: str = "cpu"
                 ) -> pd.DataFrame:
    """Recall against the re-ranking depth k (0: intra scores alone) and the seconds per query of scoring."""
    model, vocab = result.model, result.vocab
    text = model.dataset_inputs(ds, vocab)
    device = resolve_device(device)
    rows = []
    for k in ks:
        t0 = time.perf_counter()
        sims = model.similarity(ds, vocab, device, k=int(k), text=text)
        sec = (time.perf_counter() - t0) / (ds.n_images + ds.n_captions)
        m = evaluate(model, vocab, ds, sims=sims)
        rows.append({"k": int(k), "rsum": m["rsum"], "i2t_r1": m["i2t_r1"], "t2i_r1": m["t2i_r1"],
                     "ms_per_query": 1000 * sec})
    return pd.DataFrame(rows)
