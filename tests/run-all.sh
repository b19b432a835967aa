#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine: installs what is missing, builds the `dev`
# preset, runs every test headless and ends with ctest's summary. Benchmarks (label `bench`) are
# left to `ctest --preset bench`.
set -euo pipefail
cd "$(dirname "$0")/.."
# --rvv, --kernelbench, --tpu: the optional rvv, kernelbench and tpu targets' tools, so their tests run
# rather than skip; the tpu target's jax comes from PyPI into its virtual environment (the default place,
# ~/.local/share/autocomp-workbench/venvs/tpu, where its `python` setting looks).
packaging/install-deps.sh --build --runtime --test --rvv --kernelbench --tpu
# Without PyPI (an offline machine, or one whose TLS goes through a proxy it does not trust) the suite
# still runs: tst_tpu then skips and says why, and this says it first.
if ! packaging/setup-python-env.sh tpu; then
  echo "run-all: the tpu target's Python environment could not be made (is PyPI reachable?); tst_tpu will skip" >&2
fi
cmake --preset dev >/dev/null
cmake --build --preset dev
export QT_QPA_PLATFORM=offscreen
# Tests that talk to the OS keychain get a private session bus (dbus-run-session) and their own
# gnome-keyring; everything else runs as is.
exec ctest --preset dev -j "$(nproc)"
