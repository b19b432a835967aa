#!/bin/sh
# nvcc_compile.sh LOG NVCC ARGS... — runs nvcc and keeps its whole output (ptxas's resource report
# from -Xptxas -v, warnings, errors) in LOG for the judge's resource step, and on stderr for the
# evaluation's log. Exit status: nvcc's.
log="$1"
shift
"$@" > "$log" 2>&1
status=$?
cat "$log" >&2
exit $status
