"""The two-command setup: README, Makefile and CI agree."""

from itmlib.paths import repo_root

ROOT = repo_root()


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in readme and "make course" in readme
    assert "\nmake test\n" in ci  # CI calls exactly the README's test command


def test_makefile_pins_torch_before_the_package():
    mk = (ROOT / "Makefile").read_text()
    assert mk.index("torch==2.13.0") < mk.index('pip install -e ".[dev]"')


def test_generated_data_and_runs_are_ignored():
    ignored = (ROOT / ".gitignore").read_text().split()
    assert "runs/" in ignored and "data/cache/" in ignored and ".venv/" in ignored


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
