"""Curriculum samplers as ticket dispensers: every sampler of the curriculum crate (HDC and its
rivals: pass_rate, learnability, learning_progress, sec, ladder, plr) through one class,
``Curriculum(kind, env_ids, ...)``; ``HDC(env_ids, ...)`` is its ``kind="hdc"`` case."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, overload

import numpy as np

from . import _check, _envdist

#: The most tickets (or rows) one call hands out.
MAX_TICKETS = 1 << 24


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

    def __post_init__(self):
        from .env import _level

        _check.env_id("env_id", self.env_id)
        # The harness level in its canonical form ("h2", "2" and 2 are "H2").
        object.__setattr__(self, "harness", _level(self.harness))
        object.__setattr__(self, "scale", _check.integer("scale", self.scale, 0, _check.U32_MAX, "an integer scale"))
        object.__setattr__(self, "seed", _check.seed("seed", self.seed))

    @property
    def ticket_id(self) -> str:
        return f"{self.env_id}|{self.harness}|{self.scale}|{self.seed}"

    @classmethod
    def parse(cls, ticket: str | Ticket | Mapping[str, Any]) -> Ticket:
        """A ticket from its id (``"maze/classic|H2|5|123"``), a ``Ticket`` or a row dict."""
        return _parse_ticket(ticket, "ticket")

    def make(self, canvas: int = 64, render_mode: str | None = None):
        """The environment this ticket plays (call ``reset(seed=ticket.seed)`` on it); ``canvas``
        and ``render_mode`` as in :func:`envdist.make`."""
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


def _parse_ticket(ticket: Any, name: str) -> Ticket:
    """A ticket from an id, a Ticket or a row dict; errors name the argument ``name``."""
    if isinstance(ticket, Ticket):
        return ticket
    if isinstance(ticket, Mapping):
        if "ticket_id" in ticket:
            return _parse_ticket(ticket["ticket_id"], f"{name}['ticket_id']")
        missing = [k for k in ("env_id", "harness", "scale", "seed") if k not in ticket]
        if missing:
            raise ValueError(f"{name}: expected a ticket_id or the keys env_id, harness, scale, seed; missing {', '.join(missing)}")
        fields = {k: ticket[k] for k in ("env_id", "harness", "scale", "seed")}
    elif isinstance(ticket, str):
        parts = ticket.split("|")
        if len(parts) != 4:
            raise ValueError(
                f"{name}: expected a ticket id 'env_id|harness|scale|seed' (e.g. 'maze/classic|H2|5|123'), found {ticket!r}"
            )
        env_id, harness, scale, seed = parts
        try:
            fields = {"env_id": env_id, "harness": harness, "scale": int(scale), "seed": int(seed)}
        except ValueError:
            raise ValueError(
                f"{name}: in ticket id {ticket!r} the scale and the seed must be integers ('env_id|harness|scale|seed')"
            ) from None
    else:
        raise TypeError(f"{name}: expected a ticket (a ticket id str, a Ticket or a row dict), found {type(ticket).__name__}")
    try:
        return Ticket(**fields)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{name}: {e}") from None

# Float fields of a snapshot: JSON has no NaN, so "no estimate" arrives as null.
_SNAPSHOT_FLOATS = ("probability", "score", "success", "mean_harness", "mean_scale")


def _tickets(ticket_ids: TicketLike | Iterable[TicketLike]) -> tuple[list[Ticket], bool]:
    """Tickets from one ticket (id, Ticket, row dict) or many; and whether one was given."""
    if isinstance(ticket_ids, (str, Mapping, Ticket)):
        return [_parse_ticket(ticket_ids, "ticket_ids")], True
    if not isinstance(ticket_ids, Iterable):
        raise TypeError(
            f"ticket_ids: expected a ticket (id str, Ticket, row dict) or a list of them, found {type(ticket_ids).__name__}"
        )
    return [_parse_ticket(t, f"ticket_ids[{i}]") for i, t in enumerate(ticket_ids)], False


def _as_tuples(tickets: list[Ticket]) -> list[tuple[str, str, int, int]]:
    return [(t.env_id, t.harness, t.scale, t.seed) for t in tickets]


def sampler_kinds() -> list[str]:
    """Every sampler kind ``Curriculum`` accepts, HDC first (the table in the README says
    which method each implements)."""
    return list(_envdist.sampler_kinds())


def default_config(kind: str) -> dict:
    """The documented default configuration of ``kind`` (its fields; every number carries its
    source in the curriculum crate's docs). Pass a modified copy as ``Curriculum``'s
    ``config``; fields left out take these values. ``kind`` is one of :func:`sampler_kinds`;
    ``"select"`` gives AES's options (:func:`envdist.selection.defaults`)."""
    _check.string("kind", kind, f"a sampler kind (one of {', '.join(sampler_kinds())}) or 'select'")
    if kind == "select":
        from .selection import defaults

        return defaults()
    try:
        return json.loads(_envdist.default_config_json(kind))
    except ValueError as e:
        raise ValueError(f"kind: {e} (or 'select' for AES's options)") from None


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
        """``k`` tickets (0 to :data:`MAX_TICKETS`), drawn from the current distribution."""
        k = _check.integer("k", k, 0, MAX_TICKETS, "a number of tickets")
        return [Ticket(*t) for t in self._s.sample(k)]

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
        lengths: list[int] | None = None
        if steps is None:
            if self._balances_turns():
                raise ValueError(
                    "steps: this sampler balances single- and multi-turn environments by their steps "
                    "(balance_turns); pass each episode's length, e.g. update(tickets, successes, steps=[info['steps']])"
                )
        else:
            raw: Any = [steps] if np.isscalar(steps) else steps
            given = np.asarray(raw)
            if given.dtype.kind not in "iu" or given.ndim != 1 or (given < 0).any() or (given > 2**32 - 1).any():
                raise ValueError(f"steps: expected non-negative ints (one per ticket), found {given.tolist()!r}")
            lengths = [int(x) for x in given.tolist()]
        if isinstance(successes, (str, Mapping)) or not (np.isscalar(successes) or isinstance(successes, (Iterable, np.ndarray))):
            raise TypeError(f"successes: expected bools or numbers (one per ticket), found {type(successes).__name__}")
        try:
            flags = np.asarray(successes if not np.isscalar(successes) else [successes])
        except (TypeError, ValueError):
            flags = np.asarray([None])
        if flags.dtype.kind not in "biuf":
            raise TypeError(f"successes: expected bools or numbers, found {_dtype_words(flags.dtype)}")
        if flags.ndim != 1:
            raise ValueError(f"successes: expected a flat sequence, found shape {flags.shape}")
        if len(flags) != len(tickets):
            raise ValueError(
                f"successes: expected {len(tickets)} values, one per ticket of ticket_ids, found {len(flags)}"
            )
        self._s.update(_as_tuples(tickets), [float(x) for x in flags.tolist()], lengths)

    def _balances_turns(self) -> bool:
        if not hasattr(self, "_balance_turns"):
            self._balance_turns = bool(self.config.get("balance_turns", False))
        return self._balance_turns

    # A str or a mapping is one ticket, although each is iterable too.
    @overload
    def trains_on(self, ticket_ids: TicketLike) -> bool: ...  # type: ignore[overload-overlap]
    @overload
    def trains_on(self, ticket_ids: Iterable[TicketLike]) -> list[bool]: ...
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
        if isinstance(state, str):
            text = state  # parsed in Rust: nesting is bounded there, not by Python's stack
        elif isinstance(state, Mapping):
            try:
                text = json.dumps(state, allow_nan=False)
            except (TypeError, ValueError, RecursionError) as e:
                raise ValueError(f"state: expected a dict from state_dict(), found one that is not JSON-compatible ({e})") from None
        else:
            raise TypeError(f"state: expected a dict from state_dict() (or its JSON text), found {type(state).__name__}")
        try:
            self._s.load_state_json(text)
        except ValueError as e:
            raise ValueError(f"state: {e}") from None

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
        prompt: a GRPO group repeats the row, so its level stays fixed); ``n`` from 0 to
        :data:`MAX_TICKETS`."""
        n = _check.integer("n", n, 0, MAX_TICKETS, "a number of rows")
        return [t.as_row() for t in self.sample(n)]

    def grid_rows(self, seeds_per_cell: int = 1, seed: int = 0) -> list[dict]:
        """Rows for every (env, harness level, scale) cell the sampler can draw (every level
        for HDC, the config's ``harness_levels`` for the others), ``seeds_per_cell`` seeds
        each: the dataset a dataset-driven curriculum sampler (``envdist.adapters.verl``)
        picks rows from. ``seeds_per_cell`` from 1 to 65536; ``seed`` seeds the rows' seeds."""
        import envdist

        seeds_per_cell = _check.integer("seeds_per_cell", seeds_per_cell, 1, 1 << 16, "a number of seeds")
        seed = _check.seed("seed", seed)
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


def _dtype_words(dtype: np.dtype) -> str:
    """A numpy dtype as the kind of values it holds."""
    return {"U": "strs", "S": "bytes", "O": "objects", "b": "bools", "f": "floats", "c": "complex numbers",
            "M": "datetimes", "m": "timedeltas", "V": "structured values"}.get(dtype.kind, f"dtype {dtype}")


def _weights(weights: Sequence[float] | np.ndarray | None) -> list[float] | None:
    if weights is None:
        return None
    if isinstance(weights, (str, Mapping)) or not isinstance(weights, (Sequence, np.ndarray)):
        raise TypeError(f"weights: expected a flat sequence of numbers (one per env), found {type(weights).__name__}")
    try:
        arr = np.asarray(weights)
    except (TypeError, ValueError):
        arr = np.asarray(weights, dtype=object)
    if arr.dtype.kind not in "iuf" or arr.ndim != 1:
        raise TypeError(
            f"weights: expected a flat sequence of numbers (one per env), found {_dtype_words(arr.dtype)} of shape {arr.shape}"
        )
    if not np.all(np.isfinite(arr.astype(np.float64))):
        raise ValueError(f"weights: expected finite numbers, found {arr.tolist()}")
    if np.any(np.abs(arr.astype(np.float64)) > np.finfo(np.float32).max):
        raise ValueError(f"weights: expected numbers within float32's range (|w| <= 3.4e38), found {arr.tolist()}")
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
        # Spellings such as "Pass-Rate" are the extension's to read; it names the kinds.
        _check.string("kind", kind, f"a sampler kind (one of {', '.join(sampler_kinds())})")
        env_ids = _check.env_ids("env_ids", env_ids)
        config = _check.optional_mapping("config", config, f"a dict of {kind} config fields")
        seed = _check.seed("seed", seed)
        _check.json_values("config", dict(config))
        # numpy scalars (checked above) as the Python numbers they hold.
        text = json.dumps(dict(config), allow_nan=False, default=lambda o: o.item())
        super().__init__(_envdist.Sampler(kind, env_ids, text if config else None, seed, _weights(weights)))


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


__all__ = ["HDC", "MAX_TICKETS", "Curriculum", "TaskSampler", "Ticket", "default_config", "sampler_kinds"]
