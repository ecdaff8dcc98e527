"""sb3-contrib's MaskablePPO on envdist environments, with an HDC curriculum choosing the
environment, harness level and scale of every episode.

    pip install ./bindings/python sb3-contrib            # stable-baselines3 and torch come with it
    python bindings/python/examples/sb3_maskable_hdc.py --steps 50000 --out runs/sb3-hdc

Each of the ``--n-envs`` sub-envs of a ``DummyVecEnv`` is an ``envdist.wrappers.CurriculumEnv``
over one shared ``envdist.HDC``: every reset draws the curriculum's next ticket, every episode's
end reports its success back, so HDC weakens the harness (H0 -> H4) and grows the scale of each
environment as the policy becomes competent on it. ``NumpyObservation`` gives SB3 what it takes:
the 64x64 image (SB3's NatureCNN needs at least 36x36) and the instruction and harness text as
hashed bags of words (MLP inputs of ``MultiInputPolicy``); MaskablePPO reads the legal-action
mask through ``action_masks()``. After training, the policy is evaluated greedily (masked) at H4,
the study's evaluation level, on fixed seeds per environment.

The test (tests/test_examples.py) runs it at a budget of a few thousand steps; the numbers it
prints there say only that the pipeline runs, not that the policy has learned.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import Counter


import envdist
from envdist import wrappers

# Two single-turn questions and two short multi-turn games.
DEFAULT_ENVS = ["count-objects/classic", "odd-one-out/classic", "tic-tac-toe/classic", "sliding-puzzle/classic"]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=50_000, help="environment steps of training (all sub-envs)")
    p.add_argument("--envs", default=",".join(DEFAULT_ENVS), help="comma-separated envdist env ids")
    p.add_argument("--n-envs", type=int, default=4, help="sub-envs of the DummyVecEnv")
    p.add_argument("--n-steps", type=int, default=128, help="PPO rollout length per sub-env")
    p.add_argument("--eval-episodes", type=int, default=8, help="greedy H4 episodes per env after training")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--min-episodes", type=int, default=8, help="HDC: episodes per stage before it may advance")
    p.add_argument("--competence", type=float, default=0.6, help="HDC: success-rate EMA that counts as competent")
    p.add_argument("--out", default=None, help="folder for summary.json and the model (optional)")
    return p.parse_args(argv)


def main(argv=None) -> dict:
    args = parse_args(argv)
    import torch
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    env_ids = [e for e in args.envs.split(",") if e]
    hdc = envdist.HDC(
        env_ids,
        config={"min_episodes": args.min_episodes, "competence_threshold": args.competence, "ema_rate": 0.2},
        seed=args.seed,
    )
    venv = DummyVecEnv([lambda: Monitor(wrappers.make(hdc, text="bow")) for _ in range(args.n_envs)])
    venv.seed(args.seed)

    class Played(BaseCallback):
        """Counts what the curriculum served: episodes per env and level, successes, illegal actions."""

        def __init__(self):
            super().__init__()
            self.levels: Counter = Counter()
            self.scales: dict[str, set] = {}
            self.episodes = self.successes = self.illegal = 0

        def _on_step(self) -> bool:
            for info, done in zip(self.locals["infos"], self.locals["dones"]):
                self.illegal += int(info["illegal_action"])
                if done:
                    t = envdist.Ticket.parse(info["ticket"])
                    self.levels[(t.env_id, t.harness)] += 1
                    self.scales.setdefault(t.env_id, set()).add(t.scale)
                    self.episodes += 1
                    self.successes += int(info["success"])
            return True

    played = Played()
    model = MaskablePPO(
        "MultiInputPolicy",
        venv,
        n_steps=args.n_steps,
        batch_size=min(256, args.n_steps * args.n_envs),
        n_epochs=4,
        learning_rate=3e-4,
        gamma=0.95,
        ent_coef=0.01,
        seed=args.seed,
        device="cpu",
        verbose=0,
    )
    t0 = time.time()
    model.learn(total_timesteps=args.steps, callback=played)
    train_s = time.time() - t0

    # Greedy, masked evaluation at H4 on fixed seeds (distinct from training's ticket seeds).
    evaluation = {}
    for env_id in env_ids:
        env = wrappers.make(env_id, harness="H4", text="bow")
        wins = 0
        for k in range(args.eval_episodes):
            obs, info = env.reset(seed=10**9 + k)
            done = False
            while not done:
                action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
                obs, reward, term, trunc, info = env.step(int(action))
                done = term or trunc
            wins += int(info["success"])
        evaluation[env_id] = wins / max(1, args.eval_episodes)

    status = {s["env"]: {"harness": s["harness"], "window": s["window"], "episodes": s["episodes"]} for s in hdc.status()}
    summary = {
        "steps": int(model.num_timesteps),
        "train_seconds": round(train_s, 1),
        "episodes": played.episodes,
        "train_success_rate": played.successes / max(1, played.episodes),
        "illegal_actions": played.illegal,
        "hdc_updates": hdc.updates,
        "hdc_status": status,
        "episodes_per_level": {f"{e} {h}": n for (e, h), n in sorted(played.levels.items())},
        "scales_played": {e: sorted(v) for e, v in sorted(played.scales.items())},
        "eval_h4_success": evaluation,
        "mask_check": bool(get_action_masks(venv).any(axis=1).all()),
    }
    print(f"MaskablePPO + HDC: {summary['steps']} steps in {train_s:.0f}s, {played.episodes} episodes, "
          f"training success {summary['train_success_rate']:.2f}, illegal actions {played.illegal}")
    print(f"{'env':28} {'HDC level':>9} {'window':>9} {'episodes':>8} {'H4 eval':>8}")
    for env_id in env_ids:
        s = status[env_id]
        print(f"{env_id:28} {s['harness']:>9} {str(s['window']):>9} {s['episodes']:>8} {evaluation[env_id]:>8.2f}")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "summary.json"), "w") as f:
            json.dump(summary, f, indent=1)
        model.save(os.path.join(args.out, "model.zip"))
    return summary


if __name__ == "__main__":
    main()
