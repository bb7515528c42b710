#!/usr/bin/env bash
# The anchor study's GPU check: the `paper` profile at depth 2 for γ 0.5 and γ 0.8 (seed 1), trained side by side
# on one CUDA device through `reasonlab sweep`. The study reports symmetric for γ 0.5 and inferential for γ 0.8 on
# the held-out pair (4,3); docs/anchor-composition.md records what it gives. The profile is unchanged but for
# train.device=cuda and train.tf32=true: in plain fp32 the two runs' 155,400 steps (1.84e11 FLOPs each) need 7
# minutes at an H200's full 67 TFLOP/s fp32 rate and about twice that at a realistic half of it, more than a lent
# machine's 15 minutes allow with its start; TF32 matmuls (fp32 storage and accumulation, 10-bit mantissa inputs)
# leave the runs bound by kernel launches instead. Both settings are in the runs' configs.
#
#   here, once (needs PyPI and the README's .venv):   bash benchmarks/gpu_check.sh prepare
#       puts into .whl/ the wheels (CPython 3.12, x86-64) of what the GPU image lacks or may hold in other
#       versions: pydantic and its parts, and the command line's typer/rich stack, at this venv's versions.
#   on the GPU machine (its python3 holds a CUDA torch; nothing is fetched there):
#       bash benchmarks/gpu_check.sh run [SECONDS [SWEEP OPTIONS...]]   # through the device tool: carry [".whl"]
#       trains for at most SECONDS (default 540; options such as --set and --grid are added to the sweep's), then
#       writes to $OUT: env.txt, sweep.log, results.txt, results.csv and each run's summary (or its progress, if
#       time ran out). A second `run` on the same machine resumes unfinished runs from their last checkpoint.
set -euo pipefail
shopt -s nullglob
cd "$(dirname "$0")/.."
WHEELS=(pydantic pydantic_core annotated-types typing-inspection typing_extensions
        typer click rich markdown-it-py mdurl pygments shellingham annotated-doc)
SWEEP=runs/gpu-check

prepare() {
    local pins=() name
    for name in "${WHEELS[@]}"; do
        pins+=("$name==$(.venv/bin/python -c "import importlib.metadata as m; print(m.version('$name'))")")
    done
    rm -rf .whl && mkdir .whl
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        -d .whl "${pins[@]}"
    ls .whl && du -sh .whl
}

run() {
    local budget=${1:-540} out=${OUT:-gpu-check-out} py=${PYTHON:-python3}
    shift || true
    mkdir -p "$out"
    "$py" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    export PYTHONPATH="$PWD/src:/tmp/site" PYTHONUNBUFFERED=1 COLUMNS=160
    {
        date -u
        nvidia-smi -L || true
        "$py" -c "import sys, torch; print(sys.version.split()[0], 'torch', torch.__version__,
            'cuda', torch.version.cuda, torch.cuda.get_device_name() if torch.cuda.is_available() else 'no GPU')"
        git rev-parse HEAD 2>/dev/null || true
    } | tee "$out/env.txt"
    local started=$SECONDS rc=0
    timeout -s INT "$budget" "$py" -m reasonlab sweep --profile paper --grid init.gamma=0.5,0.8 \
        --set train.device=cuda --set train.tf32=true --workers 2 --out runs --name gpu-check "$@" 2>&1 \
        | tee "$out/sweep.log" || rc=$?
    echo "sweep exit $rc after $((SECONDS - started)) s (budget $budget s)" | tee -a "$out/sweep.log"
    "$py" -m reasonlab results "$SWEEP" --csv "$out/results.csv" > "$out/results.txt" 2>&1 || true
    local dir g
    for dir in "$SWEEP"/*/; do
        g=$("$py" -c "import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))['init']['gamma'])" "$dir/config.yaml")
        if [ -f "$dir/summary.json" ]; then
            "$py" -m reasonlab show "$dir" >> "$out/results.txt" 2>&1 || true
            cp "$dir/summary.json" "$out/summary-g$g.json"
        elif [ -f "$dir/progress.json" ]; then
            cp "$dir/progress.json" "$out/progress-g$g.json"
        fi
    done
    cat "$out/results.txt"
}

case "${1:-}" in
    prepare) prepare ;;
    run) shift; run "$@" ;;  # PYTHON=... picks another interpreter (default python3)
    *) echo "usage: bash benchmarks/gpu_check.sh prepare | run [SECONDS [SWEEP OPTIONS...]]" >&2; exit 2 ;;
esac
