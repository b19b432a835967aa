#!/usr/bin/env bash
# Screenshots of a run followed live from another process: `autocomp run` drives a search against the local
# LLM server and the scriptable fake target, while the workbench, opened on the same store, follows it. Shots:
# live-running-early.png, live-running.png (the graph grown, the driver shown), live-paused.png (paused with
# `autocomp pause` from a terminal), live-resumed.png (driven on by `autocomp resume`, another process), and
# live-finished.png. Builds nothing.
#
#   tests/screenshots-live.sh [OUT_DIR]
#
# Uses $AUTOCOMP_GUI / $AUTOCOMP_CLI, else build/dev/app/autocomp-workbench and build/dev/app/autocomp, and the
# test programs fake-llm-server and fake-eval of build/dev/tests. Needs Xvfb, xwininfo (x11-utils) and import
# (imagemagick).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
gui="${AUTOCOMP_GUI:-$root/build/dev/app/autocomp-workbench}"
cli="${AUTOCOMP_CLI:-$root/build/dev/app/autocomp}"
server="${AUTOCOMP_FAKE_LLM_SERVER:-$root/build/dev/tests/fake-llm-server}"
export AUTOCOMP_FAKE_EVAL="${AUTOCOMP_FAKE_EVAL:-$root/build/dev/tests/fake-eval}"
out="${1:-$here/out}"

for tool in Xvfb xwininfo import; do
    command -v "$tool" >/dev/null || { echo "$0: $tool is not installed" >&2; exit 2; }
done
for program in "$gui" "$cli" "$server" "$AUTOCOMP_FAKE_EVAL"; do
    [[ -x "$program" ]] || { echo "$0: no executable at $program" >&2; exit 2; }
done
mkdir -p "$out"

work="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# Answers after 900 ms each: the search takes long enough to watch.
cat >"$work/script.yaml" <<'YAML'
rules:
  - name: code
    match: 'Optimized code:\s*$'
    cycle: true
    responses:
      - {content: "```cpp\n// fake: status=ok latency_ms=90 bench_ms=150;\nvoid kernel() { /* 90 */ }\n```", delay_ms: 900}
      - {content: "```cpp\n// fake: status=ok latency_ms=78 bench_ms=150;\nvoid kernel() { /* 78 */ }\n```", delay_ms: 900}
      - {content: "```cpp\n// fake: status=compile_error latency_ms=1 bench_ms=150;\nvoid kernel() { oops }\n```", delay_ms: 900}
      - {content: "```cpp\n// fake: status=ok latency_ms=95 bench_ms=150;\nvoid kernel() { /* 95 */ }\n```", delay_ms: 900}
      - {content: "```cpp\n// fake: status=ok latency_ms=66 bench_ms=150;\nvoid kernel() { /* 66 */ }\n```", delay_ms: 900}
  - name: fix
    match: 'Fixed code:\s*$'
    cycle: true
    responses:
      - {content: "```cpp\n// fake: status=ok latency_ms=84 bench_ms=150;\nvoid kernel() { /* fixed */ }\n```", delay_ms: 900}
  - name: plan
    match: 'Plan:\s*$'
    cycle: true
    responses:
      - {content: "Chosen optimization: 1. alpha: tile the loops\nTile the loops by 64.", delay_ms: 900}
      - {content: "Chosen optimization: 2. beta: vectorize\nVectorize the inner loop.", delay_ms: 900}
      - {content: "Chosen optimization: 3. gamma: unroll\nUnroll by 4.", delay_ms: 900}
YAML
"$server" --script "$work/script.yaml" >"$work/server.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
    grep -q '^listening on ' "$work/server.out" 2>/dev/null && break
    sleep 0.1
done
url="$(sed -n 's/^listening on //p' "$work/server.out")"
[[ -n "$url" ]] || { echo "$0: the LLM server did not start" >&2; cat "$work/server.out" >&2; exit 1; }

cat >"$work/run.yaml" <<'YAML'
target: fake
problem: kernel
agent: fake
models: {plan: ["vllm::m1"]}
search: {iterations: 6, beam_width: 2, plans_per_parent: 3, code_per_plan: 2, menu_dropout: 0, fix_attempts: 1, seed: 7}
evaluation: {parallel_compiles: 2}
YAML
export AUTOCOMP_DATA_DIR="$root/tests/support/fake_data"
export VLLM_API_BASE="$url/v1" VLLM_API_KEY=screenshot-key
store="$work/live.sqlite"

display=99
while [[ -e /tmp/.X$display-lock || -e /tmp/.X11-unix/X$display ]]; do
    display=$((display + 1))
done
Xvfb ":$display" -screen 0 1600x1000x24 -nolisten tcp >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 50); do
    DISPLAY=":$display" xwininfo -root >/dev/null 2>&1 && break
    sleep 0.1
done

# The workbench first, on an empty store: the run appears in it once the terminal's run has begun.
mkdir -p "$work/config"
DISPLAY=":$display" XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" QT_QPA_PLATFORM=xcb \
    "$gui" --store "$store" --show graph >"$work/gui.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
    DISPLAY=":$display" xwininfo -root -tree 2>/dev/null | grep -q 'Autocomp Workbench' && break
    sleep 0.1
done

shot() {
    DISPLAY=":$display" import -window root "$out/$1.png"
    echo "$out/$1.png"
}
"$cli" run "$work/run.yaml" --store "$store" >"$work/run.out" 2>"$work/run.err" &
run_pid=$!
sleep 4
shot live-running-early
sleep 6
shot live-running
"$cli" pause 1 --store "$store" >"$work/pause.out" 2>&1 || { echo "$0: pause failed:" >&2; cat "$work/pause.out" "$work/run.err" >&2; exit 1; }
wait "$run_pid" || true
sleep 2
shot live-paused
"$cli" resume 1 --store "$store" >"$work/resume.out" 2>"$work/resume.err" &
resume_pid=$!
sleep 4
shot live-resumed
wait "$resume_pid" || { echo "$0: resume ended with $?" >&2; cat "$work/resume.err" >&2; }
sleep 2
shot live-finished
