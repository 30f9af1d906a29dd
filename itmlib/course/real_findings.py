"""Notebook 09's "What we found", paper by paper: the paper's number, the synthetic world's verdict, the
real-language world's, and what the difference between the two worlds teaches - drawn from the committed tables.

The two worlds differ in their language (a grammar of a few hundred words against real COCO captions, in other
annotators' words than the image's) and in their regions (a noisy detector's among many distractors against the
objects other annotators mention, idealised, and about one distractor), so where a claim's verdicts agree the
claim does not rest on the grammar, and where one world says it holds and the other that it does not, it rests on
one of those differences; one world deciding what the other leaves inconclusive is no conflict (one interval
settles what the other does not). *Why* it does is not
measured here: each paper's reading of a difference is worded as a hypothesis beside the experiment that would
test it (:data:`PAPERS`). A paper none of whose claims is judged here teaches nothing yet, and says why (no
records, or its model below its level: :mod:`itmlib.course.real_levels`). Where the paper's model stays below
the lexical floor, the paragraph says so: word overlap alone retrieves better there than the model, too easy a
world to show its idea.
"""

from __future__ import annotations

import pandas as pd

from .summary import verdict_kind

__all__ = ["PAPERS", "paper_findings"]

#: a claim's paper (:attr:`itmlib.claims.registry.Claim.paper`) -> (its title, the hypothesis a verdict that
#: differs between the worlds suggests, the experiment that would test it)
PAPERS = {
    "ncs_sam": ("Is an image worth five sentences? (the Semantic Adaptive Margin)",
                "SAM's margins are CIDEr-D between captions, and real captions of one picture share fewer n-grams than "
                "the grammar's (synonyms, paraphrase, other things mentioned), so the margins carry less of what the "
                "images share",
                "SAM with margins from the captions' canonical categories (the gold relevance) instead of CIDEr-D, on "
                "this world"),
    "ssamt": ("SSAMT (phrase matching with scene-graph phrase labels)",
              "the parser's phrases on real captions are noisier than the grammar's, which its gold graphs spell out",
              "notebook 06's synthetic world with parsed phrase labels (`phrase_backend \"spacy\"`) instead of gold "
              "ones: the parser without the language"),
    "neighborhoods": ("Preserving semantic neighborhoods",
                      "Doc2Vec neighbours over real captions group paraphrases the grammar never produces, which "
                      "changes what the within-modality losses pull together",
                      "the same arms with neighbours from the MiniLM sentence encoder instead of Doc2Vec"),
    "teran": ("TERAN (region-word alignment)",
              "MwSr lets each region pick its best word, so it ignores caption words with no region to align to (a real "
              "caption names objects two other annotators' scene may lack) and, where an image holds only its "
              "mentioned objects and about one distractor (the world table), asks whether a caption names every one "
              "of them: what tells an image's own captions from the rest in sentence retrieval. The paper's 36 most "
              "confident detections (its implementation details) and the synthetic world's regions, mostly distractors (08's "
              "grounding table, `objects_share`), leave that question noisy, and MrSw wins both ways there",
              "TERAN's claims on the queries whose object words all find their category in the image, and MrSw and "
              "MwSr retrained on this world with more distractor regions per image (the world's `distractors` knob), "
              "five seeds each, where MwSr's lead at sentence retrieval should shrink as distractors are added "
              "(~40 h of worker time a setting on the 2-core CPU at the records' 2-5 h a member; minutes a member on "
              "a GPU)"),
}


#: what a verdict the two worlds share says about the language
_AGREE = {"holds": "what holds on the grammar's words holds on real captions, so it does not rest on the toy language",
          "does not hold": "what fails on the grammar fails on real captions too, so the toy language is not why it fails",
          "inconclusive": "neither world separates the arms at these seeds"}


#: the verdicts that decide a claim; two of them that differ conflict, one beside "inconclusive" does not
_DECISIVE = ("holds", "does not hold")


def _differences(here: pd.Series, there: pd.Series, hypothesis: str, experiment: str) -> str:
    """What the verdicts both worlds gave, where some differ, teach: a verdict that holds in one world and does not
    hold in the other says the claim rests on what differs between them (the paper's ``hypothesis`` and the
    ``experiment`` that would test it); one world deciding what the other leaves inconclusive says only that one
    interval settles what the other does not."""
    k = len(here)
    conflict = here.isin(_DECISIVE) & there.isin(_DECISIVE) & (here != there)
    unsettled = (here != there) & ~conflict

    def which(n: int, verb: str) -> str:
        if k == 1:
            return f"The verdict both worlds gave {verb}s"
        return f"Each of the {k} verdicts both worlds gave {verb}s" if n == k else \
            f"{n} of the {k} verdicts both worlds gave {verb}{'s' if n == 1 else ''}"

    out = []
    if conflict.any():
        out.append(f"{which(int(conflict.sum()), 'differ')} (holds in one world, does not hold in the other): what those "
                   f"claims say rests on what differs between the worlds, their language or their regions. A hypothesis, "
                   f"not measured: {hypothesis}. The experiment that "
                   f"would test it: {experiment}.")
    if unsettled.any():
        pairs = "; ".join(sorted({f"{h} here, {t} in the synthetic world" for h, t in zip(here[unsettled], there[unsettled])}))
        out.append(f"{which(int(unsettled.sum()), 'differ')} only in resolution ({pairs}): one world's interval "
                   f"settles what the other's leaves open. That is no conflict, so nothing here says the claim rests on "
                   f"the language.")
    return " ".join(out)


def _why_not(verdicts: pd.Series) -> str:
    """Why a paper's claims are not judged here, from their verdicts (``not run (...)``, ``not judged (...)``)."""
    text = [str(v) for v in verdicts]
    below = next((v for v in text if "below its level" in v), None)
    if below:
        return "its model has not learned this world: " + below.split("below its level: ", 1)[1].rstrip(")")
    if all(v.startswith("not run") for v in text):
        return "not every arm it compares has records on this world yet"
    return "; ".join(sorted({v.split(" (", 1)[1].rstrip(")") if " (" in v else v for v in text}))


def _below_floor(models: set[str], floor: pd.DataFrame | None) -> str:
    """A sentence when the paper's model, trained on every training image (the floor's own reading), stays below
    the higher floor (``rsum - floor`` is read against it)."""
    if floor is None or "rsum - floor" not in floor.columns:
        return ""
    rows = floor[floor.model.isin(models) & (floor.fraction == 1.0)]
    if not len(rows) or float(rows["rsum - floor"].iloc[0]) >= 0:
        return ""
    r = rows.iloc[0]
    base = float(r.rsum) - float(r["rsum - floor"])
    return (f" Its model ({r.model}, test Rsum {float(r.rsum):.1f}) stays below the higher floor ({base:.1f}): a "
            "model that has not learned what word overlap retrieves cannot show what the idea adds.")


def paper_findings(claims: pd.DataFrame, worlds: pd.DataFrame, floor: pd.DataFrame | None = None) -> str:
    """The per-paper findings as Markdown. ``claims``: notebook 09's claims table (``id``, ``claim``,
    ``verdict``); ``worlds``: its :func:`itmlib.course.findings.beside_synthetic` table (``claim``, ``paper (model
    vs baseline)``, ``synthetic world verdict``, ``real-language verdict``); ``floor``: its ``lexical_floor``
    table, the floor's row first (read first, :func:`itmlib.course.real_levels.floor_reading`). Only the paper's
    own claims (kind ``paper``) decide a paper's lesson; our controls are listed beside them."""
    from ..claims.registry import claim

    from .real_levels import floor_reading

    side = worlds.set_index("claim")
    out = [f"**The world.** {floor_reading(floor)}"] if floor is not None else []
    for key, (title, hypothesis, experiment) in PAPERS.items():
        mine = [(r, c) for r, c in ((r, claim(r["id"])) for r in claims.to_dict("records")) if c.paper == key]
        if not mine:
            continue
        lines = [f"#### {title}"]
        for r, c in mine:
            s = side.loc[r["claim"]]
            paper = s["paper (model vs baseline)"]
            paper = f"our {c.kind}, not in the paper" if c.kind != "paper" else f"paper {paper}"
            lines.append(f"- {r['claim']}: {paper}; synthetic world: "
                         f"{s['synthetic world verdict']}; here: {s['real-language verdict']}.")
        own = [(r, c) for r, c in mine if c.kind == "paper"]
        here = pd.Series([verdict_kind(r["verdict"]) for r, _ in own], dtype=object)
        there = pd.Series([verdict_kind(side.loc[r["claim"], "synthetic world verdict"]) for r, _ in own], dtype=object)
        judged = here != "not judged"
        both = judged & (there != "not judged")          # the claims both worlds judged: the ones to compare
        world = next((str(r["verdict"]) for r, _ in own if str(r["verdict"]).startswith("not judged (world ")), None)
        if world:    # the world gate: no run of this paper's arms could be judged here
            lesson = f"Nothing: this world cannot test its claims ({world.split(' (', 1)[1][:-1]})."
        elif not judged.any():
            lesson = f"Nothing yet: {_why_not(pd.Series([r['verdict'] for r, _ in own]))}."
        elif not both.any():
            lesson = "The synthetic world did not judge these claims; this world gives their first verdict."
        elif (here[both] == there[both]).all():
            agreed = "; ".join(f"{k} in both: {_AGREE[k]}" for k in _AGREE if (here[both] == k).any())
            k, total = int(both.sum()), len(own)
            which = "its one claim" if total == 1 else f"all {total} of its claims" if k == total else f"{k} of its {total} claims"
            lesson = f"Both worlds judged {which}, and their verdicts agree ({agreed})."
        else:
            lesson = _differences(here[both], there[both], hypothesis, experiment)
        lesson += _below_floor({c.model for _, c in own}, floor)
        out.append("\n".join(lines) + f"\n\n*What the difference teaches.* {lesson}")
    return "\n\n".join(out)
