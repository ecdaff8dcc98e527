"""A verl curriculum sampler backed by any envdist sampler (HDC by default).

verl (read at commit b178a3c, version 0.8.0.dev, 2026-01-29;
``verl/experimental/dataset/sampler.py``) loads a sampler class from
``data.sampler.class_path`` / ``data.sampler.class_name``, builds it as
``cls(data_source=dataset, data_config=config.data)``, asserts it is an ``AbstractSampler``
(a ``torch.utils.data.Sampler[int]``), requires ``data.dataloader_num_workers=0``, and after
every training step calls ``sampler.update(batch=batch)`` when it is an
``AbstractCurriculumSampler``. The sampler yields dataset row indices.

Dataset: one row per ticket, a GRPO group repeats a row so the level of a prompt is fixed.
Build it with ``Curriculum(kind, ...).grid_rows(seeds_per_cell)`` (every env x level x scale
cell the sampler can draw) and put each row's ``ticket_id`` into
``extra_info["envdist_ticket"]`` (``extra_info["index"]`` is the row index, as verl expects).
The sampler asks envdist's sampler for the next ticket and serves a row of the same env, level
and scale (round robin over the cell's seeds), so the curriculum decides the order of prompts.
``update(batch)`` reads each sample's row ticket from ``non_tensor_batch["extra_info"]`` and
reports the ticket that was drawn for that row (a PLR level is its exact ticket, seed
included), with its success from ``non_tensor_batch[success_key]`` when present, else from
``batch.batch["token_level_scores"].sum(-1) >= success_threshold``.

Robust PLR: verl calls ``update`` after the policy update, so it cannot drop gradients by
itself. ``train_mask(batch)`` gives, per sample, whether its episode should train (recorded
when its row was served); a trainer that wants robust PLR zeroes the advantages of the
False samples before the actor update. Without that, use ``config: {robust: false}``.

Settings (``data.sampler.envdist``, all optional): ``kind`` (default ``"hdc"``; see
``envdist.sampler_kinds()``), ``config`` (that kind's fields), ``seed``, ``env_ids``
(default: the envs in the dataset), ``weights`` (HDC only), ``success_key`` (default
``"acc"``), ``success_threshold`` (default 1.0).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping, Sized
from typing import Any

import numpy as np

try:
    from verl.experimental.dataset.sampler import AbstractCurriculumSampler
except ImportError as e:  # pragma: no cover - depends on the trainer's environment
    raise ImportError(
        "envdist.adapters.verl needs verl (pip install verl): it subclasses "
        "verl.experimental.dataset.sampler.AbstractCurriculumSampler"
    ) from e

from envdist.curriculum import Curriculum, TaskSampler, Ticket

TICKET_KEY = "envdist_ticket"


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
            f"dataset row {i}: expected extra_info[{TICKET_KEY!r}] (a ticket id from grid_rows())"
        )
    return Ticket.parse(t)


def _to_numpy(x: Any) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().float().numpy()
    return np.asarray(x)


class EnvdistCurriculumSampler(AbstractCurriculumSampler):
    """An envdist sampler ordering the rows of a ticket dataset (see the module docs)."""

    def __init__(self, data_source: Sized, data_config: Any):
        settings = _plain(_get(_get(data_config, "sampler"), "envdist")) or {}
        self.data_source = data_source
        self.success_key = settings.get("success_key", "acc")
        self.success_threshold = float(settings.get("success_threshold", 1.0))
        rows = getattr(data_source, "dataframe", data_source)
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

    @property
    def hdc(self) -> TaskSampler:
        """The envdist sampler (the name from when only HDC was served; see ``sampler``)."""
        return self.sampler

    def __len__(self) -> int:
        return len(self.data_source)

    def __iter__(self) -> Iterator[int]:
        for _ in range(len(self)):
            yield self._next_index()

    def _next_index(self) -> int:
        t = self.sampler.sample(1)[0]
        key = (t.env_id, t.harness, t.scale)
        rows = self._cells.get(key)
        if not rows:
            raise ValueError(
                f"the {self.sampler.kind} sampler asked for {t.env_id} at {t.harness}, scale {t.scale}, but the "
                "dataset has no row for that cell: build it with grid_rows() of the same sampler so every cell "
                "it can draw has one"
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

    def update(self, batch: Any) -> None:
        non_tensor = getattr(batch, "non_tensor_batch", {}) or {}
        rows = self._batch_tickets(batch)
        tickets = [self._served[t.ticket_id][0] if t.ticket_id in self._served else t for t in rows]
        if self.success_key in non_tensor:
            success = _to_numpy(non_tensor[self.success_key]).astype(np.float64) >= self.success_threshold
        else:
            scores = _to_numpy(batch.batch["token_level_scores"])
            success = scores.reshape(len(tickets), -1).sum(-1) >= self.success_threshold
        self.sampler.update(tickets, success)

    def state_dict(self) -> dict:
        return {
            "sampler": self.sampler.state_dict(),
            "cursor": [[*k, v] for k, v in self._cursor.items()],
            "served": [[row, t.ticket_id, flag] for row, (t, flag) in self._served.items()],
        }

    def load_state_dict(self, state: dict) -> None:
        cursor = defaultdict(int, {(e, h, int(s)): int(v) for e, h, s, v in state["cursor"]})
        served = {row: (Ticket.parse(t), bool(flag)) for row, t, flag in state.get("served", [])}
        # "hdc": the key of states saved when only HDC was served.
        self.sampler.load_state_dict(state["sampler"] if "sampler" in state else state["hdc"])
        self._cursor, self._served = cursor, served


__all__ = ["EnvdistCurriculumSampler", "TICKET_KEY"]
