#!/bin/bash
# One call on a lent GPU (the device tool runs it in the repository root, $OUT coming back):
# the CUDA tests, then bench/archive/judge_capacity.py on the CPU-built default (the HF path against
# the vLLM figures) and on the default recipe built at larger sizes (docs/scaling.md, "What has
# run on a GPU"). It needs, carried with the call (both ignored by git here):
#   .whl/        gymnasium 1.4.0 and farama-notifications 0.0.6 wheels (pip download --no-deps)
#   .carry/base  the default build to measure, a copy of ~/.cache/k2rl/models/qwen2-char-<key>
set -u
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD:/tmp/site
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import torch, transformers, peft; print('torch', torch.__version__, 'transformers', transformers.__version__, 'peft', peft.__version__)"
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/k2rl/test_cuda.py tests/k2rl/test_gpu_path.py \
    tests/k2rl/test_precision.py tests/k2rl/test_logprobs.py \
    --deselect tests/k2rl/test_precision.py::test_a_run_says_how_it_computes 2>&1 | tee "$OUT/tests.txt" | tail -25
P=bench/results/heldout_pairs_judge_corr.jsonl  # the seed-0 default run's held-out pairs
J="$OUT/judge_capacity.json"
timeout 120 python3 bench/archive/judge_capacity.py --pairs $P --model .carry/base --out "$J" 2>&1 | grep -v Warning | tail -4
timeout 170 python3 bench/archive/judge_capacity.py --pairs $P --size mid --out "$J" 2>&1 | grep -v Warning | tail -4
timeout $(( ${BUDGET_S:-580} - SECONDS )) python3 bench/archive/judge_capacity.py --pairs $P --size large --lr-scale 0.5 --out "$J" 2>&1 | grep -v Warning | tail -4
ls -la "$OUT"
