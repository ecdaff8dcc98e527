#!/usr/bin/env python3
"""Throughput from Python, in one process:

1. envdist's vector env through its Gymnasium API (envdist.vector.make),
2. the Rust-native vectorised rate (envdist_envs::VecEnv, called through the extension, so the
   same build, threads and machine load), and
3. Gymnasium's SyncVectorEnv over MiniGrid with RGB observations (RGBImgObsWrapper, tile 8:
   64x64x3 frames for the 8x8 grids, like envdist's 64x64 canvas), and over envdist.make envs.

Workload (as `cargo xtask envs bench`): the classic variant of every pool family, mid scale,
H4, batch 64 x threads; actions uniform over the action space, drawn before timing; finished
episodes reset (NEXT_STEP autoreset in the vector envs). Steps/s = env steps / wall time,
median of --repeats runs after a warm-up; the Python and native runs alternate, so that load
from other processes falls on both alike.

Build the extension in release first:  cd bindings/python && python -m maturin develop --release
Then:                                   python bench/bench_vector.py [--rounds 300] [--json out.json]
MiniGrid (pip install minigrid) is only needed for the comparison; it is skipped without it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time

import gymnasium as gym
import numpy as np

import envdist
import envdist.vector
from envdist import _envdist


def classic_mix() -> list[str]:
    return [i for i in envdist.pool_ids() if envdist.spec(i)["variant"] == "classic"]


def median_rate(fn, repeats: int) -> tuple[float, list[float]]:
    fn()  # warm-up
    rates = [fn() for _ in range(repeats)]
    return statistics.median(rates), rates


def steps_per_second(env, acts, seed) -> float:
    """Resets `env`, steps it through each row of `acts` against the clock and closes it: env
    steps per second."""
    env.reset(seed=seed)
    t = time.perf_counter()
    for a in acts:
        env.step(a)
    dt = time.perf_counter() - t
    env.close()
    return acts.size / dt


def bench_python_vector(ids, n, rounds, seed=0) -> float:
    env = envdist.vector.make(ids, n)
    acts = np.random.default_rng(seed).integers(0, envdist.NUM_ACTIONS, size=(rounds, n), dtype=np.int64)
    return steps_per_second(env, acts, seed)


def bench_native(ids, n, rounds, seed=0) -> float:
    return _envdist.bench_native(ids, n, rounds, "H4", 64, seed)


def bench_sync(make_fns, n_actions, rounds, seed=0) -> float:
    env = gym.vector.SyncVectorEnv(make_fns, autoreset_mode=gym.vector.AutoresetMode.NEXT_STEP)
    acts = np.random.default_rng(seed).integers(0, n_actions, size=(rounds, env.num_envs))
    return steps_per_second(env, acts, seed)


def minigrid_fns(env_id, n):
    import minigrid  # noqa: F401  (registers the envs)
    from minigrid.wrappers import RGBImgObsWrapper

    return [lambda: RGBImgObsWrapper(gym.make(env_id), tile_size=8) for _ in range(n)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=300, help="batch steps per timed run")
    ap.add_argument("--sync-rounds", type=int, default=150, help="batch steps per SyncVectorEnv run")
    ap.add_argument("--sync-envs", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    threads = os.cpu_count() or 1
    n = 64 * threads
    ids = classic_mix()
    res = {
        "meta": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "gymnasium": gym.__version__,
            "threads": threads,
            "batch": n,
            "families": len(ids),
            "loadavg_start": os.getloadavg(),
        }
    }
    # Interleaved (python, native, python, native, ...) so that load from other processes
    # falls on both alike.
    bench_python_vector(ids, n, args.rounds)
    bench_native(ids, n, args.rounds)
    py_runs, native_runs = [], []
    for _ in range(args.repeats):
        py_runs.append(bench_python_vector(ids, n, args.rounds))
        native_runs.append(bench_native(ids, n, args.rounds))
    py, native = statistics.median(py_runs), statistics.median(native_runs)
    res["envdist_vector_python"] = {"steps_per_s": round(py), "runs": [round(r) for r in py_runs]}
    res["envdist_vecenv_native"] = {"steps_per_s": round(native), "runs": [round(r) for r in native_runs]}
    res["python_over_native"] = round(py / native, 3)
    print(f"envdist vector env from Python ({n} envs, {threads} threads): {py:,.0f} steps/s")
    print(f"envdist VecEnv, Rust-native (same batch):                 {native:,.0f} steps/s")
    print(f"  Python / native: {py / native:.2f}")

    m = args.sync_envs
    sync_envdist, runs = median_rate(
        lambda: bench_sync([lambda i=i: envdist.make(ids[i % len(ids)]) for i in range(m)], envdist.NUM_ACTIONS, args.sync_rounds),
        args.repeats,
    )
    res["sync_vector_envdist"] = {"num_envs": m, "steps_per_s": round(sync_envdist), "runs": [round(r) for r in runs]}
    print(f"gymnasium SyncVectorEnv over envdist.make ({m} envs):      {sync_envdist:,.0f} steps/s")
    try:
        for mg in ("MiniGrid-Empty-8x8-v0", "MiniGrid-DoorKey-8x8-v0"):
            rate, runs = median_rate(lambda mg=mg: bench_sync(minigrid_fns(mg, m), 7, args.sync_rounds), args.repeats)
            res.setdefault("sync_vector_minigrid_rgb", {})[mg] = {
                "num_envs": m, "obs": "RGBImgObsWrapper tile 8 (64x64x3)",
                "steps_per_s": round(rate), "runs": [round(r) for r in runs],
                "envdist_vector_over_this": round(py / rate, 1),
            }
            print(f"gymnasium SyncVectorEnv over {mg} RGB ({m} envs): {rate:,.0f} steps/s"
                  f"  -> envdist vector env is {py / rate:.1f}x")
    except ImportError as e:
        res["minigrid_error"] = str(e)
        print(f"MiniGrid comparison skipped: {e} (pip install minigrid)")
    res["meta"]["loadavg_end"] = os.getloadavg()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
