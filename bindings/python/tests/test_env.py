"""envdist.make: Gymnasium's own checker on every family, actions by index and text, info,
determinism, and errors that are Python exceptions with clear messages."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import envdist


def one_per_family():
    seen = {}
    for env_id in envdist.env_ids():
        family = envdist.spec(env_id)["family"]
        seen.setdefault(family, env_id)
    return list(seen.values())


FAMILIES = one_per_family()


def test_every_pool_and_held_out_env_is_registered_with_gymnasium():
    ids = envdist.env_ids()
    assert len(envdist.pool_ids()) == 200 and len(envdist.ood_ids()) > 0
    assert len(envdist.confirm_ids()) > 0
    assert len(ids) == len(envdist.pool_ids()) + len(envdist.ood_ids()) + len(envdist.confirm_ids())
    assert len(ids) == len(set(envdist.gym_id(i) for i in ids))
    for env_id in ids:
        assert envdist.gym_id(env_id) in gym.registry
    env = gym.make(envdist.gym_id(envdist.ood_ids()[0]), harness="H0")
    obs, info = env.reset(seed=1)
    assert obs["image"].shape == (64, 64, 3) and info["harness"] == "H0"


@pytest.mark.parametrize("harness", ["H0", "H4"])
@pytest.mark.parametrize("env_id", FAMILIES)
def test_gymnasium_check_env_passes(env_id, harness):
    env = envdist.make(env_id, harness=harness)
    check_env(env, skip_render_check=True)


def test_observation_text_follows_the_harness_level():
    h0 = envdist.make("maze/classic", harness="H0")
    h4 = envdist.make("maze/classic", harness="H4")
    o0, i0 = h0.reset(seed=3)
    o4, i4 = h4.reset(seed=3)
    assert np.array_equal(o0["image"], o4["image"])
    assert o0["instruction"] == o4["instruction"] != ""
    assert "Rules:" in o0["text"] and "Hints:" in o0["text"] and o4["text"] == ""
    assert all(v is not None for v in i0["harness_text"].values())
    assert all(v is None for v in i4["harness_text"].values())
    assert o0["image"].dtype == np.uint8


def test_actions_by_index_and_text_and_info():
    env = envdist.make("maze/classic", harness="H0", scale=5)
    obs, info = env.reset(seed=7)
    assert (info["scale"], info["seed"], info["env_id"]) == (5, 7, "maze/classic")
    assert info["action_mask"].shape == (envdist.NUM_ACTIONS,)
    solved = False
    for t in range(info["horizon"]):
        a = env.oracle_action()
        name = envdist.ACTION_NAMES[a]
        # Alternate the ways a trainer hands an action over.
        action = [a, np.int64(a), name, f"<think>...</think><answer>{name}</answer>"][t % 4]
        obs, reward, terminated, truncated, info = env.step(action)
        assert isinstance(info["abilities"], list)
        if terminated or truncated:
            solved = info["success"]
            break
    assert solved and reward == 1.0
    assert envdist.parse_action("Action: move left") == envdist.ACTION_NAMES.index("left")
    assert envdist.parse_action("answer 3") == envdist.ACTION_NAMES.index("answer_3")


def test_reset_seed_replays_and_unseeded_resets_continue_the_stream():
    a, b = envdist.make("sokoban/classic"), envdist.make("sokoban/classic")
    o1, _ = a.reset(seed=11)
    o2, _ = b.reset(seed=11)
    assert np.array_equal(o1["image"], o2["image"])
    n1, i1 = a.reset()
    n2, i2 = b.reset()
    assert i1["seed"] == i2["seed"] != 11 and np.array_equal(n1["image"], n2["image"])
    _, info = a.reset(seed=5, options={"harness": "H2", "scale": a.spec_dict["scale"]["max"]})
    assert (info["harness"], info["scale"]) == ("H2", a.spec_dict["scale"]["max"])


def test_bad_input_raises_clear_python_exceptions():
    with pytest.raises(KeyError, match='unknown environment "maze/nope".*the nearest: maze/noise'):
        envdist.make("maze/nope")
    with pytest.raises(KeyError, match="the nearest: tic-tac-toe/classic"):
        envdist.make("tictactoe/classic")
    with pytest.raises(KeyError, match="the nearest: count-objects/classic"):
        envdist.spec("count/classic")
    with pytest.raises(ValueError, match="H7"):
        envdist.make("maze/classic", harness="H7")
    with pytest.raises(ValueError, match=r"field `scale`: expected \d+..=\d+ \(inclusive; the scale range of maze/classic\), found 999"):
        envdist.make("maze/classic", scale=999)
    with pytest.raises(TypeError, match="scale"):
        envdist.make("maze/classic", scale="big")
    env = envdist.make("maze/classic")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="names no action.*answer_0"):
        env.step("jump over the wall")
    with pytest.raises(ValueError, match="several different actions"):
        env.step("left or right")
    with pytest.raises(ValueError, match="found 22"):
        env.step(22)
    with pytest.raises(ValueError, match="found -1"):
        env.step(-1)
    with pytest.raises(TypeError, match="float"):
        env.step(1.5)
    with pytest.raises(TypeError, match="seed"):
        env.reset(seed="x")
    with pytest.raises(ValueError, match="reset options"):
        env.reset(options={"level": 3})
    # The env still works after every refusal.
    env.step("left")


def test_version():
    import importlib.metadata
    import re

    assert re.fullmatch(r"\d+\.\d+\.\d+.*", envdist.__version__)
    assert envdist.__version__ == importlib.metadata.version("envdist")


@pytest.mark.parametrize("env_id", FAMILIES)
def test_masks_are_never_empty_and_final_steps_admit_every_action(env_id):
    env = envdist.make(env_id)
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=0)
    ends = 0
    for _ in range(150):
        m = info["action_mask"]
        assert m.any() and np.array_equal(m.astype(bool), env.action_masks())
        obs, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(m))))
        assert not info["illegal_action"]
        if term or trunc:
            assert info["action_mask"].all()  # nothing is played from a final observation
            ends += 1
            obs, info = env.reset()
    assert ends > 0 or envdist.spec(env_id)["max_steps"] > 150


def test_steps_after_the_end_warn_and_illegal_actions_are_flagged():
    env = envdist.make("count-objects/classic")  # single-turn: one step ends it
    env.reset(seed=0)
    _, _, term, _, _ = env.step(0)
    assert term
    with pytest.warns(UserWarning, match=r"count-objects/classic: step\(\) after the episode ended: it returned terminated = True at step 1"):
        obs, reward, term, trunc, info = env.step(0)
    assert reward == 0.0 and term and info["action_mask"].all()
    maze = envdist.make("maze/classic")
    _, info = maze.reset(seed=0)
    bad = int(np.flatnonzero(info["action_mask"] == 0)[0])
    _, _, _, _, info = maze.step(bad)
    assert info["illegal_action"] and info["steps"] == 1  # a no-op that cost a step
    strict = envdist.make("maze/classic", illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(ValueError, match=r"maze/classic: action \d+ \(\w+\) is not legal .*legal: "):
        strict.step(bad)
    warn = envdist.make("maze/classic", illegal_action="warn")
    warn.reset(seed=0)
    with pytest.warns(UserWarning, match="no-op"):
        warn.step(bad)


def test_step_before_reset_raises_reset_needed_as_gymnasium_does():
    import gymnasium

    env = envdist.make("maze/classic")
    with pytest.raises(envdist.ResetNeeded, match=r"maze/classic: step\(\) before reset\(\)"):
        env.step(0)
    # Both Gymnasium's exception (what its OrderEnforcing raises) and a RuntimeError.
    assert issubclass(envdist.ResetNeeded, gymnasium.error.ResetNeeded)
    assert issubclass(envdist.ResetNeeded, RuntimeError)
    # Nothing was played: the first episode is the one reset chooses.
    _, info = env.reset(seed=3)
    assert (info["seed"], info["steps"]) == (3, 0)
    # The extension refuses it too, for code that drives it directly.
    raw = envdist._envdist.Env("maze/classic")
    with pytest.raises(RuntimeError, match=r"step\(\) before reset\(\)"):
        raw.step(0)
    # The envs built on it refuse it the same way.
    from envdist.adapters.vagen import VagenEnv

    with pytest.raises(envdist.ResetNeeded):
        VagenEnv("maze/classic").step("left")
    with pytest.raises(envdist.ResetNeeded):
        envdist.wrappers.CurriculumEnv(envdist.HDC(["maze/classic"])).step(0)
    # A truncated multi-turn episode says so in the warning of the step after it.
    long = envdist.make("maze/classic")
    long.reset(seed=0)
    trunc = False
    while not trunc:
        _, _, term, trunc, info = long.step("wait")
        assert not term
    with pytest.warns(UserWarning, match=f"truncated = True at step {info['steps']}"):
        long.step("wait")


def test_spec_fields_are_documented():
    """Every key of spec() has a row in bindings/python/README.md's spec table."""
    import pathlib

    readme = (pathlib.Path(__file__).parents[1] / "README.md").read_text()
    for key in envdist.spec("maze/classic"):
        assert f"| `{key}` |" in readme, key
