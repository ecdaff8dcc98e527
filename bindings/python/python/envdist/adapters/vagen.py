"""A VAGEN-style env: one env per ticket, ``reset(seed)`` and ``step(action_str)`` with the
observation as text plus images, as VAGEN's ``GymImageEnv``, SkyRL's ``BaseTextEnv`` and verl
agent loops expect. Pure Python over ``envdist.make``; no trainer package needed."""

from __future__ import annotations

from typing import Any

import numpy as np

import envdist
from envdist.curriculum import Ticket
from envdist import _check
from envdist.env import RESET_NEEDED, ResetNeeded, join_channels

#: Where the image goes in the observation text (VAGEN's placeholder).
IMAGE_PLACEHOLDER = "<image>"


class VagenEnv:
    """Plays one envdist environment with text actions.

    ``reset(seed)`` returns ``(obs, info)`` and ``step(action_str)`` returns ``(obs, reward,
    done, info)``; ``obs`` is ``{"obs_str": prompt text with an <image> placeholder,
    "multi_modal_data": {"<image>": [HxWx3 uint8 array]}}``. ``action_str`` is read in the
    env's state (``EnvdistEnv.parse_action``): a single-turn env's answers in words (``"yes"``,
    ``"3"``, ``"above"``), the action names everywhere. Text that names no action is not
    an exception here (a policy writes garbage while it learns): the state stays, the reward
    is ``invalid_action_penalty``, ``info["action_is_valid"]`` is False and ``info["error"]``
    says why; such turns count toward the horizon. ``info`` also has ``success``,
    ``abilities``, ``harness``, ``scale`` and ``ticket_id``.
    """

    def __init__(
        self,
        env_id: str | None = None,
        harness: str | int = "H4",
        scale: int | None = None,
        *,
        ticket: Ticket | str | dict | None = None,
        canvas: int = 64,
        invalid_action_penalty: float = 0.0,
    ):
        if ticket is not None:
            t = Ticket.parse(ticket)
            env_id, harness, scale = t.env_id, t.harness, t.scale
            self._ticket_seed: int | None = t.seed
        else:
            self._ticket_seed = None
        if env_id is None:
            raise ValueError("VagenEnv: expected an env_id or a ticket")
        self.env = envdist.make(env_id, harness=harness, scale=scale, canvas=canvas)
        self.invalid_action_penalty = _check.number("invalid_action_penalty", invalid_action_penalty)
        self._turns = 0
        self._done = True

    def system_prompt(self) -> str:
        names = ", ".join(envdist.ACTION_NAMES[:6]) + ", answer_0 .. answer_15"
        return (
            "You play a visual puzzle shown as an image. Reply with one action inside "
            f"<answer></answer>, one of: {names}."
        )

    def reset(self, seed: int | None = None) -> tuple[dict, dict]:
        if seed is None:
            seed = self._ticket_seed
        obs, info = self.env.reset(seed=seed)
        self._turns = 0
        self._done = False
        return self._obs(obs), self._info(info, valid=True)

    def step(self, action_str: str) -> tuple[dict, float, bool, dict]:
        _check.string("action_str", action_str, "the policy's reply text (a str)")
        if self.env._image is None:
            raise ResetNeeded(f"VagenEnv {self.env.env_id}: {RESET_NEEDED}")
        if self._done:
            raise RuntimeError("step after the episode ended: call reset() first")
        try:
            # Read in this env's state: a single-turn env's answers in words ("yes", "3").
            action = self.env.parse_action(action_str)
        except (ValueError, TypeError) as e:
            self._turns += 1
            info = self.env._info(0, success=False, abilities=[])
            info["error"] = str(e)
            done = self._turns >= info["horizon"]
            self._done = done
            obs = self.env._observation(self.env._image)
            return self._obs(obs), self.invalid_action_penalty, done, self._info(info, valid=False)
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._turns += 1
        done = terminated or truncated or self._turns >= info["horizon"]
        self._done = done
        return self._obs(obs), float(reward), done, self._info(info, valid=True)

    def close(self) -> None:
        self.env.close()

    def _obs(self, obs: dict) -> dict:
        text = obs["instruction"]
        if obs["text"]:
            text += "\n\n" + obs["text"]
        return {
            "obs_str": f"{IMAGE_PLACEHOLDER}\n{text}",
            "multi_modal_data": {IMAGE_PLACEHOLDER: [np.asarray(obs["image"])]},
        }

    def _info(self, info: dict, valid: bool) -> dict[str, Any]:
        out = dict(info)
        out["action_is_valid"] = valid
        out["ticket_id"] = Ticket(info["env_id"], info["harness"], info["scale"], info["seed"]).ticket_id
        return out


__all__ = ["IMAGE_PLACEHOLDER", "VagenEnv", "join_channels"]
