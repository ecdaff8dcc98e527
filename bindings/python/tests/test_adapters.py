"""The adapters: Syllabus driven by the real syllabus-rl package and the VAGEN-style env (verl:
test_verl.py, against the real verl)."""

import sys

import numpy as np
import pytest

import envdist
from envdist import Ticket

from kinds import CONFIGS, ENVS


def test_adapters_are_imported_only_when_used():
    import subprocess

    code = (
        "import envdist, sys; "
        "print(sorted(m for m in sys.modules if m.startswith('envdist.adapters.') or m in ('syllabus', 'verl', 'torch')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.integration
def test_syllabus_curriculum_drives_tickets_through_syllabus_wrappers():
    from syllabus.core import Curriculum, GymnasiumSyncWrapper, make_multiprocessing_curriculum

    from envdist.adapters.syllabus import EnvdistCurriculum, EnvdistTaskWrapper

    curriculum = EnvdistCurriculum(ENVS, config={"min_episodes": 3, "competence_threshold": 0.5}, seed=0)
    assert isinstance(curriculum, Curriculum)
    first = curriculum.sample(1)[0]
    mp = make_multiprocessing_curriculum(curriculum)
    try:
        env = GymnasiumSyncWrapper(EnvdistTaskWrapper(first), mp.task_space, mp.components)
        played = []
        for _ in range(12):
            obs, info = env.reset()
            ticket = Ticket.parse(info["task"])
            assert info["seed"] == ticket.seed and info["harness"] == ticket.harness
            done = False
            while not done:
                obs, rew, term, trunc, info = env.step(env.unwrapped.oracle_action())
                done = term or trunc
            played.append(ticket)
        # Updates travel through Syllabus' queues to the curriculum thread.
        import time

        deadline = time.time() + 10
        while sum(s["episodes"] for s in curriculum.sampler.status()) < 12 and time.time() < deadline:
            time.sleep(0.05)
    finally:
        mp.stop()
    status = curriculum.sampler.status()
    assert sum(s["episodes"] for s in status) == 12
    assert sum(s["successes"] for s in status) == 12  # the solver wins every episode
    assert {t.env_id for t in played} <= set(ENVS)
    dist = curriculum._sample_distribution()
    assert len(dist) == len(ENVS) and abs(sum(dist) - 1) < 1e-9
    # Direct API too: update_on_episode with the ticket id as the task.
    curriculum.update_on_episode(1.0, 3, played[0].ticket_id, True)


@pytest.mark.integration
@pytest.mark.parametrize("kind", envdist.sampler_kinds())
def test_syllabus_serves_every_sampler_kind(kind):
    from envdist.adapters.syllabus import EnvdistCurriculum, EnvdistTaskWrapper

    # Syllabus (single process: the queues are the test above's business).
    cur = EnvdistCurriculum(ENVS, config=CONFIGS[kind], seed=0, kind=kind)
    assert cur.sampler.kind == kind
    env, flags = None, []
    for _ in range(12):
        task = cur.sample(1)[0]
        flags.append(cur.trains_on(task))
        env = EnvdistTaskWrapper(task) if env is None else env
        obs, info = env.reset(new_task=task)
        assert info["task"] == task
        done = False
        while not done:
            obs, rew, term, trunc, info = env.step(env.unwrapped.oracle_action())
            done = term or trunc
        cur.update_on_episode(1.0, 1, task, info["task_completion"])
        assert cur.trains_on(task) == flags[-1], "the report changed the recorded flag"
    assert cur.sampler.updates == 12 and sum(s["successes"] for s in cur.sampler.snapshot()) == 12
    dist = cur._sample_distribution()
    assert len(dist) == len(ENVS) and abs(sum(dist) - 1) < 1e-9
    assert all(flags) == (kind != "plr")



def test_vagen_env_plays_text_actions_and_survives_garbage():
    from envdist.adapters.vagen import IMAGE_PLACEHOLDER, VagenEnv

    env = VagenEnv(ticket=Ticket("maze/classic", "H1", 5, 9))
    obs, info = env.reset()
    assert obs["obs_str"].startswith(IMAGE_PLACEHOLDER) and "Rules:" in obs["obs_str"]
    img = obs["multi_modal_data"][IMAGE_PLACEHOLDER][0]
    assert img.shape == (64, 64, 3) and img.dtype == np.uint8
    obs, reward, done, info = env.step("I'd rather dance")
    assert not info["action_is_valid"] and "names no action" in info["error"] and not done
    done = False
    while not done:
        obs, reward, done, info = env.step(f"<answer>{envdist.ACTION_NAMES[env.env.oracle_action()]}</answer>")
    assert info["success"] and reward == 1.0 and info["ticket_id"] == "maze/classic|H1|5|9"
    with pytest.raises(RuntimeError, match="reset"):
        env.step("left")
