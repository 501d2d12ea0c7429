#!/bin/bash
# One call on a lent GPU (the device tool runs it in the repository root, $OUT coming back): the
# CUDA tests, then the default recipe's build measured at several lengths of its judging phase:
# the warm-start from scratch, then judging phases of 200 (the default), 600 and 1500 steps
# continuing it, each measured by bench/archive/judge_capacity.py on the seed-0 default run's held-out
# pairs (bench/archive/notebook.md, "Misspelled wrong replies, bounds beside counts"). Carry .whl/
# (gymnasium 1.4.0 and farama-notifications 0.0.6 wheels, pip download --no-deps; git-ignored).
#   RECIPE    names the results (default "recipe 11")
#   CAP_ARGS  judge_capacity.py options for every build, e.g. the instruction scripts' options:
#             CAP_ARGS="--instr-bounds --misspell-rate 0.5"
#   LENGTHS   the judging phases measured; LRX2=1 adds 600 steps at twice the rate
#   KEEP=1    brings the warm-start and the longest build (with its recipe.json) back;
#             NO_TESTS=1 skips the CUDA tests
# STEPS_SCALE=0.005 PAIRS=small.jsonl OUT=/tmp/x bash bench/archive/gpu_judge_build.sh: a CPU smoke run.
# Run from another checkout's root (with this script and judge_capacity.py copied in), it
# measures that checkout's recipe.
set -u
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
if command -v nvidia-smi >/dev/null; then  # the lent machine: its torch, the wheels beside it
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=$PWD:/tmp/site PY=python3
else
    export PYTHONPATH=$PWD PY=${PY:-.venv/bin/python}
fi
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
S=${STEPS_SCALE:-1}; P=${PAIRS:-$PWD/bench/results/heldout_pairs_judge_corr.jsonl}
J="$OUT/judge_capacity.json"; R=${RECIPE:-recipe 11}; W=/tmp/w-${R// /}
LENGTHS=${LENGTHS:-200 600 1500}  # judging-phase steps measured, each from the warm-start
LAST=${LENGTHS##* }  # the longest, saved (and brought back with KEEP)
steps() { $PY -c "print(max(1, round($1 * $S)))"; }
if [ "$S" = 1 ] && [ -z "${NO_TESTS:-}" ]; then
    nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
    timeout 120 $PY -m pytest -q -p no:cacheprovider tests/k2rl/test_cuda.py 2>&1 | tee "$OUT/tests.txt" | tail -4
fi
cap() { $PY bench/archive/judge_capacity.py --pairs "$P" --size default --out "$J" --steps-scale "$S" ${CAP_ARGS:-} "$@" \
    2>&1 | grep -v Warning | tail -2; }
T=${R// /}
cap --judge-steps 0 --save $W --name "$R warm-start" --judgments "$OUT/j0$T.txt"
for n in $LENGTHS; do
    cap --start $W --judge-steps $(steps $n) --name "$R judging phase $n" --judgments "$OUT/j$n$T.txt" \
        $([ $n = $LAST ] && echo --save /tmp/p$LAST$T)
done
if [ -n "${LRX2:-}" ]; then
    cap --start $W --judge-steps $(steps 600) --lr-scale 2 --name "$R judging phase 600, judge_lr x2" \
        --judgments "$OUT/j600x2$T.txt"
fi
if [ -n "${KEEP:-}" ]; then  # the models back: weights only (at most 8 files come back)
    mkdir -p "$OUT/w$T" "$OUT/p$LAST$T"
    cp $W/model.safetensors "$OUT/w$T/" && cp /tmp/p$LAST$T/{model.safetensors,recipe.json} "$OUT/p$LAST$T/"
fi
for f in "$OUT"/j[0-9]*.txt; do echo "=== $(basename $f)"; cat "$f"; done >> "$OUT/judgments.txt"
rm -f "$OUT"/j[0-9]*.txt  # (at most 8 files come back)
ls -la "$OUT"
