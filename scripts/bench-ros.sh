#!/usr/bin/env bash
# The probe's cost on real ROS 2 (issue 45, docs/PERFORMANCE.md §18): builds
# ros/pulse_testnodes against a ROS 2 prefix as the real-ROS lane does
# (scripts/ros-prefix.sh), then, on each RMW the prefix has:
#   pulse bench ros-instructions  talker/listener and server/client under callgrind,
#                                 per arm: each hook's instructions per event; the
#                                 farm at 5 % of its rates with the cache simulation
#   pulse bench ros-farm          seed 000's stress farm, paired and rotated:
#                                 CPU with no probe, the null shim, counting only, defaults
#
#   scripts/bench-ros.sh           (make bench-ros)
#
# ROS_PREFIX as for make test-ros. BENCH_ROS_RMWS narrows the RMWs,
# BENCH_ROS_WHAT picks "instructions", "farm" or both (the default),
# BENCH_ROS_TRIALS (20) and BENCH_ROS_DURATION (14s) size the farm, BENCH_ROS_ARMS
# narrows its arms (none,null,probe_untimed,probe), BENCH_ROS_BASELINE names another
# build of the probe for the "none" arm to preload (two builds paired, PERFORMANCE §30),
# BENCH_ROS_OUT (docs/perf) receives the CSV and PNG files, BENCH_ROS_KEEP
# keeps the callgrind profiles there (a directory per RMW) for callgrind_annotate.
# Run it on a quiet machine: the farm's arms are judged by their CPU.
set -euo pipefail
short=0
me=bench-ros
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PULSE_BUILD:-$root/build}
say_none() {
  echo "bench-ros: $1" >&2
  exit 2
}
# shellcheck source=scripts/ros-prefix.sh
source "$root/scripts/ros-prefix.sh"

if [[ -n ${BENCH_ROS_RMWS:-} ]]; then
  read -r -a rmws <<<"$BENCH_ROS_RMWS"
fi
what=${BENCH_ROS_WHAT:-instructions farm}
out=${BENCH_ROS_OUT:-$root/docs/perf}
command -v valgrind >/dev/null || bash "$root/scripts/need-packages.sh" valgrind
for rmw in "${rmws[@]}"; do
  tag=${distro}_${rmw#rmw_}_${lttng}_lttng
  echo "bench-ros: $distro / $rmw / tracetools $lttng LTTng (probe $(git -C "$root" rev-parse --short HEAD))"
  (set +u && source "$prefix/setup.bash" && set -u && cd "$root" &&
    if [[ $what == *instructions* ]]; then
      "$build/bin/pulse" bench ros-instructions --ws "$ws/install" --rmw "$rmw" --tag "$tag" --out "$out" \
        --farm "${BENCH_ROS_FARM_SCALE:-0.05}" ${BENCH_ROS_KEEP:+--keep "$BENCH_ROS_KEEP/$tag"}
    fi &&
    if [[ $what == *farm* ]]; then
      "$build/bin/pulse" bench ros-farm --ws "$ws/install" --rmw "$rmw" --tag "$tag" --out "$out" \
        --trials "${BENCH_ROS_TRIALS:-20}" --duration "${BENCH_ROS_DURATION:-14s}" --warmup 3s --concurrent \
        ${BENCH_ROS_ARMS:+--arms "$BENCH_ROS_ARMS"} ${BENCH_ROS_BASELINE:+--baseline "$BENCH_ROS_BASELINE"}
    fi)
done
