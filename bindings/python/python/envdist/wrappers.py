"""Wrappers for RL libraries that take numpy observations only: Stable-Baselines3, sb3-contrib's
MaskablePPO, CleanRL-style PyTorch loops (and most PyTorch RL code).

envdist's own observation is ``{"image", "instruction", "text"}`` with the last two as
strings (Gymnasium ``Text`` spaces), which those libraries cannot take. :class:`NumpyObservation`
turns the strings into fixed-size arrays, or drops them:

=========  ==================================================================================
``text``   observation
=========  ==================================================================================
``None``   the image alone: ``Box(0, 255, (canvas, canvas, 3), uint8)`` (SB3's ``CnnPolicy``,
           CleanRL's Atari-style scripts)
``"bow"``  ``Dict(image, instruction, text)``; each text a hashed bag of words:
           ``Box(0, 1, (text_dims,), float32)``, 1 where a token hashes (CRC-32 of the
           lower-cased token, modulo ``text_dims``). Tokens are runs of letters and digits and
           single symbols (grid characters), as the trainer crate reads them. SB3's
           ``MultiInputPolicy`` takes it as it is (CNN on the image, MLP on the rest).
``"ids"``  ``Dict(image, instruction, text)``; each text its first ``max_chars`` characters as
           token ids: ``Box(0, 127, (max_chars,), uint8)``, the ASCII code of each character
           (the texts are printable ASCII), 0 as padding. For a policy with its own embedding
           (``nn.Embedding(128, d)`` on ``x.long()``).
=========  ==================================================================================

``split_channels=True`` (``"bow"`` or ``"ids"``) replaces ``text`` by one entry per harness channel
(``rules``, ``observation``, ``state``, ``hints``; zeros where the level drops the channel), as the
trainer crate's policy reads them. A single bag cannot tell which action a hint names when the
rules list every action ("Move with up/down/left/right"); a bag of the hints alone can, so a
policy can learn to follow the hints at H0-H2 (what HDC's early levels offer).

Every wrapper has ``action_masks()`` (a bool array, never empty: every action once an episode is
over), which MaskablePPO reads, and passes ``info["action_mask"]`` through for loops that read it.
The canvas is chosen when the env is made: :data:`SB3_CANVAS` (64) fits SB3's default
``NatureCNN`` (it needs at least 36x36) and CleanRL's Atari CNN; the study's 32-pixel policy
canvas does not, and :func:`make` warns when asked for less than 36 with a CNN-bound image.

:class:`CurriculumEnv` plays one ticket of an envdist sampler (HDC or a rival) per episode, so
the curriculum decides which environment, harness level and scale each episode plays, and
reports each episode's success back to it. Its envs live in the process that holds the sampler:
use it with ``DummyVecEnv`` / ``gymnasium.vector.SyncVectorEnv`` (for several processes, the
Syllabus adapter carries updates over queues).
"""

from __future__ import annotations

import re
import warnings
import zlib
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, cast

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from . import _check
from .curriculum import TaskSampler, Ticket, _parse_ticket
from .env import (
    ALL_ACTIONS,
    CHANNELS,
    MAX_TEXT,
    NUM_ACTIONS,
    RESET_NEEDED,
    EnvdistEnv,
    ResetNeeded,
    _canvas,
    _seed,
    illegal_action_mode,
    mask_array,
)
from .vector import MAX_ENVS

#: A canvas that fits SB3's NatureCNN (>= 36) and CleanRL's Atari CNN.
SB3_CANVAS = 64
#: The smallest side SB3's NatureCNN takes.
MIN_CNN_SIDE = 36
TEXT_MODES = (None, "bow", "ids")
#: The most hash buckets / character ids per text the encoders make.
MAX_TEXT_DIMS = 1 << 20
_TOKEN = re.compile(r"[^\W_]+|[^\s\w,():;.]")


def bag_of_words(text: str, dims: int = 256) -> np.ndarray:
    """``text`` as a ``(dims,)`` float32 array: 1 at the hash bucket of every token it holds
    (tokens: runs of letters and digits, lower-cased, and single symbols other than
    ``, ( ) : ; .``; bucket: CRC-32 of the token's UTF-8 bytes modulo ``dims``, from 1 to
    :data:`MAX_TEXT_DIMS`)."""
    _check.string("text", text)
    dims = _check.integer("dims", dims, 1, MAX_TEXT_DIMS, "a number of buckets")
    out = np.zeros(dims, dtype=np.float32)
    for tok in _TOKEN.findall(text.lower()):
        out[zlib.crc32(tok.encode()) % dims] = 1.0
    return out


def char_ids(text: str, length: int) -> np.ndarray:
    """``text``'s first ``length`` characters as ``(length,)`` uint8 token ids: the ASCII code,
    0 as padding (a character outside ASCII, which envdist's texts never hold, becomes ``?``);
    ``length`` from 0 to :data:`MAX_TEXT_DIMS`."""
    _check.string("text", text)
    length = _check.integer("length", length, 0, MAX_TEXT_DIMS, "a number of characters")
    raw = text[:length].encode("ascii", errors="replace")
    out = np.zeros(length, dtype=np.uint8)
    out[: len(raw)] = np.frombuffer(raw, dtype=np.uint8)
    return out


class NumpyObservation(gym.ObservationWrapper):
    """An envdist env (or :class:`CurriculumEnv`) with numpy observations only (see the module
    docs for ``text`` and ``split_channels``). ``text_dims``: buckets of ``"bow"``;
    ``max_chars``: ids per text of ``"ids"`` (instruction, text: each channel when split)."""

    def __init__(
        self,
        env: gym.Env,
        text: str | None = "bow",
        text_dims: int = 256,
        max_chars: tuple[int, int] = (256, 2048),
        split_channels: bool = False,
    ):
        space = getattr(env, "observation_space", None)
        if not isinstance(env, gym.Env) or not isinstance(space, spaces.Dict) or "image" not in space.spaces:
            raise TypeError(
                f"env: expected an envdist env (envdist.make, CurriculumEnv) with a Dict observation space, "
                f"found {type(env).__name__}"
            )
        super().__init__(env)
        _check.choice("text", text, TEXT_MODES)
        text_dims = _check.integer("text_dims", text_dims, 1, MAX_TEXT_DIMS, "a number of buckets")
        if not isinstance(max_chars, (tuple, list)) or len(max_chars) != 2:
            raise TypeError(f"max_chars: expected two lengths (instruction, text), found {max_chars!r}")
        lengths = [_check.integer(f"max_chars[{i}]", m, 1, MAX_TEXT, "a length") for i, m in enumerate(max_chars)]
        self.text = text
        self.text_dims = text_dims
        self.max_chars = (lengths[0], lengths[1])
        if not isinstance(split_channels, (bool, np.bool_)):
            raise TypeError(f"split_channels: expected a bool, found {type(split_channels).__name__}")
        if split_channels and text is None:
            raise ValueError("split_channels=True needs text='bow' or text='ids' (there is no text to split)")
        self.split_channels = bool(split_channels)
        image = space["image"]
        if text is None:
            self.observation_space = image
            return
        instruction: spaces.Space
        body: spaces.Space
        if text == "bow":
            instruction = body = spaces.Box(0.0, 1.0, (self.text_dims,), np.float32)
        else:
            instruction = spaces.Box(0, 127, (self.max_chars[0],), np.uint8)
            body = spaces.Box(0, 127, (self.max_chars[1],), np.uint8)
        texts = {c: body for c in CHANNELS} if self.split_channels else {"text": body}
        self.observation_space = spaces.Dict({"image": image, "instruction": instruction, **texts})

    def _encode(self, s: str, length: int) -> np.ndarray:
        return bag_of_words(s, self.text_dims) if self.text == "bow" else char_ids(s, length)

    def observation(self, obs: dict, channels: dict[str, str | None] | None = None) -> np.ndarray | dict:
        """The env's observation (``{"image", "instruction", "text"}``) in numpy arrays;
        ``channels``: the harness channels of the step (``info["harness_text"]``) when split."""
        if not isinstance(obs, dict) or not {"image", "instruction", "text"} <= obs.keys():
            raise TypeError(
                f"obs: expected an envdist observation (a dict with image, instruction, text), found {type(obs).__name__}"
            )
        if channels is not None and not isinstance(channels, dict):
            raise TypeError(f"channels: expected a dict of harness channels (info['harness_text']) or None, found {type(channels).__name__}")
        if self.text is None:
            return obs["image"]
        out = {"image": obs["image"], "instruction": self._encode(obs["instruction"], self.max_chars[0])}
        if not self.split_channels:
            out["text"] = self._encode(obs["text"], self.max_chars[1])
            return out
        if channels is None:
            channels = self._current_env().harness_text()
        for c in CHANNELS:
            out[c] = self._encode(channels.get(c) or "", self.max_chars[1])
        return out

    def _current_env(self) -> EnvdistEnv:
        # The constructor took an envdist env (a Dict space with an image): one of the two.
        inner = cast("EnvdistEnv | CurriculumEnv", self.env.unwrapped)
        env = inner.current if isinstance(inner, CurriculumEnv) else inner
        if env is None:
            raise ResetNeeded(f"NumpyObservation: {RESET_NEEDED}")
        return env

    # The split channels come from the step's info (already computed there), not a second
    # call into the env: the hints of some families run the solver.
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        return self.observation(obs, info.get("harness_text")), info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self.observation(obs, info.get("harness_text")), reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The legal actions now, as bools (MaskablePPO's hook); never empty."""
        return cast("EnvdistEnv | CurriculumEnv", self.env.unwrapped).action_masks()


class CurriculumEnv(gym.Env):
    """One ticket of ``sampler`` per episode: ``reset()`` draws the next ticket (environment,
    harness level, scale, seed) and plays it; the episode's end reports its success to the
    sampler (``report=False`` leaves reporting to the caller, e.g. with ``info["ticket"]``).

    Observations are the envdist env's (``image``, ``instruction``, ``text``; wrap it in
    :class:`NumpyObservation` for SB3). ``info`` adds ``ticket`` (the ticket id) and
    ``trains_on`` (False only for robust PLR's new levels; SB3 cannot drop them from its loss,
    so give PLR ``config={"robust": False}`` there).

    ``reset(seed=s)`` follows Gymnasium's determinism rule: the first reset with seed ``s``
    draws a ticket and the env remembers it (the last 64 such seeds), so a later
    ``reset(seed=s)`` replays the same episode; unseeded resets, which is what vector envs do
    after the first, draw the curriculum's next ticket. ``reset(options={"ticket": t})`` plays
    ticket ``t``.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(
        self,
        sampler: TaskSampler,
        canvas: int = SB3_CANVAS,
        report: bool = True,
        render_mode: str | None = None,
        illegal_action: str = "noop",
    ):
        if not isinstance(sampler, TaskSampler):
            raise TypeError(
                f"sampler: expected an envdist sampler (envdist.HDC / envdist.Curriculum), found {type(sampler).__name__}"
            )
        self.sampler = sampler
        self.canvas = _canvas(canvas)
        self.report = _check.boolean("report", report)
        self.render_mode = _check.choice("render_mode", render_mode, (None, "rgb_array"))
        self.illegal_action = illegal_action_mode(illegal_action)
        self._envs: dict[str, EnvdistEnv] = {}
        self._seeded_tickets: OrderedDict[int, Ticket] = OrderedDict()
        self.ticket: Ticket | None = None
        self._trains = True
        self._open = False
        first = self._env(sampler.env_ids[0])
        self.observation_space = first.observation_space
        self.action_space = spaces.Discrete(NUM_ACTIONS)

    def _env(self, env_id: str) -> EnvdistEnv:
        env = self._envs.get(env_id)
        if env is None:
            env = EnvdistEnv(
                env_id, canvas=self.canvas, render_mode=self.render_mode, illegal_action=self.illegal_action
            )
            self._envs[env_id] = env
        return env

    @property
    def current(self) -> EnvdistEnv | None:
        """The env of the episode being played."""
        return None if self.ticket is None else self._envs[self.ticket.env_id]

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            seed = _seed(seed)
        options = dict(_check.optional_mapping("options", options, "a dict with the key ticket"))
        super().reset(seed=seed)
        ticket = options.pop("ticket", None)
        if options:
            raise ValueError(f"options: expected only the key 'ticket', found {sorted(options)}")
        if ticket is not None:
            t = _parse_ticket(ticket, "options['ticket']")
        elif seed is not None and seed in self._seeded_tickets:
            t = self._seeded_tickets[seed]
        else:
            t = self.sampler.sample(1)[0]
            if seed is not None:
                self._seeded_tickets[seed] = t
                while len(self._seeded_tickets) > 64:
                    self._seeded_tickets.popitem(last=False)
        self.ticket = t
        self._trains = bool(self.sampler.trains_on(t))
        self._open = True
        env = self._env(t.env_id)
        obs, info = env.reset(seed=t.seed, options={"harness": t.harness, "scale": t.scale})
        return obs, self._info(info)

    def step(self, action):
        env = self.current
        if env is None:
            raise ResetNeeded(f"CurriculumEnv: {RESET_NEEDED}")
        obs, reward, terminated, truncated, info = env.step(action)
        if (terminated or truncated) and self._open:
            self._open = False
            if self.report:
                self.sampler.update([self.ticket], [bool(info["success"])], steps=[int(info["steps"])])
        return obs, reward, terminated, truncated, self._info(info)

    def _info(self, info: dict) -> dict:
        assert self.ticket is not None, "an episode is played only after reset() drew its ticket"
        info["ticket"] = self.ticket.ticket_id
        info["trains_on"] = self._trains
        return info

    def action_masks(self) -> np.ndarray:
        env = self.current
        if env is None:
            return mask_array(ALL_ACTIONS).astype(bool)
        return env.action_masks()

    def render(self):
        env = self.current
        return None if env is None else env.render()


def make(
    env_id: str | TaskSampler,
    harness: str | int = "H4",
    scale: int | None = None,
    canvas: int = SB3_CANVAS,
    text: str | None = "bow",
    text_dims: int = 256,
    max_chars: tuple[int, int] = (256, 2048),
    illegal_action: str = "noop",
    split_channels: bool = False,
) -> NumpyObservation:
    """An envdist env (an id) or a curriculum env (an envdist sampler: one ticket per episode,
    ``harness`` and ``scale`` then come from the tickets) with numpy observations, ready for
    SB3 / MaskablePPO / CleanRL (``text``, ``split_channels``: see :class:`NumpyObservation`).
    Warns when ``canvas`` is below SB3's NatureCNN minimum."""
    canvas = _canvas(canvas)
    if canvas < MIN_CNN_SIDE:
        warnings.warn(
            f"canvas {canvas}: SB3's default CNN (NatureCNN) and CleanRL's Atari CNN need at least "
            f"{MIN_CNN_SIDE}x{MIN_CNN_SIDE}; use canvas={SB3_CANVAS} or a features extractor of your own",
            stacklevel=2,
        )
    if isinstance(env_id, TaskSampler):
        base: gym.Env = CurriculumEnv(env_id, canvas=canvas, illegal_action=illegal_action)
    else:
        base = EnvdistEnv(env_id, harness=harness, scale=scale, canvas=canvas, illegal_action=illegal_action)
    return NumpyObservation(base, text=text, text_dims=text_dims, max_chars=max_chars, split_channels=split_channels)


def make_vec(
    env_ids: str | Sequence[str] | TaskSampler,
    num_envs: int,
    **kwargs: Any,
) -> gym.vector.SyncVectorEnv:
    """``gymnasium.vector.SyncVectorEnv`` over :func:`make` envs, for CleanRL-style loops:
    sub-env ``i`` plays ``env_ids[i % len(env_ids)]``, or, given a sampler, tickets of that one
    sampler. Keywords go to :func:`make`."""
    num_envs = _check.integer("num_envs", num_envs, 1, MAX_ENVS, "a number of envs")
    fns: list[Callable[[], gym.Env]]
    if isinstance(env_ids, TaskSampler):
        fns = [partial(make, env_ids, **kwargs) for _ in range(num_envs)]
    else:
        ids = _check.env_ids("env_ids", env_ids)
        fns = [partial(make, ids[i % len(ids)], **kwargs) for i in range(num_envs)]
    return gym.vector.SyncVectorEnv(fns)


__all__ = [
    "CurriculumEnv",
    "MAX_TEXT_DIMS",
    "MIN_CNN_SIDE",
    "NumpyObservation",
    "SB3_CANVAS",
    "TEXT_MODES",
    "bag_of_words",
    "char_ids",
    "make",
    "make_vec",
]
