"""A verl curriculum sampler backed by any envdist sampler (HDC by default). Tested against
verl 0.9.1 (the PyPI release); written first against verl's source at commit b178a3c.

The dataset: one row per ticket (a GRPO group repeats a row, so the level of a prompt is
fixed). :func:`dataset_rows` writes verl's row format (``prompt`` chat messages,
``data_source``, ``reward_model``, ``extra_info`` with ``index`` and
``envdist_ticket``) for every env x level x scale cell the sampler can draw
(``Curriculum.grid_rows``); save it as parquet for verl's ``RLHFDataset``. The sampler asks
envdist's sampler for the next ticket and serves a row of the same env, level and scale (round
robin over the cell's seeds), so the curriculum decides the order of prompts. ``update(batch)``
reads each sample's row ticket from ``non_tensor_batch["extra_info"]`` and reports the ticket
drawn for that row (a PLR level is its exact ticket, seed included), with its success from
``non_tensor_batch[success_key]`` when present, else from
``batch.batch["token_level_scores"].sum(-1) >= success_threshold``.

Settings (``data.sampler``): ``class_path: pkg://envdist.adapters.verl``,
``class_name: EnvdistCurriculumSampler`` and ``envdist``, all optional: ``kind`` (default
``"hdc"``; see ``envdist.sampler_kinds()``), ``config`` (that kind's fields), ``seed``,
``env_ids`` (default: the envs in the dataset), ``weights`` (HDC only), ``success_key``
(default ``"acc"``), ``success_threshold`` (default 1.0). ``data.dataloader_num_workers`` must
be 0 (worker processes would prefetch rows before the curriculum has seen the last batch).

How verl meets it, by version:

- verl <= 0.7.1 (and the 0.8.0.dev commits): ``data.sampler.class_path`` is read by verl's own
  ``create_rl_sampler``, and ``RayPPOTrainer.fit`` calls ``sampler.update(batch=batch)`` after
  each step (the sampler is then an ``AbstractCurriculumSampler``).
- verl 0.8.0 and later (0.9.1 tested) dropped both: ``create_rl_sampler`` builds only its
  random or sequential sampler, and nothing calls ``update``. :func:`create_rl_sampler` here is
  verl's factory with the ``data.sampler.class_path`` branch put back, and
  :func:`curriculum_trainer` makes a subclass of verl's ``RayPPOTrainer`` (the trainer of
  ``trainer.use_v1=false``) whose dataloader uses it and whose actor update first reports the
  batch to the sampler (and, for robust PLR, zeroes the advantages of episodes that must not
  train). :func:`task_runner` is verl's ``TaskRunner`` Ray actor running that trainer: pass it
  to ``verl.trainer.main_ppo.run_ppo(config, task_runner_class=...)``. verl's V1 trainer
  (``trainer.use_v1=true``, TransferQueue based) is not wired.

The sampler is ``Stateful`` in torchdata's sense (``state_dict``/``load_state_dict``), so verl's
checkpoint (``StatefulDataLoader.state_dict()`` saved in ``global_step_N/data.pt``) carries the
curriculum state and resume restores it instead of replaying draws.

The reward: ``custom_reward_function.path`` set to ``envdist/adapters/verl_reward.py`` (its
``compute_score``, also importable from here) replays a row's ticket and plays the reply, read by
the env's own parser (a single-turn env's answer in words: ``"3"``, ``"yes"``, ``"above"``); its
``acc`` is the success ``update`` reads by default.

Robust PLR: ``train_mask(batch)`` gives, per sample, whether its episode should train
(recorded when its row was served); the :func:`curriculum_trainer` subclass applies it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping, Sized
from typing import Any

import numpy as np

try:
    from verl.experimental.dataset.sampler import AbstractCurriculumSampler as _Base

    #: Whether this verl's trainer calls ``sampler.update(batch)`` itself (verl <= 0.7.1).
    VERL_CALLS_UPDATE = True
except ImportError:  # verl >= 0.8.0 dropped the curriculum sampler interface
    try:
        from torch.utils.data import Sampler as _Base
    except ImportError as e:  # pragma: no cover - depends on the trainer's environment
        raise ImportError(
            "envdist.adapters.verl needs verl (pip install verl), or at least torch: its sampler is a "
            "torch.utils.data.Sampler"
        ) from e
    VERL_CALLS_UPDATE = False

from envdist.adapters.verl_reward import TICKET_KEY, compute_score
from envdist.curriculum import Curriculum, TaskSampler, Ticket



def _get(cfg: Any, key: str, default: Any = None) -> Any:
    if cfg is None:
        return default
    if isinstance(cfg, Mapping):
        return cfg.get(key, default)
    getter = getattr(cfg, "get", None)
    return getter(key, default) if getter else getattr(cfg, key, default)


def _plain(v: Any) -> Any:
    """OmegaConf containers to plain Python."""
    try:
        from omegaconf import OmegaConf

        if OmegaConf.is_config(v):
            return OmegaConf.to_container(v, resolve=True)
    except ImportError:
        pass
    return v


def _row_ticket(row: Any, i: int) -> Ticket:
    extra = _get(row, "extra_info") or {}
    t = _get(extra, TICKET_KEY) or _get(row, "ticket_id")
    if t is None:
        raise ValueError(
            f"dataset row {i}: expected extra_info[{TICKET_KEY!r}] (a ticket id: build the rows with dataset_rows())"
        )
    return Ticket.parse(t)


def _to_numpy(x: Any) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().float().numpy()
    return np.asarray(x)


def dataset_rows(sampler: TaskSampler, seeds_per_cell: int = 1, seed: int = 0, template: str | None = None) -> list[dict]:
    """verl dataset rows for every cell ``sampler`` can draw (``grid_rows``): ``data_source``
    (``envdist/<env id>``), ``prompt`` (one user message: ``template`` formatted with the
    row's fields, default the instruction and the level), ``ability`` (``"envdist"``),
    ``reward_model`` (``{"style": "rule", "ground_truth": <ticket id>}``) and ``extra_info``
    (``index``, ``envdist_ticket``, ``env_id``, ``harness``, ``scale``, ``seed``). Text only: a
    multimodal dataset adds its ``images`` column and an ``<image>`` placeholder itself."""
    template = template or "{instruction} (environment {env_id}, harness level {harness}, scale {scale})"
    rows = []
    for i, r in enumerate(sampler.grid_rows(seeds_per_cell=seeds_per_cell, seed=seed)):
        rows.append(
            {
                "data_source": r["data_source"],
                "prompt": [{"role": "user", "content": template.format(**r)}],
                "ability": "envdist",
                "reward_model": {"style": "rule", "ground_truth": r["ticket_id"]},
                "extra_info": {
                    "index": i,
                    TICKET_KEY: r["ticket_id"],
                    "env_id": r["env_id"],
                    "harness": r["harness"],
                    "scale": int(r["scale"]),
                    "seed": int(r["seed"]),
                },
            }
        )
    return rows


class EnvdistCurriculumSampler(_Base):
    """An envdist sampler ordering the rows of a ticket dataset (see the module docs)."""

    def __init__(self, data_source: Sized, data_config: Any):
        settings = _plain(_get(_get(data_config, "sampler"), "envdist")) or {}
        self.data_source = data_source
        self.success_key = settings.get("success_key", "acc")
        self.success_threshold = float(settings.get("success_threshold", 1.0))
        rows: Any = getattr(data_source, "dataframe", data_source)
        if hasattr(rows, "column_names") and "extra_info" in rows.column_names:
            # A HF datasets.Dataset (verl's RLHFDataset.dataframe): read one column, not every
            # row (rows may hold images).
            rows = [{"extra_info": e} for e in rows["extra_info"]]
        self._cells: dict[tuple[str, str, int], list[int]] = defaultdict(list)
        self._row_ticket: list[Ticket] = []
        for i in range(len(data_source)):
            t = _row_ticket(rows[i], i)
            self._row_ticket.append(t)
            self._cells[(t.env_id, t.harness, t.scale)].append(i)
        env_ids = settings.get("env_ids") or sorted({t.env_id for t in self._row_ticket})
        self.sampler: TaskSampler = Curriculum(
            settings.get("kind", "hdc"),
            env_ids,
            config=settings.get("config"),
            seed=int(settings.get("seed", 0)),
            weights=settings.get("weights"),
        )
        self._cursor: dict[tuple[str, str, int], int] = defaultdict(int)
        # Row ticket id -> (the ticket drawn when the row was last served, whether it trains).
        self._served: dict[str, tuple[Ticket, bool]] = {}
        # Rows served in the current epoch (an epoch is len(dataset) rows), kept in the state
        # so that a resumed run finishes the epoch it was in.
        self._position = 0

    @property
    def hdc(self) -> TaskSampler:
        """The envdist sampler (the name from when only HDC was served; see ``sampler``)."""
        return self.sampler

    def __len__(self) -> int:
        return len(self.data_source)

    def __iter__(self) -> Iterator[int]:
        if self._position >= len(self):
            self._position = 0
        while self._position < len(self):
            i = self._next_index()
            self._position += 1
            yield i
        self._position = 0

    def _next_index(self) -> int:
        t = self.sampler.sample(1)[0]
        key = (t.env_id, t.harness, t.scale)
        rows = self._cells.get(key)
        if not rows:
            raise ValueError(
                f"the {self.sampler.kind} sampler asked for {t.env_id} at {t.harness}, scale {t.scale}, but the "
                "dataset has no row for that cell: build it with dataset_rows() (grid_rows()) of the same sampler "
                "so every cell it can draw has one"
            )
        k = self._cursor[key]
        self._cursor[key] = k + 1
        i = rows[k % len(rows)]
        self._served[self._row_ticket[i].ticket_id] = (t, self.sampler.trains_on(t))
        return i

    def _batch_tickets(self, batch: Any) -> list[Ticket]:
        """Per sample of ``batch``, the ticket of its dataset row."""
        non_tensor = getattr(batch, "non_tensor_batch", {}) or {}
        extras = non_tensor.get("extra_info")
        if extras is None:
            raise ValueError("verl batch: expected non_tensor_batch['extra_info'] with envdist tickets")
        return [Ticket.parse(_get(e, TICKET_KEY) or self._row_ticket[int(_get(e, "index"))]) for e in extras]

    def train_mask(self, batch: Any) -> np.ndarray:
        """Per sample of ``batch``, whether a trainer should take gradients from it (False only
        for robust PLR's new levels), as drawn when its row was served."""
        served = self._served
        return np.array(
            [served[t.ticket_id][1] if t.ticket_id in served else True for t in self._batch_tickets(batch)],
            dtype=bool,
        )

    def successes(self, batch: Any) -> np.ndarray:
        """Per sample of ``batch``, whether it succeeded (``non_tensor_batch[success_key]``, else
        the summed token-level scores, against ``success_threshold``)."""
        non_tensor = getattr(batch, "non_tensor_batch", {}) or {}
        if self.success_key in non_tensor:
            return _to_numpy(non_tensor[self.success_key]).astype(np.float64) >= self.success_threshold
        scores = _to_numpy(batch.batch["token_level_scores"])
        return scores.reshape(scores.shape[0], -1).sum(-1) >= self.success_threshold

    def update(self, batch: Any) -> None:
        rows = self._batch_tickets(batch)
        tickets = [self._served[t.ticket_id][0] if t.ticket_id in self._served else t for t in rows]
        success = self.successes(batch)
        if len(success) != len(tickets):
            raise ValueError(f"verl batch: {len(tickets)} samples in extra_info but {len(success)} success values")
        self.sampler.update(tickets, success)

    def state_dict(self) -> dict:
        return {
            "sampler": self.sampler.state_dict(),
            "cursor": [[*k, v] for k, v in self._cursor.items()],
            "served": [[row, t.ticket_id, flag] for row, (t, flag) in self._served.items()],
            "position": self._position,
        }

    def load_state_dict(self, state: dict) -> None:
        cursor = defaultdict(int, {(e, h, int(s)): int(v) for e, h, s, v in state["cursor"]})
        served = {row: (Ticket.parse(t), bool(flag)) for row, t, flag in state.get("served", [])}
        # "hdc": the key of states saved when only HDC was served.
        self.sampler.load_state_dict(state["sampler"] if "sampler" in state else state["hdc"])
        self._cursor, self._served = cursor, served
        self._position = int(state.get("position", 0))


def _custom_sampler(data_config: Any) -> tuple[str, str] | None:
    cfg = _get(data_config, "sampler")
    path = _get(cfg, "class_path")
    return None if path is None else (path, _get(cfg, "class_name"))


def create_rl_sampler(data_config: Any, dataset: Sized):
    """verl's ``create_rl_sampler`` with the custom-sampler branch verl 0.7 had: when
    ``data.sampler.class_path`` / ``class_name`` name a class (``pkg://module`` or a file path,
    read by verl's ``load_extern_object``), it is built as ``cls(data_source=dataset,
    data_config=data_config)`` and ``data.dataloader_num_workers`` must be 0; otherwise verl's
    own factory answers (its random or sequential sampler)."""
    custom = _custom_sampler(data_config)
    if custom is None:
        try:
            from verl.trainer.ppo.utils import create_rl_sampler as verl_factory  # verl >= 0.8
        except ImportError:  # pragma: no cover - verl <= 0.7.1
            from verl.trainer.main_ppo import create_rl_sampler as verl_factory
        return verl_factory(data_config, dataset)
    from verl.utils.import_utils import load_extern_object

    path, name = custom
    cls = load_extern_object(path, name)
    workers = _get(data_config, "dataloader_num_workers", 8)
    if workers != 0:
        raise ValueError(
            f"data.dataloader_num_workers: expected 0 with a curriculum sampler ({name}), found {workers}: worker "
            "processes prefetch rows before the curriculum has seen the last batch"
        )
    return cls(data_source=dataset, data_config=data_config)


class CurriculumTrainerMixin:
    """Put before verl's ``RayPPOTrainer`` in a subclass (:func:`curriculum_trainer` does it):
    its dataloader gets the sampler ``data.sampler`` names (through :func:`create_rl_sampler`,
    also when a runner passed verl's default sampler), and every step's batch is reported to
    the sampler before the actor update; for samplers with ``train_mask`` (robust PLR), the
    advantages of episodes that must not train are zeroed first; on resume the sampler's state
    is restored from the checkpoint even where verl skips the dataloader's (an epoch boundary).
    With a verl that calls ``sampler.update`` itself (<= 0.7.1) reporting is left to it. Steps
    inside the critic warm-up (``trainer.critic_warmup``) skip the actor update and so report
    nothing."""

    #: The trainer's configuration, set by verl's trainer this is mixed into.
    config: Any

    def _create_dataloader(self, train_dataset, val_dataset, collate_fn, train_sampler):
        custom = _custom_sampler(self.config.data)
        if custom is not None and not isinstance(train_sampler, EnvdistCurriculumSampler):
            if train_dataset is None:
                try:
                    from verl.trainer.ppo.utils import create_rl_dataset
                except ImportError:  # pragma: no cover - verl <= 0.7.1
                    from verl.trainer.main_ppo import create_rl_dataset
                train_dataset = create_rl_dataset(
                    self.config.data.train_files,
                    self.config.data,
                    self.tokenizer,
                    self.processor,
                    max_samples=self.config.data.get("train_max_samples", -1),
                )
            train_sampler = create_rl_sampler(self.config.data, train_dataset)
        return super()._create_dataloader(train_dataset, val_dataset, collate_fn, train_sampler)

    def _load_checkpoint(self):
        out = super()._load_checkpoint()
        self.restore_curriculum()
        return out

    def restore_curriculum(self) -> bool:
        """Load the curriculum sampler's state from the checkpoint verl resumed from (its
        ``data.pt``). verl skips restoring the dataloader when the checkpoint sits on an epoch
        boundary, which would start the curriculum over; this restores the sampler then too
        (at the start of its next epoch). Returns whether a state was loaded."""
        import os

        sampler = getattr(getattr(self, "train_dataloader", None), "sampler", None)
        steps = getattr(self, "global_steps", 0)
        if not isinstance(sampler, EnvdistCurriculumSampler) or not steps:
            return False
        trainer = self.config.trainer
        if trainer.get("resume_mode") == "resume_path" and trainer.get("resume_from_path"):
            folder = os.path.abspath(trainer.resume_from_path)
        else:
            folder = os.path.join(os.path.abspath(trainer.default_local_dir), f"global_step_{steps}")
        path = os.path.join(folder, "data.pt")
        if not os.path.exists(path):
            return False
        import torch

        state = torch.load(path, weights_only=False)
        # StatefulDataLoader.state_dict() -> its batch sampler's iterator -> this sampler.
        inner = None
        for key in ("_sampler_iter_state", "_index_sampler_state"):
            inner = inner or (state.get(key) or {}).get("sampler_state")
        if inner is None:
            return False
        sampler.load_state_dict(inner)
        return True

    def _update_actor(self, batch, *args, **kwargs):
        self.report_to_curriculum(batch)
        return super()._update_actor(batch, *args, **kwargs)

    def report_to_curriculum(self, batch) -> None:
        """Report ``batch`` (a ``DataProto`` with rewards) to the curriculum sampler, masking the
        advantages of robust PLR's new levels; a no-op for other samplers or when verl reports."""
        sampler = getattr(getattr(self, "train_dataloader", None), "sampler", None)
        if VERL_CALLS_UPDATE or not isinstance(sampler, EnvdistCurriculumSampler):
            return
        mask = sampler.train_mask(batch)
        tensors = getattr(batch, "batch", None)
        if not mask.all() and tensors is not None and "advantages" in tensors.keys():
            import torch

            keep = torch.as_tensor(mask, device=tensors["advantages"].device)
            tensors["advantages"] = tensors["advantages"] * keep.unsqueeze(-1).to(tensors["advantages"].dtype)
        sampler.update(batch)


def curriculum_trainer(base: type | None = None) -> type:
    """``base`` (default verl's ``RayPPOTrainer``) with :class:`CurriculumTrainerMixin`."""
    if base is None:
        from verl.trainer.ppo.ray_trainer import RayPPOTrainer

        base = RayPPOTrainer
    return type("Envdist" + base.__name__, (CurriculumTrainerMixin, base), {})


def task_runner():
    """verl's ``TaskRunner`` (``verl.trainer.main_ppo_v0``) as a Ray actor class whose ``run``
    builds the :func:`curriculum_trainer` and :func:`create_rl_sampler` in place of verl's (the
    names are swapped inside the actor's process, where the trainer lives). Use it as
    ``run_ppo(config, task_runner_class=task_runner())`` with ``trainer.use_v1=false``. Not run
    here (it needs verl's model workers); its parts are (see the tests)."""
    import ray
    from verl.trainer import main_ppo_v0

    verl_run = main_ppo_v0.TaskRunner.__ray_metadata__.modified_class.run

    class EnvdistTaskRunner(main_ppo_v0.BaseTaskRunner):
        def run(self, config):
            patch_task_runner_module(main_ppo_v0)
            return verl_run(self, config)

    return ray.remote(EnvdistTaskRunner)


def patch_task_runner_module(module) -> None:
    """Swap ``RayPPOTrainer`` and ``create_rl_sampler`` in ``module`` (verl's ``main_ppo_v0``)
    for the curriculum versions (what :func:`task_runner`'s actor does before verl's run)."""
    if not issubclass(module.RayPPOTrainer, CurriculumTrainerMixin):
        module.RayPPOTrainer = curriculum_trainer(module.RayPPOTrainer)
    module.create_rl_sampler = create_rl_sampler


__all__ = [
    "CurriculumTrainerMixin",
    "EnvdistCurriculumSampler",
    "TICKET_KEY",
    "VERL_CALLS_UPDATE",
    "compute_score",
    "create_rl_sampler",
    "curriculum_trainer",
    "dataset_rows",
    "patch_task_runner_module",
    "task_runner",
]
