"""Notebook 09's plan: what each paper trains on the real-language world (``coco_scenes``), one grid per step.

The notebook runs these grids and ``tools/member_pool.py`` trains their members: one plan for both (as the
paper modules' ``grids`` for 06-08). Every paper keeps its own recipe function; this module only says which
arms, fractions and seeds notebook 09 asks of each, from its parameters ``p`` (``scale``, ``seed``,
``n_seeds``, ``papers``, ``epochs``, ``full_data_seeds``, ``sam_fraction``, ``candidate_fractions``,
``ssamt_fraction``, ``ssamt_embed_dim``, ``neighborhoods_fraction``, ``teran_fraction``, and this world's own recipes
(:data:`WORLD_RECIPES`): ``teran_warmup_epochs``, ``tern_warmup_epochs`` (TERN's own, chosen on its dev curve),
``patience`` (SAM's and TERAN's early stop) and ``neighborhoods_lr``).
The recipes the papers' own notebooks chose - SAM's scarce budget, SSAMT's phases, the neighbourhood losses'
and TERAN's epochs and patience - are not restated here: :func:`with_paper_recipes` reads them from what
``make tables`` runs notebooks 05-08 with (:data:`PAPER_RECIPES`; a plan may still set one, as the tests do):

* ``"sam baseline"``: VSE++ on every training image (its mean Rsum is what the scarce fraction is measured
  against), ``"sam candidates"``: VSE++ on each candidate fraction (absent when ``sam_fraction`` fixes it),
  ``"sam full"``: VSE++ and VSE++ + SAM on every image (the full-data claims); then, once the baseline's
  records chose the fraction (:func:`scarce_fraction`), :func:`scarce_grid` (VSE++, + SAM, + SAM shuffled at
  that fraction);
* ``"ssamt"``: +LM and +PM with parsed phrases; ``"neighborhoods"``: ANG+NP+SYM and OURS;
  ``"teran"``: TERAN MrSw, MwSr and TERN (global).

Each grid's ``world`` names the evaluation its members need (``"sam"``, ``"ssamt"``, ``"neighborhoods"``,
``"teran"``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Mapping

import pandas as pd

from ..claims.seeds import seed_mean
from ..data.coco_scenes import coco_scenes_source
from ..training.grid import Grid, Member

__all__ = ["grids", "WORLD_RECIPES", "PAPER_RECIPES", "with_paper_recipes", "scarce_fraction", "scarce_grid", "members",
           "world", "followup", "seed0_probes", "warmup_probes", "patience_probe", "SCARCE_ARMS", "TERAN_ARMS",
           "SSAMT_ARMS", "SSAMT_WIDTH_PROBED", "width_probes", "width_probe_table",
           "width_reading", "WARMUPS_PROBED",
           "PATIENCE_WORLDS"]

#: SAM's arms at the scarce fraction, and TERAN's arms
SCARCE_ARMS = ("VSE++", "VSE++ + SAM", "VSE++ + SAM shuffled")
TERAN_ARMS = ("TERAN mrsw", "TERAN mwsr", "TERN (global)")
#: SSAMT's Table 3 arms on this world (with parsed phrases), and the width of the probe that tests why +PM stays
#: below its level: VSE++'s joint space (256), where notebook 06's mask transformer has 128 at medium (its
#: feed-forward layer twice as wide, as at every scale); the notebook's parameter ``ssamt_embed_dim`` trains it
SSAMT_ARMS = ("+LM", "+PM")
SSAMT_WIDTH_PROBED = 256


#: this world's own recipes at each scale. ``patience``: SAM's and TERAN's arms stop after 5 epochs without a better
#: dev score (budgets still 05's and 08's). Chosen on the full-data VSE++ baseline's dev curve alone, before any
#: SAM or TERAN run, on the previous version of this world (:data:`PATIENCE_WORLDS`; :func:`patience_probe`, the
#: notebook's table ``patience_probe``): seed 0 under 05's 30 epochs without a stop peaked at epoch 4 (dev Rsum
#: 379.9 on 500 dev images) and fell to 345.7 by epoch 30, so 26 of its 30 epochs trained past the model a claim
#: reads, and any patience selects the same epoch; 5 rather than 08's 3 because 3 cut TERAN's noisier curves short
#: on v5. On v7's sizes the size probe's 58,000-image run under it peaked at epoch 7 and stopped at 12
#: (``size_probe``). The warm-ups: chosen by the probes on TERAN MrSw's and TERN's
#: dev curves (seed 0; the notebook's table ``recipe_probe``, :data:`WARMUPS_PROBED`). TERN: this world's rule's
#: choice; TERAN MrSw: this world's rule's choice too (the test of the recipe reads both against those records)
WORLD_RECIPES = {"medium": {"teran_warmup_epochs": 3, "tern_warmup_epochs": 3, "patience": 5}}
#: the warm-ups TERAN MrSw and TERN are each probed over (seed 0) before the rule chooses one: 3, 6 and the whole
#: budget (the hinge summed over every negative throughout; 08's at most 20 epochs)
WARMUPS_PROBED = (3, 6, 20)
#: the world whose VSE++ dev curve chose :data:`WORLD_RECIPES`'s ``patience`` at a scale (its ``ITMDataset.source``):
#: v6, 29,000 training images and 500 dev images; v7 is v6's scenes and perception on the size probe's sizes
PATIENCE_WORLDS = {"medium": coco_scenes_source(0, scale="medium", version=6)}

#: the recipe knobs of this notebook's grids that the papers' own notebooks chose (each on its baseline's dev curve):
#: knob -> (notebook, its parameter); read from what ``make tables`` runs that notebook with at the same scale
PAPER_RECIPES = {"sam_scarce_epochs": ("05_sam_reduced_data", "epochs"),
                 "ssamt_epochs": ("06_phrase_labels", "table3_epochs"),
                 "ssamt_intra_epochs": ("06_phrase_labels", "intra_epochs"),
                 "ssamt_select_after": ("06_phrase_labels", "select_after"),
                 "neighborhoods_epochs": ("07_semantic_neighborhoods", "news_epochs"),
                 "neighborhoods_patience": ("07_semantic_neighborhoods", "news_patience"),
                 "teran_epochs": ("08_teran", "epochs"),
                 "teran_patience": ("08_teran", "patience")}


def with_paper_recipes(p: Mapping[str, Any]) -> dict[str, Any]:
    """``p`` with each :data:`PAPER_RECIPES` knob it does not set taken from the paper's own notebook at ``p["scale"]``
    (:func:`itmlib.course.params.run_parameters`): SAM's scarce budget as 05's, SSAMT's phases as 06's Table 3 arms,
    the neighbourhood losses' epochs and patience as 07's news arms, TERAN's as 08's headline arms."""
    from .params import run_parameters

    out, ran = dict(p), {}
    for knob, (notebook, name) in PAPER_RECIPES.items():
        if knob not in out:
            if notebook not in ran:   # one validated read per notebook, not one per knob
                ran[notebook] = run_parameters(notebook, p["scale"])
            out[knob] = ran[notebook][name]
    return out


def _seeds(p: Mapping[str, Any], n: int) -> range:
    return range(p["seed"], p["seed"] + n)


def _sam(p: Mapping[str, Any], data: str, arms: list[str], *, scarce: bool = False) -> dict:
    """SAM's arms under notebook 05's recipe, stopping early after ``patience`` epochs where set (05 does not);
    ``scarce`` (the candidate fractions and the scarce arms): for ``sam_scarce_epochs`` when set (05 trains its
    scarce members 60 epochs, its full-data ones 30)."""
    from ..papers import ncs_sam

    p = with_paper_recipes(p)
    return ncs_sam.recipe_configs(p["scale"], arms, data=data, patience=p.get("patience", 0),
                                  epochs=(scarce and p.get("sam_scarce_epochs")) or p["epochs"] or None)


def grids(p: Mapping[str, Any], data: str) -> dict[str, Grid]:
    """Notebook 09's grids on the training data ``data`` (module docstring), in the order they run."""
    from ..papers import neighborhoods, ssamt, teran

    p = with_paper_recipes(p)
    papers, epochs, out = p["papers"], p["epochs"] or None, {}
    if "sam" in papers:
        vse = _sam(p, data, ["VSE++"])
        out["sam baseline"] = Grid(vse, (1.0,), _seeds(p, max(p["full_data_seeds"], 1)), "sam")
        if not p["sam_fraction"]:
            out["sam candidates"] = Grid(_sam(p, data, ["VSE++"], scarce=True), tuple(p["candidate_fractions"]),
                                         _seeds(p, 1), "sam")
        if p["full_data_seeds"]:
            out["sam full"] = Grid(_sam(p, data, ["VSE++", "VSE++ + SAM"]), (1.0,), _seeds(p, p["full_data_seeds"]), "sam")
    if "ssamt" in papers:
        phases = {k: p[f"ssamt_{k}"] for k in ("intra_epochs", "select_after") if p.get(f"ssamt_{k}")}
        width = {"embed_dim": p["ssamt_embed_dim"], "ff_dim": 2 * p["ssamt_embed_dim"]} if p.get("ssamt_embed_dim") else {}
        cfgs = ssamt.table3_configs(p["scale"], data=data, arms=SSAMT_ARMS, phrase_settings=[True],
                                    epochs=p.get("ssamt_epochs") or epochs, phrase_backend="spacy", **phases, **width)
        out["ssamt"] = Grid(cfgs, (p["ssamt_fraction"],), _seeds(p, p["n_seeds"]), "ssamt")
    if "neighborhoods" in papers:
        cfgs = neighborhoods.arm_configs(p["scale"], ["ANG+NP+SYM", "OURS"], data=data,
                                         epochs=p.get("neighborhoods_epochs") or epochs, lr=p.get("neighborhoods_lr") or None,
                                         patience=p.get("neighborhoods_patience", 0))
        out["neighborhoods"] = Grid(cfgs, (p["neighborhoods_fraction"],), _seeds(p, p["n_seeds"]), "neighborhoods")
    if "teran" in papers:
        main = teran.teran_config(p["scale"], epochs=p.get("teran_epochs") or epochs, data=data,
                                  patience=p.get("patience") or p.get("teran_patience", 0),
                                  warmup_epochs=p.get("teran_warmup_epochs", 1))
        cfgs = {k: v for k, v in teran.comparison_configs(main, p["scale"], True).items() if k in TERAN_ARMS}
        if p.get("tern_warmup_epochs"):   # TERN's recipe, probed on its own dev curve (it is a claim's baseline)
            cfgs["TERN (global)"] = replace(cfgs["TERN (global)"], warmup_epochs=p["tern_warmup_epochs"])
        out["teran"] = Grid(cfgs, (p["teran_fraction"],), _seeds(p, p["n_seeds"]), "teran")
    return out


def scarce_fraction(p: Mapping[str, Any], plan: Mapping[str, Grid],
                    run: Callable[[Grid], pd.DataFrame]) -> pd.DataFrame | None:
    """SAM's scarce fraction on this world, chosen as notebook 05 chooses it (on the baseline alone, before any
    SAM run): ``sam_fraction`` when set, otherwise the candidate fraction where VSE++ keeps the share of its
    full-data Rsum the paper's baseline keeps at F-10% (:func:`~itmlib.papers.ncs_sam.choose_fractions`).
    ``run(grid)`` trains the grid (or reads its member records) and returns its runs. The chosen fraction's
    table (setting, paper share, fraction, ...), or None while the baseline has no records yet."""
    from ..papers import ncs_sam

    target = {"F-10%": ncs_sam.paper_scarcity()["F-10%"]}
    if p["sam_fraction"]:
        return ncs_sam.label_fractions([p["sam_fraction"]], target)
    base = run(plan["sam baseline"])
    cand = run(plan["sam candidates"]) if len(base) else base.iloc[0:0]
    if not (len(base) and len(cand)):
        return None
    return ncs_sam.choose_fractions(cand, seed_mean(base.rsum), target)


def scarce_grid(p: Mapping[str, Any], data: str, fraction: float) -> Grid:
    """SAM's scarce arms at ``fraction``, the one the baseline's records chose (or ``sam_fraction``)."""
    return Grid(_sam(p, data, list(SCARCE_ARMS), scarce=True), (float(fraction),), _seeds(p, p["n_seeds"]), "sam")


def members(p: Mapping[str, Any]) -> list[Member]:
    """Every member of notebook 09's plan (:func:`grids`) once, in its order, but SAM's scarce arms, whose
    fraction the baseline's records choose first (:func:`followup`)."""
    from ..training.world import plan_members, training_source

    return plan_members(grids(p, training_source(p)))


def world(kind: str, p: Mapping[str, Any], device: str) -> Any:
    """The world of the members whose grid names ``kind``: the splits and gold test relevance, with each paper's
    evaluator (``"sam"``: also mAP@R and R-Precision on CxC's and ECCV Caption's positives; ``"teran"``: NDCG with
    ROUGE-L and gold-graph relevance, the dev NDCG the epoch selection reads)."""
    from ..papers import ncs_sam, neighborhoods, ssamt, teran
    from ..relevance import eval_relevance, eval_rouge
    from ..training.world import World, load_splits

    train, dev, test = load_splits(p["dataset"], p["scale"], p["seed"])
    rel = eval_relevance(test)
    if kind == "sam":
        return World(train, dev, test, rel, ncs_sam.positives_evaluator(test, rel, device=device))
    if kind == "ssamt":
        return World(train, dev, test, rel, ssamt.ssamt_evaluator(test, rel, seed=p["seed"], device=device, dev_ds=dev))
    if kind == "neighborhoods":
        return World(train, dev, test, None, neighborhoods.neighborhoods_evaluator(test, seed=p["seed"], device=device))
    fn = teran.teran_evaluator({"rouge": eval_rouge(test), "sg": rel}, device=device)
    return World(train, dev, test, None, fn, {"dev_relevance": teran.teran_dev_relevance(dev)})


def followup(p: Mapping[str, Any], context: Any) -> tuple[Callable[[Member], bool], Callable[[], list[Member]]] | None:
    """For a pool: (which members must finish first, a function giving the members that wait on them) - SAM's
    scarce arms at the fraction :func:`scarce_fraction` chooses from the baseline's records in ``context``'s record
    folder (as the notebook's SAM cell does); None when notebook 09 runs no SAM."""
    if "sam" not in p["papers"]:
        return None
    stop = p["seed"] + max(p["full_data_seeds"], 1)

    def first(m: Member) -> bool:
        return m.world == "sam" and m.name == "VSE++" and (m.fraction < 1.0 or m.seed < stop)

    def then() -> list[Member]:
        w = world("sam", p, "cpu")
        chosen = scarce_fraction(p, grids(p, w.train.source), lambda g: w.run(g, context)[0])
        f10 = float(chosen.fraction.iloc[0])
        print(f"[pool] SAM's scarce fraction: {f10:g}", flush=True)
        return scarce_grid(p, w.train.source, f10).members()
    return first, then


def seed0_probes(folder: Any, members: tuple[str, ...], knob: str, data: str | None = None,
                 fraction: float | None = None) -> list[dict]:
    """A recipe probe's evidence in notebook 09's results ``folder``: seed 0 of each of ``members``, one record per
    value of ``knob`` (a config key or its model config's), from ``probes/`` and then the retrain's own ``members/`` (the chosen recipe's
    seed 0 is in both); with ``data``, only the records trained on that world (a config's ``data`` starts with it),
    with ``fraction``, only those trained on that share of the training images."""
    from pathlib import Path

    from ..training.convergence import read_records
    from ..training.probes import knob_value

    out: dict[tuple, dict] = {}
    for r in read_records(Path(folder) / "probes") + read_records(Path(folder) / "members"):
        if r["member"] in members and r["seed"] == 0 and fraction in (None, float(r["fraction"])) and \
                (data is None or r["config"]["data"].startswith(data + "|")):
            out.setdefault((r["member"], knob_value(r["config"], knob)), r)
    return list(out.values())


def warmup_probes(folder: Any, data: str | None = None) -> list[dict]:
    """The warm-up probes' evidence (:func:`seed0_probes`): TERAN MrSw and TERN, once per warm-up."""
    return seed0_probes(folder, ("TERAN mrsw", "TERN (global)"), "warmup_epochs", data)


def patience_probe(folder: Any, data: str | None = None) -> list[dict]:
    """The evidence of :data:`WORLD_RECIPES`'s ``patience`` (:func:`seed0_probes`): VSE++ on every training image,
    seed 0, under 05's budget without a stop and under the patience the retrain uses (on the world ``data``, at
    medium :data:`PATIENCE_WORLDS`'s)."""
    return seed0_probes(folder, ("VSE++",), "patience", data, fraction=1.0)


def width_probes(folder: Any, data: str | None = None, fraction: float | None = None) -> list[dict]:
    """The width probe's evidence (:func:`seed0_probes`): SSAMT's +LM and +PM, seed 0, once per ``embed_dim`` - the
    retrain's width and :data:`SSAMT_WIDTH_PROBED` (VSE++'s)."""
    from ..papers.ssamt import arm_name

    return seed0_probes(folder, tuple(arm_name(a, True) for a in SSAMT_ARMS), "embed_dim", data, fraction)


def width_probe_table(folder: Any, needed: float, data: str | None = None, fraction: float | None = None) -> pd.DataFrame:
    """The width probe (:func:`width_probes`) as its table: one row per arm and ``embed_dim`` - its dev curve
    (:func:`~itmlib.training.probes.probe_curves`: epochs trained, best epoch, dev at the best and the last,
    state), its ``test rsum``, the ``level`` SSAMT's claims need (``needed``, :func:`~itmlib.course.real_levels.levels`)
    and whether it ``reaches`` it. Seed 0 alone: a probe's evidence, no verdict. Empty without records."""
    from ..training.probes import knob_value, probe_curves

    records = width_probes(folder, data, fraction)
    _, table = probe_curves(records, ["embed_dim"])
    if not len(table):
        return table
    test = {(r["member"], knob_value(r["config"], "embed_dim")): float(r["rows"][0]["rsum"]) for r in records}
    table["test rsum"] = [test[k] for k in zip(table.member, table.embed_dim)]
    return table.drop(columns=["arm", "seed"]).assign(level=needed, reaches=table["test rsum"] >= needed)


#: the member pool's command that trains the width probe: its records, written under ``runs/probes/09_real_language/
#: members/``, are committed to ``results/09_real_language/probes/`` (never ``members/``, whose records the claims read)
WIDTH_PROBE_COMMAND = (f"tools/member_pool.py 09_real_language --arm '+LM (w/ phrases)' '+PM (w/ phrases)' --seeds 0 "
                       f"-p ssamt_embed_dim {SSAMT_WIDTH_PROBED} --results-dir runs/probes")


def width_reading(table: pd.DataFrame, shown: Callable[[float], str]) -> str:
    """What the width probe's table (:func:`width_probe_table`) says, a line per arm: each width's test Rsum against
    the level, or that :data:`SSAMT_WIDTH_PROBED` has not run (with the command that trains it). ``shown``
    formats a number as the table holds it."""
    if not len(table):
        return f"no SSAMT seed 0 records on this world yet; the width probe trains with {WIDTH_PROBE_COMMAND}"
    lines, waiting = [], []
    for member, t in table.groupby("member", sort=False):
        said = [f"width {int(r.embed_dim)}: test Rsum {shown(r['test rsum'])}, "
                f"{'reaches' if r.reaches else 'below'} its level {shown(r.level)} (best epoch {r['best epoch']} "
                f"of {r['epochs trained']}, {r.state})" for _, r in t.iterrows()]
        if SSAMT_WIDTH_PROBED not in set(t.embed_dim):
            said.append(f"width {SSAMT_WIDTH_PROBED}: not run yet")
            waiting.append(member)
        lines.append(f"{member}, seed 0: " + "; ".join(said))
    if waiting:
        lines.append(f"The probe trains {' and '.join(waiting)} at width {SSAMT_WIDTH_PROBED} with {WIDTH_PROBE_COMMAND}")
    return "\n".join(lines)
