#!/usr/bin/env bash
# Checks what packaging/ produces in a build directory (default build/release, after
# `cmake --workflow --preset package`): the desktop entry, the AppStream metainfo, the man pages and
# the .deb. Prints each tool's output; exits non-zero when one of them reports an error.
# Needs packaging/install-deps.sh --packaging.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
rc=0
run() {
  echo "\$ $*"
  "$@" || rc=1
}
desktop=$(ls "$build"/packaging/*.desktop 2>/dev/null | head -n 1)
metainfo=$(ls "$build"/packaging/*.metainfo.xml 2>/dev/null | head -n 1)
deb=$(ls -t "$build"/autocomp-workbench_*.deb 2>/dev/null | head -n 1)
[ -n "$desktop" ] && [ -n "$metainfo" ] || { echo "lint-packages.sh: configure $build first" >&2; exit 2; }

run desktop-file-validate "$desktop"
run appstreamcli validate --no-net "$metainfo"
for page in "$build"/packaging/man/*.1; do
  echo "\$ man --warnings -l $page"
  warnings=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null)
  [ -z "$warnings" ] || { echo "$warnings"; rc=1; }
done
if [ -n "$deb" ]; then
  echo "\$ lintian $deb"
  out=$(lintian --display-info "$deb" 2>&1)
  echo "$out"
  errors=$(grep -c '^E: ' <<<"$out")
  echo "lintian: $errors errors, $(grep -c '^W: ' <<<"$out") warnings, $(grep -c '^I: ' <<<"$out") infos"
  [ "$errors" = 0 ] || rc=1
else
  echo "lint-packages.sh: no .deb in $build (cmake --workflow --preset package)" >&2
  rc=1
fi
exit $rc
