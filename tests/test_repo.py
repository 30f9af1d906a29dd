"""The two-command setup: README, Makefile and CI agree."""

import shutil
import subprocess

import pytest

from itmlib.paths import repo_root

ROOT = repo_root()


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in readme and "make course" in readme
    assert "\nmake test\n" in ci  # CI calls exactly the README's test command


@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
def test_makefile_pins_torch_before_the_package():
    """What ``make venv`` would run, in order (``make -n`` in a fresh copy of the Makefile): the CPU torch wheel
    is installed before the package, so the package's torch requirement finds it and pulls no CUDA build."""
    out = subprocess.run(["make", "-n", "-B", "-f", str(ROOT / "Makefile"), "venv"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.splitlines()
    torch = next(i for i, ln in enumerate(out) if "pip install" in ln and ln.endswith(" torch==2.13.0"))
    pkg = next(i for i, ln in enumerate(out) if "pip install" in ln and ln.endswith(' -e ".[dev]"'))
    assert torch < pkg


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
def test_generated_data_and_runs_are_ignored():
    """git itself ignores what a run generates: checkpoints, caches, the venv (and keeps the committed results)."""
    def ignored(path: str) -> bool | None:   # None: git cannot tell (a local symlink stands in the path)
        r = subprocess.run(["git", "check-ignore", "-q", "--no-index", path], cwd=ROOT, capture_output=True, text=True)
        return None if "symbolic link" in r.stderr else r.returncode == 0

    for path in ("runs/checkpoints/x/last.pt", "data/cache/world.npz", ".venv/bin/python"):
        assert ignored(path) in (True, None), path
    assert ignored("results/04_sam/claims.csv") is False and ignored("itmlib/training/train.py") is False


def test_environment_yml_names_each_dependency_with_its_notebook():
    env = (ROOT / "environment.yml").read_text()
    assert "conda-forge" in env and "python=3.11" in env and "-e ." in env
    for dep in ("pytorch", "transformers", "gensim", "pycocoevalcap", "matplotlib", "papermill", "jupyterlab"):
        line = next(ln for ln in env.splitlines() if dep in ln)
        assert "#" in line, f"{dep}: no comment saying which notebook needs it"


def test_environment_yml_has_every_pyproject_dependency():
    import re
    import tomllib

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    env = (ROOT / "environment.yml").read_text().lower().replace("_", "-")
    conda_name = {"torch": "pytorch"}  # conda-forge spells it differently
    for dep in deps:
        name = re.split(r"[<>=!~ \[;]", dep, maxsplit=1)[0].lower().replace("_", "-")
        assert re.search(rf"^\s*-\s*{re.escape(conda_name.get(name, name))}\b", env, re.M), \
            f"{name} is in pyproject.toml but not in environment.yml"


def test_a_test_that_hangs_fails_with_its_stacks_long_before_ci_gives_up():
    """CI stops a run at 90 minutes and prints nothing of where it stood: pytest-timeout fails a hung test
    first, printing every thread's stack, with room left for the rest of the suite to finish."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert any(d.startswith("pytest-timeout") for d in project["project"]["optional-dependencies"]["dev"])
    timeout = project["tool"]["pytest"]["ini_options"]["timeout"]
    assert 5 * 60 < timeout <= 30 * 60
