#!/bin/bash
# gpu_selftest.sh — the cuda target's run path on a machine with an NVIDIA GPU, without Qt or the
# workbench: builds the judges and workers as backend.yaml's setup steps do, then evaluates, for
# every problem in sols/cuda, the shipped start code, a hand-written faster kernel and a wrong one
# (tests/integration/data/cuda), plus reward hacks and compile-path cases on gemm, with the same
# judge modes and arguments as backend.yaml's steps (a file in /dev/shm stands in for the memfd the
# workbench's runner creates). Prints one line per evaluation and PASS/FAIL per expectation.
#
#   backends/cuda/tools/gpu_selftest.sh [--arch sm_90] [--problems "gemm softmax"] [--trials 30] [--keep DIR]
#
# Needs nvcc (on PATH, or in $CUDA_HOME/bin, default /usr/local/cuda/bin), c++ with OpenMP, nm, python3 (only to read
# problem.yaml and result.json). Exit status 0 when every expectation held.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"
arch=""
problems="gemm softmax layernorm conv2d causal_attention gemm_fp16"
trials=30
keep=""
while [ $# -gt 0 ]; do
    case "$1" in
    --arch) arch=$2; shift 2 ;;
    --problems) problems=$2; shift 2 ;;
    --trials) trials=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
if [ -z "$arch" ]; then
    arch=$(python3 "$here/cuda_device_check.py" --arch 2>/dev/null) || arch=sm_90
fi
work=${keep:-$(mktemp -d /tmp/cuda-selftest-XXXXXX)}
mkdir -p "$work"
inc="-I$repo/backends/cuda/include -I$repo/backends/common/include"
failures=0
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
expect() { # description, condition result (0 = held)
    if [ "$2" -eq 0 ]; then echo "PASS  $1"; else echo "FAIL  $1"; failures=$((failures + 1)); fi
}

echo "== device"
python3 "$here/cuda_device_check.py" || { echo "no usable GPU: the run path cannot be tested here"; exit 3; }
echo "arch: $arch; nvcc: $(command -v nvcc), $(nvcc --version | tail -1)"

echo "== building the judge and the workers (setup steps)"
t0=$(date +%s.%N)
c++ -O2 -std=c++17 -fopenmp $inc -c -o "$work/judge_core.o" "$repo/backends/cuda/tools/judge_core.cpp" || exit 2
pids=""
for p in $problems; do
    d=$repo/sols/cuda/$p
    ref=$(ls "$d"/*_reference.cpp)
    ( c++ -O2 -std=c++17 -fopenmp $inc -o "$work/judge-$p" "$d/harness.cpp" "$ref" "$work/judge_core.o" &&
      sh "$here/nvcc_compile.sh" "$work/worker-$p.nvcc.txt" -O2 -std=c++17 -x cu -DAUTOCOMP_CUDA_WORKER -arch="$arch" -cudart shared $inc \
          -o "$work/worker-$p" "$d/harness.cpp" -ldl ) > "$work/build-$p.log" 2>&1 &
    pids="$pids $!"
done
build_ok=0
for pid in $pids; do wait "$pid" || build_ok=1; done
expect "judges and workers build ($(elapsed "$t0") s)" $build_ok
[ $build_ok -eq 0 ] || { cat "$work"/build-*.log; exit 2; }

# problem.yaml (flow style, one line per key) -> the placeholders' values
problem_values() {
    python3 - "$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
def line(key):
    m = re.search(r'^' + key + r':\s*(.*)$', text, re.M)
    return m.group(1).split('#')[0].strip() if m else ''
def pairs(s):
    return re.findall(r'(\w+):\s*([^,{}\[\]]+|\[[^\]]*\])', s)
shapes = [','.join(f'{k}={v.strip()}' for k, v in pairs(m)) for m in re.findall(r'\{([^}]*)\}', line('shapes'))]
ranges = ','.join(f'{k}={v.strip("[] ").replace(", ", ":").replace(",", ":")}' for k, v in pairs(line('shape_ranges').strip('{}')))
tol = ','.join(f'{k}={float(v)}' for k, v in pairs(line('tolerance').strip('{}')))
bench = int(line('bench_shape') or 0)
print(line('start'))
print(';'.join(shapes))
print(shapes[bench])
print(ranges)
print(line('random_shapes') or '0')
print(tol)
PY
}

field() { # result.json key
    python3 -c "import json,sys; r=json.load(open(sys.argv[1])); v=r
for k in sys.argv[2].split('.'):
    v = v.get(k) if isinstance(v, dict) else None
print('' if v is None else (v if not isinstance(v, list) else chr(10).join(v)))" "$1" "$2" 2>/dev/null
}

judged() { # mode problem so args... : a worker on a fresh channel and the judge driving it
    local mode=$1 p=$2 so=$3
    shift 3
    local chan
    chan=$(mktemp /dev/shm/autocomp-channel-XXXXXX 2>/dev/null || mktemp)
    truncate -s 1G "$chan"
    $worker_prefix "$work/worker-$p" --channel-fd 3 --object "$so" --arch "$arch" 3<>"$chan" 2>>"$dir/worker.log" &
    local wpid=$!
    "$work/judge-$p" "$mode" --channels 3 --worker-pids "$wpid" "$@" 3<>"$chan" 2>>"$dir/judge.log"
    local rc=$?
    kill "$wpid" 2>/dev/null
    wait "$wpid" 2>/dev/null
    rm -f "$chan"
    return $rc
}

# One evaluation, as backend.yaml's steps: prints a line and leaves $dir/judge/result.json.
evaluate() { # problem name source
    local p=$1 name=$2 src=$3
    dir=$work/$p-$name
    rm -rf "$dir"
    mkdir -p "$dir/judge"
    cp "$src" "$dir/candidate.cu"
    local vals
    vals=$(problem_values "$repo/sols/cuda/$p/problem.yaml")
    local shapes bench ranges nrandom tol
    shapes=$(echo "$vals" | sed -n 2p)
    bench=$(echo "$vals" | sed -n 3p)
    ranges=$(echo "$vals" | sed -n 4p)
    nrandom=$(echo "$vals" | sed -n 5p)
    tol=$(echo "$vals" | sed -n 6p)
    local seed=$(( (RANDOM << 30) ^ (RANDOM << 15) ^ RANDOM ))
    local t0 status=ok step=report
    t0=$(date +%s.%N)
    if ! sh "$here/nvcc_compile.sh" "$dir/ptxas.txt" -O3 -std=c++17 -arch="$arch" -Xptxas -v -shared -Xcompiler -fPIC -cudart shared \
        -Xlinker -z,defs -o "$dir/candidate.so" "$dir/candidate.cu" 2>"$dir/compile.log"; then
        status=compile_error
        step=compile
    fi
    compile_s=$(elapsed "$t0")
    if [ $status = ok ]; then
        "$work/judge-$p" resources --ptxas "$dir/ptxas.txt" --object "$dir/candidate.so" --arch "$arch" --out "$dir/judge/resources.txt" \
            --result "$dir/judge/result.json" 2>>"$dir/judge.log" || { status=$(field "$dir/judge/result.json" status); step=resources; }
    fi
    if [ $status = ok ]; then
        judged check "$p" "$dir/candidate.so" --seed "$seed" --shapes "$shapes" --shape-ranges "$ranges" --random-shapes "$nrandom" \
            --tolerance "$tol" --out "$dir/judge/check.txt" --result "$dir/judge/result.json"
        case $? in 0) ;; 1) status=$(field "$dir/judge/result.json" status); step=check ;; *) status=error; step=check ;; esac
    fi
    if [ $status = ok ]; then
        judged bench "$p" "$dir/candidate.so" --seed "$seed" --shapes "$bench" --tolerance "$tol" --trials "$trials" \
            --out "$dir/judge/timings.txt" --result "$dir/judge/result.json"
        case $? in 0) ;; 1) status=$(field "$dir/judge/result.json" status); step=bench ;; *) status=error; step=bench ;; esac
    fi
    if [ $status = ok ]; then
        "$work/judge-$p" report --resources "$dir/judge/resources.txt" --check "$dir/judge/check.txt" --timings "$dir/judge/timings.txt" \
            --shapes "$bench" --arch "$arch" --result "$dir/judge/result.json" 2>>"$dir/judge.log" || { status=error; step=report; }
    fi
    local eval_s latency=""
    eval_s=$(elapsed "$t0")
    [ $status != ok ] || latency=$(field "$dir/judge/result.json" metrics.latency_ms.median)
    printf '%-17s %-16s %-14s compile %5s s  eval %6s s  latency_ms %-10s TFLOP/s %-8s GB/s %s\n' "$p" "$name" "$status@$step" \
        "$compile_s" "$eval_s" "${latency:--}" "$(field "$dir/judge/result.json" metrics.tflops)" "$(field "$dir/judge/result.json" metrics.gbps)"
    last_status=$status
    last_latency=${latency:-0}
    if [ $status != ok ] && [ $status != compile_error ]; then
        field "$dir/judge/result.json" log | head -4 | sed 's/^/      /'
        tail -q -n 2 "$dir/judge.log" "$dir/worker.log" 2>/dev/null | sed 's/^/      /'
    fi
    if [ $status = compile_error ]; then
        grep -m2 "error" "$dir/compile.log" | sed 's/^/      /'
    fi
}

worker_prefix=""

faster() { python3 -c "import sys; sys.exit(0 if 0 < float(sys.argv[1]) < float(sys.argv[2]) else 1)" "$1" "$2"; }

echo "== evaluations (problem, candidate, status@step, nvcc time, whole evaluation time, median event time)"
for p in $problems; do
    start=$(problem_values "$repo/sols/cuda/$p/problem.yaml" | sed -n 1p)
    evaluate "$p" start "$repo/sols/cuda/$p/$start"
    s_status=$last_status s_lat=$last_latency
    expect "$p: the start code is correct" "$([ "$s_status" = ok ]; echo $?)"
    evaluate "$p" fast "$repo/tests/integration/data/cuda/${p}_fast.cu"
    expect "$p: the hand-written kernel is correct" "$([ "$last_status" = ok ]; echo $?)"
    expect "$p: the hand-written kernel is faster than the start ($last_latency ms vs $s_lat ms)" "$(faster "$last_latency" "$s_lat"; echo $?)"
    evaluate "$p" wrong "$repo/tests/integration/data/cuda/${p}_wrong.cu"
    expect "$p: the wrong kernel is incorrect" "$([ "$last_status" = incorrect ]; echo $?)"
    if [ "$p" = gemm ]; then
        evaluate gemm other_stream "$repo/tests/integration/data/cuda/gemm_other_stream.cu"
        expect "gemm: work left on another stream is caught" "$( [ "$last_status" = rejected ] || [ "$last_status" = incorrect ]; echo $?)"
        grep -q "WORK AFTER RETURN\|never written" "$dir/judge/result.json"
        expect "gemm: ... and the log says why" $?
        evaluate gemm writes_input "$repo/tests/integration/data/cuda/gemm_writes_input.cu"
        expect "gemm: a kernel writing its input is rejected" "$([ "$last_status" = rejected ]; echo $?)"
        evaluate gemm spills "$repo/tests/integration/data/cuda/gemm_spills.cu"
        expect "gemm: the register-starved kernel is correct" "$([ "$last_status" = ok ]; echo $?)"
        grep -q "REGISTER SPILLS" "$dir/judge/result.json"
        expect "gemm: ... and its spills are in the feedback" $?
        evaluate gemm syntax_error "$repo/tests/integration/data/cuda/gemm_syntax_error.cu"
        expect "gemm: a syntax error is a compile_error" "$([ "$last_status" = compile_error ]; echo $?)"
    fi
done

if command -v ncu > /dev/null && [ -f "$work/gemm-fast/candidate.so" ]; then
    echo "== ncu (the optional profile step) on gemm/fast"
    dir=$work/gemm-fast
    mkdir -p "$dir/ncu"
    bench=$(problem_values "$repo/sols/cuda/gemm/problem.yaml" | sed -n 3p)
    worker_prefix="ncu --csv --log-file $dir/ncu/ncu.csv --target-processes all --kernel-name-base demangled --kernel-name regex:^(?!autocomp_) --metrics gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct"
    judged profile gemm "$dir/candidate.so" --seed 1 --shapes "$bench" --ncu-log "$dir/ncu/ncu.csv" --out "$dir/judge/ncu.txt"
    expect "ncu: the profile step reports the candidate's kernel" $?
    worker_prefix=""
    sed 's/^/  /' "$dir/judge/ncu.txt" 2>/dev/null
    head -5 "$dir/ncu/ncu.csv" 2>/dev/null | sed 's/^/  csv: /'
fi

echo "== feedback of gemm/fast"
field "$work/gemm-fast/judge/result.json" feedback 2>/dev/null | sed 's/^/  /'

echo "== the device's limits against the target's table for $arch (backends/cuda/include/autocomp_cuda_judge.h)"
chk=$(ls "$work"/*-fast/judge/check.txt 2>/dev/null | head -1)
if [ -n "$chk" ]; then
    grep -E "^(device|cc|sm_count|clock_khz|smem_per_sm|max_threads_per_sm|max_blocks_per_sm|regs_per_sm|l2_bytes|copy_gbps) " "$chk" | sed 's/^/  /'
    # threads, blocks, shared memory (bytes) and registers per SM in the judge's occupancy table
    case $arch in
    sm_80) table="2048 32 167936 65536" ;;
    sm_89) table="1536 24 102400 65536" ;;
    sm_90) table="2048 32 233472 65536" ;;
    *) table="" ;;
    esac
    device=$(for k in max_threads_per_sm max_blocks_per_sm smem_per_sm regs_per_sm; do awk -v k="$k" '$1 == k { printf "%d ", $2 }' "$chk"; done)
    [ "${device% }" = "$table" ]
    expect "the device's per-SM limits ($device) are the table's for $arch ($table)" $?
fi

echo "== CUDA under the workbench's default address-space limit (ProcessLimits::addressSpaceBytes, 8 GiB)"
if (ulimit -v $((8 * 1024 * 1024)); python3 "$here/cuda_device_check.py" > "$work/ulimit.txt" 2>&1); then
    echo "  cuInit and a context work with RLIMIT_AS = 8 GiB: $(tail -1 "$work/ulimit.txt")"
else
    echo "  CUDA FAILS with RLIMIT_AS = 8 GiB: $(tail -1 "$work/ulimit.txt") -- the runner must lift the limit for this target's workers"
fi

echo "== gpumode: its availability probe and its judge/worker plumbing (tests/gpu/test_gpumode_tools.py)"
gm_python=${GPUMODE_PYTHON:-python3}
"$gm_python" "$repo/backends/gpumode/tools/gpumode_judge.py" probe
expect "gpumode: $gm_python has PyTorch with CUDA and sees the GPU" $?
"$gm_python" -m unittest discover -s "$repo/tests/gpu" -p test_gpumode_tools.py > "$work/gpumode-tests.log" 2>&1
expect "gpumode: the tools' tests pass ($(tail -1 "$work/gpumode-tests.log"))" $?

echo "== $failures expectation(s) failed; files in $work"
[ $failures -eq 0 ]
