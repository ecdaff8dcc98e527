#!/usr/bin/env bash
# Interleaved rounds of training throughput (docs/trainer-log.md): in each round, every command named
# on the line once, `xtask bench-train --preset cpu --updates 6 --json` for a binary, or the
# PyTorch anchor `scripts/bench_torch_policy.py cpu --preset cpu`, the order rotated from round to
# round so drift in the host's speed falls on every command alike. Prints one line per command:
# round, label, learning samples/s, end-to-end env steps/s, rollout steps/s (PyTorch: learning
# only).
#
#   scripts/bench_rounds.sh [--rounds N] LABEL=XTASK[@SHARDS] ... [LABEL=torch:PYTHON]
#
# XTASK: a release build of xtask (`cargo build --release -p xtask`, copied aside); @SHARDS
# passes `--set learn_shards=SHARDS`; PYTHON: an interpreter with torch. Rounds: default 3. Run
# it with nothing else busy on the machine. Example, a change against its parent and PyTorch:
#
#   scripts/bench_rounds.sh --rounds 5 before=/tmp/xtask-before@2 after=target/release/xtask@2 \
#       torch=torch:/tmp/torchvenv/bin/python
set -euo pipefail
usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
rounds=3
if [[ ${1:-} == --rounds ]]; then
  [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "bench_rounds.sh: --rounds wants a positive count, got '${2:-}'" >&2; exit 2; }
  rounds=$2
  shift 2
fi
[[ $# -ge 1 ]] || usage
labels=() specs=()
for arg in "$@"; do
  [[ $arg == *=* ]] || { echo "bench_rounds.sh: '$arg' is not LABEL=XTASK[@SHARDS] or LABEL=torch:PYTHON" >&2; exit 2; }
  label=${arg%%=*} spec=${arg#*=}
  if [[ $spec != torch:* ]]; then
    bin=${spec%@*}
    [[ -x $bin ]] || { echo "bench_rounds.sh: $label: $bin is not an executable xtask binary" >&2; exit 2; }
    if [[ $spec == *@* && ! ${spec##*@} =~ ^[1-9][0-9]*$ ]]; then
      echo "bench_rounds.sh: $label: shards after @ must be a positive count, got '${spec##*@}'" >&2; exit 2
    fi
  fi
  labels+=("$label") specs+=("$spec")
done
cd "$(dirname "$0")/.."
fields() {
  python3 -c 'import json, sys
d = json.loads(sys.stdin.read())
print(round(d["learn_samples_per_s"]), round(d["env_steps_per_s"]), round(d["rollout_steps_per_s"]))'
}
run() {
  local spec=$1
  if [[ $spec == torch:* ]]; then
    "${spec#torch:}" scripts/bench_torch_policy.py cpu --preset cpu |
      sed -n 's/.*learning \([0-9,]*\) samples.*/\1/p' | tr -d ,
  elif [[ $spec == *@* ]]; then
    "${spec%@*}" bench-train --preset cpu --updates 6 --json --set "learn_shards=${spec##*@}" | fields
  else
    "$spec" bench-train --preset cpu --updates 6 --json | fields
  fi
}
n=${#labels[@]}
for ((r = 0; r < rounds; r++)); do
  for ((i = 0; i < n; i++)); do
    k=$(((r + i) % n))
    echo "round $((r + 1)) ${labels[k]} $(run "${specs[k]}")"
  done
done
