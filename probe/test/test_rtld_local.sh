#!/usr/bin/env bash
# Forwarding from an RTLD_LOCAL host (how python3 loads rclpy): dlsym(RTLD_NEXT)
# cannot see libtracetools there, so the probe must fall back to
# dlopen(RTLD_NOLOAD). Every publish is counted once and forwarded once.
set -euo pipefail
build=${1:?usage: test_rtld_local.sh BUILD_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc=${CC:-gcc}
here=$(cd "$(dirname "$0")" && pwd)
$cc -std=c11 -Wall -Wextra -Werror -fPIC -shared -o "$work/plugin.so" "$here/rtld_local_plugin.c" \
  -L"$build/lib/sim/jazzy" -Wl,--no-as-needed -ltracetools -Wl,-rpath,"$build/lib/sim/jazzy"
$cc -std=c11 -Wall -Wextra -Werror -o "$work/host" "$here/rtld_local_host.c" -ldl
ROS_PULSE_DIR="$work" ROS_TOPIC_STATS_QUIET=1 SIM_TRACETOOLS_REPORT="$work/calls.txt" \
  LD_PRELOAD="$build/lib/libros2_pulse.so" "$work/host" "$work/plugin.so"
forwarded=$(awk '$1 == "rcl_publish" {print $2}' "$work/calls.txt")
if [[ "$forwarded" != 1000 ]]; then
  echo "FAIL: real rcl_publish saw '${forwarded}' calls, want 1000"; exit 1
fi
counted=$("$build/bin/pulse" dump --dir "$work" | grep -o '"name":"/rtld_local","node":"/rtld_local","aux":10,"counts":\[[0-9]*' | grep -o '[0-9]*$' || true)
if [[ "$counted" != 1000 ]]; then
  echo "FAIL: the probe counted '${counted}' publishes, want 1000"; exit 1
fi
echo "rtld_local: 1000 publishes counted once and forwarded through the RTLD_NOLOAD fallback"
echo "1 passed, 0 failed"
