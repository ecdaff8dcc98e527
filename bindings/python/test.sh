#!/usr/bin/env bash
# The Python half of the README's test command, self-contained on a machine with only Rust and
# Python 3.10+: it creates its own virtualenv (target/python-test-venv, without the system's
# site-packages), installs the test requirements into it from the package index (again only when
# they changed), builds the extension into it with `maturin develop` (dev profile) and runs pytest
# there. Arguments go to pytest. Two tiers: the core one (requirements-test.txt, about 250 MB)
# always; the integration one (requirements-integration.lock: torch, SB3, Syllabus, verl; 5.5 GB
# installed) where the disk has room for it, else its tests are skipped and the run says so.
#   PYTHON=python3.12 bash bindings/python/test.sh     # another interpreter (a new venv)
#   ENVDIST_TEST_VENV=DIR bash bindings/python/test.sh  # the venv somewhere else
#   ENVDIST_TEST_INTEGRATION=1 bash bindings/python/test.sh   # the integration tier or an error
#   ENVDIST_TEST_INTEGRATION=0 bash bindings/python/test.sh   # the core tier only
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
py="${PYTHON:-python3}"
venv="${ENVDIST_TEST_VENV:-${CARGO_TARGET_DIR:-$root/target}/python-test-venv}"
reqs="$here/requirements-test.txt"
lock="$here/requirements-integration.lock"
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
hash_of() { "$py" -c 'import hashlib, sys; h = hashlib.sha256(); [h.update(open(f, "rb").read()) for f in sys.argv[1:]]; print(h.hexdigest())' "$@"; }
pip_install() { "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir "$@"; }
free_gib() { df -Pk "$1" | awk 'NR == 2 { printf "%d", $4 / 1048576 }'; }

# The core tier (numpy, gymnasium, pytest, matplotlib, maturin), at the lock's versions.
install_core() {
  local stamp
  stamp="$(hash_of "$reqs" "$lock")"
  if [ "$(cat "$venv/.envdist-requirements" 2>/dev/null)" != "$stamp" ]; then
    say "installing $(basename "$reqs") into the venv (the core tier, about 250 MB)"
    pip_install -r "$reqs" -c "$lock"
    echo "$stamp" > "$venv/.envdist-requirements"
    say "core tier installed"
  fi
}
install_core

# The integration tier (torch, SB3, sb3-contrib, Syllabus, verl, ray): the lock, without
# resolving (--no-deps: so triton, 1 GB that nothing here uses, stays out). The big wheels go
# one pip call each so that the disk never holds more than one of them unpacked beside the
# installed ones; without a pip cache, so nothing is kept twice. Returns non-zero on the first
# failure (it runs under `if`, where `set -e` does not stop it).
install_integration() {
  local big req
  big="$(grep -E '^(torch|nvidia-[a-z0-9-]+|cuda-[a-z-]+)==' "$lock" || true)"
  for req in $big; do pip_install --no-deps "$req" || return 1; done
  pip_install --no-deps -r <(grep -vxF -f <(printf '%s\n' $big) "$lock") || return 1
  echo "$istamp" > "$venv/.envdist-integration"
}
# ENVDIST_TEST_INTEGRATION: auto (default: install and run it where the disk has room, else
# skip it and say so), 1 (required: no room or a failed install is an error), 0 (skip it).
tier="${ENVDIST_TEST_INTEGRATION:-auto}"
need_gib=8  # measured peak 5.7 GiB (5.5 GB installed, one wheel in flight) + margin
why=""
istamp="$(hash_of "$lock")"
case "$tier" in
  0) why="ENVDIST_TEST_INTEGRATION=0" ;;
  1|auto)
    if [ "$(cat "$venv/.envdist-integration" 2>/dev/null)" != "$istamp" ]; then
      free="$(free_gib "$(dirname "$venv")")"
      if [ "$free" -lt "$need_gib" ]; then
        why="${free} GiB free where the venv is ($(dirname "$venv")), the tier needs ${need_gib} GiB"
      else
        say "installing $(basename "$lock") into the venv (the integration tier: torch with PyPI's CUDA libraries, ray, verl, SB3; about 2.9 GB of wheels, 5.5 GB installed; ${free} GiB free)"
        if install_integration; then
          say "integration tier installed ($(free_gib "$(dirname "$venv")") GiB free now)"
        else
          why="its install failed (pip's error above; $(free_gib "$(dirname "$venv")") GiB free now)"
          if [ "$tier" = auto ]; then
            # A half-installed tier would be worse than none (torch without its libraries):
            # the venv is made again with the core tier alone, which also gives the disk back.
            rm -rf "$venv"
            "$py" -m venv "$venv"
            echo "$want" > "$venv/.envdist-python"
            install_core
          fi
        fi
      fi
      if [ -n "$why" ] && [ "$tier" = 1 ]; then
        echo "error: ENVDIST_TEST_INTEGRATION=1 but $why" >&2
        exit 1
      fi
    fi ;;
  *) echo "error: ENVDIST_TEST_INTEGRATION must be auto, 1 or 0, got '$tier'" >&2; exit 1 ;;
esac
if [ -n "$why" ]; then
  export ENVDIST_TEST_INTEGRATION=0 ENVDIST_TEST_INTEGRATION_WHY="$why"
  say "SKIPPING the integration tier (SB3, MaskablePPO, Syllabus, verl tests): $why"
else
  export ENVDIST_TEST_INTEGRATION=1
fi
export VIRTUAL_ENV="$venv"
export PATH="$venv/bin:$PATH"
# The build's own output (cargo's "Downloaded <crate>" lines, maturin's progress and the pip
# lines of its install) goes to a log, shown only when the build fails.
build_log="$(dirname "$venv")/python-test-build.log"
say "building the extension (maturin develop, dev profile; the first build compiles every crate: about 5 minutes on 2 cores, later ones seconds; log: $build_log)"
if ! (cd "$here" && maturin develop --locked --quiet) >"$build_log" 2>&1; then
  cat "$build_log" >&2
  echo "test.sh: the extension did not build (maturin's output above, also in $build_log)" >&2
  exit 1
fi
say "extension built"
cd "$here"
summary="$(mktemp)"
trap 'rm -f "$summary"' EXIT
# Test files named in the arguments run alone; otherwise the whole tests/ directory.
where=tests
for arg in "$@"; do
  case "$arg" in -*) ;; *) if [ -e "${arg%%::*}" ]; then where=""; fi ;; esac
done
set +e
ENVDIST_TIER_SUMMARY="$summary" python -m pytest $where -q -p no:cacheprovider "$@"
status=$?
set -e
# The last line says what each tier did (pytest's own summary line stays just above it); the
# exit status is pytest's.
"$venv/bin/python" "$here/tests/tier.py" "$summary" "$status" "$(( $(date +%s) - start ))" \
  || echo "test.sh: pytest exited with status $status (no tier summary: it stopped before its end)"
exit "$status"
