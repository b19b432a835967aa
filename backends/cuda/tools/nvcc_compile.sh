#!/bin/sh
# nvcc_compile.sh LOG ARGS... — runs the nvcc found on PATH with ARGS, plus an rpath to that
# toolkit's runtime library (the worker and the candidate share its libcudart.so), and keeps nvcc's
# whole output (ptxas's resource report from -Xptxas -v, warnings, errors) in LOG for the judge's
# resource step, and on stderr for the evaluation's log. Exit status: nvcc's.
log="$1"
shift
nvcc=$(command -v nvcc) || { echo "nvcc is not on PATH ($PATH)" | tee "$log" >&2; exit 127; }
lib=$(cd "$(dirname "$nvcc")/.." && pwd)/lib64
"$nvcc" "$@" -Xlinker "-rpath=$lib" > "$log" 2>&1
status=$?
cat "$log" >&2
exit $status
