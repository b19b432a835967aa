#!/usr/bin/env bash
# Installs the Debian 12 packages Autocomp Workbench needs, and only the missing ones; prints what it
# installs. Idempotent and quiet when everything is present.
#   packaging/install-deps.sh [--build] [--runtime] [--test] [--packaging] [--rvv] [--kernelbench] [--tpu] [--gemmini] [--list]
#   no flag: --build --runtime; --list prints the chosen packages and installs nothing.
set -euo pipefail

# To configure and compile: the toolchain and the headers of every library CMakeLists.txt finds
# (qt6-svg-dev: SVG export of charts and graphs; libpoppler-qt6-dev: PDFs for the agent builder).
# qt6-base-dev brings OpenGL/Vulkan headers and the platform plugins; Qt6Charts needs Qt6OpenGL,
# which qt6-charts-dev does not pull in.
build_pkgs=(cmake ninja-build g++ ccache pkg-config
            qt6-base-dev qt6-charts-dev qt6-svg-dev libqt6opengl6-dev qtkeychain-qt6-dev libyaml-cpp-dev libgit2-dev
            libpoppler-qt6-dev)
# To run the programs (a build, or the unpacked .tar.gz): the libraries they link; Qt's SQLite
# driver and platform plugins, loaded at run time; the cpu target compiles candidates with the host
# compiler, sandboxes them with bubblewrap and builds its per-machine judge against libseccomp and
# nlohmann-json; OpenBLAS is the gemm vendor baseline and valgrind counts instructions for
# cpu-instructions. The .deb declares the same (dpkg-shlibdeps finds the libraries; the rest is in
# packaging/CMakeLists.txt): keep the two in step.
runtime_pkgs=(libqt6core6 libqt6gui6 libqt6widgets6 libqt6network6 libqt6sql6 libqt6charts6 libqt6svg6
              libpoppler-qt6-3
              libqt6keychain1 libgit2-1.5 libyaml-cpp0.7
              libqt6sql6-sqlite qt6-qpa-plugins g++ bubblewrap libseccomp-dev nlohmann-json3-dev
              libopenblas-dev valgrind)
# To run the tests: a private D-Bus session and gnome-keyring for the keychain tests, jq for the
# install test's JSON; Xvfb, xauth (xvfb-run), xwininfo (x11-utils) and ImageMagick's import for
# tests/screenshot*.sh and a workbench on a machine without a screen; zlib's headers for the fake LLM
# server's gzip answers and tinyproxy, the real HTTP proxy LLM requests are sent through in tests;
# the OpenSSH server and a one-node Slurm (munge, slurmctld, slurmd, the client tools) that the remote
# evaluation tests start in temporary directories (tst_remote_eval, tst_remote_resume, eval_throughput).
test_pkgs=(dbus gnome-keyring jq xvfb xauth x11-utils imagemagick zlib1g-dev tinyproxy
           openssh-server openssh-client munge slurmctld slurmd slurm-client)
# To build the .deb and .tar.gz (dpkg-shlibdeps and file for the .deb's Depends, rsvg-convert for
# the PNG icons) and to check them (packaging/lint-packages.sh).
packaging_pkgs=(dpkg-dev file librsvg2-bin desktop-file-utils appstream lintian man-db)
# Optional, for the rvv target (backends/rvv): clang 16 cross-compiles the RVV 1.0 intrinsics against
# the riscv64 GNU sysroot and binutils of g++-riscv64-linux-gnu (GCC 12 has no <riscv_vector.h>),
# qemu-user runs the worker (its qemu-riscv64 loads TCG plugins), gcc builds the counting plugin.
# Without them `autocomp targets` lists rvv as absent and its tests skip.
rvv_pkgs=(clang-16 g++-riscv64-linux-gnu qemu-user gcc)
# Optional, for the kernelbench target on device cpu (backends/kernelbench): Debian's torch (1.13, CPU)
# runs the KernelBench references; load_inline compiles candidates against torch's headers
# (libtorch-dev), pybind11 and Python's (python3-dev) with g++ and ninja. Device cuda needs a CUDA
# build of torch (pip) and a GPU instead. Without them kernelbench is listed absent and its tests skip.
# torch.utils.cpp_extension (load_inline) imports setuptools, which python3-torch does not pull in.
kernelbench_pkgs=(python3 python3-torch python3-setuptools libtorch-dev python3-dev pybind11-dev ninja-build g++)
# Optional, for the tpu target (backends/tpu): python3 and its venv module, in which
# packaging/setup-python-env.sh tpu installs pinned jax/jaxlib from PyPI (Pallas kernels run in
# interpret mode on the CPU: correctness only; a TPU VM adds --tpu-runtime for jax[tpu]). Without the
# environment tpu is listed absent and its tests skip.
tpu_pkgs=(python3 python3-venv)
# Optional, for the gemmini target (backends/gemmini): Debian's bare-metal RISC-V toolchain, which has no
# C library of its own, and picolibc for it (the target's setting libc: auto adds --specs=picolibc.specs
# where the compiler finds it), python3 for the judge and gcc for its host build of the harness. spike with
# Gemmini's functional model (libgemmini) and a gemmini-rocc-tests checkout are not packaged: build them
# and name them with the settings spike and rocc_tests. Without them gemmini is listed absent.
gemmini_pkgs=(gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf python3 gcc)

want=()
list=0
for arg in "$@"; do
  case "$arg" in
    --build) want+=("${build_pkgs[@]}") ;;
    --runtime) want+=("${runtime_pkgs[@]}") ;;
    --test) want+=("${test_pkgs[@]}") ;;
    --packaging) want+=("${packaging_pkgs[@]}") ;;
    --rvv) want+=("${rvv_pkgs[@]}") ;;
    --kernelbench) want+=("${kernelbench_pkgs[@]}") ;;
    --tpu) want+=("${tpu_pkgs[@]}") ;;
    --gemmini) want+=("${gemmini_pkgs[@]}") ;;
    --list) list=1 ;;
    -h|--help) sed -n '2,5p' "$0"; exit 0 ;;
    *) echo "install-deps.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done
[ ${#want[@]} -gt 0 ] || want=("${build_pkgs[@]}" "${runtime_pkgs[@]}")
# De-duplicate while keeping order.
mapfile -t want < <(printf '%s\n' "${want[@]}" | awk '!seen[$0]++')
if [ $list = 1 ]; then
  printf '%s\n' "${want[@]}"
  exit 0
fi

missing=()
for pkg in "${want[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps.sh: installing ${missing[*]}" >&2
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps.sh: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
