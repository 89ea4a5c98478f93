#!/bin/bash
# Gap tracking off and on, side by side (issue 28): the hotpath harness's
# `probe` leg (the interposed ros_trace_rcl_publish) in alternated
# processes, ROS_TOPIC_STATS_JITTER=0 then 1 or 1 then 0 by turns, for each
# probe library given, PAIRS times.
#
#   bench/hotpath/gap_pairs.sh HOTPATH PAIRS name=LIBDIR [name=LIBDIR ...] > gap_hotpath.csv
#
# LIBDIR holds a libros2_pulse.so (LD_LIBRARY_PATH overrides the harness's
# RUNPATH). Output: CSV "probe,jitter,leg,threads,endpoints,rep,cpu_ns_per_msg".
set -euo pipefail
hotpath=$1 pairs=$2
shift 2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo "probe,jitter,leg,threads,endpoints,rep,cpu_ns_per_msg"
for ((p = 0; p < pairs; p++)); do
    for spec in "$@"; do
        name=${spec%%=*} lib=${spec#*=}
        order="0 1"
        ((p % 2)) && order="1 0"
        for j in $order; do
            # 60,000 endpoints: every shape of one process must have its slots (each harness endpoint
            # registers several entities; at 20,000 the last shape, 2 threads x 1,024, lost 7,675)
            LD_LIBRARY_PATH=$lib ROS_PULSE_DIR=$dir ROS_TOPIC_STATS_QUIET=1 ROS_PULSE_MAX_ENDPOINTS=60000 \
                ROS_TOPIC_STATS_JITTER=$j "$hotpath" --legs none,probe --threads ${GAP_THREADS:-1,2} --endpoints ${GAP_ENDPOINTS:-1,1024} \
                --msgs 4000000 --reps 3 | awk -F, -v n="$name" -v j="$j" 'NR > 1 { print n "," j "," $0 }'
            rm -f "$dir"/*.pulse
        done
    done
done
