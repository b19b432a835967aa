#!/usr/bin/env bash
# Installs what is missing, builds the release preset and starts the workbench.
set -euo pipefail
cd "$(dirname "$0")/.."
packaging/install-deps.sh --build --runtime
cmake --preset release >/dev/null
cmake --build --preset release
exec build/release/app/autocomp-workbench "$@"
