#!/usr/bin/env bash
# Renders each main view of the workbench on a virtual X display into tests/out/*.png: the graph, the tree,
# the chart and the menu insights (middle pane), each inspector tab (plan, code, evaluation, prompts, LLM, diff),
# the diff widened and unified, a search, the runs comparison and the New Target wizard's plan, on the bundled
# example run, in every size and theme asked for: each file is named VIEW-THEME-WxH.png (e.g.
# code-dark-1280x800.png). Builds nothing.
#
#   tests/screenshots.sh [OUT_DIR]
#   AUTOCOMP_SHOT_SIZES="1280x800 1920x1080" (default) and AUTOCOMP_SHOT_THEMES="light dark" (default) choose them;
#   the window fills the virtual screen of each size.
#
# Uses $AUTOCOMP_GUI / $AUTOCOMP_CLI, else build/dev/app/autocomp-workbench and build/dev/app/autocomp.
# Needs Xvfb and xwininfo (x11-utils). The window grabs itself (--screenshot), so no window manager is needed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
gui="${AUTOCOMP_GUI:-$root/build/dev/app/autocomp-workbench}"
cli="${AUTOCOMP_CLI:-$root/build/dev/app/autocomp}"
out="${1:-$here/out}"

for tool in Xvfb xwininfo; do
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
    "new-target:--show new-target --new-target-docs $docs"
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
