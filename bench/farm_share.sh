#!/bin/bash
# The probe's share of the stress farm's CPU, by sampling (issue 28): the
# stress graph (jazzy stand-in, 8 s) under `perf record -e cpu-clock`, once
# per probe library given, alternated, REPS times; the share of all samples
# that fell in libros2_pulse.so is less noisy than the farm's total CPU.
#
#   bench/farm_share.sh REPS name=LIB.so:JITTER[:VAR=VAL,...] [name=... ...]
#
# JITTER is ROS_TOPIC_STATS_JITTER for that arm (1: gap tracking on); any
# further VAR=VAL (comma-separated) are set for that arm only, e.g.
# ROS_PULSE_TIMING=0.
# Output: "name rep cpu_s share%" per run. Needs perf (linux-perf).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
reps=$1
shift
# segments in /dev/shm, as the probe's default directory and `pulse bench overhead` keep them
work=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)
trap 'rm -rf "$work"' EXIT
for ((r = 0; r < reps; r++)); do
    specs=("$@")
    ((r % 2)) && mapfile -t specs < <(printf '%s\n' "$@" | tac)
    for spec in "${specs[@]}"; do
        name=${spec%%=*} rest=${spec#*=}
        lib=${rest%%:*} rest=${rest#*:}
        jitter=${rest%%:*} extra=()
        [[ $rest == *:* ]] && IFS=, read -ra extra <<<"${rest#*:}"
        rm -rf "$work/seg" && mkdir "$work/seg"
        cpu=$(env "${extra[@]}" LD_LIBRARY_PATH=$root/build/lib/sim/jazzy ROS_PULSE_DIR=$work/seg ROS_TOPIC_STATS_QUIET=1 \
            LD_PRELOAD=$lib ROS_TOPIC_STATS_JITTER=$jitter \
            perf record -q -F 4000 -e cpu-clock -o "$work/p.data" -- "$root/build/bin/simgraph" --graph stress \
            --duration 8 --rusage 2>&1 | awk -F= '/cpu_s/ {print $2}')
        share=$(perf report -i "$work/p.data" --no-children --sort dso -q -g none 2>/dev/null | awk '/libros2_pulse/ {print $1}')
        echo "$name $r $cpu $share"
    done
done
