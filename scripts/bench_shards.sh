#!/usr/bin/env bash
# Interleaved rounds of learning throughput (docs/trainer-log.md, "Minibatch shards"): in each
# round, `xtask bench-train --preset cpu --updates 6 --json` with a binary from before a change
# (`head`), with the binary under test at one shard (`one`) and at two (`two`), and the PyTorch
# anchor on the same network (`torch`), the order rotated from round to round so drift in the
# host's speed falls on every command alike. Prints one line per command: round, label, learning
# samples/s, end-to-end env steps/s, rollout steps/s (the PyTorch line: learning only).
#
#   scripts/bench_shards.sh HEAD_XTASK NEW_XTASK [PYTHON] [ROUNDS]
#
# HEAD_XTASK, NEW_XTASK: release builds of xtask (`cargo build --release -p xtask`, copied
# aside); PYTHON: an interpreter with torch (default python3); ROUNDS: default 3. Run it with
# nothing else busy on the machine.
set -euo pipefail
if [[ $# -lt 2 ]]; then
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
head_bin=$1 new_bin=$2 python=${3:-python3} rounds=${4:-3}
for bin in "$head_bin" "$new_bin"; do
  [[ -x $bin ]] || { echo "bench_shards.sh: $bin is not an executable xtask binary" >&2; exit 2; }
done
cd "$(dirname "$0")/.."
fields() {
  "$python" -c 'import json, sys
d = json.loads(sys.stdin.read())
print(round(d["learn_samples_per_s"]), round(d["env_steps_per_s"]), round(d["rollout_steps_per_s"]))'
}
run() {
  case $1 in
    head) "$head_bin" bench-train --preset cpu --updates 6 --json | fields ;;
    one) "$new_bin" bench-train --preset cpu --updates 6 --json | fields ;;
    two) "$new_bin" bench-train --preset cpu --updates 6 --json --set learn_shards=2 | fields ;;
    torch) "$python" scripts/bench_torch_policy.py cpu --preset cpu |
      sed -n 's/.*learning \([0-9,]*\) samples.*/\1/p' | tr -d , ;;
  esac
}
labels=(head one two torch)
for ((r = 0; r < rounds; r++)); do
  for ((i = 0; i < 4; i++)); do
    label=${labels[(r + i) % 4]}
    echo "round $((r + 1)) $label $(run "$label")"
  done
done
