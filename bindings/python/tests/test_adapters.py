"""The adapters: Syllabus driven by the real syllabus-rl package, verl against its interface
(the shim in tests/shims reproduces verl's sampler module), and the VAGEN-style env."""

import importlib
import sys

import numpy as np
import pytest

import envdist
from envdist import HDC, Curriculum, Ticket

ENVS = ["count-objects/classic", "maze/classic"]
# Small windows so that every kind moves (and PLR replays) within a few dozen episodes.
CONFIGS = {
    "hdc": {"min_episodes": 2, "competence_threshold": 0.5},
    "pass_rate": {"group_size": 2},
    "learnability": {"top_k": 2},
    "learning_progress": {"update_interval": 8},
    "sec": {"batch_episodes": 8, "group_size": 2},
    "ladder": {"check_episodes": 4, "window": 2},
    "plr": {"buffer_size": 4, "rho": 0.25},
}


def test_adapters_are_imported_only_when_used():
    import subprocess

    code = (
        "import envdist, sys; "
        "print(sorted(m for m in sys.modules if m.startswith('envdist.adapters.') or m in ('syllabus', 'verl', 'torch')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


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


def load_verl_sampler_as_verl_does(dataset, data_config):
    """verl.trainer.main_ppo.create_rl_sampler (commit b178a3c) for a custom sampler."""
    from verl.experimental.dataset.sampler import AbstractSampler

    module = importlib.import_module(data_config["sampler"]["class_path"].removeprefix("pkg://"))
    cls = getattr(module, data_config["sampler"]["class_name"])
    sampler = cls(data_source=dataset, data_config=data_config)
    assert isinstance(sampler, AbstractSampler)
    assert data_config.get("dataloader_num_workers", 8) == 0
    return sampler


class TicketDataset:
    """What verl's RLHFDataset exposes: `dataframe` rows with `extra_info`, and `len`."""

    def __init__(self, rows):
        self.dataframe = [
            {"prompt": r["instruction"], "data_source": r["data_source"],
             "extra_info": {"index": i, "envdist_ticket": r["ticket_id"]}}
            for i, r in enumerate(rows)
        ]

    def __len__(self):
        return len(self.dataframe)


def test_verl_sampler_follows_the_interface_and_learns_from_batches():
    from verl import DataProto
    from verl.experimental.dataset.sampler import AbstractCurriculumSampler

    rows = HDC(ENVS).grid_rows(seeds_per_cell=2, seed=1)
    dataset = TicketDataset(rows)
    data_config = {
        "dataloader_num_workers": 0,
        "sampler": {
            "class_path": "pkg://envdist.adapters.verl",
            "class_name": "EnvdistCurriculumSampler",
            "envdist": {"config": {"min_episodes": 2, "competence_threshold": 0.5}, "seed": 3},
        },
    }
    sampler = load_verl_sampler_as_verl_does(dataset, data_config)
    assert isinstance(sampler, AbstractCurriculumSampler) and len(sampler) == len(rows)
    it = iter(sampler)
    batch_size, n = 4, 2  # GRPO: each prompt rolled out n times
    for step in range(25):
        idx = [next(it) for _ in range(batch_size)]
        extra = np.array([dataset.dataframe[i]["extra_info"] for i in idx for _ in range(n)], dtype=object)
        # The reward: token-level scores summing to 1 for a success (always here).
        scores = np.zeros((batch_size * n, 5), dtype=np.float32)
        scores[:, -1] = 1.0
        batch = DataProto(batch={"token_level_scores": scores}, non_tensor_batch={"extra_info": extra})
        if isinstance(sampler, AbstractCurriculumSampler):
            sampler.update(batch=batch)
    status = sampler.hdc.status()
    assert sum(s["episodes"] for s in status) == 25 * batch_size * n
    assert any(s["harness"] != "H0" or s["window"][0] > envdist.spec(s["env"])["scale"]["min"] for s in status)
    # Rows served follow HDC: every served row's level is one HDC could draw.
    state = sampler.state_dict()
    twin = load_verl_sampler_as_verl_does(dataset, data_config)
    twin.load_state_dict(state)
    assert [next(iter(twin)) for _ in range(1)] == [next(iter(sampler)) for _ in range(1)]
    # A success key in the batch wins over token scores.
    extra = np.array([dataset.dataframe[0]["extra_info"]], dtype=object)
    sampler.update(DataProto(non_tensor_batch={"extra_info": extra, "acc": np.array([0.0])}))
    with pytest.raises(ValueError, match="extra_info"):
        sampler.update(DataProto())


@pytest.mark.parametrize("kind", envdist.sampler_kinds())
def test_adapters_serve_every_sampler_kind(kind):
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

    # verl: a grid of the cells this kind draws; each served row reports the ticket drawn.
    rows = Curriculum(kind, ENVS, CONFIGS[kind]).grid_rows(seeds_per_cell=2, seed=1)
    dataset = TicketDataset(rows)
    data_config = {
        "dataloader_num_workers": 0,
        "sampler": {
            "class_path": "pkg://envdist.adapters.verl",
            "class_name": "EnvdistCurriculumSampler",
            "envdist": {"kind": kind, "config": CONFIGS[kind], "seed": 3},
        },
    }
    sampler = load_verl_sampler_as_verl_does(dataset, data_config)
    assert sampler.sampler.kind == kind and sampler.hdc is sampler.sampler
    from verl import DataProto

    def epochs(s):  # the dataloader starts a new epoch when one ends (small grids here)
        while True:
            yield from s

    it = epochs(sampler)
    batch_size, n = 4, 2
    masks = []
    rng = np.random.default_rng(0)
    for step in range(10):
        idx = [next(it) for _ in range(batch_size)]
        extra = np.array([dataset.dataframe[i]["extra_info"] for i in idx for _ in range(n)], dtype=object)
        acc = np.repeat(rng.random(batch_size) < 0.5, n).astype(np.float64)
        batch = DataProto(non_tensor_batch={"extra_info": extra, "acc": acc})
        masks.append(sampler.train_mask(batch))
        assert masks[-1].shape == (batch_size * n,) and masks[-1].dtype == bool
        sampler.update(batch=batch)
    assert sampler.sampler.updates == 10 * batch_size * n
    mask = np.concatenate(masks)
    if kind == "plr":
        # The drawn tickets came back (a row's own seed would be no level PLR knows), so new
        # levels entered the buffer and were replayed, and only replays train.
        assert sampler.sampler.state_dict()["body"]["levels"]
        assert mask.any() and not mask.all()
    else:
        assert mask.all()
    twin = load_verl_sampler_as_verl_does(dataset, data_config)
    twin.load_state_dict(sampler.state_dict())
    assert [next(iter(twin)) for _ in range(3)] == [next(iter(sampler)) for _ in range(3)]
    assert twin.state_dict() == sampler.state_dict()


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
