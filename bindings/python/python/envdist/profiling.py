"""Ability profiles from a trainer's own logs."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from . import _envdist


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
    or step lines. Each assistant message is a step, its action read like ``parse_action``;
    unreadable turns are skipped and counted. Untagged trajectories are replayed in their
    environment (``replay=True``) to get the ability tags — exact when the log carries the
    ticket's ``seed``, ``harness`` and ``scale``. A log with no usable trajectory is a
    ValueError naming the file; a missing file is FileNotFoundError.

    Returns ``{"profiles": <ProfileSet dict>, "trajectories", "unreadable_turns",
    "dropped_episodes", "replay", "atomic_abilities", "segmenter"}``; with ``out`` the
    profiles.json / abilities.dot / abilities.svg files the CLI writes are written there.
    """
    return json.loads(
        _envdist.profile_log_json(
            os.fspath(path),
            replay,
            [str(t) for t in ignore_tags],
            threshold,
            cooccurrence_weight,
            None if out is None else os.fspath(out),
        )
    )


__all__ = ["profile_log"]
