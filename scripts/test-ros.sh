#!/usr/bin/env bash
# The real-ROS lane: builds ros/pulse_testnodes against a ROS 2 prefix (outside
# the source tree, in build/ros/<distro>) and runs internal/realros on every
# RMW the prefix has, judged against the nodes' own ground truth.
#
#   scripts/test-ros.sh [--short]
#
# ROS_PREFIX names the prefix; by default the first of /opt/ros/{jazzy,humble,kilted}
# that exists. --short (make test's lane): a few tests on one RMW, and a plain
# "skipped" when there is no prefix. Without --short a missing prefix fails.
# PULSE_ROS_RUN narrows the tests (a go test -run pattern), PULSE_ROS_RMWS the RMWs;
# PULSE_ROS_PROBE preloads another probe library (the fault build shows the lane fails).
# PULSE_ROS_LINKS=1 runs every node with latency links on (ROS_PULSE_LINKS=1).
set -euo pipefail
short=0
[[ ${1:-} == --short ]] && short=1
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PULSE_BUILD:-$root/build}

say_none() {
  if [[ $short == 1 ]]; then
    echo "test-ros: skipped: $1"
    exit 0
  fi
  echo "test-ros: $1" >&2
  exit 2
}

me=test-ros
# shellcheck source=scripts/ros-prefix.sh
source "$root/scripts/ros-prefix.sh"

if [[ -n ${PULSE_ROS_RMWS:-} ]]; then # narrowed by hand: PULSE_ROS_RMWS="rmw_fastrtps_cpp"
  for rmw in $PULSE_ROS_RMWS; do
    [[ " ${rmws[*]} " == *" $rmw "* ]] || { echo "test-ros: PULSE_ROS_RMWS names $rmw, which $prefix does not have" >&2; exit 2; }
  done
  read -r -a rmws <<<"$PULSE_ROS_RMWS"
fi
run=${PULSE_ROS_RUN:-}
if [[ $short == 1 ]]; then
  rmws=("${rmws[0]}")
  run=${run:-'^(TestTopicCounts|TestCallbackTiming|TestServices|TestDoctorOnRealROS|TestLatencyLinks|TestROS2Pulse)$'}
fi
for rmw in "${rmws[@]}"; do
  echo "test-ros: $distro / $rmw / tracetools $lttng LTTng"
  tag=$rmw
  [[ -n ${PULSE_ROS_PROBE:-} ]] && tag=$tag-probe-$(echo "$PULSE_ROS_PROBE" | sha256sum | cut -c1-8) # another probe's rows apart
  [[ ${PULSE_ROS_LINKS:-} == 1 ]] && tag=$tag-links # links on: rows apart
  [[ -n $run ]] && tag=$tag-partial # a narrowed run's rows never replace a whole run's
  out=$ws/go-test-$tag.log
  rc=0
  (cd "$root" && ROS_PREFIX=$prefix PULSE_ROS_WS=$ws/install PULSE_ROS_DISTRO=$distro PULSE_RMW=$rmw \
     PULSE_ROS_LTTNG=$lttng PULSE_BUILD=$build go test -count=1 -timeout 40m -v ${run:+-run "$run"} ./internal/realros/) \
     >"$out" 2>&1 || rc=$?
  grep -E '^(\s*--- |\s+\S+_test\.go|PASS|FAIL|ok|panic)' "$out" | grep -v TABLE || true
  # The capability table's rows (docs/REAL-ROS.md): go test -v prints a test's
  # logs before its verdict line, so each row waits for the next verdict.
  awk -v d="$(date +%F)" -v distro="$distro" -v rmw="$rmw" -v lt="$lttng" -F'\t' '
    /_test\.go:[0-9]+: TABLE\t/ { rows[n++] = $2 "\t" $3 "\t" $4 }
    /^ *--- (PASS|FAIL|SKIP): / { st = $0; sub(/^ *--- /, "", st); sub(/:.*/, "", st)
      for (i = 0; i < n; i++) print d "\t" distro "\t" rmw "\t" lt "\t" st "\t" rows[i]; n = 0 }' "$out" \
    >"$ws/table-$tag.tsv"
  echo "test-ros: capability rows in $ws/table-$tag.tsv"
  [[ $rc == 0 ]] || { echo "test-ros: FAIL on $distro / $rmw (log: $out)" >&2; exit 1; }
done
echo "test-ros: passed on $distro (${rmws[*]}), tracetools $lttng LTTng"
