"""Curriculum samplers as ticket dispensers: ``HDC`` now, other samplers of the curriculum
crate through the same class."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from . import _envdist


@dataclass(frozen=True)
class Ticket:
    """One replayable episode: environment, harness level, state scale and seed. A trainer
    builds one env per ticket (``ticket.make()`` then ``env.reset(seed=ticket.seed)``) and
    reports the outcome with ``ticket.ticket_id``, which encodes the whole ticket (so any
    process can report it, and nothing needs to be remembered between sample and update)."""

    env_id: str
    harness: str
    scale: int
    seed: int

    @property
    def ticket_id(self) -> str:
        return f"{self.env_id}|{self.harness}|{self.scale}|{self.seed}"

    @classmethod
    def parse(cls, ticket: str | Ticket | Mapping[str, Any]) -> Ticket:
        """A ticket from its id (``"maze/classic|H2|5|123"``), a ``Ticket`` or a row dict."""
        if isinstance(ticket, Ticket):
            return ticket
        if isinstance(ticket, Mapping):
            if "ticket_id" in ticket:
                return cls.parse(ticket["ticket_id"])
            try:
                return cls(str(ticket["env_id"]), str(ticket["harness"]), int(ticket["scale"]), int(ticket["seed"]))
            except KeyError as e:
                raise ValueError(f"ticket: expected keys env_id, harness, scale, seed; missing {e}") from None
        if not isinstance(ticket, str):
            raise TypeError(f"ticket id: expected str, Ticket or dict, found {type(ticket).__name__}")
        parts = ticket.split("|")
        if len(parts) != 4:
            raise ValueError(
                f"ticket id {ticket!r}: expected 'env_id|harness|scale|seed' (e.g. 'maze/classic|H2|5|123')"
            )
        env_id, harness, scale, seed = parts
        try:
            return cls(env_id, harness, int(scale), int(seed))
        except ValueError:
            raise ValueError(
                f"ticket id {ticket!r}: scale and seed must be integers ('env_id|harness|scale|seed')"
            ) from None

    def make(self, canvas: int = 64, render_mode: str | None = None):
        """The environment this ticket plays (call ``reset(seed=ticket.seed)`` on it)."""
        from .env import make

        return make(self.env_id, harness=self.harness, scale=self.scale, canvas=canvas, render_mode=render_mode)

    def as_row(self) -> dict:
        """The ticket as a dataset row (``ticket_id``, fields, instruction, data_source)."""
        import envdist

        row = {"ticket_id": self.ticket_id, **asdict(self)}
        row["instruction"] = envdist.spec(self.env_id)["instruction"]
        row["data_source"] = "envdist/" + self.env_id
        return row


class TaskSampler:
    """A curriculum sampler over envdist environments handing out :class:`Ticket`s. Wraps any
    sampler of the curriculum crate; the HDC-only introspection raises NotImplementedError
    for others."""

    def __init__(self, _sampler: Any):
        self._s = _sampler

    @property
    def env_ids(self) -> list[str]:
        return self._s.env_ids

    def sample(self, k: int = 1) -> list[Ticket]:
        """``k`` tickets, drawn from the current distribution."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
            raise ValueError(f"k: expected a non-negative int, found {k!r}")
        return [Ticket(*t) for t in self._s.sample(int(k))]

    def update(self, ticket_ids: Iterable[str | Ticket | Mapping[str, Any]], successes: Iterable[Any]) -> None:
        """Report outcomes: the episode of ``ticket_ids[i]`` ended solved iff ``successes[i]``
        (bools, or numbers: non-zero is solved). A GRPO group reports its ticket once per
        rollout. Unknown environments are a KeyError and nothing is recorded."""
        tickets = [Ticket.parse(t) for t in (ticket_ids if not isinstance(ticket_ids, (str, Mapping, Ticket)) else [ticket_ids])]
        flags = np.asarray(successes if not np.isscalar(successes) else [successes])
        if flags.dtype.kind not in "biuf":
            raise TypeError(f"successes: expected bools or numbers, found dtype {flags.dtype}")
        if flags.ndim != 1:
            raise ValueError(f"successes: expected a flat sequence, found shape {flags.shape}")
        self._s.update(
            [(t.env_id, t.harness, t.scale, t.seed) for t in tickets],
            [bool(x) for x in flags.tolist()],
        )

    def state_dict(self) -> dict:
        """The full state (JSON-compatible). ``load_state_dict`` of it continues bit-identically:
        the same tickets in the same order."""
        return json.loads(self._s.state_json())

    def load_state_dict(self, state: Mapping[str, Any] | str) -> None:
        """Restore ``state_dict()``'s output. A state saved under another configuration or
        environment list, or a corrupt one, is a ValueError saying what differs; nothing
        changes then."""
        if isinstance(state, Mapping):
            text = json.dumps(state)
        elif isinstance(state, str):
            text = state
        else:
            raise TypeError(f"state: expected a dict (or its JSON), found {type(state).__name__}")
        self._s.load_state_json(text)

    def to_rows(self, n: int) -> list[dict]:
        """``n`` tickets as dataset rows, for trainers that read a fixed dataset (one row per
        prompt: a GRPO group repeats the row, so its level stays fixed)."""
        return [t.as_row() for t in self.sample(n)]

    def grid_rows(self, seeds_per_cell: int = 1, seed: int = 0) -> list[dict]:
        """Rows for every (env, harness level, scale) cell, ``seeds_per_cell`` seeds each: the
        dataset a dataset-driven curriculum sampler (``envdist.adapters.verl``) picks rows from."""
        import envdist

        rng = np.random.default_rng(seed)
        rows = []
        for env_id in self.env_ids:
            r = envdist.spec(env_id)["scale"]
            for h in range(5):
                for scale in range(r["min"], r["max"] + 1):
                    for s in rng.integers(0, 2**63, size=seeds_per_cell):
                        rows.append(Ticket(env_id, f"H{h}", scale, int(s)).as_row())
        return rows


class HDC(TaskSampler):
    """The HDC curriculum (harness weakening x scale windows) over envdist environments.

    ``config`` is a dict of ``HdcConfig`` fields (``mode``, ``window_width``,
    ``competence_threshold``, ``min_episodes``, ``lambda``, ...; unknown fields are refused);
    ``weights`` one sampling weight per env (e.g. from AES). Same environments, config, seed and
    call order give the same tickets.
    """

    def __init__(
        self,
        env_ids: Sequence[str],
        config: Mapping[str, Any] | None = None,
        seed: int = 0,
        weights: Sequence[float] | np.ndarray | None = None,
    ):
        if isinstance(env_ids, str):
            env_ids = [env_ids]
        if config is not None and not isinstance(config, Mapping):
            raise TypeError(f"config: expected a dict of HdcConfig fields, found {type(config).__name__}")
        w = None
        if weights is not None:
            arr = np.asarray(weights)
            if arr.dtype.kind not in "iuf" or arr.ndim != 1:
                raise TypeError(f"weights: expected a flat sequence of numbers, found {arr.dtype} shape {arr.shape}")
            w = [float(x) for x in arr]
        super().__init__(
            _envdist.Sampler.hdc(
                list(env_ids), None if config is None else json.dumps(dict(config)), int(seed), w
            )
        )

    @property
    def config(self) -> dict:
        """The full configuration, defaults included."""
        return json.loads(self._s.config_json())

    def probabilities(self) -> dict:
        """Where the next tickets come from: ``env`` (n,) env probabilities, ``harness``
        (n, 5) per-env probabilities of H0..H4, ``scale_window`` (n, 2) inclusive windows."""
        p = json.loads(self._s.probabilities_json())
        return {
            "env_ids": p["env_ids"],
            "env": np.asarray(p["env"], dtype=np.float64),
            "harness": np.asarray(p["harness"], dtype=np.float64),
            "scale_window": np.asarray(p["scale_window"], dtype=np.int64),
        }

    def status(self) -> list[dict]:
        """Each environment's position: harness level, window, competence, episodes."""
        return json.loads(self._s.status_json())


__all__ = ["HDC", "TaskSampler", "Ticket"]
