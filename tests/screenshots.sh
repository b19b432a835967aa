#!/usr/bin/env bash
# Renders every view the workbench can --show on a virtual X display into tests/out/*.png: the graph, the tree,
# the chart and the menu insights (middle pane), each inspector tab (plan, code, evaluation, prompts, LLM, diff),
# the diff widened and unified, a search, the runs comparison, the parameter studies, the New Run dialog and the
# New Target wizard's plan, on the bundled example run; and the graph of a generated 200-candidate run
# (graph-200: collapsed pruned and failed subtrees, labels at the detail the zoom allows). In every size and
# theme asked for: each file is named VIEW-THEME-WxH.png (e.g. code-dark-1280x800.png). Builds nothing.
#
#   tests/screenshots.sh [OUT_DIR]
#   AUTOCOMP_SHOT_SIZES="1280x800 1920x1080" (default) and AUTOCOMP_SHOT_THEMES="light dark" (default) choose them;
#   the window fills the virtual screen of each size.
#
# Uses $AUTOCOMP_GUI / $AUTOCOMP_CLI, else build/dev/app/autocomp-workbench and build/dev/app/autocomp.
# Needs Xvfb, xwininfo (x11-utils) and python3 (to write the 200-candidate run). The window grabs itself
# (--screenshot), so no window manager is needed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
gui="${AUTOCOMP_GUI:-$root/build/dev/app/autocomp-workbench}"
cli="${AUTOCOMP_CLI:-$root/build/dev/app/autocomp}"
out="${1:-$here/out}"

for tool in Xvfb xwininfo python3; do
    command -v "$tool" >/dev/null || { echo "$0: $tool is not installed" >&2; exit 2; }
done
[[ -x "$gui" ]] || { echo "$0: no GUI executable at $gui" >&2; exit 2; }
[[ -x "$cli" ]] || { echo "$0: no CLI executable at $cli" >&2; exit 2; }
mkdir -p "$out"

work="$(mktemp -d)"
xvfb_pid=""
cleanup() {
    [[ -n "$xvfb_pid" ]] && kill "$xvfb_pid" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

store="$work/example.sqlite"
"$cli" import "$root/resources/example_run.jsonl" --store "$store" >/dev/null
# Two runs side by side: the example run and the GUI tests' sample run (a later --store wins).
compare="$work/compare.sqlite"
"$cli" import "$root/resources/example_run.jsonl" --store "$compare" >/dev/null
"$cli" import "$root/tests/gui/data/sample_run.jsonl" --store "$compare" >/dev/null
# A finished run of 200 candidates over 10 iterations, a beam of 4 (15 % compile errors, 10 % incorrect, 5 %
# failed, the rest correct at 0.6-1.2 times their parent's latency), written as an archive the CLI imports.
big="$work/big.sqlite"
python3 - >"$work/big.jsonl" <<'EOF'
import json, random
random.seed(1111)
strategies = ["Tile the loops for the cache", "Vectorize the innermost loop", "Unroll the k loop by 4",
              "Reorder the loops i-k-j", "Prefetch the next tile of B", "Pack B into a contiguous panel"]
rows = [dict(id=1, parent=0, iteration=0, status="correct", score=250.0)]
score, beam, next_id = {1: 250.0}, [1], 2
for iteration in range(1, 11):
    correct = []
    for i in range(199 - (next_id - 2) if iteration == 10 else 19):
        parent, roll = beam[i % len(beam)], random.random()
        row = dict(id=next_id, parent=parent, iteration=iteration, status="correct", score=None)
        next_id += 1
        if roll < 0.15: row["status"] = "compile_error"
        elif roll < 0.25: row["status"] = "incorrect"
        elif roll < 0.3: row["status"] = "failed"
        else:
            row["score"] = score[row["id"]] = score[parent] * (0.6 + 0.6 * random.random())
            correct.append((row["score"], row["id"]))
        rows.append(row)
    beam = [id for _, id in sorted(correct)[:4]]
best = min(score, key=score.get)
print(json.dumps(dict(type="run", id=1, agent="cpu", target="cpu", problem="gemm", metric="latency_ms", state="finished",
                      iteration=10, baseline_score=250.0, best_score=score[best], best_candidate_id=best,
                      created_at="2026-11-27T10:00:00.000Z", label="200 generated candidates (tests/screenshots.sh)",
                      config_yaml="target: cpu\nproblem: gemm\nagent: cpu\n", stop_reason="completed 10 iterations")))
for row in rows:
    record = dict(type="candidate", id=row["id"], parent_id=row["parent"], iteration=row["iteration"], status=row["status"],
                  origin="root" if row["parent"] == 0 else "llm", menu_item="" if row["parent"] == 0 else strategies[row["id"] % 6],
                  plan="", code="// candidate %d\n" % row["id"], in_beam=row["id"] in beam, feedback=[], flags=[],
                  error="" if row["status"] == "correct" else "generated failure")
    if row["score"] is not None:
        record["score"] = row["score"]
    print(json.dumps(record))
print(json.dumps(dict(type="end", lines=len(rows) + 1, candidates=len(rows), steps=0, llm_calls=0, llm_usd=0)))
EOF
"$cli" import "$work/big.jsonl" --store "$big" >/dev/null
# Documents for the New Target wizard's plan page.
docs="$work/docs"
mkdir -p "$docs"
printf 'Example NPU: 4 tiles, each with a 256 KiB scratchpad and a 16x16 int8 systolic array.\n' >"$docs/architecture.txt"
printf '<h1>Example NPU ISA</h1><h2>Data movement</h2><h3>zload</h3><pre>zload(dst, src, rows)</pre>\n' >"$docs/isa.html"

# name: the options that bring it to the front. Candidate 2 is a child of the root with different code.
shots=(
    "graph:--show graph --show plan"
    "tree:--show tree --show code"
    "chart:--show chart --show evaluation"
    "plan:--show tree --show plan --candidate 2"
    "code:--show tree --show code --candidate 2"
    "evaluation:--show tree --show evaluation --candidate 2"
    "prompts:--show tree --show prompts --candidate 2"
    "llm:--show tree --show llm --candidate 2"
    "diff:--show graph --show diff --candidate 2"
    "menu:--show menu"
    "wide-diff:--show wide-diff --candidate 2"
    "unified-diff:--show wide-diff --show unified-diff --candidate 2"
    "search:--show graph --show plan --search tile"
    "compare:--store $compare --show compare"
    # The store's parameter studies (autocomp study); this store has none yet: the view as a new user sees it.
    "study:--show study"
    "new-run:--show new-run"
    "new-target:--show new-target --new-target-docs $docs"
    "graph-200:--store $big --show graph --show plan"
)
start_display() { # $1: WxH
    display=99
    while [[ -e /tmp/.X$display-lock || -e /tmp/.X11-unix/X$display ]]; do
        display=$((display + 1))
    done
    Xvfb ":$display" -screen 0 "${1}x24" -nolisten tcp >/dev/null 2>&1 &
    xvfb_pid=$!
    for _ in $(seq 50); do
        DISPLAY=":$display" xwininfo -root >/dev/null 2>&1 && break
        sleep 0.1
    done
}

for size in ${AUTOCOMP_SHOT_SIZES:-1280x800 1920x1080}; do
    start_display "$size"
    for theme in ${AUTOCOMP_SHOT_THEMES:-light dark}; do
        for shot in "${shots[@]}"; do
            name="${shot%%:*}"
            read -r -a options <<<"${shot#*:}"
            # A fresh config dir each time, so saved window geometry does not change the picture; it holds the theme.
            config="$(mktemp -d -p "$work")"
            mkdir -p "$config/autocomp"
            printf '[appearance]\ntheme=%s\n' "$theme" >"$config/autocomp/autocomp-workbench.conf"
            file="$out/$name-$theme-$size.png"
            DISPLAY=":$display" XDG_CONFIG_HOME="$config" QT_QPA_PLATFORM=xcb \
                "$gui" --store "$store" "${options[@]}" --screenshot "$file" -geometry "$size+0+0" >"$config/gui.log" 2>&1 \
                || { echo "$0: $name ($theme, $size) failed:" >&2; cat "$config/gui.log" >&2; exit 1; }
            echo "$file"
        done
    done
    kill "$xvfb_pid" 2>/dev/null || true
    wait "$xvfb_pid" 2>/dev/null || true
    xvfb_pid=""
done
