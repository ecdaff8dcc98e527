"""envdist.vector.make: the same episodes as Gymnasium's SyncVectorEnv / AsyncVectorEnv over
envdist.make envs (NEXT_STEP autoreset), spaces, zero-copy frames, Gymnasium's vector
wrappers, and bad input."""

from functools import partial

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv

import envdist
import envdist.vector

IDS = ["maze/classic", "count-objects/classic", "sokoban/classic", "lights-out/classic"]
# Small scales so that episodes end (and autoreset happens) within the test's steps.
SCALES = [envdist.spec(i)["scale"]["min"] for i in IDS]


def reference(vectoriser, n):
    fns = [partial(envdist.make, IDS[i % len(IDS)], "H4", SCALES[i % len(IDS)]) for i in range(n)]
    return vectoriser(fns, autoreset_mode=AutoresetMode.NEXT_STEP)


@pytest.mark.parametrize(
    "vectoriser",
    [SyncVectorEnv, partial(AsyncVectorEnv, shared_memory=False)],
    ids=["Sync", "Async"],
)
def test_same_episodes_as_gymnasium_vector_envs(vectoriser):
    """Gymnasium's test_vector_env_equal, with our vector env against its reference ones."""
    n, steps = 6, 300
    ours = envdist.vector.make(IDS, n, harness="H4", scale=SCALES)
    ref = reference(vectoriser, n)
    assert ours.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert ours.action_space == ref.action_space
    assert ours.single_observation_space["image"] == ref.single_observation_space["image"]
    o1, _ = ours.reset(seed=42)
    o2, _ = ref.reset(seed=42)
    assert np.array_equal(o1["image"], o2["image"])
    ours.action_space.seed(0)
    ended = 0
    for _ in range(steps):
        actions = ours.action_space.sample()
        assert actions in ref.action_space
        a = ours.step(actions)
        b = ref.step(actions)
        assert a[0] in ours.observation_space
        assert np.array_equal(a[0]["image"], b[0]["image"])
        assert np.array_equal(a[1], b[1]) and a[1].dtype == b[1].dtype
        assert np.array_equal(a[2], b[2]) and np.array_equal(a[3], b[3])
        assert np.array_equal(a[4]["success"], b[4]["success"])
        assert np.array_equal(a[4]["action_mask"], b[4]["action_mask"])
        assert np.array_equal(a[4]["illegal_action"], b[4]["illegal_action"])
        ended += int(np.sum(a[2] | a[3]))
    assert ended > 0, "no episode ended: autoreset was not exercised"
    ours.close()
    ref.close()


def test_next_step_autoreset():
    """Gymnasium's test_autoreset_next_step semantics on one sub-env."""
    env = envdist.vector.make(["count-objects/classic"], 2)
    obs, _ = env.reset(seed=3)
    single = envdist.make("count-objects/classic")
    first, _ = single.reset(seed=3)
    assert np.array_equal(obs["image"][0], first["image"])
    # A single-turn env ends at the first answer.
    _, r, term, trunc, info = env.step([envdist.parse_action("answer_0")] * 2)
    assert np.all(term | trunc)
    obs, r, term, trunc, info = env.step([0, 0])
    assert np.all(r == 0) and not np.any(term | trunc)
    nxt, _ = single.reset()
    assert np.array_equal(obs["image"][0], nxt["image"])


def test_frames_are_handed_over_without_a_copy():
    env = envdist.vector.make(IDS, 4)
    o1, _ = env.reset(seed=0)
    o2, *_ = env.step(np.zeros(4, dtype=np.int64))
    assert o1["image"] is o2["image"] and o1["image"].flags["C_CONTIGUOUS"]
    copying = envdist.vector.make(IDS, 4, copy=True)
    c1, _ = copying.reset(seed=0)
    c2, *_ = copying.step([0, 0, 0, 0])
    assert not np.shares_memory(c1["image"], c2["image"])


def test_gymnasium_make_vec_builds_it():
    envs = gym.make_vec(envdist.gym_id("maze/classic"), num_envs=3, harness="H2")
    assert isinstance(envs, envdist.vector.EnvdistVectorEnv) and envs.num_envs == 3
    obs, _ = envs.reset(seed=0)
    assert obs["image"].shape == (3, 64, 64, 3)
    assert {e[1] for e in envs.episodes()} == {"H2"}


def test_gymnasium_vector_wrappers_run_on_it():
    env = gym.wrappers.vector.RecordEpisodeStatistics(envdist.vector.make(["count-objects/classic"], 3))
    env.reset(seed=0)
    episodes = 0
    for _ in range(4):
        _, _, term, trunc, info = env.step(env.action_space.sample())
        if "episode" in info:
            episodes += int(info["_episode"].sum())
    assert episodes >= 3


def test_step_before_reset_raises_reset_needed():
    env = envdist.vector.make(IDS, 4)
    with pytest.raises(envdist.ResetNeeded, match=r"vector env: step\(\) before reset\(\)"):
        env.step([0, 0, 0, 0])
    raw = envdist._envdist.VectorEnv(["maze/classic"], ["H4"], [None])
    frames = np.zeros((1, 64, 64, 3), np.uint8)
    out = [np.zeros(1, t) for t in (np.float64, np.bool_, np.bool_, np.bool_, np.uint32)]
    with pytest.raises(RuntimeError, match=r"step\(\) before reset\(\)"):
        raw.step(np.zeros(1, np.int64), frames, *out)
    obs, info = env.reset(seed=0)
    assert [e[3] for e in env.episodes()] == [0, 1, 2, 3]
    env.step([0, 0, 0, 0])


def test_text_actions_and_bad_input():
    env = envdist.vector.make(IDS, 4)
    env.reset(seed=0)
    env.step(["left", "answer_1", "<answer>up</answer>", "interact"])
    with pytest.raises(ValueError, match="names no action"):
        env.step(["left", "jump", "up", "up"])
    with pytest.raises(TypeError, match="actions: expected integer action indices.*found floats"):
        env.step(np.zeros(4))
    with pytest.raises(ValueError, match=r"expected shape \(4,\), found \(3,\)"):
        env.step([0, 0, 0])
    with pytest.raises(ValueError, match=r"actions\[2\].*found 99"):
        env.step([0, 0, 99, 0])
    with pytest.raises(KeyError, match="unknown environment"):
        envdist.vector.make(["maze/classic", "nope/x"], 2)
    with pytest.raises(ValueError, match="num_envs"):
        envdist.vector.make(IDS, 0)
    with pytest.raises(ValueError, match="expected 4 seeds"):
        env.reset(seed=[1, 2])
    env.step([0, 0, 0, 0])


def test_text_option_gives_the_single_envs_observations_batched():
    n = 4
    ours = envdist.vector.make(IDS, n, harness="H0", scale=SCALES, text=True)
    fns = [partial(envdist.make, IDS[i], "H0", SCALES[i]) for i in range(n)]
    ref = SyncVectorEnv(fns, autoreset_mode=AutoresetMode.NEXT_STEP)
    assert ours.single_observation_space == ref.single_observation_space
    assert ours.observation_space == ref.observation_space
    o1, _ = ours.reset(seed=3)
    o2, _ = ref.reset(seed=3)
    assert data_equivalence(o1, o2)
    ours.action_space.seed(1)
    for _ in range(40):
        act = ours.action_space.sample()
        a, b = ours.step(act), ref.step(act)
        assert data_equivalence(a[0], b[0]) and a[0] in ours.observation_space
    # gymnasium.make_vec: one id, one observation space, whichever vectorization mode.
    gid = envdist.gym_id("maze/classic")
    for mode in (None, "sync"):
        v = gym.make_vec(gid, 2, vectorization_mode=mode)
        assert v.single_observation_space == envdist.make("maze/classic").observation_space, mode
    assert set(gym.make_vec(gid, 2, text=False).single_observation_space) == {"image"}


def test_masks_are_never_empty_over_many_mixed_envs():
    """The issue's run: 16 mixed envs, random masked actions; every mask row has an action."""
    envs = envdist.vector.make(envdist.pool_ids()[:16], num_envs=16)
    obs, info = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(1500):
        m = info["action_mask"]
        assert (m.sum(1) > 0).all()
        actions = np.array([rng.choice(np.flatnonzero(row)) for row in m])
        obs, r, term, trunc, info = envs.step(actions)
        assert not info["illegal_action"].any()
        ends += int((term | trunc).sum())
    assert ends > 100


def test_illegal_actions_are_flagged_warned_or_refused():
    for mode in ("noop", "warn", "raise"):
        envs = envdist.vector.make("maze/classic", 2, illegal_action=mode)
        _, info = envs.reset(seed=0)
        bad = int(np.flatnonzero(info["action_mask"][0] == 0)[0])
        good = int(np.flatnonzero(info["action_mask"][1])[0])
        if mode == "raise":
            with pytest.raises(ValueError, match=r"sub-env 0: maze/classic: action \d+ \(\w+\) is not legal"):
                envs.step(np.array([bad, good]))
            continue
        if mode == "warn":
            with pytest.warns(UserWarning, match="no-op that costs a step"):
                _, _, _, _, info = envs.step(np.array([bad, good]))
        else:
            _, _, _, _, info = envs.step(np.array([bad, good]))
        assert info["illegal_action"].tolist() == [True, False]
    with pytest.raises(ValueError, match="illegal_action"):
        envdist.vector.make("maze/classic", 1, illegal_action="ignore")
