"""Notebook 06's plan for Fan et al.: the Table 3 arms, their configs sized by scale, and the grids the
notebook, the member pool and `make tables` train."""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable, Mapping


from ...config import check_choice, check_fraction, check_positive, get_scale
from ...models.ssamt import SSAMTConfig
from ...training.grid import Grid
from ...training.train import TrainConfig

#: notebook 06's Table 3 recipe at each scale: 8 intra then 8 inter epochs (the budget of its x2 arms, which
#: plateaued), the dev selection skipping the first phase-2 epoch (``results/06_phrase_labels/verdict_changes.csv``)
TABLE3_RECIPES = {"medium": {"table3_epochs": 16, "intra_epochs": 8, "select_after": 1}}


#: Table 3's losses on top of the mask transformer (MT): λ_LM, λ_PM switched off in turn
ARMS: dict[str, dict[str, float]] = {"MT+GM": {"local_weight": 0.0, "phrase_weight": 0.0},
                                     "+LM": {"phrase_weight": 0.0}, "+PM": {}}
#: the +PM arm with masking rule 3 read the other way (words outside a phrase cannot attend to its node)
RULE3_ARM = "+PM (w/ phrases, rule 3: words hidden)"
#: the world label of the grids evaluated with Table 4 per part (``ssamt_evaluator(per_part=True)``)
PER_PART_WORLD = "ssamt per part"
#: our run names -> the paper's names in Tables 4 and 5
PAPER_NAMES = {"MT+GM (w/ phrases)": "SSAMT w/o PM&LM", "+LM (w/ phrases)": "SSAMT w/o PM", "+PM (w/ phrases)": "SSAMT"}
# widths and epochs by scale (phase 1 intra, phase 2 inter); the paper's sizes were lost in extraction
_SIZES = {"smoke": dict(embed_dim=64, ff_dim=128, intra=2, inter=1),
          "medium": dict(embed_dim=128, ff_dim=256, intra=4, inter=4),
          "full": dict(embed_dim=512, ff_dim=1024, intra=10, inter=10)}


def arm_name(arm: str, phrases: bool) -> str:
    """``"+PM (w/ phrases)"``: a Table 3 run's name."""
    check_choice("arm", arm, tuple(ARMS))
    return f"{arm} ({'w/' if phrases else 'w/o'} phrases)"


def ssamt_config(scale: str, *, arm: str = "+PM", phrases: bool = True, data: str = "", epochs: int | None = None,
                 intra_epochs: int | None = None, lr: float = 1e-3, intra_lr: float = 0.0, **model: Any) -> TrainConfig:
    """An SSAMT :class:`~itmlib.training.train.TrainConfig` sized by scale: Table 3's ``arm`` with or without phrase nodes.
    ``epochs`` is the total (phase 1 + phase 2). The paper's schedule (sec. 3.2): Adam, each phase with a
    linear warm-up over a tenth of its updates (the paper: 1K of 10K) and a linear decay to 0. Its peaks on
    MS-COCO, 2e-4 intra and 6e-4 inter, go with batch sizes lost in extraction; at ours the smoke model
    trained with them stays at chance on Table 4 (48.8% global i2t), so both phases peak at ``lr`` = 1e-3,
    whose schedule has the mean of the constant 5e-4 the course used before (``intra_lr`` sets phase 1's
    peak apart)."""
    check_choice("arm", arm, tuple(ARMS))
    sc = get_scale(scale)
    z = _SIZES[sc.name]
    intra = z["intra"] if intra_epochs is None else intra_epochs
    total = epochs or intra + z["inter"]
    mc = SSAMTConfig(**{"embed_dim": z["embed_dim"], "ff_dim": z["ff_dim"], "phrases": phrases, "intra_epochs": intra,
                        **ARMS[arm], **model})   # a width in ``model`` (embed_dim, ff_dim) overrides the scale's
    # phase 1 sums over all in-batch negatives throughout: with hardest negatives the intra transformers
    # collapse at this lr (dev Rsum 140 -> 33 at smoke, vsepp#27), and phase 2 then draws degenerate negatives
    return TrainConfig(epochs=total, batch_size=sc.batch_size, lr=lr, phase_one_lr=intra_lr, lr_schedule="linear",
                       lr_decay_epochs=max(total, 1), data=data, warmup_epochs=intra, model=mc)


def fixed_updates(cfg: TrainConfig, fraction: float) -> TrainConfig:
    """``cfg`` for a run on ``fraction`` of the images with as many updates as on all of them (Table 5: the
    paper trains every fraction for 10K update steps): both phases' epochs scaled by 1 / fraction, rounded."""
    return scaled_epochs(cfg, 1.0 / check_fraction("fraction", fraction))


def scaled_epochs(cfg: TrainConfig, scale: float) -> TrainConfig:
    """``cfg`` with both phases' epochs times ``scale``, rounded (each phase at least one epoch)."""
    check_positive("scale", scale)
    intra = max(1, round(cfg.model.intra_epochs * scale)) if cfg.model.intra_epochs else 0
    inter = max(1, round((cfg.epochs - cfg.model.intra_epochs) * scale))
    return dataclasses.replace(cfg, epochs=intra + inter, warmup_epochs=intra,
                               model=dataclasses.replace(cfg.model, intra_epochs=intra))


def table3_configs(scale: str, *, data: str, arms: Iterable[str] = tuple(ARMS), phrase_settings: Iterable[bool] = (True, False),
                   **kw: Any) -> dict[str, TrainConfig]:
    """Table 3's grid: every arm with and without phrase nodes, named by :func:`arm_name`."""
    return {arm_name(a, p): ssamt_config(scale, arm=a, phrases=bool(p), data=data, **kw)
            for p in phrase_settings for a in arms}


def grids(p: Mapping[str, Any], data: str) -> dict[str, Grid]:
    """Notebook 06's plan, its parameters ``p`` (``scale``, ``seed``, ``n_seeds``, ``headline_seeds``,
    ``fraction``, ``arms``, ``phrase_settings``, ``epochs``, ``negative_pool``, ``rerank_k``, ``phrase_backend``,
    ``longer``, ``fractions``, ``table5_updates``, ``compare_vse``; optional ``table3_epochs``, ``intra_epochs``,
    ``select_after``, ``rule3_arm``) on the training data ``data``: ``"table3"`` (every arm; the headline claims'
    arms on ``headline_seeds``), ``"rule3"`` (with ``rule3_arm``: +PM with masking rule 3 read the other way,
    :mod:`itmlib.models.masks`), ``"longer"`` (+PM and +LM with ``longer`` times the epochs), ``"table5 <f>"`` per
    smaller fraction (fixed updates or the same epochs), ``"base"`` (when Table 3 has its own recipe: Table 5's
    arms on all the data under the scale's recipe, what the longer arms and the fractions compare against) and
    ``"vse"``.

    Table 3's recipe may differ from the scale's (``table3_epochs`` in all, ``intra_epochs`` of them phase 1,
    ``select_after`` phase-2 epochs skipped by the dev selection); the longer arms and Table 5 keep the
    scale's recipe (``epochs``), whose records they were judged on. The notebook runs these grids and
    ``tools/member_pool.py`` trains their members: one plan for both."""
    from ...claims import headline_methods
    from ..ncs_sam import vse_config

    seeds = range(p["seed"], p["seed"] + p["n_seeds"])
    f0 = (float(p["fraction"]),)
    common = dict(data=data, arms=p["arms"], phrase_settings=p["phrase_settings"], negative_pool=p["negative_pool"],
                  rerank_k=p["rerank_k"], phrase_backend=p["phrase_backend"])
    base = table3_configs(p["scale"], epochs=p["epochs"] or None, **common)
    recipe = {k: p[k] for k in ("intra_epochs", "select_after") if p.get(k)}
    configs = base if not (recipe or p.get("table3_epochs")) else \
        table3_configs(p["scale"], epochs=p.get("table3_epochs") or p["epochs"] or None, **recipe, **common)
    # Table 3's arms (and the rule-3 arm) are evaluated per part too with ``per_part``: a world of their own, so
    # that a pool evaluates them as the notebook does (PER_PART_WORLD)
    t3 = PER_PART_WORLD if p.get("per_part") else "ssamt"
    out = {"table3": Grid(configs, f0, seeds, t3, tuple(headline_methods("06_phrase_labels")), p["headline_seeds"])}
    pm = arm_name("+PM", True)
    if p.get("rule3_arm") and pm in configs:
        c = configs[pm]
        out["rule3"] = Grid({RULE3_ARM: dataclasses.replace(c, model=dataclasses.replace(c.model, rule3="words_hidden"))},
                            f0, seeds, t3)
    if p["longer"]:
        out["longer"] = Grid({f"{n} x{p['longer']:g} epochs": scaled_epochs(base[n], p["longer"])
                              for n in (arm_name("+PM", True), arm_name("+LM", True)) if n in base}, f0, seeds, "ssamt")
    t5 = {arm_name(a, True): base[arm_name(a, True)] for a in p["arms"] if arm_name(a, True) in base}
    if configs is not base and (p["longer"] or any(f < 1.0 for f in p["fractions"])):
        # Table 3 trained to its own recipe: the x2 arms and Table 5's fractions compare against the scale's
        out["base"] = Grid(t5, f0, seeds, "ssamt")
    for f in (f for f in p["fractions"] if f < 1.0):   # each fraction its own grid: with fixed updates its epochs scale by 1 / f
        out[f"table5 {f:g}"] = Grid({n: fixed_updates(c, f) if p["table5_updates"] == "fixed" else c for n, c in t5.items()},
                                    (f0[0] * f,), seeds, "ssamt")
    if p["compare_vse"]:
        out["vse"] = Grid({"VSE++": vse_config(p["scale"], data=data)}, f0, seeds, "vse")
    return out
