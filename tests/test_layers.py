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


#: the guide's "small modules with one job each": a longer module says why in its docstring
MAX_LINES = 320


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(PKG)) for p in MODULES])
def test_a_module_over_300_lines_says_why_in_its_docstring(path):
    text = path.read_text(encoding="utf-8")
    n = text.count("\n")
    if n <= MAX_LINES:
        return
    doc = ast.get_docstring(ast.parse(text)) or ""
    assert "on purpose" in doc or "lines because" in doc or "hence its" in doc, (
        f"itmlib/{path.relative_to(PKG)} has {n} lines: split it, or say in its module docstring why it is one module")


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
