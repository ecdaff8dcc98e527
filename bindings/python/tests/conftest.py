"""Tests marked `integration` run only where the integration tier is installed (tier.py).
Where ENVDIST_TIER_SUMMARY names a file, each tier's outcome is written there as JSON (test.sh
reads it for its last line)."""

import json
import os

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


def tier_counts(stats) -> dict:
    """Per tier ("core", "integration"), how many tests passed, failed (or errored) and were
    skipped, from the terminal reporter's stats (each test once, by its worst outcome)."""
    worst = {}
    rank = {"passed": 0, "skipped": 1, "failed": 2}
    for outcome, reports in stats.items():
        kind = {"passed": "passed", "failed": "failed", "error": "failed", "skipped": "skipped",
                "xfailed": "passed", "xpassed": "passed"}.get(outcome)
        if kind is None:
            continue
        for r in reports:
            nodeid = getattr(r, "nodeid", None)
            if not nodeid:
                continue
            keywords = getattr(r, "keywords", {}) or {}
            # A module skipped as a whole (test_verl.py off the tier) is an integration module.
            tier = "integration" if "integration" in keywords or (
                kind == "skipped" and getattr(r, "when", None) == "collect") else "core"
            key = (tier, nodeid)
            if key not in worst or rank[kind] > rank[worst[key]]:
                worst[key] = kind
    out = {t: {"passed": 0, "failed": 0, "skipped": 0} for t in ("core", "integration")}
    for (tier, _), kind in worst.items():
        out[tier][kind] += 1
    return out


def pytest_terminal_summary(terminalreporter):
    path = os.environ.get("ENVDIST_TIER_SUMMARY")
    on, why = integration_state()
    if path:
        summary = {"integration_on": on, "why": why, **tier_counts(terminalreporter.stats)}
        with open(path, "w") as f:
            json.dump(summary, f)
    if not on:
        terminalreporter.write_line(
            f"envdist: the integration tier was NOT run ({why}); {len(_skipped)} tests skipped, "
            "plus test_verl.py as a whole. ENVDIST_TEST_INTEGRATION=1 bash bindings/python/test.sh runs it.",
            yellow=True,
            bold=True,
        )
