#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine: installs what is missing, builds the `dev`
# preset, runs every test headless and ends with ctest's summary. Benchmarks (label `bench`) are
# left to `ctest --preset bench`.
set -euo pipefail
cd "$(dirname "$0")/.."
# --rvv, --kernelbench, --tpu: the optional rvv, kernelbench and tpu targets' tools, so their tests run
# rather than skip; the tpu target's jax comes from PyPI into its virtual environment (the default place,
# ~/.local/share/autocomp-workbench/venvs/tpu), which the tests find through AUTOCOMP_TPU_PYTHON.
packaging/install-deps.sh --build --runtime --test --rvv --kernelbench --tpu
# Without PyPI (an offline machine, or one whose TLS goes through a proxy it does not trust) the suite
# still runs: tst_tpu then skips and says why, and this says it first.
if tpu_python=$(packaging/setup-python-env.sh tpu --print-python | tail -n 1) && [ -x "$tpu_python" ]; then
  export AUTOCOMP_TPU_PYTHON=$tpu_python
else
  echo "run-all: the tpu target's Python environment could not be made (is PyPI reachable?); tst_tpu will skip" >&2
fi
cmake --preset dev >/dev/null
cmake --build --preset dev
export QT_QPA_PLATFORM=offscreen
# Every run starts cold, as a new user's first evaluation does: the tests get a cache, data and config
# directory of their own, made empty for this run (the judges, rooflines and worker programs are built
# once per run, in the sandbox), so nothing an earlier run or the developer's own use left in ~/.cache or
# ~/.local/share can hide a cold-start bug. Removed afterwards; AUTOCOMP_KEEP_TEST_HOME=1 keeps it.
cold=$(mktemp -d "${TMPDIR:-/tmp}/autocomp-tests-XXXXXX")
mkdir -p "$cold/cache" "$cold/data" "$cold/config"
export XDG_CACHE_HOME=$cold/cache XDG_DATA_HOME=$cold/data XDG_CONFIG_HOME=$cold/config
unset AUTOCOMP_STORE AUTOCOMP_DATA_DIR
echo "run-all: tests run with an empty cache and data directory ($cold)"
# Tests that talk to the OS keychain get a private session bus (dbus-run-session) and their own
# gnome-keyring; everything else runs as is.
start=$(date +%s)
set +e
ctest --preset dev -j "$(nproc)"
rc=$?
set -e
echo "run-all: the suite took $(( $(date +%s) - start )) s from a cold cache"
[ "${AUTOCOMP_KEEP_TEST_HOME:-0}" = 1 ] || rm -rf "$cold"
exit $rc
