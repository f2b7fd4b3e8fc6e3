cd "$(dirname "$0")/.."; export PYTHONPATH="$PWD/src" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TRANSFORMERS_VERBOSITY=error TQDM_DISABLE=1
M=bench/.assets/minilm
echo "== no workspace config, 20000"; timeout 100 python3 bench/run.py --only GPU --gpu-probe --model-path $M --texts 20000 --gpu-dtypes float16,float32 2>&1 | grep -v "^work folder"
echo "== workspace :4096:8, 20000"; CUBLAS_WORKSPACE_CONFIG=:4096:8 timeout 100 python3 bench/run.py --only GPU --gpu-probe --model-path $M --texts 20000 --gpu-dtypes float16,float32 2>&1 | grep -v "^work folder"
