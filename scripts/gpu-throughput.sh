#!/usr/bin/env bash
# Training throughput on a GPU machine, as one bounded command:
#
#   scripts/gpu-throughput.sh [PATH/TO/xtask]     (default: ./xtask beside this script)
#
# The binary is built elsewhere (the GPU machine needs no Rust toolchain):
#   cargo build --release -p xtask --features cuda     # nothing CUDA is needed to build
#   mkdir -p .device && cp target/release/xtask scripts/gpu-throughput.sh .device/
# then run `.device/gpu-throughput.sh .device/xtask` there (docs/gpu.md has the details).
#
# Every run has its own time limit and the limits add up to under 8 minutes (7m30s); a run's
# stderr is kept in a log that is printed when the run fails. Prints one JSON line per
# measurement, then a markdown table with one update's time split (env stepping, batched
# inference, learning, the rest).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/xtask}
[ -x "$bin" ] || { echo "no executable xtask at $bin (pass its path)" >&2; exit 2; }
start=$(date +%s)

# burn's CUDA backend loads libcuda and libnvrtc at run time; on some machines they sit in
# folders the loader does not search by default (the driver's, CUDA's, PyTorch's own). Known
# places first; a search of at most 20 seconds only if those lack one of the two.
find_libs() { # folders...
  for d in "$@"; do
    [ -d "$d" ] || continue
    timeout 10 find "$d" -maxdepth 6 \( -name 'libnvrtc.so*' -o -name 'libcuda.so*' \) \
      -not -path '*/stubs/*' 2>/dev/null
  done | xargs -r -n1 dirname | sort -u
}
libs=$(find_libs /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/cuda/lib64 /usr/local/cuda/targets \
  /usr/local/lib/python3*/dist-packages/nvidia /usr/lib/python3/dist-packages/nvidia \
  "$HOME/.local/lib" /opt/conda/lib)
have() { echo "$libs" | while read -r d; do ls "$d"/$1* >/dev/null 2>&1 && echo yes && break; done; }
if [ -z "$(have libcuda.so)" ] || [ -z "$(have libnvrtc.so)" ]; then
  echo "== libcuda/libnvrtc not in the known folders: searching / for at most 20 s" >&2
  libs=$(printf '%s\n%s\n' "$libs" "$(timeout 20 find / -xdev \( -name 'libnvrtc.so*' -o -name 'libcuda.so*' \) \
    -not -path '/proc/*' -not -path '*/stubs/*' 2>/dev/null | xargs -r -n1 dirname | sort -u)")
fi
LD_LIBRARY_PATH="$(echo "$libs" | grep . | sort -u | tr '\n' ':')${LD_LIBRARY_PATH:-}"
export LD_LIBRARY_PATH
echo "== LD_LIBRARY_PATH=$LD_LIBRARY_PATH" >&2
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null >&2 || true

out=$(mktemp)
logs=$(mktemp -d)
run() { # seconds, label, args...
  local limit=$1 label=$2; shift 2
  local log="$logs/$(echo "$label" | tr -c 'a-zA-Z0-9' '_').log"
  echo "== $label (at most ${limit}s): $bin $*" >&2
  local line
  line=$(timeout "$limit" "$bin" "$@" --json 2>"$log" | tail -n 1)
  local rc=$?
  if [ $rc -eq 0 ] && [ -n "$line" ]; then
    echo "$line"
    printf '%s\t%s\n' "$label" "$line" >>"$out"
  else
    echo "   failed (exit $rc$([ $rc -eq 124 ] && echo ', timed out')); its stderr:" >&2
    tail -n 40 "$log" | sed 's/^/   | /' >&2
  fi
}
# 90 + 120 + 90 + 90 + 60 = 450 s = 7m30s at most.
run 90 "gpu preset, cuda" bench-train --preset gpu --device cuda --warmup 1 --updates 3
run 120 "cpu preset, cuda" bench-train --preset cpu --device cuda --warmup 1 --updates 8
run 90 "cpu preset, cuda, 2 epochs (the study's)" bench-train --preset cpu --device cuda --epochs 2 --warmup 1 --updates 8
run 90 "cpu preset, cpu (all cores)" bench-train --preset cpu --device cpu --warmup 1 --updates 4
run 60 "env stepping" envs bench --steps 400000

python3 - "$out" <<'PY'
import json, sys
rows = [l.rstrip("\n").split("\t", 1) for l in open(sys.argv[1]) if "\t" in l]
print("\n| run | env steps/s end to end | rollouts (steps/s) | learning (samples/s) | one update: env / inference / learning / other (s) | threads |")
print("|---|---|---|---|---|---|")
for label, line in rows:
    r = json.loads(line)
    if "learn_samples_per_s" in r:
        p = r.get("profile", {})
        split = " / ".join(f"{p.get(k, 0):.3f}" for k in ("env_seconds", "infer_seconds", "learn_seconds", "other_seconds"))
        print(f"| {label} ({r['params']:,} params, {r['num_envs']} envs, {r['epochs']} epochs) | {r['env_steps_per_s']:,.0f} "
              f"| {r['rollout_steps_per_s']:,.0f} | {r['learn_samples_per_s']:,.0f} | {split} | {r['threads']} |")
    else:
        sc = ", ".join(f"{s['threads']}t {s['steps_per_s']:,.0f} ({s['efficiency']:.2f})" for s in r["vectorized_scaling"])
        print(f"| {label}: Env trait 1 thread {r['single_thread_steps_per_s']:,.0f}; VecEnv {sc} | | | | | {r['threads']} |")
PY
rm -rf "$out" "$logs"
echo "== done in $(( $(date +%s) - start )) s" >&2
