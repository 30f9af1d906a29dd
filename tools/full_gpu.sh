#!/usr/bin/env bash
# Full-scale run of every notebook on a GPU machine: regenerates results/
# at scale "full" (Flickr30K-sized synthetic world). Needs the repo's venv
# (`make venv`) or an environment with `pip install -e .` and a CUDA torch.
#
# With several GPUs the grid members of 04-08 are spread over them: a Dask scheduler and
# one single-thread worker per GPU (CUDA_VISIBLE_DEVICES=i), and every notebook gets
# `-p executor dask:tcp://127.0.0.1:$PORT`. Members are independent and checkpointed, so a
# stopped run resumes where it was. GPUS=1 forces the one-process path.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
PORT=${PORT:-8786}
"$PY" -c "import torch; assert torch.cuda.is_available(), 'no CUDA GPU visible'"
GPUS=${GPUS:-$("$PY" -c "import torch; print(torch.cuda.device_count())")}

if [ "$GPUS" -le 1 ]; then
  exec "$PY" -m itmlib.course.notebooks run --scale full --output-dir runs/full --results-dir results "$@"
fi

mkdir -p runs
BIN=$(dirname "$PY")
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; }
trap cleanup EXIT
"$BIN/dask" scheduler --port "$PORT" --dashboard-address :0 > runs/dask-scheduler.log 2>&1 &
pids+=($!)
sleep 5
for ((i = 0; i < GPUS; i++)); do
  # --no-nanny: a nanny gives its worker Dask's MALLOC_TRIM_THRESHOLD_, 2x slower torch steps on the CPU side
  # (itmlib.grid.worker_environ, benchmarks/bench_executor.py)
  CUDA_VISIBLE_DEVICES=$i "$BIN/dask" worker "tcp://127.0.0.1:$PORT" --nworkers 1 --nthreads 1 --no-nanny \
    --name "gpu$i" > "runs/dask-worker-$i.log" 2>&1 &
  pids+=($!)
done
"$PY" -m itmlib.course.notebooks run --scale full --output-dir runs/full --results-dir results \
  -p executor "dask:tcp://127.0.0.1:$PORT" "$@"
