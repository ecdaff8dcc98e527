"""envdist.select on numpy arrays and on the CLI's files."""

import json

import numpy as np
import pytest

import envdist


def pool(seed=0, n=40, a=12, dim=16):
    rng = np.random.default_rng(seed)
    counts = (rng.random((n, a)) < 0.25) * rng.integers(1, 5, (n, a))
    counts[:, 0] = np.maximum(counts[:, 0], 1)
    grads = rng.standard_normal((n, dim)).astype(np.float32)
    return counts.astype(np.int64), grads


def test_select_on_arrays_returns_ranking_gains_and_trace():
    counts, grads = pool()
    s = envdist.select(counts, grads, k=8)
    assert s.ranking.shape == (8,) and len(set(s.ranking.tolist())) == 8
    assert s.env_ids[0] == f"env/{s.ranking[0]}"
    np.testing.assert_allclose(s.gains, s.trace["coverage"] + s.trace["redundancy"] + s.trace["conflict"], atol=1e-5)
    assert np.all(s.trace["conflict"] <= 0) and s.trace["conflict"][0] == 0
    assert s.method == "aes/lazy" and abs(s.objective - float(s.gains.sum())) < 1e-3
    # Without gradients the conflict term is off; names pass through.
    names = [f"e{i}" for i in range(len(counts))]
    s2 = envdist.select(counts.astype(bool), None, k=5, env_ids=names, config={"terms": {"redundancy": False}})
    assert s2.env_ids[0].startswith("e") and np.all(s2.trace["conflict"] == 0)
    assert np.all(s2.trace["redundancy"] == 0)


def test_select_reads_the_cli_files(tmp_path):
    counts, _ = pool(1, n=6, a=4)
    abilities = [f"a{j}" for j in range(4)]
    profiles = {
        "schema_version": 1,
        "abilities": abilities,
        "profiles": [
            {"env": f"fam/v{i}", "coverage": {abilities[j]: float(c) for j, c in enumerate(row) if c}}
            for i, row in enumerate(counts)
        ],
    }
    path = tmp_path / "profiles.json"
    path.write_text(json.dumps(profiles))
    a = envdist.select(str(path), k=3)
    b = envdist.select(profiles, k=3)
    assert a.env_ids == b.env_ids and len(a.env_ids) == 3
    np.save(tmp_path / "counts.npy", counts.astype(np.uint8))
    c = envdist.select(tmp_path / "counts.npy", k=3)
    assert c.ranking.shape == (3,)


def test_select_reproduces_the_study_aes_on_its_own_profiles_and_gradients():
    # docs/experiments/smoke holds the smoke study's profiles, gradients and results (a Rust
    # test checks that the study still writes exactly these files).
    from pathlib import Path

    record = Path(__file__).resolve().parents[3] / "docs" / "experiments" / "smoke"
    results = json.loads((record / "results.json").read_text())
    study = {s["name"]: s for s in results["selections"]}["aes/0"]
    cfg = results["config"]
    s = envdist.select(
        str(record / "profiles.json"),
        str(record / "gradients.safetensors"),
        k=cfg["selection"]["k"],
        require_full_coverage=True,
        tie_break={"seeded": cfg["seed"]},
        exclude_zero_gradient=cfg["selection"]["exclude_zero_gradient"],
        relax=True,
    )
    assert s.env_ids == study["envs"]
    assert (s.covered, s.coverable) == (study["covered"], study["coverable"])
    assert (s.relaxation is None) == (study["note"] is None)


def test_bad_arrays_and_configs_raise_clear_exceptions(tmp_path):
    counts, grads = pool()
    with pytest.raises(TypeError, match="dtype <U1"):
        envdist.select(np.array([["a", "b"]]), k=1)
    with pytest.raises(ValueError, match="2-D"):
        envdist.select(np.ones(5), k=1)
    with pytest.raises(TypeError, match="gradients.*dtype bool"):
        envdist.select(counts, np.ones((40, 3), dtype=bool), k=2)
    with pytest.raises(ValueError, match="gradients: expected 40 rows"):
        envdist.select(counts, grads[:10], k=2)
    with pytest.raises(ValueError, match=r"field `k`.*1..=40"):
        envdist.select(counts, grads, k=41)
    with pytest.raises(ValueError, match="gradients\\[3\\]\\[0\\].*finite"):
        g = grads.copy()
        g[3, 0] = np.nan
        envdist.select(counts, g, k=2)
    with pytest.raises(ValueError, match="counts.values.*finite positive|non-negative"):
        envdist.select(-np.ones((3, 3)), k=1)
    with pytest.raises(ValueError, match="aggregation"):
        envdist.select(counts, grads, k=2, aggregation="median")
    with pytest.raises(FileNotFoundError, match="missing.json"):
        envdist.select(str(tmp_path / "missing.json"), k=1)
    bad = tmp_path / "bad.json"
    bad.write_text("{\"schema_version\": 1, \"abilities\": 3}")
    with pytest.raises(ValueError, match="bad.json"):
        envdist.select(str(bad), k=1)
