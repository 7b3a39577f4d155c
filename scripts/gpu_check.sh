#!/usr/bin/env bash
# A fixed-seed planfuzz campaign on the device DEV names (CPU by default; CUDA, NV, AMD on a GPU machine), printing
# the summary. Exit status: 0 nothing found, 1 findings (repros and plan pictures in $REPRO_DIR), 2 bad usage.
# Usage: DEV=CUDA scripts/gpu_check.sh [extra planfuzz run options]
set -euo pipefail
cd "$(dirname "$0")/.."
export DEV="${DEV:-CPU}"
echo "gpu-check: DEV=$DEV SEED=${SEED:-0} EXAMPLES=${EXAMPLES:-50}" >&2
exec .venv/bin/planfuzz run --target "${TARGET:-planner}" --examples "${EXAMPLES:-50}" --seed "${SEED:-0}" \
  --workers "${WORKERS:-1}" --db none --repro-dir "${REPRO_DIR:-fuzz-failures/gpu-$DEV}" "$@"
