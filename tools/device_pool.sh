#!/usr/bin/env bash
# Train a notebook's members on a lent GPU machine with tools/member_pool.py, and send their records home.
#
#   device run, carry [".gpu10"]:   bash tools/device_pool.sh 540 09_real_language --world sam
#   then here:                      tar xzf <files_at>/records.tgz -C results
#
# The first argument is the pool's time limit in seconds (leave ~40 s of the call for unpacking and packing);
# the rest go to tools/member_pool.py. Whatever finished comes home even when the limit cuts the pool: the records
# are packed into $OUT/records.tgz at the end, one file (the device sends back only 8 files, at most two
# folders below $OUT). What .gpu10 may hold (tools/pack_minilm.py, tools/pack_stop_words.py; see benchmarks/README.md):
# minilm.tar.xz (TERAN's text encoder), caches.tar.xz (data/cache: the real-language world's texts and parses),
# gensim.tar.xz (gensim for the neighbourhood losses) and site/ (stand-in packages).
set -u
limit=$1; shift
: "${OUT:?run this on the device machine, where OUT is set}"
[ -f .gpu10/minilm.tar.xz ] && tar xJf .gpu10/minilm.tar.xz -C /tmp && export ITM_MINILM_DIR=/tmp/minilm
[ -f .gpu10/caches.tar.xz ] && tar xJf .gpu10/caches.tar.xz -C .
mkdir -p /tmp/site && { [ ! -f .gpu10/gensim.tar.xz ] || tar xJf .gpu10/gensim.tar.xz -C /tmp/site; }
export PYTHONPATH=/tmp/site:$PWD/.gpu10/site:$PWD
nvidia-smi -L
timeout "$limit" python tools/member_pool.py "$@" --workers 15 --device cuda --results-dir /tmp/res 2>&1 \
    | grep -v -E "Warning|Loading weights|return Variable|warnings.warn" > "$OUT/pool.log"
tar czf "$OUT/records.tgz" -C /tmp/res .
tail -60 "$OUT/pool.log"
echo "records: $(tar tzf "$OUT/records.tgz" | grep -c '\.json$')"
