"""envdist.Curriculum: every sampler kind (HDC and its rivals) through one Python API, with
bit-identical resume from state_dict, refused foreign states and configs, and robust PLR's
training flag."""

import copy
import json

import numpy as np
import pytest

import envdist
from envdist import HDC, Curriculum

from kinds import KINDS, changed_field, configs

ENVS = ["maze/classic", "count-objects/classic", "sokoban/classic"]

# Small windows so that every sampler moves within a few hundred episodes.
CONFIGS = configs({
    "hdc": {"min_episodes": 4, "competence_threshold": 0.5},
    "pass_rate": {"group_size": 4},
    "learnability": {"top_k": 3},
    "learning_progress": {"update_interval": 16},
    "sec": {"batch_episodes": 16, "group_size": 4},
    "ladder": {"check_episodes": 8, "window": 2},
    "plr": {"buffer_size": 16},
})


def drive(sampler, rounds, rng):
    """Sample a batch, report a success pattern that depends on the tickets; returns the
    ticket ids and the training flags asked before each report."""
    out, flags = [], []
    for _ in range(rounds):
        tickets = sampler.sample(8)
        flags.extend(sampler.trains_on(tickets))
        wins = [(t.seed % 3 != 0) or rng.random() < 0.5 for t in tickets]
        sampler.update([t.ticket_id for t in tickets], wins)
        out.extend(t.ticket_id for t in tickets)
    return out, flags


def test_kinds_and_default_configs():
    assert KINDS[0] == "hdc" and len(set(KINDS)) == len(KINDS) > 1
    for kind in KINDS:
        d = envdist.default_config(kind)
        assert isinstance(d, dict) and "kind" not in d and d
        # The defaults are the config a sampler built without one has.
        assert Curriculum(kind, ENVS).config == d
        assert Curriculum(kind, ENVS, d).state_dict() == Curriculum(kind, ENVS).state_dict()
    # f32 fields keep their shortest form.
    assert envdist.default_config("hdc")["competence_threshold"] == 0.7
    assert envdist.default_config("plr")["staleness_coef"] == 0.3
    assert envdist.default_config("Pass-Rate") == envdist.default_config("pass_rate")
    with pytest.raises(ValueError, match="kind.*bandit"):
        envdist.default_config("bandit")


def test_hdc_is_the_hdc_kind():
    a, b = HDC(ENVS, CONFIGS["hdc"], seed=3), Curriculum("hdc", ENVS, CONFIGS["hdc"], seed=3)
    assert isinstance(a, Curriculum) and a.kind == b.kind == "hdc"
    assert a.sample(20) == b.sample(20)
    assert a.state_dict() == b.state_dict()


@pytest.mark.parametrize("kind", KINDS)
def test_state_saved_in_python_resumes_bit_identically(kind):
    a = Curriculum(kind, ENVS, CONFIGS[kind], seed=7)
    drive(a, 30, np.random.default_rng(0))
    saved = json.loads(json.dumps(a.state_dict()))  # through a file's worth of JSON
    rest_a, flags_a = drive(a, 40, np.random.default_rng(1))
    b = Curriculum(kind, ENVS, CONFIGS[kind], seed=999)  # the seed is part of the state
    b.load_state_dict(saved)
    rest_b, flags_b = drive(b, 40, np.random.default_rng(1))
    assert rest_a == rest_b and flags_a == flags_b
    assert a.state_dict() == b.state_dict()
    assert json.dumps(a.snapshot()) == json.dumps(b.snapshot())  # NaN-safe comparison
    assert (a.samples, a.updates) == (b.samples, b.updates) == (70 * 8, 70 * 8)
    # A state as JSON text restores too.
    c = Curriculum(kind, ENVS, CONFIGS[kind])
    c.load_state_dict(json.dumps(saved))
    assert c.state_dict() == saved


@pytest.mark.parametrize("kind", KINDS)
def test_foreign_changed_and_corrupt_states_are_refused(kind):
    a = Curriculum(kind, ENVS, CONFIGS[kind], seed=7)
    drive(a, 5, np.random.default_rng(0))
    saved = a.state_dict()
    before = json.dumps(saved)
    for other in KINDS:
        if other == kind:
            continue
        b = Curriculum(other, ENVS, CONFIGS[other], seed=1)
        drive(b, 2, np.random.default_rng(0))
        with pytest.raises(ValueError, match="another sampler"):
            a.load_state_dict(b.state_dict())
    field, value = changed_field(kind, CONFIGS[kind])
    changed = Curriculum(kind, ENVS, {**CONFIGS[kind], field: value})
    with pytest.raises(ValueError, match=rf"different configuration.*{field}: "):
        changed.load_state_dict(saved)
    with pytest.raises(ValueError, match="environments"):
        Curriculum(kind, ENVS[:2], CONFIGS[kind]).load_state_dict(saved)
    bad = copy.deepcopy(saved)
    del bad["rng"]
    with pytest.raises(ValueError, match="rng"):
        a.load_state_dict(bad)
    with pytest.raises(ValueError, match="schema_version"):
        a.load_state_dict({**saved, "schema_version": 99})
    with pytest.raises(ValueError, match="not JSON"):
        a.load_state_dict("{truncated")
    with pytest.raises(TypeError, match="dict"):
        a.load_state_dict(42)
    assert json.dumps(a.state_dict()) == before, "a refused state changed the sampler"


@pytest.mark.parametrize("kind", KINDS)
def test_bad_configs_raise_value_errors_naming_the_field(kind):
    field, _ = changed_field(kind, CONFIGS[kind])
    with pytest.raises(ValueError, match=rf"`{field}`: expected an? (integer|number).*, found \"much\""):
        Curriculum(kind, ENVS, {field: "much"})
    with pytest.raises(ValueError, match="`no_such_field`"):
        Curriculum(kind, ENVS, {"no_such_field": 1})
    other = KINDS[(KINDS.index(kind) + 1) % len(KINDS)]
    with pytest.raises(ValueError, match=rf"`kind`.*{other}"):
        Curriculum(kind, ENVS, {"kind": other})
    # A config of another kind: its fields are not this kind's.
    foreign = {k: v for k, v in envdist.default_config(other).items() if k not in envdist.default_config(kind)}
    assert foreign
    with pytest.raises(ValueError, match="unknown field"):
        Curriculum(kind, ENVS, foreign)
    # Its own kind tag is fine.
    assert Curriculum(kind, ENVS, {"kind": kind, **CONFIGS[kind]}).config == Curriculum(kind, ENVS, CONFIGS[kind]).config
    with pytest.raises(KeyError, match="unknown environment"):
        Curriculum(kind, ["maze/classic", "nope/x"])
    with pytest.raises(TypeError, match="config"):
        Curriculum(kind, ENVS, ["window", 2])


def test_bad_values_kinds_and_weights():
    for kind, field, value in [
        ("hdc", "window_width", 0),
        ("pass_rate", "group_size", 0),
        ("learnability", "learnable_prob", 1.5),
        ("learning_progress", "uniform_prob", -0.1),
        ("sec", "temperature", -1.0),
        ("ladder", "threshold", 0.0),
        ("plr", "buffer_size", 0),
    ]:
        with pytest.raises(ValueError, match=f"`{field}`"):
            Curriculum(kind, ENVS, {field: value})
    with pytest.raises(ValueError, match="`harness_levels"):
        Curriculum("sec", ENVS, {"harness_levels": ["H9"]})
    with pytest.raises(ValueError, match="`kind`.*bandit"):
        Curriculum("bandit", ENVS)
    with pytest.raises(TypeError, match="kind"):
        Curriculum(3, ENVS)
    with pytest.raises(ValueError, match="weights"):
        Curriculum("sec", ENVS, weights=[1.0, 2.0, 1.0])
    assert Curriculum("hdc", ENVS, weights=[2.0, 1.0, 1.0]).probabilities()["env"][0] == 0.5


@pytest.mark.parametrize("kind", KINDS)
def test_probabilities_and_snapshots(kind):
    s = Curriculum(kind, ENVS, CONFIGS[kind], seed=2)
    for rounds in (0, 20):
        drive(s, rounds, np.random.default_rng(3))
        p = s.probabilities()
        assert p["env_ids"] == ENVS and p["env"].shape == (3,)
        assert abs(p["env"].sum() - 1.0) < 1e-9 and (p["env"] >= 0).all()
        assert p["scale_window"].shape == (3, 2)
        snap = s.snapshot()
        assert [e["env"] for e in snap] == ENVS
        np.testing.assert_allclose([e["probability"] for e in snap], p["env"])
        for e, (lo, hi) in zip(snap, p["scale_window"]):
            r = envdist.spec(e["env"])["scale"]
            assert r["min"] <= lo == e["scale_lo"] <= hi == e["scale_hi"] <= r["max"]
            assert e["harness"] in {"H0", "H1", "H2", "H3", "H4"} and -1e-9 <= e["mean_harness"] <= 4 + 1e-9
            assert e["successes"] <= e["episodes"] and isinstance(e["score"], float)
        assert sum(e["episodes"] for e in snap) == s.updates
    assert ("harness" in p) == (kind == "hdc")
    if kind == "hdc":
        assert np.allclose(p["harness"].sum(1), 1.0) and "competence" in s.status()[0]
    else:
        assert json.dumps(s.status()) == json.dumps(s.snapshot())
    # Rows: tickets and the grid of cells the sampler can draw.
    rows = s.to_rows(4)
    assert len(rows) == 4 and {"ticket_id", "env_id", "harness", "scale", "seed"} <= set(rows[0])
    levels = s.config.get("harness_levels", [f"H{h}" for h in range(5)])
    assert {r["harness"] for r in s.grid_rows()} == set(levels)


def test_robust_plr_trains_only_on_replays():
    plr = Curriculum("plr", ENVS, {"buffer_size": 8, "rho": 0.25}, seed=5)
    seen = set()
    flags = []
    rng = np.random.default_rng(0)
    for _ in range(60):
        t = plr.sample(1)[0]
        flag = plr.trains_on(t.ticket_id)
        # A replay replays an exact ticket already played and reported; a new level is new.
        assert flag == (t.ticket_id in seen)
        flags.append(flag)
        plr.update([t], [bool(rng.random() < 0.5)])
        seen.add(t.ticket_id)
    assert any(flags) and not all(flags)
    # Non-robust PLR and every other kind train on everything.
    for kind, config in [("plr", {"buffer_size": 8, "rho": 0.25, "robust": False}), *CONFIGS.items()]:
        if kind == "plr" and config.get("robust", True):
            continue
        s = Curriculum(kind, ENVS, config, seed=5)
        _, flags = drive(s, 10, np.random.default_rng(0))
        assert all(flags), kind
    with pytest.raises(KeyError, match="not one of this sampler"):
        plr.trains_on("tetris/x|H4|3|1")
    assert plr.trains_on([]) == []
