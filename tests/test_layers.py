"""The package is layered: a module imports only from its own layer or below (no import runs back up)."""

import ast
from pathlib import Path

import pytest

import itmlib

PKG = Path(itmlib.__file__).parent

#: layers, bottom up; a module's layer is that of its longest matching prefix
LAYERS = [
    ["config", "paths", "console", "__version__", "knn"],
    ["data", "relevance"],
    ["metrics", "text_encoders"],
    ["models", "losses"],
    ["training"],
    ["paper_numbers", "claims"],
    ["papers"],
    ["course"],
]


def _layer(module: str) -> int:
    top = module.split(".")[0]
    for i, names in enumerate(LAYERS):
        if top in names:
            return i
    raise AssertionError(f"itmlib.{module} is in no layer of tests/test_layers.py: add it")


def _imports(path: Path) -> set[str]:
    """itmlib modules imported by ``path`` (relative or absolute, at any depth: lazy imports count)."""
    rel = path.relative_to(PKG).with_suffix("")
    package = list(rel.parts[:-1])                       # a module's package (for __init__: the package itself)
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
                if not mod:                                 # "from .. import x" at the top: x is a module
                    out |= {a.name for a in node.names}
                    continue
                out.add(mod)
            elif node.module and node.module.startswith("itmlib."):
                out.add(node.module[len("itmlib."):])
        elif isinstance(node, ast.Import):
            out |= {a.name[len("itmlib."):] for a in node.names if a.name.startswith("itmlib.")}
    return out


MODULES = sorted(p for p in PKG.rglob("*.py") if p.relative_to(PKG).parts[0] != "__init__.py")


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(PKG)) for p in MODULES])
def test_no_import_runs_back_up(path):
    me = ".".join(path.relative_to(PKG).with_suffix("").parts)
    for mod in _imports(path):
        assert _layer(mod) <= _layer(me), f"itmlib.{me} (layer {_layer(me)}) imports itmlib.{mod} (layer {_layer(mod)})"


def test_the_check_sees_relative_and_lazy_imports():
    got = _imports(PKG / "papers" / "teran.py")
    assert {"training.train", "models.teran", "metrics.grounding", "metrics"} <= got


#: the guide's "small modules with one job each", and functions a reader can hold
MAX_LINES, MAX_FUNCTION_LINES, MAX_PARAMETERS = 400, 60, 10


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(PKG)) for p in MODULES])
def test_modules_and_functions_are_small(path):
    """No module over 400 lines, no function over 60 lines or with more than 10 parameters (self aside)."""
    text = path.read_text(encoding="utf-8")
    n = text.count("\n")
    assert n <= MAX_LINES, f"itmlib/{path.relative_to(PKG)} has {n} lines: split it by job"
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *([a.vararg] if a.vararg else []), *([a.kwarg] if a.kwarg else [])]
            params = [p for p in params if p.arg not in ("self", "cls")]
            lines = node.end_lineno - node.lineno + 1
            where = f"itmlib/{path.relative_to(PKG)}:{node.lineno} {node.name}"
            assert lines <= MAX_FUNCTION_LINES, f"{where} has {lines} lines (at most {MAX_FUNCTION_LINES})"
            assert len(params) <= MAX_PARAMETERS, f"{where} takes {len(params)} parameters (at most {MAX_PARAMETERS})"


def test_the_package_root_shows_the_layers():
    """The root holds the layer packages and at most 6 small modules; the course machinery sits in
    ``itmlib.course``, training in ``itmlib.training``, the ledger in ``itmlib.claims``."""
    loose = {p.stem for p in PKG.glob("*.py")} - {"__init__"}
    assert len(loose) <= 6, sorted(loose)
    course = {p.stem for p in (PKG / "course").glob("*.py")} - {"__init__"}
    assert {"params", "results", "findings", "summary", "site", "notebooks"} <= course
    assert {"train", "grid", "progress", "convergence"} <= {p.stem for p in (PKG / "training").glob("*.py")}
    assert {"registry", "verdicts"} <= {p.stem for p in (PKG / "claims").glob("*.py")}
    assert not course & loose


def test_the_layers_have_no_circle():
    """Within one layer, the imports between its top-level packages form no circle (a DAG), so each package
    could be read before the next."""
    edges = {}
    for path in MODULES:
        me = path.relative_to(PKG).parts[0].removesuffix(".py")
        for mod in _imports(path):
            top = mod.split(".")[0]
            if top != me and _layer(top) == _layer(me):
                edges.setdefault(me, set()).add(top)
    seen, stack = set(), set()

    def visit(n):
        assert n not in stack, f"a circle of imports through itmlib.{n}"
        if n in seen:
            return
        stack.add(n)
        for m in edges.get(n, ()):
            visit(m)
        stack.discard(n)
        seen.add(n)
    for n in list(edges):
        visit(n)
