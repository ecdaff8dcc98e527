"""Gymnasium ids for every environment: ``envdist/<family>-<variant>-v0``."""

from __future__ import annotations

import gymnasium

from . import _check, _envdist


def gym_id(env_id: str) -> str:
    """The Gymnasium id of an envdist env id: ``maze/classic`` -> ``envdist/maze-classic-v0``."""
    _check.env_id("env_id", env_id)
    return "envdist/" + env_id.replace("/", "-") + "-v0"


def register_envs() -> list[str]:
    """Register every pool and held-out env with Gymnasium (done on ``import envdist``).
    ``gymnasium.make(id, harness="H2", scale=5)`` passes the keywords on;
    ``gymnasium.make_vec(id, num_envs)`` builds :class:`envdist.vector.EnvdistVectorEnv`."""
    import envdist

    ids = []
    for env_id in envdist.env_ids():
        gid = gym_id(env_id)
        if gid in gymnasium.registry:
            if gymnasium.registry[gid].kwargs.get("env_id") != env_id:
                raise RuntimeError(f"Gymnasium id {gid} names two environments")
            ids.append(gid)
            continue
        gymnasium.register(
            id=gid,
            entry_point="envdist.env:EnvdistEnv",
            # gymnasium.make_vec(id, num_envs) gives the threaded Rust vector env.
            vector_entry_point="envdist.vector:make_registered",
            kwargs={"env_id": env_id},
            # The env truncates at its own horizon; info["horizon"] says where.
            max_episode_steps=None,
        )
        ids.append(gid)
    return ids


__all__ = ["gym_id", "register_envs", "_envdist"]
