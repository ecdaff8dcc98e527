#!/usr/bin/env python3
"""Compare two study records (results.json) leaf by leaf, timings, machine and code aside.

    python3 scripts/compare_records.py OLD/results.json NEW/results.json [--stages OLD_DIR NEW_DIR]

Prints every leaf whose value differs (JSON path, old, new) and a count; exits 1 when any
number differs. `config` is left out (its shape may change between schema versions: equal
numbers everywhere else are what shows the two configurations ask for the same study).
With --stages, also compares every stage's cached output (`stage.json`'s `output`) of two
run directories, by stage path, and every training log beside one (`train_log.jsonl`, line by
line, timings aside).
"""
import json
import math
import sys
from pathlib import Path

# Wall-clock measurements and where the run happened: they differ between any two runs.
TIMING = {
    "wall_seconds", "env_steps_per_s", "eval_seconds", "stage_seconds", "total_seconds",
    "compute_seconds", "train_env_steps_per_s", "seconds", "machine", "code", "config",
    "env_steps_per_second", "rollout_steps_per_second", "learn_samples_per_second",
    "rollout_seconds", "rollout_infer_seconds", "learn_seconds", "play_seconds", "backward_seconds",
    "project_seconds",
}


def leaves(v, path=""):
    if isinstance(v, dict):
        for k in sorted(v):
            if k in TIMING:
                continue
            yield from leaves(v[k], f"{path}.{k}")
    elif isinstance(v, list):
        yield (f"{path}#len", len(v))
        for i, x in enumerate(v):
            yield from leaves(x, f"{path}[{i}]")
    else:
        yield (path, v)


def same(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def compare(old, new, label):
    a, b = dict(leaves(old)), dict(leaves(new))
    diffs = [(p, a.get(p, "<absent>"), b.get(p, "<absent>"))
             for p in sorted(set(a) | set(b)) if not same(a.get(p), b.get(p))]
    for p, x, y in diffs[:40]:
        print(f"  {label}{p}: old {x!r}, new {y!r}")
    if len(diffs) > 40:
        print(f"  ... {len(diffs) - 40} more")
    return len(a), len(diffs)


def main():
    args = sys.argv[1:]
    stages = None
    if "--stages" in args:
        i = args.index("--stages")
        stages = (Path(args[i + 1]), Path(args[i + 2]))
        args = args[:i] + args[i + 3:]
    old, new = (json.loads(Path(p).read_text()) for p in args[:2])
    n, d = compare(old, new, "results")
    print(f"results.json: {n} leaves compared, {d} differ")
    total = d
    if stages:
        o, w = stages
        names = sorted(str(p.parent.relative_to(o)) for p in o.rglob("stage.json"))
        count = logs = 0
        for name in names:
            other = w / name / "stage.json"
            if not other.exists():
                print(f"  stage {name}: missing in the new run")
                total += 1
                continue
            x = json.loads((o / name / "stage.json").read_text())["output"]
            y = json.loads(other.read_text())["output"]
            m, e = compare(x, y, f"{name}:")
            count += 1
            total += e
            log = o / name / "train_log.jsonl"
            if log.exists():
                other_log = w / name / "train_log.jsonl"
                if not other_log.exists():
                    print(f"  stage {name}: training log missing in the new run")
                    total += 1
                    continue
                x = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
                y = [json.loads(line) for line in other_log.read_text().splitlines() if line.strip()]
                m, e = compare(x, y, f"{name}/train_log:")
                logs += 1
                total += e
        print(f"stages: {count} compared, {logs} training logs")
    print("identical" if total == 0 else f"{total} differences")
    sys.exit(0 if total == 0 else 1)


if __name__ == "__main__":
    main()
