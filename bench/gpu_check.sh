#!/usr/bin/env bash
# Issue 27's GPU check, the one command to run on a machine with a CUDA GPU and torch,
# transformers and sentence-transformers (no venv, no network needed): bench/run.py --only GPU
# with the system python, the checkout's src/ on PYTHONPATH and the MiniLM copy that
# bench/gpu_assets.py wrote to bench/.assets/minilm (carry that folder to the machine), then
# the bit-identity probe (--gpu-probe, 5,000 texts) in a process of its own, with cuBLAS's
# deterministic workspace set before CUDA starts. Prints everything; with $OUT set, also
# writes it to $OUT/gpu.txt. Stops after 285 s (the speed part) and 90 s (the probe).
#
#   bash bench/gpu_check.sh [extra bench/run.py options, e.g. --texts 20000]
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-$(command -v python3 || command -v python)}
MODEL=bench/.assets/minilm
log=/dev/null
if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT"
    log="$OUT/gpu.txt"
fi
{
    echo "bench/gpu_check.sh $(date -u '+%F %T UTC'), $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    if [ ! -f "$MODEL/modules.json" ]; then
        echo "no $MODEL: run PYTHONPATH=src .venv/bin/python bench/gpu_assets.py where the venv is, and carry $MODEL"
        exit 2
    fi
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 || true
    "$PY" -c 'import torch, transformers, sentence_transformers, tokenizers, numpy, yaml; print("python ok:", torch.__version__, transformers.__version__, sentence_transformers.__version__, tokenizers.__version__)' || exit 3
    export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
    export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TRANSFORMERS_VERBOSITY=error TQDM_DISABLE=1
    timeout -k 5 285 "$PY" bench/run.py --only GPU --model-path "$MODEL" --budget-s 235 "$@"
    echo "exit status $?"
    CUBLAS_WORKSPACE_CONFIG=:4096:8 timeout -k 5 90 "$PY" bench/run.py --only GPU --gpu-probe \
        --model-path "$MODEL" --texts 5000 --gpu-dtypes float16,float32
    echo "probe exit status $?"
} 2>&1 | tee "$log"
