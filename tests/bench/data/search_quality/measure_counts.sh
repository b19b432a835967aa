#!/bin/sh
# Measures the "true" cost of each correct search_quality variant: instructions executed by one call of
# rmsnorm at the problem's timed shape (rows=2048, cols=8192), counted by valgrind's callgrind
# (--toggle-collect=rmsnorm, callees included) on an -O3 -march=x86-64-v3 build, the flags of the
# cpu-instructions target. (That target itself counts at the smallest shape, 3x1, where per-row setup
# dominates and vector code costs more than scalar code; at the timed shape the ranking is the real one.)
# Writes counts.tsv beside this script: variant<TAB>instructions.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/driver.cpp" <<'CPP'
#include <cstdlib>
#include <vector>
extern "C" void rmsnorm(int rows, int cols, const float* x, const float* weight, float* y);
int main() {
    const int rows = 2048, cols = 8192;
    std::vector<float> x(size_t(rows) * cols), w(cols), y(size_t(rows) * cols);
    unsigned s = 12345;
    for (float& v : x) { s = s * 1664525u + 1013904223u; v = float(s >> 8) / 16777216.0f * 2.0f - 1.0f; }
    for (float& v : w) { s = s * 1664525u + 1013904223u; v = float(s >> 8) / 16777216.0f; }
    rmsnorm(rows, cols, x.data(), w.data(), y.data());
    return y[12345] == 42.0f ? 1 : 0;
}
CPP
: > "$here/counts.tsv.new"
for f in "$here"/../../../../sols/cpu/rmsnorm/rmsnorm_start.cpp "$here"/correct_*.cpp; do
    name=$(basename "$f" .cpp)
    [ "$name" = rmsnorm_start ] && name=start
    c++ -O3 -march=x86-64-v3 -std=c++17 -fno-inline -o "$work/$name" "$work/driver.cpp" "$f"
    valgrind --tool=callgrind --toggle-collect=rmsnorm --callgrind-out-file="$work/$name.out" "$work/$name" 2>/dev/null
    count=$(callgrind_annotate "$work/$name.out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1; exit}')
    printf '%s\t%s\n' "$name" "$count" >> "$here/counts.tsv.new"
done
mv "$here/counts.tsv.new" "$here/counts.tsv"
cat "$here/counts.tsv"
