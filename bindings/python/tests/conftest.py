"""Tests marked `integration` run only where the integration tier is installed (tier.py)."""

import pytest

from tier import integration_state

_skipped = []


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "integration: drives the real SB3 / sb3-contrib / Syllabus / verl / torch (tier.py)"
    )


def pytest_report_header(config):
    on, why = integration_state()
    return f"envdist integration tier: {'on' if on else 'OFF (' + why + ')'}"


def pytest_collection_modifyitems(config, items):
    on, why = integration_state()
    if on:
        return
    skip = pytest.mark.skip(reason=f"integration tier off: {why}")
    for item in items:
        if "integration" in item.keywords:
            item.add_marker(skip)
            _skipped.append(item.nodeid)


def pytest_terminal_summary(terminalreporter):
    on, why = integration_state()
    if not on:
        terminalreporter.write_line(
            f"envdist: the integration tier was NOT run ({why}); {len(_skipped)} tests skipped, "
            "plus test_verl.py as a whole. ENVDIST_TEST_INTEGRATION=1 bash bindings/python/test.sh runs it.",
            yellow=True,
            bold=True,
        )
