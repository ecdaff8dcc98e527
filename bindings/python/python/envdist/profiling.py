"""Ability profiles from a trainer's own logs."""

from __future__ import annotations

import json
import warnings
import os
from collections.abc import Sequence
from typing import Any

from . import _check, _envdist


def profile_log(
    path: str | os.PathLike,
    *,
    replay: bool = True,
    ignore_tags: Sequence[str] = (),
    threshold: float | None = None,
    cooccurrence_weight: float | None = None,
    out: str | os.PathLike | None = None,
) -> dict[str, Any]:
    """Profile a trajectory log into ability profiles (the input of :func:`envdist.select`).

    The log is JSONL; each line is an OpenAI-style chat episode as VLM trainers dump it::

        {"env_id": "maze/classic", "episode": 7, "seed": 123, "harness": "H4", "scale": 5,
         "success": true, "messages": [{"role": "user", "content": [{"type": "image_url", ...},
         {"type": "text", "text": "..."}]}, {"role": "assistant", "content": "<answer>left</answer>"}]}

    (lines with the same ``env_id`` and ``episode`` are joined), or envdist's own trajectory
    or step lines. A line that is none of these is a ValueError naming the file, the line and
    the field it lacks as a chat log writes it (``messages``, ``env_id``). Each assistant
    message is a step, its action read like ``parse_action``; unreadable turns are skipped and
    counted. Untagged trajectories are replayed in their
    environment (``replay=True``) to get the ability tags — exact when the log carries the
    ticket's ``seed``, ``harness`` and ``scale``. A log with no usable trajectory is a
    ValueError naming the file; a missing file is FileNotFoundError. Environment ids the replay
    does not know (a misspelt ``env_id``) are listed with the nearest known ids: in the error
    when no trajectory is left, else in ``replay["unknown_env_ids"]`` and a ``UserWarning``
    (those trajectories are profiled without tags).

    Returns ``{"profiles": <ProfileSet dict>, "trajectories", "unreadable_turns",
    "dropped_episodes", "replay", "atomic_abilities", "segmenter"}``; with ``out`` the
    profiles.json / abilities.dot / abilities.svg files the CLI writes are written there.
    """
    got = json.loads(
        _envdist.profile_log_json(
            _check.path("path", path),
            _check.boolean("replay", replay),
            _check.strings("ignore_tags", ignore_tags),
            _check.optional_number("threshold", threshold, 0, 1),
            _check.optional_number("cooccurrence_weight", cooccurrence_weight, 0, 1),
            None if out is None else _check.path("out", out, must_exist=False),
        )
    )
    unknown = (got.get("replay") or {}).get("unknown_env_ids") or {}
    if unknown:
        listed = "; ".join(
            f"{env!r} ({u['trajectories']} trajectories; nearest: {', '.join(u['nearest'])})" for env, u in unknown.items()
        )
        warnings.warn(
            f"{os.fspath(path)}: environment ids the replay does not know, profiled without tags: {listed}",
            stacklevel=2,
        )
    return got


__all__ = ["profile_log"]
