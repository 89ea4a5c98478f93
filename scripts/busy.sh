#!/usr/bin/env bash
# Runs a command with every core kept busy by unrelated busy loops (one per
# core, nice 0, as a second build on a robot's build box would), and stops them
# after, whatever the command's fate. Its exit status is the command's.
# Usage: scripts/busy.sh COMMAND [ARG...]    (BUSY_LOOPS=N to choose the count)
set -u
n=${BUSY_LOOPS:-$(nproc)}
pids=()
for _ in $(seq "$n"); do
  sh -c 'while :; do :; done' &
  pids+=($!)
done
trap 'kill "${pids[@]}" 2>/dev/null; wait "${pids[@]}" 2>/dev/null' EXIT
echo "busy.sh: $n busy loops running (pids ${pids[*]}): $*" >&2
"$@"
