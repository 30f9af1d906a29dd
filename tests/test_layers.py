"""The package is layered: a module imports only from its own layer or below (no import runs back up)."""

import ast
from pathlib import Path

import pytest

import itmlib

PKG = Path(itmlib.__file__).parent

#: layers, bottom up; a module's layer is that of its longest matching prefix
LAYERS = [
    ["config", "paths", "timing", "progress", "__version__", "knn"],
    ["data", "relevance"],
    ["metrics", "agreement", "retrievers", "text_encoders"],
    ["models", "losses"],
    ["train", "grounding"],
    ["grid", "paper_numbers", "claims", "verdicts"],
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
    assert {"train", "models.teran", "grounding", "metrics"} <= got


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
    """The course machinery sits in ``itmlib.course``, not beside the paper layers at the root."""
    course = {p.stem for p in (PKG / "course").glob("*.py")} - {"__init__"}
    assert {"params", "results", "findings", "summary", "site", "notebooks"} <= course
    assert not course & {p.stem for p in PKG.glob("*.py")}
