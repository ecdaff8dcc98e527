#!/usr/bin/env python3
"""Difference of two trainers' mean per-seed scores, with a bootstrap interval (docs/trainer-log.md).

    python3 scripts/seed_bootstrap.py --a 0.41,0.42,0.40,0.45 --b 0.50,0.47,0.44,0.46 [--level 0.95]

Each of --a and --b lists one score per training seed (greedy success of one run). The seeds of
the two lists are not paired (the trainers draw their instances from their own streams), so
each replicate resamples the seeds of each list on its own, with replacement, and takes the
difference of the two means (a - b). Prints the difference, the percentile interval at --level,
the bootstrap standard error, and the smallest difference the run could detect: (z of the
level's two-sided test + z of 80% power) standard errors. With few seeds a resample sees few
distinct means, so the interval understates the spread; the script says how many seeds it had.
Standard library only; --draws and --seed make it reproducible.
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
from statistics import NormalDist


def scores(text: str, name: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        sys.exit(f"seed_bootstrap.py: {name}: expected comma-separated numbers like 0.41,0.42, got {text!r}")
    if len(values) < 2:
        sys.exit(f"seed_bootstrap.py: {name}: expected at least two seeds' scores, got {len(values)}")
    return values


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--a", required=True, help="scores of the first trainer, one per seed")
    p.add_argument("--b", required=True, help="scores of the second trainer, one per seed")
    p.add_argument("--level", type=float, default=0.95, help="the interval's coverage (default 0.95)")
    p.add_argument("--draws", type=int, default=10_000, help="bootstrap replicates (default 10,000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the resampling")
    args = p.parse_args(argv)
    if not 0.5 < args.level < 1.0:
        p.error(f"--level: expected a coverage between 0.5 and 1, like 0.95, got {args.level}")
    if args.draws < 100:
        p.error(f"--draws: expected at least 100, got {args.draws}")
    a, b = scores(args.a, "--a"), scores(args.b, "--b")
    rng = random.Random(args.seed)
    diffs = sorted(
        statistics.fmean(rng.choices(a, k=len(a))) - statistics.fmean(rng.choices(b, k=len(b)))
        for _ in range(args.draws)
    )
    tail = (1.0 - args.level) / 2.0
    lo = diffs[int(tail * (args.draws - 1))]
    hi = diffs[int((1.0 - tail) * (args.draws - 1))]
    se = statistics.stdev(diffs)
    detectable = (NormalDist().inv_cdf(1.0 - tail) + NormalDist().inv_cdf(0.8)) * se
    diff = statistics.fmean(a) - statistics.fmean(b)
    verdict = "within noise" if lo <= 0.0 <= hi else ("a ahead" if lo > 0 else "b ahead")
    print(
        f"a - b = {diff:+.3f} [{lo:+.3f}, {hi:+.3f}] ({args.level:.1%} bootstrap, {args.draws} draws, "
        f"seeds {len(a)} and {len(b)} resampled within each); se {se:.3f}; "
        f"smallest detectable difference {detectable:.3f}; {verdict}"
    )


if __name__ == "__main__":
    main()
