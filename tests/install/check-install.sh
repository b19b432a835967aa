#!/usr/bin/env bash
# check-install.sh CMAKE BUILD_DIR APP_ID: installs BUILD_DIR into a temporary prefix, moves the prefix
# (as an unpacked tarball may be) and checks what a user of the installed copy would meet: the FHS
# files, and `autocomp` finding its targets, problems and agents next to itself and evaluating the
# gemm start code correctly. Needs jq.
set -euo pipefail
cmake=$1 build=$2 app_id=$3
command -v jq >/dev/null || { echo "check-install.sh: jq is not installed (packaging/install-deps.sh --test)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/autocomp-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$cmake" --install "$build" --prefix "$work/prefix" >"$work/install.log" || { cat "$work/install.log"; exit 1; }
mv "$work/prefix" "$work/moved"
prefix=$work/moved
fail() { echo "FAIL: $*" >&2; exit 1; }

for f in bin/autocomp bin/autocomp-workbench \
         share/autocomp-workbench/resources/prices.yaml \
         share/autocomp-workbench/backends/cpu/backend.yaml \
         share/autocomp-workbench/agents/cpu/agent_config.yaml \
         "share/applications/$app_id.desktop" "share/metainfo/$app_id.metainfo.xml" \
         "share/icons/hicolor/scalable/apps/$app_id.svg" \
         share/man/man1/autocomp.1.gz share/man/man1/autocomp-workbench.1.gz \
         share/doc/autocomp-workbench/copyright share/doc/autocomp-workbench/changelog.gz; do
  [ -e "$prefix/$f" ] || fail "$f is not installed"
done

# Only the installed copy may answer: no data dir from the environment, an empty user data dir, a
# private store. The evaluator's per-machine cache ($XDG_CACHE_HOME) is the user's, as for any run.
unset AUTOCOMP_DATA_DIR
export XDG_DATA_HOME=$work/data AUTOCOMP_STORE=$work/runs.sqlite
cli=$prefix/bin/autocomp

"$prefix/bin/autocomp-workbench" --version | grep -qx "autocomp-workbench [0-9.]*" || fail "autocomp-workbench --version"
targets=$("$cli" targets) || fail "autocomp targets exited $?"
echo "$targets"
grep -q "^cpu " <<<"$targets" || fail "autocomp targets does not list cpu"
! grep -q "  invalid: " <<<"$targets" || fail "an installed target does not load"
problems=$("$cli" problems cpu) || fail "autocomp problems cpu exited $?"
echo "problems cpu: ${problems//$'\n'/ }"
grep -qx cpu/gemm <<<"$problems" || fail "autocomp problems cpu does not list gemm"
agents=$("$cli" agents) || fail "autocomp agents exited $?"
grep -qx cpu <<<"$agents" || fail "autocomp agents does not list cpu"

code=$prefix/share/autocomp-workbench/sols/cpu/gemm/gemm_start.cpp
status=0
result=$("$cli" eval --target cpu --problem gemm --code "$code" --json) || status=$?
echo "$result" | jq -c '{status, correct, latency_ms: .metrics.latency_ms.median}' 2>/dev/null || echo "$result"
[ $status = 0 ] || fail "autocomp eval exited $status"
jq -e '.status == "ok" and .correct == true' <<<"$result" >/dev/null || fail "the gemm start code was not evaluated ok and correct"
echo "PASS: the installed copy in $prefix works without AUTOCOMP_DATA_DIR"
