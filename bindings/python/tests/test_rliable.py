"""rliable (Agarwal et al. 2021, PyPI `rliable`) on a committed study record's per-env scores
agrees with the aggregates envdist wrote into the same record: the interquartile mean of every
arm and the probability of improvement of every claim of two trained arms. Point estimates must
be equal; the 95% intervals (a stratified bootstrap: runs resampled within each task, rliable's
scheme, here with its own numpy RandomState rather than the global one; envdist's from its own
seed) within bootstrap error.

rliable's tables are runs x tasks: one row per training seed, one column per pool environment,
a score being the success averaged over the evaluated scales, as envdist's `ArmRun::success`
computes it (in float32)."""

import json
from pathlib import Path

import numpy as np
import pytest

from tier import require_integration

require_integration()

# rliable's metrics (numpy and scipy only). Its `library.get_interval_estimates` is not used:
# it drives `arch`'s bootstrap, and no release of arch works with both rliable 1.2.0 (which passes
# `random_state=`, gone in arch 8) and this tier's pandas 3 (arch 7 calls pandas' old
# `deprecate_kwarg`). The stratified bootstrap is rliable's scheme written out below.
from rliable import metrics  # noqa: E402

RECORDS = Path(__file__).resolve().parents[3] / "docs" / "experiments"


def record(name):
    path = RECORDS / name / "results.json"
    r = json.loads(path.read_text())
    if not r.get("analysis", {}).get("probability_of_improvement"):
        pytest.fail(f"{path} has no rliable aggregates: regenerate it with this code")
    return r


def table(r, arm):
    """runs x tasks (seed x pool env) of `arm`, in points, as envdist scores them."""
    runs = sorted((x for x in r["runs"] if x["arm"] == arm), key=lambda x: x["seed"])
    pool = r["envs"]["pool"]

    def success(run, env):
        v = np.asarray(run["per_env"][env], dtype=np.float32)
        return float(v.sum(dtype=np.float32) / np.float32(len(v)))

    return 100.0 * np.array([[success(run, e) for e in pool] for run in runs], dtype=np.float64)


def stratified_interval(tables, stat, reps, rng):
    """rliable's stratified bootstrap: each replicate resamples the runs of every table within
    each task, independently; the 2.5th and 97.5th percentiles of `stat` on the replicates."""
    values = []
    for _ in range(reps):
        drawn = []
        for t in tables:
            runs, tasks = t.shape
            idx = rng.randint(0, runs, size=(runs, tasks))
            drawn.append(np.take_along_axis(t, idx, axis=0))
        values.append(stat(*drawn))
    return np.percentile(values, [2.5, 97.5])


def poi(x, y):
    """rliable's probability of improvement, vectorised over tasks (the bootstrap calls it
    hundreds of times; rliable's loops over tasks through scipy): checked equal to rliable's
    on the data before it stands in for it."""
    greater = (x[:, None, :] > y[None, :, :]).mean(axis=(0, 1))
    ties = (x[:, None, :] == y[None, :, :]).mean(axis=(0, 1))
    return float((greater + 0.5 * ties).mean())


@pytest.mark.integration
@pytest.mark.parametrize("name", ["smoke", "cpu"])
def test_iqm_and_probability_of_improvement_match_rliable(name):
    r = record(name)
    a = r["analysis"]
    reps = 500
    # Two independent bootstraps of one statistic differ by Monte Carlo error only: the
    # record's with `analysis.bootstrap` replicates, this one with `reps`.
    slack = 4.0 / np.sqrt(min(reps, r["config"]["analysis"]["bootstrap"]))
    rng = np.random.RandomState(0)
    checked = 0
    for s in a["arms"]:
        scores = table(r, s["arm"])
        iqm = metrics.aggregate_iqm(scores)
        # `iqm_value` always; `iqm` (with its interval) only where the arm has more than one run.
        assert abs(iqm - s["iqm_value"]) < 1e-6, (s["arm"], iqm, s["iqm_value"])
        assert (s["iqm"] is None) == (scores.shape[0] == 1), (s["arm"], s["iqm"])
        if scores.shape[0] > 1:
            assert abs(iqm - s["iqm"]["estimate"]) < 1e-6, (s["arm"], iqm, s["iqm"])
            lo, hi = stratified_interval([scores], metrics.aggregate_iqm, reps, rng)
            width = s["iqm"]["hi"] - s["iqm"]["lo"]
            assert abs(lo - s["iqm"]["lo"]) <= slack * width + 0.5, (s["arm"], lo, s["iqm"])
            assert abs(hi - s["iqm"]["hi"]) <= slack * width + 0.5, (s["arm"], hi, s["iqm"])
        checked += 1
    assert checked >= 7
    assert a["probability_of_improvement"], "no claim of two trained arms"
    for p in a["probability_of_improvement"]:
        x, y = table(r, p["a"]), table(r, p["b"])
        rliable_poi = metrics.probability_of_improvement(x, y)
        assert abs(rliable_poi - p["probability"]["estimate"]) < 1e-9, (p, rliable_poi)
        assert abs(poi(x, y) - rliable_poi) < 1e-12
        lo, hi = stratified_interval([x, y], poi, reps, rng)
        width = p["probability"]["hi"] - p["probability"]["lo"]
        assert abs(lo - p["probability"]["lo"]) <= slack * width + 0.01, (p, lo)
        assert abs(hi - p["probability"]["hi"]) <= slack * width + 0.01, (p, hi)
