"""Syllabus adapters: ``EnvdistCurriculum`` (a ``syllabus.core.Curriculum`` backed by HDC)
and ``EnvdistTaskWrapper`` (a ``syllabus.core.TaskWrapper`` that plays its tickets).

Tasks travel as ticket ids (``"maze/classic|H2|5|123"``): ``sample(k)`` hands them out,
the env wrapper plays them (harness, scale and seed included), and
``update_on_episode(..., task, progress)`` reports them back; progress >= 1 (or True) is
a solved episode. Written against syllabus-rl 0.7.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium.spaces import Discrete
from syllabus.core import Curriculum, TaskWrapper
from syllabus.task_space import TaskSpace

import envdist
from envdist.curriculum import HDC, Ticket, TaskSampler


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
    """HDC (or any envdist sampler) as a Syllabus curriculum."""

    def __init__(
        self,
        env_ids: Sequence[str] | None = None,
        config: Mapping[str, Any] | None = None,
        seed: int = 0,
        weights: Sequence[float] | None = None,
        *,
        sampler: TaskSampler | None = None,
        success_threshold: float = 1.0,
        **curriculum_kwargs: Any,
    ):
        if sampler is None:
            if env_ids is None:
                raise ValueError("EnvdistCurriculum: expected env_ids or a sampler")
            sampler = HDC(env_ids, config=config, seed=seed, weights=weights)
        self.sampler = sampler
        self.success_threshold = float(success_threshold)
        super().__init__(TicketTaskSpace(sampler.env_ids), **curriculum_kwargs)

    def sample(self, k: int = 1) -> list[str]:
        return [t.ticket_id for t in self.sampler.sample(k)]

    def update_on_episode(self, episode_return, length, task, progress, env_id=None) -> None:
        super().update_on_episode(episode_return, length, task, progress, env_id)
        solved = bool(progress) if isinstance(progress, (bool, np.bool_)) else float(progress) >= self.success_threshold
        self.sampler.update([task], [solved])

    def _sample_distribution(self) -> list[float]:
        if isinstance(self.sampler, HDC):
            return self.sampler.probabilities()["env"].tolist()
        return []


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
