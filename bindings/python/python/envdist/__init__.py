"""envdist for Python trainers: the environment suite as Gymnasium envs and vector envs, the
HDC curriculum and its rivals as ticket samplers, AES selection on numpy arrays, and ability
profiles from a trainer's own chat logs.

>>> import envdist
>>> env = envdist.make("maze/classic", harness="H0")
>>> obs, info = env.reset(seed=0)
>>> obs["image"].shape
(64, 64, 3)
>>> obs, reward, terminated, truncated, info = env.step("move left")

``envdist.wrappers`` gives numpy-only observations and action masks for Stable-Baselines3,
MaskablePPO and CleanRL-style loops. The adapters for verl, Syllabus and VAGEN-style loops live
in ``envdist.adapters`` and are imported only when used.
"""

from __future__ import annotations

import json as _json

from . import _check, _envdist
from .curriculum import HDC, Curriculum, Ticket, default_config, sampler_kinds
from .env import ACTION_NAMES, NUM_ACTIONS, EnvdistEnv, ResetNeeded, make, parse_action
from .profiling import profile_log
from .registration import gym_id, register_envs
from .selection import Selection, select

#: The package version (the workspace's, which the wheel carries too).
__version__: str = _envdist.__version__

__all__ = [
    "__version__",
    "ACTION_NAMES",
    "Curriculum",
    "HDC",
    "NUM_ACTIONS",
    "EnvdistEnv",
    "ResetNeeded",
    "Selection",
    "Ticket",
    "confirm_ids",
    "default_config",
    "env_ids",
    "gym_id",
    "make",
    "ood_ids",
    "parse_action",
    "pool_ids",
    "profile_log",
    "sampler_kinds",
    "select",
    "spec",
    "vector",
    "wrappers",
]

_SPECS = {s["id"]: s for s in _json.loads(_envdist.specs_json())}


def env_ids() -> list[str]:
    """Every environment id: the 200 of the pool, then the held-out (OOD) ones, then the
    confirmatory ones."""
    return list(_SPECS)


def pool_ids() -> list[str]:
    """The 200 pool environment ids."""
    return [i for i, s in _SPECS.items() if s["split"] == "pool"]


def ood_ids() -> list[str]:
    """The held-out (OOD) environment ids."""
    return [i for i, s in _SPECS.items() if s["split"] == "ood"]


def confirm_ids() -> list[str]:
    """The confirmatory held-out environment ids: families in neither the pool nor the OOD set,
    evaluated only by confirmatory records, never by pilots."""
    return [i for i, s in _SPECS.items() if s["split"] == "confirm"]


def spec(env_id: str) -> dict:
    """The spec of one environment: ``id``, ``family``, ``variant``, ``turn`` (``"ST"`` one
    question, ``"MT"`` multi-turn), ``scale`` (``{"min", "max"}``: the declared state-scale
    range, both ends included), ``split`` (``"pool"``, ``"ood"`` or ``"confirm"``), ``abilities`` (the atomic
    ability tags it can emit), ``conflict_twin`` (the rule-inverted twin, or ``None``),
    ``instruction`` (the task statement), ``max_steps`` (the step limit at the top scale).
    Unknown ids are a ``KeyError`` naming the nearest ids."""
    _check.env_id("env_id", env_id)
    try:
        return dict(_SPECS[env_id])
    except KeyError:
        # The Rust side words the error (and suggests ids).
        _envdist.Env(env_id)
        raise


from . import vector, wrappers  # noqa: E402  (need the names above)

register_envs()
