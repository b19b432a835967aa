#!/usr/bin/env bash
# Creates (or brings up to date) the Python virtual environment a target runs its tools in, from PyPI,
# with pinned versions. Idempotent and quiet when the environment is already as pinned.
#   packaging/setup-python-env.sh tpu [--venv DIR] [--tpu-runtime] [--print-python]
#   packaging/setup-python-env.sh NAME --requirements FILE [--venv DIR] [--print-python]
#
# tpu: jax, jaxlib and flatbuffers, which run Pallas kernels in interpret mode on the CPU (correctness only). On a
#      TPU VM add --tpu-runtime: jax[tpu] (the same jax plus libtpu from PyPI), so kernels compile with
#      Mosaic and are timed on the TPU.
# NAME --requirements FILE: the environment of a target of your own (backends/README.md, "A Python environment
#      for your target"): pip's requirement lines from FILE (pin the versions), e.g. numba==0.60.0.
# DIR defaults to ${XDG_DATA_HOME:-$HOME/.local/share}/autocomp-workbench/venvs/<name>: the place the
# target's `python` setting names by default ({data_home}/venvs/tpu/bin/python). Elsewhere, point the
# target at it with AUTOCOMP_<TARGET>_PYTHON=DIR/bin/python. --print-python prints the interpreter's path.
# The environment is made from the system's /usr/bin/python3 (with its venv module: packaging/install-deps.sh
# --tpu), not a python3 elsewhere on PATH (pyenv, conda): the evaluation sandbox shows /usr and the
# environment's own folder only, so an interpreter living under $HOME would not start there.
set -euo pipefail

jax_version=0.10.2
# jax.export's serialization (the tpu judge inspects and runs the exported program) needs it.
flatbuffers_version=25.12.19

usage() { sed -n '4,17p' "$0" | sed 's/^# \{0,1\}//'; }
[ $# -ge 1 ] || { usage >&2; exit 2; }
case "$1" in -h|--help) usage; exit 0 ;; esac
name=$1
shift
venv=""
runtime=cpu
print=0
reqfile=""
while [ $# -gt 0 ]; do
  case "$1" in
    --venv) venv=${2:?--venv needs a directory}; shift ;;
    --venv=*) venv=${1#--venv=} ;;
    --requirements) reqfile=${2:?--requirements needs a file}; shift ;;
    --requirements=*) reqfile=${1#--requirements=} ;;
    --tpu-runtime) runtime=tpu ;;
    --print-python) print=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "setup-python-env.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

case "$name" in
  tpu)
    if [ $runtime = tpu ]; then
      requirements=("jax[tpu]==$jax_version" "flatbuffers==$flatbuffers_version")
    else
      requirements=("jax==$jax_version" "jaxlib==$jax_version" "flatbuffers==$flatbuffers_version")
    fi
    probe="import jax, jax.numpy, flatbuffers; from jax.experimental import pallas; from jax.experimental.pallas import tpu; assert jax.__version__ == '$jax_version', jax.__version__"
    ;;
  *)
    if [ -z "$reqfile" ]; then
      echo "setup-python-env.sh: '$name' is not a shipped environment (known: tpu): give its packages with --requirements FILE" >&2
      exit 2
    fi
    case "$name" in *[!A-Za-z0-9_.-]*|.*) echo "setup-python-env.sh: '$name': use letters, digits, '_', '.' and '-'" >&2; exit 2 ;; esac
    [ -r "$reqfile" ] || { echo "setup-python-env.sh: $reqfile: cannot read it" >&2; exit 2; }
    requirements=()
    while IFS= read -r line || [ -n "$line" ]; do
      line=${line%%#*}
      line=$(printf '%s' "$line" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')
      [ -z "$line" ] || requirements+=("$line")
    done <"$reqfile"
    [ ${#requirements[@]} -gt 0 ] || { echo "setup-python-env.sh: $reqfile names no package" >&2; exit 2; }
    probe="pass"
    ;;
esac

[ -n "$venv" ] || venv="${XDG_DATA_HOME:-$HOME/.local/share}/autocomp-workbench/venvs/$name"
case "$venv" in /*) ;; *) venv="$PWD/$venv" ;; esac
python="$venv/bin/python"
stamp="$venv/autocomp-requirements.txt"
base=/usr/bin/python3
wanted=$(printf '%s\n' "base: $base" "${requirements[@]}")

if [ -x "$python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ] && "$python" -c "$probe" 2>/dev/null; then
  [ $print = 0 ] || echo "$python"
  exit 0
fi

# What provides python3 and its venv module: install-deps.sh knows the shipped environments; python3-venv is enough.
deps_hint="packaging/install-deps.sh --$name"
[ "$name" = tpu ] || deps_hint="apt-get install python3-venv"
[ -x "$base" ] || { echo "setup-python-env.sh: $base is missing ($deps_hint)" >&2; exit 1; }
# An environment made by this script from another interpreter, or with other pins, is made anew.
if [ -f "$stamp" ] && [ "$(head -n 1 "$stamp")" != "base: $base" ]; then
  echo "setup-python-env.sh: $venv was made from $(head -n 1 "$stamp" | cut -c7-): making it anew from $base" >&2
  rm -rf "$venv"
fi
if [ ! -x "$python" ]; then
  echo "setup-python-env.sh: creating $venv" >&2
  mkdir -p "$(dirname "$venv")"
  "$base" -m venv "$venv" || { echo "setup-python-env.sh: $base -m venv failed: install python3-venv ($deps_hint)" >&2; exit 1; }
fi
echo "setup-python-env.sh: installing ${requirements[*]} into $venv" >&2
"$python" -m pip install --quiet --disable-pip-version-check "${requirements[@]}"
"$python" -c "$probe"
printf '%s\n' "$wanted" >"$stamp"
[ $print = 0 ] || echo "$python"
