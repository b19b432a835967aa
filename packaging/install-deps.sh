#!/usr/bin/env bash
# Installs the Debian 12 packages Autocomp Workbench needs, and only the missing ones.
# Idempotent and quiet when everything is present.
#   packaging/install-deps.sh [--build] [--runtime] [--test]   (no flag: build + runtime)
set -euo pipefail

build_pkgs=(cmake ninja-build g++ ccache pkg-config git
            qt6-base-dev qt6-charts-dev qtkeychain-qt6-dev libyaml-cpp-dev libgit2-dev
            libgl-dev libvulkan-dev libxkbcommon-dev)
# The CPU target compiles and runs candidates with the host compiler; bubblewrap sandboxes them;
# OpenBLAS is the gemm vendor baseline; valgrind counts instructions for the cpu-instructions target.
runtime_pkgs=(libqt6sql6-sqlite libqt6gui6 libqt6charts6 g++ bubblewrap libopenblas-dev valgrind)
test_pkgs=(xvfb xauth x11-utils imagemagick dbus gnome-keyring libsecret-tools)

want=()
for arg in "$@"; do
  case "$arg" in
    --build) want+=("${build_pkgs[@]}") ;;
    --runtime) want+=("${runtime_pkgs[@]}") ;;
    --test) want+=("${test_pkgs[@]}") ;;
    -h|--help) sed -n '2,5p' "$0"; exit 0 ;;
    *) echo "install-deps.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done
[ ${#want[@]} -gt 0 ] || want=("${build_pkgs[@]}" "${runtime_pkgs[@]}")

missing=()
for pkg in "${want[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

# De-duplicate while keeping order.
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | awk '!seen[$0]++')
echo "install-deps.sh: installing ${missing[*]}" >&2
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps.sh: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
