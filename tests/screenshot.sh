#!/usr/bin/env bash
# Takes a screenshot of the workbench on a virtual X display. Builds nothing.
#
#   tests/screenshot.sh [GUI] STORE [OUT.png]
#
# GUI defaults to $AUTOCOMP_GUI, else build/dev/app/autocomp-workbench. OUT defaults to
# tests/out/main_window.png. Needs Xvfb, xwininfo (x11-utils) and import (imagemagick).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"

gui="${AUTOCOMP_GUI:-$root/build/dev/app/autocomp-workbench}"
if [[ $# -ge 1 && -x "$1" && ! -d "$1" && "$1" != *.sqlite ]]; then
    gui="$1"
    shift
fi
if [[ $# -lt 1 ]]; then
    echo "usage: $0 [GUI] STORE [OUT.png]" >&2
    exit 2
fi
store="$1"
out="${2:-$here/out/main_window.png}"

for tool in Xvfb xwininfo import; do
    command -v "$tool" >/dev/null || { echo "$0: $tool is not installed" >&2; exit 2; }
done
[[ -x "$gui" ]] || { echo "$0: no GUI executable at $gui" >&2; exit 2; }
[[ -f "$store" ]] || { echo "$0: no store at $store" >&2; exit 2; }
mkdir -p "$(dirname "$out")"

# The first display number from :99 up with neither a lock file nor a socket.
display=99
while [[ -e /tmp/.X$display-lock || -e /tmp/.X11-unix/X$display ]]; do
    display=$((display + 1))
done

xvfb_pid=""
gui_pid=""
config_home="$(mktemp -d)"
cleanup() {
    [[ -n "$gui_pid" ]] && kill "$gui_pid" 2>/dev/null || true
    [[ -n "$xvfb_pid" ]] && kill "$xvfb_pid" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$config_home"
}
trap cleanup EXIT

Xvfb ":$display" -screen 0 1600x1000x24 -nolisten tcp >/dev/null 2>&1 &
xvfb_pid=$!
for _ in $(seq 50); do
    DISPLAY=":$display" xwininfo -root >/dev/null 2>&1 && break
    sleep 0.1
done

# A fresh config dir, so saved window geometry from earlier sessions does not change the picture.
DISPLAY=":$display" XDG_CONFIG_HOME="$config_home" QT_QPA_PLATFORM=xcb \
    "$gui" --store "$store" >"$config_home/gui.log" 2>&1 &
gui_pid=$!

# Wait for the main window to be mapped, then a moment for the first paint.
for _ in $(seq 100); do
    if DISPLAY=":$display" xwininfo -root -tree 2>/dev/null | grep -q 'Autocomp Workbench'; then
        break
    fi
    if ! kill -0 "$gui_pid" 2>/dev/null; then
        echo "$0: the GUI exited early:" >&2
        cat "$config_home/gui.log" >&2
        exit 1
    fi
    sleep 0.1
done
sleep 1.5

DISPLAY=":$display" import -window root "$out"
echo "$out"
