#!/usr/bin/env bash
# Records the bundled example run: the real CLI against the local scripted LLM server, real
# compilation and timing on this machine. Usage: resources/example/record.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build/dev}
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
"$build/tests/fake-llm-server" --script "$here/example_script.yaml" > "$work/server.out" &
server=$!
for _ in $(seq 50); do grep -q listening "$work/server.out" 2>/dev/null && break; sleep 0.1; done
port=$(grep -o '[0-9]*$' "$work/server.out")
VLLM_API_BASE="http://127.0.0.1:$port/v1" "$build/app/autocomp" run "$here/example_config.yaml" --store "$work/store.sqlite" \
  --label "Example run, recorded with the local test server's scripted responses (not a real LLM); timings are real" --json > "$work/summary.json"
run_id=$(grep -o '"run_id": [0-9]*' "$work/summary.json" | grep -o '[0-9]*$')
"$build/app/autocomp" export "$run_id" --format jsonl --out "$here/../example_run.jsonl" --store "$work/store.sqlite"
cat "$work/summary.json"
