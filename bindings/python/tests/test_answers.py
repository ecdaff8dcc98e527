"""Answers in words: every single-turn env (pool and held-out sets) reads its answer the way a VLM
writes it ("3", "yes", "above", "the green one") through the Rust parser, in the Gymnasium env,
the vector env, the VAGEN-style env and verl's reward; the slot form and the action names still
read as before."""

import numpy as np
import pytest

import envdist
from envdist import Ticket
from envdist.adapters.vagen import VagenEnv
from envdist.adapters.verl_reward import compute_score, score_reply

SINGLE_TURN = [s["id"] for s in map(envdist.spec, envdist.env_ids()) if s["turn"] == "ST"]


def _answer_in_words(env) -> tuple[int, str]:
    """The solver's action and its first words (a number, yes/no, a direction, a colour ...)."""
    oracle = env.oracle_action()
    return oracle, env.answers()[envdist.ACTION_NAMES[oracle]][0]


def test_the_sweep_covers_the_pool_and_the_held_out_set():
    splits = {envdist.spec(i)["split"] for i in SINGLE_TURN}
    assert {"pool", "ood"} <= splits and len(SINGLE_TURN) > 50


@pytest.mark.parametrize("env_id", SINGLE_TURN)
def test_the_solvers_answer_in_words_wins(env_id):
    spec = envdist.spec(env_id)
    env = envdist.make(env_id)
    for scale in sorted({spec["scale"]["min"], spec["scale"]["max"]}):
        for seed in range(3):
            env.reset(seed=seed, options={"scale": scale})
            oracle, words = _answer_in_words(env)
            assert not words.startswith("answer_"), (env_id, words)
            for reply in (words, f"<answer>{words}</answer>", f"Answer: {words}."):
                assert env.parse_action(reply) == oracle, (env_id, reply)
            assert env.parse_action(envdist.ACTION_NAMES[oracle]) == oracle
            _, reward, terminated, _, info = env.step(words)
            assert reward == 1.0 and terminated and info["success"], (env_id, scale, seed, words)


def test_words_read_as_what_they_mean():
    count = envdist.make("count-objects/classic")
    count.reset(seed=0)
    assert count.parse_action("three") == count.parse_action("3") == envdist.ACTION_NAMES.index("answer_3")
    assert count.answers()["answer_3"] == ["3"]
    reach = envdist.make("reachability/classic")
    reach.reset(seed=0)
    yes, no = envdist.ACTION_NAMES.index("answer_1"), envdist.ACTION_NAMES.index("answer_0")
    assert reach.parse_action("Yes, the goal is reachable.") == yes
    assert reach.parse_action("<answer>no</answer>") == no
    assert reach.answers()["answer_0"][:2] == ["no", "not reachable"]
    blocked = envdist.make("reachability/blocked")
    blocked.reset(seed=0)
    assert blocked.parse_action("blocked") == yes, "the twin asks 'blocked off?'"
    where = envdist.make("relative-position/classic")
    where.reset(seed=0)
    assert where.parse_action("above") == envdist.ACTION_NAMES.index("answer_2")
    # The action names still read everywhere: the slot form, wait, a move in a non-direction env.
    assert count.parse_action("answer_12") == envdist.ACTION_NAMES.index("answer_12")
    assert count.parse_action("wait") == envdist.ACTION_NAMES.index("wait")
    assert count.parse_action("left") == envdist.ACTION_NAMES.index("left")


def test_unknown_and_ambiguous_words_are_value_errors_naming_the_answers():
    reach = envdist.make("reachability/classic")
    reach.reset(seed=0)
    with pytest.raises(ValueError, match=r"text: .*names no action.*yes / reachable / connected \(answer_1\)"):
        reach.parse_action("maybe")
    with pytest.raises(ValueError, match="several different answers"):
        reach.step("yes, it is blocked")
    count = envdist.make("count-objects/classic")
    count.reset(seed=0)
    with pytest.raises(ValueError, match="a number from 0 to 15"):
        count.parse_action("a few")
    with pytest.raises(TypeError, match="text"):
        count.parse_action(3)
    # The env still plays after a refusal.
    _, _, terminated, _, _ = count.step(_answer_in_words(count)[1])
    assert terminated


def test_multi_turn_envs_have_no_answers_and_read_names_as_before():
    env = envdist.make("maze/classic")
    env.reset(seed=0)
    assert env.answers() == {}
    for text in ("left", "<answer>interact</answer>", "answer 3"):
        assert env.parse_action(text) == envdist.parse_action(text)
    with pytest.raises(ValueError, match="names no action"):
        env.parse_action("yes")


def test_the_vector_env_reads_each_text_in_its_own_env():
    ids = ["reachability/classic", "count-objects/classic", "maze/classic"]
    envs = envdist.vector.make(ids, 3)
    envs.reset(seed=4)
    singles = [envdist.make(i) for i in ids]  # the middle scale, as the vector env's
    replies = []
    for i, single in enumerate(singles):
        single.reset(seed=4 + i)
        replies.append(_answer_in_words(single)[1] if i < 2 else "wait")
    expected = [s.parse_action(r) for s, r in zip(singles, replies)]
    _, rewards, terminated, _, info = envs.step(replies)
    assert list(rewards[:2]) == [1.0, 1.0] and terminated[:2].all(), (replies, expected)
    assert info["success"][:2].all()
    envs.reset(seed=4)
    with pytest.raises(ValueError, match=r"actions\[0\]: .*yes / reachable"):
        envs.step(["perhaps", "3", "wait"])
    envs.close()


def test_the_vagen_env_reads_answers_in_words():
    env = VagenEnv(ticket=Ticket("dice-sum/classic", "H4", 2, 5))
    env.reset()
    oracle, words = _answer_in_words(env.env)
    obs, reward, done, info = env.step(f"<think>I add the pips.</think><answer>{words}</answer>")
    assert info["action_is_valid"] and info["success"] and reward == 1.0 and done
    env.reset()
    obs, reward, done, info = env.step("lots of pips")
    assert not info["action_is_valid"] and "a number from 0 to 15" in info["error"]


def test_verl_reward_replays_the_ticket_and_scores_the_reply():
    for env_id in ("count-objects/count-blue", "symmetry/asymmetric", "shape-arithmetic/classic", "pattern-next/noise"):
        ticket = Ticket(env_id, "H4", envdist.spec(env_id)["scale"]["max"], 11)
        env = ticket.make()
        env.reset(seed=ticket.seed)
        oracle, words = _answer_in_words(env)
        right = compute_score("envdist/" + env_id, f"Answer: {words}", ticket.ticket_id)
        assert right == {"score": 1.0, "acc": 1.0, "action_is_valid": True, "action": envdist.ACTION_NAMES[oracle]}
        # The ticket from extra_info, as dataset_rows writes it.
        assert compute_score(solution_str=words, extra_info={"envdist_ticket": ticket.ticket_id})["acc"] == 1.0
        wrong = [w[0] for a, w in env.answers().items() if envdist.ACTION_NAMES.index(a) != oracle][0]
        assert compute_score(solution_str=wrong, ground_truth=ticket.ticket_id)["score"] == 0.0
    garbage = score_reply("count-objects/classic|H4|5|0", "I refuse")
    assert garbage == {"score": 0.0, "acc": 0.0, "action_is_valid": False, "action": None}
    with pytest.raises(ValueError, match="ground_truth"):
        compute_score(solution_str="3")


def test_answers_are_not_part_of_the_observation():
    """Declaring a vocabulary changes nothing a policy sees."""
    a, b = envdist.make("pattern-next/classic", harness="H0"), envdist.make("pattern-next/classic", harness="H0")
    obs_a, _ = a.reset(seed=2)
    a.answers()
    a.parse_action("candidate 0")
    obs_b, _ = b.reset(seed=2)
    assert np.array_equal(obs_a["image"], obs_b["image"]) and obs_a["text"] == obs_b["text"]
    assert a.harness_text() == b.harness_text()
