"""rliable (Agarwal et al. 2021, PyPI `rliable`) on a committed study record's per-env scores
agrees with the aggregates envdist wrote into the same record: the interquartile mean of every
arm and the probability of improvement of every claim of two trained arms. Point estimates must
be equal; the 95% intervals (stratified bootstrap, each with its own random stream: rliable's
from the RandomState given here, envdist's from its seed) within bootstrap error.

rliable's tables are runs x tasks: one row per training seed, one column per pool environment,
a score being the success averaged over the evaluated scales, as envdist's `ArmRun::success`
computes it (in float32)."""

import json
from pathlib import Path

import numpy as np
import pytest

from tier import require_integration

require_integration()

from rliable import library as rly  # noqa: E402
from rliable import metrics  # noqa: E402

RECORD = Path(__file__).resolve().parents[3] / "docs" / "experiments" / "cpu" / "results.json"


def record():
    r = json.loads(RECORD.read_text())
    if not r.get("analysis", {}).get("probability_of_improvement"):
        pytest.fail(f"{RECORD} has no rliable aggregates: regenerate it with this code")
    return r


def table(r, arm):
    """runs x tasks (seed x pool env) of `arm`, in points, as envdist scores them."""
    runs = sorted((x for x in r["runs"] if x["arm"] == arm), key=lambda x: x["seed"])
    pool = r["envs"]["pool"]

    def success(run, env):
        v = np.asarray(run["per_env"][env], dtype=np.float32)
        return float(v.sum(dtype=np.float32) / np.float32(len(v)))

    return 100.0 * np.array([[success(run, e) for e in pool] for run in runs], dtype=np.float64)


@pytest.mark.integration
def test_iqm_and_probability_of_improvement_match_rliable():
    r = record()
    a = r["analysis"]
    checked = 0
    for s in a["arms"]:
        scores = table(r, s["arm"])
        iqm = metrics.aggregate_iqm(scores)
        assert abs(iqm - s["iqm"]["estimate"]) < 1e-6, (s["arm"], iqm, s["iqm"])
        if scores.shape[0] > 1:
            _, ci = rly.get_interval_estimates(
                {"x": scores},
                lambda x: np.array([metrics.aggregate_iqm(x)]),
                reps=2000,
                random_state=np.random.RandomState(0),
            )
            lo, hi = ci["x"][:, 0]
            # Two independent 2,000-replicate bootstraps of the same statistic: their bounds
            # differ by Monte Carlo error only (a fraction of a point here).
            assert abs(lo - s["iqm"]["lo"]) < 1.0 and abs(hi - s["iqm"]["hi"]) < 1.0, (s["arm"], lo, hi, s["iqm"])
        checked += 1
    assert checked >= 7
    for p in a["probability_of_improvement"]:
        x, y = table(r, p["a"]), table(r, p["b"])
        poi = metrics.probability_of_improvement(x, y)
        assert abs(poi - p["probability"]["estimate"]) < 1e-9, (p, poi)
        _, ci = rly.get_interval_estimates(
            {"pair": [x, y]},
            lambda x, y: np.array([metrics.probability_of_improvement(x, y)]),
            reps=2000,
            random_state=np.random.RandomState(0),
        )
        lo, hi = ci["pair"][:, 0]
        assert abs(lo - p["probability"]["lo"]) < 0.02 and abs(hi - p["probability"]["hi"]) < 0.02, (p, lo, hi)
