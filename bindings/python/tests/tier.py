"""The test tiers. The core tier needs only the package, numpy and Gymnasium. The integration
tier (tests marked `integration`) drives the real libraries: SB3 and sb3-contrib, Syllabus, verl,
ray, torch, TensorBoard. test.sh installs it where the disk has room and says which it ran through
ENVDIST_TEST_INTEGRATION (1 or 0) and ENVDIST_TEST_INTEGRATION_WHY. Where the tier is on, its
imports are plain imports: a broken install fails the tests instead of skipping them."""

import importlib.util
import json
import os
import sys

import pytest

PACKAGES = ("torch", "stable_baselines3", "sb3_contrib", "syllabus", "verl", "ray", "rliable",
            "tensorboard")


def integration_state():
    """(on, why it is off)."""
    flag = os.environ.get("ENVDIST_TEST_INTEGRATION")
    if flag == "1":
        return True, ""
    if flag == "0":
        return False, os.environ.get("ENVDIST_TEST_INTEGRATION_WHY", "ENVDIST_TEST_INTEGRATION=0")
    # pytest run by hand, outside test.sh: the tier runs where its packages are installed.
    missing = [m for m in PACKAGES if importlib.util.find_spec(m) is None]
    return not missing, "not installed: " + ", ".join(missing) if missing else ""


def require_integration():
    """At the top of a module that imports the tier's packages: skip the module where it is off."""
    on, why = integration_state()
    if not on:
        pytest.skip(f"integration tier off: {why}", allow_module_level=True)


def summary_line(summary: dict, status: int, seconds: int | str) -> str:
    """test.sh's last line: each tier's outcome (from conftest's ENVDIST_TIER_SUMMARY file),
    then pytest's exit status."""

    def tier(name: str, c: dict) -> str:
        if c["failed"]:
            return f"{name} tier FAILED ({c['failed']} of {c['passed'] + c['failed']} tests failed)"
        if c["passed"]:
            return f"{name} tier passed ({c['passed']} tests)"
        return f"{name} tier: no test selected"

    core = tier("core", summary["core"])
    if summary["integration_on"]:
        integration = tier("integration", summary["integration"])
    else:
        integration = f"integration tier SKIPPED: {summary['why']}"
    return f"test.sh: {core}; {integration} (pytest exit status {status}; {seconds}s)"


if __name__ == "__main__":
    # python tests/tier.py SUMMARY_JSON PYTEST_STATUS SECONDS (test.sh's last line)
    try:
        with open(sys.argv[1]) as f:
            data = json.load(f)
    except (OSError, ValueError):
        sys.exit(1)
    print(summary_line(data, int(sys.argv[2]), sys.argv[3]))
