"""Curriculum samplers as ticket dispensers: every sampler of the curriculum crate (HDC and its
rivals: pass_rate, learnability, learning_progress, sec, ladder, plr) through one class,
``Curriculum(kind, env_ids, ...)``; ``HDC(env_ids, ...)`` is its ``kind="hdc"`` case."""

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


TicketLike = str | Ticket | Mapping[str, Any]

# Float fields of a snapshot: JSON has no NaN, so "no estimate" arrives as null.
_SNAPSHOT_FLOATS = ("probability", "score", "success", "mean_harness", "mean_scale")


def _tickets(ticket_ids: TicketLike | Iterable[TicketLike]) -> tuple[list[Ticket], bool]:
    """Tickets from one ticket (id, Ticket, row dict) or many; and whether one was given."""
    if isinstance(ticket_ids, (str, Mapping, Ticket)):
        return [Ticket.parse(ticket_ids)], True
    return [Ticket.parse(t) for t in ticket_ids], False


def _as_tuples(tickets: list[Ticket]) -> list[tuple[str, str, int, int]]:
    return [(t.env_id, t.harness, t.scale, t.seed) for t in tickets]


def sampler_kinds() -> list[str]:
    """Every sampler kind ``Curriculum`` accepts, HDC first (the table in the README says
    which method each implements)."""
    return list(_envdist.sampler_kinds())


def default_config(kind: str) -> dict:
    """The documented default configuration of ``kind`` (its fields; every number carries its
    source in the curriculum crate's docs). Pass a modified copy as ``Curriculum``'s
    ``config``; fields left out take these values."""
    if not isinstance(kind, str):
        raise TypeError(f"kind: expected str, found {type(kind).__name__}")
    return json.loads(_envdist.default_config_json(kind))


class TaskSampler:
    """A curriculum sampler over envdist environments handing out :class:`Ticket`s: the
    methods every kind shares (build one with :class:`Curriculum` or :class:`HDC`)."""

    def __init__(self, _sampler: Any):
        self._s = _sampler

    @property
    def kind(self) -> str:
        """The sampler's kind (``"hdc"``, ``"plr"``, ...)."""
        return self._s.kind

    @property
    def env_ids(self) -> list[str]:
        return self._s.env_ids

    @property
    def config(self) -> dict:
        """The full configuration, defaults included (the kind's fields, without ``kind``)."""
        return json.loads(self._s.config_json())

    @property
    def samples(self) -> int:
        """Tickets drawn so far."""
        return self._s.samples

    @property
    def updates(self) -> int:
        """Outcomes of this sampler's environments reported so far."""
        return self._s.updates

    def __repr__(self) -> str:
        return f"{type(self).__name__}(kind={self.kind!r}, envs={len(self.env_ids)}, samples={self.samples})"

    def sample(self, k: int = 1) -> list[Ticket]:
        """``k`` tickets, drawn from the current distribution."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
            raise ValueError(f"k: expected a non-negative int, found {k!r}")
        return [Ticket(*t) for t in self._s.sample(int(k))]

    def update(
        self,
        ticket_ids: TicketLike | Iterable[TicketLike],
        successes: Iterable[Any],
        steps: Iterable[int] | None = None,
    ) -> None:
        """Report outcomes: the episode of ``ticket_ids[i]`` ended solved iff ``successes[i]``
        (bools, or finite numbers: non-zero is solved), after ``steps[i]`` steps. A GRPO group
        reports its ticket once per rollout. Unknown environments are a KeyError; a ticket this
        sampler could not have issued (a scale outside the environment's range, a harness level
        it never draws) or a NaN or infinite success is a ValueError naming the ticket. Nothing
        is recorded then.

        ``steps`` is needed by an HDC built with ``balance_turns`` (it shares the steps, not
        the episodes, between single- and multi-turn environments) and refused missing there:
        without it every kind would have played 0 steps, and the tie would go to single-turn
        environments forever. Other samplers ignore it."""
        tickets, _ = _tickets(ticket_ids)
        if steps is None:
            if self._balances_turns():
                raise ValueError(
                    "steps: this sampler balances single- and multi-turn environments by their steps "
                    "(balance_turns); pass each episode's length, e.g. update(tickets, successes, steps=[info['steps']])"
                )
        else:
            steps = np.asarray(steps if not np.isscalar(steps) else [steps])
            if steps.dtype.kind not in "iu" or steps.ndim != 1 or (steps < 0).any() or (steps > 2**32 - 1).any():
                raise ValueError(f"steps: expected non-negative ints (one per ticket), found {steps.tolist()!r}")
            steps = [int(x) for x in steps.tolist()]
        flags = np.asarray(successes if not np.isscalar(successes) else [successes])
        if flags.dtype.kind not in "biuf":
            raise TypeError(f"successes: expected bools or numbers, found dtype {flags.dtype}")
        if flags.ndim != 1:
            raise ValueError(f"successes: expected a flat sequence, found shape {flags.shape}")
        self._s.update(_as_tuples(tickets), [float(x) for x in flags.tolist()], steps)

    def _balances_turns(self) -> bool:
        if not hasattr(self, "_balance_turns"):
            self._balance_turns = bool(self.config.get("balance_turns", False))
        return self._balance_turns

    def trains_on(self, ticket_ids: TicketLike | Iterable[TicketLike]) -> bool | list[bool]:
        """Whether a trainer should take gradients from the episode of a ticket (one ticket:
        a bool; several: a list). True for every kind except robust PLR (``plr`` with
        ``robust: true``, the default), which is False for new levels: it learns only from
        replayed ones, and plays new levels only to score them.

        Ask after sampling and *before* reporting the ticket's outcome (the report files a
        new level into the replay buffer, after which it looks like a replay), then report
        every outcome (new levels need their scores) and leave the episodes that got False
        out of the loss::

            tickets = cur.sample(64)
            keep = cur.trains_on(tickets)              # before update
            successes = play(tickets)
            cur.update(tickets, successes)
            loss = (per_episode_loss * mask_from(keep)).sum() / max(sum(keep), 1)
        """
        tickets, one = _tickets(ticket_ids)
        flags = self._s.trains_on(_as_tuples(tickets))
        return flags[0] if one else flags

    def state_dict(self) -> dict:
        """The full state (JSON-compatible). ``load_state_dict`` of it continues bit-identically:
        the same tickets in the same order."""
        return json.loads(self._s.state_json())

    def load_state_dict(self, state: Mapping[str, Any] | str) -> None:
        """Restore ``state_dict()``'s output. A state saved by another kind of sampler, under
        another configuration or environment list, or a corrupt one, is a ValueError saying
        what differs; nothing changes then."""
        if isinstance(state, Mapping):
            text = json.dumps(state)
        elif isinstance(state, str):
            text = state
        else:
            raise TypeError(f"state: expected a dict (or its JSON), found {type(state).__name__}")
        self._s.load_state_json(text)

    def probabilities(self) -> dict:
        """Where the next tickets come from: ``env`` (n,) env probabilities (summing to 1),
        ``scale_window`` (n, 2) the smallest and largest scale each env's next ticket can
        have; HDC adds ``harness`` (n, 5), per env the probabilities of H0..H4."""
        p = json.loads(self._s.probabilities_json())
        out = {
            "env_ids": p["env_ids"],
            "env": np.asarray(p["env"], dtype=np.float64),
            "scale_window": np.asarray(p["scale_window"], dtype=np.int64).reshape(-1, 2),
        }
        if "harness" in p:
            out["harness"] = np.asarray(p["harness"], dtype=np.float64)
        return out

    def snapshot(self) -> list[dict]:
        """One dict per environment, the same for every kind: ``env``, ``probability``,
        ``score`` (the kind's priority statistic), ``success`` (its success estimate),
        ``harness`` (most likely level next), ``mean_harness``, ``scale_lo``, ``scale_hi``,
        ``mean_scale``, ``episodes``, ``successes``. NaN where the sampler has no estimate."""
        snap = json.loads(self._s.snapshot_json())
        for e in snap:
            for k in _SNAPSHOT_FLOATS:
                if e.get(k) is None:
                    e[k] = float("nan")
        return snap

    def status(self) -> list[dict]:
        """Each environment's position in the sampler's own terms: HDC's stage (harness
        level, scale window, competence, episodes, successes); the snapshot for other kinds."""
        if self.kind != "hdc":
            return self.snapshot()
        return json.loads(self._s.status_json())

    def to_rows(self, n: int) -> list[dict]:
        """``n`` tickets as dataset rows, for trainers that read a fixed dataset (one row per
        prompt: a GRPO group repeats the row, so its level stays fixed)."""
        return [t.as_row() for t in self.sample(n)]

    def grid_rows(self, seeds_per_cell: int = 1, seed: int = 0) -> list[dict]:
        """Rows for every (env, harness level, scale) cell the sampler can draw (every level
        for HDC, the config's ``harness_levels`` for the others), ``seeds_per_cell`` seeds
        each: the dataset a dataset-driven curriculum sampler (``envdist.adapters.verl``)
        picks rows from."""
        import envdist

        levels = self.config.get("harness_levels") or [f"H{h}" for h in range(5)]
        rng = np.random.default_rng(seed)
        rows = []
        for env_id in self.env_ids:
            r = envdist.spec(env_id)["scale"]
            for harness in levels:
                for scale in range(r["min"], r["max"] + 1):
                    for s in rng.integers(0, 2**63, size=seeds_per_cell):
                        rows.append(Ticket(env_id, harness, scale, int(s)).as_row())
        return rows


def _weights(weights: Sequence[float] | np.ndarray | None) -> list[float] | None:
    if weights is None:
        return None
    arr = np.asarray(weights)
    if arr.dtype.kind not in "iuf" or arr.ndim != 1:
        raise TypeError(f"weights: expected a flat sequence of numbers, found {arr.dtype} shape {arr.shape}")
    return [float(x) for x in arr]


class Curriculum(TaskSampler):
    """Any curriculum sampler of envdist over envdist environments: ``kind`` is one of
    :func:`sampler_kinds` (``"hdc"``, ``"pass_rate"``, ``"learnability"``,
    ``"learning_progress"``, ``"sec"``, ``"ladder"``, ``"plr"``).

    ``config`` is a dict of the kind's fields (:func:`default_config` lists them with their
    defaults; missing ones take them). Unknown fields, wrong types and bad values are a
    ValueError naming the field; a ``kind`` key, if present, must name the same kind.
    ``weights`` (one sampling weight per env, e.g. from AES) is HDC's alone. Same kind,
    environments, config, seed and call order give the same tickets.

    >>> cur = Curriculum("plr", ["maze/classic", "sokoban/classic"], {"buffer_size": 64}, seed=0)
    >>> tickets = cur.sample(8)
    """

    def __init__(
        self,
        kind: str,
        env_ids: Sequence[str],
        config: Mapping[str, Any] | None = None,
        seed: int = 0,
        weights: Sequence[float] | np.ndarray | None = None,
    ):
        if not isinstance(kind, str):
            raise TypeError(f"kind: expected str (one of {', '.join(sampler_kinds())}), found {type(kind).__name__}")
        if isinstance(env_ids, str):
            env_ids = [env_ids]
        if config is not None and not isinstance(config, Mapping):
            raise TypeError(f"config: expected a dict of {kind} config fields, found {type(config).__name__}")
        super().__init__(
            _envdist.Sampler(
                kind, list(env_ids), None if config is None else json.dumps(dict(config)), int(seed), _weights(weights)
            )
        )


class HDC(Curriculum):
    """The HDC curriculum (harness weakening x scale windows) over envdist environments:
    ``Curriculum("hdc", ...)``.

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
        super().__init__("hdc", env_ids, config, seed, weights)


__all__ = ["HDC", "Curriculum", "TaskSampler", "Ticket", "default_config", "sampler_kinds"]
