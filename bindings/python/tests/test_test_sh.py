"""test.sh itself, run against a stand-in virtualenv (its stamps current, so nothing is installed)
whose `maturin` only prints build noise: its last line states each tier's outcome, its exit
status is pytest's, and the build's output stays in a log unless the build fails. And the wheel's
build backend without Rust: one line with the install hint, at once."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parents[1]
TESTS = HERE / "tests"


def _fake_venv(root: Path, maturin_exit: int) -> tuple[Path, dict]:
    """A venv test.sh accepts as made and up to date: its python runs this interpreter, its
    maturin prints what a cold build prints."""
    venv = root / "venv"
    (venv / "bin").mkdir(parents=True)
    py = venv / "bin" / "python"
    py.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    maturin = venv / "bin" / "maturin"
    maturin.write_text(
        "#!/bin/sh\n"
        "for c in serde rayon pyo3; do echo \"  Downloaded $c v1.0.0\" >&2; done\n"
        "echo '📦 Built wheel for abi3 Python ≥ 3.10'\n"
        f"exit {maturin_exit}\n"
    )
    for f in (py, maturin):
        f.chmod(0o755)
    # The stamps test.sh writes after its installs, computed as it computes them.
    want = subprocess.run([sys.executable, "-c", "import sys; print(sys.version.split()[0], sys.executable)"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (venv / ".envdist-python").write_text(want + "\n")
    h = hashlib.sha256()
    for name in ("requirements-test.txt", "requirements-integration.lock"):
        h.update((HERE / name).read_bytes())
    (venv / ".envdist-requirements").write_text(h.hexdigest() + "\n")
    env = {**os.environ, "PYTHON": sys.executable, "ENVDIST_TEST_VENV": str(venv), "ENVDIST_TEST_INTEGRATION": "0"}
    env.pop("ENVDIST_TEST_INTEGRATION_WHY", None)
    return venv, env


def _sample_tests(root: Path, fail: bool) -> Path:
    """Two core tests (one failing when `fail`) and one integration test, under the suite's own
    conftest (which writes the tier summary)."""
    d = root / "sample"
    d.mkdir()
    shutil.copy(TESTS / "conftest.py", d)
    shutil.copy(TESTS / "tier.py", d)
    (d / "test_sample.py").write_text(
        "import pytest\n\n"
        "def test_core_one():\n    assert True\n\n"
        f"def test_core_two():\n    assert {not fail}\n\n"
        "@pytest.mark.integration\ndef test_tier():\n    assert True\n"
    )
    return d / "test_sample.py"


def _run(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(HERE / "test.sh"), *args], env=env, capture_output=True, text=True,
                          timeout=600)


def test_the_last_line_states_each_tier_and_the_exit_status_is_pytests(tmp_path):
    _, env = _fake_venv(tmp_path, maturin_exit=0)
    failing = _sample_tests(tmp_path, fail=True)
    run = _run(env, str(failing))
    lines = run.stdout.strip().splitlines()
    assert run.returncode == 1, run.stdout + run.stderr
    assert lines[-1].startswith(
        "test.sh: core tier FAILED (1 of 2 tests failed); integration tier SKIPPED: ENVDIST_TEST_INTEGRATION=0 "
        "(pytest exit status 1; "
    ), lines[-1]
    # pytest's own summary line stays visible, just above (CI reads it).
    assert any("1 failed, 1 passed, 1 skipped" in line for line in lines[-4:]), lines[-4:]
    # The build's noise went to the log, not to the output.
    out = run.stdout + run.stderr
    assert "Downloaded" not in out and "Built wheel" not in out, out
    assert "the first build compiles every crate" in out
    log = Path(env["ENVDIST_TEST_VENV"]).parent / "python-test-build.log"
    assert "Downloaded serde" in log.read_text()

    passing = tmp_path / "pass"
    passing.mkdir()
    _, env = _fake_venv(passing, maturin_exit=0)
    env["ENVDIST_TEST_INTEGRATION"] = "1"
    # The tier is "installed" (its stamp current), so it runs.
    lock = hashlib.sha256((HERE / "requirements-integration.lock").read_bytes()).hexdigest()
    (Path(env["ENVDIST_TEST_VENV"]) / ".envdist-integration").write_text(lock + "\n")
    run = _run(env, str(_sample_tests(passing, fail=False)))
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().splitlines()[-1].startswith(
        "test.sh: core tier passed (2 tests); integration tier passed (1 tests) (pytest exit status 0; "
    ), run.stdout


def test_a_failed_build_shows_its_log_and_fails(tmp_path):
    _, env = _fake_venv(tmp_path, maturin_exit=3)
    run = _run(env, str(_sample_tests(tmp_path, fail=False)))
    assert run.returncode == 1
    assert "Downloaded pyo3" in run.stderr and "the extension did not build" in run.stderr, run.stderr


def test_without_rust_the_wheel_build_stops_at_once_with_the_install_hint(tmp_path):
    backend = HERE / "build_backend"
    hook = "import envdist_build; print(envdist_build.get_requires_for_build_wheel())"
    # PATH without cargo (an empty directory); the interpreter is given by its full path.
    env = {**os.environ, "PYTHONPATH": str(backend), "PATH": str(tmp_path)}
    env.pop("ENVDIST_INSTALL_RUST", None)
    run = subprocess.run([sys.executable, "-c", hook], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 1
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "needs Rust" in lines[0] and "https://rustup.rs" in lines[0], run.stderr
    # Asked to, maturin's own download is let through (it asks for puccinialin, its installer).
    run = subprocess.run([sys.executable, "-c", hook], env={**env, "ENVDIST_INSTALL_RUST": "1"},
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "puccinialin" in run.stdout, run.stderr
    # With Rust, the hooks are maturin's.
    if shutil.which("cargo") is None:
        pytest.skip("cargo is not on PATH here")
    run = subprocess.run([sys.executable, "-c", hook], env={**os.environ, "PYTHONPATH": str(backend)},
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "[]", run.stdout + run.stderr


def test_pyproject_uses_the_backend():
    text = (HERE / "pyproject.toml").read_text()
    assert 'build-backend = "envdist_build"' in text and 'backend-path = ["build_backend"]' in text
