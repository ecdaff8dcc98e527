#!/usr/bin/env bash
# The Python half of the README's test command, self-contained on a machine with only Rust and
# Python 3.10+: it creates its own virtualenv (target/python-test-venv, without the system's
# site-packages), installs bindings/python/requirements-test.txt into it from the package index
# (again only when that file changed), builds the extension into it with `maturin develop` (dev
# profile) and runs pytest there. Arguments go to pytest.
#   PYTHON=python3.12 bash bindings/python/test.sh     # another interpreter (a new venv)
#   ENVDIST_TEST_VENV=DIR bash bindings/python/test.sh  # the venv somewhere else
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
py="${PYTHON:-python3}"
venv="${ENVDIST_TEST_VENV:-${CARGO_TARGET_DIR:-$root/target}/python-test-venv}"
reqs="$here/requirements-test.txt"
start=$(date +%s)
say() { echo "test.sh: $1 ($(( $(date +%s) - start ))s)"; }

if ! "$py" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
  echo "error: the Python tests need Python 3.10+ with the venv and ensurepip modules, found: $("$py" --version 2>&1 || echo "no $py")" >&2
  echo "  (Debian/Ubuntu: apt-get install python3-venv; or set PYTHON=/path/to/python3.x)" >&2
  exit 1
fi
# A venv made by another interpreter (or an older test.sh) is made anew.
want="$("$py" -c 'import sys; print(sys.version.split()[0], sys.executable)')"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.envdist-python" 2>/dev/null)" != "$want" ] \
   || grep -q '^include-system-site-packages = true' "$venv/pyvenv.cfg" 2>/dev/null; then
  rm -rf "$venv"
  "$py" -m venv "$venv"
  echo "$want" > "$venv/.envdist-python"
  say "created $venv"
fi
stamp="$("$py" -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' "$reqs")"
if [ "$(cat "$venv/.envdist-requirements" 2>/dev/null)" != "$stamp" ]; then
  say "installing $(basename "$reqs") into the venv (torch, ray, verl, SB3: about 3.3 GB of wheels)"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$reqs"
  echo "$stamp" > "$venv/.envdist-requirements"
  say "requirements installed"
fi
export VIRTUAL_ENV="$venv"
export PATH="$venv/bin:$PATH"
(cd "$here" && maturin develop --locked --quiet)
say "extension built"
cd "$here"
python -m pytest tests -q -p no:cacheprovider "$@"
