"""verl's custom reward function for envdist's ticket rows (``envdist.adapters.verl.dataset_rows``):
``custom_reward_function.path=<this file>``, ``custom_reward_function.name=compute_score``. Pure
Python over ``envdist.make``: it needs no trainer package, so it loads in verl's reward workers
and in tests alike.

A row's ground truth is its ticket (``env|harness|scale|seed``). :func:`compute_score` replays
that episode and plays the reply as its first action, read in the episode's state by the env's
own parser (``EnvdistEnv.parse_action``): a single-turn env reads its answer in the words its
question uses (``"3"``, ``"three"``, ``"yes"``, ``"above"``, ``"the green one"``), or as the slot
form (``"answer_3"``). A single-turn row is one question, so the step's reward is the episode's;
a multi-turn row scores the first step alone (1 only if that step solves the episode). A reply
that names no action, or an answer the question does not have, scores 0.
"""

from __future__ import annotations

import threading
from typing import Any

import envdist
from envdist import _check
from envdist.curriculum import Ticket, _parse_ticket

#: The key of a row's ticket in ``extra_info`` (as ``envdist.adapters.verl`` writes it).
TICKET_KEY = "envdist_ticket"

# One env per env id and thread: verl's reward managers may score from several threads, and an
# env replays any ticket of its id (reset with the ticket's seed, level and scale).
_local = threading.local()


def _env(env_id: str) -> envdist.EnvdistEnv:
    envs = getattr(_local, "envs", None)
    if envs is None:
        envs = _local.envs = {}
    if env_id not in envs:
        envs[env_id] = envdist.make(env_id)
    return envs[env_id]


def score_reply(ticket: Ticket | str | dict, reply: str) -> dict[str, Any]:
    """Play ``reply`` as the first action of ``ticket``'s episode: ``{"score": the step's reward,
    "acc": 1.0 if it solved the episode else 0.0, "action_is_valid": whether the reply named an
    action, "action": the action's name or None}``."""
    return _score(Ticket.parse(ticket), reply, "reply")


def _score(t: Ticket, reply: str, name: str) -> dict[str, Any]:
    _check.string(name, reply, "the policy's reply text (a str)")
    env = _env(t.env_id)
    env.reset(seed=t.seed, options={"harness": t.harness, "scale": t.scale})
    try:
        action = env.parse_action(reply)
    except ValueError:
        return {"score": 0.0, "acc": 0.0, "action_is_valid": False, "action": None}
    _, reward, _, _, info = env.step(action)
    return {
        "score": float(reward),
        "acc": 1.0 if info["success"] else 0.0,
        "action_is_valid": True,
        "action": envdist.ACTION_NAMES[action],
    }


def compute_score(
    data_source: str | None = None,
    solution_str: str = "",
    ground_truth: str | None = None,
    extra_info: dict | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """verl's ``compute_score`` for a row of ``dataset_rows``: the ticket is ``ground_truth``
    (else ``extra_info["envdist_ticket"]``) and the reply ``solution_str``; returns
    :func:`score_reply`'s dict, whose ``score`` is the reward and whose ``acc`` the
    curriculum sampler reads as the episode's success (its default ``success_key``)."""
    if data_source is not None:
        _check.string("data_source", data_source, "the row's data source (a str) or None")
    extra = _check.optional_mapping("extra_info", extra_info, "the row's extra_info (a dict) or None")
    ticket = ground_truth if ground_truth is not None else extra.get(TICKET_KEY)
    if ticket is None:
        raise ValueError(
            f"ground_truth: expected the row's ticket id (env|harness|scale|seed, as dataset_rows writes it) or "
            f"extra_info[{TICKET_KEY!r}], found neither (data_source {data_source!r})"
        )
    return _score(_parse_ticket(ticket, "ground_truth"), solution_str, "solution_str")


__all__ = ["TICKET_KEY", "compute_score", "score_reply"]
