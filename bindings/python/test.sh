#!/usr/bin/env bash
# The Python half of the README's test command: build the extension in the dev profile with
# `maturin develop` into a virtualenv under target/ (it sees the packages installed for the
# interpreter, so nothing is downloaded here) and run the Python tests.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
py="${PYTHON:-python3}"

missing=$("$py" - <<'PYEOF'
import importlib.util
need = {"maturin": "maturin", "numpy": "numpy", "gymnasium": "gymnasium", "pytest": "pytest",
        "syllabus": "syllabus-rl", "matplotlib": "matplotlib"}
print(" ".join(pkg for mod, pkg in need.items() if importlib.util.find_spec(mod) is None))
PYEOF
)
if [ -n "$missing" ]; then
  echo "error: the Python tests need these packages, missing for $py: $missing" >&2
  echo "  install them with: $py -m pip install -r bindings/python/requirements-test.txt" >&2
  exit 1
fi

# maturin's executable sits beside the interpreter that installed it, not in the venv.
maturin="$("$py" -c 'import os, sysconfig; print(os.path.join(sysconfig.get_path("scripts"), "maturin"))')"
[ -x "$maturin" ] || maturin="$(command -v maturin)"

venv="$root/target/python-test-venv"
if [ ! -x "$venv/bin/python" ]; then
  "$py" -m venv --system-site-packages "$venv"
fi
export VIRTUAL_ENV="$venv"
export PATH="$venv/bin:$PATH"
(cd "$here" && "$maturin" develop --locked --quiet)
cd "$here"
python -m pytest tests -q -p no:cacheprovider "$@"
