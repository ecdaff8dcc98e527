"""One environment as a Gymnasium ``Env``."""

from __future__ import annotations

import json
import string
import warnings
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from . import _check, _envdist


class ResetNeeded(gym.error.ResetNeeded, RuntimeError):
    """``step()`` before the first ``reset()``: there is no episode to step. Both Gymnasium's
    ``ResetNeeded`` (what its ``OrderEnforcing`` wrapper raises, so code written against
    ``gymnasium.make`` catches it) and a ``RuntimeError``."""


#: The message of :class:`ResetNeeded` (the Rust side words the same refusal).
RESET_NEEDED = "step() before reset(): call reset() (or reset(seed=...)) to start an episode first"

NUM_ACTIONS: int = _envdist.NUM_ACTIONS
#: The shared action space by index: up, down, left, right, interact, wait, answer_0..15.
ACTION_NAMES: tuple[str, ...] = tuple(_envdist.action_names())
#: Harness channels in the order they are joined into ``obs["text"]``.
CHANNELS = ("rules", "observation", "state", "hints")
#: Characters the text observations use (printable ASCII).
CHARSET = frozenset(string.printable)
#: Longest text observation the spaces admit.
MAX_TEXT = 1 << 16
#: The smallest and largest canvas side in pixels (both included).
MIN_CANVAS: int = _envdist.MIN_CANVAS
MAX_CANVAS: int = _envdist.MAX_CANVAS


def parse_action(text: str) -> int:
    """The action index a text names, read the way a VLM writes it: ``"left"``,
    ``"Action: move left"``, ``"<answer>answer_3</answer>"``, ``"3"``. ``ValueError`` when
    the text names no action or several different ones. By the action names alone: an env's
    :meth:`EnvdistEnv.parse_action` (what ``step(text)`` uses) also reads a single-turn env's
    answers in words (``"yes"``, ``"three"``, ``"above"``, ``"the green one"``)."""
    _check.string("text", text, "an action text (a str such as 'left' or '<answer>answer_3</answer>')")
    try:
        return _envdist.parse_action(text)
    except ValueError as e:
        raise ValueError(f"text: {e}") from None


def action_index(action: Any) -> int:
    """An action index from an int, a numpy integer (or 0-d array) or a text."""
    if isinstance(action, str):
        return parse_action(action)
    if isinstance(action, (bool, np.bool_)):
        raise TypeError("action: expected an int index or an action name, found bool")
    if isinstance(action, (int, np.integer)):
        a = int(action)
    elif isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
        a = int(action)
    else:
        raise TypeError(
            f"action: expected an int index from 0 to {NUM_ACTIONS - 1} or an action name, "
            f"found {type(action).__name__}"
        )
    if not 0 <= a < NUM_ACTIONS:
        raise ValueError(f"action: expected an index from 0 to {NUM_ACTIONS - 1} or an action name, found {a}")
    return a


#: The bit mask with every action set: what ``info["action_mask"]`` holds once an episode is
#: over (no action is played from a final observation, and a masked sampler must not see an
#: empty mask).
ALL_ACTIONS: int = (1 << NUM_ACTIONS) - 1

#: What an illegal action (in the action space, not legal in the state) does: ``"noop"`` (the
#: default: it costs a step and changes nothing, ``info["illegal_action"]`` says so), ``"warn"``
#: (the same, plus a ``UserWarning``), ``"raise"`` (a ``ValueError``; the step is not played).
ILLEGAL_ACTION_MODES = ("noop", "warn", "raise")


def mask_array(mask: int | np.ndarray) -> np.ndarray:
    """Legal-action bit masks (ints from 0 to ``ALL_ACTIONS``, or an integer array of them) as
    int8 arrays of length ``NUM_ACTIONS`` (last axis)."""
    if isinstance(mask, np.ndarray) and mask.dtype == np.uint32:
        masks = mask  # the envs' own masks: in range by construction
    else:
        arr = np.asarray(mask) if _check.is_int(mask) or isinstance(mask, np.ndarray) else None
        if arr is None or arr.dtype.kind not in "iu":
            raise TypeError(f"mask: expected an int bit mask or an integer array of them, found {type(mask).__name__}")
        if arr.size and (int(arr.min()) < 0 or int(arr.max()) > ALL_ACTIONS):
            raise ValueError(f"mask: expected bit masks from 0 to {ALL_ACTIONS} (every action), found {mask!r}")
        masks = arr.astype(np.uint32)
    bits = np.arange(NUM_ACTIONS, dtype=np.uint32)
    return ((masks[..., None] >> bits) & 1).astype(np.int8)


def illegal_action_mode(mode: str) -> str:
    return _check.choice("illegal_action", mode, ILLEGAL_ACTION_MODES)


def illegal_message(env_id: str, action: int, legal: int, mode: str) -> str:
    names = [ACTION_NAMES[i] for i in range(NUM_ACTIONS) if legal >> i & 1]
    what = "not played (illegal_action='raise')" if mode == "raise" else "played as a no-op that costs a step"
    return f"{env_id}: action {action} ({ACTION_NAMES[action]}) is not legal in this state (legal: {', '.join(names)}); {what}"


def text_space() -> spaces.Text:
    return spaces.Text(max_length=MAX_TEXT, min_length=0, charset=CHARSET)


def join_channels(channels: dict[str, str | None]) -> str:
    """The present channels as one text: ``Rules:\\n...\\n\\nState:\\n...`` ("" at H4)."""
    _check.mapping("channels", channels, "a dict of harness channels (rules, observation, state, hints)")
    return "\n\n".join(f"{c.capitalize()}:\n{channels[c]}" for c in CHANNELS if channels.get(c) is not None)


class EnvdistEnv(gym.Env):
    """An envdist environment with Gymnasium's API.

    Observation: ``{"image": uint8 HxWx3, "instruction": the task statement, "text": the
    harness channels present at this level, joined (empty at H4)}``. Actions: an index of the
    shared space (``Discrete(22)``) or a text (``"left"``, ``"answer_3"``, and a single-turn
    env's answers in words, ``"3"``, ``"yes"``, ``"above"``: read the way a VLM writes it by
    :meth:`parse_action`; ``ValueError`` on text naming no action). ``info``: ``success``, ``abilities``
    (atomic ability tags of the step), ``harness``, ``scale``, ``seed``, ``env_id``,
    ``action_mask`` (legal actions; every action once the episode is over, so that it is never
    empty), ``illegal_action`` (whether the action just played was not legal: a no-op that cost
    a step) and ``harness_text`` (the channels one by one).

    ``illegal_action``: ``"noop"`` (default), ``"warn"`` or ``"raise"`` (see
    :data:`ILLEGAL_ACTION_MODES`). A ``step`` before the first ``reset`` raises
    :class:`ResetNeeded` (a ``RuntimeError``, and Gymnasium's ``ResetNeeded``), as Gymnasium's
    ``OrderEnforcing`` does. A ``step`` after the episode ended warns once (saying how and at
    which step it ended), as Gymnasium's own envs do, and returns the final observation again
    with reward 0.

    Single-turn envs (one question, step limit 1) end as ``terminated`` when the step limit is
    reached without an answer (a failed episode: the limit is part of the task); multi-turn envs
    report their step limit as ``truncated``.

    ``reset(seed=s)`` plays the episode with task seed ``s`` (a ticket's seed replays its
    episode); ``reset()`` plays the next seed of a stream derived from the last seed.
    ``reset(options={"harness": "H2", "scale": 5})`` changes the level or scale from that
    episode on.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(
        self,
        env_id: str,
        harness: str | int = "H4",
        scale: int | None = None,
        canvas: int = 64,
        render_mode: str | None = None,
        illegal_action: str = "noop",
    ):
        _check.env_id("env_id", env_id)
        _check.choice("render_mode", render_mode, (None, "rgb_array"))
        canvas = _canvas(canvas)
        self.illegal_action = illegal_action_mode(illegal_action)
        self._env = _envdist.Env(env_id, _level(harness), _scale(scale), canvas)
        self.spec_dict: dict = json.loads(self._env.spec_json())
        self.env_id = env_id
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = spaces.Dict(
            {
                "image": spaces.Box(0, 255, (canvas, canvas, 3), np.uint8),
                "instruction": text_space(),
                "text": text_space(),
            }
        )
        self._image: np.ndarray | None = None
        self._seeded = False
        # The legal mask of the current state; None before the first reset and after the end.
        self._legal: int | None = None
        self._warned_after_end = False
        # How the episode ended ("terminated" / "truncated") and after how many steps; None
        # while it runs and before the first reset.
        self._ended: tuple[str, int] | None = None

    # Gymnasium API -------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: Mapping | None = None):
        if seed is not None:
            seed = _seed(seed)
        options = _check.optional_mapping("options", options, "a dict with keys harness, scale")
        super().reset(seed=seed)
        if options:
            unknown = set(options) - {"harness", "scale"}
            if unknown:
                raise ValueError(f"reset options: expected keys harness, scale; found {sorted(unknown)}")
            self._env.configure(
                _level(options["harness"]) if "harness" in options else None,
                _scale(options.get("scale")),
            )
        if seed is None and not self._seeded:
            seed = int(self.np_random.integers(0, 2**63))
        if seed is not None:
            self._seeded = True
        image, legal, _ = self._env.reset(seed)
        self._image = image
        self._legal = legal
        self._warned_after_end = False
        self._ended = None
        text = self.harness_text()
        return self._observation(image, text), self._info(legal, False, [], text, False)

    def step(self, action):
        a = self.parse_action(action) if isinstance(action, str) else action_index(action)
        if self._image is None:
            raise ResetNeeded(f"{self.env_id}: {RESET_NEEDED}")
        if self._ended is not None and not self._warned_after_end:
            how, steps = self._ended
            gym.logger.warn(
                f"{self.env_id}: step() after the episode ended: it returned {how} = True at step "
                f"{steps}. Call reset() to start the next episode: until then steps are no-ops "
                "(reward 0, the final observation again)."
            )
            self._warned_after_end = True
        illegal = self._legal is not None and not (self._legal >> a & 1)
        if illegal and self.illegal_action != "noop":
            message = illegal_message(self.env_id, a, self._legal, self.illegal_action)
            if self.illegal_action == "raise":
                raise ValueError(message)
            warnings.warn(message, stacklevel=2)
        image, reward, terminated, truncated, success, abilities, legal = self._env.step(a)
        self._image = image
        over = terminated or truncated or self._ended is not None
        if over and self._ended is None:
            self._ended = ("terminated" if terminated else "truncated", self._env.episode()[3])
        self._legal = None if over else legal
        text = self.harness_text()
        info = self._info(ALL_ACTIONS if over else legal, success, abilities, text, illegal)
        return self._observation(image, text), float(reward), terminated, truncated, info

    def render(self):
        if self.render_mode == "rgb_array" and self._image is not None:
            return self._image.copy()
        return None

    # envdist extras ---------------------------------------------------------------------
    def harness_text(self) -> dict[str, str | None]:
        """The harness channels of the current state; ``None`` for a dropped channel."""
        o, s, h, r = self._env.harness_text()
        return {"observation": o, "state": s, "hints": h, "rules": r}

    def oracle_action(self) -> int | None:
        """The built-in solver's action now (``None`` once the episode is over)."""
        return self._env.oracle_action()

    def parse_action(self, text: str) -> int:
        """The action index ``text`` names in this env's current state: what ``step(text)``
        plays. A single-turn env reads its answers in the words its question uses (a count
        ``"3"`` or ``"three"``, ``"yes"``/``"no"``, ``"above"``, ``"up-right"``, a colour, a shape,
        ``"top left"``, ``"candidate 2"``; see :meth:`answers`), inside ``<answer></answer>``,
        after ``Answer:`` or alone; the slot form (``"answer_3"``) and the other action names
        read as :func:`parse_action` reads them. ``ValueError`` (naming the env's answers) when
        the text names none, several, or an answer the question does not have."""
        _check.string("text", text, "an action text (a str such as 'yes', 'left' or '<answer>3</answer>')")
        try:
            return self._env.parse_action(text)
        except ValueError as e:
            raise ValueError(f"text: {e}") from None

    def answers(self) -> dict[str, list[str]]:
        """What each answer action means in the current state, by action name: its words, the
        canonical first (``{"answer_1": ["yes", "reachable", ...], "answer_0": ["no", ...]}``);
        empty for a multi-turn env. Not part of the observation: what the parser reads, for a
        prompt or a log."""
        return {ACTION_NAMES[i]: words for i, words in self._env.answers()}

    def _observation(self, image: np.ndarray, text: dict[str, str | None] | None = None) -> dict:
        return {
            "image": image,
            "instruction": self.spec_dict["instruction"],
            "text": join_channels(self.harness_text() if text is None else text),
        }

    def action_masks(self) -> np.ndarray:
        """The legal actions now as a bool array (sb3-contrib's MaskablePPO reads this method);
        every action before the first reset and once the episode is over."""
        return mask_array(ALL_ACTIONS if self._legal is None else self._legal).astype(bool)

    def _info(
        self,
        legal: int,
        success: bool,
        abilities: list[str],
        text: dict[str, str | None] | None = None,
        illegal: bool = False,
    ) -> dict:
        harness, scale, seed, steps, horizon = self._env.episode()
        return {
            "success": bool(success),
            "abilities": list(abilities),
            "harness": harness,
            "scale": scale,
            "seed": seed,
            "env_id": self.env_id,
            "steps": steps,
            "horizon": horizon,
            "action_mask": mask_array(legal),
            "illegal_action": bool(illegal),
            "harness_text": self.harness_text() if text is None else text,
        }


#: The harness levels, strongest first.
HARNESS_LEVELS = ("H0", "H1", "H2", "H3", "H4")


def _level(harness: str | int, name: str = "harness") -> str:
    """A harness level as the extension reads it: ``"H0"``..``"H4"``, ``"h2"``, ``"2"`` or 0..4."""
    expected = "a harness level 'H0' to 'H4' (or 0 to 4)"
    if _check.is_int(harness):
        return f"H{_check.integer(name, harness, 0, 4, 'a harness level')}"
    if not isinstance(harness, str):
        raise TypeError(f"{name}: expected {expected}, found {type(harness).__name__}")
    t = harness.strip()
    digits = t[1:] if t[:1] in ("H", "h") else t
    if not (digits.isdigit() and int(digits) <= 4):
        raise ValueError(f"{name}: expected {expected}, found {harness!r}")
    return f"H{int(digits)}"


def _scale(scale: Any, name: str = "scale") -> int | None:
    # The env's own range is checked by the extension (it names the range); here the type, and
    # what fits the extension's unsigned 32-bit scales.
    return _check.optional_integer(name, scale, 0, _check.U32_MAX, "an integer scale")


def _seed(seed: Any, name: str = "seed") -> int:
    return _check.seed(name, seed)


def _canvas(canvas: Any) -> int:
    return _check.integer("canvas", canvas, MIN_CANVAS, MAX_CANVAS, "a canvas side in pixels")


def make(
    env_id: str,
    harness: str | int = "H4",
    scale: int | None = None,
    canvas: int = 64,
    render_mode: str | None = None,
    illegal_action: str = "noop",
) -> EnvdistEnv:
    """An envdist environment as a Gymnasium ``Env`` (see :class:`EnvdistEnv`). ``scale=None``
    plays the middle of the env's scale range. Unknown ids are a ``KeyError`` that suggests the
    nearest ids; ``gymnasium.make(envdist.gym_id(env_id))`` gives the same env with Gymnasium's
    wrappers."""
    return EnvdistEnv(
        env_id, harness=harness, scale=scale, canvas=canvas, render_mode=render_mode, illegal_action=illegal_action
    )


__all__ = [
    "ACTION_NAMES",
    "ALL_ACTIONS",
    "CHANNELS",
    "ILLEGAL_ACTION_MODES",
    "NUM_ACTIONS",
    "EnvdistEnv",
    "HARNESS_LEVELS",
    "MAX_CANVAS",
    "MIN_CANVAS",
    "ResetNeeded",
    "join_channels",
    "make",
    "mask_array",
    "parse_action",
]
