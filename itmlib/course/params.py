"""Every notebook's parameters, validated in one place, typed from its ``parameters`` cell.

``papermill ... -p fractions [0.05]`` delivers the *string* ``"[0.05]"`` (``-p`` only
parses numbers and booleans); ``-y "fractions: [0.05]"`` delivers a list. A notebook
calls ``start_run("05_sam_reduced_data", globals())``; :func:`validate_parameters` reads
the annotated assignments of that notebook's ``parameters`` cell (``name: type = default``),
coerces what a user typed into the declared type (a list given as a string is parsed, a
whole number given for a float accepted), checks each known knob by the rule of
:data:`RULES` (the same name means the same rule in every notebook), and returns the
values. A bad value raises ``ValueError`` naming the parameter and, for lists, the
``-y`` form that passes one.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import json
from collections.abc import Iterator
from functools import lru_cache
from typing import Any, Callable, Mapping

from ..config import check_choice, check_fraction, check_positive
from ..paths import repo_root

__all__ = ["declared_parameters", "validate_parameters", "run_parameters", "recipes", "RECIPE_TABLES", "cli_value", "RULES",
           "Parameters", "parameters_type", "parameter_help"]

_TYPES = {"str": str, "int": int, "float": float, "bool": bool, "list": list, "dict": dict}


def cli_value(text: str) -> Any:
    """A parameter value given on a command line (``-p NAME VALUE``): parsed as JSON when it can be, else the text."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _non_negative_int(name: str, v: Any) -> None:
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f"{name} must be an integer >= 0 (0 = the scale's default or off), got {v!r}")


def _bool(name: str, v: Any) -> None:
    if not isinstance(v, bool):
        raise ValueError(f"{name} must be true or false, got {v!r}")


def _non_negative(name: str, v: Any) -> None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
        raise ValueError(f"{name} must be a number >= 0, got {v!r}")


def _each(check: Callable[[str, Any], Any], *, may_be_empty: bool = False) -> Callable[[str, Any], None]:
    def run(name: str, values: Any) -> None:
        if not values and not may_be_empty:
            raise ValueError(f"{name} must list at least one value, got {values!r}")
        for v in values:
            check(name.rstrip("s") if name.endswith("s") else name, v)
    return run


def _parse_executor(v: Any) -> None:
    from ..training.context import parse_executor

    parse_executor(v)


def _non_empty_str(name: str, v: Any) -> None:
    if not isinstance(v, str) or not v.strip():
        raise ValueError(f"{name} must name a folder, got {v!r}")


def _choice(*choices: str) -> Callable[[str, Any], None]:
    return lambda name, v: check_choice(name, v, choices)


def _nbr_arm(name: str, v: Any) -> None:
    from ..papers.neighborhoods import ARMS, split_arm

    if not isinstance(v, str):
        raise ValueError(f"{name} must be a method name, got {v!r}")
    check_choice(name, split_arm(v)[0], tuple(ARMS))


def _sam_arm(name: str, v: Any) -> None:
    from ..papers.ncs_sam import SCARCE_ARMS

    check_choice(name, v, tuple(SCARCE_ARMS))


def _poolings(name: str, v: Any) -> None:
    from ..models.alignment import POOLINGS

    check_choice(name, v, POOLINGS)


#: the rule of each knob, by name, whichever notebook declares it
RULES: dict[str, Callable[[str, Any], Any]] = {
    "scale": _choice("smoke", "medium", "full"),
    "device": _choice("auto", "cpu", "cuda"),
    "seed": _non_negative_int,
    "tau": check_positive,
    "taus": _each(check_positive),
    "fraction": check_fraction,
    "fractions": _each(check_fraction, may_be_empty=True),   # 05: empty = chosen on the baseline
    "sampling": _choice("soft", "hard", "random"),
    "samplings": _each(_choice("soft", "hard", "random")),
    "keep_triplets": _each(_bool),
    "sam_mode": _choice("paper", "reference"),
    "sam_modes": _each(_choice("paper", "reference")),
    "controls": _bool,
    "sam_warmup": _bool,
    "sam_arms": _each(_sam_arm),
    "candidate_fractions": _each(check_fraction),
    "warmups": _each(_non_negative_int),
    "n_seeds": lambda n, v: check_positive(n, v, integer=True),
    "full_data_seeds": _non_negative_int,
    "full_data_epochs": _non_negative_int,
    "headline_seeds": _non_negative_int,
    "table5_updates": _choice("fixed", "epochs"),
    "epochs": _non_negative_int,
    "warmup_epochs": _non_negative_int,
    "patience": _non_negative_int,
    "ablation_epochs": _non_negative_int,
    "figure_epochs": _non_negative_int,
    "table3_epochs": _non_negative_int,
    "intra_epochs": _non_negative_int,
    "select_after": _non_negative_int,
    "teran_warmup_epochs": _non_negative_int,
    "neighborhoods_lr": _non_negative,
    "news_lr": _non_negative,
    "news_epochs": _non_negative_int,
    "news_patience": _non_negative_int,
    "rule3_arm": _bool,
    "per_part": _bool,
    "pooling": _poolings,
    "text_encoder": _choice("bert", "gru"),
    "finetune_text": _choice("auto", "yes", "no"),
    "n_show": lambda n, v: check_positive(n, v, integer=True),
    "n_queries": lambda n, v: check_positive(n, v, integer=True),
    "noise_levels": _each(_non_negative),
    "m_values": _each(lambda n, v: check_positive(n, v, integer=True)),
    "k": lambda n, v: check_positive(n, v, integer=True),
    "coco_fold": _choice(0, 1, 2, 3, 4),
    "fig3_models": _each(_choice("VSE++", "TERAN")),
    "claims_dir": _non_empty_str,
    "executor": lambda n, v: _parse_executor(v),
    "sg_backend": _choice("spacy", "spice"),
    "arms": _each(_choice("MT+GM", "+LM", "+PM")),
    "phrase_settings": _each(_bool),
    "rerank_k": _non_negative_int,
    "rerank_ks": _each(_non_negative_int),
    "negative_pool": lambda n, v: check_positive(n, v, integer=True),
    "phrase_backend": _choice("gold", "spacy"),
    "compare_vse": _bool,
    "news_arms": _each(_nbr_arm),
    "literal_arms": _each(_nbr_arm),
    "literal_fraction": check_fraction,
    "n_draws": lambda n, v: check_positive(n, v, integer=True),
    "d2v_mode": _choice("paper", "code", "dbow"),
    "neighbor_sampling": _choice("paper", "code"),
    "coco_ks": _each(lambda n, v: check_positive(n, v, integer=True)),
    "papers": _each(_choice("sam", "ssamt", "neighborhoods", "teran"), may_be_empty=True),   # 10: none before calibration
    "sam_fraction": lambda n, v: v == 0 or check_fraction(n, v),    # 0: chosen on the baseline
    "ssamt_fraction": check_fraction,
    "ssamt_embed_dim": _non_negative_int,   # 0: notebook 06's width at the scale
    "neighborhoods_fraction": check_fraction,
    "teran_fraction": check_fraction,
}


def _parameters_cell(notebook: str) -> str:
    path = repo_root() / "notebooks" / f"{notebook}.ipynb"
    if not path.is_file():
        raise FileNotFoundError(f"no notebook {notebook!r} at {path}")
    nb = json.loads(path.read_text(encoding="utf-8"))
    cells = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    if len(cells) != 1:
        raise ValueError(f"{path.name}: expected one cell tagged 'parameters', found {len(cells)}")
    return "".join(cells[0]["source"])


@lru_cache(maxsize=None)
def declared_parameters(notebook: str) -> dict[str, tuple[str, Any]]:
    """``{name: (type name, default)}`` of the ``parameters`` cell of ``notebooks/<notebook>.ipynb``."""
    out = {}
    for node in ast.parse(_parameters_cell(notebook)).body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = (ast.unparse(node.annotation), ast.literal_eval(node.value))
    return out


@lru_cache(maxsize=None)
def parameter_help(notebook: str) -> dict[str, str]:
    """``{name: help}``: the comment beside each parameter in the notebook's ``parameters`` cell."""
    lines = _parameters_cell(notebook).splitlines()
    out = {}
    for node in ast.parse("\n".join(lines)).body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            line = lines[node.end_lineno - 1]
            out[node.target.id] = line.split("#", 1)[1].strip() if "#" in line[node.end_col_offset:] else ""
    return out


class Parameters(Mapping):
    """A notebook's validated parameters, typed (one frozen dataclass per notebook, :func:`parameters_type`):
    ``p.epochs`` and, for the plans written against a mapping, ``p["epochs"]``. Its fields are the notebook's
    ``parameters`` cell - the face papermill reads stays the one definition - with their types and help."""

    def __getitem__(self, name: str) -> Any:
        if name not in self.__dataclass_fields__:   # type: ignore[attr-defined]
            raise KeyError(name)
        return getattr(self, name)

    def __iter__(self) -> Iterator[str]:
        return iter(self.__dataclass_fields__)   # type: ignore[attr-defined]

    def __len__(self) -> int:
        return len(self.__dataclass_fields__)   # type: ignore[attr-defined]

    def __reduce__(self) -> tuple:   # a made class: pickled by its notebook's name (spawned pool workers)
        return _typed, (self.notebook, dict(self))   # type: ignore[attr-defined]

    def replace(self, **changes: Any) -> "Parameters":
        """A copy with ``changes``, validated again (an unknown name or a bad value raises ``ValueError``)."""
        unknown = sorted(set(changes) - set(self))
        if unknown:
            raise ValueError(f"{self.notebook} has no parameter(s) {unknown}")   # type: ignore[attr-defined]
        return type(self)(**validate_parameters(self.notebook, {**self, **changes}))   # type: ignore[attr-defined]


def _typed(notebook: str, values: dict[str, Any]) -> Parameters:
    return parameters_type(notebook)(**values)


@lru_cache(maxsize=None)
def parameters_type(notebook: str) -> type:
    """The frozen dataclass of ``notebook``'s parameters: a field per declared parameter, its declared type,
    default and help (``field.metadata["help"]``)."""
    helps = parameter_help(notebook)
    fields = [(name, _TYPES.get(typ, Any), dataclasses.field(default_factory=lambda d=default: copy.deepcopy(d),
                                                             metadata={"help": helps.get(name, "")}))
              for name, (typ, default) in declared_parameters(notebook).items()]
    cls = dataclasses.make_dataclass(f"Parameters_{notebook[:2]}", fields, bases=(Parameters,), frozen=True, eq=False)
    cls.notebook = notebook
    return cls


def _coerce(name: str, typ: str, value: Any) -> Any:
    want = _TYPES.get(typ)
    if want is None:
        return value
    if want is list and isinstance(value, (tuple, list)):
        return list(value)
    if want is list and isinstance(value, str):
        import yaml

        try:
            parsed = yaml.safe_load(value)
        except yaml.YAMLError:
            parsed = None
        if isinstance(parsed, list):
            return parsed
        raise ValueError(f"{name} must be a list, got the string {value!r}; with papermill pass a list as "
                         f"-y \"{name}: [0.05, 0.1]\" (or -p {name} '[0.05, 0.1]')")
    if want is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if want is bool and isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if want is int and isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    if want is float and isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    if not isinstance(value, want) or (want is int and isinstance(value, bool)):
        raise ValueError(f"{name} must be a {typ}, got {value!r} ({type(value).__name__})")
    return value


#: where each notebook's recipes live, chosen per scale by its probes (module, attribute -> {scale: {parameter: value}}):
#: a parameter left at its declared default takes the recipe's value at the run's scale, so ``ci/<scale>.yaml``
#: restates none of them (it chooses the grid, the seeds and the executor)
RECIPE_TABLES = {"05_sam_reduced_data": ("itmlib.papers.ncs_sam.scarce", "SCARCE_RECIPES"),
                 "06_phrase_labels": ("itmlib.papers.ssamt.configs", "TABLE3_RECIPES"),
                 "07_semantic_neighborhoods": ("itmlib.papers.neighborhoods", "NEWS_RECIPES"),
                 "08_teran": ("itmlib.papers.teran", "TERAN_RECIPES"),
                 "09_real_language": ("itmlib.course.real_language", "WORLD_RECIPES")}


def recipes(notebook: str, scale: str) -> dict[str, Any]:
    """The recipe :data:`RECIPE_TABLES` holds for ``notebook`` at ``scale`` (empty where it has none)."""
    import importlib

    where = RECIPE_TABLES.get(notebook)
    if where is None:
        return {}
    table = getattr(importlib.import_module(where[0]), where[1]).get(scale, {})
    unknown = set(table) - set(declared_parameters(notebook))
    if unknown:
        raise ValueError(f"{where[0]}.{where[1]}[{scale!r}] sets {sorted(unknown)}, which {notebook} does not declare")
    return dict(table)


def validate_parameters(notebook: str, namespace: Mapping[str, Any]) -> dict[str, Any]:
    """The declared parameters of ``notebook`` with their values in ``namespace``, coerced to the
    declared types and checked by :data:`RULES`; raises ``ValueError`` naming a bad one. A parameter at its
    declared default takes the notebook's recipe at the run's ``scale`` (:func:`recipes`)."""
    declared = declared_parameters(notebook)
    chosen = recipes(notebook, namespace.get("scale", declared.get("scale", ("", ""))[1]))
    out = {}
    for name, (typ, default) in declared.items():
        value = namespace.get(name, default)
        if name in chosen and value == default:
            value = chosen[name]
        value = _coerce(name, typ, value)
        rule = RULES.get(name)
        if rule is not None:
            rule(name, value)
        out[name] = value
    return out


def run_parameters(notebook: str, scale: str, **changes: Any) -> Parameters:
    """The parameters ``make tables`` runs ``notebook`` with at ``scale``, typed (:func:`parameters_type`): its
    parameters cell's defaults, then ``ci/<scale>.yaml``'s overrides (``all``, then the notebook's), then
    ``changes``, validated as the notebook validates them - what :mod:`tools/member_pool.py <tools.member_pool>`
    plans from, with no notebook cell executed."""
    from .notebooks import scale_overrides

    over = scale_overrides(scale)
    ns = {name: default for name, (_, default) in declared_parameters(notebook).items()}
    ns.update(over.get("all", {}))
    ns.update(over.get(notebook, {}))
    ns["scale"] = scale
    unknown = sorted(set(changes) - set(ns))
    if unknown:
        raise ValueError(f"{notebook} has no parameter(s) {unknown}")
    ns.update(changes)
    return parameters_type(notebook)(**validate_parameters(notebook, ns))
