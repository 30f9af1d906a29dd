"""The papers' claims as data: ``itmlib/paper_numbers/claims_<paper>.yaml``, one file per paper.

Each claim names the notebook that tests it, the paper's table, our metric and the two
methods compared (as the notebook's run tables name them), what the paper says happens
(``expect``: ``higher`` / ``lower`` / ``same``, or ``at_most`` / ``at_least`` a
``threshold``) and where the paper's own numbers are (``paper:`` cells of a transcribed
table in :mod:`itmlib.paper_numbers`, or a ``text`` where the paper gives none; ``scale: 100``
puts a fraction the paper prints, such as TERAN's NDCG, in our percent)::

    - id: teran_mrsw_beats_mwsr_t2i
      notebook: 08_teran
      paper_table: Table 1
      claim: MrSw beats MwSr at R@1 (image retrieval)
      metric: t2i_r1
      model: TERAN mrsw
      baseline: TERAN mwsr
      expect: higher
      paper: {source: teran_table4, column: t2i_r1, model: {model: MrSw},
              baseline: {source: teran_table1, model: {model: TERAN MwSr}}}

Optional keys: ``table`` (which run table of the notebook, default ``runs``), ``where``
(rows of that table, e.g. ``{fraction: 0.1}``), ``pair_by`` (the column that pairs model and
baseline rows, default ``seed``), ``exact`` (a deterministic measurement:
no seed spread), ``bootstrap: true`` (a statistic of one sample - an AUC over judged pairs - whose table holds
the sample as ``replicate`` 0 and its bootstrap draws as 1..B: judged on the draws' percentile interval), ``note``;
``margin`` and ``margin_why`` (a "same" claim's equivalence margin, in the metric's units, and why that size:
without one a "same" claim can never hold);
``headline: true`` (one of the paper's headline claims: listed first, judged on >= 5 seeds);
``computed_baseline: true`` (the baseline is computed from the test split, e.g. ``chance``: it was never trained,
so it has no member records and needs none).

Every claim has a ``kind``: ``paper`` (the paper states it, with its number: what the course counts as
the paper's results), ``control`` (our test of a mechanism the paper asserts: shuffled margins, random
neighbours, grounding the paper shows only in pictures - listed beside the paper's claims, never counted
among them), ``illustration`` (shown, never judged: e.g. a relevance judged against judgements simulated
from the same scene graphs the metric reads) or ``check`` (a definition verified, true by construction).
:func:`itmlib.claims.verdicts.judge_claims` judges them; the notebooks type no claim and no paper number (a test
checks their code cells).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any, Mapping


__all__ = ["Claim", "KINDS", "load_claims", "claim", "claims_for", "headline_methods", "CLAIM_FILES",
           "REAL_LANGUAGE", "replayed_claims", "replayed_from", "MARGIN_RULES"]

#: paper key -> claims file beside the transcribed tables
CLAIM_FILES = {"ncs_sam": "claims_ncs_sam.yaml", "teran": "claims_teran.yaml", "ssamt": "claims_ssamt.yaml",
               "neighborhoods": "claims_neighborhoods.yaml"}
_EXPECT = ("higher", "lower", "same", "non_inferior", "ratio", "at_most", "at_least")
#: how a margin is fixed (never from the claim's own result): ``paper_gap`` - the gap between the paper's own two
#: numbers that it reads as "no change" (``margin`` must equal it, a test recomputes it); ``share`` of ``baseline``
#: (our baseline arm's mean metric, measured with it) or of ``threshold``; ``precision`` - the paper's printed precision
MARGIN_RULES = ("paper_gap", "share", "precision")
_KEYS = {"id", "notebook", "paper_table", "claim", "table", "where", "pair_by", "metric", "model", "baseline",
         "expect", "threshold", "exact", "bootstrap", "paper", "note",
         "margin", "margin_why", "margin_rule", "threshold_rule", "headline", "kind", "collapses",
         "rising_past_budget", "computed_baseline"}
#: what a claim is (module docstring)
KINDS = ("paper", "control", "illustration", "check")


@dataclass(frozen=True)
class Claim:
    """One claim of a paper, as tested by one notebook (see the module docstring)."""

    id: str
    paper: str
    notebook: str
    paper_table: str
    claim: str
    metric: str
    model: str
    expect: str
    baseline: str = ""
    table: str = "runs"
    where: dict[str, Any] = field(default_factory=dict)
    pair_by: str = "seed"
    threshold: float | None = None
    exact: bool = False
    bootstrap: bool = False
    paper_cells: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    margin: float | None = None
    margin_why: str = ""
    margin_rule: dict[str, Any] = field(default_factory=dict)
    threshold_rule: str = ""
    #: the recipes probed under which an arm of the claim collapses on its dev curve ("lr 1e-3, 1e-4; warm-up 1,
    #: 3, 10"): the claim is then judged, its training cell saying so - a finding about the method, not the recipe
    collapses: str = ""
    #: a probe that trained the claim's baseline past the arms' budget and found it still rising there (the committed
    #: table that shows it): the per-seed gate sees a flat end (a learning-rate cut can flatten it), the probe does
    #: not - the claim is not judged, ``not judged (rising past its budget)``
    rising_past_budget: str = ""
    headline: bool = False
    kind: str = "paper"
    #: the baseline is computed from the test split (``chance``), never trained: it has no member records
    computed_baseline: bool = False

    @property
    def check(self) -> bool:
        """A deterministic check of a definition (``kind: check``), counted apart from every claim."""
        return self.kind == "check"


def _claim(paper: str, raw: dict[str, Any], where: str) -> Claim:
    unknown = set(raw) - _KEYS
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {sorted(unknown)}")
    for k in ("id", "notebook", "paper_table", "kind", "claim", "metric", "model", "expect", "paper"):
        if k not in raw:
            raise ValueError(f"{where}: claim {raw.get('id', '?')!r} lacks {k!r}")
    bad = set(raw["paper"] or {}) - {"source", "column", "model", "baseline", "text", "scale"}
    if not isinstance(raw["paper"], dict) or bad:
        raise ValueError(f"{where}: claim {raw['id']!r}: paper must be a mapping of source/column/model/baseline/"
                         f"text/scale, got {sorted(bad) or raw['paper']!r}")
    if raw["kind"] not in KINDS:
        raise ValueError(f"{where}: claim {raw['id']!r}: kind must be one of {KINDS}, got {raw['kind']!r}")
    if raw["expect"] not in _EXPECT:
        raise ValueError(f"{where}: claim {raw['id']!r}: expect must be one of {_EXPECT}, got {raw['expect']!r}")
    if raw["expect"] in ("at_most", "at_least") and raw.get("threshold") is None:
        raise ValueError(f"{where}: claim {raw['id']!r}: expect {raw['expect']!r} needs a threshold")
    if raw["expect"] in ("higher", "lower", "same", "non_inferior", "ratio") and not raw.get("baseline"):
        raise ValueError(f"{where}: claim {raw['id']!r}: expect {raw['expect']!r} needs a baseline")
    if raw["expect"] == "ratio" and raw.get("threshold_rule") != "half_paper_gain":
        raise ValueError(f"{where}: claim {raw['id']!r}: a ratio claim needs threshold_rule: half_paper_gain")
    rule = dict(raw.get("margin_rule") or {})
    if "margin" in raw or rule:
        if raw["expect"] not in ("same", "non_inferior", "at_most", "at_least") or not raw.get("margin_why"):
            raise ValueError(f"{where}: claim {raw['id']!r}: a margin belongs to a same, non_inferior, at_most or "
                             "at_least claim and needs margin_why")
        if len(rule) == 0 or next(iter(rule)) not in MARGIN_RULES:
            raise ValueError(f"{where}: claim {raw['id']!r}: a margin needs a margin_rule, one of {MARGIN_RULES}")
        if "margin" in raw and not float(raw["margin"]) >= 0:
            raise ValueError(f"{where}: claim {raw['id']!r}: margin must be >= 0, got {raw['margin']!r}")
    elif raw["expect"] == "non_inferior":
        raise ValueError(f"{where}: claim {raw['id']!r}: a non_inferior claim needs a margin (margin_rule, margin_why)")
    if raw.get("computed_baseline") and not raw.get("baseline"):
        raise ValueError(f"{where}: claim {raw['id']!r}: computed_baseline needs a baseline")
    return Claim(id=raw["id"], paper=paper, notebook=raw["notebook"], paper_table=raw["paper_table"],
                 claim=raw["claim"], metric=raw["metric"], model=raw["model"], expect=raw["expect"],
                 baseline=raw.get("baseline", ""), table=raw.get("table", "runs"), where=dict(raw.get("where") or {}),
                 pair_by=raw.get("pair_by", "seed"),
                 threshold=raw.get("threshold"), exact=bool(raw.get("exact", False)),
                 bootstrap=bool(raw.get("bootstrap", False)), paper_cells=dict(raw["paper"]),
                 note=raw.get("note", ""), margin=float(raw["margin"]) if "margin" in raw else None,
                 margin_why=raw.get("margin_why", ""), margin_rule=rule, threshold_rule=raw.get("threshold_rule", ""),
                 headline=bool(raw.get("headline", False)), kind=raw["kind"], collapses=str(raw.get("collapses", "")),
                 rising_past_budget=str(raw.get("rising_past_budget", "")),
                 computed_baseline=bool(raw.get("computed_baseline", False)))


@lru_cache(maxsize=None)
def load_claims(paper: str) -> tuple[Claim, ...]:
    """Every claim of one paper (``ncs_sam``, ``teran``), validated, paper cells checked."""
    import yaml

    if paper not in CLAIM_FILES:
        raise ValueError(f"unknown paper {paper!r}; claims exist for {sorted(CLAIM_FILES)}")
    name = CLAIM_FILES[paper]
    text = resources.files("itmlib.paper_numbers").joinpath(name).read_text(encoding="utf-8")
    doc = yaml.safe_load(text) or []
    if not isinstance(doc, list):
        raise ValueError(f"{name}: expected a list of claims")
    claims = tuple(_claim(paper, raw, name) for raw in doc)
    ids = [c.id for c in claims]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{name}: duplicate claim ids {sorted({i for i in ids if ids.count(i) > 1})}")
    for c in claims:
        from .paper_side import paper_side

        paper_side(c)  # every referenced cell exists
    return claims


def claim(claim_id: str) -> Claim:
    """One claim by its id, from whichever paper's file holds it, or a replayed one (``real_<id>``) as
    :func:`replayed_claims` makes it."""
    for p in CLAIM_FILES:
        for c in load_claims(p):
            if c.id == claim_id:
                return c
    if claim_id != replayed_from(claim_id):
        # a replayed claim as :func:`replayed_claims` judges it (a headline claim there), else the original's flags
        replayed = next((c for c in replayed_claims(own=False) if c.id == claim_id), None)
        return replayed or claim(replayed_from(claim_id))
    raise ValueError(f"no claim with id {claim_id!r}")


def claims_for(notebook: str) -> list[Claim]:
    """The claims one notebook tests, from every paper's file, in file order."""
    out = [c for p in CLAIM_FILES for c in load_claims(p) if c.notebook == notebook]
    if not out:
        raise ValueError(f"no claims name notebook {notebook!r}")
    return out


#: the real-language notebook's replay of the papers' headline claims: its run table -> the claims it re-judges
#: there (each paper's headline claims, and TERAN's grounding); its own claims (``notebook: 09_real_language``) follow
REAL_LANGUAGE = {"sam": ("sam_scarce_rsum_10_warmup", "sam_scarce_rsum_10_warmup_vs_shuffled"),
                 "sam_full": ("sam_full_raises_ncs",),
                 "ssamt": ("ssamt_pm_helps", "ssamt_pm_phrase_score_i2t", "ssamt_pm_phrase_score_t2i"),
                 "neighborhoods": ("nbr_ours_not_on_literal",),
                 "teran": ("teran_mrsw_beats_mwsr_t2i", "teran_mrsw_beats_mwsr_i2t", "teran_beats_tern", "teran_grounds_tern_not")}


def replayed_claims(notebook: str = "09_real_language", tables: Mapping[str, tuple[str, ...]] = REAL_LANGUAGE, *,
                    metrics: Mapping[str, str] | None = None, own: bool = True) -> list[Claim]:
    """Other notebooks' claims judged again by ``notebook`` on another world: each claim of ``tables`` (run table
    -> claim ids) with that run table, ``notebook``'s name and the id ``real_<id>`` (the original id stays
    findable: :func:`replayed_from`), every one a headline claim there; ``metrics`` renames a metric (a k-way accuracy
    whose k is the test split's); the claim's text says which world. Then (``own``) ``notebook``'s own claims from
    the files."""
    import dataclasses

    out = [dataclasses.replace(claim(i), id=f"real_{i}", notebook=notebook, table=t, headline=True,
                               claim=f"{claim(i).claim} (real captions)",
                               metric=(metrics or {}).get(claim(i).metric, claim(i).metric))
           for t, ids in tables.items() for i in ids]
    return out + ([c for p in CLAIM_FILES for c in load_claims(p) if c.notebook == notebook] if own else [])


def replayed_from(claim_id: str) -> str:
    """The original claim's id of a replayed one (``real_<id>`` -> ``<id>``); other ids as they are."""
    return claim_id.removeprefix("real_")


def headline_methods(notebook: str, table: str = "runs") -> list[str]:
    """The methods (model and baseline) that ``notebook``'s headline claims on its run table ``table``
    compare, in file order: the arms that need the >= 5 seeds a headline verdict asks for."""
    out: list[str] = []
    for c in claims_for(notebook):
        if c.headline and c.table == table:
            out += [m for m in (c.model, c.baseline) if m and m not in out]
    return out
