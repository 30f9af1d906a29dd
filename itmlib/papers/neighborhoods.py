"""Thomas & Kovashka, "Preserving semantic neighborhoods for robust cross-modal retrieval" (ECCV 2020):
everything notebook 07 runs, in one place.

- :data:`ARMS` - the methods of Tables 1, 2 and 4 (and our control arm) as
  :class:`~itmlib.models.neighborhoods.NeighborhoodsConfig` settings; :func:`arm_config` / :func:`arm_configs`
  size them by scale (the VSE++ towers of notebook 03).
- :func:`neighborhoods_evaluator` - the paper's evaluation for :func:`~itmlib.training.grid.run_grid`: k-way
  accuracy (5-way on the non-literal world, 100-way on the literal one, several seeded
  draws), neighbourhood preservation at ``k`` (Table 3; non-literal world), and Recall.
- :func:`test_omega` - Ω vectors of the test texts from the Doc2Vec trained on the training texts.
- :func:`caption_neighbor_recall` - on real COCO text: do a caption's Doc2Vec neighbours recover its
  image's other captions and the CxC / ECCV Caption positives?
- :func:`with_paper_columns` - the paper's numbers beside ours.
- :func:`grids`, :func:`members`, :func:`world`, :func:`prepare` - the plan, its worlds and caches, which the
  notebook and ``tools/member_pool.py`` both take from here.

Scale choices (stated in the notebook): ``n_neighbors`` 200 as the paper at medium and full,
40 at smoke (1,500 texts: 200 would span three topics); Doc2Vec ``min_count`` 20 at full, 10 at
medium, 3 at smoke (the paper's 20 is for 246k articles); neighbourhood preservation at 200 at
full, 50 at medium and 10 at smoke (200 of the paper's ~24k test articles is under 1%; 200 of
our 1,000 would be a fifth of the split).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, NamedTuple, Sequence

import numpy as np
import pandas as pd

from ..config import check_choice, get_scale, resolve_device
from ..data.base import ITMDataset
from ..metrics import k_way_accuracy, neighbor_distance, neighborhood_preservation, retrieval_recall
from ..models.neighborhoods import NeighborhoodsConfig
from ..relevance.doc2vec import Doc2VecSettings, doc2vec_key, doc_vectors, train_doc2vec
from ..training.grid import Grid, Member
from ..training.train import TrainConfig, TrainResult
from ..training.world import World, load_splits, plan_members, training_source

__all__ = ["grids", "members", "world", "prepare", "ARMS", "D2V_TAGS", "split_arm", "SETTINGS", "TABLE1", "TABLE2", "TABLE4", "CONTROL",
           "arm_config", "arm_configs", "neighborhoods_evaluator", "test_omega", "caption_neighbor_recall", "vector_neighbor_recall",
           "with_paper_columns", "kway_k", "preservation_k", "doc2vec_settings", "scale_note", "topic_purity", "PAPER_DATASETS",
           "settings_table", "NEWS_RECIPES"]

#: notebook 07's news-arm recipe at each scale, chosen by its probes on the baseline's dev curve (the notebook's
#: table ``recipe_probes``): lr 1e-4, each arm stopping on its own dev curve (at most 30 epochs, patience 3)
NEWS_RECIPES = {"medium": {"news_lr": 1e-4, "news_epochs": 30, "news_patience": 3}}


#: method -> NeighborhoodsConfig fields (names as the paper's tables; OURS is the angular variant)
ARMS: dict[str, dict[str, Any]] = {
    "ANG+NP+SYM": dict(loss="angular", within="none"),
    "OURS (Img NNs)": dict(loss="angular", within="ours", neighbors="image"),
    "OURS": dict(loss="angular", within="ours", neighbors="text"),
    "TRIP+NP+SYM": dict(loss="triplet", within="none"),
    "OURS (TRIP)": dict(loss="triplet", within="ours", neighbors="text"),
    "VSE++": dict(loss="vsepp", within="none"),
    "VSE++ + OURS": dict(loss="vsepp", within="ours", neighbors="text"),
    "OURS (random NNs)": dict(loss="angular", within="ours", neighbors="random"),
    "OURS - L_text": dict(loss="angular", within="ours", neighbors="text", alpha=0.0),
    "OURS - L_img": dict(loss="angular", within="ours", neighbors="text", beta=0.0),
    "STRUC (GT, Text)": dict(loss="triplet", within="struc", neighbors="gt", struc_space="text"),
    "STRUC (NN, Text)": dict(loss="triplet", within="struc", neighbors="text", struc_space="text"),
    "STRUC (NN, Img)": dict(loss="triplet", within="struc", neighbors="text", struc_space="image"),
}
TABLE1 = ("ANG+NP+SYM", "OURS (Img NNs)", "OURS", "TRIP+NP+SYM", "OURS (TRIP)", "VSE++", "VSE++ + OURS")
TABLE2 = ("TRIP+NP+SYM", "OURS (TRIP)", "STRUC (GT, Text)", "STRUC (NN, Text)", "STRUC (NN, Img)")
TABLE4 = ("OURS", "OURS - L_text", "OURS - L_img")
#: the mechanism's control: every extra term and batch item of OURS, neighbours drawn at random
CONTROL = "OURS (random NNs)"
#: an arm name's Doc2Vec tag -> ``d2v_mode``: "OURS (DBOW)" is OURS with Ω from PV-DBOW, "OURS (HS)" with the
#: paper's hierarchical softmax (an untagged arm takes the notebook's ``d2v_mode``)
D2V_TAGS = {"DBOW": "dbow", "HS": "paper", "NS": "code"}
#: our world -> the paper's datasets it stands in for (Politics only for the news world, calibrated on
#: Politics' baseline; nothing in it models GoodNews's ~466k New York Times captions, so no GoodNews column; the
#: real-language world's literal MS-COCO captions stand beside the paper's COCO)
PAPER_DATASETS = {"synthetic_news": ("Politics",), "synthetic": ("COCO",), "coco_scenes": ("COCO",)}
_SIZES = {"smoke": dict(embed_dim=64, n_neighbors=40, min_count=3, epochs=3, preservation_k=10),
          "medium": dict(embed_dim=256, n_neighbors=200, min_count=10, epochs=15, preservation_k=50),
          "full": dict(embed_dim=1024, n_neighbors=200, min_count=20, epochs=30, preservation_k=200)}


#: the paper's settings (sec. 4.1, its public code where the paper is silent) beside ours at medium, with the
#: reason for each difference: notebook 07's settings table
SETTINGS: list[tuple[str, str, str, str]] = [
    ("Doc2Vec tokeniser", "first 2 sentences of each article (sec. 4.1); gensim filters without stemming (code)",
     "whole article, gensim's default filters (Porter stemming, numerals stripped)",
     "our articles are 40-80 words of one story; stemming merges our nonce words' plural forms (a hypothesis, untested)"),
    ("Doc2Vec output layer", "PV-DM, hierarchical softmax (paper); negative sampling (public code)",
     "PV-DM with negative sampling (the code); (HS) and (DBOW) arms beside it",
     "the direct test: a PV-DBOW Ω is far purer on our world (the purity table)"),
    ("Doc2Vec min_count", "20 (Politics: 246,131 pairs)", "10 (8,000 articles)", "scaled to the corpus"),
    ("neighbours k (eq. 5)", "200, one drawn uniformly (paper); first 10 at distance > 0 (code)",
     "200, uniform (``neighbor_sampling``: paper)", "as the paper"),
    ("Img NNs features", "ResNet-50 pool feature", "the mean region feature of our detector", "our images are rendered shapes"),
    ("optimiser", "Adam, lr 1e-4, weight decay 1e-5, batch 64 (code: 32)", "Adam, lr 1e-4 (news), 1e-3 (literal), batch 128",
     "notebook 03's VSE++ recipe; the news baseline's dev curve chose the paper's 1e-4 (at 1e-3 it peaked at epoch 1); no weight decay"),
    ("model selection", "validation angular loss; lr x0.1 after 5 epochs without improvement", "best dev Rsum; news: at most 30 "
     "epochs, stop after 3 without a better one; literal: 15; lr x0.1 after 15", "the course's one selection rule; the stop is 08's"),
    ("k-way distractors", "k-1 other pairs (5-way news, 100-way COCO)", "the same, without replacement, 5 seeded draws",
     "as the paper"),
    ("STRUC", "structured loss of [52]: pulls the captions of one image together; weight not given",
     "triplet on the other captions (GT) or Ψ neighbours (NN), weight 0.3", "the paper gives no weight"),
    ("VSE++ + OURS", "PVSE + Ours (the paper's network model)",
     "VSE++'s hinge (a sum over the batch) plus eqs. 6-7 (a mean over anchors) times the batch size B",
     "x B puts both on a per-batch sum; per anchor the smooth angular term starts near log B, the hinge below 2 + m: "
     "not rebalanced further"),
]


def preservation_k(scale: str) -> int:
    """Neighbours of Table 3's preservation at a scale (module docstring; the paper: 200)."""
    return _SIZES[get_scale(scale).name]["preservation_k"]


def kway_k(ds: ITMDataset) -> int:
    """The paper's task size: 5-way for image-article pairs (Politics, GoodNews), 100-way for captions (COCO)."""
    return 5 if ds.captions_per_image == 1 else min(100, ds.n_images)


def doc2vec_settings(scale: str, mode: str = "code") -> Doc2VecSettings:
    """Ω's settings at a scale (the paper's, ``min_count`` scaled; module docstring)."""
    return Doc2VecSettings(min_count=_SIZES[get_scale(scale).name]["min_count"], mode=mode)


def split_arm(arm: str) -> tuple[str, str | None]:
    """``"OURS (DBOW)"`` -> ``("OURS", "dbow")``; an arm whose last parenthesis is no Doc2Vec tag (``"OURS"``,
    ``"OURS (random NNs)"``) -> ``(arm, None)`` (:data:`D2V_TAGS`)."""
    base, _, tag = arm.rpartition(" (")
    if base and tag.endswith(")") and tag[:-1] in D2V_TAGS:
        return base, D2V_TAGS[tag[:-1]]
    return arm, None


def arm_config(scale: str, arm: str, *, data: str = "", epochs: int | None = None, d2v_mode: str = "code",
               lr: float | None = None, warmup_epochs: int = 1, patience: int = 0, **model: Any) -> TrainConfig:
    """The :class:`~itmlib.training.train.TrainConfig` of method ``arm`` (:data:`ARMS`, optionally tagged with a Doc2Vec
    output layer, e.g. ``"OURS (DBOW)"``: :func:`split_arm`) at a scale: notebook 03's VSE++ sizes, optimiser
    and epochs, the neighbour loss and Doc2Vec settings of the paper. ``lr`` (None: VSE++'s 1e-3),
    ``warmup_epochs`` (epochs over all negatives before the hardest, for the arms with a hinge) and ``patience``
    (early stopping) are the recipe's knobs."""
    arm, tagged = split_arm(arm)
    check_choice("arm", arm, tuple(ARMS))
    if tagged and tagged != d2v_mode:    # another Ω for the neighbours, the same word vectors for the text tower
        model.setdefault("words_mode", d2v_mode)
        d2v_mode = tagged
    sc = get_scale(scale)
    z = _SIZES[sc.name]
    d = doc2vec_settings(scale, d2v_mode)
    mc = NeighborhoodsConfig(d2v_mode=d2v_mode, embed_dim=z["embed_dim"], word_dim=d.vector_size, hidden_dim=2 * z["embed_dim"],
                   n_neighbors=z["n_neighbors"], d2v_dim=d.vector_size, d2v_window=d.window,
                   d2v_min_count=d.min_count, d2v_epochs=d.epochs, **{**ARMS[arm], **model})
    return TrainConfig(epochs=epochs or z["epochs"], batch_size=sc.batch_size, data=data, model=mc,
                       lr=lr or TrainConfig.lr, warmup_epochs=warmup_epochs, patience=patience)


def arm_configs(scale: str, arms: Iterable[str], **kw: Any) -> dict[str, TrainConfig]:
    """``{arm: arm_config(scale, arm, **kw)}`` in the order given."""
    return {a: arm_config(scale, a, **kw) for a in arms}


def test_omega(train_ds: ITMDataset, test_ds: ITMDataset, settings: Doc2VecSettings) -> np.ndarray:
    """Ω(y) of every test text: ``infer_vector`` with the Doc2Vec trained on the training texts (cached)."""
    return doc_vectors(train_doc2vec(train_ds.captions, settings), test_ds.captions)


def omega_key(train_ds: ITMDataset, settings: Doc2VecSettings) -> str:
    """What :func:`test_omega` is made from - the Doc2Vec's settings and training texts (the test texts are named
    by the evaluation's test split) - for an evaluation's record key. Not Ω's bytes: one Doc2Vec recipe gives
    vectors that differ in their last bits from machine to machine (BLAS), and a member record must be read
    wherever its recipe is rebuilt."""
    return f"d2v {settings.mode} {doc2vec_key(train_ds.captions, settings)}"


class Omega(NamedTuple):
    """The Ω an evaluation measures a learned space against: the vectors of the test texts and what made them
    (:func:`omega_key`)."""

    vectors: np.ndarray
    key: str

    @classmethod
    def of(cls, train_ds: ITMDataset, test_ds: ITMDataset, settings: Doc2VecSettings) -> "Omega":
        return cls(test_omega(train_ds, test_ds, settings), omega_key(train_ds, settings))


def arm_omegas(train_ds: ITMDataset, test_ds: ITMDataset, scale: str, arms: Iterable[str], d2v_mode: str) -> dict[str, Omega]:
    """Ω per Doc2Vec the ``arms`` take their neighbours from, by ``d2v_mode`` (``""`` for the notebook's own,
    ``d2v_mode``; "OURS (DBOW)" adds PV-DBOW's): each arm's neighbourhoods are then measured in its own Ω."""
    modes = {split_arm(a)[1] or d2v_mode for a in arms} | {d2v_mode}
    return {m: Omega.of(train_ds, test_ds, doc2vec_settings(scale, m)) for m in sorted(modes)}


def neighborhoods_evaluator(test_ds: ITMDataset, *, omega: Omega | Mapping[str, Omega] | None = None, d2v_mode: str = "code",
                  preservation_k: int = 200, n_draws: int = 5, seed: int = 0, device: str = "cpu"
                  ) -> Callable[[str, TrainResult, ITMDataset], list[dict[str, Any]]]:
    """:func:`~itmlib.training.grid.run_grid`'s ``evaluate_fn``: k-way accuracy both ways (:func:`kway_k`),
    Recall, and with ``omega`` (Ω of the test texts, one text per image) neighbourhood preservation of
    images (``np_img``: an image's reference is its article's Ω) and texts (``np_txt``) at ``preservation_k``,
    and how close M keeps each sample's 10 Ω-neighbours relative to a random pair (``nd_img``, ``nd_txt``:
    :func:`~itmlib.metrics.kway.neighbor_distance`, the paper's Fig. 5 measured).

    ``omega`` is one :class:`Omega` for every arm, or one per Doc2Vec mode (:func:`arm_omegas`): an arm tagged
    with another Doc2Vec ("OURS (DBOW)") is then measured against the Ω its neighbours came from, the others
    against ``d2v_mode``'s."""
    k = kway_k(test_ds)
    device = resolve_device(device)
    per_mode = dict(omega) if isinstance(omega, Mapping) else None

    def omega_of(name: str) -> np.ndarray | None:
        if per_mode is None:
            return None if omega is None else omega.vectors
        return per_mode[split_arm(name)[1] or d2v_mode].vectors

    def fn(name: str, result: TrainResult, ds: ITMDataset) -> list[dict[str, Any]]:
        im, cap = result.model.embed_dataset(ds, result.vocab, device)
        row: dict[str, Any] = k_way_accuracy(im[ds.img_of_caption], cap, k, groups=ds.img_of_caption,
                                             n_draws=n_draws, seed=seed)
        row |= retrieval_recall(im @ cap.T, ds.img_of_caption)
        om = omega_of(name)
        if om is not None and ds.captions_per_image == 1:
            kk = min(preservation_k, ds.n_images - 1)
            row["np_img"] = neighborhood_preservation(im, om, kk)
            row["np_txt"] = neighborhood_preservation(cap, om, kk)
            row["nd_img"] = neighbor_distance(im, om, 10)
            row["nd_txt"] = neighbor_distance(cap, om, 10)
        return [row]

    # run_grid keeps the rows beside each checkpoint and in member records under this key (bump "v2" when
    # the evaluation changes); Ω is named by its recipe (omega_key)
    if per_mode is not None:
        named = "own omega " + ", ".join(f"{m}: {o.key}" for m, o in sorted(per_mode.items())) + f" (untagged: {d2v_mode})"
    else:
        named = f"omega {'none' if omega is None else omega.key}"
    fn.cache_key = (f"nbr-eval-v2|{test_ds.source}|{test_ds.split}|{test_ds.n_images}|{named}|"
                    f"k {preservation_k}|draws {n_draws}|seed {seed}")
    return fn


def topic_purity(vectors: np.ndarray, topics: np.ndarray, k: int = 10) -> dict[str, float]:
    """Percent of each text's ``k`` nearest (L2, as Ψ) that share its latent topic, and chance
    (the topic's share of the other texts)."""
    from ..knn import knn

    t = np.asarray(topics)
    idx, _ = knn(vectors, k, metric="l2")
    counts = np.bincount(t)
    return {"same_topic": float(100 * (t[idx] == t[:, None]).mean()),
            "chance": float(100 * ((counts[t] - 1) / (len(t) - 1)).mean())}


def caption_neighbor_recall(ds: ITMDataset, settings: Doc2VecSettings, train_texts: Sequence[str],
                            ks: Sequence[int] = (5, 10, 50)) -> pd.DataFrame:
    """Real text, no images: for every caption of ``ds``, its ``k`` nearest captions by Doc2Vec
    (trained on ``train_texts``) - what share of its image's other captions ("same image") and of
    the human-verified positives of its image in ``ds.positives`` (CxC, ECCV; the caption's own image's
    ground truth excluded) they recover, against chance (k / (n − 1)). Rows: (positives, k). The neighbours
    are exact (a measurement, not a training input: HNSW's misses read 5.41 for exact search's 5.52 at
    k = 10 on COCO's 25,000 test captions); :func:`vector_neighbor_recall` counts them."""
    return vector_neighbor_recall(ds, doc_vectors(train_doc2vec(list(train_texts), settings), ds.captions), ks)


def vector_neighbor_recall(ds: ITMDataset, vec: np.ndarray, ks: Sequence[int] = (5, 10, 50),
                           method: str = "exact") -> pd.DataFrame:
    """:func:`caption_neighbor_recall` for given caption vectors ``vec`` (one row per caption of ``ds``), their
    neighbours found by ``method`` (:func:`itmlib.knn.knn`'s: ``"exact"`` or ``"hnsw"``)."""
    from ..knn import knn

    n = ds.n_captions
    if len(vec) != n:
        raise ValueError(f"vec has {len(vec)} rows but the dataset has {n} captions")
    idx, _ = knn(vec, max(ks), metric="l2", method=method)
    gt = ds.gt.tocsr()
    sets = {"same image": gt}
    sets |= {name: ((m > 0).astype(np.int8) - gt.multiply(m > 0)).tocsr() for name, m in ds.positives.items()}
    rows = []
    for name, m in sets.items():
        pos = m[ds.img_of_caption].tocsr()                                 # (n captions, n captions) positives
        pos.setdiag(0)
        pos.eliminate_zeros()
        has = np.diff(pos.indptr) > 0
        total = np.diff(pos.indptr)[has]
        for k in ks:
            hit = np.asarray(pos[np.repeat(np.arange(n), k), idx[:, :k].ravel()]).reshape(n, k).sum(1)[has]
            rows.append({"positives": name, "k": k, "captions": int(has.sum()),
                         "recall": float(100 * np.mean(hit / total)),
                         "chance": float(100 * k / (n - 1))})
    return pd.DataFrame(rows)


def with_paper_columns(table: pd.DataFrame, which: str, world: str) -> pd.DataFrame:
    """``table`` (``method`` column) with the paper's numbers beside ours, in percent, for the paper's
    datasets that ``world`` stands in for (:data:`PAPER_DATASETS`): ``"table1"``/``"table2"``/``"table4"``
    (i2t, t2i accuracy) or ``"table3"`` (preservation of images, texts)."""
    from ..paper_numbers import paper_table

    check_choice("which", which, ("table1", "table2", "table3", "table4"))
    check_choice("world", world, tuple(PAPER_DATASETS))
    p = paper_table(f"neighborhoods_{which}")
    cols = ("img", "txt") if which == "table3" else ("i2t", "t2i")
    out = table.copy()
    for dset in PAPER_DATASETS[world]:
        q = p[p.dataset == dset].set_index("method")
        if q.empty:
            continue
        base = [split_arm(m)[0] for m in out.method]   # "OURS (DBOW)" stands beside the paper's OURS
        for c in cols:
            out[f"paper {c} ({dset})"] = [100 * q.loc[m, c] if m in q.index else np.nan for m in base]
    return out


def settings_table() -> pd.DataFrame:
    """:data:`SETTINGS` as a table: setting, the paper's, ours, why."""
    return pd.DataFrame(SETTINGS, columns=["setting", "paper", "ours (medium)", "why"])


def scale_note(scale: str, budget: str = "") -> str:
    """One line for table headers: what the scale changed from the paper's settings (``budget``, the arms' own, for the scale's epochs)."""
    z = _SIZES[get_scale(scale).name]
    return (f"{z['n_neighbors']} Doc2Vec neighbours, min_count {z['min_count']}, preservation at "
            f"{z['preservation_k']} (paper: 200, 20, 200); {z['embed_dim']}-d VSE++ towers, {budget or str(z['epochs']) + ' epochs'}")


def grids(p: Mapping[str, Any], news_data: str, literal_data: str) -> dict[str, Grid]:
    """Notebook 07's plan from its parameters ``p`` (``scale``, ``seed``, ``n_seeds``, ``headline_seeds``,
    ``news_arms``, ``literal_arms``, ``literal_fraction``, ``epochs``, ``d2v_mode``, ``neighbor_sampling``,
    ``lr``, ``warmup_epochs``, ``patience``; ``news_lr``/``_epochs``/``_patience``, the news arms' own): ``"news"`` (every news
    arm on every news pair; the headline claims' arms on ``headline_seeds``) and ``"literal"`` (the literal arms
    on ``literal_fraction`` of the literal world's images). The notebook runs these grids and
    ``tools/member_pool.py`` trains their members."""
    from ..claims import headline_methods

    common = dict(epochs=p["epochs"] or None, d2v_mode=p["d2v_mode"], sampling=p["neighbor_sampling"],
                  lr=p.get("lr") or None, warmup_epochs=p.get("warmup_epochs", 1), patience=p.get("patience", 0))
    news = {**common, **{k: p.get(f"news_{k}") or common[k] for k in ("lr", "epochs", "patience")}}   # 0: as common
    seeds = range(p["seed"], p["seed"] + p["n_seeds"])
    return {"news": Grid(arm_configs(p["scale"], p["news_arms"], data=news_data, **news), (1.0,), seeds, "news",
                         tuple(headline_methods("07_semantic_neighborhoods", "news")), p["headline_seeds"]),
            "literal": Grid(arm_configs(p["scale"], p["literal_arms"], data=literal_data, **common),
                            (float(p["literal_fraction"]),), seeds, "literal")}


def members(p: Mapping[str, Any]) -> list[Member]:
    """Every member of notebook 07's plan (:func:`grids`) at ``p``: the news grid, then the literal one."""
    return plan_members(grids(p, news_data=training_source(p, _dataset("news", p)),
                              literal_data=training_source(p, _dataset("literal", p))))


def _dataset(kind: str, p: Mapping[str, Any]) -> str:
    """The dataset a world of notebook 07 reads: the news pairs (``p["dataset"]``) or the literal synthetic world."""
    return p["dataset"] if kind == "news" else "synthetic"


def world(kind: str, p: Mapping[str, Any], device: str) -> World:
    """``"news"``: the news pairs, each arm measured in the Ω its neighbours come from (:func:`arm_omegas`) at
    the scale's preservation depth; ``"literal"``: the synthetic world under k-way accuracy and Recall."""
    train, dev, test = load_splits(_dataset(kind, p), p["scale"], p["seed"])
    if kind == "news":
        omegas = arm_omegas(train, test, p["scale"], p["news_arms"], p["d2v_mode"])
        fn = neighborhoods_evaluator(test, omega=omegas, d2v_mode=p["d2v_mode"], n_draws=p["n_draws"], seed=p["seed"],
                                     preservation_k=min(preservation_k(p["scale"]), test.n_images - 1), device=device)
    else:
        fn = neighborhoods_evaluator(test, n_draws=p["n_draws"], seed=p["seed"], device=device)
    return World(train, dev, test, None, fn)


def prepare(todo: Sequence[Member], p: Mapping[str, Any]) -> None:
    """Every Doc2Vec and Ω the members ``todo`` start from (word vectors; text neighbours), trained and cached
    once before a pool's workers start: the literal arms' subsets differ by seed, each with its own Doc2Vec."""
    import dataclasses

    from ..relevance.doc2vec import omega_vectors
    from ..training.grid import member_config

    trains = {k: load_splits(_dataset(k, p), p["scale"], p["seed"])[0]
              for k in dict.fromkeys(m.world for m in todo)}
    for m in todo:
        sub, c = member_config(m.config, trains[m.world], m.fraction, m.seed)
        mc = c.model
        if not hasattr(mc, "doc2vec"):
            continue
        settings = mc.doc2vec()
        if mc.init_words:
            train_doc2vec(sub.captions, dataclasses.replace(settings, mode=mc.words_mode or settings.mode))
        if mc.neighbors == "text":
            omega_vectors(sub.captions, settings)
