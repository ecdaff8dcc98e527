"""The verl adapter against the real verl package (the version pinned in requirements-integration.lock),
on the CPU, with no model: verl's own Hydra config and CLI-style overrides, verl's dataset
(RLHFDataset over a parquet file) and dataloader (RayPPOTrainer._create_dataloader:
StatefulDataLoader and verl's collate_fn) with envdist's sampler, DataProto batches with
token-level scores reported back, verl's checkpoint and resume (RayPPOTrainer._save_checkpoint /
_load_checkpoint, data.pt) mid-epoch and on an epoch boundary, and the same loop inside a Ray
actor, where verl's TaskRunner keeps the trainer. What is not run: verl's model workers
(rollout, actor, critic) and its V1 trainer."""

import os
import tempfile

# Before datasets is imported anywhere: its cache in a temporary folder, and no hub access.
os.environ.setdefault("HF_DATASETS_CACHE", tempfile.mkdtemp(prefix="envdist-hf-"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import envdist  # noqa: E402
from envdist import Curriculum  # noqa: E402

from tier import require_integration  # noqa: E402

require_integration()
pytestmark = pytest.mark.integration

import torch  # noqa: E402
import verl  # noqa: E402

from kinds import CONFIGS, ENVS  # noqa: E402

BATCH, N = 4, 2  # prompts per step; GRPO rollouts per prompt


def write_dataset(folder, kind="hdc", seeds_per_cell=2):
    import pandas as pd

    from envdist.adapters.verl import dataset_rows

    rows = dataset_rows(Curriculum(kind, ENVS, CONFIGS[kind]), seeds_per_cell=seeds_per_cell, seed=1)
    path = os.path.join(folder, f"{kind}.parquet")
    pd.DataFrame(rows).to_parquet(path)
    return path, len(rows)


def verl_config(folder, data_path, kind="hdc", extra=()):
    """verl's ppo_trainer config, composed by Hydra with the overrides a user types."""
    import verl.trainer
    from hydra import compose, initialize_config_dir

    config_dir = os.path.join(os.path.dirname(verl.trainer.__file__), "config")
    cfg_json = str(CONFIGS[kind]).replace("'", "")
    overrides = [
        "trainer.use_v1=false",
        f"data.train_files={data_path}",
        f"data.val_files={data_path}",
        f"data.train_batch_size={BATCH}",
        "data.dataloader_num_workers=0",
        "data.filter_overlong_prompts=false",  # no tokenizer: nothing is downloaded
        f"++data.cache_dir={folder}/cache",
        "+data.sampler.class_path=pkg://envdist.adapters.verl",
        "+data.sampler.class_name=EnvdistCurriculumSampler",
        f"+data.sampler.envdist.kind={kind}",
        f"+data.sampler.envdist.config={cfg_json}",
        "+data.sampler.envdist.seed=3",
        f"actor_rollout_ref.rollout.n={N}",
        f"trainer.default_local_dir={folder}/ckpt",
        "trainer.resume_mode=auto",
        *extra,
    ]
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        return compose(config_name="ppo_trainer", overrides=overrides)


class NoWorkers:
    """verl's actor worker group, for the checkpoint calls only (no model here)."""

    def save_checkpoint(self, *args, **kwargs):
        pass

    def load_checkpoint(self, *args, **kwargs):
        pass


def make_trainer(cfg):
    """verl's RayPPOTrainer with envdist's mixin, its dataloaders built by verl's own code
    (__init__ would start model workers, so only the data side is set up)."""
    from envdist.adapters.verl import curriculum_trainer

    cls = curriculum_trainer()
    t = cls.__new__(cls)
    t.config, t.tokenizer, t.processor = cfg, None, None
    t.actor_rollout_wg, t.use_critic, t.global_steps = NoWorkers(), False, 0
    t._create_dataloader(None, None, None, None)
    return t


def rollout(batch_dict, step):
    """What verl's fit loop does with a dataloader batch, minus the model: a DataProto, GRPO's
    n rollouts per prompt, token-level scores (1 at the last token for a success: the solver
    'wins' at small scales and H0..H2 here) and advantages."""
    from verl import DataProto

    batch = DataProto.from_single_dict(batch_dict)
    batch = batch.repeat(repeat_times=N, interleave=True)
    extra = batch.non_tensor_batch["extra_info"]
    win = np.array([e["harness"] in ("H0", "H1", "H2") or (step + e["scale"]) % 2 == 0 for e in extra])
    scores = torch.zeros(len(extra), 6)
    scores[:, -1] = torch.as_tensor(win, dtype=torch.float32)
    batch.batch["token_level_scores"] = scores
    batch.batch["advantages"] = torch.ones(len(extra), 6)
    return batch


def run_steps(trainer, steps, start=0):
    """``steps`` training steps of verl's loop: draw a batch, roll out, report (the mixin's
    hook before the actor update). Returns the dataset indices drawn."""
    drawn = []
    it = trainer._envdist_it = getattr(trainer, "_envdist_it", None) or iter(trainer.train_dataloader)
    for s in range(start, start + steps):
        try:
            batch_dict = next(it)
        except StopIteration:  # a new epoch, as fit() starts one
            it = trainer._envdist_it = iter(trainer.train_dataloader)
            batch_dict = next(it)
        drawn.append([e["index"] for e in batch_dict["extra_info"]])
        trainer.report_to_curriculum(rollout(batch_dict, s))
        trainer.global_steps = s + 1
    return drawn


@pytest.fixture
def folder(tmp_path):
    return str(tmp_path)


def test_verls_config_and_dataloader_build_the_envdist_sampler(folder):
    from envdist.adapters.verl import VERL_CALLS_UPDATE, EnvdistCurriculumSampler, create_rl_sampler

    path, n_rows = write_dataset(folder)
    cfg = verl_config(folder, path)
    t = make_trainer(cfg)
    sampler = t.train_dataloader.sampler
    assert isinstance(sampler, EnvdistCurriculumSampler) and sampler.sampler.kind == "hdc"
    assert sampler.sampler.config["min_episodes"] == 2  # the CLI override reached HDC
    assert len(t.train_dataset) == n_rows and len(t.train_dataloader) == n_rows // BATCH
    assert not VERL_CALLS_UPDATE, "this verl calls sampler.update itself: the mixin's hook would double-report"
    # Without data.sampler, the factory is verl's own.
    from omegaconf import OmegaConf

    plain = OmegaConf.to_container(cfg.data, resolve=True)
    del plain["sampler"]
    assert type(create_rl_sampler(OmegaConf.create(plain), t.train_dataset)).__name__ == "RandomSampler"
    # A runner that passes verl's default sampler (main_ppo_v0.TaskRunner does) still gets ours.
    from torch.utils.data import SequentialSampler

    cls = type(t)
    t3 = cls.__new__(cls)
    t3.config, t3.tokenizer, t3.processor = cfg, None, None
    t3._create_dataloader(t.train_dataset, t.val_dataset, None, SequentialSampler(t.train_dataset))
    assert isinstance(t3.train_dataloader.sampler, EnvdistCurriculumSampler)
    with pytest.raises(ValueError, match="dataloader_num_workers"):
        create_rl_sampler(OmegaConf.merge(cfg.data, {"dataloader_num_workers": 2}), t.train_dataset)


def test_batches_report_rewards_and_the_curriculum_moves(folder):
    path, _ = write_dataset(folder)
    t = make_trainer(verl_config(folder, path))
    hdc = t.train_dataloader.sampler.sampler
    drawn = run_steps(t, 12)
    assert hdc.updates == 12 * BATCH * N
    assert sum(s["episodes"] for s in hdc.status()) == 12 * BATCH * N
    # Served rows follow the curriculum: HDC moved some env off its first stage.
    assert any(s["harness"] != "H0" or s["window"][0] > envdist.spec(s["env"])["scale"]["min"] for s in hdc.status())
    assert all(len(d) == BATCH for d in drawn)


@pytest.mark.parametrize("steps", [3, 5], ids=["mid-epoch", "epoch-boundary"])
def test_the_curriculum_survives_verls_checkpoint_and_resume(folder, steps):
    path, n_rows = write_dataset(folder, seeds_per_cell=1)
    cfg = verl_config(folder, path)
    t = make_trainer(cfg)
    per_epoch = len(t.train_dataloader)
    assert steps < per_epoch or steps % per_epoch == 0
    steps = steps if steps < per_epoch else per_epoch  # the boundary case ends an epoch exactly
    run_steps(t, steps)
    t._save_checkpoint()  # verl's: global_step_N/data.pt holds StatefulDataLoader.state_dict()
    assert os.path.exists(os.path.join(folder, "ckpt", f"global_step_{steps}", "data.pt"))
    state = t.train_dataloader.sampler.state_dict()
    expected = run_steps(t, 4, start=steps)

    resumed = make_trainer(cfg)
    resumed._load_checkpoint()  # verl's: finds the latest step, loads data.pt (not on a boundary)
    assert resumed.global_steps == steps
    assert resumed.train_dataloader.sampler.state_dict()["sampler"] == state["sampler"]
    got = run_steps(resumed, 4, start=steps)
    assert got == expected, "the resumed run drew other rows than the uninterrupted one"
    assert resumed.train_dataloader.sampler.state_dict() == t.train_dataloader.sampler.state_dict()


@pytest.mark.parametrize("kind", envdist.sampler_kinds())
def test_every_sampler_kind_through_verl(folder, kind):
    path, _ = write_dataset(folder, kind=kind)
    t = make_trainer(verl_config(folder, path, kind=kind))
    sampler = t.train_dataloader.sampler
    assert sampler.sampler.kind == kind
    masks = []
    it = iter(t.train_dataloader)
    for step in range(8):
        try:
            batch_dict = next(it)
        except StopIteration:
            it = iter(t.train_dataloader)
            batch_dict = next(it)
        batch = rollout(batch_dict, step)
        mask = sampler.train_mask(batch)
        masks.append(mask)
        t.report_to_curriculum(batch)
        # Robust PLR: the advantages of new levels were zeroed before the actor update.
        adv = batch.batch["advantages"].sum(-1).numpy()
        assert np.array_equal(adv > 0, mask)
    assert sampler.sampler.updates == 8 * BATCH * N
    mask = np.concatenate(masks)
    if kind == "plr":
        assert sampler.sampler.state_dict()["body"]["levels"] and mask.any() and not mask.all()
    else:
        assert mask.all()


def test_the_mixin_reports_before_verls_actor_update(folder, monkeypatch):
    from verl.trainer.ppo.ray_trainer import RayPPOTrainer

    seen = []
    monkeypatch.setattr(RayPPOTrainer, "_update_actor", lambda self, batch: seen.append(self.train_dataloader.sampler.sampler.updates))
    path, _ = write_dataset(folder)
    t = make_trainer(verl_config(folder, path))
    batch = rollout(next(iter(t.train_dataloader)), 0)
    t._update_actor(batch)
    assert seen == [BATCH * N]


def test_task_runner_swaps_verls_names_inside_its_process(monkeypatch):
    import ray
    from verl.trainer import main_ppo_v0

    from envdist.adapters import verl as adapter

    runner = adapter.task_runner()
    assert isinstance(runner, ray.actor.ActorClass)
    monkeypatch.setattr(main_ppo_v0, "RayPPOTrainer", main_ppo_v0.RayPPOTrainer)
    monkeypatch.setattr(main_ppo_v0, "create_rl_sampler", main_ppo_v0.create_rl_sampler)
    adapter.patch_task_runner_module(main_ppo_v0)
    assert issubclass(main_ppo_v0.RayPPOTrainer, adapter.CurriculumTrainerMixin)
    assert main_ppo_v0.create_rl_sampler is adapter.create_rl_sampler
    adapter.patch_task_runner_module(main_ppo_v0)  # idempotent
    assert main_ppo_v0.RayPPOTrainer.__mro__.count(adapter.CurriculumTrainerMixin) == 1


def _remote_loop(folder, path, steps):
    """The data side of verl's TaskRunner, in whatever process runs it."""
    t = make_trainer(verl_config(folder, path))
    drawn = run_steps(t, steps)
    return drawn, t.train_dataloader.sampler.state_dict()


def test_the_loop_runs_in_a_ray_actor_like_verls_task_runner(folder):
    import ray
    path, _ = write_dataset(folder)
    local = _remote_loop(folder + "/local", path, 6)
    started = not ray.is_initialized()
    if started:
        # The workers import this test module (the actor's code) from the tests folder.
        here = os.path.dirname(os.path.abspath(__file__))
        ray.init(
            num_cpus=1,
            include_dashboard=False,
            log_to_driver=False,
            runtime_env={"env_vars": {"PYTHONPATH": here, "HF_HUB_OFFLINE": "1"}},
        )
    try:
        actor = ray.remote(num_cpus=1)(_Runner).remote()
        remote = ray.get(actor.run.remote(folder + "/remote", path, 6), timeout=300)
    finally:
        if started:
            ray.shutdown()
    assert remote[0] == local[0] and remote[1]["sampler"] == local[1]["sampler"]


class _Runner:
    def run(self, folder, path, steps):
        return _remote_loop(folder, path, steps)
