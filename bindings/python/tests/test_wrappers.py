"""envdist.wrappers: numpy-only observations for SB3, MaskablePPO and CleanRL-style loops.
SB3's and Gymnasium's own checkers on every family, in every text mode, and on the curriculum
env; masks a masked sampler can always sample from."""

import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env

import envdist
from envdist import wrappers


def one_per_family():
    seen = {}
    for env_id in envdist.env_ids():
        seen.setdefault(envdist.spec(env_id)["family"], env_id)
    return list(seen.values())


FAMILIES = one_per_family()


def sb3_check(env):
    from stable_baselines3.common.env_checker import check_env

    with warnings.catch_warnings():
        # Any warning of SB3's checker (a CNN it cannot take, a space it ignores) fails the test.
        warnings.simplefilter("error")
        check_env(env, warn=True, skip_render_check=True)


# Gymnasium's checker notes that it is handed a wrapper: the wrapper is what is being checked.
pytestmark = pytest.mark.filterwarnings("ignore:.*is different from the unwrapped version")


@pytest.mark.integration
@pytest.mark.parametrize("text", [None, "bow", "ids"])
@pytest.mark.parametrize("env_id", FAMILIES)
def test_sb3_check_env_passes_on_every_family(env_id, text):
    sb3_check(wrappers.make(env_id, harness="H0", text=text))


@pytest.mark.parametrize("text", [None, "bow", "ids"])
@pytest.mark.parametrize("env_id", FAMILIES)
def test_gymnasium_check_env_passes_on_every_family(env_id, text):
    gym_check_env(wrappers.make(env_id, harness="H0", text=text), skip_render_check=True)


@pytest.mark.integration
@pytest.mark.parametrize("text", [None, "bow", "ids"])
def test_the_curriculum_env_passes_sb3s_checker(text):
    sb3_check(wrappers.make(envdist.HDC(FAMILIES[:6], seed=0), text=text))


@pytest.mark.parametrize("text", [None, "bow", "ids"])
def test_the_curriculum_env_passes_gymnasiums_checker(text):
    gym_check_env(wrappers.make(envdist.HDC(FAMILIES[:6], seed=0), text=text), skip_render_check=True)


@pytest.mark.parametrize("text", ["bow", "ids"])
def test_split_channels_pass_both_checkers(text):
    env = wrappers.make("maze/classic", harness="H0", text=text, split_channels=True)
    gym_check_env(env, skip_render_check=True)
    gym_check_env(wrappers.make(envdist.HDC(FAMILIES[:6], seed=0), text=text, split_channels=True), skip_render_check=True)


@pytest.mark.integration
def test_split_channels_pass_sb3s_checker():
    sb3_check(wrappers.make("maze/classic", harness="H0", text="bow", split_channels=True))
    sb3_check(wrappers.make(envdist.HDC(FAMILIES[:6], seed=0), text="bow", split_channels=True))


def test_split_channels_show_which_action_a_hint_names():
    # One bag of all the text cannot: the rules list every action. The hints' own bag holds
    # the hinted action's token and no other action's.
    env = wrappers.make("maze/classic", harness="H0", text="bow", split_channels=True)
    obs, info = env.reset(seed=1)
    assert set(obs) == {"image", "instruction", "rules", "observation", "state", "hints"}
    for c in ("rules", "observation", "state", "hints"):
        assert np.array_equal(obs[c], wrappers.bag_of_words(info["harness_text"][c] or ""))
    moves = ("up", "down", "left", "right")
    hinted = [m for m in moves if f"next action: {m}" in info["harness_text"]["hints"]]
    assert len(hinted) == 1
    bucket = {m: wrappers.bag_of_words(m).argmax() for m in moves}
    assert len(set(bucket.values())) == 4, "the four move words hash apart at 256 dims"
    assert all(obs["rules"][bucket[m]] == 1 for m in moves)
    assert [m for m in moves if obs["hints"][bucket[m]] == 1] == hinted
    one_bag = wrappers.make("maze/classic", harness="H0", text="bow").reset(seed=1)[0]["text"]
    assert all(one_bag[bucket[m]] == 1 for m in moves)
    # A dropped channel is a zero vector; the observation after a step follows the new state.
    h4 = wrappers.make("maze/classic", harness="H4", text="bow", split_channels=True)
    o, _ = h4.reset(seed=1)
    assert all(o[c].sum() == 0 for c in ("rules", "observation", "state", "hints"))
    o, *_, info = env.step(env.action_masks().argmax())
    assert np.array_equal(o["hints"], wrappers.bag_of_words(info["harness_text"]["hints"] or ""))
    # observation() called on its own (no info at hand) asks the env for its channels.
    assert np.array_equal(env.observation(env.unwrapped._observation(env.unwrapped._image))["hints"], o["hints"])
    with pytest.raises(ValueError, match="split_channels"):
        wrappers.make("maze/classic", text=None, split_channels=True)
    with pytest.raises(TypeError, match="split_channels"):
        wrappers.make("maze/classic", split_channels="yes")


def test_observations_are_numpy_and_documented_encodings():
    env = wrappers.make("maze/classic", harness="H0", text="bow", text_dims=64)
    obs, info = env.reset(seed=0)
    assert set(obs) == {"image", "instruction", "text"}
    assert obs["image"].shape == (wrappers.SB3_CANVAS, wrappers.SB3_CANVAS, 3) and obs["image"].dtype == np.uint8
    assert obs["text"].shape == (64,) and obs["text"].dtype == np.float32 and obs["text"].sum() > 0
    inner = env.unwrapped.reset(seed=0)[0]
    assert np.array_equal(obs["instruction"], wrappers.bag_of_words(inner["instruction"], 64))
    # The documented hash: CRC-32 of the lower-cased token, modulo dims.
    import zlib

    assert wrappers.bag_of_words("Reach the GOAL", 64)[zlib.crc32(b"goal") % 64] == 1.0
    ids = wrappers.make("maze/classic", harness="H0", text="ids", max_chars=(16, 32))
    o, _ = ids.reset(seed=0)
    assert o["instruction"].dtype == np.uint8 and o["instruction"].shape == (16,)
    assert bytes(o["instruction"][o["instruction"] > 0]).decode() == inner["instruction"][:16]
    img = wrappers.make("maze/classic", text=None)
    o, _ = img.reset(seed=0)
    assert isinstance(o, np.ndarray) and o.shape == (64, 64, 3)
    with pytest.warns(UserWarning, match="at least 36"):
        wrappers.make("maze/classic", canvas=32, text=None)
    with pytest.raises(ValueError, match="text"):
        wrappers.make("maze/classic", text="words")


def test_action_masks_are_never_empty_and_follow_the_state():
    env = wrappers.make("sokoban/classic", text=None)
    rng = np.random.default_rng(0)
    env.reset(seed=1)
    episodes = 0
    for _ in range(400):
        m = env.action_masks()
        assert m.dtype == bool and m.any()
        _, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(m))))
        assert not info["illegal_action"]
        assert np.array_equal(info["action_mask"].astype(bool), env.action_masks())
        if term or trunc:
            assert env.action_masks().all()  # the episode is over: nothing is played from here
            episodes += 1
            env.reset()
    assert episodes > 0


def test_curriculum_env_plays_tickets_and_reports_them():
    ids = ["count-objects/classic", "maze/classic"]
    hdc = envdist.HDC(ids, config={"min_episodes": 2, "competence_threshold": 0.5}, seed=0)
    env = wrappers.make(hdc, text="bow")
    played = []
    for ep in range(10):
        obs, info = env.reset()
        t = envdist.Ticket.parse(info["ticket"])
        assert (info["env_id"], info["harness"], info["scale"], info["seed"]) == (t.env_id, t.harness, t.scale, t.seed)
        done = False
        while not done:
            obs, r, term, trunc, info = env.step(env.unwrapped.current.oracle_action())
            done = term or trunc
        played.append(t)
    assert hdc.updates == 10 and {t.env_id for t in played} <= set(ids)
    assert sum(s["successes"] for s in hdc.status()) == 10  # the solver wins every episode
    # Seeded resets replay; unseeded ones draw the next ticket.
    a, _ = env.reset(seed=5)
    env.reset()
    b, info = env.reset(seed=5)
    assert np.array_equal(a["image"], b["image"])
    _, info = env.reset(options={"ticket": "maze/classic|H2|3|9"})
    assert info["ticket"] == "maze/classic|H2|3|9" and info["harness"] == "H2"


@pytest.mark.integration
def test_cleanrl_style_masked_sampling_stays_finite():
    import torch

    envs = wrappers.make_vec(envdist.pool_ids()[:8], 8, text=None)
    obs, info = envs.reset(seed=0)
    assert obs.shape == (8, 64, 64, 3) and obs.dtype == np.uint8
    logits = torch.zeros(8, envdist.NUM_ACTIONS)
    ends = 0
    for _ in range(300):
        mask = torch.as_tensor(info["action_mask"]).bool()
        dist = torch.distributions.Categorical(logits=logits.masked_fill(~mask, -1e9))
        a = dist.sample()
        assert torch.isfinite(dist.log_prob(a)).all() and mask.gather(1, a[:, None]).all()
        obs, r, term, trunc, info = envs.step(a.numpy())
        assert not info["illegal_action"].any()
        ends += int((term | trunc).sum())
    assert ends > 0


def test_curriculum_env_reports_steps_so_balance_turns_serves_multi_turn_envs():
    # HDC's balance_turns shares the *steps* between single- and multi-turn envs. Reported
    # without their lengths every episode counted 0 steps, the tie went to single-turn envs,
    # and key-door was never served (found running examples/sb3_maskable_hdc.py).
    hdc = envdist.HDC(["relative-position/classic", "key-door/classic"], config={"balance_turns": True}, seed=0)
    env = wrappers.make(hdc, text=None)
    rng = np.random.default_rng(0)
    played = {"relative-position/classic": 0, "key-door/classic": 0}
    steps = dict(played)
    env.reset(seed=0)
    for _ in range(600):
        _, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        steps[info["env_id"]] += 1
        if term or trunc:
            played[info["env_id"]] += 1
            env.reset()
    assert played["key-door/classic"] > 0, played
    # Steps, not episodes, are shared: within one multi-turn episode of each other.
    assert abs(steps["key-door/classic"] - steps["relative-position/classic"]) <= 64, steps
    with pytest.raises(ValueError, match="steps: this sampler balances"):
        hdc.update([hdc.sample(1)[0]], [True])
    with pytest.raises(ValueError, match="steps: expected non-negative ints"):
        hdc.update([hdc.sample(1)[0]], [True], steps=[-1])
    # Samplers that do not balance take outcomes without steps, as before.
    plain = envdist.HDC(["key-door/classic"], seed=0)
    plain.update([plain.sample(1)[0]], [True])
