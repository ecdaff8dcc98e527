#!/usr/bin/env python3
"""How far can any ability overlap rank measured transfer in this pool? (issue #30, item 3)

Reads a record's transfer matrix (`precondition_runs.matrix` of results.json: each probe's
success on every pool and held-out env after fine-tuning on its source alone) and prints, over
the (probe, other pool env) pairs that `preconditions.transfer_vs_profile` uses:
- Spearman of profile overlap with transfer (the precondition's own estimate, pooled pairs);
- Spearman of "same family" (1/0) with transfer: what an overlap that knew each env's family
  and nothing else would reach. A family's themes share every ability, so unless transfer
  also crosses families along shared abilities, this is the pool's ceiling;
- a probe's mean transfer to its own family and to the others, and the spread of the latter;
- the sibling agreement of cross-family transfer: for each probe and each other family, the
  transfer to two of that family's envs, correlated over (probe, family). Transfer that
  followed anything about a family (its abilities included) would agree between siblings; a
  correlation near 0 says cross-family transfer is mostly noise at this evaluation size;
- cross-family transfer by profile overlap (bins of 0.2): does it rise with overlap at all;
- the signal the target needs: Spearman of overlap with transfer + b * overlap (b points per
  unit of overlap added to every measured pair, the noise kept as measured), for b = 0..8, so
  how much more a pair's transfer would have to follow its overlap for the precondition's 0.3;
- where the ranking is lost (the record only): per probe family, the probe's gain on its own
  source, its mean transfer to its siblings, their spread and the share of siblings it did not
  help, beside the family's base success (a family at the floor or the ceiling cannot show
  transfer); and two bounds: the Spearman were every cross-family transfer exactly 0 (the
  siblings as measured), and were every sibling transfer its family's mean (cross-family 0).
  The first bounds what removing cross-family interference alone could give; the gap between
  the two is what inconsistent transfer within a family costs;
- (with the record's profiles beside its results.json: profiles/profiles.json in a run
  directory, profiles.json in a committed record) transfer split by what the pair's ability
  profiles share (its family; across families a task ability, only an observation variant's
  ability such as noise-robust, or nothing) and by whether source and target draw with the
  same palette, over all pool targets and over those the base solves 5-95% of the time (a
  target at the floor cannot lose); standard errors clustered by probe. Were abilities what
  transfers, the cross-family pairs sharing a task ability and a look would gain.

With pilot run directories (the same pool, any evaluation size, network or base), the same
figures on the probes a pilot shares with the record, read from the pilot's stage outputs
(`preconditions/matrix/base` and `preconditions/matrix/probe*`), beside the record's on the
same probes (the split by what pairs share included); the profile overlaps are the record's (the pool and its profiles are the same).

Usage: python3 scripts/transfer_ceiling.py RECORD/results.json [PILOT_DIR ...]
Standard library only.
"""

import glob
import json
import math
import os
import sys


def ranks(xs):
    """Average ranks (ties share the mean of their positions)."""
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2.0
        i = j + 1
    return r


def pearson(a, b):
    n = len(a)
    ma, mb = sum(a) / n, sum(b) / n
    sab = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    saa = sum((x - ma) ** 2 for x in a)
    sbb = sum((y - mb) ** 2 for y in b)
    return sab / math.sqrt(saa * sbb) if saa > 0 and sbb > 0 else float("nan")


def spearman(a, b):
    return pearson(ranks(a), ranks(b))


FAMILY = {}


def family(env):
    """The record's family of `env` (`envs.family`), else its id's first part."""
    return FAMILY.get(env, env.split("/")[0])


def figures(label, probes, targets, base, overlap_of, pool):
    """probes: [(source, after)]; overlap_of(source) -> list aligned with targets."""
    ov, same, tr = [], [], []
    sib = []
    for source, after in probes:
        overlap = overlap_of(source)
        by_family = {}
        for j, t in enumerate(targets):
            if t == source or t not in pool or overlap[j] is None:
                continue
            # Rounded as the record's analysis rounds, so equal transfers tie.
            d = round(100.0 * (after[j] - base[j]), 6)
            ov.append(overlap[j])
            same.append(1.0 if family(t) == family(source) else 0.0)
            tr.append(d)
            if family(t) != family(source):
                by_family.setdefault(family(t), []).append(d)
        sib.extend((v[0], v[1]) for v in by_family.values() if len(v) >= 2)
    other = [d for d, s in zip(tr, same) if s == 0.0]
    own = [d for d, s in zip(tr, same) if s == 1.0]
    mean_other = sum(other) / len(other)
    sd_other = math.sqrt(sum((d - mean_other) ** 2 for d in other) / len(other))
    print(
        f"{label}: {len(probes)} probes, {len(tr)} pairs; Spearman with transfer: profile overlap "
        f"{spearman(ov, tr):+.3f}, same family {spearman(same, tr):+.3f}; transfer to own family "
        f"{sum(own) / max(len(own), 1):+.2f}, to other families {mean_other:+.2f} (sd {sd_other:.2f}) "
        f"points; sibling agreement of cross-family transfer {pearson([a for a, _ in sib], [b for _, b in sib]):+.3f} "
        f"over {len(sib)} (probe, family) pairs"
    )
    return tr, ov, same


def overlap_bins(ov, same, tr):
    """Mean cross-family transfer per overlap bin, and the Spearman a signal of b points per
    unit of overlap added to the measured transfers would give."""
    bins = []
    for lo in (0.0, 0.2, 0.4, 0.6, 0.8):
        hi = lo + 0.2 if lo < 0.8 else 1.0 + 1e-9
        cross = [d for d, o, s in zip(tr, ov, same) if s == 0.0 and lo <= o < hi]
        if cross:
            bins.append(f"[{lo:.1f},{min(hi, 1.0):.1f}) {sum(cross) / len(cross):+.2f} (n={len(cross)})")
    print("  cross-family transfer by profile overlap: " + "; ".join(bins))
    needed = [f"b={b}: {spearman(ov, [d + b * o for d, o in zip(tr, ov)]):+.3f}" for b in (0, 1, 2, 3, 4, 6, 8)]
    print("  Spearman if transfer followed overlap by b more points per unit: " + ", ".join(needed))


def where_lost(probes, targets, base, overlap_of, pool):
    """Per probe family: own gain, sibling transfer, and the two bounds of the docstring."""
    pairs = []  # (probe family, overlap, transfer, same family)
    own = {}
    for source, after in probes:
        f = family(source)
        j = targets.index(source)
        own.setdefault(f, []).append(100.0 * (after[j] - base[j]))
        overlap = overlap_of(source)
        for j, t in enumerate(targets):
            if t == source or t not in pool or overlap[j] is None:
                continue
            pairs.append((f, overlap[j], round(100.0 * (after[j] - base[j]), 6), family(t) == f))
    base_of = {}
    for j, t in enumerate(targets):
        if t in pool:
            base_of.setdefault(family(t), []).append(100.0 * base[j])
    mean = lambda v: sum(v) / len(v) if v else float("nan")
    print("  where the ranking is lost, per probe family (points): own gain; siblings mean, sd, share <= 0; family base")
    sib_mean = {}
    for f in sorted(own):
        sib = [d for g, _, d, s in pairs if g == f and s]
        m = mean(sib)
        sib_mean[f] = m
        sd = math.sqrt(mean([(d - m) ** 2 for d in sib])) if sib else float("nan")
        le0 = mean([1.0 if d <= 0 else 0.0 for d in sib])
        print(
            f"    {f:18s} {len(own[f])} probes: own {mean(own[f]):+5.1f}; siblings {m:+5.1f} sd {sd:4.1f}, "
            f"{le0:.0%} <= 0; base {mean(base_of.get(f, [])):5.1f}"
        )
    ov = [o for _, o, _, _ in pairs]
    measured_siblings = [d if s else 0.0 for _, _, d, s in pairs]
    consistent_siblings = [sib_mean[f] if s else 0.0 for f, _, _, s in pairs]
    share = mean([1.0 if d <= 0 else 0.0 for _, _, d, s in pairs if s])
    print(
        f"  bounds: every cross-family transfer 0, siblings as measured: Spearman {spearman(ov, measured_siblings):+.3f}; "
        f"every sibling at its family's mean, cross-family 0: {spearman(ov, consistent_siblings):+.3f} "
        f"({share:.0%} of sibling pairs measured <= 0)"
    )


# The catalogue's observation-variant abilities (crates/envs/src/abilities.rs): a variant's
# frame change (noise, occlusion, an egocentric crop), shared across families by construction.
OBSERVATION = {"noise-robust", "occlusion-robust", "egocentric-view"}


def look(env):
    """The palette a variant draws with: its theme, else the classic one (plain, noise and
    occlusion variants and the rule twins all draw with the classic palette)."""
    variant = env.split("/", 1)[1] if "/" in env else env
    return variant if variant.startswith("theme-") else "classic"


def by_what_is_shared(label, probes, targets, base, pool, profiles):
    """Cross-family transfer split by what the pair's profiles share (a task ability, only an
    observation variant's ability, nothing) and by whether the two draw with the same palette:
    the pool's most favourable pairs for ability transfer are those sharing a task ability and a
    look."""
    observational = {m["name"] for m in profiles["meta_abilities"] if set(m["members"]) <= OBSERVATION}
    covered = {p["env"]: set(p["coverage"]) for p in profiles["profiles"]}
    groups = {}
    for source, after in probes:
        for j, t in enumerate(targets):
            if t == source or t not in pool:
                continue
            shared = covered.get(source, set()) & covered.get(t, set())
            if family(t) == family(source):
                what = "its family (for scale)"
            elif shared - observational:
                what = "a task ability"
            else:
                what = "only an observation variant's" if shared else "nothing"
            key = (what, "same look" if look(source) == look(t) else "other look")
            groups.setdefault(key, []).append((source, 100.0 * (after[j] - base[j])))
    print(f"  transfer by what the pair shares (profiles) and its look, {label}, points: mean (se clustered by probe, pairs)")
    for what in ("a task ability", "only an observation variant's", "nothing", "its family (for scale)"):
        cells = []
        for lk in ("same look", "other look"):
            v = groups.get((what, lk), [])
            if v:
                m = sum(d for _, d in v) / len(v)
                # A probe's pairs share its fine-tune: their deviations are summed per probe.
                dev = {}
                for source, d in v:
                    dev[source] = dev.get(source, 0.0) + d - m
                se = math.sqrt(sum(x * x for x in dev.values())) / len(v)
                cells.append(f"{lk} {m:+.2f} ({se:.2f}, {len(v)})")
        print(f"    sharing {what:30s} " + "; ".join(cells))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        r = json.load(f)
    runs = r.get("precondition_runs")
    if not runs or not runs.get("matrix"):
        sys.exit(f"{sys.argv[1]}: no precondition_runs.matrix (a record of the v6 protocol or later)")
    FAMILY.update(r["envs"].get("family", {}))
    targets, base = runs["targets"], runs["base"]
    ood = set(r["envs"]["ood"])
    pool = {t for t in targets if t not in ood}
    matrix = {m["source"]: m for m in runs["matrix"]}
    overlap_of = lambda s: matrix[s]["profile_overlap"]
    tr, ov, same = figures("record", [(m["source"], m["after"]) for m in runs["matrix"]], targets, base, overlap_of, pool)
    overlap_bins(ov, same, tr)
    where_lost([(m["source"], m["after"]) for m in runs["matrix"]], targets, base, overlap_of, pool)
    # A run directory has profiles/profiles.json; a committed record keeps it as profiles.json.
    record_dir = os.path.dirname(sys.argv[1])
    candidates = [os.path.join(record_dir, "profiles", "profiles.json"), os.path.join(record_dir, "profiles.json")]
    profiles_path = next((p for p in candidates if os.path.exists(p)), candidates[0])
    profiles = None
    if os.path.exists(profiles_path):
        with open(profiles_path) as f:
            profiles = json.load(f)
    else:
        print(f"  (no {profiles_path}: the split by shared abilities needs the record's profiles)")

    def shared_split(probes, base):
        if profiles is None:
            return
        by_what_is_shared("all pool targets", probes, targets, base, pool, profiles)
        # A target the base never solves cannot lose: the same without floor and ceiling targets.
        mid = {t for j, t in enumerate(targets) if t in pool and 0.05 <= base[j] <= 0.95}
        by_what_is_shared(f"the {len(mid)} targets the base solves 5-95% of the time", probes, targets, base, mid, profiles)

    shared_split([(m["source"], m["after"]) for m in runs["matrix"]], base)
    for run in sys.argv[2:]:
        stage = lambda p: json.load(open(p))
        base_p = os.path.join(run, "preconditions/matrix/base/stage.json")
        if not os.path.exists(base_p):
            sys.exit(f"{run}: no preconditions/matrix/base/stage.json (not a run of the v6 protocol?)")
        pilot_base = stage(base_p)["output"]
        if len(pilot_base) != len(targets):
            sys.exit(f"{run}: {len(pilot_base)} targets, the record has {len(targets)}: not the same pool")
        # A pilot made in a hard-linked copy of a record keeps the record's probes it has not
        # yet recomputed: only probes made with the pilot's own transfer settings, from the
        # pilot's own base, with the code that made the pilot's base evaluation, count.
        own = stage(os.path.join(run, "config.json"))["transfer"]
        base_key = stage(base_p)["key"]
        probes = []
        for p in sorted(glob.glob(os.path.join(run, "preconditions/matrix/probe*/stage.json"))):
            s = stage(p)
            source = s["key"]["source"]
            if s["key"]["steps"] != own["steps"] or s["key"]["eval"]["episodes"] != own["eval_episodes"]:
                continue
            if any(s["key"].get(k) != base_key.get(k) for k in ("after:base", "code")):
                continue
            if source in matrix:
                probes.append((source, s["output"]["after"]))
        if not probes:
            sys.exit(f"{run}: no finished matrix probe shares its source with the record")
        sources = [s for s, _ in probes]
        a, _, _ = figures(f"  record on {run}'s sources", [(s, matrix[s]["after"]) for s in sources], targets, base, overlap_of, pool)
        b, ov, same = figures(f"  {run}", probes, targets, pilot_base, overlap_of, pool)
        overlap_bins(ov, same, b)
        print(f"  correlation of the two runs' transfers over these pairs: {pearson(a, b):+.3f}")
        print(f"  the record on {run}'s sources:")
        shared_split([(s, matrix[s]["after"]) for s in sources], base)
        print(f"  {run}:")
        shared_split(probes, pilot_base)


if __name__ == "__main__":
    main()
