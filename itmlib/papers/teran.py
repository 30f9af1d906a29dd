"""Messina et al., *TERAN* (ACM TOMM 2021): the paper's home in itmlib.

Notebook 08. The model is :mod:`itmlib.models.teran`, the region-word alignment and its
poolings :mod:`itmlib.models.alignment` (with A_ij = cos(v_i, s_j) over regions i and words j):

    MrSw (eq. 3): S(k, l) = Σ_j max_i A_ij          MwSr (eq. 3): S(k, l) = Σ_i max_j A_ij
    Symm (eq. 4): MrSw + MwSr                       MrAvgw (eq. 8): (1/|words|) Σ_j max_i A_ij

grounding :mod:`itmlib.metrics.grounding` (the words it scores: :func:`grounding_targets`). This module
holds the paper's scale sizes, its configs, the evaluation bundle of Tables 1/4 (Recall and NDCG@25 with
ROUGE-L and SPICE-like relevance, grounding measured), the joins to the paper's rows and the query timings;
:func:`grids`, :func:`members` and :func:`world` give the notebook and ``tools/member_pool.py`` one plan.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..config import array_key, get_scale, resolve_device
from ..data.base import ITMDataset
from ..models.teran import TERANConfig
from ..models.vocab import tokenize
from ..paper_numbers import paper_table
from ..relevance import eval_relevance, eval_rouge
from ..training.timing import timed
from ..training.train import TrainConfig, TrainResult

__all__ = ["grounding_targets", "TERAN_SIZES", "teran_config", "teran_dev_relevance", "comparison_configs", "TUNED_BERT", "recall_ndcg",
           "teran_evaluator", "TERN_TEST_POOLINGS", "PAPER_ROWS",
           "with_paper_columns", "query_times", "figure_configs", "REFERENCE",
           "grids", "members", "world", "TERAN_RECIPES"]

#: notebook 08's budgets at each scale, as the recipe probe on MrSw's dev curve chose (the notebook's table
#: ``recipe_probe``): every arm, the comparisons too, at most 20 epochs with patience 3; the figures' models
#: (seed 0) keep the 4 epochs their committed figure records were drawn at
TERAN_RECIPES = {"medium": {"epochs": 20, "patience": 3, "figure_epochs": 4}}


# TERAN sizes per scale (paper and public code: joint 1024, visual TE 4 layers at d_model 2048, FF 2048, BERT
# fine-tuned at lr 1e-5, 30 epochs, lr x0.1 at epoch 20 - the StepLR of the configs; the paper's text says 15).
# CPU scales keep BERT frozen (its states cached once), train the rest from scratch at lr 2e-4 and train fewer
# epochs (one TERAN batch costs ~10x a VSE++ batch on a CPU).
TERAN_SIZES: dict[str, dict[str, Any]] = {
    "smoke": dict(lr=2e-4, epochs=2, lr_decay_epochs=15, model=dict(embed_dim=64, visual_dim=64, visual_layers=1,
                                                                   ff_dim=128, finetune_text=False)),
    "medium": dict(lr=2e-4, epochs=4, lr_decay_epochs=15, model=dict(embed_dim=128, visual_dim=128, visual_layers=2,
                                                                    ff_dim=256, finetune_text=False)),
    "full": dict(lr=1e-5, epochs=30, lr_decay_epochs=20, model=dict(embed_dim=1024, visual_dim=2048, visual_layers=4,
                                                                   ff_dim=2048, finetune_text=True)),
}


def teran_config(scale: str, *, epochs: int | None = None, data: str = "", lr: float | None = None,
                 warmup_epochs: int = 1, select_by: str = "ndcg", lr_warmup_iters: int = 0, patience: int = 0,
                 **model_options: Any) -> TrainConfig:
    """A TERAN :class:`~itmlib.training.train.TrainConfig` sized by the scale; ``model_options`` override
    :class:`~itmlib.models.teran.TERANConfig` fields (pooling, shared_weights, stopwords, text_encoder, ...).

    The best epoch is chosen by the dev NDCG sum as TERAN does (``select_by="ndcg"``, sec. 7; train
    with ``dev_relevance=teran_dev_relevance(dev_ds)``). TERAN takes the hardest negatives from the
    first iteration (``warmup_epochs=0``; its F30K config adds a linear lr warm-up,
    ``lr_warmup_iters=1000``). At our CPU scales that collapses (vsepp#27): smoke, seed 0, dev Rsum
    after 2-4 epochs 24-34 (chance ~16) at lr 2e-5, 1e-4, 2e-4 and 5e-4, with or without a 117-iteration
    lr warm-up, against 159-195 with one warm-up epoch summing over all negatives - so the warm-up
    (``warmup_epochs=1``) stays our default, a knob a reader can set to 0."""
    sc = get_scale(scale)
    size = TERAN_SIZES[sc.name]
    model = TERANConfig(word_dim=300, **{**size["model"], **model_options})
    return TrainConfig(epochs=epochs or size["epochs"], batch_size=sc.batch_size, lr=lr or size["lr"], data=data,
                       lr_decay_epochs=size["lr_decay_epochs"], warmup_epochs=warmup_epochs, select_by=select_by,
                       lr_warmup_iters=lr_warmup_iters, patience=patience, model=model)


def teran_dev_relevance(dev_ds: ITMDataset) -> dict[str, np.ndarray]:
    """The dev relevances TERAN's epoch selection reads: ROUGE-L and the SPICE-like scene-graph F1."""
    return {"rouge": eval_rouge(dev_ds), "sg": eval_relevance(dev_ds)}


#: the comparison whose BERT is fine-tuned (its top 2 layers) where the main model's BERT is frozen
TUNED_BERT = "TERAN mrsw BERT top-2 tuned"


def comparison_configs(main: TrainConfig, scale: str, ablations: bool = True) -> dict[str, TrainConfig]:
    """The models of Tables 1 and 4: the main model (named ``"TERAN <pooling>"``) and, with
    ``ablations``, every comparison the claims name, each the main model with some options
    replaced. The paper's reference, MrSw, is always among them, so every claim of
    ``claims_teran.yaml`` is judged whatever pooling the main model uses. At ``smoke`` Symm.,
    Shared-W, the stop-word filter and the BERT with its top layers fine-tuned (:data:`TUNED_BERT`;
    the frozen BERT of the CPU scales against a trained GRU is not the paper's comparison) are left
    out (their claims then say "not run")."""
    configs = {f"TERAN {main.model.pooling}": main}
    if not ablations:
        return configs
    v = main.with_model
    extra = {"TERAN mrsw": v(pooling="mrsw"), "TERAN mwsr": v(pooling="mwsr"), "TERAN mravgw": v(pooling="mravgw"),
             "TERAN mrsw Bi-GRU": v(pooling="mrsw", text_encoder="gru"),
             "TERN (global)": v(pooling="mrsw", objective="global")}
    if get_scale(scale).name != "smoke":
        extra |= {"TERAN symm": v(pooling="symm"), "TERAN mrsw Shared-W": v(pooling="mrsw", shared_weights=True),
                  "TERAN mrsw StopWordsFilter": v(pooling="mrsw", stopwords=True)}
        if main.model.text_encoder == "bert" and not main.model.finetune_text:   # the BERT-vs-GRU claim, BERT trained
            extra[TUNED_BERT] = v(pooling="mrsw", finetune_layers=2)
    return configs | {k: c for k, c in extra.items() if k not in configs and c != main}


def main_config(p: Mapping[str, Any], data: str) -> TrainConfig:
    """Notebook 08's main model from its parameters ``p`` (``scale``, ``epochs``, ``pooling``, ``shared_weights``,
    ``stopwords``, ``text_encoder``, ``text_path``, ``finetune_text``, ``warmup_epochs``, ``patience``)."""
    options: dict[str, Any] = dict(text_path=p["text_path"] or None)
    if p["finetune_text"] != "auto":
        options["finetune_text"] = p["finetune_text"] == "yes"
    return teran_config(p["scale"], epochs=p["epochs"] or None, data=data, pooling=p["pooling"],
                        shared_weights=p["shared_weights"], stopwords=p["stopwords"], text_encoder=p["text_encoder"],
                        warmup_epochs=p["warmup_epochs"], patience=p["patience"], **options)


#: the model every comparison of Tables 1 and 4 is set beside (the paper's reference, MrSw)
REFERENCE = "TERAN mrsw"


def grids(p: Mapping[str, Any], data: str) -> dict[str, Any]:
    """Notebook 08's plan: ``"teran"``, the main model and (with ``p["ablations"]``) the comparisons of Tables 1
    and 4 on ``n_seeds`` seeds, the headline claims' arms on ``headline_seeds``. With ``ablation_epochs`` the
    arms no headline claim reads keep that budget (and no early stopping): the recipe the main arms were
    retrained under is then theirs only, and the gate reads the others' curves as they are; ``"reference"``
    is then :data:`REFERENCE` at that budget too, on the comparisons' seeds, so that a comparison claim sets
    two models trained alike side by side. The notebook runs these grids and ``tools/member_pool.py`` trains
    the first's members: one plan for both."""
    from ..claims import headline_methods
    from ..training.grid import Grid

    heads = tuple(headline_methods("08_teran"))
    configs = comparison_configs(main_config(p, data), p["scale"], p["ablations"])
    seeds = range(p["seed"], p["seed"] + p["n_seeds"])
    if not p.get("ablation_epochs"):
        return {"teran": Grid(configs, (1.0,), seeds, "teran", heads, p["headline_seeds"])}
    budget = _at_budget(configs, p["ablation_epochs"])
    grid = Grid({n: c if n in heads else budget[n] for n, c in configs.items()}, (1.0,), seeds, "teran", heads,
                p["headline_seeds"])
    if len(configs) == 1 or REFERENCE not in configs or budget[REFERENCE] == configs[REFERENCE]:
        return {"teran": grid}
    return {"teran": grid, "reference": Grid({REFERENCE: budget[REFERENCE]}, (1.0,), seeds, "teran")}


def figure_configs(p: Mapping[str, Any], configs: Mapping[str, TrainConfig]) -> dict[str, TrainConfig]:
    """The config each figure's model (word groundings, query time; seed ``p["seed"]``) was trained under: the
    grid's own configs, or with ``figure_epochs`` the same model at that many epochs, no early stopping - whose
    figure records a grid retrained under a longer recipe can still read: a word-grounding picture and a timing,
    not a claim, drawn without retraining the first seed (~2 h of one CPU thread for MrSw and TERN at 20 epochs)."""
    if not p.get("figure_epochs"):
        return dict(configs)
    return _at_budget(configs, p["figure_epochs"])


def _at_budget(configs: Mapping[str, TrainConfig], epochs: int) -> dict[str, TrainConfig]:
    """Every config at a fixed budget: ``epochs`` epochs, no early stopping."""
    from dataclasses import replace

    return {n: replace(c, epochs=epochs, patience=0) for n, c in configs.items()}


def recall_ndcg(sims: np.ndarray, ds: ITMDataset, relevances: Mapping[str, np.ndarray], k: int = 25) -> dict[str, float]:
    """Recall@1/5/10 both ways, Rsum, and NDCG@k (percent) per relevance and direction: with the public
    code's exponential gain 2^rel - 1 (the numbers of the paper's tables) as ``i2t_ndcg_<name>``,
    ``t2i_ndcg_<name>``, and with eq. 7's linear gain rel as ``..._linear``."""
    from ..metrics import ndcg, retrieval_recall

    out = dict(retrieval_recall(sims, ds.img_of_caption))
    for name, rel in relevances.items():
        for gain, suffix in (("exp", ""), ("linear", "_linear")):
            n = ndcg(sims, rel, ds.img_of_caption, k=k, gain=gain)
            out[f"i2t_ndcg_{name}{suffix}"], out[f"t2i_ndcg_{name}{suffix}"] = n[f"i2t_ndcg{k}"], n[f"t2i_ndcg{k}"]
    return out


def teran_evaluator(relevances: Mapping[str, np.ndarray], *, device: str = "auto",
                    test_poolings: Mapping[str, str] | None = None, keep: dict[str, Any] | None = None):
    """An ``evaluate_fn`` for :func:`itmlib.training.grid.run_grid`: Recall, NDCG per relevance and grounding
    accuracy of a TERAN/TERN model on the test split.

    ``test_poolings`` maps a method label to a forced pooling: a model whose name starts
    the label is also scored that way (TERN "MrSw Test": a global-trained model scored by
    region-word alignment). ``keep`` (a dict) receives ``{method: (model, vocab, features)}``
    of the first seed each method is evaluated with (the figures reuse them)."""
    from ..metrics.grounding import grounding_accuracy
    from ..models.alignment import score_matrix

    device_name = resolve_device(device)
    targets: dict[int, Any] = {}

    def evaluate(name: str, r: TrainResult, test_ds: ITMDataset) -> list[dict[str, Any]]:
        if id(test_ds) not in targets:
            targets[id(test_ds)] = grounding_targets(test_ds)
        f = r.model.extract(test_ds, r.vocab, device_name)
        g = grounding_accuracy(f.regions, f.region_mask, f.words, f.word_index, targets[id(test_ds)], test_ds)
        extra = {"grounding": g["accuracy"], "grounding_iou50": g["accuracy_iou50"],
                 "grounding_chance": g["chance"], "grounding_chance_iou50": g["chance_iou50"],
                 "true_region_rank": g["true_rank"], "wins_on_objects": g["wins_on_objects"],
                 "objects_share": g["objects_share"], "train_seconds": r.seconds}
        sims = r.model.similarity(test_ds, r.vocab, device_name, features=f)
        rows = [{**recall_ndcg(sims, test_ds, relevances), **extra}]
        for label, pooling in (test_poolings or {}).items():
            if label.startswith(name):
                sims_p = score_matrix(f.regions, f.region_mask, f.words, f.word_mask, pooling, device=device_name)
                rows.append({"method": label, **recall_ndcg(sims_p, test_ds, relevances), **extra})
        if keep is not None and name not in keep:
            keep[name] = (r.model, r.vocab, f)
        return rows

    # run_grid keeps the rows beside each checkpoint and in member records under this key (bump "v1" when the
    # evaluation changes); the relevances' hashes name the test split. A cached member skips ``keep``.
    rels = ",".join(f"{k} {array_key(v)}" for k, v in sorted(relevances.items()))
    evaluate.cache_key = f"teran-eval-v1|rel {rels}|test poolings {sorted((test_poolings or {}).items())}"
    return evaluate


#: TERN's global model scored at test by MrSw too (Table 1's "TERN MrSw Test" row): the extra row's name -> pooling
TERN_TEST_POOLINGS = {"TERN (global) mrsw Test": "mrsw"}

#: our method name -> the paper's closest row (teran_table1 / teran_table4)
PAPER_ROWS = {"TERAN mrsw": "TERAN MrSw", "TERAN mwsr": "TERAN MwSr", "TERAN symm": "TERAN Symm.",
              "TERAN mravgw": "MrAvgw", "TERAN mrsw Bi-GRU": "MrSw Bi-GRU", "TERAN mrsw Shared-W": "MrSw Shared-W",
              "TERAN mrsw StopWordsFilter": "MrSw StopWordsFilter", "TERN (global)": "TERN", TUNED_BERT: "TERAN MrSw",
              "TERN (global) mrsw Test": "TERN MrSw Test"}


def with_paper_columns(table: pd.DataFrame, columns=("t2i_r1", "i2t_r1", "t2i_ndcg_rouge", "i2t_ndcg_rouge",
                                                     "t2i_ndcg_spice", "i2t_ndcg_spice")) -> pd.DataFrame:
    """``table`` (a ``method`` column) with ``paper row`` and ``paper <col>`` columns from TERAN's
    Tables 1 and 4 (MS-COCO 1K). The paper prints NDCG as a fraction; here it is x100 like ours."""
    paper = pd.concat([paper_table("teran_table1"), paper_table("teran_table4")]).drop_duplicates("model").set_index("model")
    out = table.copy()
    out["paper row"] = out.method.map(PAPER_ROWS)
    for c in columns:
        scale = 100.0 if "ndcg" in c else 1.0
        out[f"paper {c}"] = [paper.loc[r, c] * scale if isinstance(r, str) and r in paper.index else np.nan
                             for r in out["paper row"]]
    return out


def query_times(features: Any, pooling: str = "mrsw", device: str = "cpu", n_queries: int = 20) -> dict[str, float]:
    """Seconds to score the whole test matrix, one image query (all captions) and one caption
    query (all images) with :func:`~itmlib.models.alignment.score_matrix` (mean over ``n_queries``).

    ``features``: anything with ``regions``, ``region_mask``, ``words``, ``word_mask`` tensors."""
    from ..models.alignment import score_matrix

    f = features
    device_name = resolve_device(device)
    full = timed(lambda: score_matrix(f.regions, f.region_mask, f.words, f.word_mask, pooling, device=device_name),
                 device_name)[0]
    n_i, n_t = len(f.regions), len(f.words)
    qi = [timed(lambda i=i: score_matrix(f.regions[i:i + 1], f.region_mask[i:i + 1], f.words, f.word_mask, pooling,
                                         device=device_name), device_name)[0] for i in range(min(n_queries, n_i))]
    qt = [timed(lambda t=t: score_matrix(f.regions, f.region_mask, f.words[t:t + 1], f.word_mask[t:t + 1], pooling,
                                         device=device_name), device_name)[0] for t in range(min(n_queries, n_t))]
    return {"images": n_i, "captions": n_t, "full_matrix_s": full, "image_query_s": float(np.mean(qi)),
            "caption_query_s": float(np.mean(qt))}


def grounding_targets(ds: ITMDataset) -> pd.DataFrame:
    """One row per unambiguous object noun: caption, word position (in :func:`tokenize` words),
    word, image, true region slot (index into ``ds.regions[image]``)."""
    if ds.graphs is None or "object_region" not in ds.image_extras:
        raise ValueError(f"{ds.name}/{ds.split} has no word-to-object annotation (only the synthetic world has it)")
    obj_region = ds.image_extras["object_region"]
    rows = []
    for c, (cap, g) in enumerate(zip(ds.captions, ds.graphs)):
        if "grounding" not in g:
            raise ValueError("caption graphs lack 'grounding': regenerate the synthetic cache (annotation schema 2)")
        words = tokenize(cap)
        img = int(ds.img_of_caption[c])
        for _node, k, noun in g["grounding"]:
            parts = tokenize(noun)
            n = len(parts)
            starts = [j for j in range(len(words) - n + 1) if words[j:j + n] == parts]
            if len(starts) != 1:
                continue
            rows.append({"caption": c, "word_pos": starts[0] + n - 1, "word": noun, "image": img,
                         "region": int(obj_region[img][k])})
    return pd.DataFrame(rows, columns=["caption", "word_pos", "word", "image", "region"])


def members(p: Mapping[str, Any]) -> list[Any]:
    """Notebook 08's grid's members, the headline arms seed by seed first: a pool cut off part-way leaves
    paired seeds."""
    from ..training.world import training_source

    grid = grids(p, training_source(p))["teran"]
    everyone = grid.members()
    heads = [m for m in everyone if m.name in grid.headline]
    return sorted(heads, key=lambda m: m.seed) + [m for m in everyone if m.name not in grid.headline]


def world(kind: str, p: Mapping[str, Any], device: str, keep: dict[str, Any] | None = None) -> Any:
    """The ``"teran"`` world: the splits, Tables 1/4's evaluation (NDCG with ROUGE-L and gold-graph relevance,
    TERN also scored by region-word alignment, :data:`TERN_TEST_POOLINGS`) and the dev NDCG the epoch selection
    reads; ``keep`` receives the first seed's models for the figures (:func:`teran_evaluator`)."""
    from ..training.world import World, load_splits

    train, dev, test = load_splits(p["dataset"], p["scale"], p["seed"])
    fn = teran_evaluator({"rouge": eval_rouge(test), "sg": eval_relevance(test)}, device=device,
                         test_poolings=TERN_TEST_POOLINGS, keep=keep)
    return World(train, dev, test, None, fn, {"dev_relevance": teran_dev_relevance(dev)})
