#!/usr/bin/env python3
"""How much of a comparison's noise is the evaluation's own? (issue #30: decided claims)

For each primary claim of a record that compares two arms (`a − b`), over the pool envs and
the training seeds both arms share: the residual variance of the per-(seed, env) difference
once seed and env effects are removed (what the crossed bootstrap's residual term sees), and
the variance the evaluation alone would add to that difference were every instance an
independent coin with the arm's measured success rate (binomial, per scale, averaged over the
scales: `eval.episodes` instances each). That share is an upper bound: both arms play the
same instances, so their outcomes correlate, and where the arms are alike (aes+hdc − aes, the
same envs) it exceeds the residual itself. Where they train on different envs it says roughly
how far more evaluation instances could shrink the claim's interval; the rest is training
noise and seed-by-env interaction, which only more seeds reduce.

Usage: python3 scripts/eval_noise.py RECORD/results.json
Standard library only.
"""

import json
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        r = json.load(f)
    pool = r["envs"]["pool"]
    n = r["config"]["eval"]["episodes"]
    runs = {(x["arm"], x["seed"]): x["per_env"] for x in r["runs"]}
    print(f"{sys.argv[1]}: {n} evaluation instances per env and scale, {len(pool)} pool envs")
    for c in r["analysis"]["claims"]:
        if not c["primary"] or c["comparison"].count(" − ") != 1:
            continue
        a, b = c["comparison"].split(" − ")
        seeds = sorted(s for (arm, s) in runs if arm == a and (b, s) in runs)
        if len(seeds) < 2:
            continue
        d, ev = [], []
        for s in seeds:
            row = []
            for e in pool:
                pa, pb = runs[(a, s)][e], runs[(b, s)][e]
                row.append(100.0 * (sum(pa) / len(pa) - sum(pb) / len(pb)))
                # Variance of a mean over the scales of binomial means, both arms.
                k = len(pa)
                ev.append(1e4 * sum(p * (1 - p) / n for p in pa + pb) / (k * k))
            d.append(row)
        S, E = len(d), len(pool)
        grand = sum(map(sum, d)) / (S * E)
        seed_mean = [sum(row) / E for row in d]
        env_mean = [sum(d[s][e] for s in range(S)) / S for e in range(E)]
        resid = sum(
            (d[s][e] - seed_mean[s] - env_mean[e] + grand) ** 2 for s in range(S) for e in range(E)
        ) / ((S - 1) * (E - 1))
        binom = sum(ev) / len(ev)
        print(
            f"  {c['comparison']:28s} residual variance {resid:6.1f} points²; the evaluation's "
            f"binomial share {binom:5.1f} ({binom / resid:.0%})"
        )


if __name__ == "__main__":
    main()
