"""envdist.HDC: tickets, updates, probabilities, and bit-identical resume from state_dict."""

import copy
import json

import numpy as np
import pytest

import envdist
from envdist import HDC, Ticket

ENVS = ["maze/classic", "count-objects/classic", "sokoban/classic"]
CONFIG = {"min_episodes": 4, "competence_threshold": 0.5}


def drive(hdc, rounds, rng):
    """Sample a batch, report a success pattern that depends on the tickets."""
    out = []
    for _ in range(rounds):
        tickets = hdc.sample(8)
        wins = [(t.seed % 3 != 0) or rng.random() < 0.5 for t in tickets]
        hdc.update([t.ticket_id for t in tickets], wins)
        out.extend(t.ticket_id for t in tickets)
    return out


def test_tickets_play_their_episode():
    hdc = HDC(ENVS, CONFIG, seed=1)
    for t in hdc.sample(5):
        assert t.env_id in ENVS and t.harness in {"H0", "H1", "H2", "H3", "H4"}
        assert Ticket.parse(t.ticket_id) == t
        env = t.make()
        obs, info = env.reset(seed=t.seed)
        assert (info["harness"], info["scale"], info["seed"]) == (t.harness, t.scale, t.seed)


def test_state_saved_in_python_resumes_bit_identically():
    a = HDC(ENVS, CONFIG, seed=7)
    drive(a, 30, np.random.default_rng(0))
    saved = json.loads(json.dumps(a.state_dict()))  # through a file's worth of JSON
    rest_a = drive(a, 40, np.random.default_rng(1))
    b = HDC(ENVS, CONFIG, seed=999)  # the seed is part of the state, not the config
    b.load_state_dict(saved)
    rest_b = drive(b, 40, np.random.default_rng(1))
    assert rest_a == rest_b
    assert a.state_dict() == b.state_dict()
    assert [s["harness"] for s in a.status()] == [s["harness"] for s in b.status()]
    assert any(s["harness"] != "H0" for s in a.status()), "the curriculum never moved"


def test_config_mismatch_and_corrupt_states_are_refused():
    a = HDC(ENVS, CONFIG, seed=7)
    drive(a, 5, np.random.default_rng(0))
    saved = a.state_dict()
    other = HDC(ENVS, {**CONFIG, "lambda": 2.0})
    with pytest.raises(ValueError, match=r"different configuration.*lambda: 1.0 -> 2.0"):
        other.load_state_dict(saved)
    fewer = HDC(ENVS[:2], CONFIG)
    with pytest.raises(ValueError, match="environments"):
        fewer.load_state_dict(saved)
    before = a.state_dict()
    bad = copy.deepcopy(saved)
    bad["per_env"][0]["ema"] = 7.0
    with pytest.raises(ValueError, match=r"per_env\[0\].ema"):
        a.load_state_dict(bad)
    bad = copy.deepcopy(saved)
    del bad["rng"]
    with pytest.raises(ValueError, match="rng"):
        a.load_state_dict(bad)
    with pytest.raises(ValueError, match="schema_version"):
        a.load_state_dict({"schema_version": 99})
    with pytest.raises(ValueError, match="not JSON"):
        a.load_state_dict("{truncated")
    with pytest.raises(TypeError, match="dict"):
        a.load_state_dict(42)
    assert a.state_dict() == before, "a refused state changed the sampler"


def test_probabilities_status_rows_and_weights():
    hdc = HDC(ENVS, CONFIG, seed=0, weights=[2.0, 1.0, 1.0])
    p = hdc.probabilities()
    assert p["env_ids"] == ENVS
    np.testing.assert_allclose(p["env"], [0.5, 0.25, 0.25])
    assert p["harness"].shape == (3, 5) and np.allclose(p["harness"].sum(1), 1.0)
    assert p["harness"][0, 0] == 1.0  # everything starts at H0
    lo, hi = p["scale_window"][0]
    assert lo == envdist.spec(ENVS[0])["scale"]["min"] and hi >= lo
    rows = hdc.to_rows(4)
    assert len(rows) == 4 and {"ticket_id", "env_id", "harness", "scale", "seed", "instruction"} <= set(rows[0])
    grid = hdc.grid_rows(seeds_per_cell=1)
    cells = sum(5 * (envdist.spec(e)["scale"]["max"] - envdist.spec(e)["scale"]["min"] + 1) for e in ENVS)
    assert len(grid) == cells
    assert hdc.config["min_episodes"] == 4 and hdc.config["mode"] == "full"


def test_bad_input_is_a_clear_python_exception():
    with pytest.raises(KeyError, match="unknown environment"):
        HDC(["maze/classic", "nope/x"])
    with pytest.raises(ValueError, match="lamda"):
        HDC(ENVS, {"lamda": 1.0})
    with pytest.raises(ValueError, match="window_width"):
        HDC(ENVS, {"window_width": 0})
    with pytest.raises(ValueError, match="weights"):
        HDC(ENVS, weights=[1.0])
    hdc = HDC(ENVS)
    t = hdc.sample(1)[0]
    with pytest.raises(ValueError, match="one per ticket"):
        hdc.update([t.ticket_id], [True, False])
    with pytest.raises(ValueError, match="env_id\\|harness\\|scale\\|seed"):
        hdc.update(["garbage"], [True])
    with pytest.raises(KeyError, match="not one of this sampler"):
        hdc.update(["tetris/x|H0|3|1"], [True])
    with pytest.raises(TypeError, match="successes"):
        hdc.update([t.ticket_id], ["yes"])
