#!/usr/bin/env bash
# Full-scale run of every notebook on a GPU machine: regenerates results/
# at scale "full" (Flickr30K-sized synthetic world). Needs the repo's venv
# (`make venv`) or an environment with `pip install -e .` and a CUDA torch.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
"$PY" -c "import torch; assert torch.cuda.is_available(), 'no CUDA GPU visible'"
"$PY" -m itmlib.notebooks run --scale full --output-dir runs/full --results-dir results "$@"
