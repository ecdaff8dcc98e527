#!/usr/bin/env python3
"""An independent check of a study record's gain split (trained envs): recompute each arm's
gain over the base on the envs it trained on from the record's raw per-env scores, with a
shared-draw bootstrap written here from scratch (Python's own RNG), and print it beside the
record's `analysis.arms[*].transfer.trained`.

    python3 scripts/check_gain_split.py docs/experiments/cpu/results.json [--replicates 4000]

A replicate draws seeds with replacement and one environment draw applied to every drawn seed:
from the set itself where all seeds trained on the same set, else from the union of their sets,
each seed averaging the drawn environments of its own set. Differences of a few tenths of a
point are Monte Carlo error (two independent bootstraps)."""

import json
import random
import sys


def success(run, env):
    v = run["per_env"][env]
    return sum(v) / len(v)


def main():
    path = sys.argv[1]
    reps = int(sys.argv[sys.argv.index("--replicates") + 1]) if "--replicates" in sys.argv else 4000
    r = json.load(open(path))
    base = next(x for x in r["runs"] if x["arm"] == "base")
    rng = random.Random(12345)
    worst = 0.0
    for s in r["analysis"]["arms"]:
        split = s.get("transfer") or {}
        rec = split.get("trained")
        if not rec:
            continue
        runs = sorted((x for x in r["runs"] if x["arm"] == s["arm"]), key=lambda x: x["seed"])
        sets = [sorted(x["train_envs"]) for x in runs]
        shared = all(t == sets[0] for t in sets)
        universe = sets[0] if shared else sorted({e for t in sets for e in t})
        gain = [{e: success(x, e) - success(base, e) for e in t} for x, t in zip(runs, sets)]
        estimate = sum(sum(g.values()) / len(g) for g in gain) / len(gain)
        values = []
        for _ in range(reps):
            seeds = [rng.randrange(len(runs)) for _ in runs]
            envs = [universe[rng.randrange(len(universe))] for _ in universe]
            total = 0.0
            ok = True
            for si in seeds:
                drawn = [gain[si][e] for e in envs if e in gain[si]]
                if not drawn:
                    ok = False
                    break
                total += sum(drawn) / len(drawn)
            if ok:
                values.append(total / len(seeds))
        values.sort()
        q = lambda p: values[round((len(values) - 1) * p)]
        lo, hi = 100 * q(0.025), 100 * q(0.975)
        d = max(abs(lo - rec["lo"]), abs(hi - rec["hi"]))
        worst = max(worst, d)
        print(
            f"{s['arm']:<22} {'shared' if shared else 'union '} here {100 * estimate:+6.2f} "
            f"[{lo:+6.2f}, {hi:+6.2f}]   record {rec['estimate']:+6.2f} [{rec['lo']:+6.2f}, "
            f"{rec['hi']:+6.2f}]   bounds differ by {d:.2f}"
        )
    print(f"largest bound difference: {worst:.2f} points")


if __name__ == "__main__":
    main()
