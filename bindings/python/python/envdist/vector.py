"""Many environments as one Gymnasium ``VectorEnv``, stepped in Rust across threads."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeGuard

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from . import _check, _envdist
from .env import (
    ALL_ACTIONS,
    NUM_ACTIONS,
    RESET_NEEDED,
    ResetNeeded,
    _canvas,
    _level,
    _scale,
    _seed,
    illegal_action_mode,
    illegal_message,
    join_channels,
    mask_array,
    text_space,
)


#: The most sub-envs one vector env holds (its frame buffer alone is num_envs x canvas² x 3
#: bytes: 0.8 GB at this many 64-pixel envs).
MAX_ENVS = 1 << 16


class EnvdistVectorEnv(VectorEnv):
    """``num_envs`` envdist environments stepped together in Rust, on all cores, without
    holding the GIL. Sub-env ``i`` plays ``env_ids[i % len(env_ids)]``.

    Observations are ``{"image": uint8 (num_envs, H, W, 3)}``: pixel RL does not read the
    text, and building it costs more than stepping, so it is left out by default. With
    ``text=True`` they are ``{"image", "instruction", "text"}`` (tuples of strings), the single
    env's observation batched exactly as ``SyncVectorEnv`` batches it; ``gymnasium.make_vec``
    on a registered id turns it on, so one id has one observation space whichever
    ``vectorization_mode``. With ``copy=False`` (the default) the image array is the buffer
    Rust writes into: no copy is made, and the next ``step``/``reset`` overwrites it (copy it
    to keep it). Rewards, terminations and infos are fresh arrays. Autoreset follows
    Gymnasium's NEXT_STEP mode: the step after an episode ends resets that sub-env (its action
    is ignored, reward 0). ``reset(seed=s)`` seeds sub-env ``i`` with ``s + i``, exactly like
    ``SyncVectorEnv`` over ``envdist.make`` envs, so both play the same episodes. ``info``:
    ``success``, ``action_mask`` (legal actions; every action for a sub-env whose episode just
    ended, since its next action is ignored, so a mask is never empty) and ``illegal_action``,
    each with its ``_``-prefixed mask. Actions: an int array, or a sequence of action texts
    (each read in its env's state as ``EnvdistEnv.parse_action`` reads it: a single-turn env's
    answers in words). ``illegal_action`` (``"noop"``, ``"warn"``, ``"raise"``) works as in the
    single env. A ``step`` before the first ``reset`` raises :class:`envdist.ResetNeeded` (a
    ``RuntimeError``, and Gymnasium's ``ResetNeeded``), as in the single env.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": ["rgb_array"]}

    def __init__(
        self,
        env_ids: str | Sequence[str],
        num_envs: int | None = None,
        harness: str | int | Sequence[str | int] = "H4",
        scale: int | None | Sequence[int | None] = None,
        canvas: int = 64,
        copy: bool = False,
        render_mode: str | None = None,
        text: bool = False,
        illegal_action: str = "noop",
    ):
        ids = _check.env_ids("env_ids", env_ids)
        n = len(ids) if num_envs is None else _check.integer("num_envs", num_envs, 1, MAX_ENVS, "a number of envs")
        canvas = _canvas(canvas)
        copy = _check.boolean("copy", copy)
        text = _check.boolean("text", text)
        _check.choice("render_mode", render_mode, (None, "rgb_array"))
        self.illegal_action = illegal_action_mode(illegal_action)
        per_env = lambda v: [v[i % len(v)] for i in range(n)]  # noqa: E731
        for name, v in (("harness", harness), ("scale", scale)):
            if _is_seq(v) and not len(v):
                raise ValueError(f"{name}: expected one value or one per env, found an empty sequence")
        harness_list = per_env(harness) if _is_seq(harness) else [harness] * n
        scale_list = per_env(scale) if _is_seq(scale) else [scale] * n
        self.env_ids = per_env(ids)
        self._vec = _envdist.VectorEnv(
            self.env_ids,
            [_level(h, f"harness[{i % len(harness)}]" if _is_seq(harness) else "harness") for i, h in enumerate(harness_list)],
            [_scale(s, f"scale[{i % len(scale)}]" if _is_seq(scale) else "scale") for i, s in enumerate(scale_list)],
            canvas,
        )
        self.num_envs = n
        self.copy = copy
        self.render_mode = render_mode
        self.text = text
        obs_spaces: dict[str, spaces.Space] = {"image": spaces.Box(0, 255, (canvas, canvas, 3), np.uint8)}
        if self.text:
            import envdist

            obs_spaces["instruction"] = text_space()
            obs_spaces["text"] = text_space()
            self._instructions = tuple(envdist.spec(i)["instruction"] for i in self.env_ids)
        self.single_observation_space = spaces.Dict(obs_spaces)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = batch_space(self.single_action_space, n)
        self._frames = np.zeros((n, canvas, canvas, 3), dtype=np.uint8)
        self._rewards = np.zeros(n, dtype=np.float64)
        self._terminated = np.zeros(n, dtype=np.bool_)
        self._truncated = np.zeros(n, dtype=np.bool_)
        self._success = np.zeros(n, dtype=np.bool_)
        self._legal = np.zeros(n, dtype=np.uint32)
        # Sub-envs whose episode ended at the last step (they reset at the next).
        self._over = np.zeros(n, dtype=np.bool_)
        self._illegal = np.zeros(n, dtype=np.bool_)
        self._seeded = False
        self._started = False
        self._ones = np.ones(n, dtype=np.bool_)

    def reset(self, *, seed: int | Sequence[int | None] | None = None, options: dict | None = None):
        n = self.num_envs
        seeds: list[int | None] | None
        if seed is None:
            seeds = None
        elif _check.is_int(seed):
            # Sub-env i plays seed + i: every one of them must be a seed.
            seeds = [_seed(int(seed) + i, "seed" if i == 0 else f"seed + {i} (sub-env {i})") for i in range(n)]
        elif isinstance(seed, (Sequence, np.ndarray)) and not isinstance(seed, str):
            given = list(seed)
            if len(given) != n:
                raise ValueError(f"seed: expected {n} seeds (one per env), found {len(given)}")
            seeds = [None if s is None else _seed(s, f"seed[{i}]") for i, s in enumerate(given)]
        else:
            raise TypeError(
                f"seed: expected None, an integer seed or a sequence of {n} (one per env), found {type(seed).__name__}"
            )
        if _check.optional_mapping("options", options, "None (the vector env takes no options)"):
            raise ValueError("options: the vector env takes none (configure it at make)")
        super().reset(seed=seeds[0] if seeds is not None and _check.is_int(seed) else None)
        if seeds is None:
            if self._seeded:
                seeds = [None] * n
            else:
                seeds = [int(s) for s in self.np_random.integers(0, 2**63, size=n)]
        self._seeded = self._seeded or any(s is not None for s in seeds)
        self._vec.reset(seeds, self._frames, self._legal)
        self._started = True
        self._success[:] = False
        self._over[:] = False
        self._illegal[:] = False
        return self._obs(), self._info()

    def step(self, actions):
        if not self._started:
            raise ResetNeeded(f"vector env: {RESET_NEEDED}")
        acts = self._actions(actions)
        playing = ~self._over
        self._illegal = playing & (((self._legal >> acts.astype(np.uint32)) & 1) == 0)
        if self.illegal_action != "noop" and self._illegal.any():
            i = int(np.flatnonzero(self._illegal)[0])
            message = f"sub-env {i}: " + illegal_message(
                self.env_ids[i], int(acts[i]), int(self._legal[i]), self.illegal_action
            )
            if self.illegal_action == "raise":
                raise ValueError(message)
            import warnings

            warnings.warn(message, stacklevel=2)
        self._vec.step(
            acts,
            self._frames,
            self._rewards,
            self._terminated,
            self._truncated,
            self._success,
            self._legal,
        )
        self._over = self._terminated | self._truncated
        return (
            self._obs(),
            self._rewards.copy(),
            self._terminated.copy(),
            self._truncated.copy(),
            self._info(),
        )

    def render(self):
        if self.render_mode == "rgb_array":
            return tuple(self._frames.copy())
        return None

    def episodes(self) -> list[tuple[str, str, int, int]]:
        """Per sub-env ``(env_id, harness, scale, seed)`` of the current episode."""
        return self._vec.episodes()

    def harness_text(self, i: int) -> dict[str, str | None]:
        """The harness channels of sub-env ``i`` (0 to ``num_envs - 1``) now (built on request,
        not at every step)."""
        i = _check.integer("i", i, 0, self.num_envs - 1, "an env index")
        o, s, h, r = self._vec.harness_text(i)
        return {"observation": o, "state": s, "hints": h, "rules": r}

    def _obs(self) -> dict:
        obs = {"image": self._frames.copy() if self.copy else self._frames}
        if self.text:
            obs["instruction"] = self._instructions
            obs["text"] = tuple(join_channels(self.harness_text(i)) for i in range(self.num_envs))
        return obs

    def _info(self) -> dict:
        return {
            "success": self._success.copy(),
            "_success": self._ones.copy(),
            "action_mask": mask_array(np.where(self._over, np.uint32(ALL_ACTIONS), self._legal)),
            "_action_mask": self._ones.copy(),
            "illegal_action": self._illegal.copy(),
            "_illegal_action": self._ones.copy(),
        }

    def _actions(self, actions) -> np.ndarray:
        if isinstance(actions, (list, tuple)) and actions and all(isinstance(a, str) for a in actions):
            # Each text is read in its own env's state: a single-turn env's answers in words.
            actions = self._vec.parse_actions(list(actions))
        if isinstance(actions, str):
            raise TypeError(f"actions: expected {self.num_envs} action indices or texts (one per env), found one str")
        try:
            a = np.asarray(actions)
        except (TypeError, ValueError):
            a = np.asarray(actions, dtype=object)
        if a.dtype.kind not in "iu":
            kind = {"U": "strs mixed with other values", "f": "floats", "b": "bools", "O": "objects"}.get(a.dtype.kind, str(a.dtype))
            raise TypeError(f"actions: expected integer action indices (or action texts), found {kind}")
        if a.shape != (self.num_envs,):
            raise ValueError(f"actions: expected shape ({self.num_envs},), found {a.shape}")
        return np.ascontiguousarray(a, dtype=np.int64)


def _is_seq(v: object) -> TypeGuard[Sequence[Any]]:
    return isinstance(v, Sequence) and not isinstance(v, str)


def make(
    env_ids: str | Sequence[str],
    num_envs: int | None = None,
    harness: str | int | Sequence[str | int] = "H4",
    scale: int | None | Sequence[int | None] = None,
    canvas: int = 64,
    copy: bool = False,
    render_mode: str | None = None,
    text: bool = False,
    illegal_action: str = "noop",
) -> EnvdistVectorEnv:
    """A Gymnasium ``VectorEnv`` over envdist envs (see :class:`EnvdistVectorEnv`)."""
    return EnvdistVectorEnv(env_ids, num_envs, harness, scale, canvas, copy, render_mode, text, illegal_action)


def make_registered(num_envs: int = 1, env_id: str = "", **kwargs) -> EnvdistVectorEnv:
    """The ``vector_entry_point`` of the registered Gymnasium ids (``gymnasium.make_vec``):
    with the text channels by default (``text=False`` leaves them out), so that the id's
    observation space is the single env's in every ``vectorization_mode``."""
    _check.env_id("env_id", env_id)
    kwargs.pop("max_episode_steps", None)
    kwargs.setdefault("text", True)
    return EnvdistVectorEnv(env_id, num_envs, **kwargs)


__all__ = ["EnvdistVectorEnv", "make", "make_registered"]
