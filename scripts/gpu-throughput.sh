#!/usr/bin/env bash
# Training throughput on a GPU machine, as one command:
#
#   scripts/gpu-throughput.sh [PATH/TO/xtask]     (default: ./xtask beside this script's folder)
#
# The binary is built elsewhere (the GPU machine needs no Rust toolchain):
#   cargo build --release -p xtask --features cuda     # nothing CUDA is needed to build
#   mkdir -p gpu-run && cp target/release/xtask scripts/gpu-throughput.sh gpu-run/
# then copy gpu-run/ to the GPU machine and run `gpu-run/gpu-throughput.sh gpu-run/xtask` there
# (docs/gpu.md has the details). Prints one JSON line per measurement, then a markdown table.
# Each run is bounded by `timeout`; the whole script takes a few minutes.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/xtask}
[ -x "$bin" ] || { echo "no executable xtask at $bin (pass its path)" >&2; exit 2; }

# burn's CUDA backend loads libcuda and libnvrtc at run time; on some machines they sit in
# folders the loader does not search by default (the driver's, CUDA's, PyTorch's own).
LP=$(find / \( -name 'libnvrtc.so*' -o -name 'libcuda.so*' \) -not -path '/proc/*' -not -path '*/stubs/*' 2>/dev/null \
  | xargs -r -n1 dirname | sort -u | tr '\n' ':')
export LD_LIBRARY_PATH="${LP}${LD_LIBRARY_PATH:-}"

out=$(mktemp)
run() { # label, args...
  local label=$1; shift
  echo "== $label: $bin $*" >&2
  if line=$(timeout 240 "$bin" "$@" --json 2>/dev/null | tail -n 1) && [ -n "$line" ]; then
    echo "$line"
    printf '%s\t%s\n' "$label" "$line" >>"$out"
  else
    echo "   failed or timed out" >&2
  fi
}
run "gpu preset, cuda" bench-train --preset gpu --device cuda --updates 3
run "cpu preset, cuda" bench-train --preset cpu --device cuda --updates 8
run "cpu preset, cpu (all cores)" bench-train --preset cpu --device cpu --updates 4
run "env stepping" envs bench --steps 400000

python3 - "$out" <<'PY'
import json, sys
rows = [l.rstrip("\n").split("\t", 1) for l in open(sys.argv[1]) if "\t" in l]
print("\n| run | env steps/s end to end | rollouts (steps/s) | learning (samples/s) | threads |")
print("|---|---|---|---|---|")
for label, line in rows:
    r = json.loads(line)
    if "learn_samples_per_s" in r:
        print(f"| {label} ({r['params']:,} params, {r['num_envs']} envs) | {r['env_steps_per_s']:,.0f} "
              f"| {r['rollout_steps_per_s']:,.0f} | {r['learn_samples_per_s']:,.0f} | {r['threads']} |")
    else:
        sc = ", ".join(f"{s['threads']}t {s['steps_per_s']:,.0f} ({s['efficiency']:.2f})" for s in r["vectorized_scaling"])
        print(f"| {label}: Env trait 1 thread {r['single_thread_steps_per_s']:,.0f}; VecEnv {sc} | | | | {r['threads']} |")
PY
rm -f "$out"
