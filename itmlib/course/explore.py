"""Explore a grid's ablations from its committed member records, without training anything.

Every finished grid member leaves a record in ``results/<notebook>/members/`` (:func:`itmlib.training.grid.run_grid`):
its config as trained, its per-epoch dev history and its test rows. This module reads them as a table a
reader can slice by the knobs the grid varies:

- :func:`ablation_table` - the members whose config matches the knobs given (``tau=3.0, sampling="soft"``),
  one row per member and seed, with the test metrics, ``seed``, ``best_epoch`` and ``seconds``;
- :func:`arm_training` - whether each arm of those members trained (:mod:`itmlib.training.convergence`: seeds, epochs,
  best epochs, the dev metric's gain over the last two epochs, ``converged`` / ``still rising`` /
  ``selected at epoch 1``);
- :func:`compare_settings` - the paired seed differences of any two settings, judged by the course's one rule
  (:func:`itmlib.claims.verdicts.claim_verdict`: the 95% interval of the mean paired difference);
- :func:`ablations` - an ipywidgets view: one dropdown per knob, a metric selector, the matching members,
  their dev curves and the comparison with a second setting. Under papermill or nbconvert (no widget
  front end) it shows the plain tables instead, so no widget state lands in an executed copy;
- :func:`train_setting` - trains one chosen setting at ``smoke`` scale in this process and adds it to the
  view as "this session, smoke", kept apart from the committed records.

Knob names are the config fields (``tau``, ``sampling``, ``keep_triplet``, ``sam_mode``, ``phi_control``,
``loss``, the model's fields such as ``pooling``) plus ``method`` and ``fraction``; only those that vary
across a notebook's records are knobs.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from ..paths import repo_root

__all__ = ["load_members", "knobs", "ablation_table", "arm_training", "compare_settings", "ablations", "train_setting", "SESSION"]

#: members trained in this session by :func:`train_setting` (smoke scale), per notebook
SESSION: dict[str, list[dict[str, Any]]] = {}
_NOT_KNOBS = {"seed", "data", "record", "evaluation", "written", "seconds", "member", "best_epoch", "train_images",
              "region_dim", "vocab_size"}


def _flat_config(cfg: dict[str, Any]) -> dict[str, Any]:
    """A stored config flattened: the training fields (defaults filled in for fields left out of the hash)
    and the model's fields (``model_kind``; a model field named like a training field gets ``model_``)."""
    from ..training.run_config import _LATER_FIELDS, _LATER_MODEL_FIELDS

    out = {**_LATER_FIELDS, **{k: v for k, v in cfg.items() if k != "model"}}
    model = {**_LATER_MODEL_FIELDS, **cfg.get("model", {})}
    for k, v in model.items():
        key = "model_kind" if k == "kind" else (f"model_{k}" if k in out else k)
        out[key] = v
    return out


@lru_cache(maxsize=None)
def _records(folder: str) -> tuple[tuple[dict[str, Any], ...], tuple[pd.DataFrame, ...]]:
    rows, hists = [], []
    for path in sorted(repo_root().joinpath(folder).glob("*.json")):
        rec = json.loads(path.read_text(encoding="utf-8"))
        flat = _flat_config(rec["config"])
        for r in rec["rows"]:
            rows.append({**flat, **r, "method": r.get("method", rec["member"]), "seconds": rec.get("seconds"),
                         "device": rec.get("device", ""), "record": path.name})
        h = pd.DataFrame(rec["history"])
        hists.append(h.assign(method=rec["member"], seed=rec["seed"], fraction=rec["fraction"], record=path.name))
    return tuple(rows), tuple(hists)


def load_members(notebook: str, results_dir: str = "results") -> pd.DataFrame:
    """Every member record of ``<results_dir>/<notebook>/members/`` as one row per (member, test row), plus the
    members :func:`train_setting` trained in this session (``source`` says which)."""
    folder = f"{results_dir}/{notebook}/members"
    if not repo_root().joinpath(folder).is_dir():
        raise ValueError(f"no member records for {notebook!r} (no folder {folder}); notebooks with records: "
                         f"{sorted(p.parent.parent.name for p in repo_root().joinpath(results_dir).glob('*/members/'))}")
    rows, _ = _records(folder)
    df = pd.DataFrame(list(rows)).assign(source="committed, " + _scale(notebook, results_dir))
    if SESSION.get(notebook):
        df = pd.concat([df, pd.DataFrame(SESSION[notebook]).assign(source="this session, smoke")], ignore_index=True)
    return df


def _scale(notebook: str, results_dir: str) -> str:
    from .results import read_table

    for t in ("claims", "table1_4_teran", "tables4_5_ablation", "table2_reduced_data"):
        path = repo_root() / results_dir / notebook / f"{t}.csv"
        if path.is_file():
            return read_table(path)[0].get("scale", "?")
    return "?"


def _histories(notebook: str, results_dir: str = "results") -> pd.DataFrame:
    _, hists = _records(f"{results_dir}/{notebook}/members")
    return pd.concat(hists, ignore_index=True) if hists else pd.DataFrame()


def knobs(notebook: str, results_dir: str = "results") -> dict[str, list[Any]]:
    """The knobs a notebook's grid varies and the values its records hold (sorted)."""
    df = load_members(notebook, results_dir)
    df = df[df.source.str.startswith("committed")]
    config = _config_fields(f"{results_dir}/{notebook}/members")   # a knob is a config field (or the method)
    out = {}
    for c in df.columns:
        if c in _NOT_KNOBS or (c not in config and c not in ("method", "fraction")):
            continue
        vals = df[c].dropna().map(lambda v: json.dumps(v) if isinstance(v, (list, dict)) else v).unique()
        if len(vals) > 1 or c == "method":
            out[c] = sorted(vals.tolist(), key=lambda v: (str(type(v)), v))
    return out


@lru_cache(maxsize=None)
def _config_fields(folder: str) -> frozenset[str]:
    """Every flattened config field of the records in ``folder`` (what a member was trained with)."""
    out: set[str] = set()
    for path in repo_root().joinpath(folder).glob("*.json"):
        out |= set(_flat_config(json.loads(path.read_text(encoding="utf-8"))["config"]))
    return frozenset(out)


def _metric_columns(df: pd.DataFrame) -> list[str]:
    from ..metrics import METRIC_COLUMNS

    extra = [c for c in df.columns if c.startswith(("acc_", "grounding", "t2i_ndcg", "i2t_ndcg", "i2t_acc", "t2i_acc"))]
    return [c for c in METRIC_COLUMNS if c in df.columns] + [c for c in extra if c not in METRIC_COLUMNS]


def _match(df: pd.DataFrame, notebook: str, given: dict[str, Any], results_dir: str) -> pd.DataFrame:
    known = knobs(notebook, results_dir)
    for k, v in given.items():
        if k not in known:
            raise ValueError(f"{notebook}: no knob {k!r}; its grid varies {sorted(known)}")
        col = df[k]
        if isinstance(v, float) or (isinstance(v, int) and not isinstance(v, bool)):
            hit = pd.to_numeric(col, errors="coerce").sub(float(v)).abs().lt(1e-9)
        else:
            hit = col.astype(object).eq(v)
        if not hit.any():
            raise ValueError(f"{notebook}: no member has {k}={v!r}; its records hold {k} in {known[k]}")
        df = df[hit]
    if df.empty:
        raise ValueError(f"{notebook}: no member matches all of {given} together")
    return df


def ablation_table(notebook: str, *, results_dir: str = "results", **knob_values: Any) -> pd.DataFrame:
    """The members of ``notebook`` whose config matches ``knob_values``: one row per member and seed with the
    varying knobs, ``seed``, the test metrics, ``best_epoch`` and ``seconds``. An unknown knob or a value no
    member has raises ``ValueError`` naming what exists."""
    df = load_members(notebook, results_dir)
    df = _match(df, notebook, knob_values, results_dir)
    cols = list(knobs(notebook, results_dir)) + ["seed"] + _metric_columns(df) + ["best_epoch", "seconds", "source", "record"]
    return df[[c for c in dict.fromkeys(cols) if c in df.columns]].sort_values(["method", "seed"]).reset_index(drop=True)


def arm_training(notebook: str, records: Any = None, *, results_dir: str = "results") -> pd.DataFrame:
    """:func:`itmlib.training.convergence.arm_table` of the committed member records of ``notebook`` (only the record
    files named in ``records``, e.g. an :func:`ablation_table`'s ``record`` column, where given): one row per
    arm with its seeds, budget, epochs, best epochs, the dev gain over the last two epochs and its state."""
    from ..training.convergence import arm_table

    folder = repo_root() / results_dir / notebook / "members"
    names = None if records is None else set(records)
    recs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))
            if names is None or p.name in names]
    from ..training.convergence import RISING_PAST

    table = arm_table([r for r in recs if "history" in r])
    past = _rising_past_budget(notebook, results_dir)
    return table.assign(state=[RISING_PAST if a in past else s for a, s in zip(table.arm, table.state)]) if len(table) else table


def _rising_past_budget(notebook: str, results_dir: str) -> set[str]:
    """The arms the notebook's committed claims table reads as ``rising past its budget`` (a longer probe showed
    the baseline still rising: :func:`itmlib.claims.judge.judge_claims`), so the explorer and the claims agree."""
    from ..training.convergence import RISING_PAST
    from .results import read_table

    path = repo_root() / results_dir / notebook / "claims.csv"
    if not path.is_file():
        return set()
    claims = read_table(path)[1]
    if "training" not in claims.columns:
        return set()
    hit = claims[claims.training.fillna("").str.startswith(RISING_PAST)]
    return {a for arms in hit.baseline_arms.dropna() for a in str(arms).split(";") if a}


def compare_settings(notebook: str, base: dict[str, Any], new: dict[str, Any], metric: str = "rsum", *,
                     expect: str = "higher", results_dir: str = "results") -> dict[str, Any]:
    """``new`` against ``base`` on ``metric``, paired by seed and judged by :func:`itmlib.claims.verdicts.claim_verdict`
    (the 95% interval of the mean paired difference). Each side must pick one member per seed."""
    from ..claims.verdicts import claim_verdict

    sides = []
    for name, sel in (("base", base), ("new", new)):
        t = ablation_table(notebook, results_dir=results_dir, **sel)
        t = t[t.source.str.startswith("committed")]
        if metric not in t.columns:
            raise ValueError(f"{notebook}: no metric {metric!r}; its records hold {_metric_columns(t)}")
        if not t.seed.is_unique:
            vary = [k for k in knobs(notebook, results_dir) if t[k].astype(str).nunique() > 1]
            raise ValueError(f"{name} {sel} matches several members per seed: fix {vary} too")
        sides.append(t[["seed", metric]].assign(method=name))
    runs = pd.concat(sides, ignore_index=True)
    row = claim_verdict(runs, "base", "new", metric, expect, f"{new} vs {base}", "-")
    if row is None:
        raise ValueError("no seed has both settings")
    return row


# -- the widget ------------------------------------------------------------------------------------------
def _in_widget_frontend() -> bool:
    """True where a person sees the widget: a Jupyter front end (:func:`itmlib.console.interactive`); False in a
    plain interpreter and in headless runs (papermill, ``make tables``, the tests), which show its plain table."""
    from ..console import interactive

    return interactive()


def _curves(ax: Any, notebook: str, rows: pd.DataFrame, label: str, results_dir: str) -> None:
    h = _histories(notebook, results_dir)
    col = "dev_rsum" if "dev_rsum" in h.columns else next((c for c in h.columns if c.startswith("dev_")), None)
    if col is None:
        return
    for rec in rows.get("record", pd.Series(dtype=object)).dropna().unique():
        g = h[h.record == rec]
        ax.plot(g.epoch, g[col], marker=".", lw=1, label=f"{label} seed {int(g.seed.iloc[0])}")
    ax.set(xlabel="epoch", ylabel=col)


class Explorer:
    """The state behind :func:`ablations`: two settings (A and B) chosen by dropdowns, a metric, the view."""

    def __init__(self, notebook: str, results_dir: str = "results"):
        import ipywidgets as w

        self.notebook, self.results_dir = notebook, results_dir
        self.knobs = knobs(notebook, results_dir)
        members = load_members(notebook, results_dir)
        self.metric = w.Dropdown(options=_metric_columns(members), value="rsum" if "rsum" in members else None,
                                 description="metric")
        self.a = {k: w.Dropdown(options=[("(any)", None)] + [(str(v), v) for v in vals], description=k)
                  for k, vals in self.knobs.items()}
        self.b = {k: w.Dropdown(options=[("(any)", None)] + [(str(v), v) for v in vals], description=k)
                  for k, vals in self.knobs.items()}
        self.train_button = w.Button(description="train A now (smoke)")
        self.out = w.Output()
        for d in [self.metric, *self.a.values(), *self.b.values()]:
            d.observe(lambda _: self.refresh(), names="value")
        self.train_button.on_click(lambda _: self._train())
        self.widget = w.VBox([self.metric,
                              w.HBox([w.VBox([w.HTML("<b>setting A</b>"), *self.a.values()]),
                                      w.VBox([w.HTML("<b>setting B (compared against A)</b>"), *self.b.values()])]),
                              self.train_button, self.out])
        self.table = self.shown = pd.DataFrame()
        self.comparison: dict[str, Any] | str | None = None
        self.refresh()

    def chosen(self, side: str = "a") -> dict[str, Any]:
        return {k: d.value for k, d in (self.a if side == "a" else self.b).items() if d.value is not None}

    def refresh(self) -> None:
        import matplotlib.pyplot as plt
        from IPython.display import Markdown, display

        metric = self.metric.value
        self.out.clear_output(wait=True)
        with self.out:
            try:
                self.table = ablation_table(self.notebook, results_dir=self.results_dir, **self.chosen("a"))
            except ValueError as e:
                self.table, self.comparison = pd.DataFrame(), None
                print(e)
                return
            # the knobs that still vary among the shown members name each row (e.g. fraction, epochs)
            varying = [k for k in self.knobs if k != "method" and k in self.table and self.table[k].nunique() > 1]
            cols = [c for c in ("method", *varying, "seed", metric, "best_epoch", "seconds", "source") if c in self.table]
            display(Markdown(f"**A**: {self.chosen('a') or 'every member'} - {len(self.table)} members"))
            self.shown = self.table[cols]
            display(self.shown)
            committed = self.table.record.dropna() if "record" in self.table else []
            if len(committed):   # did these arms train? (the claims' gate reads the same table)
                display(arm_training(self.notebook, committed, results_dir=self.results_dir)
                        .drop(columns=["member", "fraction", "metric"]))
            self.comparison = None
            if self.chosen("b"):
                try:
                    self.comparison = compare_settings(self.notebook, self.chosen("a"), self.chosen("b"), metric,
                                              results_dir=self.results_dir)
                    c = self.comparison
                    display(Markdown(f"**B - A** on {metric}: {c['ours (model vs baseline)']}, mean difference "
                                     f"{c['difference']}; B higher than A: **{c['verdict']}**"))
                except ValueError as e:
                    self.comparison = str(e)
                    print(e)
            if len(self.table) <= 40:
                fig, ax = plt.subplots(figsize=(7, 2.8))
                _curves(ax, self.notebook, self.table, "A", self.results_dir)
                if self.chosen("b"):
                    try:
                        _curves(ax, self.notebook, ablation_table(self.notebook, results_dir=self.results_dir,
                                                                  **self.chosen("b")), "B", self.results_dir)
                    except ValueError:
                        pass
                if ax.get_legend_handles_labels()[0]:
                    ax.legend(fontsize=8)
                plt.show()

    def _train(self) -> None:
        with self.out:
            train_setting(self.notebook, **self.chosen("a"))
        self.refresh()


def _say(text: str) -> None:
    """``text`` (Markdown) as a notebook shows it, or as plain words in a terminal (no object's repr, no markup)."""
    from ..console import in_kernel

    if in_kernel():
        from IPython.display import Markdown, display

        display(Markdown(text))
    else:
        print(text.replace("*", "").replace("`", ""))


def ablations(notebook: str, results_dir: str = "results") -> Any:
    """The explorer over ``notebook``'s member records, an ``ipywidgets.Widget`` (its state: ``.explorer``).
    At a Jupyter front end it is displayed; headless (papermill, ``make tables``) and in plain Python what it
    offers is shown as a static table instead - each knob and its values - and None is returned, so no widget
    lands in an executed copy.
    Assign the result (``explorer = ablations("04_sam")``) so that it is not displayed twice; in plain Python
    ``ablation_table(notebook, tau=5)`` gives the rows it would show."""
    if not repo_root().joinpath(results_dir, notebook, "members").is_dir():
        _say(f"*No committed member records for {notebook} yet: the next `make tables` run writes them, "
             "and the explorer opens on them.*")
        return None
    if _in_widget_frontend():
        from IPython.display import display

        ex = Explorer(notebook, results_dir)
        ex.widget.explorer = ex
        display(ex.widget)
        return ex.widget
    m = load_members(notebook, results_dir)
    states = arm_training(notebook, results_dir=results_dir).state.value_counts()
    _say(f"*The explorer is interactive in JupyterLab; here, what it offers: {len(m)} member records, "
         + "their arms " + ", ".join(f"{n} {k}" for k, n in states.items()) + ", and these knobs.*")
    shown = lambda v: ", ".join(map(str, v[:6])) + (f", ... ({len(v)} in all)" if len(v) > 6 else "")   # noqa: E731
    table = pd.DataFrame([{"knob": k, "values": shown(v)} for k, v in knobs(notebook, results_dir).items()])
    from ..console import in_kernel
    from .results import aligned

    if in_kernel():
        from IPython.display import display

        display(aligned(table))
    else:
        width = max(map(len, table.knob), default=0)
        print("\n".join(f"  {k:<{width}}  {v}" for k, v in zip(table.knob, table["values"])))
    return None


def train_setting(notebook: str, scale: str = "smoke", *, seed: int = 0, epochs: int | None = None,
                  results_dir: str = "results", **knob_values: Any) -> dict[str, Any]:
    """Train the setting ``knob_values`` picks (one member's config, any seed) at ``scale`` in this process,
    evaluate it on that scale's test split, and add it to :func:`load_members` as "this session, smoke".
    ``epochs``: the scale's default unless given. VSE-family members (notebooks 03-05) only; returns the test row."""
    from ..data import load_dataset
    from ..papers.ncs_sam import vse_config
    from ..relevance import eval_relevance
    from ..training.train import TrainConfig, config_dict, evaluate, train

    t = ablation_table(notebook, results_dir=results_dir, **knob_values)
    t = t[t.source.str.startswith("committed")]
    if t.method.nunique() != 1:
        raise ValueError(f"{knob_values} picks {t.method.nunique()} settings ({sorted(t.method.unique())[:6]}...): pick one")
    rec = json.loads((repo_root() / results_dir / notebook / "members" / t.record.iloc[0]).read_text())
    cfg = rec["config"]
    if cfg["model"]["kind"] != "vse":
        raise ValueError(f"train_setting trains VSE-family members (notebooks 03-05); {notebook}'s are {cfg['model']['kind']!r}")
    small = vse_config(scale)
    fields = {k: v for k, v in cfg.items() if k not in ("model", "data", "seed", "epochs", "batch_size")}
    train_ds, dev_ds, test_ds = (load_dataset("synthetic", s, scale=scale, seed=0) for s in ("train", "dev", "test"))
    frac = float(rec["fraction"])
    sub = train_ds if frac >= 1.0 else train_ds.subset(frac, seed=seed)
    c = TrainConfig.of(**fields, epochs=epochs or small.epochs, batch_size=small.batch_size, seed=seed, model=small.model,
                       data=f"{sub.source}|explore|{sub.n_images}")
    r = train(c, sub, dev_ds, ckpt_dir="runs/checkpoints", name="explore", device="cpu", progress=True)
    m = evaluate(r.model, r.vocab, test_ds, eval_relevance(test_ds), device="cpu")
    row = {**_flat_config(json.loads(json.dumps(config_dict(c)))), **{k: v for k, v in m.items() if np.isscalar(v)},
           "method": rec["member"], "fraction": frac, "seed": seed, "best_epoch": r.best_epoch, "seconds": r.seconds}
    row["model_kind"] = "vse"
    SESSION.setdefault(notebook, []).append(row)
    return row
