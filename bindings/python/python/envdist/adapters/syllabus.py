"""Syllabus adapters: ``EnvdistCurriculum`` (a ``syllabus.core.Curriculum`` backed by any
envdist sampler: HDC by default, ``kind="plr"`` etc. for the rivals) and ``EnvdistTaskWrapper``
(a ``syllabus.core.TaskWrapper`` that plays its tickets).

Tasks travel as ticket ids (``"maze/classic|H2|5|123"``): ``sample(k)`` hands them out,
the env wrapper plays them (harness, scale and seed included, so PLR's replays replay the
exact episode), and ``update_on_episode(..., task, progress)`` reports them back; progress
>= 1 (or True) is a solved episode. Written against syllabus-rl 0.7.

Robust PLR: updates reach the curriculum through Syllabus' queues, possibly before the
trainer looks at the episode, so ``EnvdistCurriculum`` records at sample time whether each
ticket's episode should train (``trains_on(task)``, e.g. with ``info["task"]``); leave the
episodes that get False out of the loss.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium.spaces import Discrete
from syllabus.core import Curriculum, TaskWrapper
from syllabus.task_space import TaskSpace

import envdist
from envdist.curriculum import Curriculum as _Sampler
from envdist.curriculum import TaskSampler, Ticket

# Tickets whose training flag is remembered (the oldest are forgotten first); far above any
# number of episodes in flight.
MAX_REMEMBERED = 1 << 16


class TicketTaskSpace(TaskSpace):
    """Tasks are tickets; their encoding is the ticket id. ``tasks`` lists the env ids (one
    nominal task per environment, for Syllabus' logging)."""

    def __init__(self, env_ids: Sequence[str]):
        super().__init__(Discrete(len(env_ids)), list(env_ids))

    def _encode(self, task: Any) -> str:
        return Ticket.parse(task).ticket_id

    def _decode(self, encoding: Any) -> Ticket:
        return Ticket.parse(encoding)

    def contains(self, encoding: Any) -> bool:
        try:
            return Ticket.parse(encoding).env_id in self._task_set
        except (ValueError, TypeError):
            return False


class EnvdistCurriculum(Curriculum):
    """An envdist sampler as a Syllabus curriculum: ``Curriculum(kind, env_ids, config, seed,
    weights)`` built here (``kind`` defaults to ``"hdc"``), or any envdist sampler passed as
    ``sampler``."""

    def __init__(
        self,
        env_ids: Sequence[str] | None = None,
        config: Mapping[str, Any] | None = None,
        seed: int = 0,
        weights: Sequence[float] | None = None,
        *,
        kind: str = "hdc",
        sampler: TaskSampler | None = None,
        success_threshold: float = 1.0,
        **curriculum_kwargs: Any,
    ):
        if sampler is None:
            if env_ids is None:
                raise ValueError("EnvdistCurriculum: expected env_ids or a sampler")
            sampler = _Sampler(kind, env_ids, config=config, seed=seed, weights=weights)
        self.sampler = sampler
        self.success_threshold = float(success_threshold)
        self._trains: OrderedDict[str, bool] = OrderedDict()
        super().__init__(TicketTaskSpace(sampler.env_ids), **curriculum_kwargs)

    def sample(self, k: int = 1) -> list[str]:
        tickets = self.sampler.sample(k)
        ids = [t.ticket_id for t in tickets]
        for tid, flag in zip(ids, self.sampler.trains_on(tickets)):
            self._trains[tid] = flag
            self._trains.move_to_end(tid)
        while len(self._trains) > MAX_REMEMBERED:
            self._trains.popitem(last=False)
        return ids

    def trains_on(self, task: Any) -> bool:
        """Whether the trainer should take gradients from the episode of ``task`` (a ticket
        id): False only for robust PLR's new levels. Answered from the sample-time record,
        so it holds whether or not the episode was already reported."""
        tid = Ticket.parse(task).ticket_id
        flag = self._trains.get(tid)
        return self.sampler.trains_on(tid) if flag is None else flag

    def update_on_episode(self, episode_return, length, task, progress, env_id=None) -> None:
        super().update_on_episode(episode_return, length, task, progress, env_id)
        solved = bool(progress) if isinstance(progress, (bool, np.bool_)) else float(progress) >= self.success_threshold
        self.sampler.update([task], [solved])

    def _sample_distribution(self) -> list[float]:
        # One nominal task per environment: the sampler's environment distribution.
        return self.sampler.probabilities()["env"].tolist()


class EnvdistTaskWrapper(TaskWrapper):
    """The env side: ``reset(new_task=ticket)`` plays that ticket (one envdist env per
    environment id, reused; harness, scale and seed from the ticket). Task completion is the
    episode's success."""

    def __init__(self, first: Ticket | str, canvas: int = 64):
        t = Ticket.parse(first)
        self._canvas = canvas
        self._envs = {t.env_id: envdist.make(t.env_id, t.harness, t.scale, canvas=canvas)}
        super().__init__(self._envs[t.env_id])
        self.task = t

    def change_task(self, new_task) -> None:
        t = Ticket.parse(new_task)
        env = self._envs.get(t.env_id)
        if env is None:
            env = self._envs[t.env_id] = envdist.make(t.env_id, t.harness, t.scale, canvas=self._canvas)
        self.env = env
        self.task = t

    def reset(self, new_task=None, **kwargs):
        if new_task is not None:
            self.change_task(new_task)
        t = self.task
        kwargs["seed"] = t.seed
        kwargs["options"] = {"harness": t.harness, "scale": t.scale}
        obs, info = self.env.reset(**kwargs)
        info["task_completion"] = 0.0
        info["task"] = t.ticket_id
        return obs, info

    def step(self, action):
        obs, rew, term, trunc, info = self.env.step(action)
        self.task_completion = self._task_completion(obs, rew, term, trunc, info)
        info["task_completion"] = self.task_completion
        info["task"] = self.task.ticket_id
        return obs, rew, term, trunc, info

    def _task_completion(self, obs, rew, term, trunc, info) -> float:
        return 1.0 if info.get("success") else 0.0

    def get_task(self) -> str:
        return self.task.ticket_id


__all__ = ["EnvdistCurriculum", "EnvdistTaskWrapper", "TicketTaskSpace"]
