#!/usr/bin/env bash
# The README's GPU figures: what 04's grid members and each model cost on one GPU.
#
#   bash benchmarks/gpu_figures.sh [OUTDIR]          # a CUDA torch and the repo's packages (make venv, or pip install -e .)
#   DEVICE=cpu QUICK=1 bash benchmarks/gpu_figures.sh # a dry run of every step at smoke sizes, on the CPU
#   ONLY=train_full_teran bash benchmarks/gpu_figures.sh   # the steps whose names match a bash regex
#
# Steps, most wanted first, each under its own time limit and all under DEADLINE seconds (default 540),
# so that one slow step leaves the rest their turn; every step's output lands in OUTDIR/<step>.log
# (benchmarks/timings/gpu-h200-2026-11-26.log: the README's figures, one H200):
#   grid04       a slice of 04's medium grid (4 configs x 3 epochs, the VSE++ member first), inline and on
#                two one-thread Dask workers sharing the GPU; extrapolated to 04's whole medium grid
#   teran_query  TERAN's 5k x 25k score matrix and single queries at d = 1024 (the paper's GPU goal: <= 10 s)
#   train_*      seconds per epoch of VSE++ (triplet), VSE++ + SAM and TERAN at medium (04's fraction 0.25)
#                and at full (29,000 images, d = 1024), the setup and the warm-up epoch not counted
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}
OUT=${1:-runs/gpu_figures}
DEVICE=${DEVICE:-cuda}
DEADLINE=${DEADLINE:-540}
ONLY=${ONLY:-.}
export TQDM_DISABLE=1 PYTHONUNBUFFERED=1
mkdir -p "$OUT"
START=$(date +%s)

step() {  # step NAME LIMIT_S ARGS...: run one benchmark, cut at min(LIMIT_S, time left before DEADLINE)
  local name=$1 limit=$2 left
  shift 2
  [[ $name =~ $ONLY ]] || return 0
  left=$((DEADLINE - ($(date +%s) - START)))
  if [ "$left" -lt 20 ]; then
    echo "== $name: skipped, ${left} s left of DEADLINE=${DEADLINE}" | tee "$OUT/$name.log"
    return
  fi
  [ "$left" -lt "$limit" ] && limit=$left
  echo "== $name (limit ${limit} s): $*"
  local t=$(date +%s)
  timeout "$limit" "$PY" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  grep -v "^\s*$" "$OUT/$name.log" | tail -n 25
  echo "== $name: exit ${rc}$( [ $rc -eq 124 ] && echo ' (cut at its limit)'), $(( $(date +%s) - t )) s"
}

if [ "$DEVICE" = cuda ]; then
  nvidia-smi -L || true
fi
"$PY" -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())"

if [ -n "${QUICK:-}" ]; then
  grid=(--scale smoke --members 2 --epochs 1) teran=(--images 50 --captions 250 --dim 64 --loop-pairs 200)
  medium=(--scale smoke) full=(--scale smoke)
else
  grid=(--scale medium --members 4 --epochs 3) teran=(--images 5000 --captions 25000 --loop-pairs 2000)
  medium=(--scale medium --fraction 0.25) full=(--scale full)
fi
step grid04 180 benchmarks/bench_grid_workers.py "${grid[@]}" --device "$DEVICE" --executors inline processes:2
step teran_query 90 benchmarks/bench_teran.py "${teran[@]}" --device "$DEVICE"
# --json: measured in the step's own process (no child that a cut would leave running), one JSON line
for m in vse_triplet vse_sam teran; do
  step "train_medium_$m" 60 benchmarks/bench_train.py "${medium[@]}" --device "$DEVICE" --models "$m" --json
done
for m in vse_triplet vse_sam; do
  step "train_full_$m" 200 benchmarks/bench_train.py "${full[@]}" --device "$DEVICE" --models "$m" --json
done
# TERAN at full trains 4 epochs of ~157 s for T(1) + T(3) on one H200, past any step's limit: a quarter of
# the training images (the dev and test sets stay whole), one epoch of all of them ~4x that
step train_full_teran 300 benchmarks/bench_train.py "${full[@]}" --fraction 0.25 --device "$DEVICE" --models teran --json
echo "== all steps: $(( $(date +%s) - START )) s"
