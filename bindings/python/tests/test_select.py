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
    with pytest.raises(ValueError, match=r"field `k`.*from 1 to 40"):
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


def test_every_option_is_a_typed_keyword_documented_with_its_default():
    import inspect

    defaults = envdist.selection.defaults()
    assert envdist.default_config("select") == defaults
    params = inspect.signature(envdist.select).parameters
    doc = envdist.select.__doc__
    for option, value in defaults.items():
        # Each option of the Rust SelectConfig is a keyword of select() and has a line in its
        # docstring saying its default.
        assert option in params, option
        assert f"- ``{option}`` (default" in doc, option
    assert defaults["optimizer"] == {"kind": "lazy"} and defaults["k"] == 30
    for name in ("OPTIMIZERS", "ABILITY_WEIGHTINGS", "AGGREGATIONS"):
        for value in getattr(envdist.selection, name):
            assert f'"{value}"' in doc, (name, value)
    counts, grads = pool()
    # Options as keywords and as a config dict give the same selection.
    a = envdist.select(counts, grads, k=6, aggregation="mean", ability_weighting="rarity", tie_break=7)
    b = envdist.select(counts, grads, config={"k": 6, "aggregation": "mean", "ability_weighting": "rarity",
                                              "tie_break": {"seeded": 7}})
    assert a.env_ids == b.env_ids and a.raw["config"] == b.raw["config"]


def test_the_certificate_is_typed_and_the_exact_optimizer_is_reachable():
    counts, grads = pool(3, n=12, a=6)
    greedy = envdist.select(counts, k=3)
    cert = greedy.certificate
    assert isinstance(cert, envdist.selection.Certificate)
    assert cert.kind == "submodular_minus_modular" and cert.value == pytest.approx(greedy.objective)
    assert cert.upper_bound >= cert.value and cert.within_percent == pytest.approx(100 * cert.gap_fraction)
    assert str(cert).startswith(("within ", "objective ")) and "coverage" in str(cert)
    assert "redundancy" in cert.explanation
    assert envdist.select(counts, k=3, certify=False).certificate is None
    exact = envdist.select(counts, k=3, optimizer="exact")
    assert exact.method == "aes/exact" and exact.notes[0].startswith("exact search: optimal")
    assert exact.objective >= greedy.objective - 1e-5
    limited = envdist.select(counts, k=3, optimizer={"kind": "exact", "max_nodes": 1_000_000, "max_seconds": 5.0})
    assert limited.env_ids == exact.env_ids
    with pytest.raises(ValueError, match=r"optimizer\['max_nodes'\]: expected a number of nodes from 1 to"):
        envdist.select(counts, k=3, optimizer={"kind": "exact", "max_nodes": 0})
    with pytest.raises(ValueError, match="greedy optimizer for a pool of more than 256"):
        envdist.select(np.ones((300, 2)), k=3, optimizer="exact")
    with pytest.raises(ValueError, match="'stochastic' needs its epsilon and seed"):
        envdist.select(counts, k=3, optimizer="stochastic")
    st = envdist.select(counts, k=3, optimizer={"kind": "stochastic", "epsilon": 0.2, "seed": 1})
    assert st.method == "aes/stochastic"


def test_duplicate_ids_are_refused_and_unnamed_rows_are_said_to_be():
    counts, _ = pool(n=4, a=3)
    with pytest.raises(ValueError, match=r"env_ids\[2\]: expected unique names, found 'a/x' again \(env_ids\[0\] is 'a/x'\)"):
        envdist.select(counts, k=2, env_ids=["a/x", "b/y", "a/x", "c/z"])
    with pytest.raises(ValueError, match=r"abilities\[1\].*'n' again"):
        envdist.select(counts, k=2, abilities=["n", "n", "m"])
    # The Rust check, for a profile set and for the extension called directly.
    profiles = {"schema_version": 1, "abilities": ["x"],
                "profiles": [{"env": "a/b", "coverage": {"x": 1.0}}, {"env": "a/b", "coverage": {"x": 1.0}}]}
    with pytest.raises(ValueError, match=r"profiles\[1\]\.env.*duplicate \"a/b\""):
        envdist.select(profiles, k=1)
    with pytest.raises(ValueError, match=r"env_ids\[2\].*\"a/x\" is already env_ids\[0\]"):
        envdist._envdist.select_json('{"k": 1, "terms": {"conflict": false}}', counts=counts.astype(np.float32),
                                     env_ids=["a/x", "b/y", "a/x", "c/z"])
    s = envdist.select(counts, k=2)
    assert s.env_ids[0].startswith("env/") and any("env_ids not given" in n for n in s.notes)
    named = envdist.select(counts, k=2, env_ids=["a/x", "b/y", "c/z", "d/w"])
    assert not any("env_ids not given" in n for n in named.notes)
