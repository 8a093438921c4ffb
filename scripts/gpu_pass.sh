#!/usr/bin/env bash
# One bounded pass of the corpus on a CUDA device, as measured on an H200 on 2026-12-04
# (docs/benchmarks.md "Measured on an H200"; records in docs/data/gpu-1.19.0.json):
# the reference engine and the independent oracle over the whole corpus at once, each
# writing its JSON after every variant, so a pass cut by its time limit keeps what finished
# and the same command resumes from the result store.
#
# Usage (from the repository root, Warp importable by python3, a GPU present):
#   OUT=gpu-out DEVICE=cuda:0 ENGINE_JOBS=8 ORACLE_JOBS=6 LIMIT_S=600 bash scripts/gpu_pass.sh
# Then compare with the committed CPU files as scripts/gpu_cost.py's `differences` does.
# Without an installed package: put a folder holding `defects4warp -> <repo>/harness` on PYTHONPATH.
set -u
OUT=${OUT:-gpu-out}
DEVICE=${DEVICE:-cuda:0}
ENGINE_JOBS=${ENGINE_JOBS:-8}
ORACLE_JOBS=${ORACLE_JOBS:-6}
LIMIT_S=${LIMIT_S:-600}
FRESH=${FRESH:---fresh}   # FRESH= (empty) resumes from the result store
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
python3 -c "import warp as wp; wp.init(); print('warp', wp.__version__, 'cuda devices', wp.get_cuda_device_count())" || exit 2
timeout -k 10 "$LIMIT_S" python3 -m defects4warp run --device "$DEVICE" --jobs "$ENGINE_JOBS" $FRESH --no-store \
    --progress-every 30 --timeout 240 --json "$OUT/run-cuda.json" > "$OUT/run.log" 2>&1 &
P1=$!
timeout -k 10 "$LIMIT_S" python3 -m defects4warp validate --device "$DEVICE" --jobs "$ORACLE_JOBS" $FRESH --timeout 240 \
    --json "$OUT/val-cuda.json" > "$OUT/val.log" 2>&1 &
P2=$!
wait $P1; echo "engine run: exit $?"
wait $P2; echo "oracle: exit $?"
tail -n 3 "$OUT/run.log" "$OUT/val.log"
