#!/usr/bin/env bash
# Run a command with the environment burn's LibTorch backend (the trainer's `tch` feature, the
# `libtorch` device) needs to build and to run, against a pip-installed PyTorch: docs/libtorch.md.
#
#   bash scripts/with-libtorch.sh cargo build --release -p xtask --features tch
#   bash scripts/with-libtorch.sh target/release/xtask bench-train --preset cpu --device libtorch
#
# On the first call it makes a virtualenv (target/libtorch-venv, or $ENVDIST_LIBTORCH_VENV) and
# installs the PyTorch version tch 0.22 is written against (torch==2.9.0 from PyPI: about 3 GB of
# wheels, 6.8 GB installed, 80 s here). Then it runs the command with VIRTUAL_ENV and PATH on that
# venv, LIBTORCH_USE_PYTORCH=1 (torch-sys takes headers and libraries from it and downloads
# nothing) and LD_LIBRARY_PATH on torch's libraries (a binary built with `tch` needs them at run
# time: without them it stops at start-up with "error while loading shared libraries: libtorch_cuda.so").
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${ENVDIST_LIBTORCH_VENV:-${CARGO_TARGET_DIR:-$root/target}/libtorch-venv}"
torch_version=2.9.0  # torch-sys 0.22's TORCH_VERSION
py="${PYTHON:-python3}"
if [ $# -eq 0 ]; then
  echo "usage: bash scripts/with-libtorch.sh COMMAND [ARGS...]   (see docs/libtorch.md)" >&2
  exit 2
fi
if ! "$venv/bin/python" -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '$torch_version')" 2>/dev/null; then
  echo "with-libtorch: installing torch==$torch_version into $venv (about 3 GB of wheels, once)" >&2
  "$py" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir "torch==$torch_version"
fi
lib="$("$venv/bin/python" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')"
export VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" LIBTORCH_USE_PYTORCH=1
export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
exec "$@"
