#!/usr/bin/env bash
# Forwarding from an RTLD_LOCAL host (how python3 loads rclpy): dlsym(RTLD_NEXT)
# cannot see libtracetools or librcl there, so the probe must fall back to
# dlopen(RTLD_NOLOAD). Every publish is counted once and forwarded once, and
# every loaned publish through Humble's librcl (no tracepoint inside) too.
set -euo pipefail
build=${1:?usage: test_rtld_local.sh BUILD_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc=${CC:-gcc}
here=$(cd "$(dirname "$0")" && pwd)
$cc -std=c11 -Wall -Wextra -Werror -fPIC -shared -o "$work/plugin.so" "$here/rtld_local_plugin.c" \
  -L"$build/lib/sim/humble" -Wl,--no-as-needed -ltracetools -lrcl -Wl,-rpath,"$build/lib/sim/humble"
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
loaned=$(awk '$1 == "rcl_publish_loaned_message_ok" {print $2}' "$work/calls.txt")
if [[ "$loaned" != 500 ]]; then
  echo "FAIL: the real rcl_publish_loaned_message published '${loaned}' messages, want 500"; exit 1
fi
counted=$("$build/bin/pulse" dump --dir "$work" | grep -o '"name":"/rtld_loaned","node":"/rtld_loaned","aux":10,"counts":\[[0-9]*' | grep -o '[0-9]*$' || true)
if [[ "$counted" != 500 ]]; then
  echo "FAIL: the probe counted '${counted}' loaned publishes, want 500"; exit 1
fi
echo "rtld_local: 1000 publishes and 500 loaned ones counted once and forwarded through the RTLD_NOLOAD fallback"
echo "1 passed, 0 failed"
