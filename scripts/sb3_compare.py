#!/usr/bin/env python3
"""Stable-Baselines3's MaskablePPO on one envdist setting, the way `xtask train` trains it, for
the trainer's per-sample comparison (docs/trainer-log.md).

    python scripts/sb3_compare.py --env maze/classic --scale 3 --steps 300000 --seed 0
    # beside:  cargo xtask train --envs maze/classic --sampler h4 --scale 3 --steps 300000 \
    #              --preset cpu --seed 0 --eval-seeds 100 [--encoder conv]
    # the padded 3x3 CNN on both sides:  sb3_compare.py ... --kernels 3,3,3 --padding 1 \
    #     --channels 32,64,64;  xtask train ... --encoder conv --set model.conv_kernels=[3,3,3] \
    #     --set model.conv_padding=1 --set model.conv_channels=[32,64,64]

What is the same as the `cpu` preset: harness H4 (image only: at H4 the text channels carry only
the instruction, which is constant per env), 32x32 frames, 32 envs x 32 steps per rollout, 3
epochs of 256-sample minibatches, Adam at 5e-4 decaying linearly to 5e-5, gamma 0.97, GAE 0.95,
clip 0.2, value 0.5, entropy 0.01, gradient norm 0.5, illegal actions masked; the network is the
`conv` encoder's (by default 5x5/2 16, 3x3/2 32, 3x3/2 32, dense 256; `--kernels`, `--padding`,
`--channels` as the config's `conv_kernels`, `conv_padding`, `conv_channels`) and the shared 256-wide layer both
heads read. What differs: SB3 normalises advantages per minibatch (we do over the rollout), and
its instances come from its own seeds. The evaluation is ours: greedy (masked argmax) on the
instances `xtask train --eval-seeds N` plays, seeds 1,000,000 + i, at the training scale.

Prints one JSON line: {"env", "scale", "steps", "seed", "greedy_success", "seconds", ...}.
Needs the integration tier's packages (bindings/python/test.sh installs them: torch, sb3-contrib).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--env", required=True, help="an envdist env id, e.g. maze/classic")
    p.add_argument("--scale", type=int, required=True, help="the env's scale (train and evaluation)")
    p.add_argument("--steps", type=int, default=300_000, help="environment steps of training")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eval-seeds", type=int, default=100, help="greedy episodes, seeds 1,000,000 + i")
    p.add_argument("--threads", type=int, default=2, help="torch threads")
    p.add_argument("--kernels", default="5,3,3", help="the conv's kernel sides (model.conv_kernels)")
    p.add_argument("--padding", type=int, default=0, help="zeros around each conv's input (model.conv_padding)")
    p.add_argument("--channels", default="16,32,32", help="the conv's widths (model.conv_channels)")
    args = p.parse_args(argv)
    try:
        args.kernels = [int(v) for v in args.kernels.split(",")]
        args.channels = [int(v) for v in args.channels.split(",")]
    except ValueError:
        p.error("--kernels and --channels: expected three whole numbers, like 3,3,3")
    if len(args.kernels) != 3 or len(args.channels) != 3:
        p.error("--kernels and --channels: expected three whole numbers, like 3,3,3")
    if args.steps < 1 or args.eval_seeds < 1:
        p.error("--steps and --eval-seeds: expected at least 1")
    return args


def make_extractor(kernels, padding, channels):
    import torch
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

    class ConvEncoder(BaseFeaturesExtractor):
        """The `conv` encoder of envdist's cpu preset, then its shared 256-wide layer."""

        def __init__(self, observation_space):
            super().__init__(observation_space, features_dim=256)
            widths = [observation_space.shape[0], *channels]
            layers = []
            for i, k in enumerate(kernels):
                layers += [torch.nn.Conv2d(widths[i], widths[i + 1], k, 2, padding), torch.nn.ReLU()]
            self.net = torch.nn.Sequential(*layers, torch.nn.Flatten())
            with torch.no_grad():
                n = self.net(torch.zeros(1, *observation_space.shape)).shape[1]
            self.head = torch.nn.Sequential(
                torch.nn.Linear(n, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256), torch.nn.ReLU()
            )

        def forward(self, x):
            return self.head(self.net(x))

    return ConvEncoder


def main(argv=None):
    args = parse_args(argv)
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    from envdist import wrappers

    torch.set_num_threads(args.threads)

    def make():
        return wrappers.make(args.env, harness="H4", scale=args.scale, canvas=32, text=None)

    vec = DummyVecEnv([make for _ in range(32)])
    vec.seed(args.seed)
    lr = lambda progress: 5e-4 * (0.1 + 0.9 * progress)  # noqa: E731 (SB3's progress: 1 -> 0)
    model = MaskablePPO(
        "CnnPolicy", vec, n_steps=32, batch_size=256, n_epochs=3, learning_rate=lr, gamma=0.97,
        gae_lambda=0.95, clip_range=0.2, vf_coef=0.5, ent_coef=0.01, max_grad_norm=0.5, seed=args.seed,
        policy_kwargs=dict(features_extractor_class=make_extractor(args.kernels, args.padding, args.channels),
                           net_arch=[]), verbose=0,
    )
    t0 = time.perf_counter()
    model.learn(total_timesteps=args.steps)
    seconds = time.perf_counter() - t0
    env = make()
    wins = 0
    for i in range(args.eval_seeds):
        obs, info = env.reset(seed=1_000_000 + i)
        done = False
        while not done:
            action, _ = model.predict(obs, deterministic=True, action_masks=env.action_masks())
            obs, reward, terminated, truncated, info = env.step(int(action))
            done = terminated or truncated
        wins += bool(info.get("success", False))
    print(json.dumps({
        "env": args.env, "scale": args.scale, "steps": args.steps, "seed": args.seed,
        "greedy_success": wins / args.eval_seeds, "eval_seeds": args.eval_seeds,
        "train_seconds": round(seconds, 1), "env_steps_per_s": round(args.steps / seconds, 1),
        "params": sum(p.numel() for p in model.policy.parameters()),
        "torch": torch.__version__, "threads": args.threads,
        "kernels": args.kernels, "padding": args.padding, "channels": args.channels,
    }), flush=True)


if __name__ == "__main__":
    main()
